"""`verify --baseline`: the default plan on the same seeds, the lift and its flag."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from skillstudio.engine import run_batch
from skillstudio.library import create_library
from skillstudio.store import Actor, Database, GameRow, SkillQuery, SkillRepository
from skillstudio.store.paired_runs import PairedRuns
from skillstudio.store.runs import RunStore
from skillstudio.verification.drive import drive_run
from skillstudio.verification.lift import (
    BaselineProgress,
    LiftResult,
    describe,
    latest_lifts,
    lift_of,
    paired_counts,
)
from skillstudio.verification.runner import RunFinished, start_run
from tests.factories import ai_skill
from tests.verification.helpers import fill_library, playable_skills

HARD = "IC Default Hard"


def _baseline_run(database: Database, skills, games: int = 12, seed: int = 4, chunk: int = 5) -> str:
    return start_run(
        database, skills, opponent=HARD, games=games, seed=seed, chunk_games=chunk, options={"baseline": True}
    )


def test_the_default_plan_plays_the_skills_games_with_the_same_seeds(more_libraries, tmp_path: Path) -> None:
    path = fill_library(more_libraries("lib"), 2)
    with Database(path) as database:
        skills = SkillRepository(database).get_many([s.id for s in playable_skills(2)])
        run_id = _baseline_run(database, skills)
        events = list(drive_run(database, run_id))
        assert isinstance(events[-1], RunFinished) and events[-1].status == "finished"  # still the last event
        lifts = {e.skill_id: e.lift for e in events if isinstance(e, LiftResult)}
        assert set(lifts) == {s.id for s in skills}
        assert any(isinstance(e, BaselineProgress) for e in events)
        store, paired = RunStore(database), PairedRuns(database)
        for skill in skills:
            mine = store.games(run_id, skill.id)
            theirs = paired.baseline_games(run_id, skill.id)
            assert [g.seed for g in theirs] == [g.seed for g in mine]  # game i pairs with game i
            expected = run_batch(skill, HARD, 12, 4, baseline=True)
            assert [g.outcome for g in theirs] == [r.outcome for r in expected]
            assert lifts[skill.id] == replace(
                lift_of(store.run(run_id), skill.id, skill_hash(store, run_id, skill.id), mine, theirs),
                computed_at=lifts[skill.id].computed_at,
            )
            assert paired.lifts(run_id)[skill.id].pairs == 12


def skill_hash(store: RunStore, run_id: str, skill_id: str) -> str:
    return next(e.body_hash for e in store.skills(run_id) if e.skill_id == skill_id)


def test_a_plan_worse_than_the_default_plan_is_flagged(tmp_path: Path) -> None:
    """The sample's "Early AA against Yak rush" wins far less often than the default plan would."""
    with create_library(tmp_path / "sample.db", sample=True) as database:
        repository = SkillRepository(database)
        [aa] = [
            s.id
            for s in repository.summaries(repository.query(SkillQuery()).ids)
            if s.name == "Early AA against Yak rush"
        ]
        run_id = _baseline_run(database, [repository.get(aa)], games=20)
        list(drive_run(database, run_id))
        [record] = PairedRuns(database).lifts(run_id).values()
        assert record.worse and record.high < 0 and record.lift is not None and record.lift < 0
        assert describe(record).endswith("worse than the default plan")
        [shown] = latest_lifts(repository, [aa])
        assert shown.current_body and shown.lift == record


def test_error_games_are_left_out_pairwise_and_never_flag(library_target, tmp_path: Path) -> None:
    with Database(library_target) as database:
        broken = ai_skill()
        broken = replace(broken, provenance=replace(broken.provenance, game_module="nosuchmodule"))
        skill = SkillRepository(database, Actor("t")).create(broken)
        run_id = _baseline_run(database, [skill], games=6)
        list(drive_run(database, run_id))
        [record] = PairedRuns(database).lifts(run_id).values()
        assert (record.pairs, record.excluded, record.lift, record.worse) == (0, 6, None, False)
        assert describe(record) == "no decided pairs (6 left out for error games)"
        assert PairedRuns(database).baseline_games(run_id) == []  # no partner is played for an error game


