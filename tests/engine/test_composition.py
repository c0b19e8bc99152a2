"""Compositions (D057's skill_compositions): one plan until a game time or phase, then the next."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from skillstudio.engine import sim
from skillstudio.engine.batch import BatchResult, NotAStrategySkill, run_batch
from skillstudio.model import (
    BuildFocus,
    EconomyState,
    GamePhase,
    SituationSignature,
    Skill,
    StrategicPattern,
    VerifiedExample,
)
from tests.engine.plans import SENSIBLE, pattern, skill
from tests.engine.test_determinism import FIELDS, assert_identical

SEED = 20250101
ARMOUR = (("heavy_tank", 50), ("medium_tank", 30), ("rifle_infantry", 20))
EARLY_ARMOUR = SituationSignature(GamePhase.EARLY, EconomyState.EVEN, enemy_composition_estimate=ARMOUR)
ANTI_AIR = skill(replace(pattern(BuildFocus.ANTI_AIR), situation=EARLY_ARMOUR), skill_id="plan-a")
ANTI_ARMOR = skill(replace(pattern(BuildFocus.ANTI_ARMOR), situation=EARLY_ARMOUR), skill_id="plan-b")


def test_a_switch_at_the_start_is_the_next_plan_played_with_the_first_plans_seeds() -> None:
    """Everything a plan drives (parameters, mixes, plan-driven draws, the opponent's counters)
    is replaced at a switch: from 0 s the result is the second plan's, bit for bit."""
    first = skill(pattern(BuildFocus.ANTI_AIR), skill_id="plan-a")
    second = pattern(BuildFocus.ANTI_ARMOR, expand=False, harvesters=7)
    for opponent in ("IC Default Hard", "Classic RA Normal"):
        composed = run_batch(first, opponent, 200, 5, then=[(0.0, second)])
        assert_identical(composed, run_batch(second, opponent, 200, 5, skill_id="plan-a"))
        assert composed.switches == ((0.0, "plan 2"),)


def test_games_before_the_switch_are_the_first_plans_games() -> None:
    alone = run_batch(SENSIBLE, "IC Default Hard", 300, SEED)
    composed = run_batch(SENSIBLE, "IC Default Hard", 300, SEED, then=[(600.0, pattern(BuildFocus.ANTI_AIR))])
    ended = alone.duration_s <= 600.0
    assert 0 < ended.sum() < 300
    for name in FIELDS:
        assert np.array_equal(getattr(composed, name)[ended], getattr(alone, name)[ended]), name
    early = alone.timeline_t <= 600.0
    assert np.array_equal(composed.timeline[:, early], alone.timeline[:, early])
    assert not np.array_equal(composed.outcome, alone.outcome)


def test_switching_to_the_right_counter_early_wins_switching_late_does_not() -> None:
    def rate(plan: Skill, *then: tuple[float, Skill | StrategicPattern]) -> float:
        return run_batch(plan, "IC Default Normal", 300, SEED, then=list(then)).win_rate

    wrong, right = rate(ANTI_AIR), rate(ANTI_ARMOR)
    assert right >= wrong + 0.8, (right, wrong)
    soon, late = rate(ANTI_AIR, (120.0, ANTI_ARMOR)), rate(ANTI_AIR, (900.0, ANTI_ARMOR))
    assert soon >= wrong + 0.6 and soon >= late + 0.5, (soon, late, wrong)
    assert rate(ANTI_ARMOR, (120.0, ANTI_AIR)) <= right - 0.6


def test_phases_name_their_start_and_late_switches_are_not_played() -> None:
    by_phase = run_batch(SENSIBLE, "IC Default Hard", 100, 3, then=[(GamePhase.MID, pattern(BuildFocus.TECH))])
    by_time = run_batch(SENSIBLE, "IC Default Hard", 100, 3, then=[(480.0, pattern(BuildFocus.TECH))])
    assert_identical(by_phase, by_time)
    after = run_batch(SENSIBLE, "IC Default Hard", 100, 3, then=[(1800.0, pattern(BuildFocus.TECH))])
    assert_identical(after, run_batch(SENSIBLE, "IC Default Hard", 100, 3))
    assert after.switches == () and "composition: plan 2 at 1800 s is after the time limit; not played" in after.notes


def test_the_baseline_plays_the_default_plan_throughout() -> None:
    base = run_batch(ANTI_AIR, "IC Default Normal", 100, 3, baseline=True)
    assert_identical(base, run_batch(ANTI_AIR, "IC Default Normal", 100, 3, baseline=True, then=[(60.0, ANTI_ARMOR)]))


def test_composed_games_do_not_depend_on_chunks_or_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    then = [(300.0, ANTI_ARMOR), (GamePhase.LATE, pattern(BuildFocus.TECH))]
    whole = run_batch(ANTI_AIR, "IC Default Hard", 90, 5, then=then)
    parts = [run_batch(ANTI_AIR, "IC Default Hard", n, 5, first_game=s, then=then) for s, n in ((0, 13), (13, 77))]
    assert_identical(whole, BatchResult.concatenate(parts))
    monkeypatch.setattr(sim, "BLOCK", 16)
    assert_identical(whole, run_batch(ANTI_AIR, "IC Default Hard", 90, 5, then=then))


@pytest.mark.parametrize(
    ("then", "message"),
    [
        ([(600.0, SENSIBLE), (300.0, SENSIBLE)], "then[1]: 300.0 is not a game time after the previous switch"),
        ([(float("nan"), SENSIBLE)], "then[0]: nan is not a game time after the previous switch"),
        ([(True, SENSIBLE)], "then[0]: True is not a game time after the previous switch"),
        ([(600.0,)], "then[0]: expected a (time, plan) pair"),
        ([(float(t), SENSIBLE) for t in range(9)], "then: expected at most 8 (time, plan) pairs"),
    ],
)
def test_a_schedule_that_cannot_be_played_is_refused(then: list[tuple[object, ...]], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        run_batch(SENSIBLE, "IC Default Hard", 10, 1, then=then)
    assert str(caught.value) == message


def test_only_strategy_plans_can_be_composed() -> None:
    example = replace(skill(), body=VerifiedExample("prompt", "response"))
    with pytest.raises(NotAStrategySkill):
        run_batch(SENSIBLE, "IC Default Hard", 10, 1, then=[(600.0, example)])
