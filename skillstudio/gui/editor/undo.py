"""Undo by snapshots: each command holds the editor's form state before and after one edit."""

from __future__ import annotations

from typing import Any, Protocol

from PySide6.QtGui import QUndoCommand


class SnapshotTarget(Protocol):
    def apply_snapshot(self, state: dict[str, Any], key: str) -> None: ...


_MERGE_IDS: dict[str, int] = {}


def _merge_id(merge_key: str) -> int:
    return _MERGE_IDS.setdefault(merge_key, len(_MERGE_IDS) + 1)


class SnapshotCommand(QUndoCommand):
    """One committed edit. ``merge_key`` (the field plus a focus generation) lets consecutive
    typing in the same field become one command; None never merges."""

    def __init__(
        self,
        target: SnapshotTarget,
        before: dict[str, Any],
        after: dict[str, Any],
        *,
        key: str,
        text: str,
        merge_key: str | None = None,
        applied: bool = True,
    ) -> None:
        super().__init__(text)
        self.target = target
        self.before = before
        self.after = after
        self.key = key
        self.merge_key = merge_key
        self._skip_redo = applied  # the edit is already on screen when it is pushed

    def id(self) -> int:
        return -1 if self.merge_key is None else _merge_id(self.merge_key)

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, SnapshotCommand) or other.merge_key is None or other.merge_key != self.merge_key:
            return False
        self.after = other.after
        if self.after == self.before:
            self.setObsolete(True)  # typed and deleted again: nothing left to undo
        return True

    def redo(self) -> None:
        if self._skip_redo:
            self._skip_redo = False
            return
        self.target.apply_snapshot(self.after, self.key)

    def undo(self) -> None:
        self.target.apply_snapshot(self.before, self.key)
