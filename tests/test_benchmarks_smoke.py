"""The benchmarks still run, and their synthetic library is deterministic and valid.

Tiny sizes only, and no timing assertions: this guards the benchmark code, not the speed.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from benchmarks import bench_browser, bench_retrieval, bench_startup, bench_store, bench_team, run
from benchmarks.synthetic import TAG_VOCABULARY, generate_skills
from skillstudio.model import (
    BodyKind,
    Confidence,
    Domain,
    SourceKind,
    body_to_json,
    parse_skill,
    skill_to_document,
)


@pytest.fixture(scope="module")
def skills():
    return generate_skills(400, seed=57)


def test_same_seed_gives_identical_documents(skills):
    again = generate_skills(400, seed=57)
    assert [skill_to_document(s) for s in again] == [skill_to_document(s) for s in skills]
    other = generate_skills(400, seed=58)
    assert [s.id for s in other] != [s.id for s in skills]


def test_every_skill_round_trips_through_the_document_parser(skills):
    for skill in skills:
        assert parse_skill(skill_to_document(skill)) == skill, skill.id


def test_library_is_varied_and_self_consistent(skills):
    assert len({s.id for s in skills}) == len(skills)
    assert {s.domain for s in skills} == set(Domain)
    assert {s.game_module for s in skills} == {"ra1", "td", "ra2"}
    assert {s.body_kind for s in skills} == set(BodyKind)
    assert {s.confidence for s in skills} == set(Confidence)
    assert {s.source_kind for s in skills} == set(SourceKind)
    position = {s.id: index for index, s in enumerate(skills)}
    for index, skill in enumerate(skills):
        earlier = [skill.provenance.source.original_id] if skill.source_kind is SourceKind.HUMAN_REFINED else []
        earlier += list(skill.composable_with)
        earlier += list(getattr(skill.body, "references", ()))
        assert all(position[other] < index for other in earlier), skill.id
        assert 0 <= len(skill.tags) <= 6 and set(skill.tags) <= set(TAG_VOCABULARY)
    body_sizes = sorted(len(body_to_json(s.body).encode()) for s in skills)
    assert 1_000 <= body_sizes[len(body_sizes) // 2] <= 3_000  # median body is 1-3 KB
    assert 150 <= len(TAG_VOCABULARY) <= 250
    assert len(Counter(tag for s in skills for tag in s.tags)) > 60


def test_store_benchmark_runs_at_a_tiny_size(tmp_path, capsys):
    status = bench_store.main(["--sizes", "200", "--repeats", "2", "--warmups", "0", "--out", str(tmp_path)])
    assert status == 0
    report = json.loads((tmp_path / "store-200.json").read_text(encoding="utf-8"))
    assert report["size"] == 200
    rows = report["insert"]["rows"]
    assert rows["skills"] == rows["studio_revisions"] == rows["studio_audit_log"] == 200
    limits = report["insert_limits"]
    assert limits["skills_fts_per_s"] > 0 and limits["all_rows_per_s"] > 0
    retagged = report["retag"]
    assert retagged["skills"] == retagged["revisions"] == retagged["audit_entries"] == 200
    assert retagged["limit_seconds"] > 0
    assert report["file"]["tables"]["studio_revisions"] > 0
    operations = {op["name"]: op for op in report["operations"]}
    assert set(operations) >= {
        "open_cold",
        "open_warm",
        "list_filtered",
        "list_filtered_tag",
        "summaries",
        "fts_prefix",
        "fts_common_term",
        "get",
    }
    assert all(op["repeats"] == 2 for op in operations.values())
    assert operations["open_cold"]["result"]["count"] == 200
    filtered = operations["list_filtered"]["result"]
    assert 0 < filtered["ids"] == filtered["total"] < 200
    assert operations["list_filtered_tag"]["result"]["total"] <= filtered["total"]
    assert operations["summaries"]["result"]["rows"] == min(filtered["ids"], bench_store.SUMMARY_ROWS)
    assert operations["fts_common_term"]["result"]["total"] > 0
    assert "200 skills" in capsys.readouterr().out


def test_retrieval_benchmark_runs_at_a_tiny_size(tmp_path, capsys):
    status = bench_retrieval.main(
        ["--sizes", "200", "--repeats", "1", "--warmups", "0", "--queries", "3", "--out", str(tmp_path)]
    )
    assert status == 0
    report = json.loads((tmp_path / "retrieval-200.json").read_text(encoding="utf-8"))
    assert report["size"] == 200
    assert report["throughput"]["descriptions"] == 200
    assert report["embed_library"]["stored"] == 200
    assert report["index"]["vectors"] == 200
    assert report["semantic"]["all"]["repeats"] == 3
    assert report["retrieve"]["hybrid_all"]["mean_result"] > 0
    assert report["edit"]["row_updated"] and not report["edit"]["reloaded"]


def test_startup_benchmark_runs(tmp_path, capsys):
    pytest.importorskip("PySide6")
    assert bench_startup.main(["--repeats", "1", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "startup.json").read_text(encoding="utf-8"))
    rows = {row["what"]: row for row in report["rows"]}
    assert set(rows) == {
        "python, nothing imported",
        "bare QMainWindow shown",
        "SkillStudio shown",
        "SkillStudio usable",
        "SkillStudio complete",
    }
    shown, usable, complete = (rows[f"SkillStudio {what}"]["median_s"] for what in ("shown", "usable", "complete"))
    assert 0 < shown <= usable <= complete and rows["SkillStudio usable"]["library"] == "sample"
    assert "skillstudio.gui.app" in report["imports_s"]
    assert "goal: usable < 2 s" in capsys.readouterr().out


def test_browser_benchmark_runs_at_a_tiny_size(tmp_path, capsys):
    pytest.importorskip("PySide6")
    from skillstudio.gui.skill_table_model import FIRST_SCREEN

    assert bench_browser.SCREEN == FIRST_SCREEN  # its plain limits read as many rows as the table
    assert bench_browser.main(["--sizes", "150", "--repeats", "1", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "browser.json").read_text(encoding="utf-8"))["150"]
    assert report["open"]["rows"] == 150 and report["peak_rss_mb"] > 0
    figures = [value for value in report.values() if isinstance(value, dict)]
    assert all(len(value["limit"]) == len(value["samples"]) or value is report["open"] for value in figures)
    assert report["store: filtered list, all ids"]["rows"] == report["store: filtered list, first page"]["rows"]
    assert "plain SQLite limit" in capsys.readouterr().out


def test_browser_benchmark_copies_a_library_to_a_server_and_compares_the_store(tmp_path, capsys, postgres_server):
    url = postgres_server.url("skillstudio_browser_150")
    options = ["--sizes", "150", "--repeats", "1", "--out", str(tmp_path), "--store-only"]
    options += ["--backends", "sqlite", "postgresql", "--postgres-url", postgres_server.admin_url]
    try:
        assert bench_browser.main(options) == 0
        first = capsys.readouterr().out
        assert bench_browser.main(options) == 0  # the checked copy is kept for the next run
        again = capsys.readouterr().out
    finally:
        postgres_server.drop(url)
    assert "copying browser-library-150.db" in first and "checked: 150 skills" in first
    assert "copying" not in again
    report = json.loads((tmp_path / "browser.json").read_text(encoding="utf-8"))
    on_file, on_server = report["150"], report["postgresql-150"]
    assert set(on_server) == set(on_file) >= {"store: filtered list, first page", "store: FTS 'tank', first page"}
    for name, figures in on_server.items():
        assert figures["rows"] == on_file[name]["rows"] and len(figures["limit"]) == len(figures["samples"]) == 1
    assert "PostgreSQL" in again and "plain limit" in again


def test_team_benchmark_runs_briefly_and_checks_every_write(tmp_path, capsys):
    pytest.importorskip("mcp")
    assert bench_team.main(["--quick", "--db", str(tmp_path / "team.db"), "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "team-sqlite.json").read_text(encoding="utf-8"))
    assert report["designers"]["acknowledged"] > 0 and report["agents"]["acknowledged"] > 0
    assert report["lost_updates"] == 0 and report["limit"]["acknowledged"] > 0
    assert "lost updates: 0" in capsys.readouterr().out


def test_team_benchmark_finds_a_write_missing_from_history(tmp_path):
    from skillstudio.library import create_library
    from skillstudio.store import Database, SkillRepository

    path = tmp_path / "team.db"
    create_library(path, sample=True).close()
    with Database(path) as database:
        skill_id = SkillRepository(database).query().ids[0]
    # an acknowledged token no revision holds is what a lost update looks like to the check
    assert bench_team.lost_updates(str(path), [(skill_id, "d0-1", 0.01)]) == 1


def test_runner_finds_the_store_benchmark():
    assert {"bench_store", "bench_retrieval", "bench_startup"} <= {name for name, _ in run.discover()}
