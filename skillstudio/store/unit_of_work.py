"""One write to a library, and what every write records inside it.

A :class:`UnitOfWork` is one ``BEGIN IMMEDIATE`` transaction together with the writers every
mutation shares: the revision writer (a full snapshot per change, compressed), the audit writer, the
snapshot of changes another program made before ours, and the :class:`LibraryChange` announced
once the transaction has committed (never for one that failed). Each part of the repository
opens one per public write; a write that spans parts (an import trashes, adds and replaces)
passes its unit to each step, so it stays one transaction with one announcement.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager

from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session, aliased

from skillstudio.model import Skill, skill_to_document, utc_now
from skillstudio.store.backends import Backend
from skillstudio.store.database import Database
from skillstudio.store.errors import ReviewNotAllowed
from skillstudio.store.events import AuditAction, LibraryChange, change
from skillstudio.store.orm import AuditRow, RevisionRow, SkillVersionRow
from skillstudio.store.query import chunks
from skillstudio.store.skill_rows import load_skill, load_valid_skill
from skillstudio.store.snapshots import encode_snapshot
from skillstudio.store.types import Actor, JsonInput, JsonObject

# The author of revisions that record what another program wrote before our change.
EXTERNAL = Actor("external", "system")


class UnitOfWork:
    """The open transaction of one write. ``session`` is for the store's own modules only."""

    def __init__(self, session: Session, actor: Actor, action: AuditAction, backend: Backend) -> None:
        self.session = session
        self.backend = backend  # what differs between SQLite and PostgreSQL, for the store's own modules
        self.actor = actor
        # What the committed change is announced as; verification learns it inside the transaction.
        self.action = AuditAction(action)
        self.now = utc_now()  # one time for every row the write stores
        self._touched: list[str] = []
        self._removed: list[str] = []
        self._announce = False

    # --- what the announcement says ---------------------------------------------------------------

    def touch(self, skill_ids: Iterable[str]) -> None:
        """These skills are part of the change (in order; repeats are announced once)."""
        self._touched.extend(skill_ids)

    def remove(self, skill_ids: Iterable[str]) -> None:
        """These skills leave the library (trash, prune, purge): touched, and announced as removed."""
        ids = list(skill_ids)
        self._touched.extend(ids)
        self._removed.extend(ids)

    def announce(self) -> None:
        """Announce the change even though it touched no skill (the library's settings)."""
        self._announce = True

    def change(self) -> LibraryChange | None:
        """The change to announce once committed; None when the write touched no skill."""
        if not self._touched and not self._announce:
            return None
        return change(self.action, self._touched, self.actor.id, removed=self._removed)

    # --- reading inside the transaction ----------------------------------------------------------

    def load(self, skill_id: str) -> Skill:
        return load_skill(self.session, skill_id)

    def load_valid(self, skill_id: str) -> Skill | None:
        """The skill, or None if it is gone or its row is not a valid skill (an engine wrote it)."""
        return load_valid_skill(self.session, skill_id)

    # --- revisions and the audit log -------------------------------------------------------------

    def revision(self, skill: Skill, action: str, message: str, *, actor: Actor | None = None) -> int:
        """Store the skill as it is now as its next revision; returns the revision's number."""
        number = self._next_revision(skill.id)
        self.session.execute(insert(RevisionRow).values(self.revision_row(skill, number, action, message, actor=actor)))
        return number

    def raw_revision(self, skill_id: str, snapshot: JsonObject, action: str, message: str) -> int:
        """A revision of a row that is not a valid skill: its raw stored values are the snapshot."""
        number = self._next_revision(skill_id)
        version = self.session.get(SkillVersionRow, skill_id)
        self.session.execute(
            insert(RevisionRow).values(
                skill_id=skill_id,
                number=number,
                version=version.version if version else 0,
                action=action,
                author=self.actor.id,
                created_at=self.now,
                message=message,
                snapshot=encode_snapshot(snapshot),
            )
        )
        return number

    def revision_row(
        self, skill: Skill, number: int, action: str, message: str, *, actor: Actor | None = None
    ) -> dict[str, object]:
        """The columns of a revision, for writes that insert many at once."""
        return self.document_revision_row(skill_to_document(skill), number, action, message, actor=actor)

    def document_revision_row(
        self,
        document: Mapping[str, JsonInput],
        number: int,
        action: str,
        message: str,
        *,
        actor: Actor | None = None,
        snapshot: bytes | None = None,
    ) -> dict[str, object]:
        """:meth:`revision_row` of a skill already serialised (its ``skill_to_document``);
        ``snapshot``: its :func:`encode_snapshot` when the caller encoded many at once."""
        return {
            "skill_id": document["id"],
            "number": number,
            "version": document["version"],
            "action": action,
            "author": (actor or self.actor).id,
            "created_at": self.now,
            "message": message,
            "snapshot": encode_snapshot(document) if snapshot is None else snapshot,
        }

    def audit(
        self, action: AuditAction, skill_id: str | None, revision: int | None, details: Mapping[str, JsonInput]
    ) -> None:
        self.session.execute(insert(AuditRow).values(self.audit_row(action, skill_id, revision, details)))

    def audit_row(
        self, action: AuditAction, skill_id: str | None, revision: int | None, details: Mapping[str, JsonInput]
    ) -> dict[str, object]:
        """The columns of an audit entry, for writes that insert many at once."""
        return {
            "at": self.now,
            "actor": self.actor.id,
            "actor_kind": self.actor.kind,
            "action": AuditAction(action).value,
            "skill_id": skill_id,
            "revision": revision,
            "details": json.dumps(details, ensure_ascii=False, sort_keys=True),
        }

    def record_untracked(self, skill_id: str, current: Skill | None) -> None:
        """Snapshot changes made outside SkillStudio before ours, so history shows them."""
        if current is None:
            return
        latest = self.session.scalar(
            select(RevisionRow).where(RevisionRow.skill_id == skill_id).order_by(RevisionRow.number.desc()).limit(1)
        )
        untracked = untracked_revision(None if latest is None else latest.version, current.version)
        if untracked is not None:
            self.revision(current, *untracked, actor=EXTERNAL)

    def latest_revision(self, skill_id: str) -> int | None:
        return self.session.scalar(select(func.max(RevisionRow.number)).where(RevisionRow.skill_id == skill_id))

    def _next_revision(self, skill_id: str) -> int:
        return (self.latest_revision(skill_id) or 0) + 1


