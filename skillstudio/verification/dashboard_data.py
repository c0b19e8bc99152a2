"""What the verification dashboard plots, computed from the library (Qt-free, no widgets).

The GUI never runs SQL: it asks these functions, on a worker thread, for plain dataclasses
and plots them. Every series can also be written as CSV (:func:`write_csv`).

* :func:`tier_distribution`: skills per tier, by domain and game module, for a browser query;
* :func:`success_rate_histogram`: how the verified skills of a query spread over success rates;
* :func:`success_history`: a skill's cumulative success rate, one point per evidence session
  that counts (as the policy credits it), with its Wilson 95% interval;
* :func:`win_rate_by_opponent`: headless evidence of some skills, summed per opponent;
* :func:`content_history`: a content skill's completion rate and average rating over its plays;
* :func:`snapshot`: all of the above at once, for one refresh of the dashboard, with each
  selected skill's :class:`~skillstudio.verification.standing.Standing` (its credited evidence
  per kind, headless and gameplay apart, and whether it contradicts the tier), the selected
  skills whose tier is contradicted, and the contradicted tiers among the query's skills. Past
  a handful of selected skills, the series are the ones with the most credited games and the
  rest is summed up (:class:`Others`), so a plot's legend stays readable.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sqlalchemy import ScalarSelect, Select, and_, case, func, literal, not_, select

from skillstudio.files import write_atomically
from skillstudio.model.enums import Confidence, Domain
from skillstudio.model.evidence import EvidenceKind
from skillstudio.store import SkillNotFound, SkillQuery, SkillRepository, body_hash
from skillstudio.store.orm import SkillRow, VerificationRow
from skillstudio.store.query import SortKey, build_select
from skillstudio.store.runs import RunStore
from skillstudio.verification.policy import DEFAULT_POLICY, Contradiction, VerificationPolicy, policy_for
from skillstudio.verification.standing import Standing, contradictions, standings
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
    kind: str = EvidenceKind.HEADLESS.value  # this session's evidence: headless | gameplay | play


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
    history: tuple[HistoryPoint, ...] = ()  # every credited session, all kinds pooled (the quality columns)
    plays: tuple[PlayPoint, ...] = ()
    # The same, one kind at a time: headless games and real matches are kept apart.
    headless_history: tuple[HistoryPoint, ...] = ()
    gameplay_history: tuple[HistoryPoint, ...] = ()
    standing: Standing | None = None  # credited evidence per kind, and the contradiction flag


@dataclass(frozen=True)
class Others:
    """The selected skills a snapshot has no series for: their credited evidence, pooled."""

    skills: int = 0
    games: int = 0  # credited decided games (or plays)
    wins: int = 0

    @property
    def rate(self) -> float | None:
        return self.wins / self.games if self.games else None


@dataclass(frozen=True)
class FlaggedTier:
    """A selected skill whose stored tier its credited evidence contradicts."""

    skill_id: str
    name: str
    contradiction: Contradiction


@dataclass(frozen=True)
class Snapshot:
    tiers: tuple[TierGroup, ...]
    histogram: Histogram
    # The selected skills, at most ``max_skills``: in selection order, or when more are
    # selected, those with the most credited games (``ranked``); ``others`` pools the rest's.
    skills: tuple[SkillSeries, ...]
    opponents: tuple[OpponentRate, ...]  # headless evidence of every selected skill, per opponent
    thresholds: dict[str, float] = field(default_factory=dict)
    # The query's skills whose tier the credited evidence contradicts, by id.
    contradicted: dict[str, Contradiction] = field(default_factory=dict)
    gameplay_opponents: tuple[OpponentRate, ...] = ()  # real matches of the selected skills, per opponent
    others: Others = field(default_factory=Others)
    ranked: bool = False
    flagged: tuple[FlaggedTier, ...] = ()  # the selected skills whose tier is contradicted, in selection order

    @classmethod
    def empty(cls) -> Snapshot:
        """Nothing to show (another library opens: its figures are not read yet)."""
        return cls((), Histogram(_edges(HISTOGRAM_BINS), (0,) * HISTOGRAM_BINS, 0, 0), (), ())


def _ids_of(repository: SkillRepository, query: SkillQuery) -> ScalarSelect[str]:
    """The query's matching ids as a subquery (its filters and search; order and paging dropped)."""
    return _matching(repository, query).scalar_subquery()


