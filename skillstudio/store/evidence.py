"""What a skill earned in play: verification records, D057's quality columns, compositions.

Verification's outcome is stored in one transaction (docs/verification.md): the evidence record,
the quality figures, a revision, an audit entry, and the bookkeeping verification asked for (the
run's row for the skill, the overall interval, the plays a file reported). None of it is a
content change: the skill's version stays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from skillstudio.gc_pause import gc_paused
from skillstudio.model import Issue, Skill
from skillstudio.model.evidence import EvidenceKind, VerificationRecord, record_to_document
from skillstudio.store.bulk import insert_rows, update_rows
from skillstudio.store.errors import InvalidSkillData, SkillNotFound
from skillstudio.store.events import AuditAction, LibraryChange, change
from skillstudio.store.orm import AuditRow, RevisionRow, SkillCompositionRow, SkillRow, VerificationRow
from skillstudio.store.query import chunks, id_lists
from skillstudio.store.runs import (
    claim_plays,
    close_unchanged,
    duplicate_games,
    write_interval,
    write_run_results,
)
from skillstudio.store.skill_rows import RowParser, body_hash, load_many, read_compositions
from skillstudio.store.types import Composition, Counts, JsonInput, QualityOutcome, SessionApplied
from skillstudio.store.unit_of_work import StorePart, UnitOfWork, latest_revisions, untracked_revision

# Given the skill as stored now, all its evidence (the new record included) and the new record as
# stored (without games already credited), decide.
Recompute = Callable[[Skill, list[VerificationRecord], VerificationRecord], QualityOutcome]


@dataclass(frozen=True)
class RunSession:
    """One skill's session of a run, for :meth:`Evidence.apply_sessions`."""

    skill_id: str
    record: VerificationRecord
    recompute: Recompute


