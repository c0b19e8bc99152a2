"""`verify --sequence A,B[,C]`: composition runs, D057's skill_compositions and composable_with."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from skillstudio.engine import run_batch
from skillstudio.library import create_library
from skillstudio.model import GamePhase
from skillstudio.store import Actor, Database, SkillQuery, SkillRepository
from skillstudio.store.paired_runs import PairedRuns
from skillstudio.store.runs import RunStore
from skillstudio.verification.compositions import (
    CompositionResult,
    compositions_of,
    parse_switch,
    plan_sequence,
    start_sequence,
)
from skillstudio.verification.drive import drive_run
from skillstudio.verification.runner import Progress, RunFinished, VerificationError

HARD = "IC Default Hard"
RUSH = "Light tank rush at 5:00"  # early game (sample library)
ARMOR = "Transition to medium armor at 12:00"  # mid game
LOSER = "Recover from lost ore trucks"  # loses to Hard (0 of 10 with seed 2, even with armour at 25:00)


@pytest.fixture
def sample(tmp_path: Path):
    with create_library(tmp_path / "sample.db", sample=True) as database:
        yield database


def _id(repository: SkillRepository, name: str) -> str:
    [found] = [s.id for s in repository.summaries(repository.query(SkillQuery()).ids) if s.name.startswith(name)]
    return found


def _runs(database: Database) -> int:
    return len(RunStore(database).runs(limit=None))


def test_switch_points() -> None:
    assert parse_switch("12:00").seconds == 720 and parse_switch("12:00").label == "12:00"
    assert parse_switch("1:02:03").seconds == 3723
    assert parse_switch("720s").seconds == parse_switch("720").seconds == 720
    assert parse_switch("mid").when() is GamePhase.MID and parse_switch("Late").seconds == 1080
    for bad in ("early", "0", "-5", "abc", "12:75", "nan"):
        with pytest.raises(ValueError):
            parse_switch(bad)


def test_a_sequence_plays_the_engines_composition_and_counts_for_each_pair(sample: Database) -> None:
    repository = SkillRepository(sample)
    rush, armor = _id(repository, RUSH), _id(repository, ARMOR)
    before = {c.partner_id: c.success_count for c in repository.evidence.compositions(rush)}
    plan = plan_sequence(repository, [rush[:8], armor[:8]])  # prefixes, as on the command line
    assert [s.label for s in plan.switches] == ["mid"]  # the armour skill's own phase: 8:00
    run_id = start_sequence(sample, plan, opponent=HARD, games=20, seed=5, chunk_games=7)
    events = list(drive_run(sample, run_id))
    assert isinstance(events[-1], RunFinished) and events[-1].status == "finished"
    [result] = [e for e in events if isinstance(e, CompositionResult)]
    expected = run_batch(repository.get(rush), HARD, 20, 5, then=[(GamePhase.MID, repository.get(armor))])
    assert [g.outcome for g in RunStore(sample).games(run_id)] == [r.outcome for r in expected]
    assert result.counts.wins == expected.wins and result.credited  # above the candidate bar
    after = {c.partner_id: c.success_count for c in repository.evidence.compositions(rush)}
    assert after[armor] == before.get(armor, 0) + expected.wins
    assert armor in repository.get(rush).composable_with and rush in repository.get(armor).composable_with
    assert repository.history.audit(skill_id=armor)[0].action == "skill.compose"
    # The sequence is no evidence for either skill's own tier.
    assert not any(r.note.endswith(run_id) for r in repository.evidence.verifications(rush))
    [partner] = [c for c in compositions_of(repository, rush) if c.partner_id == armor]
    assert (partner.runs, partner.credited_runs, partner.wins, partner.decided) == (1, 1, expected.wins, 20)


def test_a_rerun_with_the_same_seed_does_not_count_the_same_games_twice(sample: Database) -> None:
    repository = SkillRepository(sample)
    rush, armor = _id(repository, RUSH), _id(repository, ARMOR)
    plan = plan_sequence(repository, [rush, armor])
    list(drive_run(sample, start_sequence(sample, plan, opponent=HARD, games=10, seed=5)))
    first = {c.partner_id: c.success_count for c in repository.evidence.compositions(rush)}[armor]
    events = list(drive_run(sample, start_sequence(sample, plan, opponent=HARD, games=16, seed=5)))
    [result] = [e for e in events if isinstance(e, CompositionResult)]
    new_wins = run_batch(repository.get(rush), HARD, 6, 5, first_game=10, then=[(GamePhase.MID, repository.get(armor))])
    assert first > 0 and result.credited
    assert result.successes == new_wins.wins  # only games 10..15 are new
    assert {c.partner_id: c.success_count for c in repository.evidence.compositions(rush)}[
        armor
    ] == first + new_wins.wins


def test_a_composition_below_the_bar_or_against_another_opponent_adds_nothing(sample: Database) -> None:
    repository = SkillRepository(sample)
    loser, armor, rush = _id(repository, LOSER), _id(repository, ARMOR), _id(repository, RUSH)
    pairs_before = repository.evidence.compositions(loser)
    losing = plan_sequence(repository, [loser, armor], ["25:00"])  # the losing plan nearly all game
    events = list(drive_run(sample, start_sequence(sample, losing, opponent=HARD, games=10, seed=2)))
    [result] = [e for e in events if isinstance(e, CompositionResult)]
    assert not result.credited and "not above the candidate bar 40%" in result.reason
    assert repository.evidence.compositions(loser) == pairs_before
    easy = plan_sequence(repository, [rush, armor])
    before = repository.evidence.compositions(rush)
    events = list(drive_run(sample, start_sequence(sample, easy, opponent="IC Default Easy", games=5, seed=2)))
    [result] = [e for e in events if isinstance(e, CompositionResult)]
    assert not result.credited and "not the reference opponent" in result.reason
    assert repository.evidence.compositions(rush) == before


def test_bad_sequences_are_refused_before_anything_is_written(sample: Database) -> None:
    repository = SkillRepository(sample)
    rush, armor, aa = _id(repository, RUSH), _id(repository, ARMOR), _id(repository, "Early AA against Yak rush")
    example = _id(repository, "Example plan: flank a massed V2 park")
    td = _id(repository, "Nod recon bike rush")
    cases = {
        "no skill 'nosuchskill'": [rush, "nosuchskill"],
        "takes 2 to 4 skills": [rush],
        "follows itself": [rush, rush],
        "verified_example body": [rush, example],
        "different game modules": [rush, td],
        "early-game skill": [rush, aa],
    }
    for why, refs in cases.items():
        with pytest.raises(VerificationError, match=why):
            plan_sequence(repository, refs)
    for why, switches in {
        "does not come after": ["8:00", "8:00"],
        "1 switch point(s) for 2 skills": ["8:00", "9:00"],
        "time limit": ["45:00"],
        "not a game time": ["soon"],
    }.items():
        with pytest.raises(VerificationError, match=re.escape(why)):
            plan_sequence(repository, [rush, armor] if why != "does not come after" else [rush, armor, rush], switches)
    with pytest.raises(VerificationError, match="starts at 8:00"):  # the armour skill starts in the mid game
        plan_sequence(repository, [armor, rush], ["6:00"])
    with pytest.raises(VerificationError, match="built-in engine"):
        plan_sequence(repository, [rush, armor], external_engine=True)
    assert _runs(sample) == 0


def test_a_cancelled_composition_run_resumes_and_is_applied_once(sample: Database) -> None:
    repository = SkillRepository(sample)
    rush, armor = _id(repository, RUSH), _id(repository, ARMOR)
    plan = plan_sequence(repository, [rush, armor], ["10:00"])
    run_id = start_sequence(sample, plan, opponent=HARD, games=12, seed=3, chunk_games=4)
    seen: list[object] = []
    for event in drive_run(sample, run_id, cancel=lambda: len(seen) >= 2):
        seen.append(event)
    assert isinstance(seen[-1], RunFinished) and seen[-1].status == "cancelled"
    assert PairedRuns(sample).pairs(run_id)[0].applied_at is None
    final = list(drive_run(sample, run_id))
    assert final[-1].status == "finished" and len(RunStore(sample).games(run_id)) == 12
    [pair] = PairedRuns(sample).pairs(run_id)
    count = {c.partner_id: c.success_count for c in repository.evidence.compositions(rush)}[armor]
    again = list(drive_run(sample, run_id))  # a finished run: nothing more is played or added
    assert again[-1].message == "already applied"
    assert {c.partner_id: c.success_count for c in repository.evidence.compositions(rush)}[armor] == count
    assert pair.successes == pair.counts.wins


def test_a_skill_edited_during_the_run_gets_no_credit(sample: Database) -> None:
    repository = SkillRepository(sample, Actor("t"))
    rush, armor = _id(repository, RUSH), _id(repository, ARMOR)
    run_id = start_sequence(
        sample, plan_sequence(repository, [rush, armor]), opponent=HARD, games=8, seed=1, chunk_games=4
    )
    stop = [False]
    for event in drive_run(sample, run_id, cancel=lambda: stop[0]):
        stop[0] = stop[0] or isinstance(event, Progress)  # after the first chunk
    skill = repository.get(armor)
    repository.update(replace(skill, body=replace(skill.body, parameter_bindings=(("aggression", 10),))))
    before = repository.evidence.compositions(rush)
    events = list(drive_run(sample, run_id))
    [result] = [e for e in events if isinstance(e, CompositionResult)]
    assert not result.credited and "body changed" in result.reason
    assert repository.evidence.compositions(rush) == before
    assert len(RunStore(sample).games(run_id)) == 4  # no games with the new body mixed in


def test_the_batch_runner_refuses_a_composition_run(sample: Database) -> None:
    from skillstudio.verification.runner import run_verification

    repository = SkillRepository(sample)
    plan = plan_sequence(repository, [_id(repository, RUSH), _id(repository, ARMOR)])
    run_id = start_sequence(sample, plan, opponent=HARD, games=2, seed=1)
    with pytest.raises(VerificationError, match="composition run"):
        list(run_verification(sample, run_id))
    assert RunStore(sample).games(run_id) == []