def _matching(repository: SkillRepository, query: SkillQuery) -> Select[Any]:
    """SELECT skills.id FROM the query's skills (its filters and search; order and paging
    dropped): give it other columns to count over those skills without listing their ids (at
    a million skills, ``IN (their ids)`` is a 60 MB temporary index)."""
    plain = replace(query, sort=SortKey.NAME, descending=False, offset=0, limit=None)
    return build_select(plain, repository.database.backend).order_by(None)


def tier_distribution(
    repository: SkillRepository,
    query: SkillQuery = SkillQuery(),
) -> list[TierGroup]:
    """Skills matching ``query`` per (domain, game module), counted per tier; a NULL tier is
    D057's default, tentative."""
    tier = func.coalesce(SkillRow.confidence, Confidence.TENTATIVE.value)
    statement = (
        _matching(repository, query)
        .with_only_columns(SkillRow.domain, SkillRow.game_module, tier, func.count())
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
    equal bins over [0, 1] (the last bin includes 100%).

    SQLite counts the bins: reading a million rates into Python took 150 MB. A rate's bin is
    ``int(rate * bins)`` clamped to the bins, written as comparisons (``int(x) >= k`` exactly
    when ``x >= k``), which every SQL dialect evaluates alike; -1 counts the undecided."""
    rate = SkillRow.success_rate
    decided = and_(func.coalesce(SkillRow.verification_count, 0) != 0, rate.is_not(None))
    index = case(
        (not_(decided), literal(-1)),
        *((rate * bins >= k, literal(k)) for k in range(bins - 1, 0, -1)),
        else_=literal(0),
    )
    statement = _matching(repository, query).with_only_columns(index, func.count()).group_by(index)
    with repository.database.read() as session:
        found = {int(i): int(n) for i, n in session.execute(statement)}
    counts = tuple(found.get(i, 0) for i in range(bins))
    return Histogram(_edges(bins), counts, sum(counts), found.get(-1, 0))


def _edges(bins: int) -> tuple[float, ...]:
    return tuple(round(i / bins, 6) for i in range(bins + 1))


def success_history(
    repository: SkillRepository,
    skill_id: str,
    policy: VerificationPolicy | None = None,
    *,
    kind: EvidenceKind | None = None,
) -> list[HistoryPoint]:
    """The skill's success rate after each evidence session that counts for its tier (the policy
    decides: current body, reference opponent, headless and gameplay for AI, plays for content),
    oldest first, with the Wilson 95% interval of the cumulative rate. With ``kind``, only that
    kind's sessions (and cumulative figures)."""
    policy = policy or policy_for(repository.database)
    skill = repository.get(skill_id)
    current = body_hash(skill)
    revalidated = RunStore(repository.database).revalidated_engine(skill_id)
    wins = decided = 0
    points: list[HistoryPoint] = []
    for record in repository.evidence.verifications(skill_id):
        if not policy.credits(record, skill.domain, current, revalidated) or not record.decided:
            continue
        if kind is not None and record.kind is not kind:
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
                record.kind.value,
            )
        )
    return points


def win_rate_by_opponent(
    repository: SkillRepository, skill_ids: Iterable[str], *, kind: EvidenceKind = EvidenceKind.HEADLESS
) -> list[OpponentRate]:
    """All evidence of ``kind`` (headless games, or real matches) of these skills, whatever body
    or engine it was played with, summed per opponent, most played first."""
    tally: dict[str, list[int]] = {}
    for records in repository.evidence.verifications_many(list(dict.fromkeys(skill_ids))).values():
        for record in records:
            if record.kind is not kind:
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


def thresholds(policy: VerificationPolicy | None = None) -> dict[str, float]:
    """The promotion bars of AI skills, as rates: candidate, established, proven."""
    policy = policy or DEFAULT_POLICY
    return {"candidate": policy.candidate_rate, "established": policy.established_rate, "proven": policy.proven_rate}


