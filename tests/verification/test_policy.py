"""D057's promotion and decay rules at their boundaries, and Wilson intervals against known values."""

from __future__ import annotations

import pytest

from skillstudio.model import Confidence, Domain
from skillstudio.model.evidence import EvidenceKind, VerificationRecord
from skillstudio.verification import DEFAULT_POLICY, VerificationPolicy, audit_action, wilson

H = "a" * 64
T, E, P = Confidence.TENTATIVE, Confidence.ESTABLISHED, Confidence.PROVEN


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
def test_headless_boundaries(wins: int, losses: int, tier: Confidence, candidate: bool) -> None:
    assessment = DEFAULT_POLICY.assess(Domain.AI_STRATEGY, [headless(wins, losses)], H)
    assert (assessment.confidence, assessment.candidate) == (tier, candidate)
    assert assessment.quality.verification_count == wins + losses


def test_draws_count_as_decided_games_and_errors_never_as_losses() -> None:
    # 7 wins, 2 losses, 1 draw: 70% is not above 70%; 100 errors change nothing
    assert DEFAULT_POLICY.assess(Domain.AI_STRATEGY, [headless(7, 2, 1)], H).confidence is E
    with_errors = DEFAULT_POLICY.assess(Domain.AI_STRATEGY, [headless(8, 2, 0, 100)], H)
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
    assert DEFAULT_POLICY.assess(Domain.AI_STRATEGY, [headless(10, 0, opponent="ic-default:hard")], H).confidence is P


def test_verification_count_sums_sessions() -> None:
    assessment = DEFAULT_POLICY.assess(Domain.AI_STRATEGY, [headless(2, 1), headless(2, 1), headless(2, 1)], H)
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
    strict = VerificationPolicy(proven_games=20, reference_opponent="IC Default Brutal", aliases=())
    assert strict.assess(Domain.AI_STRATEGY, [headless(19, 0, opponent="IC Default Brutal")], H).confidence is E
    assert strict.assess(Domain.AI_STRATEGY, [headless(19, 0)], H).counted == 0


def test_audit_actions() -> None:
    assert audit_action(T, E) == "skill.promote"
    assert audit_action(P, T) == "skill.demote"
    assert audit_action(E, E) == "skill.verify"
