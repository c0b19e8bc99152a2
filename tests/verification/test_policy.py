"""D057's promotion and decay rules at their boundaries, and Wilson intervals against known values."""

from __future__ import annotations

import pytest

from skillstudio.model import Confidence, Domain
from skillstudio.model.evidence import EvidenceKind, VerificationRecord
from skillstudio.verification import DEFAULT_POLICY, VerificationPolicy, audit_action, wilson

H = "a" * 64
T, E, P = Confidence.TENTATIVE, Confidence.ESTABLISHED, Confidence.PROVEN
# A studio that trusts its headless engine (headless_max_tier: proven): the rate rules alone.
TRUSTING = VerificationPolicy(headless_max_tier=P)


def headless(
    wins: int,
    losses: int,
    draws: int = 0,
    errors: int = 0,
    *,
    opponent: str = "IC Default Hard",
    body: str = H,
    engine: str = "1.0.0",
) -> VerificationRecord:
    return VerificationRecord(
        "2026-05-01T10:00:00.000Z",
        EvidenceKind.HEADLESS,
        wins,
        losses,
        draws,
        errors,
        opponent,
        engine_version=engine,
        body_hash=body,
    )


def gameplay(wins: int, losses: int, draws: int = 0, *, opponent: str = "kessler", body: str = H) -> VerificationRecord:
    return VerificationRecord(
        "2026-05-02T10:00:00.000Z",
        EvidenceKind.GAMEPLAY,
        wins,
        losses,
        draws,
        opponent=opponent,
        engine_version="0.5.0",
        body_hash=body,
    )


def plays(completed: int, failed: int, rating: float | None, rated: int, body: str = H) -> VerificationRecord:
    return VerificationRecord(
        "2026-05-01T10:00:00.000Z", EvidenceKind.PLAY, completed, failed, rating=rating, rated=rated, body_hash=body
    )


@pytest.mark.parametrize(
    ("successes", "trials", "low", "high"),
    [
        (8, 10, 0.4902, 0.9433),  # the textbook example
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (3, 3, 0.4385, 1.0),
        (1, 2, 0.0945, 0.9055),
        (50, 100, 0.4038, 0.5962),
        (81, 263, 0.2553, 0.3662),  # Wikipedia/Newcombe-style check value
    ],
)
def test_wilson_known_values(successes: int, trials: int, low: float, high: float) -> None:
    interval = wilson(successes, trials)
    assert interval.low == pytest.approx(low, abs=5e-4)
    assert interval.high == pytest.approx(high, abs=5e-4)


def test_wilson_without_trials_and_bad_input() -> None:
    assert (wilson(0, 0).low, wilson(0, 0).high) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson(3, 2)


@pytest.mark.parametrize(
    ("wins", "losses", "tier", "candidate"),
    [
        (2, 3, T, False),  # 40% exactly is not above 40%
        (41, 59, T, True),  # 41%: a candidate
        (1, 1, T, True),  # 50% but only 2 games: not yet Established
        (3, 2, T, True),  # 60% exactly over 5 games: not above 60%
        (2, 1, E, True),  # 3 games, 66.7%: Established
        (7, 3, E, True),  # 70% exactly over 10: not above 70%
        (8, 1, E, True),  # 89% but 9 games: not yet Proven
        (8, 2, P, True),  # 10 games, 80%: Proven
        (71, 29, P, True),
        (0, 0, T, False),
    ],
)
def test_ai_rate_boundaries(wins: int, losses: int, tier: Confidence, candidate: bool) -> None:
    """The same rules for real matches by default, and for headless games where trusted."""
    for policy, record in ((DEFAULT_POLICY, gameplay(wins, losses)), (TRUSTING, headless(wins, losses))):
        assessment = policy.assess(Domain.AI_STRATEGY, [record], H)
        assert (assessment.confidence, assessment.candidate) == (tier, candidate)
        assert assessment.quality.verification_count == wins + losses
    # D057's default path: headless evidence alone makes a candidate (Tentative) and no more
    by_default = DEFAULT_POLICY.assess(Domain.AI_STRATEGY, [headless(wins, losses)], H)
    assert (by_default.confidence, by_default.candidate) == (T, candidate)
    assert by_default.headless.tier is tier  # what the figures alone would give, kept for the record


def test_draws_count_as_decided_games_and_errors_never_as_losses() -> None:
    # 7 wins, 2 losses, 1 draw: 70% is not above 70%; 100 errors change nothing
    assert TRUSTING.assess(Domain.AI_STRATEGY, [headless(7, 2, 1)], H).confidence is E
    with_errors = TRUSTING.assess(Domain.AI_STRATEGY, [headless(8, 2, 0, 100)], H)
    assert with_errors.confidence is P
    assert with_errors.quality.verification_count == 10
    assert with_errors.quality.success_rate == pytest.approx(0.8)


