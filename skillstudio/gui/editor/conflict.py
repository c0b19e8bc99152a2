"""Shown when a save is refused because someone else changed the skill first."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from skillstudio.gui.qt_diff_view import QtDiffView
from skillstudio.gui.rich_text import escaped
from skillstudio.model import Skill


class QtConflictDialog(QDialog):
    """Their version (in the library now) against yours (not saved); never overwrites."""

    RELOAD_THEIRS = 2
    KEEP_EDITING = 0

    def __init__(self, theirs: Skill, yours: Skill, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Conflict: the skill changed in the library")
        self.resize(980, 620)
        heading = QLabel(
            f"<b>“{escaped(theirs.name)}” was changed in the library since you opened it.</b> Nothing was saved.",
            self,
        )
        heading.setWordWrap(True)
        explanation = QLabel(
            f"The library now holds version {theirs.version}. "
            "<b>Reload theirs</b> shows the library's version in the editor; your edit is gone from the "
            "form, but Undo (Ctrl+Z) brings it back so that you can save it on top of theirs. "
            "<b>Keep editing</b> leaves your edit in the form (saving will be refused again until you reload).",
            self,
        )
        explanation.setWordWrap(True)
        self.diff = QtDiffView(self)
        self.diff.set_skills(
            theirs,
            yours,
            old_label=f"Theirs: in the library now (version {theirs.version})",
            new_label="Yours: your edit (not saved)",
            old_title="Theirs (in the library)",
            new_title="Yours (not saved)",
        )
        self.reload_button = QPushButton("&Reload theirs (discard mine)", self)
        self.reload_button.setAutoDefault(False)
        self.reload_button.clicked.connect(lambda: self.done(self.RELOAD_THEIRS))
        self.keep_button = QPushButton("&Keep editing", self)
        self.keep_button.setDefault(True)
        self.keep_button.clicked.connect(lambda: self.done(self.KEEP_EDITING))
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.reload_button)
        buttons.addWidget(self.keep_button)
        layout = QVBoxLayout(self)
        layout.addWidget(heading)
        layout.addWidget(explanation)
        layout.addWidget(self.diff, 1)
        layout.addLayout(buttons)
        self.keep_button.setFocus(Qt.FocusReason.OtherFocusReason)
