"""What every body editor offers the skill editor.

A body editor shows one kind of body. Its *state* is plain data (dicts, lists, strings) that
captures exactly what the widgets show, invalid input included; the skill editor keeps states
on its undo stack and turns them into a document with :meth:`BodyEditor.body_from_state` when
it validates or saves. For most bodies the state is already the serde body; the encounter
editor keeps scene values as the text the user typed (which may not parse yet).
"""

from __future__ import annotations

from typing import Any, ClassVar

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLineEdit, QPlainTextEdit, QWidget

from skillstudio.gui.editor.widgets import Located, Marker, PathMap
from skillstudio.model import BodyKind, Issue, SkillBody, body_to_serde
from skillstudio.store import SkillRepository


class BodyEditor(QWidget):
    """Base class: ``changed(key, mergeable)`` fires on every user edit (never while loading)."""

    changed = Signal(str, bool)
    kind: ClassVar[BodyKind]
    title: ClassVar[str]

    def __init__(self, repository: SkillRepository, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.repository = repository
        self.paths = PathMap()
        self._marker = Marker()
        self._loading = False

    # --- state ----------------------------------------------------------------------------------

    @classmethod
    def default_body(cls) -> SkillBody:
        raise NotImplementedError

    @classmethod
    def state_from_body(cls, inner: dict[str, Any]) -> dict[str, Any]:
        """The editor state showing a canonical serde body (the inside of ``{Variant: ...}``)."""
        return inner

    @classmethod
    def body_from_state(cls, state: dict[str, Any], issues: list[Issue]) -> dict[str, Any]:
        """The body document for a state; problems only the form can see go to ``issues``."""
        return state

    @classmethod
    def default_state(cls) -> dict[str, Any]:
        return cls.state_from_body(body_to_serde(cls.default_body())[cls.kind.serde])

    def state(self) -> dict[str, Any]:
        raise NotImplementedError

    def set_state(self, state: dict[str, Any]) -> None:
        self._loading = True
        try:
            self._show(state)
        finally:
            self._loading = False

    def _show(self, state: dict[str, Any]) -> None:
        raise NotImplementedError

    # --- edits ----------------------------------------------------------------------------------

    def _emit(self, key: str, mergeable: bool = False) -> None:
        if not self._loading:
            self.changed.emit(key, mergeable)

    def _watch_line(self, widget: QLineEdit, key: str) -> None:
        widget.textEdited.connect(lambda _text: self._emit(key, True))

    def _watch_text(self, widget: QPlainTextEdit, key: str) -> None:
        widget.textChanged.connect(lambda: self._emit(key, True))

    # --- issues ---------------------------------------------------------------------------------

    def locate(self, path: str) -> Located | None:
        """The widget (and table cell) editing the field at ``path`` ("body.plan...")."""
        return self.paths.locate(path)

    def prepare_focus(self, path: str) -> None:
        """Bring the part of the editor showing ``path`` into view (e.g. select a scene)."""

    def show_issues(self, issues: list[Issue]) -> None:
        """Mark the widgets and cells the issues (all about this body) concern."""
        self._marker.apply(issues, self.locate)
