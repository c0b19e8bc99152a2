"""The engine benchmark still runs (tiny sizes, no timing assertions)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import bench_engine


def test_engine_benchmark_runs_at_a_tiny_size(tmp_path: Path, capsys) -> None:
    status = bench_engine.main(
        ["--sizes", "64", "--repeats", "1", "--protocol-games", "20", "--multi", "6", "3", "--out", str(tmp_path)]
    )
    assert status == 0
    report = json.loads((tmp_path / "engine.json").read_text(encoding="utf-8"))
    (row,) = report["in_process"]
    assert row["games"] == 64 and row["games_per_s_best"] > 0 and 0 <= row["win_rate"] <= 1
    assert report["protocol"]["games"] == 20 and report["protocol"]["errors"] == 0
    assert report["protocol"]["per_game_all_in_ms"] > 0
    multi = report["multi_skill"]
    assert (multi["skills"], multi["games_per_skill"], multi["games"]) == (6, 3, 18)
    for name in ("run_batches", "from_opening", "play_chunk", "pieces", "raw"):
        assert multi[f"{name}_games_per_s"] > 0 and multi[f"{name}_games_per_cpu_s"] > 0
    assert multi["raw_games"] == 64
