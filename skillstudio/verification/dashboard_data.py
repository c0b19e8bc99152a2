"""What the verification dashboard plots, computed from the library (Qt-free, no widgets).

The GUI never runs SQL: it asks these functions, on a worker thread, for plain dataclasses
and plots them. Every series can also be written as CSV (:func:`write_csv`).

* :func:`tier_distribution`: skills per tier, by domain and game module, for a browser query;
* :func:`success_rate_histogram`: how the verified skills of a query spread over success rates;
* :func:`success_history`: a skill's cumulative success rate, one point per evidence session
  that counts (as the policy credits it), with its Wilson 95% interval;
* :func:`win_rate_by_opponent`: headless evidence of some skills, summed per opponent;
* :func:`content_history`: a content skill's completion rate and average rating over its plays;
* :func:`snapshot`: all of the above at once, for one refresh of the dashboard.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sqlalchemy import ScalarSelect, func, select

from skillstudio.model.enums import Confidence, Domain
from skillstudio.model.evidence import EvidenceKind
from skillstudio.store import SkillNotFound, SkillQuery, SkillRepository, body_hash
from skillstudio.store.orm import SkillRow
from skillstudio.store.query import SortKey, build_select
from skillstudio.store.runs import RunStore
from skillstudio.verification.policy import DEFAULT_POLICY, VerificationPolicy
from skillstudio.verification.stats import wilson

TIERS = tuple(c.value for c in Confidence)  # tentative, established, proven
HISTOGRAM_BINS = 10


@dataclass(frozen=True)
class TierGroup:
    domain: str
    game_module: str
    counts: dict[str, int]  # tier -> skills

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True)
class Histogram:
    edges: tuple[float, ...]  # HISTOGRAM_BINS + 1 edges from 0.0 to 1.0
    counts: tuple[int, ...]
    verified: int  # skills with at least one decided game
    unverified: int  # skills of the query without evidence (not in the bars)


@dataclass(frozen=True)
class HistoryPoint:
    session: int  # 1, 2, ...: the n-th credited session
    recorded_at: str
    note: str
    wins: int  # cumulative
    decided: int  # cumulative
    rate: float
    low: float
    high: float


@dataclass(frozen=True)
class OpponentRate:
    opponent: str
    wins: int
    losses: int
    draws: int
    errors: int
    rate: float
    low: float
    high: float

    @property
    def decided(self) -> int:
        return self.wins + self.losses + self.draws


@dataclass(frozen=True)
class PlayPoint:
    plays: int  # cumulative plays (decided)
    recorded_at: str
    completed: int  # cumulative completed plays
    completion_rate: float
    average_rating: float | None  # cumulative mean rating over the rated plays so far
    rated: int


@dataclass(frozen=True)
class SkillSeries:
    skill_id: str
    name: str
    domain: str
    history: tuple[HistoryPoint, ...] = ()
    plays: tuple[PlayPoint, ...] = ()


@dataclass(frozen=True)
class Snapshot:
    tiers: tuple[TierGroup, ...]
    histogram: Histogram
    skills: tuple[SkillSeries, ...]  # the selected skills (at most ``max_skills``)
    opponents: tuple[OpponentRate, ...]
    thresholds: dict[str, float] = field(default_factory=dict)


def _ids_of(query: SkillQuery) -> ScalarSelect[str]:
    """The query's matching ids as a subquery (its filters and search; order and paging dropped)."""
    plain = replace(query, sort=SortKey.NAME, descending=False, offset=0, limit=None)
    return build_select(plain).order_by(None).scalar_subquery()


def tier_distribution(
    repository: SkillRepository,
    query: SkillQuery = SkillQuery(),
) -> list[TierGroup]:
    """Skills matching ``query`` per (domain, game module), counted per tier; a NULL tier is
    D057's default, tentative."""
    tier = func.coalesce(SkillRow.confidence, Confidence.TENTATIVE.value)
    statement = (
        select(SkillRow.domain, SkillRow.game_module, tier, func.count())
        .where(SkillRow.id.in_(_ids_of(query)))
        .group_by(SkillRow.domain, SkillRow.game_module, tier)
    )
    with repository.database.read() as session:
        rows = session.execute(statement).all()
    groups: dict[tuple[str, str], dict[str, int]] = {}
    for domain, module, confidence, count in rows:
        counts = groups.setdefault((str(domain), str(module or "")), dict.fromkeys(TIERS, 0))
        counts[confidence if confidence in counts else Confidence.TENTATIVE.value] += int(count)
    return [TierGroup(domain, module, counts) for (domain, module), counts in sorted(groups.items())]


def success_rate_histogram(
    repository: SkillRepository,
    query: SkillQuery = SkillQuery(),
    bins: int = HISTOGRAM_BINS,
) -> Histogram:
    """Success rates of the skills matching ``query`` that have decided games, in ``bins``
    equal bins over [0, 1] (the last bin includes 100%)."""
    statement = select(SkillRow.success_rate, SkillRow.verification_count).where(SkillRow.id.in_(_ids_of(query)))
    with repository.database.read() as session:
        rows = session.execute(statement).all()
    counts = [0] * bins
    verified = 0
    for rate, games in rows:
        if not games or rate is None:
            continue
        verified += 1
        index = min(bins - 1, max(0, int(float(rate) * bins)))
        counts[index] += 1
    edges = tuple(round(i / bins, 6) for i in range(bins + 1))
    return Histogram(edges, tuple(counts), verified, len(rows) - verified)


