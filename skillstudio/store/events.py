"""What changed in a library, announced after each committed write (as Anki's operations do).

A :class:`LibraryChange` is typed: its :class:`AuditAction`, the aspects it touched
(:class:`ChangeKind`), the skills that left the library, and the *initiator*, the object that
asked for the write (a view, a dialog, an operation), so that a view can tell its own echo from
someone else's change. Views read the flags, never the action's spelling.

Callbacks run on the writing thread; the Qt layer re-emits them as queued signals. Changes made
by other processes are not announced here: watch ``Database.data_version()``.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Flag, StrEnum, auto

log = logging.getLogger(__name__)


class AuditAction(StrEnum):
    """Every kind of write; the value is what the audit log stores in its ``action`` column."""

    CREATE = "skill.create"
    UPDATE = "skill.update"
    DELETE = "skill.delete"
    PURGE = "skill.purge"
    RESTORE = "skill.restore"
    IMPORT = "skill.import"
    PRUNE = "skill.prune"
    REVIEW = "skill.review"
    REVIEW_UNDO = "skill.review_undo"  # a reviewer took their decision back
    COMPOSE = "skill.compose"
    EMBED = "skill.embed"
    VERIFY = "skill.verify"
    PROMOTE = "skill.promote"
    DEMOTE = "skill.demote"
    PRIVACY_MARK = "skill.privacy_mark"
    PRIVACY_UNMARK = "skill.privacy_unmark"
    SETTINGS = "library.settings"

    @property
    def kinds(self) -> ChangeKind:
        return _KINDS[self]

    @property
    def label(self) -> str:
        """How a person reads it in the audit log: "Move to trash", "Review decision"."""
        return _LABELS[self]

    @classmethod
    def label_of(cls, stored: str) -> str:
        """The label of an action as the audit log stores it; an unknown one (a newer
        SkillStudio, another program) is shown as stored."""
        try:
            return cls(stored).label
        except ValueError:
            return stored


class ChangeKind(Flag):
    """The aspects of a skill a write can change; a view refreshes only what it shows."""

    NONE = 0
    CONTENT = auto()  # name, description, tags, body, compositions
    QUALITY = auto()  # confidence, success rate, verification count, rating
    MEMBERSHIP = auto()  # a skill joined or left the library (create, trash, restore, prune, ...)
    REVIEW = auto()  # review state, decisions, risk findings and their marks
    RUNS = auto()  # verification evidence recorded by a batch
    VECTORS = auto()  # retrieval embeddings (derived data)
    SETTINGS = auto()  # the library's settings (policy thresholds, prune limits): no skill row changes


_KINDS: dict[AuditAction, ChangeKind] = {
    AuditAction.CREATE: ChangeKind.CONTENT | ChangeKind.MEMBERSHIP | ChangeKind.REVIEW,
    AuditAction.UPDATE: ChangeKind.CONTENT | ChangeKind.REVIEW,
    AuditAction.DELETE: ChangeKind.MEMBERSHIP,
    AuditAction.PURGE: ChangeKind.MEMBERSHIP,
    AuditAction.RESTORE: ChangeKind.MEMBERSHIP | ChangeKind.CONTENT,
    AuditAction.IMPORT: ChangeKind.CONTENT | ChangeKind.MEMBERSHIP | ChangeKind.REVIEW,
    AuditAction.PRUNE: ChangeKind.MEMBERSHIP,
    AuditAction.REVIEW: ChangeKind.REVIEW,
    AuditAction.REVIEW_UNDO: ChangeKind.REVIEW,
    AuditAction.COMPOSE: ChangeKind.CONTENT,
    AuditAction.EMBED: ChangeKind.VECTORS,
    AuditAction.VERIFY: ChangeKind.QUALITY | ChangeKind.RUNS,
    AuditAction.PROMOTE: ChangeKind.QUALITY | ChangeKind.RUNS,
    AuditAction.DEMOTE: ChangeKind.QUALITY | ChangeKind.RUNS,
    AuditAction.PRIVACY_MARK: ChangeKind.REVIEW,
    AuditAction.PRIVACY_UNMARK: ChangeKind.REVIEW,
    AuditAction.SETTINGS: ChangeKind.SETTINGS,
}

_LABELS: dict[AuditAction, str] = {
    AuditAction.CREATE: "Create",
    AuditAction.UPDATE: "Update",
    AuditAction.DELETE: "Move to trash",
    AuditAction.RESTORE: "Restore",
    AuditAction.PURGE: "Purge",
    AuditAction.REVIEW: "Review decision",
    AuditAction.REVIEW_UNDO: "Undo review decision",
    AuditAction.PROMOTE: "Promote",
    AuditAction.DEMOTE: "Demote",
    AuditAction.VERIFY: "Verify",
    AuditAction.IMPORT: "Import",
    AuditAction.PRUNE: "Prune",
    AuditAction.COMPOSE: "Compose",
    AuditAction.EMBED: "Embed",
    AuditAction.PRIVACY_MARK: "Mark not private",
    AuditAction.PRIVACY_UNMARK: "Unmark not private",
    AuditAction.SETTINGS: "Library settings",
}

# Who asked for the writes made in this context (thread or task); see initiated_by().
_initiator: contextvars.ContextVar[object | None] = contextvars.ContextVar("skillstudio_initiator", default=None)


@dataclass(frozen=True)
class LibraryChange:
    action: AuditAction
    skill_ids: tuple[str, ...]  # every skill the write touched, in order, without repeats
    actor: str  # the Actor id recorded in the audit log
    removed: frozenset[str] = frozenset()  # skills that left the library (trash, prune, purge)
    initiator: object | None = field(default=None, compare=False)

    @property
    def kinds(self) -> ChangeKind:
        return self.action.kinds

    def touches(self, kind: ChangeKind) -> bool:
        return bool(self.kinds & kind)

    def removes(self, skill_id: str) -> bool:
        """Whether ``skill_id`` left the library in this change: views showing it should let go."""
        return skill_id in self.removed

    def started_by(self, initiator: object) -> bool:
        return self.initiator is not None and self.initiator is initiator


def change(action: AuditAction, skill_ids: Iterable[str], actor: str, *, removed: Iterable[str] = ()) -> LibraryChange:
    """A change stamped with the initiator of the current context."""
    return LibraryChange(
        action, tuple(dict.fromkeys(skill_ids)), actor, removed=frozenset(removed), initiator=_initiator.get()
    )


@contextmanager
def initiated_by(initiator: object | None) -> Iterator[None]:
    """Writes made inside this block announce ``initiator`` as the one who asked for them."""
    token = _initiator.set(initiator)
    try:
        yield
    finally:
        _initiator.reset(token)


Listener = Callable[[LibraryChange], None]


class ChangeBus:
    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` after every committed change; returns a function that unsubscribes."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def emit(self, change: LibraryChange) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(change)
            except Exception:  # a broken view must not turn a committed write into an error
                log.exception("a library change listener failed")
