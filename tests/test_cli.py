"""The `skillstudio` CLI: verbs, filters, JSON forms and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillstudio.cli.main import main as cli
from skillstudio.library import default_library_path, load_sample
from skillstudio.model import Confidence, Quality
from skillstudio.store import Database, SkillRepository
from tests.factories import ai_skill, content_skill, example_skill

REPO = Path(__file__).resolve().parents[1]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def library(library_target: str) -> tuple[str, dict[str, str]]:
    path = library_target
    skills = {
        "rockets": ai_skill(tags=("anti-armor", "early-game")),
        "proven": ai_skill(name="Naval doctrine", tags=("naval",), quality=Quality(12, 0.8, None, Confidence.PROVEN)),
        "bridge": content_skill(id="b41d9e77-5c1a-4f0e-8d4b-2f6a9c3e7d10"),
        "naval": example_skill(),
    }
    with Database(path) as database:
        SkillRepository(database).create_many(list(skills.values()))
    return path, {key: skill.id for key, skill in skills.items()}


def test_list_json_is_stable_and_documented(capsys, library) -> None:
    path, _ids = library
    code, out, _ = run(capsys, "list", "--db", str(path), "--json")
    assert code == 0
    document = json.loads(out)
    assert (document["format"], document["version"], document["total"], document["count"]) == (
        "skillstudio.skill-list",
        1,
        4,
        4,
    )
    assert set(document["skills"][0]) == {
        "id",
        "name",
        "domain",
        "game_module",
        "confidence",
        "success_rate",
        "verification_count",
        "average_rating",
        "use_count",
        "source",
        "created_by",
        "created_at",
        "last_verified",
        "last_used",
        "tags",
        "review_state",
        "contradicted",  # added in version 1: null, or why the credited evidence contradicts the tier
    }


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--domain", "ai"], {"rockets", "proven", "naval"}),
        (["--domain", "content"], {"bridge"}),
        (["--confidence", "established+"], {"proven"}),
        (["--confidence", "tentative"], {"rockets", "bridge", "naval"}),
        (["--game-module", "td"], {"bridge"}),
        (["--source", "workshop"], {"naval"}),
        (["--tag", "early-game"], {"rockets"}),
        (["--query", "doctr"], {"proven"}),
        (["--domain", "ai", "--game-module", "ra1", "--confidence", "proven"], {"proven"}),
    ],
)
def test_list_filters(capsys, library, flags, expected) -> None:
    path, ids = library
    code, out, _ = run(capsys, "list", "--db", str(path), "--json", *flags)
    assert code == 0
    assert {skill["id"] for skill in json.loads(out)["skills"]} == {ids[key] for key in expected}


def test_list_as_a_table(capsys, library) -> None:
    path, _ = library
    code, out, _ = run(capsys, "list", "--db", str(path), "--sort", "name", "--limit", "2")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("ID") and "CONFIDENCE" in lines[0]
    assert lines[-1] == "2 of 4 matching skills"


def test_search(capsys, library) -> None:
    path, ids = library
    code, out, _ = run(capsys, "search", "bridge", "ambu", "--db", str(path), "--json")
    assert code == 0 and [s["id"] for s in json.loads(out)["skills"]] == [ids["bridge"]]


def test_show_by_id_or_prefix(capsys, library) -> None:
    path, ids = library
    code, out, _ = run(capsys, "show", ids["rockets"], "--db", str(path), "--json")
    assert code == 0
    document = json.loads(out)
    assert document["format"] == "skillstudio.skill" and document["skill"]["id"] == ids["rockets"]
    assert document["revision_count"] == 1
    assert list(document["skill"]["body"]) == ["StrategicPattern"]
    code, out, _ = run(capsys, "show", "b41d9e", "--db", str(path))
    assert code == 0 and "Bridge ambush into extraction" in out and "EncounterPattern" in out
    code, _, err = run(capsys, "show", "00000000", "--db", str(path))
    assert code == 1 and "several skills have ids starting" in err


def test_stats(capsys, library) -> None:
    path, _ = library
    code, out, _ = run(capsys, "stats", "--db", str(path), "--json")
    document = json.loads(out)
    assert code == 0 and document["total"] == 4
    assert document["by_domain"] == {"ai_strategy": 3, "content_generation": 1}
    code, out, _ = run(capsys, "stats", "--db", str(path))
    assert "4 skills" in out and "by confidence:" in out


def test_exit_codes(capsys, library, tmp_path) -> None:
    path, _ = library
    code, _, err = run(capsys, "show", "no-such-skill", "--db", str(path))
    assert code == 1 and "no skill with id 'no-such-skill'" in err
    missing = tmp_path / "typo.db"
    code, _, err = run(capsys, "list", "--db", str(missing))
    assert code == 1 and str(missing) in err and "no library at" in err
    assert not missing.exists()  # a typo never creates a library
    with pytest.raises(SystemExit) as usage:
        cli(["list", "--db", str(path), "--domain", "poetry"])
    assert usage.value.code == 2
    with pytest.raises(SystemExit) as usage:
        cli(["frobnicate"])
    assert usage.value.code == 2
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"\x00" * 100)
    code, _, err = run(capsys, "stats", "--db", str(garbage))
    assert code == 1 and "is not a SQLite database" in err


def test_environment_variable_chooses_the_library(capsys, library, monkeypatch) -> None:
    path, _ = library
    monkeypatch.setenv("SKILLSTUDIO_DB", str(path))
    code, out, _ = run(capsys, "stats", "--json")
    assert code == 0 and json.loads(out)["library"] == str(path)


def test_init_empty_and_refuses_existing(capsys, tmp_path, monkeypatch) -> None:
    target = tmp_path / "new.db"
    code, out, _ = run(capsys, "init", str(target))
    assert code == 0 and target.exists() and "empty library" in out
    code, _, err = run(capsys, "init", str(target))
    assert code == 1 and "already exists" in err
    code, _, err = run(capsys, "init", str(tmp_path / "missing" / "x.db"))
    assert code == 1 and "does not exist" in err
    monkeypatch.chdir(tmp_path)
    for folder in (str(tmp_path), ""):  # "" is the current folder: it once "already existed"
        code, _, err = run(capsys, "init", folder)
        assert code == 1 and f"{tmp_path} is a folder; name the new library file" in err
    assert [p.name for p in tmp_path.iterdir()] == ["new.db"]  # no temporary leftovers


def test_init_sample_and_first_start_default_library(capsys, tmp_path) -> None:
    sample_count = len(load_sample())
    target = tmp_path / "sample.db"
    code, out, _ = run(capsys, "init", str(target), "--sample")
    assert code == 0 and f"with {sample_count} skills" in out

    default = default_library_path()
    assert str(default).startswith(os.environ["XDG_DATA_HOME"])  # tests never touch the real one
    assert not default.exists()
    code, out, _ = run(capsys, "stats", "--json")
    assert code == 0 and json.loads(out)["total"] == sample_count and default.exists()


def test_python_dash_m_runs_the_cli_without_loading_qt(library) -> None:
    path, _ = library
    probe = (
        "import sys, runpy; sys.argv=['skillstudio','stats','--db',sys.argv[1]];"
        "code = 0\n"
        "try: runpy.run_module('skillstudio', run_name='__main__')\n"
        "except SystemExit as e: code = e.code\n"
        "assert 'PySide6' not in sys.modules, 'the CLI imported Qt'\n"
        "sys.exit(code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,  # the assertion shows the child's stderr
    )
    assert done.returncode == 0, done.stderr
    assert "4 skills" in done.stdout


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["audit", "--since", "notatime"], "--since: 'notatime' is not an ISO 8601 time"),
        (["audit", "--until", "2026-13-45"], "--until: '2026-13-45' is not"),
        (["audit", "--limit", "-1"], "--limit: must be a whole number 1.."),
        (["audit", "--limit", "0"], "--limit: must be a whole number 1.."),
        (["review", "approve", "x", "--version", "-3"], "--version: must be a whole number 1.."),
        (["review", "false-positive", "x", "--finding", "0"], "--finding: must be a whole number 1.."),
        (["verify", "--games", "lots"], "--games: expected a whole number 1.."),
        (["runs", "--limit", "0"], "--limit: must be a whole number 1.."),
    ],
)
def test_a_bad_number_or_time_is_a_usage_error_naming_its_flag(capsys, library, argv, named) -> None:
    """Before: audit --limit -1 meant no limit on SQLite and a server error on PostgreSQL, and a
    bad time printed Python's 'Invalid isoformat string'."""
    path, _ = library
    with pytest.raises(SystemExit) as usage:
        cli([*argv, "--db", path])
    assert usage.value.code == 2 and named in capsys.readouterr().err


def test_audit_takes_a_date_as_its_whole_day(capsys, library) -> None:
    path, _ = library
    code, text, _ = run(capsys, "audit", "--db", path, "--since", "2000-01-01", "--until", "2999-12-31", "--limit", "2")
    assert code == 0 and text.strip().endswith("2 entries")
    code, text, _ = run(capsys, "audit", "--db", path, "--until", "2000-01-01")
    assert code == 0 and text.strip() == "0 entries"
