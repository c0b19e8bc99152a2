"""The trash: deleted skills kept restorably, exactly as they were stored, until it is emptied.

Moving to the trash, restoring and emptying are a person's actions (``ReviewNotAllowed`` for
any other actor). An import may trash the skills an older version of its package brought; it
does so through :func:`move_to_trash` inside its own unit of work.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from sqlalchemy import delete, insert, select

from skillstudio.model import Skill
from skillstudio.store.errors import SkillExists, SkillNotFound
from skillstudio.store.events import AuditAction
from skillstudio.store.migrations import D057_SKILL_COLUMNS
from skillstudio.store.orm import (
    ReviewDecisionRow,
    RevisionRow,
    RiskFindingRow,
    SkillCompositionRow,
    SkillEmbeddingRow,
    SkillExtrasRow,
    SkillMetaRow,
    SkillRow,
    SkillVersionRow,
    TrashRow,
    VerificationRow,
)
from skillstudio.store.query import chunks
from skillstudio.store.skill_rows import META_COLUMNS
from skillstudio.store.types import JsonObject, TrashEntry
from skillstudio.store.unit_of_work import StorePart, UnitOfWork

# What emptying the trash deletes with each skill: all it has besides the audit log, which
# keeps the fact.
_PURGED = (
    (TrashRow, TrashRow.skill_id),
    (RevisionRow, RevisionRow.skill_id),
    (VerificationRow, VerificationRow.skill_id),
    (SkillVersionRow, SkillVersionRow.skill_id),
    (SkillExtrasRow, SkillExtrasRow.skill_id),
    (ReviewDecisionRow, ReviewDecisionRow.skill_id),
    (RiskFindingRow, RiskFindingRow.skill_id),
)


class Trash(StorePart):
    """``repository.trash``: delete (to the trash), restore, empty, and what is in it."""

    def delete(self, skill_id: str, *, message: str = "") -> None:
        """Move a skill to the trash, with its embedding and compositions, restorably."""
        self.delete_many([skill_id], message=message)

    def delete_many(
        self, skill_ids: Sequence[str], *, message: str = "", action: AuditAction = AuditAction.DELETE
    ) -> int:
        """Move skills to the trash in one transaction (``action``: ``skill.delete``, or
        ``skill.prune`` for pruning); a person's action (ReviewNotAllowed else)."""
        self._require_human("move skills to the trash")
        with self._work(action) as work:
            work.remove(skill_ids)
            for skill_id in dict.fromkeys(skill_ids):
                move_to_trash(work, skill_id, message)
        return len(skill_ids)

    def restore(self, skill_id: str, *, message: str = "") -> Skill | None:
        """Bring a skill back from the trash, exactly as it was stored. Returns it, or None if
        the restored row is not a valid skill (it was trashed that way)."""
        self._require_human("restore skills from the trash")
        with self._work(AuditAction.RESTORE) as work:
            session = work.session
            work.touch((skill_id,))
            entry = session.get(TrashRow, skill_id)
            if entry is None:
                raise SkillNotFound(skill_id, in_trash=True)
            if session.get(SkillRow, skill_id) is not None:
                raise SkillExists(skill_id)
            snapshot = json.loads(entry.snapshot)
            session.execute(insert(SkillRow).values(snapshot["row"]))
            if snapshot["meta"] is not None:
                session.execute(insert(SkillMetaRow).values(skill_id=skill_id, **snapshot["meta"]))
            if entry.embedding is not None:
                session.add(
                    SkillEmbeddingRow(skill_id=skill_id, embedding=entry.embedding, model_id=entry.embedding_model)
                )
            for skill_a, skill_b, count in json.loads(entry.compositions):
                partner = skill_b if skill_a == skill_id else skill_a
                if session.get(SkillRow, partner) is not None:  # partners may be gone meanwhile
                    session.add(SkillCompositionRow(skill_a=skill_a, skill_b=skill_b, success_count=count))
            session.delete(entry)
            session.flush()
            restored = work.load_valid(skill_id)
            if restored is not None:
                number = work.revision(restored, "restore", message)
            else:
                number = work.raw_revision(skill_id, snapshot, "restore", message)
            work.audit(AuditAction.RESTORE, skill_id, number, {})
        return restored

    def empty(self, skill_ids: Sequence[str] | None = None) -> int:
        """Delete trashed skills (all, or these) for good, with their history; the audit log
        keeps the fact. A person's action: other actors get ReviewNotAllowed."""
        self._require_human("empty the trash")
        with self._work(AuditAction.PURGE) as work:
            statement = select(TrashRow.skill_id)
            if skill_ids is not None:
                statement = statement.where(TrashRow.skill_id.in_(list(skill_ids)))
            doomed = list(work.session.scalars(statement))
            work.remove(doomed)
            for chunk in chunks(doomed):
                for table, column in _PURGED:
                    work.session.execute(delete(table).where(column.in_(chunk)))
            for skill_id in doomed:
                work.audit(AuditAction.PURGE, skill_id, None, {})
        return len(doomed)

    def entries(self) -> list[TrashEntry]:
        """What is in the trash, most recently deleted first."""
        with self.database.read() as session:
            rows = session.scalars(select(TrashRow).order_by(TrashRow.deleted_at.desc()))
            return [
                TrashEntry(
                    row.skill_id,
                    str(json.loads(row.snapshot)["row"].get("name", "")),
                    row.deleted_at,
                    row.deleted_by,
                    row.message,
                )
                for row in rows
            ]


def move_to_trash(work: UnitOfWork, skill_id: str, message: str) -> None:
    """Move one skill to the trash inside ``work`` (audited as ``work.action``).

    The trash keeps the exact stored values, so a restore gives back the same row even when it
    was not a valid skill (e.g. written by a buggy engine)."""
    session = work.session
    row = session.get(SkillRow, skill_id)
    if row is None:
        raise SkillNotFound(skill_id)
    current = work.load_valid(skill_id)
    work.record_untracked(skill_id, current)
    meta = session.get(SkillMetaRow, skill_id)
    embedding = session.get(SkillEmbeddingRow, skill_id)
    pairs = session.scalars(
        select(SkillCompositionRow).where(
            (SkillCompositionRow.skill_a == skill_id) | (SkillCompositionRow.skill_b == skill_id)
        )
    ).all()
    snapshot: JsonObject = {
        "row": {column: getattr(row, column) for column in D057_SKILL_COLUMNS},
        "meta": None if meta is None else {c: getattr(meta, c) for c in META_COLUMNS},
    }
    session.add(
        TrashRow(
            skill_id=skill_id,
            deleted_at=work.now,
            deleted_by=work.actor.id,
            message=message,
            snapshot=json.dumps(snapshot, ensure_ascii=False),
            embedding=None if embedding is None else embedding.embedding,
            embedding_model=None if embedding is None else embedding.model_id,
            compositions=json.dumps([[p.skill_a, p.skill_b, p.success_count] for p in pairs]),
        )
    )
    if current is not None:
        number = work.revision(current, "delete", message)
    else:
        number = work.raw_revision(skill_id, snapshot, "delete", message)
    for pair in pairs:
        session.delete(pair)
    if embedding is not None:
        session.delete(embedding)
    if meta is not None:
        session.delete(meta)
    session.flush()
    session.delete(row)
    session.flush()
    work.audit(work.action, skill_id, number, {"name": row.name})


__all__ = ["Trash", "move_to_trash"]
