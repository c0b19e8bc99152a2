"""What a skill earned in play: verification records, D057's quality columns, compositions.

Verification's outcome is stored in one transaction (docs/verification.md): the evidence record,
the quality figures, a revision, an audit entry, and the bookkeeping verification asked for (the
run's row for the skill, the overall interval, the plays a file reported). None of it is a
content change: the skill's version stays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from sqlalchemy import insert, select, text, update
from sqlalchemy.orm import Session

from skillstudio.model import Issue, Skill
from skillstudio.model.evidence import EvidenceKind, VerificationRecord, record_to_document
from skillstudio.store.errors import InvalidSkillData, SkillNotFound
from skillstudio.store.events import AuditAction
from skillstudio.store.orm import SkillCompositionRow, SkillRow, VerificationRow
from skillstudio.store.query import chunks
from skillstudio.store.runs import (
    claim_plays,
    close_unchanged,
    duplicate_games,
    write_interval,
    write_run_result,
)
from skillstudio.store.skill_rows import body_hash, read_compositions
from skillstudio.store.types import Composition, Counts, JsonInput, QualityOutcome, SessionApplied
from skillstudio.store.unit_of_work import StorePart, UnitOfWork

# Given the skill as stored now, all its evidence (the new record included) and the new record as
# stored (without games already credited), decide.
Recompute = Callable[[Skill, list[VerificationRecord], VerificationRecord], QualityOutcome]


class Evidence(StorePart):
    """``repository.evidence``: verification records, quality, and D057's composition counts."""

    def set_quality(self, skill_id: str, outcome: QualityOutcome, *, record: VerificationRecord | None = None) -> Skill:
        """Store ``outcome`` (quality, revision, audit entry, the bookkeeping it names) and
        ``record`` (with the body hash it was gathered with), all in one transaction."""
        with self._work(outcome.action) as work:
            current = work.load(skill_id)
            work.record_untracked(skill_id, current)
            if record is not None:
                _insert_record(work, current, record)
            return self._store(work, current, outcome)

    def apply_session(
        self, skill_id: str, record: VerificationRecord, *, run_id: str, recompute: Recompute
    ) -> SessionApplied:
        """Store run ``run_id``'s session ``record`` and what ``recompute`` decides from it.

        Inside one transaction (BEGIN IMMEDIATE, so writers are serialized):

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
          trusted (``applied``)."""
        with self._work(AuditAction.VERIFY) as work:
            if _run_evidence_stored(work, run_id, skill_id):
                return SessionApplied("already")
            duplicates = duplicate_games(work, run_id, skill_id)
            fresh = replace(
                record,
                wins=record.wins - duplicates.wins,
                losses=record.losses - duplicates.losses,
                draws=record.draws - duplicates.draws,
            )
            if fresh.decided <= 0:
                counts = Counts(record.wins, record.losses, record.draws, record.errors)
                why = (
                    f"all {duplicates.decided} decided games repeat games already credited: nothing changed"
                    if duplicates.decided
                    else f"only error games ({record.errors}): nothing changed"
                )
                close_unchanged(work, run_id, skill_id, counts, duplicates.decided, why)
                return SessionApplied("unchanged", duplicates=duplicates)
            current = work.load(skill_id)
            work.record_untracked(skill_id, current)
            _insert_record(work, current, fresh, run_id=run_id)
            outcome = recompute(current, _evidence(work.session, skill_id), fresh)
            work.action = AuditAction(outcome.action)
            stored = self._store(work, current, outcome)
            return SessionApplied("applied", stored, fresh, duplicates)

    @staticmethod
    def _store(work: UnitOfWork, current: Skill, outcome: QualityOutcome) -> Skill:
        quality = outcome.quality
        work.touch((current.id,))
        work.session.execute(
            update(SkillRow)
            .where(SkillRow.id == current.id)
            .values(
                verification_count=quality.verification_count,
                success_rate=quality.success_rate,
                average_rating=quality.average_rating,
                confidence=quality.confidence.value,
                last_verified=quality.last_verified,
            )
        )
        if outcome.run_result is not None:
            write_run_result(work, current.id, outcome.run_result)
        if outcome.interval is not None:
            write_interval(work, current.id, outcome.interval)
        if outcome.plays is not None:
            claim_plays(work, current.id, outcome.plays)
        stored = replace(current, quality=quality)  # quality columns do not bump the version
        action = AuditAction(outcome.action)
        number = work.revision(stored, action.value.removeprefix("skill."), outcome.message)
        work.audit(action, current.id, number, outcome.details)
        return stored

    def verifications(self, skill_id: str) -> list[VerificationRecord]:
        """The skill's evidence, oldest first."""
        with self.database.read() as session:
            return _evidence(session, skill_id)

    def verifications_many(self, skill_ids: Sequence[str]) -> dict[str, list[VerificationRecord]]:
        """The evidence of several skills (only those that have some), each oldest first."""
        out: dict[str, list[VerificationRecord]] = {}
        with self.database.read() as session:
            for chunk in chunks(skill_ids):
                rows = session.scalars(
                    select(VerificationRow)
                    .where(VerificationRow.skill_id.in_(chunk))
                    .order_by(VerificationRow.skill_id, VerificationRow.recorded_at, VerificationRow.id)
                )
                for row in rows:
                    out.setdefault(row.skill_id, []).append(_record(row))
        return out

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


def _insert_record(work: UnitOfWork, skill: Skill, record: VerificationRecord, *, run_id: str | None = None) -> None:
    row_id = work.session.execute(
        insert(VerificationRow).values(verification_columns(skill, record)).returning(VerificationRow.id)
    ).scalar_one()
    if run_id is not None:  # migration 7's column (not mapped): the key that stores a run's session once
        work.session.execute(
            text("UPDATE studio_verifications SET run_id = :run WHERE id = :id"), {"run": run_id, "id": row_id}
        )


def _run_evidence_stored(work: UnitOfWork, run_id: str, skill_id: str) -> bool:
    """Whether run ``run_id``'s session for the skill is stored already (migration 7's key)."""
    found = work.session.execute(
        text("SELECT 1 FROM studio_verifications WHERE run_id = :run AND skill_id = :skill LIMIT 1"),
        {"run": run_id, "skill": skill_id},
    ).first()
    return found is not None


def _evidence(session: Session, skill_id: str) -> list[VerificationRecord]:
    rows = session.scalars(
        select(VerificationRow)
        .where(VerificationRow.skill_id == skill_id)
        .order_by(VerificationRow.recorded_at, VerificationRow.id)
    )
    return [_record(row) for row in rows]


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


__all__ = ["Evidence", "Recompute", "verification_columns"]
