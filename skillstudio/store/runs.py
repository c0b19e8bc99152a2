"""Verification runs and their games, written as they arrive (docs/verification.md).

A run row is written when a batch starts, each chunk's games in one small transaction as the
chunk returns, and a skill's result when all its games are in. Killing the process loses at
most the chunks in flight; :meth:`RunStore.missing_games` tells a resumed run what is left.
Games are keyed by (run, skill, game index), so replaying a chunk after a crash adds nothing.

One runner owns a run at a time: :meth:`RunStore.claim` takes the run with a conditional UPDATE
inside BEGIN IMMEDIATE, :meth:`RunStore.release` gives it back, :meth:`RunStore.heartbeat`
keeps it fresh. A claim is stale, and may be taken over, when its holder's process is gone
(same host, checked by PID) or its heartbeat is older than :data:`CLAIM_STALE_AFTER_S`.
"""

from __future__ import annotations

import json
import os
import socket
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Select, func, select, text, update

from skillstudio.gc_pause import gc_paused
from skillstudio.model import utc_now
from skillstudio.store.backends import upsert_insert
from skillstudio.store.bulk import binds, execute_many, update_rows
from skillstudio.store.database import Database
from skillstudio.store.errors import LibraryError, RunClaimed, RunNotFound
from skillstudio.store.orm import (
    Base,
    PlayImportRow,
    RunGameRow,
    RunSkillRow,
    SkillIntervalRow,
    VerificationRunRow,
)
from skillstudio.store.query import chunks, id_lists
from skillstudio.store.types import (
    Claim,
    Counts,
    GameRow,
    JsonInput,
    JsonValue,
    PlayClaim,
    RunInfo,
    RunSkill,
    RunSkillEntry,
    RunSkillResult,
    SuccessInterval,
)
from skillstudio.store.unit_of_work import UnitOfWork

RUN_STATUSES = ("running", "finished", "cancelled", "failed")

# A runner refreshes its claim's heartbeat this often; a claim whose heartbeat is older than
# CLAIM_STALE_AFTER_S is stale whatever its PID (another host, a reused PID, a hung process).
CLAIM_HEARTBEAT_S = 30.0
CLAIM_STALE_AFTER_S = 300.0


