"""The step loop's fast paths give the bits of the plain numpy they replace."""

from __future__ import annotations

import numpy as np
import pytest

from skillstudio.engine import sim


@pytest.mark.parametrize("n", range(1, 12))
def test_class_sums_are_the_row_sums_the_engine_always_took(n: int) -> None:
    """The engine summed an army's value over its classes as a slice of each game's contiguous
    row ([2, E, K][..., a:b].sum(axis=2)); class-major ([K, 2, E][a:b]) it must add the same way."""
    rng = np.random.default_rng(n)
    K, E = n + 5, 301
    row_major = rng.random((2, E, K)) * 10.0 ** rng.integers(-3, 9, size=(2, E, K))
    class_major = np.ascontiguousarray(np.moveaxis(row_major, -1, 0))
    expected = row_major[:, :, 2 : 2 + n].sum(axis=2)
    assert sim._sum_classes(class_major[2 : 2 + n]).tobytes() == expected.tobytes()
