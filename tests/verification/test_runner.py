"""The batch runner: persistence, events, cancel and resume, evidence rules, set_quality."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest

from skillstudio.engine import ENGINE_VERSION
from skillstudio.model import Confidence, Quality
from skillstudio.model.evidence import EvidenceKind, VerificationRecord
from skillstudio.store import (
    Actor,
    AuditAction,
    Database,
    QualityOutcome,
    SkillRepository,
    SuccessInterval,
    body_hash,
)
from skillstudio.store.runs import RunStore
from skillstudio.verification.runner import (
    Progress,
    RunFinished,
    RunStarted,
    SkillResult,
    VerificationError,
    collect,
    run_verification,
    start_run,
    verify,
)
from tests.factories import strategic_body
from tests.verification.helpers import make_library, playable_skills

HARD = "IC Default Hard"


@pytest.fixture
def library(library_target: str):
    with Database(library_target) as database:
        SkillRepository(database, Actor("tester")).create_many(playable_skills(3))
        yield database


def skills_of(database: Database):
    repository = SkillRepository(database, Actor("tester"))
    return [repository.get(skill.id) for skill in playable_skills(3)]


def outcomes(database: Database, run_id: str) -> list[tuple[str, int, str, int | None]]:
    return [(g.skill_id, g.game, g.outcome, g.seed) for g in RunStore(database).games(run_id)]


def test_events_persistence_and_quality(library: Database) -> None:
    events = list(verify(library, skills_of(library), opponent=HARD, games=12, seed=3, chunk_games=5, actor=Actor("t")))
    assert isinstance(events[0], RunStarted) and isinstance(events[-1], RunFinished)
    progress = [e for e in events if isinstance(e, Progress)]
    assert [p.games_done for p in progress] == sorted(p.games_done for p in progress)
    assert progress[-1].games_done == 36 and progress[-1].games_total == 36
    final = events[-1]
    assert final.status == "finished" and len(final.results) == 3
    store = RunStore(library)
    info = store.run(final.run_id)
    assert (info.status, info.games_recorded, info.skills, info.opponent, info.seed) == ("finished", 36, 3, HARD, 3)
    assert info.engine_version.startswith(f"{ENGINE_VERSION}+ra1")
    repository = SkillRepository(library)
    for result in final.results:
        skill = repository.get(result.skill_id)
        assert skill.quality.verification_count == result.counts.decided
        assert skill.quality.success_rate == pytest.approx(result.counts.wins / result.counts.decided)
        assert skill.quality.confidence.value == result.after
        [record] = repository.evidence.verifications(skill.id)
        assert record.body_hash == body_hash(skill) and record.opponent == HARD
        audit = repository.history.audit(skill_id=skill.id)
        assert audit[0].action == result.action and audit[0].details["wilson_95"] == result.interval.as_list()
        assert repository.history.revisions(skill.id)[-1].action == result.action.removeprefix("skill.")
        successes, trials, low, high = store.interval(skill.id)
        assert (successes, trials) == (result.counts.wins, result.counts.decided)
        assert [round(low, 4), round(high, 4)] == result.interval.as_list()


def test_chunking_does_not_change_results(tmp_path: Path) -> None:
    runs = []
    for index, chunk in enumerate((3, 7, 40)):
        with Database(make_library(tmp_path / f"lib{index}.db", 3)) as database:
            final = collect(verify(database, skills_of(database), opponent=HARD, games=8, seed=11, chunk_games=chunk))
            runs.append(outcomes(database, final.run_id))
    assert runs[0] == runs[1] == runs[2]


def test_cancel_then_resume_completes_with_the_same_games(tmp_path: Path) -> None:
    with Database(make_library(tmp_path / "a.db", 3)) as database:
        reference = outcomes(
            database,
            collect(verify(database, skills_of(database), opponent=HARD, games=10, seed=5, chunk_games=4)).run_id,
        )
    with Database(make_library(tmp_path / "b.db", 3)) as database:
        cancel = threading.Event()
        run_id = start_run(database, skills_of(database), opponent=HARD, games=10, seed=5, chunk_games=4)
        seen = 0
        for event in run_verification(database, run_id, cancel=cancel):
            if isinstance(event, Progress):
                seen = event.games_done
                if seen >= 8:
                    cancel.set()
        assert event.status == "cancelled" and seen < 30
        assert RunStore(database).run(run_id).status == "cancelled"
        events = list(run_verification(database, run_id))
        assert events[0].games_done == seen
        assert events[-1].status == "finished"
        assert outcomes(database, run_id) == reference
        # each skill was applied exactly once
        repository = SkillRepository(database)
        assert all(len(repository.evidence.verifications(s.id)) == 1 for s in playable_skills(3))
        assert collect(run_verification(database, run_id)).message == "already finished"


def test_error_games_are_not_losses(library: Database) -> None:
    skill = skills_of(library)[0]
    final = collect(
        verify(library, [skill], opponent=HARD, games=6, seed=1, engine=["/nonexistent/engine"], chunk_games=3)
    )
    [result] = final.results
    assert (result.counts.errors, result.counts.decided) == (6, 0)
    stored = SkillRepository(library).get(skill.id)
    assert stored.quality.verification_count == 0 and stored.quality.confidence is Confidence.TENTATIVE
    errors = [g.error for g in RunStore(library).games(final.run_id)]
    assert all(errors) and len(errors) == 6


def test_a_changed_body_gets_no_credit(library: Database) -> None:
    repository = SkillRepository(library, Actor("tester"))
    skill = skills_of(library)[0]
    old = VerificationRecord(
        "2026-01-01T00:00:00.000Z", EvidenceKind.HEADLESS, 30, 0, opponent=HARD, body_hash="f" * 64
    )
    repository.evidence.set_quality(
        skill.id, QualityOutcome(Quality(30, 1.0, None, Confidence.PROVEN, old.recorded_at)), record=old
    )
    [first] = collect(verify(library, [repository.get(skill.id)], opponent=HARD, games=6, seed=2)).results
    assert first.credited and first.verification_count == 6  # the 30 games of another body give nothing
    assert repository.get(skill.id).quality.verification_count == 6
    edited = replace(repository.get(skill.id), body=strategic_body(playable_skills(2)[1].body.plan.build_focus))
    repository.update(edited)
    [second] = collect(verify(library, [repository.get(skill.id)], opponent=HARD, games=4, seed=2)).results
    assert second.verification_count == 4  # the 6 games of the previous body no longer count
    assert repository.get(skill.id).quality.verification_count == 4
    # a run started before an edit plays no more games for that skill and credits nothing
    run_id = start_run(library, [repository.get(skill.id)], opponent=HARD, games=4, seed=3)
    repository.update(replace(repository.get(skill.id), body=skill.body))
    [third] = collect(run_verification(library, run_id)).results
    assert not third.credited and "body changed" in third.reason and third.counts.played == 0
    assert len(repository.evidence.verifications(skill.id)) == 3


def test_other_opponent_is_recorded_without_credit(library: Database) -> None:
    skill = skills_of(library)[0]
    [result] = collect(verify(library, [skill], opponent="IC Default Easy", games=5, seed=2)).results
    assert not result.credited and "reference opponent" in result.reason
    repository = SkillRepository(library)
    assert repository.get(skill.id).quality.verification_count == 0
    assert repository.evidence.verifications(skill.id)[0].opponent == "IC Default Easy"


def test_unknown_opponent_and_bad_arguments(library: Database) -> None:
    with pytest.raises(VerificationError, match="unknown opponent"):
        start_run(library, skills_of(library), opponent="Nobody Hard", games=3)
    with pytest.raises(VerificationError):
        start_run(library, skills_of(library), opponent=HARD, games=0)


def test_set_quality_is_one_transaction(library: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    repository = SkillRepository(library, Actor("tester"))
    skill = skills_of(library)[0]

    def boom(*_args: object) -> None:
        raise RuntimeError("disk full")

    # The interval is written after the evidence and the quality columns: a failure there
    # must take them back too.
    monkeypatch.setattr("skillstudio.store.evidence.write_interval", boom)
    outcome = QualityOutcome(
        Quality(9, 0.9, None, Confidence.ESTABLISHED, None),
        AuditAction.PROMOTE,
        interval=SuccessInterval(9, 10, 0.6, 0.98),
    )
    with pytest.raises(RuntimeError):
        repository.evidence.set_quality(
            skill.id, outcome, record=VerificationRecord("2026-01-01T00:00:00.000Z", EvidenceKind.HEADLESS, 9, 1)
        )
    assert repository.get(skill.id).quality == skill.quality
    assert repository.evidence.verifications(skill.id) == []
    assert [a.action for a in repository.history.audit(skill_id=skill.id)] == ["skill.create"]


def test_skill_results_are_events(library: Database) -> None:
    events = list(verify(library, skills_of(library)[:1], opponent=HARD, games=3, seed=0))
    assert any(isinstance(e, SkillResult) for e in events)


@pytest.mark.parametrize("demote_on_verify", [False, True])
def test_a_verify_batch_demotes_only_when_the_policy_says_so(library: Database, demote_on_verify: bool) -> None:
    from skillstudio.verification.policy import VerificationPolicy

    repository = SkillRepository(library, Actor("tester"))
    skill = skills_of(library)[0]
    # Proven on paper, with no credited evidence behind it: new games cannot support Proven.
    repository.evidence.set_quality(
        skill.id, QualityOutcome(Quality(40, 0.9, None, Confidence.PROVEN), AuditAction.VERIFY, "setup")
    )
    policy = VerificationPolicy(demote_on_verify=demote_on_verify)
    collect(verify(library, [repository.get(skill.id)], opponent=HARD, games=6, seed=1, policy=policy))
    after = repository.get(skill.id).confidence
    assert (after is Confidence.PROVEN) is (not demote_on_verify)


def test_a_watched_batch_gets_about_a_progress_point_per_few_percent_within_the_chunk_bounds() -> None:
    from skillstudio.verification.runner import DEFAULT_CHUNK_GAMES, MIN_CHUNK_GAMES, PROGRESS_POINTS, chunk_games_for

    assert chunk_games_for(1) == MIN_CHUNK_GAMES
    assert chunk_games_for(PROGRESS_POINTS * 100) == 100
    assert chunk_games_for(PROGRESS_POINTS * 100 + 1) == 101  # rounded up: never one point too many
    assert chunk_games_for(10_000_000) == DEFAULT_CHUNK_GAMES