class RunStore:
    """``repository.runs``: verification runs, their games, and the claims of their runners."""

    def __init__(self, database: Database) -> None:
        self.database = database

    # --- runs ------------------------------------------------------------------------------------

    def create_run(
        self,
        *,
        skills: Sequence[RunSkillEntry],
        opponent: str,
        games: int,
        seed: int,
        executor: str,
        chunk_games: int,
        actor: str,
        engine: Sequence[str] = (),
        engine_version: str = "",
        kind: str = "verify",
        options: Mapping[str, JsonInput] | None = None,
        policy: Mapping[str, JsonInput] | None = None,
    ) -> str:
        run_id = uuid.uuid4().hex[:12]
        with self.database.write() as session:
            session.add(
                VerificationRunRow(
                    id=run_id,
                    kind=kind,
                    status="running",
                    opponent=opponent,
                    engine=json.dumps(list(engine)),
                    engine_version=engine_version,
                    executor=executor,
                    seed=int(seed),
                    games=int(games),
                    chunk_games=int(chunk_games),
                    actor=actor,
                    options=json.dumps(options or {}, sort_keys=True),
                    policy=json.dumps(policy or {}, sort_keys=True),
                    started_at=utc_now(),
                    finished_at=None,
                    message="",
                )
            )
            session.add_all(
                RunSkillRow(
                    run_id=run_id,
                    skill_id=entry.skill_id,
                    position=position,
                    game_module=entry.game_module,
                    body_hash=entry.body_hash,
                    confidence_before=entry.confidence_before,
                    note="",
                )
                for position, entry in enumerate(skills)
            )
        return run_id

    def record_games(self, run_id: str, games: Iterable[GameRow]) -> int:
        """Store a chunk's games in one transaction; games already stored are left as they are."""
        return insert_games(self.database, RunGameRow, run_id, games)

    def set_engine_version(self, run_id: str, version: str) -> None:
        with self.database.write() as session:
            session.execute(
                update(VerificationRunRow)
                .where(VerificationRunRow.id == run_id, VerificationRunRow.engine_version == "")
                .values(engine_version=version)
            )

    def set_policy(self, run_id: str, policy: Mapping[str, JsonInput]) -> None:
        """Record the policy (its settings) the run applies; a resume may apply another."""
        with self.database.write() as session:
            session.execute(
                update(VerificationRunRow)
                .where(VerificationRunRow.id == run_id)
                .values(policy=json.dumps(policy, sort_keys=True))
            )

    def set_status(self, run_id: str, status: str, message: str = "") -> None:
        if status not in RUN_STATUSES:
            raise ValueError(f"unknown run status {status!r}")
        finished = None if status == "running" else utc_now()
        with self.database.write() as session:
            session.execute(
                update(VerificationRunRow)
                .where(VerificationRunRow.id == run_id)
                .values(status=status, finished_at=finished, message=message)
            )

    def finish_run(self, run_id: str, *, cancelled: bool = False, message: str = "") -> None:
        self.set_status(run_id, "cancelled" if cancelled else "finished", message)

    def skip_skill(self, run_id: str, skill_id: str, note: str) -> None:
        """Mark a skill of a run as done without a result (it vanished, or cannot be played)."""
        with self.database.write() as session:
            session.execute(
                update(RunSkillRow)
                .where(RunSkillRow.run_id == run_id, RunSkillRow.skill_id == skill_id)
                .values(applied_at=utc_now(), note=note)
            )

    # --- claims ----------------------------------------------------------------------------------

    def claim(self, run_id: str, *, stale_after: float = CLAIM_STALE_AFTER_S) -> Claim:
        """Take run ``run_id`` for this runner, or raise :class:`RunClaimed` if a live runner has it.

        Read and conditional UPDATE happen in one BEGIN IMMEDIATE transaction, so of two runners
        claiming at once exactly one wins."""
        now = utc_now()
        claim = Claim(run_id, uuid.uuid4().hex, os.getpid(), socket.gethostname(), now)
        with self.database.write() as session:
            row = session.execute(
                text(
                    "SELECT claimed_by, claimed_pid, claimed_host, claimed_at, heartbeat_at "
                    "FROM studio_verification_runs WHERE id = :id"
                ),
                {"id": run_id},
            ).first()
            if row is None:
                raise RunNotFound(run_id)
            holder, pid, host, since, heartbeat = row
            if holder is not None and not claim_is_stale(pid, host, heartbeat or since, stale_after=stale_after):
                raise RunClaimed(run_id, pid, host, since)
            taken = session.execute(
                text(
                    "UPDATE studio_verification_runs SET claimed_by = :token, claimed_pid = :pid, "
                    "claimed_host = :host, claimed_at = :now, heartbeat_at = :now "
                    "WHERE id = :id AND claimed_by IS NOT DISTINCT FROM :holder"
                ),
                {
                    "token": claim.token,
                    "pid": claim.pid,
                    "host": claim.host,
                    "now": now,
                    "id": run_id,
                    "holder": holder,
                },
            )
            if getattr(taken, "rowcount", 1) != 1:  # cannot happen under the write lock; refuse rather than share
                raise RunClaimed(run_id, pid, host, since)
        return claim

    def heartbeat(self, claim: Claim) -> bool:
        """Refresh the claim; False if it is no longer ours (taken over as stale)."""
        with self.database.write() as session:
            result = session.execute(
                text("UPDATE studio_verification_runs SET heartbeat_at = :now WHERE id = :id AND claimed_by = :token"),
                {"now": utc_now(), "id": claim.run_id, "token": claim.token},
            )
            return bool(getattr(result, "rowcount", 0) == 1)

    def release(self, claim: Claim) -> None:
        """Give the run back (a no-op if another runner took it over meanwhile)."""
        with self.database.write() as session:
            session.execute(
                text(
                    "UPDATE studio_verification_runs SET claimed_by = NULL, claimed_pid = NULL, claimed_host = NULL, "
                    "claimed_at = NULL, heartbeat_at = NULL WHERE id = :id AND claimed_by = :token"
                ),
                {"id": claim.run_id, "token": claim.token},
            )

    def claim_holder(self, run_id: str) -> tuple[str, int | None, str | None, str | None] | None:
        """(token, pid, host, claimed_at) of the run's claim, or None if nobody holds it."""
        with self.database.read() as session:
            row = session.execute(
                text(
                    "SELECT claimed_by, claimed_pid, claimed_host, claimed_at FROM studio_verification_runs "
                    "WHERE id = :id"
                ),
                {"id": run_id},
            ).first()
        return None if row is None or row[0] is None else (row[0], row[1], row[2], row[3])

    # --- reading ---------------------------------------------------------------------------------

    def resolve(self, prefix: str) -> str:
        with self.database.read() as session:
            ids = list(
                session.scalars(
                    select(VerificationRunRow.id)
                    .where(VerificationRunRow.id.startswith(prefix, autoescape=True))
                    .limit(2)
                )
            )
        if len(ids) != 1:
            raise RunNotFound(prefix) if not ids else LibraryError(f"run id {prefix!r} is ambiguous")
        return ids[0]

    def run(self, run_id: str) -> RunInfo:
        runs = self._runs(select(VerificationRunRow).where(VerificationRunRow.id == run_id))
        if not runs:
            raise RunNotFound(run_id)
        return runs[0]

    def runs(self, limit: int | None = 50) -> list[RunInfo]:
        statement = select(VerificationRunRow).order_by(VerificationRunRow.started_at.desc(), VerificationRunRow.id)
        return self._runs(statement.limit(limit) if limit else statement)

    def _runs(self, statement: Select[VerificationRunRow]) -> list[RunInfo]:
        with self.database.read() as session:
            rows = list(session.scalars(statement))
            ids = [row.id for row in rows]
            skills = (
                dict(
                    session.execute(
                        select(RunSkillRow.run_id, func.count())
                        .where(RunSkillRow.run_id.in_(ids))
                        .group_by(RunSkillRow.run_id)
                    ).all()
                )
                if ids
                else {}
            )
            games = (
                dict(
                    session.execute(
                        select(RunGameRow.run_id, func.count())
                        .where(RunGameRow.run_id.in_(ids))
                        .group_by(RunGameRow.run_id)
                    ).all()
                )
                if ids
                else {}
            )
            return [
                RunInfo(
                    row.id,
                    row.kind,
                    row.status,
                    row.opponent,
                    tuple(json.loads(row.engine or "[]")),
                    row.engine_version,
                    row.executor,
                    row.seed,
                    row.games,
                    row.chunk_games,
                    row.actor,
                    json.loads(row.options or "{}"),
                    row.started_at,
                    row.finished_at,
                    row.message,
                    skills.get(row.id, 0),
                    games.get(row.id, 0),
                    _json_object(row.policy),
                )
                for row in rows
            ]

    def skills(self, run_id: str) -> list[RunSkill]:
        with self.database.read() as session:
            rows = session.scalars(
                select(RunSkillRow).where(RunSkillRow.run_id == run_id).order_by(RunSkillRow.position)
            )
            return [
                RunSkill(
                    r.skill_id,
                    r.position,
                    r.game_module,
                    r.body_hash,
                    r.confidence_before,
                    r.confidence_after,
                    r.wins,
                    r.losses,
                    r.draws,
                    r.errors,
                    r.success_rate,
                    r.wilson_low,
                    r.wilson_high,
                    r.applied_at,
                    r.note,
                    r.duplicates or 0,
                )
                for r in rows
            ]

    def counts(self, run_id: str, skill_id: str | None = None) -> dict[str, Counts]:
        """Games recorded so far, per skill (of one skill only, if given)."""
        statement = select(RunGameRow.skill_id, RunGameRow.outcome, func.count()).where(RunGameRow.run_id == run_id)
        if skill_id is not None:
            statement = statement.where(RunGameRow.skill_id == skill_id)
        with self.database.read() as session:
            return _tally(session.execute(statement.group_by(RunGameRow.skill_id, RunGameRow.outcome)).all())

    def counts_of(self, run_id: str, skill_ids: Sequence[str]) -> dict[str, Counts]:
        """:meth:`counts` of several skills, in one read (only skills with games)."""
        out: dict[str, Counts] = {}
        with self.database.read() as session:
            for part in chunks(skill_ids):
                statement = (
                    select(RunGameRow.skill_id, RunGameRow.outcome, func.count())
                    .where(RunGameRow.run_id == run_id, RunGameRow.skill_id.in_(part))
                    .group_by(RunGameRow.skill_id, RunGameRow.outcome)
                )
                out.update(_tally(session.execute(statement).all()))
        return out

    def recorded_games(self, run_id: str) -> dict[str, set[int]]:
        """The game indices already stored, per skill (what a resumed run skips)."""
        with self.database.read() as session:
            rows = session.execute(
                select(RunGameRow.skill_id, RunGameRow.game).where(RunGameRow.run_id == run_id)
            ).all()
        done: dict[str, set[int]] = {}
        for skill_id, game in rows:
            done.setdefault(skill_id, set()).add(game)
        return done

    def games(self, run_id: str, skill_id: str | None = None) -> list[GameRow]:
        with self.database.read() as session:
            statement = select(RunGameRow).where(RunGameRow.run_id == run_id)
            if skill_id is not None:
                statement = statement.where(RunGameRow.skill_id == skill_id)
            rows = session.scalars(statement.order_by(RunGameRow.skill_id, RunGameRow.game))
            return [game_of(r) for r in rows]

    def engine_versions(self, run_id: str, skill_id: str) -> dict[str, int]:
        """Engine version -> games, for one skill's games of a run."""
        return self.engine_versions_of(run_id, [skill_id]).get(skill_id, {})

    def engine_versions_of(self, run_id: str, skill_ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """:meth:`engine_versions` of several skills, in one read (only skills with a version)."""
        out: dict[str, dict[str, int]] = {}
        with self.database.read() as session:
            for part in chunks(skill_ids):
                rows = session.execute(
                    select(RunGameRow.skill_id, RunGameRow.engine_version, func.count())
                    .where(RunGameRow.run_id == run_id, RunGameRow.skill_id.in_(part))
                    .group_by(RunGameRow.skill_id, RunGameRow.engine_version)
                ).all()
                for skill_id, version, count in rows:
                    if version:
                        out.setdefault(skill_id, {})[version] = count
        return out

    def interval(self, skill_id: str) -> tuple[int, int, float, float] | None:
        """(successes, trials, low, high) of the skill's current success rate, if verified here."""
        with self.database.read() as session:
            row = session.get(SkillIntervalRow, skill_id)
            return None if row is None else (row.successes, row.trials, row.wilson_low, row.wilson_high)

    def revalidated_engine(self, skill_id: str) -> str | None:
        """The engine version the skill's latest applied revalidation played it with, if it
        ever had one (:meth:`revalidated_engines`)."""
        return self.revalidated_engines([skill_id]).get(skill_id)

    def revalidated_engines(self, skill_ids: Sequence[str]) -> dict[str, str]:
        """For each skill ever revalidated, the engine version its latest applied revalidation
        played it with: the version most of its games in that run report, as its session's
        record holds it (:func:`session_engine_version`). Not the run's own version: that is
        the first chunk's to return, and a run of several game modules plays each module with
        its own version (crediting a ra1 skill against a td version took its credit away)."""
        latest: dict[str, tuple[str, str]] = {}  # skill id -> (revalidation run, the run's version)
        with self.database.read() as session:
            for part in chunks(skill_ids):
                rows = session.execute(
                    select(RunSkillRow.skill_id, VerificationRunRow.id, VerificationRunRow.engine_version)
                    .join(VerificationRunRow, RunSkillRow.run_id == VerificationRunRow.id)
                    .where(
                        RunSkillRow.skill_id.in_(part),
                        RunSkillRow.applied_at.is_not(None),
                        RunSkillRow.confidence_after.is_not(None),
                        VerificationRunRow.kind == "revalidate",
                    )
                    .order_by(RunSkillRow.applied_at)
                )
                latest.update((skill_id, (run_id, version)) for skill_id, run_id, version in rows)  # the latest wins
        by_run: dict[str, list[str]] = {}
        for skill_id, (run_id, _) in latest.items():
            by_run.setdefault(run_id, []).append(skill_id)
        out: dict[str, str] = {}
        for run_id, ids in by_run.items():
            played = self.engine_versions_of(run_id, ids)
            out.update(
                (skill_id, session_engine_version(played.get(skill_id, {}), latest[skill_id][1])) for skill_id in ids
            )
        return out

    def known_play_keys(self, keys: Iterable[str]) -> set[str]:
        keys = list(keys)
        found: set[str] = set()
        with self.database.read() as session:
            for start in range(0, len(keys), 500):
                part = keys[start : start + 500]
                found.update(session.scalars(select(PlayImportRow.key).where(PlayImportRow.key.in_(part))))
        return found


def session_engine_version(played: Mapping[str, int], run_version: str) -> str:
    """The engine version of a skill's session in a run: the one most of its games report
    (``played``: version -> games, as :meth:`RunStore.engine_versions_of` gives them), else
    the run's."""
    return Counter(played).most_common(1)[0][0] if played else run_version


# --- writes inside a skill's quality transaction (Evidence.set_quality / apply_session) -----------


@gc_paused()
def insert_games(database: Database, table: type[Base], run_id: str, games: Iterable[GameRow]) -> int:
    """Insert games into ``table`` (a run's games, or its default-plan games) in one transaction,
    one executemany (a chunk holds thousands: :mod:`store.bulk`); a game already stored stays as
    it is. Returns how many were new."""
    now = utc_now()
    rows = [
        {
            "run_id": run_id,
            "skill_id": g.skill_id,
            "game": int(g.game),
            "seed": g.seed,
            "outcome": g.outcome,
            "duration_s": g.duration_s,
            "resource_delta": g.resource_delta,
            "army_value_delta": g.army_value_delta,
            "map_control": g.map_control,
            "error": g.error,
            "engine_version": g.engine_version,
            "recorded_at": now,
        }
        for g in games
    ]
    if not rows:
        return 0
    with database.write() as session:
        statement = upsert_insert(session, table).values(binds(rows[0])).on_conflict_do_nothing()
        return execute_many(session.connection(), statement, rows)  # the rows inserted: new games


def game_of(row: Any) -> GameRow:  # RunGameRow or paired_runs.BaselineGameRow
    """A stored game (a run's or a default-plan game: the same columns) as a GameRow."""
    return GameRow(
        row.skill_id,
        row.game,
        row.outcome,
        row.seed,
        row.duration_s,
        row.resource_delta,
        row.army_value_delta,
        row.map_control,
        row.error,
        row.engine_version,
    )


def write_run_results(work: UnitOfWork, results: Sequence[tuple[str, RunSkillResult]]) -> None:
    """Mark each (skill id, result)'s row of its run applied, with the session's figures; one
    executemany for all of them."""
    if not results:
        return
    now = utc_now()
    _update_run_rows(
        work,
        [
            {
                **_closed_row(result.run_id, skill_id, result.counts, result.duplicates, result.note, now),
                "success_rate": result.success_rate,
                "wilson_low": result.low,
                "wilson_high": result.high,
                "confidence_after": result.confidence_after,
            }
            for skill_id, result in results
        ],
    )


def close_unchanged(work: UnitOfWork, run_id: str, closed: Sequence[tuple[str, Counts, int, str]]) -> None:
    """Mark each (skill id, games played, duplicates, note)'s row of the run done with no result:
    the session gave nothing to credit (only error games, or only games already credited).
    confidence_after stays NULL, so nothing reads it as applied (a revalidation, say). One
    executemany for all of them."""
    if not closed:
        return
    now = utc_now()
    _update_run_rows(
        work,
        [_closed_row(run_id, skill_id, counts, duplicates, note, now) for skill_id, counts, duplicates, note in closed],
    )


def _update_run_rows(work: UnitOfWork, rows: list[dict[str, object]]) -> None:
    """Write each row over its run row, found by its key (run id, skill id): one executemany."""
    update_rows(work.session.connection(), RunSkillRow, ("run_id", "skill_id"), rows)


def _closed_row(run_id: str, skill_id: str, counts: Counts, duplicates: int, note: str, now: str) -> dict[str, object]:
    """What every applied session sets on its run row: the games played, repeats, why, when."""
    return {
        "run_id": run_id,
        "skill_id": skill_id,
        "wins": counts.wins,
        "losses": counts.losses,
        "draws": counts.draws,
        "errors": counts.errors,
        "applied_at": now,
        "note": note,
        "duplicates": duplicates,
    }


# A game of this run is a duplicate when a game already credited to the skill (its run's session is
# stored as evidence) was played with the same body, engine version, opponent and game seed: the
# engine is deterministic in those, so it is the same game, and counting it again would narrow the
# interval on evidence nobody gathered. Error games are never duplicates (they count for nothing).
_DUPLICATES = """
    SELECT g.skill_id, g.outcome, COUNT(*) FROM studio_run_games g
    JOIN studio_run_skills rs ON rs.run_id = g.run_id AND rs.skill_id = g.skill_id
    JOIN studio_verification_runs r ON r.id = g.run_id
    WHERE g.run_id = :run AND g.skill_id IN ({ids}) AND g.outcome != 'error' AND g.seed IS NOT NULL
      AND EXISTS (
        SELECT 1 FROM studio_run_games g2
        JOIN studio_run_skills rs2 ON rs2.run_id = g2.run_id AND rs2.skill_id = g2.skill_id
        JOIN studio_verification_runs r2 ON r2.id = g2.run_id
        JOIN studio_verifications v ON v.run_id = g2.run_id AND v.skill_id = g2.skill_id
        WHERE g2.skill_id = g.skill_id AND g2.seed = g.seed AND g2.run_id != g.run_id
          AND g2.outcome != 'error' AND g2.engine_version = g.engine_version
          AND rs2.body_hash = rs.body_hash AND r2.opponent = r.opponent
      )
    GROUP BY g.skill_id, g.outcome
    """


def duplicate_games(work: UnitOfWork, run_id: str, skill_ids: Sequence[str]) -> dict[str, Counts]:
    """Per skill, the run's games that repeat games already credited to it (see above); only
    skills with some."""
    rows: list[Any] = []
    for placeholders, values in id_lists(skill_ids):
        rows += work.session.execute(text(_DUPLICATES.format(ids=placeholders)), {"run": run_id, **values}).all()
    return _tally(rows)  # error games are never duplicates


def write_interval(work: UnitOfWork, intervals: Sequence[tuple[str, SuccessInterval]]) -> None:
    """Store each (skill id, interval) as the skill's current success interval; one executemany."""
    if not intervals:
        return
    now = utc_now()
    statement = upsert_insert(work.session, SkillIntervalRow)
    work.session.execute(
        statement.on_conflict_do_update(
            index_elements=["skill_id"],
            set_={k: statement.excluded[k] for k in ("successes", "trials", "wilson_low", "wilson_high", "updated_at")},
        ),
        [
            {
                "skill_id": skill_id,
                "successes": interval.successes,
                "trials": interval.trials,
                "wilson_low": interval.low,
                "wilson_high": interval.high,
                "updated_at": now,
            }
            for skill_id, interval in intervals
        ],
    )


def claim_plays(work: UnitOfWork, skill_id: str, claim: PlayClaim) -> None:
    """Remember each play's key, so a file imported again counts none of them twice."""
    now = utc_now()
    work.session.execute(
        upsert_insert(work.session, PlayImportRow).on_conflict_do_nothing(),
        [
            {
                "key": key,
                "skill_id": skill_id,
                "source": claim.source,
                "imported_at": now,
                "play": json.dumps(play, sort_keys=True, ensure_ascii=False),
            }
            for key, play in claim.plays
        ],
    )


def _tally(rows: Iterable[Any]) -> dict[str, Counts]:
    """(skill id, outcome, games) rows as Counts per skill."""
    tally: dict[str, dict[str, int]] = {}
    for skill_id, outcome, count in rows:
        tally.setdefault(skill_id, {})[outcome] = count
    return {skill_id: Counts.of(t) for skill_id, t in tally.items()}


def _json_object(text: str | None) -> dict[str, JsonValue]:
    try:
        value = json.loads(text or "{}")
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


# --- claims -------------------------------------------------------------------------------------


def claim_is_stale(
    pid: int | None, host: str | None, heartbeat: str | None, *, stale_after: float = CLAIM_STALE_AFTER_S
) -> bool:
    """A claim may be taken over when its process is gone (checked only on this host) or its
    heartbeat is older than ``stale_after`` seconds (or unreadable)."""
    if host == socket.gethostname() and pid is not None and not process_alive(int(pid)):
        return True
    try:
        beat = datetime.fromisoformat(str(heartbeat))
    except ValueError:
        return True
    if beat.tzinfo is None:
        beat = beat.replace(tzinfo=UTC)
    return (datetime.now(UTC) - beat).total_seconds() > stale_after


def process_alive(pid: int) -> bool:
    """Whether a process with this PID exists on this host (a PID we cannot query counts as alive)."""
    if pid <= 0:
        return False
    if os.name == "nt":  # os.kill(pid, 0) would terminate the process on Windows
        import ctypes

        kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return bool(kernel32.GetLastError() == 5)  # access denied: it exists
        try:
            code = ctypes.c_ulong()
            if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
                return True
            return code.value == 259  # STILL_ACTIVE
        finally:
            kernel32.CloseHandle(handle)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists, owned by someone else
        return True
    return True


__all__ = [
    "CLAIM_HEARTBEAT_S",
    "CLAIM_STALE_AFTER_S",
    "RUN_STATUSES",
    # a run's values and errors live in types.py and errors.py; importable from here as before
    "Claim",
    "Counts",
    "GameRow",
    "RunClaimed",
    "RunInfo",
    "RunNotFound",
    "RunSkill",
    "RunSkillEntry",
    "RunStore",
    "claim_is_stale",
    "claim_plays",
    "close_unchanged",
    "duplicate_games",
    "process_alive",
    "session_engine_version",
    "write_interval",
    "write_run_results",
]
