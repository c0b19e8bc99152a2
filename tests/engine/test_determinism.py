"""Same inputs, same seed: bit-identical results, however a batch is split into chunks."""

from __future__ import annotations

import numpy as np
import pytest

from skillstudio.engine import rng, sim
from skillstudio.engine.batch import BatchResult, run_batch
from tests.engine.plans import SENSIBLE, skill

FIELDS = ("game", "seed", "outcome", "duration_s", "resource_delta", "army_value_delta", "map_control", "timeline")


def assert_identical(a: BatchResult, b: BatchResult) -> None:
    for name in FIELDS:
        left, right = getattr(a, name), getattr(b, name)
        assert left.dtype == right.dtype and left.shape == right.shape, name
        assert left.tobytes() == right.tobytes(), name  # bit for bit, NaN-safe


def test_seeds_derive_from_batch_seed_skill_and_index() -> None:
    seeds = rng.derive_seeds(1234, "skill-a", 0, 100)
    assert len(set(seeds.tolist())) == 100 and int(seeds.max()) < 2**53
    assert np.array_equal(rng.derive_seeds(1234, "skill-a", 40, 10), seeds[40:50])
    assert not np.array_equal(rng.derive_seeds(1234, "skill-b", 0, 100), seeds)
    assert not np.array_equal(rng.derive_seeds(1235, "skill-a", 0, 100), seeds)
    # pinned: a change here changes every stored verification result, so it must be deliberate
    assert rng.derive_seeds(1, "x", 0, 3).tolist() == PINNED_SEEDS


PINNED_SEEDS = [3530061266249093, 5492869135298879, 8854217494676741]


def test_uniform_depends_only_on_seed_stream_and_counter() -> None:
    seeds = rng.derive_seeds(9, "s", 0, 50)
    draws = rng.uniform(seeds, 3, 7)
    assert np.array_equal(rng.uniform(seeds[10:20], 3, 7), draws[10:20])
    assert draws.min() >= 0.0 and draws.max() < 1.0
    periods = np.arange(4, dtype=np.uint64)[:, None]
    assert np.array_equal(rng.uniform(seeds, 3, periods)[2], rng.uniform(seeds, 3, 2))


def test_same_inputs_same_results() -> None:
    a = run_batch(skill(), "IC Default Hard", 200, 42)
    b = run_batch(skill(), "IC Default Hard", 200, 42)
    assert_identical(a, b)
    c = run_batch(skill(), "IC Default Hard", 200, 43)
    assert not np.array_equal(a.duration_s, c.duration_s)


def test_chunk_split_invariance_1x100_4x25_100x1() -> None:
    whole = run_batch(skill(), "IC Default Hard", 100, 2024)
    quarters = BatchResult.concatenate(
        [run_batch(skill(), "IC Default Hard", 25, 2024, first_game=i) for i in range(0, 100, 25)]
    )
    singles = BatchResult.concatenate(
        [run_batch(skill(), "IC Default Hard", 1, 2024, first_game=i) for i in range(100)]
    )
    assert_identical(whole, quarters)
    assert_identical(whole, singles)
    assert 0 < whole.wins < 100  # the games differ from each other


def test_uneven_splits_and_internal_block_size(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = run_batch(SENSIBLE, "Classic RA Hard", 90, 5)
    uneven = BatchResult.concatenate(
        [run_batch(SENSIBLE, "Classic RA Hard", n, 5, first_game=start) for start, n in ((0, 7), (7, 50), (57, 33))]
    )
    assert_identical(whole, uneven)
    monkeypatch.setattr(sim, "BLOCK", 16)  # many small blocks inside one call
    assert_identical(whole, run_batch(SENSIBLE, "Classic RA Hard", 90, 5))


def test_skill_id_is_part_of_the_seed() -> None:
    a = run_batch(skill(skill_id="one"), "IC Default Normal", 100, 1)
    b = run_batch(skill(skill_id="two"), "IC Default Normal", 100, 1)
    assert not np.array_equal(a.seed, b.seed)
    assert_identical(a, run_batch(SENSIBLE, "IC Default Normal", 100, 1, skill_id="one"))
