"""`skillstudio verify`, `runs`, `runs show`, `record`, `revalidate` on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillstudio.cli.main import main
from skillstudio.model import Quality
from skillstudio.store import Actor, Database, SkillRepository
from tests.factories import content_skill
from tests.verification.helpers import make_library, playable_skills

VERIFY = ["verify", "--games", "4", "--opponent", "IC Default Hard", "--seed", "2", "--quiet"]


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(make_library(tmp_path / "lib.db", 2))


def run_json(capsys, *argv: str) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_verify_json_runs_and_show(db: str, capsys) -> None:
    document = run_json(capsys, "--db", db, *VERIFY)
    assert (document["format"], document["version"]) == ("skillstudio.verification-run", 1)
    run = document["run"]
    assert (run["status"], run["games_asked"], run["games_recorded"], run["executor"]) == (
        "finished",
        8,
        8,
        "auto",  # the default: 8 games play in process
    )
    for entry in document["skills"]:
        assert entry["wins"] + entry["losses"] + entry["draws"] + entry["errors"] == 4
        decided = entry["wins"] + entry["losses"] + entry["draws"]
        assert entry["success_rate"] == round(entry["wins"] / decided, 4)
        low, high = entry["wilson_95"]
        assert low <= entry["success_rate"] <= high
        assert entry["applied"] and entry["confidence_after"] == entry["skill_quality"]["confidence"]
        assert entry["skill_quality"]["wilson_95"] is not None
    listed = run_json(capsys, "--db", db, "runs")
    assert listed["format"] == "skillstudio.verification-runs" and listed["runs"][0]["id"] == run["id"]
    shown = run_json(capsys, "--db", db, "runs", "show", run["id"][:5])
    assert shown["skills"] == document["skills"]
    assert main(["--db", db, "runs", "show", run["id"][:5]]) == 0
    text = capsys.readouterr().out
    assert "WILSON 95%" in text and run["id"] in text
    assert main(["--db", db, "runs"]) == 0
    assert run["id"] in capsys.readouterr().out


def test_verify_text_and_progress_lines(db: str, capsys) -> None:
    assert main(["--db", db, *VERIFY[:-1], "--skill", playable_skills(1)[0].id]) == 0
    captured = capsys.readouterr()
    assert "WILSON 95%" in captured.out and "Playable plan 0" in captured.out and "Playable plan 1" not in captured.out
    assert "4/4 games (100%)" in captured.err and "[" in captured.err  # plain lines off a terminal, with the interval


def test_exit_codes(db: str, capsys) -> None:
    assert main(["--db", db, "verify", "--opponent", "IC Default Hard"]) == 2  # no --games
    assert main(["--db", db, "verify", "--games", "3", "--opponent", "Nobody Hard"]) == 1
    assert "unknown opponent" in capsys.readouterr().err
    assert main(["--db", db, "verify", "--resume", "nosuchrun"]) == 1
    assert main(["--db", db, "runs", "show", "nosuchrun"]) == 1
    assert main(["--db", db, "verify", "--games", "3", "--opponent", "IC Default Hard", "--domain", "content"]) == 1
    with pytest.raises(SystemExit) as usage:
        main(["--db", db, "verify", "--games", "3", "--opponent", "x", "--executor", "threads"])
    assert usage.value.code == 2


def test_record_cli_is_idempotent(db: str, tmp_path: Path, capsys) -> None:
    with Database(db) as database:
        skill = SkillRepository(database, Actor("t")).create(content_skill(quality=Quality()))
    plays = tmp_path / "plays.jsonl"
    plays.write_text(
        "".join(
            json.dumps(
                {
                    "skill_id": skill.id,
                    "completed": True,
                    "time": "2026-05-02T18:30:00Z",
                    "rating": 4,
                    "player_count": 2,
                }
            )
            + "\n"
            for _ in range(3)
        )
    )
    first = run_json(capsys, "--db", db, "record", str(plays))
    assert first["format"] == "skillstudio.play-record"
    [entry] = first["skills"]
    assert (entry["new_plays"], entry["confidence_after"], entry["wilson_95"][1]) == (3, "established", 1.0)
    assert entry["validation"] == ["error: scene_composition[0] (ambush).attacker_units: missing (required by ambush)"]
    second = run_json(capsys, "--db", db, "record", str(plays))
    assert (second["skills"], second["already_imported"]) == ([], 3)
    (tmp_path / "bad.jsonl").write_text('{"skill_id": "nope", "completed": true, "time": 5}\n')
    assert main(["--db", db, "record", str(tmp_path / "bad.jsonl")]) == 1
    assert "line 1.skill_id" in capsys.readouterr().err


def test_revalidate_cli(db: str, capsys) -> None:
    assert main(["--db", db, "revalidate", "--engine-version", "1.0.0"]) == 0
    assert "no Proven skills" in capsys.readouterr().out
