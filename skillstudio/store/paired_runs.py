"""What a run adds beyond its skills' own games (migration 11, docs/verification.md):

* ``verify --baseline``: the default plan's games, paired with the skill's by game index, and
  each skill's **lift** over the default plan;
* ``verify --until-decided``: where the sequential test left each skill;
* ``verify --sequence A,B[,C]``: each switch of a composition run, and what it added to D057's
  ``skill_compositions.success_count`` (written with the revisions and audit entries of the
  skills it links, in one transaction, at most once per run).

Readers for the CLI, the dashboard and the detail pane: :meth:`PairedRuns.latest_lifts`,
:meth:`PairedRuns.lift_history`, :meth:`PairedRuns.pairs_of_skill`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sqlalchemy import BigInteger, Float, Text, func, select, update
from sqlalchemy.orm import Mapped, mapped_column

from skillstudio.model import utc_now
from skillstudio.store.backends import upsert_insert
from skillstudio.store.database import Database
from skillstudio.store.events import AuditAction
from skillstudio.store.orm import Base, RunSkillRow, SkillCompositionRow, SkillRow
from skillstudio.store.runs import game_of, insert_games
from skillstudio.store.types import Actor, Counts, GameRow, JsonInput
from skillstudio.store.unit_of_work import StorePart

# --- mappings (the DDL is migration 11's) -----------------------------------------------------------


class BaselineGameRow(Base):
    __tablename__ = "studio_run_baseline_games"

    run_id: Mapped[str] = mapped_column(Text, primary_key=True)
    skill_id: Mapped[str] = mapped_column(Text, primary_key=True)
    game: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    seed: Mapped[int | None] = mapped_column(BigInteger)
    outcome: Mapped[str] = mapped_column(Text)
    duration_s: Mapped[float | None] = mapped_column(Float)
    resource_delta: Mapped[float | None] = mapped_column(Float)
    army_value_delta: Mapped[float | None] = mapped_column(Float)
    map_control: Mapped[float | None] = mapped_column(Float)
    error: Mapped[str | None] = mapped_column(Text)
    engine_version: Mapped[str] = mapped_column(Text, default="")
    recorded_at: Mapped[str] = mapped_column(Text)


class RunLiftRow(Base):
    __tablename__ = "studio_run_lifts"

    run_id: Mapped[str] = mapped_column(Text, primary_key=True)
    skill_id: Mapped[str] = mapped_column(Text, primary_key=True)
    body_hash: Mapped[str] = mapped_column(Text)
    opponent: Mapped[str] = mapped_column(Text)
    engine_version: Mapped[str] = mapped_column(Text, default="")
    pairs: Mapped[int] = mapped_column(BigInteger)
    both_won: Mapped[int] = mapped_column(BigInteger)
    skill_only: Mapped[int] = mapped_column(BigInteger)
    baseline_only: Mapped[int] = mapped_column(BigInteger)
    neither: Mapped[int] = mapped_column(BigInteger)
    excluded: Mapped[int] = mapped_column(BigInteger, default=0)
    skill_rate: Mapped[float | None] = mapped_column(Float)
    baseline_rate: Mapped[float | None] = mapped_column(Float)
    lift: Mapped[float | None] = mapped_column(Float)
    low: Mapped[float] = mapped_column(Float)
    high: Mapped[float] = mapped_column(Float)
    worse: Mapped[int] = mapped_column(BigInteger, default=0)
    computed_at: Mapped[str] = mapped_column(Text)


class RunDecisionRow(Base):
    __tablename__ = "studio_run_decisions"

    run_id: Mapped[str] = mapped_column(Text, primary_key=True)
    skill_id: Mapped[str] = mapped_column(Text, primary_key=True)
    bar_name: Mapped[str] = mapped_column(Text)
    bar: Mapped[float] = mapped_column(Float)
    delta: Mapped[float] = mapped_column(Float)
    alpha: Mapped[float] = mapped_column(Float)
    beta: Mapped[float] = mapped_column(Float)
    min_games: Mapped[int] = mapped_column(BigInteger, default=0)
    decision: Mapped[str] = mapped_column(Text)
    wins: Mapped[int] = mapped_column(BigInteger)
    decided: Mapped[int] = mapped_column(BigInteger)
    llr: Mapped[float] = mapped_column(Float)
    decided_at: Mapped[str] = mapped_column(Text)


class RunPairRow(Base):
    __tablename__ = "studio_run_pairs"

    run_id: Mapped[str] = mapped_column(Text, primary_key=True)
    position: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    skill_a: Mapped[str] = mapped_column(Text)
    skill_b: Mapped[str] = mapped_column(Text)
    switch_at: Mapped[str] = mapped_column(Text)
    wins: Mapped[int] = mapped_column(BigInteger, default=0)
    losses: Mapped[int] = mapped_column(BigInteger, default=0)
    draws: Mapped[int] = mapped_column(BigInteger, default=0)
    errors: Mapped[int] = mapped_column(BigInteger, default=0)
    credited: Mapped[int] = mapped_column(BigInteger, default=0)
    successes: Mapped[int] = mapped_column(BigInteger, default=0)
    note: Mapped[str] = mapped_column(Text, default="")
    applied_at: Mapped[str | None] = mapped_column(Text)


# --- values ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LiftRecord:
    """One skill's lift over the default plan in one run (win rates over the decided pairs)."""

    run_id: str
    skill_id: str
    body_hash: str
    opponent: str
    engine_version: str
    both_won: int
    skill_only: int
    baseline_only: int
    neither: int
    excluded: int  # pairs left out: an error game on either side
    low: float
    high: float
    computed_at: str = ""

    @property
    def pairs(self) -> int:
        return self.both_won + self.skill_only + self.baseline_only + self.neither

    @property
    def skill_rate(self) -> float | None:
        return (self.both_won + self.skill_only) / self.pairs if self.pairs else None

    @property
    def baseline_rate(self) -> float | None:
        return (self.both_won + self.baseline_only) / self.pairs if self.pairs else None

    @property
    def lift(self) -> float | None:
        return (self.skill_only - self.baseline_only) / self.pairs if self.pairs else None

    @property
    def worse(self) -> bool:
        """The whole interval lies below zero: worse than the default plan."""
        return self.pairs > 0 and self.high < 0


