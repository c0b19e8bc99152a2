"""What every body editor offers the skill editor's body page.

A body editor shows one kind of body. Its *form* (:mod:`skillstudio.curation.form`) is typed
data that captures exactly what the widgets show, invalid input included; the editing session
keeps forms, validates them and turns them into a document. :meth:`BodyEditor.form` reads the
widgets, :meth:`BodyEditor.show_form` fills them without reporting an edit.
"""

from __future__ import annotations

from typing import Any, ClassVar

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLineEdit, QPlainTextEdit, QWidget

from skillstudio.curation.form import BodyForm
from skillstudio.gui.browser_state import BrowserState
from skillstudio.gui.editor.widgets import Located, Marker, PathMap
from skillstudio.model import BodyKind, Issue


class BodyEditor(QWidget):
    """Base class: ``changed(key, mergeable)`` fires on every user edit (never while showing)."""

    changed = Signal(str, bool)
    kind: ClassVar[BodyKind]
    title: ClassVar[str]

    def __init__(self, state: BrowserState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.paths = PathMap()
        self._marker = Marker()
        self._loading = False

    # --- the form -------------------------------------------------------------------------------

    def form(self) -> BodyForm:
        raise NotImplementedError

    def show_form(self, form: Any) -> None:
        self._loading = True
        try:
            self._show(form)
        finally:
            self._loading = False

    def _show(self, form: Any) -> None:
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