class Evidence(StorePart):
    """``repository.evidence``: verification records, quality, and D057's composition counts."""

    def set_quality(self, skill_id: str, outcome: QualityOutcome, *, record: VerificationRecord | None = None) -> Skill:
        """Store ``outcome`` (quality, revision, audit entry, the bookkeeping it names) and
        ``record`` (with the body hash it was gathered with), all in one transaction."""
        with self._work(outcome.action) as work:
            current = work.load(skill_id)
            work.record_untracked(skill_id, current)
            work.touch((skill_id,))
            if record is not None:
                _insert_records(work, [(current, record)])
            [stored] = self._store(work, [(current, outcome)])
            return stored

    def apply_session(
        self, skill_id: str, record: VerificationRecord, *, run_id: str, recompute: Recompute
    ) -> SessionApplied:
        """:meth:`apply_sessions` of one skill's session."""
        [applied] = self.apply_sessions(run_id, [RunSession(skill_id, record, recompute)])
        return applied

    @gc_paused()
    def apply_sessions(
        self, run_id: str, sessions: Sequence[RunSession], *, parse: RowParser | None = None
    ) -> list[SessionApplied]:
        """Store run ``run_id``'s sessions (one per skill) and what each ``recompute`` decides.

        All in one transaction (BEGIN IMMEDIATE, so writers are serialized), with the same rows
        per skill as one transaction per skill would write; for each skill:

        * a run's session is stored at most once per skill (a unique key on the evidence rows,
          checked here): if it is stored already, nothing is written (``already``);
        * games identical to games already credited to the skill (same body, engine version,
          opponent and game seed) are taken out of the record: never counted twice;
        * a session left with no decided game (only error games, or only duplicates) changes
          nothing about the skill (``unchanged``): no evidence, quality, revision or audit entry;
          only the run's own row records what was played;
        * otherwise ``recompute(current, evidence, stored)`` is called with the skill as stored
          now, all its evidence rows (the stored record included) and the record as stored, so
          concurrent batches of one skill add up, as no figure computed before the lock is
          trusted (``applied``).

        The reads are batched (a few queries for the whole batch, not a few per skill). Once
        committed, each applied skill is announced as its own transaction would have been: one
        change per skill, with its action. ``parse``: the caller's :class:`RowParser`, so a
        skill whose row is as the caller read it is not parsed again."""
        if not sessions:
            return []
        by_id = {session.skill_id: session for session in sessions}
        if len(by_id) != len(sessions):
            raise ValueError("apply_sessions takes one session per skill")
        outcomes: dict[str, SessionApplied] = {}
        announcements: list[LibraryChange] = []
        with self._work(AuditAction.VERIFY) as work:  # touches nothing itself: the skills are announced below
            already = _runs_evidence_stored(work, run_id, list(by_id))
            duplicates = duplicate_games(work, run_id, [skill_id for skill_id in by_id if skill_id not in already])
            fresh: dict[str, VerificationRecord] = {}
            unchanged: list[tuple[str, Counts, int, str]] = []
            for skill_id, session in by_id.items():
                if skill_id in already:
                    outcomes[skill_id] = SessionApplied("already")
                    continue
                record = session.record
                repeated = duplicates.get(skill_id, Counts())
                kept = replace(
                    record,
                    wins=record.wins - repeated.wins,
                    losses=record.losses - repeated.losses,
                    draws=record.draws - repeated.draws,
                )
                if kept.decided > 0:
                    fresh[skill_id] = kept
                    continue
                counts = Counts(record.wins, record.losses, record.draws, record.errors)
                why = (
                    f"all {repeated.decided} decided games repeat games already credited: nothing changed"
                    if repeated.decided
                    else f"only error games ({record.errors}): nothing changed"
                )
                unchanged.append((skill_id, counts, repeated.decided, why))
                outcomes[skill_id] = SessionApplied("unchanged", duplicates=repeated)
            close_unchanged(work, run_id, unchanged)
            if fresh:
                current: dict[str, Skill] = {}
                latest = latest_revisions(work.session, list(fresh))
                for skill_id, loaded in load_many(work.session, list(fresh), parse):
                    if not isinstance(loaded, Skill):
                        raise loaded  # as load_skill would: gone, or no longer a valid skill
                    newest = latest.get(skill_id)
                    if untracked_revision(None if newest is None else newest[1], loaded.version) is not None:
                        work.record_untracked(skill_id, loaded)  # asked only where it writes
                    current[skill_id] = loaded
                _insert_records(work, [(current[skill_id], record) for skill_id, record in fresh.items()], run_id)
                evidence = _evidence_of(work.session, list(fresh))
                decided = [
                    (current[skill_id], by_id[skill_id].recompute(current[skill_id], evidence[skill_id], record))
                    for skill_id, record in fresh.items()
                ]
                for stored in self._store(work, decided):
                    outcomes[stored.id] = SessionApplied(
                        "applied", stored, fresh[stored.id], duplicates.get(stored.id, Counts())
                    )
                announcements = [
                    change(AuditAction(outcome.action), (skill.id,), self.actor.id) for skill, outcome in decided
                ]
        for announcement in announcements:
            self.database.changes.emit(announcement)
        return [outcomes[session.skill_id] for session in sessions]

    @staticmethod
    def _store(work: UnitOfWork, decided: Sequence[tuple[Skill, QualityOutcome]]) -> list[Skill]:
        """Each skill's outcome: quality columns, the bookkeeping it names, a revision and an
        audit entry; one executemany per table where the rows allow it. Announcing is the
        caller's."""
        update_rows(
            work.session.connection(),
            SkillRow,
            ("id",),
            [
                {
                    "id": current.id,
                    "verification_count": outcome.quality.verification_count,
                    "success_rate": outcome.quality.success_rate,
                    "average_rating": outcome.quality.average_rating,
                    "confidence": outcome.quality.confidence.value,
                    "last_verified": outcome.quality.last_verified,
                }
                for current, outcome in decided
            ],
        )
        write_run_results(work, [(c.id, o.run_result) for c, o in decided if o.run_result is not None])
        write_interval(work, [(c.id, o.interval) for c, o in decided if o.interval is not None])
        for current, outcome in decided:
            if outcome.plays is not None:
                claim_plays(work, current.id, outcome.plays)
        latest = latest_revisions(work.session, [current.id for current, _ in decided])
        stored: list[Skill] = []
        revisions: list[dict[str, object]] = []
        audit: list[dict[str, object]] = []
        for current, outcome in decided:
            skill = replace(current, quality=outcome.quality)  # quality columns do not bump the version
            action = AuditAction(outcome.action)
            number = latest.get(current.id, (0, None))[0] + 1
            revisions.append(work.revision_row(skill, number, action.value.removeprefix("skill."), outcome.message))
            audit.append(work.audit_row(action, current.id, number, outcome.details))
            stored.append(skill)
        insert_rows(work.session.connection(), RevisionRow, revisions)
        insert_rows(work.session.connection(), AuditRow, audit)
        return stored

    def verifications(self, skill_id: str) -> list[VerificationRecord]:
        """The skill's evidence, oldest first."""
        with self.database.read() as session:
            return _evidence(session, skill_id)

    def verifications_many(self, skill_ids: Sequence[str]) -> dict[str, list[VerificationRecord]]:
        """The evidence of several skills (only those that have some), each oldest first."""
        with self.database.read() as session:
            return {skill_id: records for skill_id, records in _evidence_of(session, skill_ids).items() if records}

    def compositions(self, skill_id: str) -> list[Composition]:
        """The skills used together with this one, most successful first (D057 compositions)."""
        with self.database.read() as session:
            return read_compositions(session, skill_id)

    def record_composition(self, skill_a: str, skill_b: str, *, successes: int = 1) -> None:
        """Count a successful use of ``skill_a`` followed by ``skill_b`` (D057 compositions)."""
        with self._work(AuditAction.COMPOSE) as work:
            session = work.session
            work.touch((skill_a, skill_b))
            for skill_id in (skill_a, skill_b):
                if session.get(SkillRow, skill_id) is None:
                    raise SkillNotFound(skill_id)
            if skill_a == skill_b:
                raise InvalidSkillData([Issue("skill_b", "a skill cannot be composed with itself")])
            for skill_id in (skill_a, skill_b):
                work.record_untracked(skill_id, work.load_valid(skill_id))
            pair = session.get(SkillCompositionRow, (skill_a, skill_b))
            if pair is None:
                session.add(SkillCompositionRow(skill_a=skill_a, skill_b=skill_b, success_count=successes))
            else:
                pair.success_count = (pair.success_count or 0) + successes
            session.flush()
            details: dict[str, JsonInput] = {"first": skill_a, "then": skill_b, "successes": successes}
            for skill_id in (skill_a, skill_b):
                number = work.revision(work.load(skill_id), "compose", "")
                work.audit(AuditAction.COMPOSE, skill_id, number, details)


