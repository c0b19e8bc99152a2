"""The package benchmark still runs (tiny size, no timing assertions)."""

from __future__ import annotations

import json

from benchmarks import bench_packages, run


def test_package_benchmark_runs_at_a_tiny_size(tmp_path, capsys) -> None:
    assert bench_packages.main(["--sizes", "60", "--repeats", "1", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "packages-60.json").read_text(encoding="utf-8"))
    assert report["deterministic"] is True
    assert (
        report["skills_in_package"]
        == report["added"]
        == report["skipped_on_reimport"]
        == 60 - report["rejected_left_out"]
    )
    assert {"export", "read", "import", "reimport"} <= set(report)
    assert "60" in capsys.readouterr().out


def test_runner_finds_the_package_benchmark() -> None:
    assert "bench_packages" in [name for name, _ in run.discover()]
