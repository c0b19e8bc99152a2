"""The sequential benchmark still runs (tiny sizes, no timing assertions)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import bench_sequential


def test_bench_sequential_runs(tmp_path: Path, capsys) -> None:
    argv = ["--sizes", "30", "--no-sample", "--max-games", "20", "--out", str(tmp_path)]
    assert bench_sequential.main(argv) == 0
    report = json.loads((tmp_path / "sequential-synthetic-30.json").read_text())
    assert report["fixed_games"] == 20 * report["skills"] > 0
    assert 0 < report["sequential_games"] <= report["fixed_games"]
    assert report["games_saved"] == report["fixed_games"] - report["sequential_games"]
    assert sum(report["decisions"].values()) == report["skills"]
    assert "saved" in capsys.readouterr().out
