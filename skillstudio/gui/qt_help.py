"""The Help menu's windows: the keyboard shortcuts, the documentation, About SkillStudio.

The shortcut list is read from the actions the menus hold when it opens, so it always says what
the keys do now. The documentation is the README and docs/ this copy ships, shown locally.
"""

from __future__ import annotations

import platform
import sqlite3
from html import escape
from pathlib import Path

import PySide6
from PySide6.QtCore import Qt, QUrl, qVersion
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QMenu,
    QMenuBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from skillstudio import __version__

CONTEXT_NOTES = {
    Qt.ShortcutContext.WidgetShortcut: "in the skill table",
    Qt.ShortcutContext.WidgetWithChildrenShortcut: "in its panel",
}


def plain(text: str) -> str:
    """A menu text as read: without its mnemonic ampersands and its trailing ellipsis."""
    return text.replace("&&", "\x00").replace("&", "").replace("\x00", "&").removesuffix("…")


def shortcut_rows(menu_bar: QMenuBar) -> list[tuple[str, str, str]]:
    """(menu, action, keys) for every action in the menus that has a key, in menu order."""
    rows: list[tuple[str, str, str]] = []

    def walk(menu: QMenu, path: str) -> None:
        for action in menu.actions():
            submenu = action.menu()
            if isinstance(submenu, QMenu):
                walk(submenu, f"{path} › {plain(action.text())}")
                continue
            keys = [key.toString(QKeySequence.SequenceFormat.NativeText) for key in action.shortcuts()]
            keys = list(dict.fromkeys(key for key in keys if key))  # a standard key may repeat one given
            if not keys or action.isSeparator():
                continue
            note = CONTEXT_NOTES.get(action.shortcutContext())
            rows.append((path, plain(action.text()), ", ".join(keys) + (f" ({note})" if note else "")))

    for top in menu_bar.actions():
        menu = top.menu()
        if isinstance(menu, QMenu):
            walk(menu, plain(top.text()))
    return rows


class QtShortcutsDialog(QDialog):
    """Help › Keyboard Shortcuts: every key the menus answer to, read from their actions."""

    def __init__(self, menu_bar: QMenuBar, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard Shortcuts")
        rows = shortcut_rows(menu_bar)
        self.table = QTableWidget(len(rows), 3, self)
        self.table.setHorizontalHeaderLabels(["Menu", "Command", "Keys"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        for row, cells in enumerate(rows):
            for column, text in enumerate(cells):
                self.table.setItem(row, column, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()
        self.table.resizeRowsToContents()
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(640, 560)


class QtDocumentation(QDialog):
    """Help › Documentation: the README and the docs/ pages it links to, read here (no network)."""

    def __init__(self, readme: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("SkillStudio Documentation")
        self.home = QUrl.fromLocalFile(str(readme))
        self.browser = QTextBrowser(self)
        self.browser.setOpenExternalLinks(True)  # web links go to the user's browser, if they click
        self.browser.setSource(self.home)
        back = QPushButton("Back", self)
        back.clicked.connect(self.browser.backward)
        self.browser.backwardAvailable.connect(back.setEnabled)
        back.setEnabled(False)
        home = QPushButton("Contents", self)
        home.clicked.connect(lambda: self.browser.setSource(self.home))
        close = QPushButton("Close", self)
        close.clicked.connect(self.reject)
        row = QHBoxLayout()
        row.addWidget(back)
        row.addWidget(home)
        row.addStretch(1)
        row.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser)
        layout.addLayout(row)
        self.resize(900, 700)


def about_text(library: Path | str | None) -> str:
    """What About SkillStudio says: versions of everything a bug report needs, and the library."""
    shown = str(library) if library is not None else "none open"
    return (
        f"<h3>SkillStudio {__version__}</h3>"
        "<p>Curate, verify and share libraries of LLM skills in the D057 format.</p>"
        f"<p>Library: {escape(shown, quote=False)}</p>"
        f"<p>SQLite {sqlite3.sqlite_version} · Qt {qVersion()} · PySide6 {PySide6.__version__} · "
        f"Python {platform.python_version()} · {escape(platform.platform(terse=True), quote=False)}</p>"
    )


__all__ = ["QtDocumentation", "QtShortcutsDialog", "about_text", "shortcut_rows"]
