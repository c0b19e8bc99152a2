"""Two versions of a skill side by side (or as a unified diff), as the core's diff renders them.

Both sides are the canonical YAML of the skill (:mod:`skillstudio.model.diff`), so the lines
shown are the ones the raw editor shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFontDatabase, QSyntaxHighlighter, QTextCharFormat
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QRadioButton,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from skillstudio.model import Skill
from skillstudio.model.diff import DiffRow, side_by_side, skill_text, unified_diff

OLD_BACKGROUND = QColor("#ffebe9")
NEW_BACKGROUND = QColor("#dafbe1")
EMPTY_BACKGROUND = QColor("#f3f4f6")
GAP_FOREGROUND = QColor("#6b7280")
CONTEXT = 3

_Index = QModelIndex | QPersistentModelIndex
_TOP = QModelIndex()  # the table's rows have no parent


def _fixed_font():
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


class DiffRowsModel(QAbstractTableModel):
    """Rows of :func:`side_by_side`: old line number, old text, new line number, new text.

    With ``changes_only`` the equal rows further than CONTEXT lines from a change are folded
    into one "⋯ n unchanged lines" row.
    """

    HEADERS = ("", "Before", "", "After")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows: list[DiffRow] = []
        self._shown: list[DiffRow | int] = []  # a DiffRow, or the number of folded equal rows
        self._changes_only = False
        self._font = _fixed_font()
        self.headers = list(self.HEADERS)

    def set_rows(self, rows: Sequence[DiffRow], old_title: str, new_title: str) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.headers = ["", old_title, "", new_title]
        self._layout()
        self.endResetModel()

    def set_changes_only(self, on: bool) -> None:
        self.beginResetModel()
        self._changes_only = on
        self._layout()
        self.endResetModel()

    def _layout(self) -> None:
        if not self._changes_only:
            self._shown = list(self._rows)
            return
        changed = [i for i, row in enumerate(self._rows) if row.kind != "equal"]
        keep: set[int] = set()
        for i in changed:
            keep.update(range(max(0, i - CONTEXT), min(len(self._rows), i + CONTEXT + 1)))
        shown: list[DiffRow | int] = []
        folded = 0
        for i, row in enumerate(self._rows):
            if i in keep:
                if folded:
                    shown.append(folded)
                    folded = 0
                shown.append(row)
            else:
                folded += 1
        if folded:
            shown.append(folded)
        self._shown = shown

    def rowCount(self, parent: _Index = _TOP) -> int:
        return 0 if parent.isValid() else len(self._shown)

    def columnCount(self, parent: _Index = _TOP) -> int:
        return 0 if parent.isValid() else 4

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.headers[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        entry = self._shown[index.row()]
        column = index.column()
        if isinstance(entry, int):
            if role == Qt.ItemDataRole.DisplayRole and column in (1, 3):
                return f"⋯ {entry} unchanged line{'s' if entry != 1 else ''}"
            if role == Qt.ItemDataRole.ForegroundRole:
                return QBrush(GAP_FOREGROUND)
            if role == Qt.ItemDataRole.BackgroundRole:
                return QBrush(EMPTY_BACKGROUND)
            return None
        old_side = column < 2
        number = entry.old_number if old_side else entry.new_number
        text = entry.old if old_side else entry.new
        if role == Qt.ItemDataRole.DisplayRole:
            if column in (0, 2):
                return "" if number is None else str(number)
            return text or ""
        if role == Qt.ItemDataRole.ToolTipRole:
            return text if column in (1, 3) and text and len(text) > 60 else None
        if role == Qt.ItemDataRole.FontRole:
            return self._font
        if role == Qt.ItemDataRole.ForegroundRole and column in (0, 2):
            return QBrush(GAP_FOREGROUND)
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (0, 2):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.BackgroundRole:
            if text is None and entry.kind != "equal":
                return QBrush(EMPTY_BACKGROUND)
            if entry.kind in ("delete", "replace") and old_side:
                return QBrush(OLD_BACKGROUND)
            if entry.kind in ("insert", "replace") and not old_side:
                return QBrush(NEW_BACKGROUND)
        if role == Qt.ItemDataRole.AccessibleTextRole:
            marker = {"equal": "", "delete": "removed: ", "insert": "added: ", "replace": "changed: "}[entry.kind]
            return marker + (text or "")
        return None

    def shown_rows(self) -> list[DiffRow | int]:
        return list(self._shown)


class _UnifiedHighlighter(QSyntaxHighlighter):
    def highlightBlock(self, text: str) -> None:
        form = QTextCharFormat()
        if text.startswith(("+++", "---")):
            form.setFontWeight(700)
        elif text.startswith("+"):
            form.setBackground(NEW_BACKGROUND)
        elif text.startswith("-"):
            form.setBackground(OLD_BACKGROUND)
        elif text.startswith("@@"):
            form.setForeground(QColor("#1d4ed8"))
        else:
            return
        self.setFormat(0, len(text), form)


class QtDiffView(QWidget):
    """A diff between two skills: side by side (default) or unified, optionally changes only."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows: list[DiffRow] = []
        self._unified = ""
        self.title = QLabel(self)
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.summary = QLabel(self)

        self.side_button = QRadioButton("Side b&y side", self)
        self.unified_button = QRadioButton("U&nified", self)
        self.side_button.setChecked(True)
        group = QButtonGroup(self)
        group.addButton(self.side_button)
        group.addButton(self.unified_button)
        self.changes_only = QCheckBox("Only changed &lines", self)
        self.changes_only.setToolTip(f"Fold unchanged lines more than {CONTEXT} lines away from a change")
        self.changes_only.setChecked(True)

        self.model = DiffRowsModel(self)
        self.model.set_changes_only(True)
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.setAccessibleName("Side-by-side differences")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(True)  # long lines (descriptions) wrap, so both sides stay readable
        self.table.setShowGrid(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.verticalHeader().setMinimumSectionSize(self.table.fontMetrics().height() + 4)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        header.setHighlightSections(False)

        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)
        self.text.setFont(_fixed_font())
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setAccessibleName("Unified differences")
        self._highlighter = _UnifiedHighlighter(self.text.document())

        self.message = QLabel(self)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.table)
        self.stack.addWidget(self.text)
        self.stack.addWidget(self.message)

        controls = QHBoxLayout()
        controls.addWidget(self.summary, 1)
        controls.addWidget(self.side_button)
        controls.addWidget(self.unified_button)
        controls.addWidget(self.changes_only)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addLayout(controls)
        layout.addWidget(self.stack, 1)

        self.unified_button.toggled.connect(lambda _on: self._show_mode())
        self.changes_only.toggled.connect(self._changes_only_toggled)
        self.show_message("Nothing to compare.")

    # --- content ----------------------------------------------------------------------------------

    def set_skills(
        self,
        old: Skill,
        new: Skill,
        *,
        old_label: str = "Before",
        new_label: str = "After",
        old_title: str = "Before",
        new_title: str = "After",
    ) -> None:
        """Show the differences from ``old`` to ``new``; the labels describe the two versions in
        full (above the diff, in the unified header), the titles head the two columns."""
        rows = side_by_side(old, new)
        unified = unified_diff(old, new, old_label=old_label, new_label=new_label)
        self.set_rows(rows, unified, old_label=old_label, new_label=new_label, old_title=old_title, new_title=new_title)

    def set_new_only(self, skill: Skill, *, new_label: str = "After", new_title: str = "After") -> None:
        """Show one version as wholly added (a first revision has no predecessor)."""
        lines = skill_text(skill).splitlines()
        rows = [DiffRow("insert", None, None, i + 1, line) for i, line in enumerate(lines)]
        unified = "\n".join([f"+++ {new_label}", f"@@ -0,0 +1,{len(lines)} @@", *(f"+{line}" for line in lines)])
        self.set_rows(
            rows, unified, old_label="(nothing)", new_label=new_label, old_title="(nothing)", new_title=new_title
        )

    def set_rows(
        self,
        rows: Sequence[DiffRow],
        unified: str,
        *,
        old_label: str,
        new_label: str,
        old_title: str = "Before",
        new_title: str = "After",
    ) -> None:
        self._rows = list(rows)
        self._unified = unified
        self.model.set_rows(rows, old_title, new_title)
        self.text.setPlainText(unified or "(no differences)")
        self.title.setText(f"{old_label}  →  {new_label}")
        changed = self.changed_count()
        self.summary.setText(
            "No differences" if not changed else "1 line differs" if changed == 1 else f"{changed} lines differ"
        )
        self._set_controls_enabled(True)
        self._show_mode()

    def show_message(self, text: str) -> None:
        """Show a sentence instead of a diff (nothing selected, a version that cannot be read...)."""
        self._rows = []
        self._unified = ""
        self.model.set_rows([], "", "")
        self.text.clear()
        self.title.setText("")
        self.summary.setText("")
        self.message.setText(text)
        self._set_controls_enabled(False)
        self.stack.setCurrentWidget(self.message)

    def _set_controls_enabled(self, on: bool) -> None:
        for widget in (self.side_button, self.unified_button, self.changes_only):
            widget.setEnabled(on)

    # --- view ----------------------------------------------------------------------------------

    def set_unified(self, on: bool) -> None:
        (self.unified_button if on else self.side_button).setChecked(True)

    def is_unified(self) -> bool:
        return self.unified_button.isChecked()

    def _show_mode(self) -> None:
        if self.stack.currentWidget() is self.message and not self._rows:
            return
        self.stack.setCurrentWidget(self.text if self.is_unified() else self.table)
        self.changes_only.setEnabled(not self.is_unified())
        if not self.is_unified():
            first = next(
                (
                    i
                    for i, row in enumerate(self.model.shown_rows())
                    if not isinstance(row, int) and row.kind != "equal"
                ),
                None,
            )
            if first is not None:
                self.table.scrollTo(self.model.index(first, 1), QAbstractItemView.ScrollHint.PositionAtCenter)

    def _changes_only_toggled(self, on: bool) -> None:
        self.model.set_changes_only(on)
        self._show_mode()

    # --- reading (tests, accessibility) ----------------------------------------------------------

    def rows(self) -> list[DiffRow]:
        return list(self._rows)

    def changed_rows(self) -> list[DiffRow]:
        return [row for row in self._rows if row.kind != "equal"]

    def changed_count(self) -> int:
        return len(self.changed_rows())

    def unified_text(self) -> str:
        return self._unified
