"""Wilson score interval: an honest range for a success rate measured over few games.

D057 promotes on rates ("3+ games above 60%"); three wins out of three is a 100% rate whose
95% Wilson interval is [0.44, 1.00]. Every rate SkillStudio shows comes with this interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Z95 = 1.959963984540054  # the two-sided 95% quantile of the standard normal


@dataclass(frozen=True, slots=True)
class Interval:
    low: float
    high: float

    def as_list(self, digits: int = 4) -> list[float]:
        return [round(self.low, digits), round(self.high, digits)]

    def __str__(self) -> str:
        return f"[{self.low:.3f}, {self.high:.3f}]"


def wilson(successes: int, trials: int, z: float = Z95) -> Interval:
    """The Wilson score interval of ``successes / trials``; [0, 1] when there are no trials."""
    if trials < 0 or successes < 0 or successes > trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes}/{trials}")
    if trials == 0:
        return Interval(0.0, 1.0)
    p = successes / trials
    z2 = z * z
    denominator = 1.0 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1.0 - p) / trials + z2 / (4 * trials * trials)) / denominator
    return Interval(max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True, slots=True)
class PairedCounts:
    """Outcomes of n paired trials of two arms (here: a skill and the default plan on the same
    seeds), each a success or not: ``both`` succeeded, only the ``first`` arm, only the
    ``second``, ``neither``. Newcombe's a, b, c, d."""

    both: int
    first_only: int
    second_only: int
    neither: int

    @property
    def n(self) -> int:
        return self.both + self.first_only + self.second_only + self.neither

    @property
    def first_rate(self) -> float:
        return (self.both + self.first_only) / self.n if self.n else 0.0

    @property
    def second_rate(self) -> float:
        return (self.both + self.second_only) / self.n if self.n else 0.0

    @property
    def difference(self) -> float:
        """first rate minus second rate: (b - c) / n."""
        return (self.first_only - self.second_only) / self.n if self.n else 0.0


def newcombe_paired(counts: PairedCounts, z: float = Z95) -> Interval:
    """Newcombe's (1998) method 10: the 95% interval of ``first_rate - second_rate`` from paired
    data, by combining the Wilson intervals of the two rates with their estimated correlation.

    With a, b, c, d as in :class:`PairedCounts`, p1 = (a + b)/n, p2 = (a + c)/n, (l1, u1) and
    (l2, u2) their Wilson intervals, and phi the correlation of the two arms, estimated as
    (ad - bc, shrunk by n/2 towards 0 when positive and never past it) / sqrt((a+b)(c+d)(a+c)(b+d))
    (0 when that product is 0):

        lower = (p1 - p2) - sqrt((p1 - l1)^2 - 2 phi (p1 - l1)(u2 - p2) + (u2 - p2)^2)
        upper = (p1 - p2) + sqrt((u1 - p1)^2 - 2 phi (u1 - p1)(p2 - l2) + (p2 - l2)^2)

    [-1, 1] when there are no pairs. R. G. Newcombe, "Improved confidence intervals for the
    difference between binomial proportions based on paired data", Statistics in Medicine 17
    (1998) 2635-2650; docs/verification.md gives the reference values the tests pin.
    """
    a, b, c, d = counts.both, counts.first_only, counts.second_only, counts.neither
    if min(a, b, c, d) < 0:
        raise ValueError(f"paired counts must not be negative, got {a}, {b}, {c}, {d}")
    n = counts.n
    if n == 0:
        return Interval(-1.0, 1.0)
    p1, p2 = counts.first_rate, counts.second_rate
    first, second = wilson(a + b, n, z), wilson(a + c, n, z)
    product = (a + b) * (c + d) * (a + c) * (b + d)
    phi = 0.0
    if product:
        cross = a * d - b * c
        # Newcombe's continuity-corrected estimate: a small positive association counts as none.
        shrunk = cross - n / 2 if cross > n / 2 else (0.0 if cross >= 0 else float(cross))
        phi = shrunk / math.sqrt(product)
    low_arm, high_arm = p1 - first.low, second.high - p2
    below = math.sqrt(max(0.0, low_arm**2 - 2 * phi * low_arm * high_arm + high_arm**2))
    up_arm, down_arm = first.high - p1, p2 - second.low
    above = math.sqrt(max(0.0, up_arm**2 - 2 * phi * up_arm * down_arm + down_arm**2))
    difference = p1 - p2
    return Interval(max(-1.0, difference - below), min(1.0, difference + above))
