"""The main window. For now an overview of the open library; the browser will live here."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFormLayout, QGroupBox, QHBoxLayout, QLabel, QMainWindow, QVBoxLayout, QWidget

from skillstudio.store import SkillRepository


class QtMainWindow(QMainWindow):
    def __init__(self, repository: SkillRepository) -> None:
        super().__init__()
        self.repository = repository
        path = repository.database.path
        self.setWindowTitle(f"{path.stem} — SkillStudio")
        self.resize(900, 560)

        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        self.menuBar().addMenu("&File").addAction(quit_action)

        central = QWidget(self)
        layout = QVBoxLayout(central)
        heading = QLabel(f"<h2>{path.stem}</h2><p>{path}</p>", central)
        heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(heading)
        self.summary = QLabel(central)
        layout.addWidget(self.summary)
        self.groups = QHBoxLayout()
        layout.addLayout(self.groups)
        layout.addStretch(1)
        self.setCentralWidget(central)
        self.refresh()

    def refresh(self) -> None:
        stats = self.repository.stats()
        self.summary.setText(f"{_count(stats.total, 'skill')}, {stats.in_trash} in the trash")
        while self.groups.count():
            item = self.groups.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        for title, counts in (
            ("Domain", stats.by_domain),
            ("Confidence", stats.by_confidence),
            ("Game module", stats.by_game_module),
            ("Source", stats.by_source),
        ):
            box = QGroupBox(title, self)
            form = QFormLayout(box)
            for key, count in sorted(counts.items()):
                form.addRow(key.replace("_", " "), QLabel(str(count), box))
            self.groups.addWidget(box)
        self.statusBar().showMessage(_count(stats.total, "skill"))


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
