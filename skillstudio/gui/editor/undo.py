"""Undo for the skill editor: snapshot commands, and the undo keys kept for the editor's stack.

Each command holds the session's form before and after one edit; undo and redo put a snapshot
back. The form is immutable, so a snapshot is just a reference.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QChildEvent, QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent, QUndoCommand
from PySide6.QtWidgets import QWidget

from skillstudio.curation.form import FormState


class SnapshotTarget(Protocol):
    def apply_snapshot(self, form: FormState, key: str) -> None: ...


_MERGE_IDS: dict[str, int] = {}


def _merge_id(merge_key: str) -> int:
    return _MERGE_IDS.setdefault(merge_key, len(_MERGE_IDS) + 1)


class SnapshotCommand(QUndoCommand):
    """One committed edit. ``merge_key`` (the field plus a focus generation) lets consecutive
    typing in the same field become one command; None never merges."""

    def __init__(
        self,
        target: SnapshotTarget,
        before: FormState,
        after: FormState,
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
        self._skip_redo = applied  # the edit is already in the session when it is pushed

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


def is_undo_key(event: QKeyEvent) -> bool:
    """Ctrl+Z, Ctrl+Shift+Z or Ctrl+Y."""
    modifiers = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
    control = Qt.KeyboardModifier.ControlModifier
    return (event.key() == Qt.Key.Key_Z and modifiers in (control, control | Qt.KeyboardModifier.ShiftModifier)) or (
        event.key() == Qt.Key.Key_Y and modifiers == control
    )


class UndoKeys(QObject):
    """Keeps the undo keys for a window's own Undo and Redo actions, and reports focus moves.

    The focused field would take Ctrl+Z for its own undo (a line edit does) before the window's
    shortcut sees it. This filter watches the window's own widgets only, those shown later
    included (a table's cell editor), and declines the undo keys for them, so that the window's
    actions fire; a widget with the ``own_undo`` property (or inside one) keeps its own undo.
    Focus moving in or out of one of them ends a run of typing (``focus_moved``).
    """

    focus_moved = Signal(bool)  # True: focus left one of the window's widgets

    _WATCHED = frozenset(
        {QEvent.Type.ShortcutOverride, QEvent.Type.ChildPolished, QEvent.Type.FocusIn, QEvent.Type.FocusOut}
    )

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        self._watch(window)

    def _watch(self, widget: QWidget) -> None:
        for each in (widget, *widget.findChildren(QWidget)):
            if each.window() is self._window:  # a dialog it opens (conflict, history) keeps its keys
                each.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind not in self._WATCHED:
            return False
        if isinstance(event, QChildEvent):
            # Polished, not added: a child is announced as added before it is fully constructed.
            child = event.child()
            if isinstance(child, QWidget):
                self._watch(child)
            return False
        if kind in (QEvent.Type.FocusIn, QEvent.Type.FocusOut):
            self.focus_moved.emit(kind == QEvent.Type.FocusOut)
            return False
        assert isinstance(event, QKeyEvent)
        if not isinstance(watched, QWidget) or not is_undo_key(event) or self._keeps_own_undo(watched):
            return False
        event.ignore()  # not overridden: the window's shortcut fires
        return True

    def _keeps_own_undo(self, widget: QWidget) -> bool:
        current: QWidget | None = widget
        while current is not None and current is not self._window:
            if current.property("own_undo"):
                return True
            current = current.parentWidget()
        return False
