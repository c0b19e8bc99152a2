"""The editor's Raw YAML page: the skill as YAML text, edited and applied to the form.

The text follows the form while it is not being edited; once the person types in it, it stays
as typed until applied (one undo step) or discarded. Problems come from the session as typed
results (a line and column for text that is not YAML, a field path for a wrong value).
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from skillstudio.curation.session import EditSession, FormChange, YamlApplied, YamlRejected
from skillstudio.gui.browser_state import BrowserState
from skillstudio.gui.editor.page_base import EditorPage, subscribe
from skillstudio.gui.editor.widgets import fixed_font

SHOWN_PROBLEMS = 12
ERROR_COLOR = "#b42318"


class RawYamlPage(EditorPage):
    """``apply_requested`` fires for the Apply button and Ctrl+Return: the editor finishes the
    form's pending edits, then calls :meth:`apply`."""

    apply_requested = Signal()

    def __init__(self, state: BrowserState, session: EditSession, parent: QWidget | None = None) -> None:
        super().__init__(state, session, parent)
        self._text_edited = False  # the text differs from the form: it is not replaced
        self._stale = True  # the form changed while the page was hidden
        self._loading = False
        intro = QLabel(
            "The skill as YAML, in the canonical form (docs/formats.md). Edit it and apply to update the "
            "form; id, provenance source, quality and dates are read-only here too.",
            self,
        )
        intro.setWordWrap(True)
        self.raw_edit = QPlainTextEdit(self)
        self.raw_edit.setFont(fixed_font())
        self.raw_edit.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.raw_edit.setProperty("own_undo", True)  # its own undo until applied
        self.raw_edit.setTabChangesFocus(False)
        self.raw_edit.textChanged.connect(self._text_changed)
        self.raw_status = QLabel(self)
        self.raw_status.setWordWrap(True)
        self.raw_status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.raw_apply_button = QPushButton("A&pply YAML", self)
        self.raw_apply_button.setToolTip("Check the YAML and put it into the form (Ctrl+Return)")
        self.raw_apply_button.clicked.connect(self.apply_requested)
        self.raw_reset_button = QPushButton("Discard YAML edits (show the &form)", self)
        self.raw_reset_button.clicked.connect(lambda: self.refresh(force=True))
        shortcut = QShortcut(QKeySequence("Ctrl+Return"), self.raw_edit, context=Qt.ShortcutContext.WidgetShortcut)
        shortcut.activated.connect(self.apply_requested)
        buttons = QHBoxLayout()
        buttons.addWidget(self.raw_status, 1)
        buttons.addWidget(self.raw_reset_button)
        buttons.addWidget(self.raw_apply_button)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.raw_edit, 1)
        layout.addLayout(buttons)
        subscribe(self, session.events.form, self._form_changed)

    def refresh(self, *, force: bool = False) -> None:
        """Show the form as YAML, unless the text is being edited (``force`` discards that)."""
        if self._text_edited and not force:
            return
        self._loading = True
        try:
            text = self.session.yaml_text()
            if self.raw_edit.toPlainText() != text:
                self.raw_edit.setPlainText(text)
        finally:
            self._loading = False
        self._text_edited = self._stale = False
        valid = self.session.valid_skill is not None
        self.raw_status.setText("" if valid else "The form has problems; this shows it as it is.")

    def apply(self) -> bool:
        """Put the text into the form (one undo step); False, with the problems shown, if it
        is not a valid skill."""
        result = self.session.apply_yaml(self.raw_edit.toPlainText())
        if isinstance(result, YamlRejected):
            problems = result.problems
            lines = "<br>".join(escape(str(problem), quote=False) for problem in problems[:SHOWN_PROBLEMS])
            more = f"<br>… and {len(problems) - SHOWN_PROBLEMS} more" if len(problems) > SHOWN_PROBLEMS else ""
            self.raw_status.setText(f"<span style='color:{ERROR_COLOR}'><b>Not applied:</b><br>{lines}{more}</span>")
            return False
        assert isinstance(result, YamlApplied)
        self.refresh(force=True)
        note = "Applied to the form."
        if result.ignored:
            note += " Read-only fields were left as they were: " + ", ".join(result.ignored) + "."
        self.raw_status.setText(escape(note, quote=False))
        return True

    def _text_changed(self) -> None:
        if self._loading:
            return
        self._text_edited = True
        self.raw_status.setText("Edited: apply (Ctrl+Return) to put it into the form.")

    def _form_changed(self, _change: FormChange) -> None:
        if self.isVisible():
            self.refresh()
        else:
            self._stale = True  # rendered when shown: YAML for every keystroke nobody sees is waste

    def showEvent(self, event: QShowEvent) -> None:
        if self._stale:
            self.refresh()
        super().showEvent(event)
