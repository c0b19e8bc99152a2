"""Newcombe's paired 95% interval (method 10), against published values and its exact coverage."""

from __future__ import annotations

import math

import pytest

from skillstudio.verification.stats import Z95, PairedCounts, newcombe_paired


def test_pinned_published_value_cavo() -> None:
    """Fagerland, Lydersen & Laake (2014, Stat Med 33:2850; and their book "Statistical Analysis
    of Contingency Tables", ch. 8): complete response before and after consolidation therapy
    (Cavo et al., 2012), a=59, b=6, c=16, d=80: Newcombe's square-and-add interval for the
    difference is -0.0621 (95% CI -0.1186 to -0.0046); the same figures are pinned by the
    `contingencytables` R package's tests."""
    table = PairedCounts(59, 6, 16, 80)
    interval = newcombe_paired(table)
    assert round(table.difference, 4) == -0.0621
    assert (round(interval.low, 4), round(interval.high, 4)) == (-0.1186, -0.0046)


def test_swapping_the_arms_mirrors_the_interval() -> None:
    for a, b, c, d in [(1, 1, 7, 12), (14, 5, 0, 22), (10, 15, 5, 20), (0, 3, 0, 0)]:
        forward = newcombe_paired(PairedCounts(a, b, c, d))
        back = newcombe_paired(PairedCounts(a, c, b, d))
        assert back.low == pytest.approx(-forward.high) and back.high == pytest.approx(-forward.low)


def test_edges_stay_inside_minus_one_one_and_contain_the_estimate() -> None:
    for n in (1, 2, 5, 12):
        for a in range(n + 1):
            for b in range(n + 1 - a):
                for c in range(n + 1 - a - b):
                    table = PairedCounts(a, b, c, n - a - b - c)
                    interval = newcombe_paired(table)
                    assert -1.0 <= interval.low <= table.difference <= interval.high <= 1.0, table
                    assert interval.high - interval.low > 0, table  # never a zero-width claim


def test_no_discordant_pairs_is_an_interval_around_zero_not_a_point() -> None:
    interval = newcombe_paired(PairedCounts(20, 0, 0, 20))
    assert interval.low < 0 < interval.high
    empty = newcombe_paired(PairedCounts(0, 0, 0, 0))
    assert (empty.low, empty.high) == (-1.0, 1.0)  # no pairs: nothing is known
    with pytest.raises(ValueError):
        newcombe_paired(PairedCounts(1, -1, 0, 0))


def test_clearly_worse_is_wholly_below_zero() -> None:
    assert newcombe_paired(PairedCounts(0, 0, 37, 3)).high < 0  # the sample's AA plan: 0% vs 92%
    assert newcombe_paired(PairedCounts(5, 3, 4, 8)).low < 0 < newcombe_paired(PairedCounts(5, 3, 4, 8)).high


# --- exact coverage, computed by enumerating every table (an independent check of the formula) ---


def _tables(n: int):
    for a in range(n + 1):
        for b in range(n + 1 - a):
            for c in range(n + 1 - a - b):
                yield a, b, c, n - a - b - c


def _coverage(n: int, probs: tuple[float, float, float, float], interval) -> float:
    theta = probs[1] - probs[2]
    covered = 0.0
    for table in _tables(n):
        log_p = math.lgamma(n + 1)
        for count, p in zip(table, probs, strict=True):
            log_p -= math.lgamma(count + 1)
            if count:
                log_p += count * math.log(p)
        low, high = interval(table)
        if low - 1e-12 <= theta <= high + 1e-12:
            covered += math.exp(log_p)
    return covered


def _newcombe(table):
    found = newcombe_paired(PairedCounts(*table))
    return found.low, found.high


def _wald(table):
    a, b, c, d = table
    n = a + b + c + d
    half = Z95 * math.sqrt(max(0.0, (b + c) - (b - c) ** 2 / n)) / n
    return (b - c) / n - half, (b - c) / n + half


def _grid() -> list[tuple[float, float, float, float]]:
    points = []
    for p1 in (0.2, 0.5, 0.8):
        for p2 in (0.2, 0.5, 0.8):
            for rho in (0.0, 0.4):
                both = p1 * p2 + rho * math.sqrt(p1 * (1 - p1) * p2 * (1 - p2))
                cells = (both, p1 - both, p2 - both, 1 - p1 - p2 + both)
                if min(cells) > 0:
                    points.append(cells)
    return points


def test_exact_coverage_is_near_95_percent_where_the_wald_interval_falls_short() -> None:
    """Coverage of the true difference, exactly (all tables of 20 pairs, multinomial weights), over
    a grid of marginal rates and correlations. Newcombe reports method 10's coverage close to the
    nominal 95%; the simple Wald interval (his method 1) is the negative control that shows this
    check can fail."""
    grid = _grid()
    newcombe = [_coverage(20, probs, _newcombe) for probs in grid]
    wald = [_coverage(20, probs, _wald) for probs in grid]
    assert 0.945 <= sum(newcombe) / len(newcombe) <= 0.975
    assert min(newcombe) >= 0.93
    assert sum(wald) / len(wald) < 0.94  # the check tells a poor interval apart