def untracked_revision(snapshot_version: int | None, stored_version: int) -> tuple[str, str] | None:
    """(action, message) of the revision recording changes made outside SkillStudio, given the
    version the skill's newest revision shows (None: it has none) and the stored one; None if
    history is current."""
    if snapshot_version is None:
        return "baseline", "state found in the library (written outside SkillStudio)"
    if snapshot_version != stored_version:
        return "external", "changed outside SkillStudio"
    return None


def latest_revisions(session: Session, skill_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
    """(number, content version) of each skill's newest revision, skills without one left out:
    what ``revision`` and ``record_untracked`` read per skill, for a batch in a few queries."""
    newer = aliased(RevisionRow)
    newest = select(func.max(newer.number)).where(newer.skill_id == RevisionRow.skill_id).scalar_subquery()
    out: dict[str, tuple[int, int]] = {}
    for chunk in chunks(skill_ids):
        rows = session.execute(
            select(RevisionRow.skill_id, RevisionRow.number, RevisionRow.version).where(
                RevisionRow.skill_id.in_(chunk), RevisionRow.number == newest
            )
        )
        out.update((skill_id, (number, version)) for skill_id, number, version in rows)
    return out


@contextmanager
def unit_of_work(database: Database, actor: Actor, action: AuditAction) -> Iterator[UnitOfWork]:
    """A write transaction; once it commits, the skills it touched are announced on
    ``database.changes``. An exception rolls everything back and announces nothing."""
    with database.write() as session:
        work = UnitOfWork(session, actor, action, database.backend)
        yield work
    committed = work.change()
    if committed is not None:
        database.changes.emit(committed)


class StorePart:
    """The repository and each of its writing parts: the library they work on and who their
    writes are recorded as."""

    def __init__(self, database: Database, actor: Actor) -> None:
        self.database = database
        self.actor = actor

    def _work(self, action: AuditAction) -> AbstractContextManager[UnitOfWork]:
        return unit_of_work(self.database, self.actor, action)

    def _require_human(self, what: str) -> None:
        """Guard rail for review, trash and purge: only a person (``Actor.kind == "human"``)."""
        if self.actor.kind != "human":
            raise ReviewNotAllowed(f"{self.actor.kind} {self.actor.id!r} may not {what}; only a person may")


__all__ = ["EXTERNAL", "StorePart", "UnitOfWork", "latest_revisions", "unit_of_work", "untracked_revision"]
