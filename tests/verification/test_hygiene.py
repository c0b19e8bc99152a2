"""Evidence hygiene (issue 16): sessions that add nothing change nothing, what a batch cannot play
is left out by the core, fresh seeds, no game credited twice, and every run's recorded policy."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillstudio.model import Confidence, Domain, Quality
from skillstudio.model.evidence import EvidenceKind, VerificationRecord
from skillstudio.store import Actor, Database, SkillRepository, body_hash
from skillstudio.store.runs import RunStore
from skillstudio.verification.policy import VerificationPolicy
from skillstudio.verification.runner import (
    VerificationError,
    collect,
    run_verification,
    select_playable,
    start_run,
    verify,
)
from tests.factories import content_skill, example_skill, instructions_skill
from tests.verification.helpers import make_library, playable_skills

HARD = "IC Default Hard"


@pytest.fixture
def library(library_target: str):
    with Database(library_target) as database:
        SkillRepository(database, Actor("tester")).create_many(playable_skills(2))
        yield database


def test_a_session_of_only_error_games_changes_nothing(library: Database) -> None:
    """Today's bug: an all-error session recomputed the figures from the credited evidence only
    (75% over 32 games became 74% over 23)."""
    repository = SkillRepository(library, Actor("tester"))
    skill = playable_skills(3)[2]
    credited = VerificationRecord(
        "2026-01-01T00:00:00.000Z", EvidenceKind.HEADLESS, 17, 6, opponent=HARD, body_hash=body_hash(skill)
    )
    elsewhere = VerificationRecord("2026-01-02T00:00:00.000Z", EvidenceKind.HEADLESS, 7, 2, opponent="Classic RA")
    stored = repository.create(
        _with_quality(skill, Quality(32, 0.75, None, Confidence.PROVEN, "2026-01-02T00:00:00.000Z")),
        verifications=[credited, elsewhere],
    )
    revisions, audit = len(repository.history.revisions(skill.id)), len(repository.history.audit(skill_id=skill.id))

    final = collect(verify(library, [stored], opponent=HARD, games=5, seed=1, engine=["/nonexistent/engine"]))

    [result] = final.results
    assert (result.counts.errors, result.counts.decided, result.action) == (5, 0, "")
    assert "only error games" in result.reason
    after = repository.get(skill.id)
    assert after.quality == stored.quality  # 75% over 32 games, proven: untouched
    assert len(repository.evidence.verifications(skill.id)) == 2  # no evidence row for nothing
    assert len(repository.history.revisions(skill.id)) == revisions
    assert len(repository.history.audit(skill_id=skill.id)) == audit
    [row] = RunStore(library).skills(final.run_id)
    assert (row.errors, row.confidence_after, row.applied_at is not None) == (5, None, True)
    assert "only error games" in row.note


def test_a_session_that_credits_nothing_leaves_the_figures_alone(library: Database) -> None:
    repository = SkillRepository(library, Actor("tester"))
    skill = playable_skills(3)[2]
    credited = VerificationRecord(
        "2026-01-01T00:00:00.000Z", EvidenceKind.HEADLESS, 17, 6, opponent=HARD, body_hash=body_hash(skill)
    )
    stored = repository.create(
        _with_quality(skill, Quality(32, 0.75, None, Confidence.PROVEN, None)), verifications=[credited]
    )
    [result] = collect(verify(library, [stored], opponent="IC Default Easy", games=4, seed=1)).results
    assert not result.credited and result.action == "skill.verify"
    assert repository.get(skill.id).quality == stored.quality
    assert repository.evidence.verifications(skill.id)[-1].opponent == "IC Default Easy"  # kept for the record


def test_the_core_leaves_out_what_the_engine_cannot_play(library: Database) -> None:
    repository = SkillRepository(library, Actor("tester"))
    extra = [instructions_skill(domain=Domain.AI_STRATEGY), example_skill(), content_skill()]
    repository.create_many(extra)
    playable = [s.id for s in playable_skills(2)]
    skills, skipped = select_playable(repository, [*playable, *(s.id for s in extra), "no-such-skill"])
    assert [s.id for s in skills] == playable
    reasons = {s.skill_id: s.reason for s in skipped}
    assert "instructions body; the built-in engine plays strategic_pattern" in reasons[extra[0].id]
    assert "verified_example body" in reasons[extra[1].id]
    assert "not an AI skill" in reasons[extra[2].id]
    assert "no-such-skill" in reasons
    # an external engine may play any AI body; content skills are never played
    with_engine, _ = select_playable(repository, [s.id for s in extra], engine=["my-engine"])
    assert [s.id for s in with_engine] == [s.id for s in extra[:2]]
    # start_run itself refuses them too, and records what it left out with the run
    run_id = start_run(
        library, [*repository.get_many(playable), *repository.get_many([extra[0].id])], opponent=HARD, games=1
    )
    info = RunStore(library).run(run_id)
    assert [s.skill_id for s in RunStore(library).skills(run_id)] == playable
    assert [s["id"] for s in info.options["skipped"]] == [extra[0].id]
    events = list(run_verification(library, run_id))
    assert [s.skill_id for s in events[0].skipped] == [extra[0].id] == [s.skill_id for s in events[-1].skipped]
    assert repository.evidence.verifications(extra[0].id) == []
    with pytest.raises(VerificationError, match=r"no skills to verify \(1 skipped: .*instructions body"):
        start_run(library, repository.get_many([extra[0].id]), opponent=HARD, games=1)


def test_each_batch_draws_a_fresh_recorded_seed(library: Database) -> None:
    skills = SkillRepository(library).get_many([s.id for s in playable_skills(2)])
    first = collect(verify(library, skills[:1], opponent=HARD, games=6))
    second = collect(verify(library, skills[:1], opponent=HARD, games=6))
    store = RunStore(library)
    seeds = store.run(first.run_id).seed, store.run(second.run_id).seed
    assert seeds[0] != seeds[1] and all(0 < seed < 2**31 for seed in seeds)
    assert SkillRepository(library).get(skills[0].id).quality.verification_count == 12  # two batches, both counted
    assert first.results[0].duplicates == second.results[0].duplicates == 0


def test_a_game_already_credited_is_never_counted_twice(library: Database) -> None:
    repository = SkillRepository(library)
    skill = repository.get(playable_skills(1)[0].id)
    first = collect(verify(library, [skill], opponent=HARD, games=8, seed=5))
    before = repository.get(skill.id).quality
    revisions = len(repository.history.revisions(skill.id))
    # the same batch again (the dialog's old seed 0 did this): the same games, counted once
    [again] = collect(verify(library, [repository.get(skill.id)], opponent=HARD, games=8, seed=5)).results
    assert again.duplicates == 8 and again.action == "" and "already credited" in again.reason
    assert repository.get(skill.id).quality == before
    assert len(repository.evidence.verifications(skill.id)) == 1
    assert len(repository.history.revisions(skill.id)) == revisions
    # a longer batch with the same seed: its first 8 games repeat, the other 4 count
    [longer] = collect(verify(library, [repository.get(skill.id)], opponent=HARD, games=12, seed=5)).results
    assert longer.duplicates == 8 and longer.verification_count == 12
    stored = repository.evidence.verifications(skill.id)[-1]
    assert stored.decided == 4 and stored.kind is EvidenceKind.HEADLESS
    store = RunStore(library)
    assert [s.duplicates for s in store.skills(first.run_id)] == [0]
    # another opponent is another game: not a duplicate (and no credit, but recorded)
    [other] = collect(verify(library, [repository.get(skill.id)], opponent="IC Default Easy", games=4, seed=5)).results
    assert other.duplicates == 0


def test_the_store_itself_refuses_to_credit_a_game_twice(library: Database) -> None:
    """Whoever applies a run (not only the dialog or the runner's usual path), the evidence
    store takes the duplicate games out inside its own transaction."""
    repository = SkillRepository(library)
    skill = repository.get(playable_skills(1)[0].id)
    collect(verify(library, [skill], opponent=HARD, games=4, seed=9))
    run_id = start_run(library, [skill], opponent=HARD, games=4, seed=9)
    store = RunStore(library)
    # play the games but apply the session by hand, as another front end might
    from skillstudio.verification.executors import play_chunk
    from skillstudio.verification.runner import _plan

    info = store.run(run_id)
    entry = store.skills(run_id)[0]
    for chunk in _plan(info, {skill.id: entry}, {skill.id: skill}, {}):
        store.record_games(run_id, play_chunk(chunk).rows)
    counts = store.counts(run_id)[skill.id]
    record = VerificationRecord(
        "2026-06-01T00:00:00.000Z",
        EvidenceKind.HEADLESS,
        counts.wins,
        counts.losses,
        counts.draws,
        opponent=HARD,
        engine_version=store.games(run_id)[0].engine_version,
        body_hash=body_hash(skill),
    )

    def recompute(*_args: object) -> object:
        raise AssertionError("nothing to credit: the policy is never asked")

    applied = repository.evidence.apply_session(skill.id, record, run_id=run_id, recompute=recompute)
    assert applied.status == "unchanged" and applied.duplicates.decided == 4
    assert len(repository.evidence.verifications(skill.id)) == 1


def test_every_run_records_its_policy_and_a_resume_keeps_it(tmp_path: Path) -> None:
    with Database(make_library(tmp_path / "four.db", 4)) as library:
        repository = SkillRepository(library, Actor("tester"))
        strong, stronger = (repository.get(s.id) for s in playable_skills(4)[2:])  # ~85% against Hard
        repository.settings.save({"headless_max_tier": "proven"}, below={})  # a studio trusting its engine
        run_id = start_run(library, [strong], opponent=HARD, games=12, seed=3)
        recorded = RunStore(library).run(run_id).policy
        assert recorded["headless_max_tier"] == "proven" and recorded["thresholds.proven"] == 0.7
        assert recorded == VerificationPolicy.from_values(recorded).values()
        repository.settings.save({}, below={})  # meanwhile the library goes back to D057's path
        [result] = collect(run_verification(library, run_id)).results
        assert result.after == "proven"  # the run's own rules: 10 of 12 games
        # a new run takes the library's settings now: headless evidence gives Tentative at most
        [capped] = collect(verify(library, [stronger], opponent=HARD, games=12, seed=3)).results
        assert capped.verification_count == 12 and capped.quality_rate > 0.7 and capped.after == "tentative"
        assert "headless_max_tier" in capped.reason and "needs gameplay evidence" in capped.reason
        assert RunStore(library).runs()[0].policy["headless_max_tier"] == "tentative"


def _with_quality(skill, quality: Quality):
    from dataclasses import replace

    return replace(skill, quality=quality)
