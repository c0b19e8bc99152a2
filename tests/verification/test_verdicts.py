"""Why a batch left a tier where it is, and what to do (skillstudio.verification.verdicts, no Qt)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from skillstudio.model import Confidence, Domain
from skillstudio.model.evidence import EvidenceKind, VerificationRecord
from skillstudio.store import Actor, Database, SkillRepository
from skillstudio.store.runs import Counts
from skillstudio.verification import verdicts as v
from skillstudio.verification.policy import DEFAULT_POLICY, VerificationPolicy
from skillstudio.verification.runner import SkillResult, collect, run_verification, select_playable, start_run
from skillstudio.verification.standing import Standing
from skillstudio.verification.stats import wilson
from tests.verification.helpers import make_library, playable_skills

HARD = "IC Default Hard"
BODY = "b" * 64


def _record(kind: EvidenceKind, wins: int, decided: int) -> VerificationRecord:
    return VerificationRecord(
        "2026-01-01T00:00:00+00:00", kind, wins, decided - wins, opponent=HARD, engine_version="1", body_hash=BODY
    )


def _batch(
    tier: Confidence,
    *,
    headless: tuple[int, int] = (0, 0),
    gameplay: tuple[int, int] = (0, 0),
    policy: VerificationPolicy = DEFAULT_POLICY,
    before: Confidence | None = None,
    **result: object,
) -> tuple[SkillResult, Standing]:
    """A credited session that left the skill at ``tier``, and its standing under ``policy``."""
    records = [
        _record(kind, wins, decided)
        for kind, (wins, decided) in ((EvidenceKind.HEADLESS, headless), (EvidenceKind.GAMEPLAY, gameplay))
        if decided
    ]
    judged = policy.assess(Domain.AI_STRATEGY, records, BODY, tier)
    standing = Standing("s1", tier, judged.headless, judged.gameplay, judged.plays, judged.contradiction)
    wins, decided = headless
    before = before or tier
    session = SkillResult(
        "s1",
        "Early AA against Yak rush",
        Counts(wins, decided - wins),
        wins / decided if decided else 0.0,
        wilson(wins, decided),
        before.value,
        tier.value,
        "skill.verify" if before is tier else "skill.promote",
        judged.reason,
        True,
    )
    return replace(session, **result), standing  # type: ignore[arg-type]


def test_a_contradicted_tier_the_batch_kept_says_why_and_how_to_demote() -> None:
    verdict = v.explain(*_batch(Confidence.ESTABLISHED, headless=(5, 26)), DEFAULT_POLICY)
    assert verdict is not None and verdict.contradicted and verdict.tier is Confidence.ESTABLISHED
    assert "established needs 3+ decided games above 60%" in verdict.why and "headless 5/26" in verdict.why
    assert "demote_on_verify is off" in verdict.why
    assert verdict.todo.startswith("demote to tentative") and "revalidate" in verdict.todo
    assert "skillstudio config set --library demote_on_verify true" in verdict.todo
    assert verdict.text().startswith("Early AA against Yak rush (established): ")


def test_a_tier_the_figures_keep_or_that_followed_them_needs_no_verdict() -> None:
    assert v.explain(*_batch(Confidence.TENTATIVE, headless=(2, 10)), DEFAULT_POLICY) is None
    assert v.explain(*_batch(Confidence.ESTABLISHED, gameplay=(8, 10)), DEFAULT_POLICY) is None
    demoting = replace(DEFAULT_POLICY, demote_on_verify=True)  # the batch followed the figures down
    assert v.explain(*_batch(Confidence.TENTATIVE, headless=(1, 20), before=Confidence.ESTABLISHED), demoting) is None
    # the figures earn Established, only the cap says otherwise: the cap contradicts nothing
    assert v.explain(*_batch(Confidence.ESTABLISHED, headless=(13, 20)), DEFAULT_POLICY) is None


def test_figures_held_back_by_the_headless_cap_say_so_and_how_to_go_further() -> None:
    verdict = v.explain(*_batch(Confidence.TENTATIVE, headless=(15, 20)), DEFAULT_POLICY)
    assert verdict is not None and verdict.cause == v.CAPPED
    assert "headless evidence gives at most tentative (headless_max_tier): proven needs gameplay" in verdict.why
    assert "skillstudio record" in verdict.todo and "headless_max_tier proven" in verdict.todo
    trusting = replace(DEFAULT_POLICY, headless_max_tier=Confidence.PROVEN)
    assert v.explain(*_batch(Confidence.PROVEN, headless=(15, 20), policy=trusting), trusting) is None


def test_too_few_games_at_a_good_rate_ask_for_more_games() -> None:
    trusting = replace(DEFAULT_POLICY, headless_max_tier=Confidence.PROVEN)
    thin = v.explain(*_batch(Confidence.PROVEN, headless=(4, 5), policy=trusting), trusting)
    assert thin is not None and thin.cause == v.KEPT and not thin.contradicted
    assert "proven needs 10+ decided games above 70%" in thin.why and "Until decided" in thin.todo
    # a promotion within reach: the next tier, not the last one, is named
    near = v.explain(*_batch(Confidence.TENTATIVE, gameplay=(2, 2)), DEFAULT_POLICY)
    assert near is not None and near.cause == v.THIN
    assert near.why.startswith("established needs 3+ decided games above 60%") and "gameplay 2/2" in near.why


def test_sessions_that_changed_nothing_give_the_runners_reason_and_a_way_out() -> None:
    result, standing = _batch(Confidence.PROVEN, headless=(10, 12))
    elsewhere = replace(result, credited=False, reason="played against IC Default Easy, not the reference opponent")
    verdict = v.explain(elsewhere, standing, DEFAULT_POLICY)
    assert verdict is not None and verdict.cause == v.NOT_CREDITED and verdict.why == elsewhere.reason
    assert HARD in verdict.todo
    errors = replace(result, action="", credited=False, counts=Counts(errors=4), reason="only error games (4)")
    verdict = v.explain(errors, standing, DEFAULT_POLICY)
    assert verdict is not None and verdict.cause == v.UNCHANGED and "engine's errors" in verdict.todo
    repeated = replace(result, action="", credited=False, counts=Counts(3, 1), duplicates=4, reason="all 4 repeat")
    verdict = v.explain(repeated, standing, DEFAULT_POLICY)
    assert verdict is not None and "new seed" in verdict.todo


def test_a_runs_verdicts_follow_the_policy_it_recorded(tmp_path: Path) -> None:
    def batch(path: Path, policy: VerificationPolicy) -> list[v.Verdict]:
        with Database(make_library(path, 3, Confidence.PROVEN)) as database:
            repository = SkillRepository(database, Actor("tester"))
            skills, _ = select_playable(repository, [s.id for s in playable_skills(3)])
            run_id = start_run(database, skills, opponent=HARD, games=6, seed=5, policy=policy)
            finished = collect(run_verification(database, run_id))
            return v.explain_run(repository, run_id, finished.results)

    # D057's defaults: six headless games keep no Proven tier, and the batch lowers none
    kept = batch(tmp_path / "kept.db", DEFAULT_POLICY)
    assert len(kept) == 3 and {verdict.cause for verdict in kept} <= {v.CONTRADICTED, v.KEPT}
    assert all(verdict.tier is Confidence.PROVEN and "demote_on_verify is off" in verdict.why for verdict in kept)
    # a run that recorded demote_on_verify: the tiers followed the figures down
    followed = batch(tmp_path / "followed.db", replace(DEFAULT_POLICY, demote_on_verify=True))
    assert all(verdict.cause in (v.CAPPED, v.THIN) and verdict.tier is Confidence.TENTATIVE for verdict in followed)


def test_a_batchs_verdicts_are_counted_by_cause() -> None:
    assert v.summarize([]) == "Every tier follows its credited figures."
    contradicted = v.explain(*_batch(Confidence.ESTABLISHED, headless=(5, 26)), DEFAULT_POLICY)
    capped = v.explain(*_batch(Confidence.TENTATIVE, headless=(15, 20)), DEFAULT_POLICY)
    assert contradicted is not None and capped is not None
    assert v.summarize([contradicted, capped, contradicted]) == (
        "3 skills to look at: 2 contradicted by the credited evidence, 1 held back by headless_max_tier"
    )
