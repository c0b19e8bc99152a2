"""The package benchmark still runs (tiny size, no timing assertions)."""

from __future__ import annotations

import json

from benchmarks import bench_packages, run
from benchmarks.synthetic import generate_skills
from skillstudio.packages import icpkg
from skillstudio.packages.icpkg import export_package


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
    assert {"export", "read", "dry-run", "import", "reimport"} <= set(report)
    assert all(report["limits"][name]["median_s"] > 0 for name in ("export", "read", "import"))
    out = capsys.readouterr().out
    assert "60" in out
    assert all(figure in out for figure in ("export", "read", "dry-run", "import", "reimport"))


def test_the_import_limit_stores_every_skill_of_the_package(tmp_path) -> None:
    data = export_package(generate_skills(40, seed=57), bench_packages.META)
    (tmp_path / "p.icpkg").write_bytes(data)
    assert bench_packages.plain_import(tmp_path / "p.icpkg", tmp_path / "plain.db") == 40
    assert len(bench_packages.plain_checked_read(tmp_path / "p.icpkg")) == 40


def test_runner_finds_the_package_benchmark() -> None:
    assert "bench_packages" in [name for name, _ in run.discover()]


def test_a_package_too_large_to_read_is_reported_as_refused(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(icpkg, "MAX_ENTRIES", 20)  # as a library larger than a package may hold
    assert bench_packages.main(["--sizes", "30", "--repeats", "1", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "packages-30.json").read_text(encoding="utf-8"))
    # the export itself refuses: it never writes a package no import would read
    assert "no import would read" in report["refused"]
    assert "export" not in report and "import" not in report
    assert "export    refused" in capsys.readouterr().out