def success_history(
    repository: SkillRepository, skill_id: str, policy: VerificationPolicy = DEFAULT_POLICY
) -> list[HistoryPoint]:
    """The skill's success rate after each evidence session that counts for its tier (the policy
    decides: current body, reference opponent, headless for AI and plays for content), oldest
    first, with the Wilson 95% interval of the cumulative rate."""
    skill = repository.get(skill_id)
    current = body_hash(skill)
    revalidated = RunStore(repository.database).revalidated_engine(skill_id)
    wins = decided = 0
    points: list[HistoryPoint] = []
    for record in repository.evidence.verifications(skill_id):
        if not policy.credits(record, skill.domain, current, revalidated) or not record.decided:
            continue
        wins += record.wins
        decided += record.decided
        interval = wilson(wins, decided)
        points.append(
            HistoryPoint(
                len(points) + 1,
                record.recorded_at,
                record.note,
                wins,
                decided,
                wins / decided,
                interval.low,
                interval.high,
            )
        )
    return points


def win_rate_by_opponent(repository: SkillRepository, skill_ids: Iterable[str]) -> list[OpponentRate]:
    """All headless evidence of these skills (whatever body or engine it was played with),
    summed per opponent, most played first."""
    tally: dict[str, list[int]] = {}
    for skill_id in skill_ids:
        for record in repository.evidence.verifications(skill_id):
            if record.kind is not EvidenceKind.HEADLESS:
                continue
            counts = tally.setdefault(record.opponent or "(unknown)", [0, 0, 0, 0])
            for index, value in enumerate((record.wins, record.losses, record.draws, record.errors)):
                counts[index] += value
    out = []
    for opponent, (wins, losses, draws, errors) in tally.items():
        decided = wins + losses + draws
        interval = wilson(wins, decided)
        out.append(
            OpponentRate(
                opponent, wins, losses, draws, errors, wins / decided if decided else 0.0, interval.low, interval.high
            )
        )
    return sorted(out, key=lambda o: (-o.decided, o.opponent))


def content_history(repository: SkillRepository, skill_id: str) -> list[PlayPoint]:
    """A content skill's plays, session by session: cumulative completion rate (completed /
    plays) and cumulative average rating (over the plays that gave one)."""
    plays = completed = rated = 0
    rating_sum = 0.0
    points: list[PlayPoint] = []
    for record in repository.evidence.verifications(skill_id):
        if record.kind is not EvidenceKind.PLAY or not record.decided:
            continue
        plays += record.decided
        completed += record.wins
        if record.rated and record.rating is not None:
            rated += record.rated
            rating_sum += record.rating * record.rated
        points.append(
            PlayPoint(
                plays, record.recorded_at, completed, completed / plays, rating_sum / rated if rated else None, rated
            )
        )
    return points


def thresholds(policy: VerificationPolicy = DEFAULT_POLICY) -> dict[str, float]:
    """The promotion bars of AI skills, as rates: candidate, established, proven."""
    return {"candidate": policy.candidate_rate, "established": policy.established_rate, "proven": policy.proven_rate}


def snapshot(
    repository: SkillRepository,
    query: SkillQuery,
    selected: Sequence[str],
    *,
    policy: VerificationPolicy = DEFAULT_POLICY,
    max_skills: int = 6,
) -> Snapshot:
    """Everything the dashboard shows for a browser filter and selection, in one call."""
    series = []
    shown = list(selected)[:max_skills]
    for skill_id in shown:
        try:
            skill = repository.get(skill_id)
        except SkillNotFound:
            continue
        if skill.domain is Domain.CONTENT_GENERATION:
            series.append(
                SkillSeries(
                    skill.id,
                    skill.name,
                    skill.domain.value,
                    tuple(success_history(repository, skill.id, policy)),
                    tuple(content_history(repository, skill.id)),
                )
            )
        else:
            series.append(
                SkillSeries(
                    skill.id, skill.name, skill.domain.value, tuple(success_history(repository, skill.id, policy))
                )
            )
    return Snapshot(
        tuple(tier_distribution(repository, query)),
        success_rate_histogram(repository, query),
        tuple(series),
        tuple(win_rate_by_opponent(repository, shown)),
        thresholds(policy),
    )


def write_csv(path: str | Path, headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> Path:
    """Write a plot's data as CSV (UTF-8, a header row, numbers as Python prints them)."""
    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(list(headers))
        for row in rows:
            writer.writerow(["" if value is None else value for value in row])
    return path


__all__ = [
    "HISTOGRAM_BINS",
    "TIERS",
    "Histogram",
    "HistoryPoint",
    "OpponentRate",
    "PlayPoint",
    "SkillSeries",
    "Snapshot",
    "TierGroup",
    "content_history",
    "snapshot",
    "success_history",
    "success_rate_histogram",
    "thresholds",
    "tier_distribution",
    "win_rate_by_opponent",
    "write_csv",
]