@dataclass(frozen=True)
class DecisionRecord:
    """Where ``verify --until-decided``'s sequential test left a skill."""

    run_id: str
    skill_id: str
    bar_name: str
    bar: float
    delta: float
    alpha: float
    beta: float
    min_games: int
    decision: str  # above | below | undecided
    wins: int
    decided: int
    llr: float
    decided_at: str = ""


@dataclass(frozen=True)
class PairRecord:
    """One switch of a composition run (A then B) and what the run made of it."""

    run_id: str
    position: int
    skill_a: str
    skill_b: str
    switch_at: str
    counts: Counts = field(default_factory=Counts)
    credited: bool = False
    successes: int = 0
    note: str = ""
    applied_at: str | None = None


# --- the store -------------------------------------------------------------------------------------


def _lift(row: RunLiftRow) -> LiftRecord:
    return LiftRecord(
        row.run_id,
        row.skill_id,
        row.body_hash,
        row.opponent,
        row.engine_version,
        row.both_won,
        row.skill_only,
        row.baseline_only,
        row.neither,
        row.excluded,
        row.low,
        row.high,
        row.computed_at,
    )


def _pair(row: RunPairRow) -> PairRecord:
    return PairRecord(
        row.run_id,
        row.position,
        row.skill_a,
        row.skill_b,
        row.switch_at,
        Counts(row.wins, row.losses, row.draws, row.errors),
        bool(row.credited),
        row.successes,
        row.note,
        row.applied_at,
    )