def snapshot(
    repository: SkillRepository,
    query: SkillQuery,
    selected: Sequence[str],
    *,
    policy: VerificationPolicy | None = None,
    max_skills: int = 6,
) -> Snapshot:
    """Everything the dashboard shows for a browser filter and selection, in one call
    (``policy`` default: the library's settings)."""
    policy = policy or policy_for(repository.database)
    summaries = {s.id: s for s in repository.summaries(list(dict.fromkeys(selected)))}
    chosen = list(summaries)  # the selection that still exists, in selection order
    found = standings(repository, chosen, policy)
    ranked = len(chosen) > max_skills
    if ranked:  # the most credited games first; a stable sort keeps the selection order among equals
        chosen.sort(key=lambda skill_id: -_credited(found.get(skill_id))[1])
    shown = chosen[:max_skills]
    series = []
    for skill_id in shown:
        try:
            skill = repository.get(skill_id)
        except SkillNotFound:
            continue
        history = tuple(success_history(repository, skill.id, policy))
        series.append(
            SkillSeries(
                skill.id,
                skill.name,
                skill.domain.value,
                history,
                tuple(content_history(repository, skill.id)) if skill.domain is Domain.CONTENT_GENERATION else (),
                _alone(history, EvidenceKind.HEADLESS),
                _alone(history, EvidenceKind.GAMEPLAY),
                found.get(skill.id),
            )
        )
    flagged = tuple(
        FlaggedTier(skill_id, summaries[skill_id].name, contradiction)
        for skill_id in summaries
        if skill_id in found and (contradiction := found[skill_id].contradiction) is not None
    )
    return Snapshot(
        tuple(tier_distribution(repository, query)),
        success_rate_histogram(repository, query),
        tuple(series),
        tuple(win_rate_by_opponent(repository, chosen)),
        thresholds(policy),
        _contradicted(repository, query, policy),
        tuple(win_rate_by_opponent(repository, chosen, kind=EvidenceKind.GAMEPLAY)),
        _others([found.get(skill_id) for skill_id in chosen[max_skills:]]),
        ranked,
        flagged,
    )


def _credited(standing: Standing | None) -> tuple[int, int]:
    """A skill's credited wins and decided games, every kind of evidence pooled."""
    if standing is None:
        return 0, 0
    kinds = (standing.headless, standing.gameplay, standing.plays)
    return sum(k.wins for k in kinds), sum(k.decided for k in kinds)


def _others(rest: Sequence[Standing | None]) -> Others:
    credited = [_credited(standing) for standing in rest]
    return Others(len(rest), sum(games for _wins, games in credited), sum(wins for wins, _games in credited))


def _alone(history: Sequence[HistoryPoint], kind: EvidenceKind) -> tuple[HistoryPoint, ...]:
    """One kind's sessions of a pooled history, with that kind's own cumulative figures."""
    points: list[HistoryPoint] = []
    wins = decided = 0
    previous_wins = previous_decided = 0
    for point in history:
        session_wins, session_decided = point.wins - previous_wins, point.decided - previous_decided
        previous_wins, previous_decided = point.wins, point.decided
        if point.kind != kind.value:
            continue
        wins += session_wins
        decided += session_decided
        interval = wilson(wins, decided)
        points.append(
            replace(
                point,
                session=len(points) + 1,
                wins=wins,
                decided=decided,
                rate=wins / decided,
                low=interval.low,
                high=interval.high,
            )
        )
    return tuple(points)


def _contradicted(
    repository: SkillRepository, query: SkillQuery, policy: VerificationPolicy
) -> dict[str, Contradiction]:
    """The contradicted tiers among the query's skills that have evidence (only they can be),
    judged ``_JUDGED_AT_ONCE`` skills at a time: judging reads each one's row, evidence and
    body, and a library verified through would otherwise hold them all at once."""
    statement = (
        select(VerificationRow.skill_id).where(VerificationRow.skill_id.in_(_ids_of(repository, query))).distinct()
    )
    found: dict[str, Contradiction] = {}
    with repository.database.read() as session:
        for ids in session.connection().execute(statement).scalars().partitions(_JUDGED_AT_ONCE):
            found.update(contradictions(repository, ids, policy))
    return found


_JUDGED_AT_ONCE = 2000


def write_csv(path: str | Path, headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> Path:
    """Write a plot's data as CSV (UTF-8, a header row, numbers as Python prints them), whole
    or not at all: a failed export leaves the file that was there."""
    path = Path(path)
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(list(headers))
    for row in rows:
        writer.writerow(["" if value is None else value for value in row])
    write_atomically(path, text.getvalue().encode("utf-8"))
    return path


__all__ = [
    "HISTOGRAM_BINS",
    "TIERS",
    "FlaggedTier",
    "Histogram",
    "HistoryPoint",
    "OpponentRate",
    "Others",
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
