"""A reviewer's false-positive marks on export privacy findings (migration 10, docs/packages.md).

A mark names one finding of one skill by (field path, kind, sha256 of the flagged text): that
finding then blocks no export and is not redacted. Because the text's hash is the key, editing
the flagged text makes the mark lapse and the finding comes back. Marking and unmarking are a
person's decisions (other actors get ``ReviewNotAllowed``), each in one transaction with one
audit entry (``skill.privacy_mark`` / ``skill.privacy_unmark``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from sqlalchemy import text

from skillstudio.store.errors import SkillNotFound
from skillstudio.store.events import AuditAction
from skillstudio.store.query import id_lists
from skillstudio.store.types import JsonInput, MarkKey
from skillstudio.store.unit_of_work import StorePart


def text_hash(flagged: str) -> str:
    """The sha256 a mark holds for the flagged text."""
    return hashlib.sha256(flagged.encode("utf-8", "surrogatepass")).hexdigest()


class PrivacyMarks(StorePart):
    """``repository.privacy_marks``: reads and writes of ``studio_privacy_marks``."""

    def mark(self, skill_id: str, field: str, kind: str, flagged: str, note: str = "") -> bool:
        """Mark one finding a false positive; False if it was already marked (the note is then
        replaced). Raises SkillNotFound for a skill that is not in the library."""
        self._require_human("mark a privacy finding a false positive")
        return self._write(AuditAction.PRIVACY_MARK, skill_id, field, kind, flagged, note)

    def unmark(self, skill_id: str, field: str, kind: str, flagged: str, note: str = "") -> bool:
        """Take a false-positive mark back; False if there was none (still audited)."""
        self._require_human("unmark a privacy finding")
        return self._write(AuditAction.PRIVACY_UNMARK, skill_id, field, kind, flagged, note)

    def _write(self, action: AuditAction, skill_id: str, field: str, kind: str, flagged: str, note: str) -> bool:
        digest = text_hash(flagged)
        key = {"id": skill_id, "field": field, "kind": kind, "hash": digest}
        with self._work(action) as work:
            connection = work.session.connection()
            if connection.execute(text("SELECT 1 FROM skills WHERE id = :id"), {"id": skill_id}).first() is None:
                raise SkillNotFound(skill_id)
            existed = (
                connection.execute(
                    text(
                        "SELECT 1 FROM studio_privacy_marks WHERE skill_id = :id AND field = :field AND kind = :kind"
                        " AND text_sha256 = :hash"
                    ),
                    key,
                ).first()
                is not None
            )
            if action is AuditAction.PRIVACY_MARK:
                connection.execute(
                    text(
                        "INSERT INTO studio_privacy_marks(skill_id, field, kind, text_sha256, marked_by, marked_at, note)"
                        " VALUES (:id, :field, :kind, :hash, :by, :at, :note)"
                        " ON CONFLICT (skill_id, field, kind, text_sha256) DO UPDATE SET"
                        " marked_by = excluded.marked_by, marked_at = excluded.marked_at, note = excluded.note"
                    ),
                    {**key, "by": self.actor.id, "at": work.now, "note": note},
                )
                changed = not existed
            else:
                connection.execute(
                    text(
                        "DELETE FROM studio_privacy_marks WHERE skill_id = :id AND field = :field AND kind = :kind"
                        " AND text_sha256 = :hash"
                    ),
                    key,
                )
                changed = existed
            details: dict[str, JsonInput] = {
                "field": field,
                "kind": kind,
                "text_sha256": digest,
                "note": note,
                "changed": changed,
            }
            work.audit(action, skill_id, None, details)
            work.touch((skill_id,))
        return changed

    def marked_many(self, ids: Sequence[str]) -> dict[str, set[MarkKey]]:
        """Per skill that has any: its marks as (field, kind, text sha256)."""
        out: dict[str, set[MarkKey]] = {}
        with self.database.read() as session:
            connection = session.connection()
            for marks, params in id_lists(sorted(set(ids))):
                rows = connection.execute(
                    text(
                        f"SELECT skill_id, field, kind, text_sha256 FROM studio_privacy_marks WHERE skill_id IN ({marks})"
                    ),
                    params,
                )
                for skill_id, field, kind, digest in rows:
                    out.setdefault(str(skill_id), set()).add((str(field), str(kind), str(digest)))
        return out

    def is_marked(self, skill_id: str, field: str, kind: str, flagged: str) -> bool:
        return (field, kind, text_hash(flagged)) in self.marked_many([skill_id]).get(skill_id, set())


__all__ = ["MarkKey", "PrivacyMarks", "text_hash"]  # MarkKey lives in types.py