class PairedRuns(StorePart):
    """Baseline games, lifts, sequential decisions and composition runs (migration 11)."""

    def __init__(self, database: Database, actor: Actor | None = None) -> None:
        super().__init__(database, actor or Actor.current_user())

    # --- baseline games ----------------------------------------------------------------------------

    def record_baseline_games(self, run_id: str, games: Iterable[GameRow]) -> int:
        """Store a chunk of default-plan games in one transaction; games stored already stay."""
        return insert_games(self.database, BaselineGameRow, run_id, games)

    def baseline_games(self, run_id: str, skill_id: str | None = None) -> list[GameRow]:
        statement = select(BaselineGameRow).where(BaselineGameRow.run_id == run_id)
        if skill_id is not None:
            statement = statement.where(BaselineGameRow.skill_id == skill_id)
        with self.database.read() as session:
            rows = session.scalars(statement.order_by(BaselineGameRow.skill_id, BaselineGameRow.game))
            return [game_of(r) for r in rows]

    def recorded_baseline_games(self, run_id: str) -> dict[str, set[int]]:
        with self.database.read() as session:
            rows = session.execute(
                select(BaselineGameRow.skill_id, BaselineGameRow.game).where(BaselineGameRow.run_id == run_id)
            ).all()
        done: dict[str, set[int]] = {}
        for skill_id, game in rows:
            done.setdefault(skill_id, set()).add(game)
        return done

    # --- lifts -------------------------------------------------------------------------------------

    def write_lifts(self, run_id: str, records: Sequence[LiftRecord]) -> None:
        """Store (or replace) a run's lifts in one transaction, announced as a change to the
        skills' runs. Lifts are derived from stored games: one audit entry for the run (how
        many, which are worse than the default plan) and no revision, as for retrieval vectors."""
        if not records:
            return
        now = utc_now()
        rows = [
            {
                "run_id": r.run_id,
                "skill_id": r.skill_id,
                "body_hash": r.body_hash,
                "opponent": r.opponent,
                "engine_version": r.engine_version,
                "pairs": r.pairs,
                "both_won": r.both_won,
                "skill_only": r.skill_only,
                "baseline_only": r.baseline_only,
                "neither": r.neither,
                "excluded": r.excluded,
                "skill_rate": r.skill_rate,
                "baseline_rate": r.baseline_rate,
                "lift": r.lift,
                "low": r.low,
                "high": r.high,
                "worse": int(r.worse),
                "computed_at": r.computed_at or now,
            }
            for r in records
        ]
        keys = [k for k in rows[0] if k not in ("run_id", "skill_id")]
        with self._work(AuditAction.VERIFY) as work:
            statement = upsert_insert(work.session, RunLiftRow)
            work.session.execute(
                statement.on_conflict_do_update(
                    index_elements=["run_id", "skill_id"], set_={k: statement.excluded[k] for k in keys}
                ),
                rows,
            )
            ids = [r.skill_id for r in records]
            details: dict[str, JsonInput] = {
                "run": run_id,
                "lifts": len(records),
                "worse_than_default_plan": [r.skill_id for r in records if r.worse],
            }
            work.audit(AuditAction.VERIFY, ids[0] if len(ids) == 1 else None, None, details)
            work.touch(ids)

    def lifts(self, run_id: str) -> dict[str, LiftRecord]:
        with self.database.read() as session:
            rows = session.scalars(select(RunLiftRow).where(RunLiftRow.run_id == run_id))
            return {row.skill_id: _lift(row) for row in rows}

    def lift_history(self, skill_id: str) -> list[LiftRecord]:
        """Every lift measured for the skill, oldest first (any body: compare ``body_hash``)."""
        with self.database.read() as session:
            rows = session.scalars(
                select(RunLiftRow)
                .where(RunLiftRow.skill_id == skill_id)
                .order_by(RunLiftRow.computed_at, RunLiftRow.run_id)
            )
            return [_lift(row) for row in rows]

    def latest_lifts(self, skill_ids: Sequence[str]) -> dict[str, LiftRecord]:
        """Each skill's most recent lift (any body: compare ``body_hash`` with the skill's)."""
        out: dict[str, LiftRecord] = {}
        with self.database.read() as session:
            for start in range(0, len(skill_ids), 500):
                part = list(skill_ids[start : start + 500])
                rows = session.scalars(
                    select(RunLiftRow)
                    .where(RunLiftRow.skill_id.in_(part))
                    .order_by(RunLiftRow.computed_at, RunLiftRow.run_id)
                )
                out.update((row.skill_id, _lift(row)) for row in rows)  # the latest wins
        return out

    def lift_counts(self, run_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
        """Per run: (skills with a lift, skills worse than the default plan)."""
        out: dict[str, tuple[int, int]] = {}
        with self.database.read() as session:
            for start in range(0, len(run_ids), 500):
                part = list(run_ids[start : start + 500])
                rows = session.execute(
                    select(RunLiftRow.run_id, func.count(), func.sum(RunLiftRow.worse))
                    .where(RunLiftRow.run_id.in_(part))
                    .group_by(RunLiftRow.run_id)
                ).all()
                out.update((run_id, (int(count), int(worse or 0))) for run_id, count, worse in rows)
        return out

    # --- sequential decisions ----------------------------------------------------------------------

    def write_decisions(self, records: Iterable[DecisionRecord]) -> None:
        """Store (or replace) where the test left these skills, in one transaction."""
        rows = [
            {
                "run_id": r.run_id,
                "skill_id": r.skill_id,
                "bar_name": r.bar_name,
                "bar": r.bar,
                "delta": r.delta,
                "alpha": r.alpha,
                "beta": r.beta,
                "min_games": r.min_games,
                "decision": r.decision,
                "wins": r.wins,
                "decided": r.decided,
                "llr": r.llr,
                "decided_at": r.decided_at or utc_now(),
            }
            for r in records
        ]
        if not rows:
            return
        keys = [k for k in rows[0] if k not in ("run_id", "skill_id")]
        with self.database.write() as session:
            statement = upsert_insert(session, RunDecisionRow)
            session.execute(
                statement.on_conflict_do_update(
                    index_elements=["run_id", "skill_id"], set_={k: statement.excluded[k] for k in keys}
                ),
                rows,
            )

    def decisions(self, run_id: str) -> dict[str, DecisionRecord]:
        with self.database.read() as session:
            rows = session.scalars(select(RunDecisionRow).where(RunDecisionRow.run_id == run_id))
            return {
                r.skill_id: DecisionRecord(
                    r.run_id,
                    r.skill_id,
                    r.bar_name,
                    r.bar,
                    r.delta,
                    r.alpha,
                    r.beta,
                    r.min_games,
                    r.decision,
                    r.wins,
                    r.decided,
                    r.llr,
                    r.decided_at,
                )
                for r in rows
            }

    def decision_counts(self, run_ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """Per run: skills per decision (above, below, undecided, pending)."""
        out: dict[str, dict[str, int]] = {}
        with self.database.read() as session:
            for start in range(0, len(run_ids), 500):
                part = list(run_ids[start : start + 500])
                rows = session.execute(
                    select(RunDecisionRow.run_id, RunDecisionRow.decision, func.count())
                    .where(RunDecisionRow.run_id.in_(part))
                    .group_by(RunDecisionRow.run_id, RunDecisionRow.decision)
                ).all()
                for run_id, decision, count in rows:
                    out.setdefault(run_id, {})[decision] = int(count)
        return out

    # --- composition runs --------------------------------------------------------------------------

    def create_pairs(self, run_id: str, pairs: Sequence[tuple[str, str, str]]) -> None:
        """The switches of a new composition run: (skill_a, skill_b, switch_at), in order."""
        with self.database.write() as session:
            session.add_all(
                RunPairRow(run_id=run_id, position=i, skill_a=a, skill_b=b, switch_at=at, note="")
                for i, (a, b, at) in enumerate(pairs)
            )

    def pairs(self, run_id: str) -> list[PairRecord]:
        with self.database.read() as session:
            rows = session.scalars(select(RunPairRow).where(RunPairRow.run_id == run_id).order_by(RunPairRow.position))
            return [_pair(r) for r in rows]

    def pairs_of_skill(self, skill_id: str) -> list[PairRecord]:
        """Every composition run the skill took part in (either side of a switch), oldest first."""
        with self.database.read() as session:
            rows = session.scalars(
                select(RunPairRow)
                .where((RunPairRow.skill_a == skill_id) | (RunPairRow.skill_b == skill_id))
                .order_by(RunPairRow.applied_at, RunPairRow.run_id, RunPairRow.position)
            )
            return [_pair(r) for r in rows]

    def apply_sequence(
        self,
        run_id: str,
        lead_id: str,
        counts: Counts,
        *,
        credited: bool,
        successes: int,
        note: str,
        details: dict[str, JsonInput],
    ) -> list[PairRecord] | None:
        """Store a composition run's result once: its pairs' figures (``counts``), and, if
        ``credited``, ``successes`` added to each pair's ``skill_compositions.success_count`` (a pair not
        there yet is created, so each skill lists the other in ``composable_with``), with a
        revision and an audit entry (``skill.compose``) for every skill linked; the lead's row of
        the run is marked applied. One transaction; None (nothing written) if it was applied
        already. A pair whose skill has gone is skipped and noted."""
        with self._work(AuditAction.COMPOSE) as work:
            session = work.session
            rows = list(
                session.scalars(select(RunPairRow).where(RunPairRow.run_id == run_id).order_by(RunPairRow.position))
            )
            if not rows or any(row.applied_at is not None for row in rows):
                return None
            now = work.now
            present = {s: session.get(SkillRow, s) is not None for row in rows for s in (row.skill_a, row.skill_b)}
            if credited:  # what another program changed before us goes into history first
                for skill_id in [s for s, here in present.items() if here]:
                    work.record_untracked(skill_id, work.load_valid(skill_id))
            linked: dict[str, list[dict[str, JsonInput]]] = {}
            for row in rows:
                added, row_note = 0, note
                if credited and not (present[row.skill_a] and present[row.skill_b]):
                    row_note = "a skill of this pair is no longer in the library: nothing added"
                elif credited:
                    added = successes
                    pair = session.get(SkillCompositionRow, (row.skill_a, row.skill_b))
                    if pair is None:
                        session.add(SkillCompositionRow(skill_a=row.skill_a, skill_b=row.skill_b, success_count=added))
                    else:
                        pair.success_count = (pair.success_count or 0) + added
                    entry: dict[str, JsonInput] = {
                        **details,
                        "first": row.skill_a,
                        "then": row.skill_b,
                        "switch_at": row.switch_at,
                        "successes": added,
                    }
                    for skill_id in (row.skill_a, row.skill_b):
                        linked.setdefault(skill_id, []).append(entry)
                row.wins, row.losses, row.draws, row.errors = counts.wins, counts.losses, counts.draws, counts.errors
                row.credited, row.successes, row.note, row.applied_at = int(credited), added, row_note, now
            session.flush()
            for skill_id, entries in linked.items():
                current = work.load_valid(skill_id)
                if current is None:
                    continue
                work.touch((skill_id,))
                number = work.revision(current, "compose", f"composition verified in run {run_id}")
                for entry in entries:
                    work.audit(AuditAction.COMPOSE, skill_id, number, entry)
            session.execute(
                update(RunSkillRow)
                .where(RunSkillRow.run_id == run_id, RunSkillRow.skill_id == lead_id)
                .values(
                    wins=counts.wins,
                    losses=counts.losses,
                    draws=counts.draws,
                    errors=counts.errors,
                    success_rate=counts.wins / counts.decided if counts.decided else None,
                    confidence_after=RunSkillRow.confidence_before,  # a composition changes no tier
                    applied_at=now,
                    note=note[:2000],
                )
            )
            return [_pair(r) for r in rows]


__all__ = [
    "BaselineGameRow",
    "DecisionRecord",
    "LiftRecord",
    "PairRecord",
    "PairedRuns",
    "RunDecisionRow",
    "RunLiftRow",
    "RunPairRow",
]
