"""A pull's one transaction (``skillstudio pull``, docs/team-library.md): an import, plus the
quality figures an engine changed sent to review.

What is new or changed in content goes through the import (:func:`apply_import`). A skill whose
content the engine left as it was but whose figures it changed is written here: its import
extras (which carry the engine's figures as a claim) are replaced, and it goes back to
``pending`` with a revision and a decision row saying why, for a person to look at. The figures
never become the skill's quality: only this library's own evidence does that.
"""

from __future__ import annotations

from collections.abc import Sequence

from skillstudio.model import ReviewState
from skillstudio.store.database import Database
from skillstudio.store.errors import ConflictError
from skillstudio.store.events import AuditAction
from skillstudio.store.extras import write_extras
from skillstudio.store.imports import apply_import
from skillstudio.store.reviews import record_decision, set_review_state
from skillstudio.store.skill_writes import refuse_duplicate_ids
from skillstudio.store.types import Actor, ImportItem
from skillstudio.store.unit_of_work import unit_of_work


def import_with_claims(
    database: Database,
    actor: Actor,
    added: Sequence[ImportItem],
    replaced: Sequence[ImportItem],
    claimed: Sequence[ImportItem],
    *,
    message: str,
    why: str,
) -> None:
    """All of it in one transaction, or nothing. ``claimed``: stored skills (each at the version
    it was read at, else ConflictError) with the extras to store; ``why`` is the comment of
    their decision rows."""
    refuse_duplicate_ids([item.skill for item in (*added, *replaced, *claimed)])
    with unit_of_work(database, actor, AuditAction.IMPORT) as work:
        apply_import(work, added, replaced, (), message, None)
        work.touch(item.skill.id for item in claimed)
        for item in claimed:
            current = work.load(item.skill.id)
            if current.version != item.skill.version:
                raise ConflictError(yours=item.skill, theirs=current, read_version=item.skill.version)
            work.record_untracked(current.id, current)
            set_review_state(work, current.id, ReviewState.PENDING)
            number = work.revision(work.load(current.id), "import", why)
            record_decision(work, current.id, ReviewState.PENDING, why, number)
            work.audit(AuditAction.IMPORT, current.id, number, {"name": current.name, "reason": why})
        write_extras(work, claimed)


__all__ = ["import_with_claims"]