def test_only_current_body_and_reference_opponent_count() -> None:
    other_body = headless(10, 0, body="b" * 64)
    easy = headless(10, 0, opponent="IC Default Easy")
    hard = headless(1, 1)
    assessment = DEFAULT_POLICY.assess(Domain.AI_STRATEGY, [other_body, easy, hard], H)
    assert (assessment.counted, assessment.ignored) == (1, 2)
    assert assessment.quality.verification_count == 2
    assert TRUSTING.assess(Domain.AI_STRATEGY, [headless(10, 0, opponent="ic-default:hard")], H).confidence is P


def test_verification_count_sums_sessions() -> None:
    assessment = TRUSTING.assess(Domain.AI_STRATEGY, [headless(2, 1), headless(2, 1), headless(2, 1)], H)
    assert assessment.quality.verification_count == 9
    assert assessment.confidence is E
    assert assessment.interval.as_list() == wilson(6, 9).as_list()


@pytest.mark.parametrize(
    ("completed", "failed", "rating", "rated", "tier", "candidate"),
    [
        (1, 0, 3.0, 1, T, True),  # completed and rated >= 3: candidate
        (1, 0, 2.99, 1, T, False),
        (0, 1, 5.0, 1, T, False),  # not completed
        (1, 0, None, 0, T, False),  # not rated
        (3, 0, 3.5, 3, E, True),  # 3 rated plays averaging 3.5: Established
        (3, 0, 3.49, 3, T, True),
        (2, 0, 5.0, 2, T, True),  # only 2 plays
        (3, 2, 3.6, 5, E, True),
    ],
)
def test_content_boundaries(completed, failed, rating, rated, tier, candidate) -> None:
    assessment = DEFAULT_POLICY.assess(Domain.CONTENT_GENERATION, [plays(completed, failed, rating, rated)], H)
    assert (assessment.confidence, assessment.candidate) == (tier, candidate)


def test_content_proven_is_kept_and_headless_evidence_ignored_for_content() -> None:
    assessment = DEFAULT_POLICY.assess(Domain.CONTENT_GENERATION, [plays(3, 0, 4.0, 3)], H, P)
    assert assessment.confidence is P and assessment.evidence_tier is E
    assert DEFAULT_POLICY.assess(Domain.CONTENT_GENERATION, [headless(10, 0)], H).counted == 0


def test_decay_keeps_proven_only_with_new_engine_evidence() -> None:
    old = headless(30, 0, engine="1.0.0")
    weak_new = headless(7, 3, engine="2.0.0")  # 70%: not above
    strong_new = headless(8, 2, engine="2.0.0")
    assert DEFAULT_POLICY.decayed([old, weak_new], Domain.AI_STRATEGY, H, "2.0.0").confidence is T
    kept = DEFAULT_POLICY.decayed([old, strong_new], Domain.AI_STRATEGY, H, "2.0.0")
    assert kept.confidence is P and kept.quality.verification_count == 10


def test_policy_is_configurable() -> None:
    strict = VerificationPolicy(
        proven_games=20, reference_opponent="IC Default Brutal", aliases=(), headless_max_tier=P
    )
    assert strict.assess(Domain.AI_STRATEGY, [headless(19, 0, opponent="IC Default Brutal")], H).confidence is E
    assert strict.assess(Domain.AI_STRATEGY, [headless(19, 0)], H).counted == 0


def test_audit_actions() -> None:
    assert audit_action(T, E) == "skill.promote"
    assert audit_action(P, T) == "skill.demote"
    assert audit_action(E, E) == "skill.verify"


def test_d057_default_path_headless_candidate_then_gameplay() -> None:
    strong_headless = headless(71, 29)
    alone = DEFAULT_POLICY.assess(Domain.AI_STRATEGY, [strong_headless], H)
    assert (alone.confidence, alone.evidence_tier, alone.candidate) == (T, T, True)
    assert "headless_max_tier" in alone.reason and "needs gameplay evidence" in alone.reason
    # human play promotes further: real matches, whoever the opponent
    both = DEFAULT_POLICY.assess(Domain.AI_STRATEGY, [strong_headless, gameplay(2, 1, opponent="anyone")], H)
    assert both.confidence is E
    assert DEFAULT_POLICY.assess(Domain.AI_STRATEGY, [strong_headless, gameplay(8, 2)], H).confidence is P
    # gameplay with another body, or for a content skill, credits nothing
    assert DEFAULT_POLICY.assess(Domain.AI_STRATEGY, [gameplay(8, 2, body="b" * 64)], H).counted == 0
    assert DEFAULT_POLICY.assess(Domain.CONTENT_GENERATION, [gameplay(8, 2)], H).counted == 0


