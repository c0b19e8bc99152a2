"""D057's promotion path: `record` takes AI match outcomes from real games (gameplay evidence),
kept apart from headless games everywhere they are shown; contradicted tiers are flagged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillstudio.cli.main import main as cli
from skillstudio.model import Confidence, Quality, ValidationError
from skillstudio.model.evidence import EvidenceKind, VerificationRecord
from skillstudio.store import Actor, Database, SkillQuery, SkillRepository, body_hash
from skillstudio.store.runs import RunStore
from skillstudio.verification.dashboard_data import snapshot
from skillstudio.verification.plays import record_plays
from skillstudio.verification.standing import contradictions
from tests.factories import ai_skill, content_skill

HARD = "IC Default Hard"


def match(skill_id: str, outcome: str = "win", **extra: object) -> dict[str, object]:
    return {
        "skill_id": skill_id,
        "outcome": outcome,
        "opponent": "kessler",
        "engine_version": "0.5.0",
        "time": "2026-06-01T20:00:00Z",
        **extra,
    }


def write(path: Path, lines: list[object]) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def test_matches_promote_past_tentative_and_import_once(repository: SkillRepository, tmp_path: Path) -> None:
    skill = repository.create(ai_skill(quality=Quality()))
    situation = {"game_phase": "early", "economy_state": "even", "threat_level": "high"}
    path = write(
        tmp_path / "matches.jsonl",
        [match(skill.id), match(skill.id, situation=situation), match(skill.id, "loss"), match(skill.id)],
    )
    summary = record_plays(path, repository)
    assert (summary.matches, summary.plays, summary.already_imported) == (4, 0, 0)
    [result] = summary.results
    assert (result.kind, result.completed, result.losses, result.draws) == ("gameplay", 3, 1, 0)
    assert (result.before, result.after, result.action) == ("tentative", "established", "skill.promote")
    stored = repository.get(skill.id)
    assert stored.quality.confidence is Confidence.ESTABLISHED and stored.quality.verification_count == 4
    [record] = repository.evidence.verifications(skill.id)
    assert (record.kind, record.opponent, record.engine_version) == (EvidenceKind.GAMEPLAY, "kessler", "0.5.0")
    assert record.body_hash == body_hash(stored)
    # the same lines again credit nothing; identical lines are distinct matches, told apart by position
    again = record_plays(path, repository)
    assert (again.results, again.already_imported) == ((), 4)
    assert len(repository.evidence.verifications(skill.id)) == 1
    more = write(tmp_path / "more.jsonl", [match(skill.id), match(skill.id), match(skill.id), match(skill.id)])
    [result] = record_plays(more, repository).results
    assert result.new_plays == 2  # the first two of these identical wins were imported already
    ids = write(tmp_path / "ids.jsonl", [match(skill.id, match_id="m-1"), match(skill.id, match_id="m-1")])
    assert record_plays(ids, repository).results[0].new_plays == 1


def test_a_file_with_bad_lines_is_refused_whole(repository: SkillRepository, tmp_path: Path) -> None:
    ai = repository.create(ai_skill(quality=Quality()))
    content = repository.create(content_skill(quality=Quality()))
    path = write(
        tmp_path / "bad.jsonl",
        [
            match(ai.id),
            match(ai.id, "won"),
            {k: v for k, v in match(ai.id).items() if k != "opponent"},
            match(content.id),
            {"skill_id": ai.id, "completed": True, "time": "2026-06-01T20:00:00Z"},
            match(ai.id, situation={"game_phase": "teatime"}),
            match(ai.id, replay="x.rep"),
            match(ai.id, time="yesterday"),
            {**match(ai.id), "completed": True},
            "{not json",
        ],
    )
    with pytest.raises(ValidationError) as raised:
        record_plays(path, repository)
    lines = {issue.path.split(".")[0] for issue in raised.value.issues}
    text = str(raised.value)
    assert str(path) in text
    for where in (
        "line 2.outcome",
        "line 3.opponent",
        "line 4.skill_id",
        "line 5.skill_id",
        "line 6.situation",
        "line 7.replay",
        "line 8.time",
        "line 9",
        "line 10",
    ):
        assert where in text, where
    assert "line 1" not in lines
    assert "match outcomes are evidence for AI skills" in text and "plays are evidence for content skills" in text
    # nothing was written: no evidence, no claimed keys, the tier as it was
    assert repository.evidence.verifications(ai.id) == []
    assert RunStore(repository.database).known_play_keys([]) == set()
    assert record_plays(write(tmp_path / "good.jsonl", [match(ai.id)]), repository).results[0].new_plays == 1


def test_kinds_are_kept_apart_in_show_and_the_dashboard_data(tmp_path: Path, capsys) -> None:
    path = tmp_path / "lib.db"
    with Database(path, create=True) as database:
        repository = SkillRepository(database, Actor("tester"))
        skill = ai_skill(quality=Quality(13, 9 / 13, None, Confidence.ESTABLISHED))
        headless = VerificationRecord(
            "2026-05-01T00:00:00.000Z", EvidenceKind.HEADLESS, 6, 4, opponent=HARD, body_hash=body_hash(skill)
        )
        gameplay = VerificationRecord(
            "2026-05-02T00:00:00.000Z", EvidenceKind.GAMEPLAY, 3, 0, opponent="kessler", body_hash=body_hash(skill)
        )
        repository.create(skill, verifications=[headless, gameplay])
        data = snapshot(repository, SkillQuery(), [skill.id])
        [series] = data.skills
        assert [p.kind for p in series.history] == ["headless", "gameplay"]
        assert [(p.wins, p.decided) for p in series.headless_history] == [(6, 10)]
        assert [(p.wins, p.decided) for p in series.gameplay_history] == [(3, 3)]
        assert series.standing is not None and series.standing.gameplay.tier is Confidence.ESTABLISHED
        assert [o.opponent for o in data.gameplay_opponents] == ["kessler"]
        assert [o.opponent for o in data.opponents] == [HARD]
    assert cli(["show", skill.id, "--db", str(path), "--json"]) == 0
    evidence = json.loads(capsys.readouterr().out)["evidence"]
    assert (evidence["headless"]["wins"], evidence["headless"]["decided"]) == (6, 10)
    assert (evidence["gameplay"]["wins"], evidence["gameplay"]["decided"], evidence["gameplay"]["supports"]) == (
        3,
        3,
        "established",
    )
    assert cli(["show", skill.id, "--db", str(path)]) == 0
    shown = capsys.readouterr().out
    assert "headless 6/10 (60%)" in shown and "gameplay 3/3 (100%)" in shown


def test_a_contradicted_tier_is_flagged_in_list_show_and_the_dashboard(tmp_path: Path, capsys) -> None:
    path = tmp_path / "lib.db"
    with Database(path, create=True) as database:
        repository = SkillRepository(database, Actor("tester"))
        # "proven at 37% over 300 games"
        weak = ai_skill(name="Balanced opening", quality=Quality(300, 0.37, None, Confidence.PROVEN))
        fine = ai_skill(name="Fine plan", quality=Quality(10, 0.9, None, Confidence.PROVEN))
        records = {
            weak.id: VerificationRecord(
                "2026-05-01T00:00:00.000Z", EvidenceKind.HEADLESS, 111, 189, opponent=HARD, body_hash=body_hash(weak)
            ),
            fine.id: VerificationRecord(
                "2026-05-01T00:00:00.000Z", EvidenceKind.HEADLESS, 9, 1, opponent=HARD, body_hash=body_hash(fine)
            ),
        }
        repository.create_many([(s, [records[s.id]]) for s in (weak, fine)])
        assert set(contradictions(repository, [weak.id, fine.id])) == {weak.id}
        assert set(snapshot(repository, SkillQuery(), []).contradicted) == {weak.id}
    db = ["--db", str(path)]
    assert cli(["list", *db, "--json"]) == 0
    listed = {s["name"]: s for s in json.loads(capsys.readouterr().out)["skills"]}
    flag = listed["Balanced opening"]["contradicted"]
    assert (flag["tier"], flag["supported"], flag["conclusive"], flag["settle"]) == (
        "proven",
        "tentative",
        True,
        ["demote", "revalidate"],
    )
    assert "111/300 (37%" in flag["reason"]
    assert listed["Fine plan"]["contradicted"] is None
    assert cli(["list", *db]) == 0
    table = capsys.readouterr().out
    assert "proven!" in table and "1 tier (!) contradicted" in table
    assert cli(["show", weak.id, *db]) == 0
    shown = capsys.readouterr().out
    assert "CONTRADICTED  proven needs 10+ decided games above 70%" in shown and "demote to tentative" in shown
    assert cli(["show", weak.id, *db, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["contradicted"]["supported"] == "tentative"


def test_record_cli_reports_matches(tmp_path: Path, capsys) -> None:
    path = tmp_path / "lib.db"
    with Database(path, create=True) as database:
        skill = SkillRepository(database).create(ai_skill(quality=Quality()))
    matches = write(tmp_path / "m.jsonl", [match(skill.id), match(skill.id, "draw"), match(skill.id)])
    assert cli(["record", str(matches), "--db", str(path), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["matches"], document["plays"], document["already_imported"]) == (3, 0, 0)
    [entry] = document["skills"]
    assert (entry["kind"], entry["wins"], entry["draws"], entry["opponent"]) == ("gameplay", 2, 1, "kessler")
    assert entry["confidence_after"] == "established"
    assert cli(["record", str(matches), "--db", str(path)]) == 0
    assert "3 matches, 0 new, 3 already imported" in capsys.readouterr().out
    write(tmp_path / "bad.jsonl", [match(skill.id, "forfeit")])
    assert cli(["record", str(tmp_path / "bad.jsonl"), "--db", str(path)]) == 1
    assert "line 1.outcome: must be one of win, loss, draw" in capsys.readouterr().err