def test_a_baseline_cut_short_marks_the_run_cancelled_and_resume_finishes_the_lift(
    more_libraries, tmp_path: Path
) -> None:
    path = fill_library(more_libraries("lib"), 2)
    with Database(path) as database:
        skills = SkillRepository(database).get_many([s.id for s in playable_skills(2)])
        run_id = _baseline_run(database, skills, chunk=4)
        seen: list[object] = []
        cancel = lambda: any(isinstance(e, BaselineProgress) for e in seen)  # noqa: E731
        for event in drive_run(database, run_id, cancel=cancel):
            seen.append(event)
        assert isinstance(seen[-1], RunFinished) and seen[-1].status == "cancelled"
        assert RunStore(database).run(run_id).status == "cancelled"
        assert PairedRuns(database).lifts(run_id) == {}  # no lift from half the pairs
        assert 0 < sum(map(len, PairedRuns(database).recorded_baseline_games(run_id).values())) < 24
        final = list(drive_run(database, run_id))[-1]
        assert isinstance(final, RunFinished) and final.status == "finished"
        assert {r.pairs for r in PairedRuns(database).lifts(run_id).values()} == {12}
        assert RunStore(database).run(run_id).status == "finished"


def test_a_lift_measured_with_an_older_body_says_so(more_libraries, tmp_path: Path) -> None:
    path = fill_library(more_libraries("lib"), 1)
    with Database(path) as database:
        repository = SkillRepository(database, Actor("t"))
        [skill] = repository.get_many([playable_skills(1)[0].id])
        list(drive_run(database, _baseline_run(database, [skill], games=4)))
        repository.update(replace(skill, body=replace(skill.body, parameter_bindings=(("aggression", 90),))))
        [shown] = latest_lifts(repository, [skill.id])
        assert not shown.current_body


def test_pairs_count_only_when_both_games_were_decided() -> None:
    skill = [GameRow("s", 0, "win"), GameRow("s", 1, "win"), GameRow("s", 2, "loss"), GameRow("s", 3, "draw")]
    skill += [GameRow("s", 4, "error"), GameRow("s", 5, "win"), GameRow("s", 6, "win")]
    baseline = [GameRow("s", 0, "win"), GameRow("s", 1, "loss"), GameRow("s", 2, "win"), GameRow("s", 3, "loss")]
    baseline += [GameRow("s", 4, "win"), GameRow("s", 5, "error")]  # game 6 has no partner yet
    table, excluded = paired_counts(skill, baseline)
    assert (table.both, table.first_only, table.second_only, table.neither) == (1, 1, 1, 1)  # a draw is not a win
    assert excluded == 2  # an error on either side leaves the pair out, not a loss for one side


@pytest.mark.parametrize("kind", ["revalidate"])
def test_only_verify_runs_play_a_baseline(more_libraries, tmp_path: Path, kind: str) -> None:
    path = fill_library(more_libraries("lib"), 1)
    with Database(path) as database:
        skills = SkillRepository(database).get_many([playable_skills(1)[0].id])
        run_id = start_run(database, skills, opponent=HARD, games=3, kind=kind, options={"baseline": True})
        events = list(drive_run(database, run_id))
        assert not any(isinstance(e, LiftResult | BaselineProgress) for e in events)


def test_each_skill_s_lift_records_the_engine_version_its_own_games_reported(tmp_path: Path) -> None:
    """A run's own version is its first returned chunk's; each game module plays with its own.
    A td skill's lift in a run whose first chunk was ra1's records td's version."""
    ra1, td = playable_skills(2)
    td = replace(td, provenance=replace(td.provenance, game_module="td"))
    with Database(tmp_path / "lib.db", create=True) as database:
        SkillRepository(database, Actor("tester")).create_many([ra1, td])
        skills = SkillRepository(database).get_many([ra1.id, td.id])
        run_id = _baseline_run(database, skills, games=6, chunk=6)
        list(drive_run(database, run_id))
        store = RunStore(database)
        versions = {skill.id: {g.engine_version for g in store.games(run_id, skill.id)} for skill in skills}
        assert len(versions[ra1.id]) == len(versions[td.id]) == 1 and versions[ra1.id] != versions[td.id]
        assert store.run(run_id).engine_version in versions[ra1.id]  # ra1's chunk came back first
        lifts = PairedRuns(database).lifts(run_id)
        assert {skill_id: {lift.engine_version} for skill_id, lift in lifts.items()} == versions
