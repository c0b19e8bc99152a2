"""Per-game results: every field present, in range, and the plan's unknown parameters reported."""

from __future__ import annotations

import numpy as np
import pytest

from skillstudio.engine.batch import BatchResult, NotAStrategySkill, engine_version, run_batch
from skillstudio.engine.module import load_module
from skillstudio.engine.opponents import UnknownOpponentError
from skillstudio.model import Domain, VerifiedExample
from tests.engine.plans import pattern, skill


@pytest.fixture(scope="module")
def batch() -> BatchResult:
    return run_batch(skill(pattern(bindings=(("aggression", 70), ("teleport_rate", 5)))), "IC Default Hard", 300, 11)


def test_fields_and_ranges(batch: BatchResult) -> None:
    module = load_module("ra1")
    n = len(batch)
    assert n == 300 and batch.game.tolist() == list(range(300))
    assert set(np.unique(batch.outcome)) <= {-1, 0, 1}
    assert batch.wins + batch.losses + batch.draws == n
    step, limit = module.match.step_s, module.match.time_limit_s
    assert np.all((batch.duration_s > 0) & (batch.duration_s <= limit))
    assert np.all(np.mod(batch.duration_s, step) == 0)
    assert np.all((batch.map_control >= 0) & (batch.map_control <= 1))
    assert np.all(np.isfinite(batch.resource_delta)) and np.all(np.isfinite(batch.army_value_delta))
    assert batch.timeline.shape == (n, 12, 2) and np.all(batch.timeline >= 0)
    assert batch.timeline_t.tolist() == [150.0 * (k + 1) for k in range(12)]
    assert batch.engine_version == engine_version(module)
    # decisive games end before the time limit; a base falls
    assert np.all(batch.duration_s[batch.outcome == 0] == limit) or batch.draws == 0
    assert (batch.duration_s < limit).mean() > 0.5


def test_wins_and_losses_agree_with_the_numbers(batch: BatchResult) -> None:
    wins, losses = batch.outcome == 1, batch.outcome == -1
    assert batch.army_value_delta[wins].mean() > 0 > batch.army_value_delta[losses].mean()
    assert batch.map_control[wins].mean() > 0.5 > batch.map_control[losses].mean()


def test_unknown_parameters_are_reported_on_every_game(batch: BatchResult) -> None:
    assert batch.ignored_parameters == ("teleport_rate",)
    first = next(iter(batch))
    assert first.ignored_parameters == ("teleport_rate",)
    assert first.outcome in ("win", "loss", "draw") and first.timeline is not None
    assert len(first.timeline.t_s) == len(first.timeline.skill) == len(first.timeline.opponent) == 12


def test_early_games_hold_their_final_value() -> None:
    result = run_batch(pattern(expand=False, harvesters=0), "IC Default Brutal", 50, 1)
    for i in range(len(result)):
        end = result.duration_s[i]
        after = result.timeline_t > end
        if after.any():
            held = result.timeline[i, after]
            assert np.all(held == held[0])


def test_zero_games() -> None:
    empty = run_batch(pattern(), "IC Default Hard", 0, 1)
    assert len(empty) == 0 and empty.win_rate == 0.0


def test_only_strategic_patterns_are_played() -> None:
    from dataclasses import replace

    example = replace(skill(), body=VerifiedExample("prompt", "response"), domain=Domain.AI_STRATEGY)
    with pytest.raises(NotAStrategySkill):
        run_batch(example, "IC Default Hard", 5, 1)


def test_unknown_opponent() -> None:
    with pytest.raises(UnknownOpponentError):
        run_batch(pattern(), "Skynet Hard", 5, 1)


def test_td_module_plays() -> None:
    result = run_batch(skill(module="td"), "IC Default Normal", 100, 3, "td")
    assert result.module == "td" and 0 < result.wins < 100
