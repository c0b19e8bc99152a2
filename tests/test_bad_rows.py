"""Rows an engine wrote are untrusted: list, search, stats, show and export survive bad ones.

Each library here is built as an engine builds it: D057's DDL and rows from plain ``sqlite3``.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from skillstudio.cli.main import main as cli
from skillstudio.model import ReviewState, Skill
from skillstudio.packages.export import load_selection
from skillstudio.review.workflow import approve
from skillstudio.store import Database, SkillRepository
from skillstudio.store.errors import InvalidStoredSkill, LibraryError
from skillstudio.store.skill_rows import load_many, load_skill
from tests.test_seed_ddl import engine_rows

DDL = Path(__file__).resolve().parents[1] / "skillstudio" / "store" / "d057_schema.sql"
GOOD = [row[0] for row in engine_rows()]
DEEP = "bad-deep-body"
DEEP_TAGS = "bad-deep-tags"
RATE = "bad-text-rate"
BODY = json.dumps({"VerifiedExample": {"prompt_context": "Enemy rushes.", "response": "{}"}})
NESTED = '{"a":' * 5000 + "1" + "}" * 5000
COLUMNS = "id, domain, name, description, body_json, tags, game_module, source, created_at"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _engine_library(path: Path, bad: list[tuple[str, tuple]]) -> Path:
    with sqlite3.connect(path) as connection:
        connection.executescript(DDL.read_text(encoding="utf-8"))
        connection.executemany(f"INSERT INTO skills VALUES ({', '.join('?' * 17)})", engine_rows())
        for sql, values in bad:
            connection.execute(sql, values)
    return path


def _row(skill_id: str, name: str, body: str = BODY, tags: str = "[]", **extra: object) -> tuple[str, tuple]:
    columns = COLUMNS + "".join(f", {key}" for key in extra)
    values = (
        skill_id,
        "ai_strategy",
        name,
        "written by an engine",
        body,
        tags,
        "ra1",
        "llm_discovered",
        "2026-03-03T03:03:03.000Z",
        *extra.values(),
    )
    return f"INSERT INTO skills ({columns}) VALUES ({', '.join('?' * len(values))})", values


@pytest.fixture
def bad_library(tmp_path: Path) -> Path:
    return _engine_library(
        tmp_path / "bad.db",
        [
            _row(DEEP, "Deep body", body=NESTED),
            _row(DEEP_TAGS, "Deep tags", tags="[" * 5000 + "]" * 5000),
            _row(RATE, "Bad rate", success_rate="high", use_count="lots", verification_count=2.5),
        ],
    )


# --- 1. deeply nested JSON ----------------------------------------------------------------------


def test_a_deeply_nested_body_is_an_invalid_row_not_a_recursion_error(bad_library: Path) -> None:
    with Database(bad_library) as database:
        repository = SkillRepository(database)
        for skill_id, field in ((DEEP, "body_json"), (DEEP_TAGS, "tags")):
            with pytest.raises(InvalidStoredSkill) as caught:
                repository.get(skill_id)
            assert caught.value.skill_id == skill_id
            assert [issue.path for issue in caught.value.issues if "nested deeper than" in issue.message] == [field]


def test_show_of_a_deeply_nested_body_exits_1_naming_id_and_field(capsys, bad_library: Path) -> None:
    code, out, err = run(capsys, "show", "--db", str(bad_library), DEEP)
    assert code == 1
    assert DEEP in err and "body_json" in err and "nested deeper than" in err
    assert "Traceback" not in err + out


# --- 2. wrong-typed quality columns -------------------------------------------------------------


def test_list_json_marks_wrong_typed_columns_invalid(capsys, bad_library: Path) -> None:
    code, out, _ = run(capsys, "list", "--db", str(bad_library), "--json")
    assert code == 0
    listed = {skill["id"]: skill for skill in json.loads(out)["skills"]}
    assert set(listed) == {*GOOD, DEEP, DEEP_TAGS, RATE}
    bad = listed[RATE]
    assert (bad["success_rate"], bad["use_count"], bad["verification_count"]) == (None, None, None)
    reasons = {issue["path"]: issue["message"] for issue in bad["invalid"]}
    assert set(reasons) == {"success_rate", "use_count", "verification_count"}
    assert "'high'" in reasons["success_rate"]
    assert listed[DEEP_TAGS]["tags"] == [] and [i["path"] for i in listed[DEEP_TAGS]["invalid"]] == ["tags"]
    assert "invalid" not in listed[GOOD[0]]  # valid rows keep the documented shape


def test_list_table_search_and_stats_show_bad_rows(capsys, bad_library: Path) -> None:
    code, out, _ = run(capsys, "list", "--db", str(bad_library))
    assert code == 0
    line = next(line for line in out.splitlines() if "Bad rate" in line)
    assert "?" in line
    code, out, _ = run(capsys, "search", "--db", str(bad_library), "--json", "rate")
    assert code == 0 and [s["id"] for s in json.loads(out)["skills"]] == [RATE]
    code, out, _ = run(capsys, "list", "--db", str(bad_library), "--sort", "success_rate", "--desc")
    assert code == 0
    code, out, _ = run(capsys, "stats", "--db", str(bad_library), "--json")
    assert code == 0 and json.loads(out)["total"] == 5


# --- 3. export skips invalid rows ---------------------------------------------------------------


def test_tolerant_get_many_returns_the_valid_and_names_the_skipped(bad_library: Path) -> None:
    with Database(bad_library) as database:
        repository = SkillRepository(database)
        skills, skipped = repository.get_many_valid([GOOD[0], DEEP, RATE, GOOD[1], "missing-id"])
        assert [skill.id for skill in skills] == [GOOD[0], GOOD[1]]
        assert [skill_id for skill_id, _ in skipped] == [DEEP, RATE, "missing-id"]
        assert "body_json" in skipped[0][1] and "success_rate" in skipped[1][1]
        preview = load_selection(repository, [DEEP, *GOOD, RATE])
        assert [skill.id for skill in preview.skills] == GOOD
        assert [skill_id for skill_id, _ in preview.skipped] == [DEEP, RATE]


def test_reading_many_rows_at_once_gives_what_reading_each_one_gives(bad_library: Path) -> None:
    """load_many reads plain rows of each table, load_skill mapped objects: the same skills and
    the same errors, for engine rows (NULL columns, no metadata row, pairs with no count), a
    skill with metadata, bad rows and an id that is not there."""
    with sqlite3.connect(bad_library) as connection:
        connection.execute("UPDATE skills SET confidence = NULL, use_count = NULL WHERE id = ?", (GOOD[1],))
        connection.executemany(
            "INSERT INTO skill_compositions (skill_a, skill_b, success_count) VALUES (?, ?, ?)",
            [(GOOD[0], GOOD[1], 3), (GOOD[1], GOOD[0], None)],
        )
    with Database(bad_library) as database:
        repository = SkillRepository(database)
        approve(repository, GOOD[1], "checked", version=repository.get(GOOD[1]).version)  # a metadata row
        ids = [*GOOD, DEEP, DEEP_TAGS, RATE, "not-in-this-library", GOOD[0]]
        with database.read() as session:
            many = load_many(session, ids)
        assert [skill_id for skill_id, _ in many] == ids
        with database.read() as session:
            for skill_id, read in many:
                try:
                    alone: Skill | LibraryError = load_skill(session, skill_id)
                except LibraryError as error:
                    alone = error
                if isinstance(alone, Skill):
                    assert read == alone
                else:
                    assert (type(read), str(read)) == (type(alone), str(alone))
        skills = {skill_id: read for skill_id, read in many if isinstance(read, Skill)}
        assert set(skills) == set(GOOD)
        assert skills[GOOD[1]].review_state is ReviewState.APPROVED
        assert skills[GOOD[0]].composable_with == (GOOD[1],)


@pytest.mark.parametrize("name", ["out.json", "out.icpkg"])
def test_export_skips_invalid_rows_and_reports_each(capsys, bad_library: Path, tmp_path: Path, name: str) -> None:
    out_path = tmp_path / name
    code, out, err = run(capsys, "export", "--db", str(bad_library), "-o", str(out_path))
    assert code == 0, err
    assert out_path.exists() and "exported 2 skills" in out
    for skill_id, field in ((DEEP, "body_json"), (DEEP_TAGS, "tags"), (RATE, "success_rate")):
        line = next(line for line in err.splitlines() if skill_id in line)
        assert "skipped" in line and field in line


def test_export_of_only_invalid_rows_fails(capsys, bad_library: Path, tmp_path: Path) -> None:
    code, _, err = run(capsys, "export", "--db", str(bad_library), "-o", str(tmp_path / "x.json"), "--id", DEEP)
    assert code == 1
    assert DEEP in err and "Traceback" not in err


# --- 4. --limit / --offset bounds ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--limit", "99999999999999999999999"),
        ("--limit", "-5"),
        ("--limit", "0"),
        ("--limit", "ten"),
        ("--offset", "-1"),
        ("--offset", str(2**31)),
        ("--offset", "99999999999999999999999"),
    ],
)
def test_limit_and_offset_out_of_range_are_usage_errors(capsys, bad_library: Path, flag: str, value: str) -> None:
    with pytest.raises(SystemExit) as usage:
        cli(["list", "--db", str(bad_library), flag, value])
    assert usage.value.code == 2
    assert flag in capsys.readouterr().err


def test_limit_and_offset_at_their_bounds_work(capsys, bad_library: Path) -> None:
    code, out, _ = run(capsys, "list", "--db", str(bad_library), "--json", "--limit", str(2**31 - 1), "--offset", "1")
    assert code == 0 and json.loads(out)["count"] == 4
    code, out, _ = run(capsys, "list", "--db", str(bad_library), "--json", "--limit", "1", "--offset", str(2**31 - 1))
    assert code == 0 and json.loads(out)["count"] == 0


# --- 5. show of an invalid row ------------------------------------------------------------------


def test_show_of_an_invalid_row_prints_id_name_and_issues(capsys, bad_library: Path) -> None:
    code, out, err = run(capsys, "show", "--db", str(bad_library), RATE)
    assert code == 1
    text = out + err
    assert RATE in text and "Bad rate" in text
    assert "success_rate: expected a number, got 'high'" in text
    assert "use_count: expected a whole number, got 'lots'" in text


def test_show_json_of_an_invalid_row(capsys, bad_library: Path) -> None:
    code, out, err = run(capsys, "show", "--db", str(bad_library), "--json", DEEP)
    assert code == 1
    document = json.loads(out)
    head = (document["format"], document["id"], document["name"], document["valid"])
    assert head == ("skillstudio.invalid-skill", DEEP, "Deep body", False)
    assert any(i["path"] == "body_json" and "nested deeper than" in i["message"] for i in document["issues"])
    assert DEEP in err


def test_verify_skips_invalid_rows_and_plays_the_others(capsys, bad_library: Path) -> None:
    code, out, err = run(
        capsys,
        "verify",
        "--db",
        str(bad_library),
        "--games",
        "2",
        "--opponent",
        "IC Default Hard",
        "--seed",
        "3",
        "--quiet",
        "--json",
    )
    assert code == 0, err
    document = json.loads(out)
    skipped = {item["id"]: item["reason"] for item in document["skipped"]}
    assert DEEP in skipped and "nested deeper" in skipped[DEEP]
    assert "Traceback" not in err
    with Database(bad_library) as database:
        played = [s for s in GOOD if SkillRepository(database).get(s).body_kind.value == "strategic_pattern"]
    assert played and all(any(s["id"] == i for s in document["skills"]) for i in played)
