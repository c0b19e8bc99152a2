"""What happened to skills: their revisions (full snapshots) and the audit log, read back.

Both are written by every mutation inside its :class:`~skillstudio.store.unit_of_work.UnitOfWork`;
this module only reads them (snapshots through :func:`~skillstudio.store.snapshots.decode_snapshot`).
"""

from __future__ import annotations

import json

from sqlalchemy import select
from sqlalchemy.orm import Session

from skillstudio.store.database import Database
from skillstudio.store.errors import SkillNotFound
from skillstudio.store.orm import AuditRow, RevisionRow
from skillstudio.store.snapshots import decode_snapshot
from skillstudio.store.types import AuditEntry, JsonObject, Revision


class History:
    """``repository.history``: revisions and the audit log."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def revisions(self, skill_id: str) -> list[Revision]:
        """The skill's history, oldest first (also for skills now in the trash)."""
        with self.database.read() as session:
            rows = session.scalars(
                select(RevisionRow).where(RevisionRow.skill_id == skill_id).order_by(RevisionRow.number)
            )
            return [_revision(row) for row in rows]

    def revision(self, skill_id: str, number: int) -> Revision:
        with self.database.read() as session:
            return revision_of(session, skill_id, number)

    def audit(
        self,
        *,
        actor: str | None = None,
        action: str | None = None,
        skill_id: str | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int | None = None,
    ) -> list[AuditEntry]:
        """Audit entries, newest first."""
        statement = select(AuditRow).order_by(AuditRow.id.desc())
        if actor is not None:
            statement = statement.where(AuditRow.actor == actor)
        if action is not None:
            statement = statement.where(AuditRow.action == action)
        if skill_id is not None:
            statement = statement.where(AuditRow.skill_id == skill_id)
        if since is not None:
            statement = statement.where(AuditRow.at >= since)
        if until is not None:
            statement = statement.where(AuditRow.at <= until)
        if limit is not None:
            statement = statement.limit(limit)
        with self.database.read() as session:
            return [_audit_entry(row) for row in session.scalars(statement)]

    def actors(self) -> list[str]:
        """Everyone in the audit log, sorted: asked of SQLite, since the log holds an entry per
        write (a million of them for a million created skills)."""
        with self.database.read() as session:
            return list(session.scalars(select(AuditRow.actor).distinct().order_by(AuditRow.actor)))


def revision_of(session: Session, skill_id: str, number: int) -> Revision:
    row = session.scalar(select(RevisionRow).where(RevisionRow.skill_id == skill_id, RevisionRow.number == number))
    if row is None:
        raise SkillNotFound(f"{skill_id} (revision {number})")
    return _revision(row)


def _revision(row: RevisionRow) -> Revision:
    return Revision(
        row.skill_id,
        row.number,
        row.version,
        row.action,
        row.author,
        row.created_at,
        row.message,
        decode_snapshot(row.snapshot),
    )


def _audit_entry(row: AuditRow) -> AuditEntry:
    return AuditEntry(
        row.id,
        row.at,
        row.actor,
        row.actor_kind,
        row.action,
        row.skill_id,
        row.revision,
        _json_object(row.details or "{}"),
    )


def _json_object(text: str) -> JsonObject:
    value: JsonObject = json.loads(text)  # we wrote it: always a JSON object
    return value


__all__ = ["History", "revision_of"]