def test_headless_max_tier_is_the_switch() -> None:
    evidence = [headless(71, 29)]
    assert VerificationPolicy(headless_max_tier=E).assess(Domain.AI_STRATEGY, evidence, H).confidence is E
    assert VerificationPolicy(headless_max_tier=P).assess(Domain.AI_STRATEGY, evidence, H).confidence is P


def test_kinds_are_kept_apart_and_pooled_only_in_the_quality_columns() -> None:
    assessment = DEFAULT_POLICY.assess(Domain.AI_STRATEGY, [headless(6, 4), gameplay(3, 0), headless(1, 1)], H)
    assert (assessment.headless.wins, assessment.headless.decided, assessment.headless.sessions) == (7, 12, 2)
    assert (assessment.gameplay.wins, assessment.gameplay.decided, assessment.gameplay.sessions) == (3, 3, 1)
    assert assessment.gameplay.tier is E and assessment.confidence is E
    assert assessment.quality.verification_count == 15
    assert assessment.quality.success_rate == pytest.approx(10 / 15)


def test_a_tier_the_evidence_contradicts_is_flagged_with_what_settles_it() -> None:
    # the sample's "IC Default balanced opening": proven at 37% over 300 games
    weak = DEFAULT_POLICY.assess(Domain.AI_STRATEGY, [headless(111, 189)], H, P)
    flag = weak.contradiction
    assert flag is not None and (flag.tier, flag.supported, flag.conclusive) == (P, T, True)
    assert flag.reason.startswith("proven needs 10+ decided games above 70%; the credited evidence supports tentative")
    assert "headless 111/300 (37%" in flag.reason
    assert flag.settle == ("demote", "revalidate") and "demote to tentative" in flag.advice
    # a few bad games: contradicted, but more games may settle it
    thin = DEFAULT_POLICY.assess(Domain.AI_STRATEGY, [headless(1, 2)], H, E).contradiction
    assert thin is not None and not thin.conclusive and thin.settle == ("revalidate", "demote")
    # too few games at a good rate is thin evidence, not a contradiction; no evidence neither
    assert DEFAULT_POLICY.assess(Domain.AI_STRATEGY, [headless(3, 0)], H, P).contradiction is None
    assert DEFAULT_POLICY.assess(Domain.AI_STRATEGY, [], H, P).contradiction is None
    assert DEFAULT_POLICY.assess(Domain.AI_STRATEGY, [headless(3, 0, opponent="Easy")], H, P).contradiction is None
    # the headless cap limits promotion; it is no evidence against a tier already given
    assert DEFAULT_POLICY.assess(Domain.AI_STRATEGY, [headless(9, 1)], H, P).contradiction is None
    # real matches that fall short contradict a tier too; a kind of evidence above the bar still holds it up
    assert DEFAULT_POLICY.assess(Domain.AI_STRATEGY, [gameplay(1, 9)], H, E).contradiction is not None
    assert DEFAULT_POLICY.assess(Domain.AI_STRATEGY, [headless(9, 1), gameplay(1, 9)], H, P).contradiction is None
    # content: rated plays below the Established bar; a Proven content skill has no rule to break
    content = DEFAULT_POLICY.assess(Domain.CONTENT_GENERATION, [plays(3, 2, 2.0, 5)], H, E).contradiction
    assert content is not None and content.supported is T and "rated plays averaging >= 3.5" in content.reason
    assert DEFAULT_POLICY.assess(Domain.CONTENT_GENERATION, [plays(3, 2, 2.0, 5)], H, P).contradiction is None


def test_decay_is_not_capped_by_headless_max_tier() -> None:
    kept = DEFAULT_POLICY.decayed([headless(8, 2, engine="2.0.0")], Domain.AI_STRATEGY, H, "2.0.0")
    assert kept.confidence is P


def test_the_policy_is_built_from_the_settings() -> None:
    from skillstudio.store.settings import DEFAULTS, resolve, to_values

    assert VerificationPolicy.from_settings(DEFAULTS) == DEFAULT_POLICY
    assert DEFAULT_POLICY.values() == {k: v for k, v in to_values(DEFAULTS).items() if not k.startswith("prune.")}
    custom = VerificationPolicy.from_settings(
        resolve({"thresholds.proven": 0.8, "headless_max_tier": "proven", "reference_opponent": "IC Default Brutal"})
    )
    assert (custom.proven_rate, custom.headless_max_tier, custom.reference_opponent) == (0.8, P, "IC Default Brutal")
    assert VerificationPolicy.from_values(custom.values()) == custom
    assert custom.assess(Domain.AI_STRATEGY, [headless(8, 2, opponent="IC Default Brutal")], H).confidence is E