def verification_columns(skill: Skill, record: VerificationRecord) -> dict[str, object]:
    """An evidence row; a record without a body hash gets the skill's (it was gathered with it)."""
    columns: dict[str, object] = record_to_document(record)
    columns["skill_id"] = skill.id
    columns["body_hash"] = record.body_hash or body_hash(skill)
    return columns


def _insert_records(
    work: UnitOfWork, records: Sequence[tuple[Skill, VerificationRecord]], run_id: str | None = None
) -> None:
    """Evidence rows, in order, in one executemany; ``run_id`` fills migration 7's column (not
    mapped), the key that stores a run's session once."""
    rows = [{**verification_columns(skill, record), "run_id": run_id} for skill, record in records]
    if not rows:
        return
    columns = list(rows[0])
    work.session.execute(
        text(
            f"INSERT INTO studio_verifications ({', '.join(columns)}) "
            f"VALUES ({', '.join(':' + column for column in columns)})"
        ),
        rows,
    )


def _runs_evidence_stored(work: UnitOfWork, run_id: str, skill_ids: Sequence[str]) -> set[str]:
    """The skills whose session of run ``run_id`` is stored already (migration 7's key)."""
    stored: set[str] = set()
    for placeholders, values in id_lists(skill_ids):
        rows = work.session.execute(
            text(f"SELECT skill_id FROM studio_verifications WHERE run_id = :run AND skill_id IN ({placeholders})"),
            {"run": run_id, **values},
        )
        stored.update(str(skill_id) for (skill_id,) in rows)
    return stored


def _evidence(session: Session, skill_id: str) -> list[VerificationRecord]:
    return _evidence_of(session, [skill_id])[skill_id]


def _evidence_of(session: Session, skill_ids: Sequence[str]) -> dict[str, list[VerificationRecord]]:
    """Each skill's evidence (an empty list for none), oldest first."""
    out: dict[str, list[VerificationRecord]] = {skill_id: [] for skill_id in skill_ids}
    for chunk in chunks(skill_ids):
        rows = session.scalars(
            select(VerificationRow)
            .where(VerificationRow.skill_id.in_(chunk))
            .order_by(VerificationRow.skill_id, VerificationRow.recorded_at, VerificationRow.id)
        )
        for row in rows:
            out[row.skill_id].append(_record(row))
    return out


def _record(row: VerificationRow) -> VerificationRecord:
    return VerificationRecord(
        row.recorded_at,
        EvidenceKind(row.kind),
        row.wins,
        row.losses,
        row.draws,
        row.errors,
        row.opponent,
        row.rating,
        row.rated,
        row.engine_version,
        row.body_hash,
        row.note,
    )


__all__ = ["Evidence", "Recompute", "RunSession", "verification_columns"]
