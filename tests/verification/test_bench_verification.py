"""The verification benchmark still runs (tiny sizes, no timing assertions)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import bench_verification


def test_bench_verification_runs(tmp_path: Path, capsys) -> None:
    argv = [
        "--sizes",
        "20",
        "--games",
        "2",
        "--executors",
        "inprocess",
        "--overhead-chunks",
        "3",
        "--engine-games",
        "100",
        "--out",
        str(tmp_path),
    ]
    assert bench_verification.main(argv) == 0
    report = json.loads((tmp_path / "verification-20.json").read_text())
    assert report["runs"][0]["games"] == 2 * report["verified_skills"]
    assert report["overhead"][0]["executor"] == "inprocess" and report["identical_results"]
    assert report["engine_games_per_s"] > 0 and report["runs"][0]["share_of_engine"] > 0
    assert report["chunk_games"] > 2 * report["verified_skills"]  # the default: every game in one chunk here
    out = capsys.readouterr().out
    assert "overhead per chunk" in out and "limit: the engine alone" in out
