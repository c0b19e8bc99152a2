"""Small widgets the skill editor's forms are built from.

Every field widget here shows exactly what the user typed and hands it back unconverted when
it cannot be converted (``"abc"`` in a number column stays ``"abc"``), so the core's parser,
not the widget, says what is wrong and where: one set of rules, one set of messages.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from PySide6.QtCore import QModelIndex, QStringListModel, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFontDatabase, QKeySequence, QShortcut, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QCompleter,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QStyledItemDelegate,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from skillstudio.gui.browser_state import BrowserState
from skillstudio.model.enums import SpelledEnum
from skillstudio.store import LibraryError, SkillQuery

INVALID_BACKGROUND = QColor("#fde2e1")
INVALID_STYLE = "background-color: #fde2e1;"
ROLE_VALUE = Qt.ItemDataRole.UserRole + 1


def fixed_font():
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


def mark_invalid(widget: QWidget, message: str | None) -> None:
    """Tint a field widget and put the problem in its tooltip; None clears both."""
    base = widget.property("_base_tooltip")
    if base is None:
        base = widget.toolTip()
        widget.setProperty("_base_tooltip", base)
    invalid = message is not None
    if bool(widget.property("invalid")) == invalid and widget.toolTip() == (message or base):
        return
    widget.setProperty("invalid", invalid)
    widget.setToolTip(message if message is not None else str(base))
    # Only a marked widget gets a style sheet, so unmarked ones keep the native look.
    widget.setStyleSheet(_invalid_sheet(widget) if invalid else "")


def _invalid_sheet(widget: QWidget) -> str:
    name = type(widget).__mro__[0].__name__
    for cls in type(widget).__mro__:
        if cls.__module__.startswith("PySide6"):
            name = cls.__name__
            break
    return f"{name} {{ {INVALID_STYLE} }}"


def overload(signal: Any, *types: type) -> Any:
    """``signal[types]``: one overload of an overloaded signal (the stubs do not type indexing)."""
    return signal[types[0] if len(types) == 1 else types]


def _popup(completer: QCompleter) -> QAbstractItemView:
    popup = completer.popup()
    assert popup is not None  # a completer makes its popup when it is created
    return popup


def label_of(form: QFormLayout, field: QWidget | QLayout) -> QLabel:
    """The label a form layout made for a row's field (to give it a buddy)."""
    label = form.labelForField(field)
    assert isinstance(label, QLabel)
    return label


def split_tokens(text: str, separator: str = ",") -> list[str]:
    return [part.strip() for part in text.split(separator) if part.strip()]


# --- enum combo -----------------------------------------------------------------------------------


class EnumCombo(QComboBox):
    """A combo over a SpelledEnum; ``value()`` is the member's serde or snake_case spelling."""

    def __init__(self, enum: type[SpelledEnum], parent: QWidget | None = None, *, serde: bool = True) -> None:
        super().__init__(parent)
        self.enum = enum
        self.serde = serde
        for member in enum:
            self.addItem(member.label, member.serde if serde else member.value)
        self.setMinimumWidth(self.fontMetrics().horizontalAdvance("M" * 9))

    def value(self) -> str:
        return self.currentData()

    def set_value(self, raw: object) -> None:
        try:
            member = self.enum.parse(raw)
        except ValueError:
            return
        index = self.findData(member.serde if self.serde else member.value)
        if index >= 0 and index != self.currentIndex():
            self.setCurrentIndex(index)

    def member(self) -> Enum:
        return self.enum.parse(self.value())


# --- a double spin box that does not round what it was given ------------------------------------


class ExactDoubleSpinBox(QDoubleSpinBox):
    """Keeps the exact value it was set to while the user has not changed the shown one, so
    opening a skill with map_control 0.3125 and saving another change does not round it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._exact: float | None = None

    def set_exact(self, value: float) -> None:
        self._exact = float(value)
        self.setValue(value)

    def exact_value(self) -> float:
        if self._exact is not None and round(self._exact, self.decimals()) == round(self.value(), self.decimals()):
            return self._exact
        return self.value()


# --- comma-separated tokens with completion -----------------------------------------------------


class TokenLineEdit(QLineEdit):
    """Comma-separated words (tags, tech ids, tools); completes the word under the cursor."""

    def __init__(self, parent: QWidget | None = None, *, completions: Iterable[str] = ()) -> None:
        super().__init__(parent)
        self._model = QStringListModel(self)
        self._completer = QCompleter(self._model, self)
        self._completer.setWidget(self)
        self._completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self._completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self._completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        overload(self._completer.activated, str).connect(self._insert_completion)
        self.textEdited.connect(self._update_completion)
        self.set_completions(completions)
        self.setPlaceholderText("comma-separated")

    def completer_popup(self) -> QAbstractItemView:
        return _popup(self._completer)

    def set_completions(self, words: Iterable[str]) -> None:
        self._model.setStringList(list(dict.fromkeys(words)))

    def tokens(self) -> list[str]:
        return split_tokens(self.text())

    def set_tokens(self, tokens: Sequence[str]) -> None:
        text = ", ".join(tokens)
        if text != self.text():
            self.setText(text)

    def _current_word(self) -> tuple[int, str]:
        before = self.text()[: self.cursorPosition()]
        start = before.rfind(",") + 1
        return start, before[start:].lstrip()

    def _update_completion(self) -> None:
        if not self._model.rowCount():
            return
        _start, word = self._current_word()
        if not word:
            self.completer_popup().hide()
            return
        self._completer.setCompletionPrefix(word)
        taken = set(self.tokens()) - {word}
        if self._completer.completionCount() and self._completer.currentCompletion() not in taken:
            self._completer.complete()
        else:
            self.completer_popup().hide()

    def _insert_completion(self, word: str) -> None:
        start, _typed = self._current_word()
        text = self.text()
        end = text.find(",", self.cursorPosition())
        end = len(text) if end < 0 else end
        head = text[:start].rstrip()
        prefix = (head + " ") if head else ""
        new_text = prefix + word + text[end:]
        self.setText(new_text)
        self.setCursorPosition(len(prefix) + len(word))
        self.textEdited.emit(self.text())


# --- a plain text editor that reports edits like a line edit ------------------------------------


class TextArea(QPlainTextEdit):
    """Plain text; its own undo is off because the editor's undo stack covers it."""

    def __init__(self, parent: QWidget | None = None, *, fixed: bool = False, min_lines: int = 3) -> None:
        super().__init__(parent)
        self.setUndoRedoEnabled(False)
        self.setTabChangesFocus(True)  # Tab moves on, as in the rest of the form
        if fixed:
            self.setFont(fixed_font())
        self.setMinimumHeight(self.fontMetrics().lineSpacing() * min_lines + 12)

    def text(self) -> str:
        return self.toPlainText()

    def set_text(self, text: str) -> None:
        if text != self.toPlainText():
            self.setPlainText(text)


# --- a table of rows ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    key: str  # the field name in the document (or str(index) for tuple pairs)
    title: str
    kind: str = "text"  # text | int | optional_int | choice | yaml
    choices: tuple[tuple[str, str], ...] = ()  # (value, label) for "choice"
    completions: tuple[str, ...] = ()
    width: int | None = None  # None: stretch
    hidden: bool = False
    default: Any = ""
    tooltip: str = ""


_INT = re.compile(r"^\s*[-+]?\d+\s*$")


def to_int(text: str) -> Any:
    """An int if the text is one, else the text itself (the parser names the problem)."""
    return int(text) if _INT.match(text) else text


class _RowDelegate(QStyledItemDelegate):
    def __init__(self, table: RowTable) -> None:
        super().__init__(table.table)
        self.owner = table

    def createEditor(self, parent, option, index):  # type: ignore[no-untyped-def]
        column = self.owner.columns[index.column()]
        if column.kind == "choice":
            combo = QComboBox(parent)
            for value, label in column.choices:
                combo.addItem(label, value)
            return combo
        editor = QLineEdit(parent)
        editor.setFrame(False)
        words = self.owner.completions_for(index.row(), index.column())
        if words:
            completer = QCompleter(list(words), editor)
            completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
            completer.setFilterMode(Qt.MatchFlag.MatchContains)
            editor.setCompleter(completer)
        if column.kind == "yaml":
            editor.setFont(fixed_font())
        return editor

    def setEditorData(self, editor, index):  # type: ignore[no-untyped-def]
        if isinstance(editor, QComboBox):
            found = editor.findData(index.data(ROLE_VALUE))
            editor.setCurrentIndex(max(found, 0))
            return
        editor.setText(index.data(ROLE_VALUE) or "")

    def setModelData(self, editor, model, index):  # type: ignore[no-untyped-def]
        if isinstance(editor, QComboBox):
            self.owner._set_cell(index.row(), index.column(), editor.currentData())
        else:
            self.owner._set_cell(index.row(), index.column(), editor.text())


class RowTable(QWidget):
    """An ordered table of records with add / remove / move buttons.

    Cells hold text (choice cells their value); :meth:`values` converts each row for the
    document: ``int`` columns become ints when they are whole numbers, ``optional_int`` columns
    None when empty, other text stays text. ``edited`` fires after every committed change.
    """

    edited = Signal()
    current_row_changed = Signal(int)

    def __init__(
        self,
        columns: Sequence[Column],
        parent: QWidget | None = None,
        *,
        movable: bool = True,
        add_label: str = "Add row",
        new_row: Callable[[], list[Any]] | None = None,
        visible_rows: int = 4,
    ) -> None:
        super().__init__(parent)
        self.columns = list(columns)
        self._new_row = new_row
        self._completions: Callable[[int, int], Sequence[str]] | None = None
        self._loading = False
        self.table = QTableWidget(0, len(self.columns), self)
        self.table.setHorizontalHeaderLabels([c.title for c in self.columns])
        self.table.setItemDelegate(_RowDelegate(self))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.AnyKeyPressed
            | QAbstractItemView.EditTrigger.SelectedClicked
        )
        self.table.setTabKeyNavigation(False)  # Tab leaves the table, arrows move inside it
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 10)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        self.table.setAlternatingRowColors(True)
        header = self.table.horizontalHeader()
        header.setHighlightSections(False)
        for index, column in enumerate(self.columns):
            if column.width is None:
                header.setSectionResizeMode(index, QHeaderView.ResizeMode.Stretch)
            else:
                header.setSectionResizeMode(index, QHeaderView.ResizeMode.Interactive)
                self.table.setColumnWidth(index, column.width)
            if column.hidden:
                self.table.setColumnHidden(index, True)
            if column.tooltip:
                header_item = self.table.horizontalHeaderItem(index)
                if header_item is not None:
                    header_item.setToolTip(column.tooltip)
        row_height = self.table.verticalHeader().defaultSectionSize()
        self.table.setMinimumHeight(header.sizeHint().height() + row_height * visible_rows + 4)
        self.table.itemChanged.connect(self._item_changed)
        self.table.currentCellChanged.connect(lambda row, *_: self.current_row_changed.emit(row))

        self.add_button = QPushButton(add_label, self)
        self.add_button.setToolTip(f"{add_label} (Insert)")
        self.add_button.clicked.connect(self.add_row)
        self.remove_button = QPushButton("Remove", self)
        self.remove_button.setToolTip("Remove the selected rows (Delete)")
        self.remove_button.clicked.connect(self.remove_selected)
        buttons = self.button_row = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        self.up_button = self.down_button = None
        if movable:
            self.up_button = QToolButton(self)
            self.up_button.setArrowType(Qt.ArrowType.UpArrow)
            self.up_button.setToolTip("Move the row up (Alt+Up)")
            self.up_button.setAccessibleName("Move up")
            self.up_button.clicked.connect(lambda: self.move_current(-1))
            self.down_button = QToolButton(self)
            self.down_button.setArrowType(Qt.ArrowType.DownArrow)
            self.down_button.setToolTip("Move the row down (Alt+Down)")
            self.down_button.setAccessibleName("Move down")
            self.down_button.clicked.connect(lambda: self.move_current(1))
            buttons.addWidget(self.up_button)
            buttons.addWidget(self.down_button)
            for keys, step in (("Alt+Up", -1), ("Alt+Down", 1)):
                shortcut = QShortcut(QKeySequence(keys), self.table, context=Qt.ShortcutContext.WidgetShortcut)
                shortcut.activated.connect(lambda step=step: self.move_current(step))
        buttons.addStretch(1)
        for keys, slot in (("Insert", self.add_row), ("Delete", self.remove_selected)):
            shortcut = QShortcut(QKeySequence(keys), self.table, context=Qt.ShortcutContext.WidgetShortcut)
            shortcut.activated.connect(slot)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        self.setFocusProxy(self.table)

    # --- content ------------------------------------------------------------------------------

    def set_completion_source(self, source: Callable[[int, int], Sequence[str]]) -> None:
        """Words offered while editing a cell: ``source(row, column)``."""
        self._completions = source

    def completions_for(self, row: int, column: int) -> Sequence[str]:
        if self._completions is not None:
            return self._completions(row, column)
        return self.columns[column].completions

    def row_count(self) -> int:
        return self.table.rowCount()

    def texts(self) -> list[list[str]]:
        return [
            [self._item(row, col).data(ROLE_VALUE) or "" for col in range(len(self.columns))]
            for row in range(self.table.rowCount())
        ]

    def values(self) -> list[list[Any]]:
        out = []
        for texts in self.texts():
            row = []
            for column, text in zip(self.columns, texts, strict=True):
                if column.kind == "int":
                    row.append(to_int(text))
                elif column.kind == "optional_int":
                    row.append(None if not text.strip() else to_int(text))
                else:
                    row.append(text)
            out.append(row)
        return out

    def set_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        texts = [[self._text_of(col, value) for col, value in zip(self.columns, row, strict=True)] for row in rows]
        if texts == self.texts():
            return
        current = self.table.currentRow()
        self._loading = True
        self.table.blockSignals(True)
        try:
            self.table.setRowCount(0)
            for row_texts in texts:
                self._append(row_texts)
        finally:
            self.table.blockSignals(False)
            self._loading = False
        if 0 <= current < self.table.rowCount():
            self.table.setCurrentCell(current, max(self.table.currentColumn(), 0))

    def _text_of(self, column: Column, value: Any) -> str:
        if value is None:
            return ""
        return str(value)

    def _append(self, texts: Sequence[str]) -> int:
        row = self.table.rowCount()
        self.table.insertRow(row)
        for col, text in enumerate(texts):
            item = QTableWidgetItem()
            self.table.setItem(row, col, item)
            self._fill(item, self.columns[col], text)
        return row

    def _fill(self, item: QTableWidgetItem, column: Column, text: str) -> None:
        item.setData(ROLE_VALUE, text)
        shown = text
        if column.kind == "choice":
            shown = dict(column.choices).get(text, text)
        item.setData(Qt.ItemDataRole.DisplayRole, shown)
        if column.kind in ("int", "optional_int"):
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if column.kind == "yaml":
            item.setFont(fixed_font())

    def _set_cell(self, row: int, col: int, text: str) -> None:
        item = self.table.item(row, col)
        if item is None or item.data(ROLE_VALUE) == text:
            return
        self.table.blockSignals(True)
        self._fill(item, self.columns[col], text)
        self.table.blockSignals(False)
        self.edited.emit()

    def set_cell(self, row: int, col: int | str, value: Any) -> None:
        """Set one cell as if the user had typed it (tests and programmatic edits)."""
        index = col if isinstance(col, int) else [c.key for c in self.columns].index(col)
        self._set_cell(row, index, self._text_of(self.columns[index], value))

    def _item_changed(self, item: QTableWidgetItem) -> None:
        # Edits through QTableWidgetItem.setText (not the delegate) arrive here.
        if self._loading:
            return
        text = item.data(Qt.ItemDataRole.DisplayRole)
        column = self.columns[item.column()]
        if column.kind != "choice" and text != item.data(ROLE_VALUE):
            self._set_cell(item.row(), item.column(), "" if text is None else str(text))

    # --- row operations -----------------------------------------------------------------------

    def add_row(self) -> None:
        values = self._new_row() if self._new_row else [c.default for c in self.columns]
        texts = [self._text_of(c, v) for c, v in zip(self.columns, values, strict=True)]
        self.table.blockSignals(True)
        row = self._append(texts)
        self.table.blockSignals(False)
        first = next((i for i, c in enumerate(self.columns) if not c.hidden), 0)
        self.table.setCurrentCell(row, first)
        self.table.setFocus()
        self.edited.emit()

    def remove_selected(self) -> None:
        rows = sorted({index.row() for index in self.table.selectedIndexes()}, reverse=True)
        if not rows and self.table.currentRow() >= 0:
            rows = [self.table.currentRow()]
        if not rows:
            return
        for row in rows:
            self.table.removeRow(row)
        if self.table.rowCount():
            self.table.setCurrentCell(min(rows[-1], self.table.rowCount() - 1), max(self.table.currentColumn(), 0))
        self.edited.emit()

    def move_current(self, step: int) -> None:
        row = self.table.currentRow()
        target = row + step
        if row < 0 or not 0 <= target < self.table.rowCount():
            return
        texts = self.texts()
        texts[row], texts[target] = texts[target], texts[row]
        column = self.table.currentColumn()
        self._loading = True
        self.table.blockSignals(True)
        for r in (row, target):
            for c, text in enumerate(texts[r]):
                self._fill(self._item(r, c), self.columns[c], text)
        self.table.blockSignals(False)
        self._loading = False
        self.table.setCurrentCell(target, max(column, 0))
        self.edited.emit()

    # --- issues -------------------------------------------------------------------------------

    def _item(self, row: int, col: int) -> QTableWidgetItem:
        item = self.table.item(row, col)
        assert item is not None  # every cell of every row gets an item when the row is added
        return item

    def column_index(self, key: str) -> int | None:
        for index, column in enumerate(self.columns):
            if column.key == key:
                return index
        return None

    def focus_cell(self, row: int, col: int | None) -> None:
        if not 0 <= row < self.table.rowCount():
            self.table.setFocus()
            return
        visible = col if col is not None and not self.columns[col].hidden else 0
        self.table.setCurrentCell(row, visible)
        self.table.scrollToItem(self._item(row, visible))
        self.table.setFocus()

    def mark_cells(self, cells: dict[tuple[int, int | None], str]) -> None:
        """Tint the cells with problems (a None column tints the whole row)."""
        self.table.blockSignals(True)
        for row in range(self.table.rowCount()):
            for col in range(len(self.columns)):
                item = self._item(row, col)
                message = cells.get((row, col)) or cells.get((row, None))
                item.setBackground(QBrush(INVALID_BACKGROUND) if message else QBrush())
                item.setToolTip(message or "")
        self.table.blockSignals(False)


# --- picking skills by name ----------------------------------------------------------------------


class SkillRefPicker(QWidget):
    """Skill ids chosen by searching names: shows names, stores ids (composable_with, references)."""

    edited = Signal()
    MAX_RESULTS = 20

    def __init__(self, state: BrowserState, parent: QWidget | None = None, *, exclude_id: str | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.exclude_id = exclude_id
        self._ids: list[str] = []
        self._names: dict[str, str] = {}

        self.list = QListWidget(self)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        line = self.list.fontMetrics().height() + 6
        self.list.setMinimumHeight(line * 3 + 6)
        self.list.setMaximumHeight(line * 5 + 6)
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Search skills by name to add…")
        self.search.setClearButtonEnabled(True)
        self._model = QStandardItemModel(self)
        self._completer = QCompleter(self._model, self)
        self._completer.setWidget(self.search)
        self._completer.setCompletionMode(QCompleter.CompletionMode.UnfilteredPopupCompletion)
        overload(self._completer.activated, QModelIndex).connect(self._chosen)
        self._timer = QTimer(self, singleShot=True, interval=150)
        self._timer.timeout.connect(self.refresh_candidates)
        self.search.textEdited.connect(lambda _text: self._timer.start())
        self.search.returnPressed.connect(self._add_first)
        self.remove_button = QPushButton("Remove", self)
        self.remove_button.setToolTip("Remove the selected skills (Delete)")
        self.remove_button.clicked.connect(self.remove_selected)
        shortcut = QShortcut(QKeySequence("Delete"), self.list, context=Qt.ShortcutContext.WidgetShortcut)
        shortcut.activated.connect(self.remove_selected)

        side = QVBoxLayout()
        side.setContentsMargins(0, 0, 0, 0)
        side.addWidget(self.remove_button)
        side.addStretch(1)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.list, 1)
        row.addLayout(side)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.search)
        layout.addLayout(row)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self.setFocusProxy(self.search)

    def ids(self) -> list[str]:
        return list(self._ids)

    def set_ids(self, ids: Sequence[str]) -> None:
        ids = list(ids)
        if ids == self._ids:
            return
        self._ids = ids
        self._lookup(ids)
        self._render()

    def _lookup(self, ids: Sequence[str]) -> None:
        missing = [i for i in ids if i not in self._names]
        repository = self.state.repository
        if not missing or repository is None:
            return
        try:
            for summary in repository.summaries(missing):
                self._names[summary.id] = summary.name
        except LibraryError:
            pass

    def _render(self) -> None:
        self.list.clear()
        for skill_id in self._ids:
            name = self._names.get(skill_id)
            item = QListWidgetItem(name or f"(not in this library) {skill_id}")
            item.setData(Qt.ItemDataRole.UserRole, skill_id)
            item.setToolTip(skill_id)
            if name is None:
                item.setForeground(QBrush(QColor("#9a3412")))
            self.list.addItem(item)

    def candidates(self, text: str) -> list[tuple[str, str, str]]:
        """(id, name, detail) of skills matching ``text``, not already chosen.

        At least two letters are needed: a one-letter prefix matches most of a large library."""
        repository = self.state.repository
        if len(re.sub(r"\W", "", text)) < 2 or repository is None:
            return []
        try:
            result = repository.query(SkillQuery(text=text, limit=self.MAX_RESULTS + len(self._ids) + 1))
            summaries = repository.summaries(result.ids)
        except LibraryError:
            return []
        out = []
        for summary in summaries:
            if summary.id == self.exclude_id or summary.id in self._ids:
                continue
            self._names[summary.id] = summary.name
            detail = f"{summary.domain.replace('_', ' ')} · {summary.game_module} · {summary.id[:8]}"
            out.append((summary.id, summary.name, detail))
        return out[: self.MAX_RESULTS]

    def refresh_candidates(self) -> None:
        self._model.clear()
        for skill_id, name, detail in self.candidates(self.search.text()):
            item = QStandardItem(f"{name}   ({detail})")
            item.setData(skill_id, Qt.ItemDataRole.UserRole)
            item.setEditable(False)
            self._model.appendRow(item)
        if self._model.rowCount() and self.search.hasFocus():
            self._completer.complete()
        else:
            self.completer_popup().hide()

    def completer_popup(self) -> QAbstractItemView:
        return _popup(self._completer)

    def _chosen(self, index: QModelIndex) -> None:
        skill_id = index.data(Qt.ItemDataRole.UserRole)
        if skill_id:
            self.add_id(skill_id)
            QTimer.singleShot(0, self.search.clear)

    def _add_first(self) -> None:
        if self.completer_popup().isVisible():
            return
        if self._timer.isActive():
            self._timer.stop()
            self.refresh_candidates()
            self.completer_popup().hide()
        if self._model.rowCount():
            self.add_id(self._model.item(0).data(Qt.ItemDataRole.UserRole))
            self.search.clear()

    def add_id(self, skill_id: str) -> None:
        if skill_id in self._ids or skill_id == self.exclude_id:
            return
        self._lookup([skill_id])
        self._ids.append(skill_id)
        self._render()
        self.edited.emit()

    def remove_selected(self) -> None:
        chosen = {item.data(Qt.ItemDataRole.UserRole) for item in self.list.selectedItems()}
        if not chosen:
            return
        self._ids = [i for i in self._ids if i not in chosen]
        self._render()
        self.edited.emit()

    def mark_rows(self, rows: dict[int, str]) -> None:
        for row in range(self.list.count()):
            item = self.list.item(row)
            message = rows.get(row)
            item.setBackground(QBrush(INVALID_BACKGROUND) if message else QBrush())
            item.setToolTip(message or item.data(Qt.ItemDataRole.UserRole))


# --- mapping issue paths to widgets --------------------------------------------------------------


@dataclass
class Located:
    widget: QWidget
    table: RowTable | None = None
    row: int | None = None
    column: int | None = None
    picker: SkillRefPicker | None = None


_INDEX = re.compile(r"^\[(\d+)\](.*)$")


@dataclass
class PathMap:
    """Field paths (as the parser names them) to the widgets that edit them."""

    widgets: dict[str, QWidget] = field(default_factory=dict)
    tables: dict[str, RowTable] = field(default_factory=dict)
    pickers: dict[str, SkillRefPicker] = field(default_factory=dict)

    def add(self, path: str, widget: QWidget) -> None:
        self.widgets[path] = widget

    def add_table(self, path: str, table: RowTable) -> None:
        self.tables[path] = table

    def add_picker(self, path: str, picker: SkillRefPicker) -> None:
        self.pickers[path] = picker

    def locate(self, path: str) -> Located | None:
        for prefix, table in self.tables.items():
            if path == prefix:
                return Located(table.table, table)
            if path.startswith(prefix + "["):
                match = _INDEX.match(path[len(prefix) :])
                if match:
                    row, rest = int(match.group(1)), match.group(2).lstrip(".")
                    return Located(table.table, table, row, _column_for(table, rest))
        for prefix, picker in self.pickers.items():
            if path == prefix:
                return Located(picker.list, picker=picker)
            if path.startswith(prefix + "["):
                match = _INDEX.match(path[len(prefix) :])
                if match:
                    return Located(picker.list, picker=picker, row=int(match.group(1)))
        probe = path
        while probe:
            if probe in self.widgets:
                return Located(self.widgets[probe])
            probe = _parent_path(probe)
        return None

    def all_widgets(self) -> list[QWidget]:
        return list(self.widgets.values())


def _column_for(table: RowTable, rest: str) -> int | None:
    """``priority`` / ``position.x`` / ``[1]`` (tuple pairs) to a column index."""
    if not rest:
        return None
    if rest.startswith("["):
        key = rest[1:].split("]", 1)[0]
        return table.column_index(key)
    best = None
    for index, column in enumerate(table.columns):
        names_it = rest == column.key or rest.startswith((column.key + ".", column.key + "["))
        if names_it and (best is None or len(column.key) > len(table.columns[best].key)):
            best = index
    if best is None and "." in rest:  # position.x -> the column keyed "x" when there is one
        return table.column_index(rest.rsplit(".", 1)[1])
    return best


def _parent_path(path: str) -> str:
    if path.endswith("]"):
        return path[: path.rfind("[")]
    if "." in path:
        return path[: path.rfind(".")]
    return ""


def focus_located(located: Located) -> None:
    if located.table is not None:
        located.table.focus_cell(located.row if located.row is not None else 0, located.column)
        return
    if located.picker is not None:
        if located.row is not None and located.row < located.picker.list.count():
            located.picker.list.setCurrentRow(located.row)
        located.picker.list.setFocus()
        return
    located.widget.setFocus(Qt.FocusReason.OtherFocusReason)
    if isinstance(located.widget, QLineEdit):
        located.widget.selectAll()


class Marker:
    """Shows a set of issues on the widgets they concern, clearing the marks of the last set."""

    def __init__(self) -> None:
        self._widgets: set[QWidget] = set()
        self._tables: set[RowTable] = set()
        self._pickers: set[SkillRefPicker] = set()

    def apply(self, issues: Iterable[Any], locate: Callable[[str], Located | None]) -> None:
        widgets: dict[QWidget, list[str]] = {}
        tables: dict[RowTable, dict[tuple[int, int | None], str]] = {}
        pickers: dict[SkillRefPicker, dict[int, str]] = {}
        for issue in issues:
            located = locate(issue.path)
            if located is None:
                continue
            if located.table is not None and located.row is not None:
                cells = tables.setdefault(located.table, {})
                key = (located.row, located.column)
                cells[key] = "\n".join(filter(None, (cells.get(key), issue.message)))
            elif located.picker is not None and located.row is not None:
                pickers.setdefault(located.picker, {})[located.row] = issue.message
            else:
                widgets.setdefault(located.widget, []).append(str(issue))
        for widget in self._widgets - set(widgets):
            _safely(mark_invalid, widget, None)
        for widget, messages in widgets.items():
            _safely(mark_invalid, widget, "\n".join(messages))
        for table in self._tables | set(tables):
            _safely(table.mark_cells, tables.get(table, {}))
        for picker in self._pickers | set(pickers):
            _safely(picker.mark_rows, pickers.get(picker, {}))
        self._widgets, self._tables, self._pickers = set(widgets), set(tables), set(pickers)


def _safely(function: Callable[..., None], *args: Any) -> None:
    with contextlib.suppress(RuntimeError):  # the widget was deleted meanwhile (a body editor was replaced)
        function(*args)


def reveal(widget: QWidget) -> None:
    """Switch the tab pages and scroll areas holding ``widget`` so that it can be seen."""
    from PySide6.QtWidgets import QScrollArea, QStackedWidget, QTabWidget

    child, parent = widget, widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QStackedWidget):
            holder = parent.parentWidget()
            if isinstance(holder, QTabWidget):
                holder.setCurrentWidget(child)
            elif parent.indexOf(child) >= 0 and parent.currentWidget() is not child:
                parent.setCurrentWidget(child)
        child, parent = parent, parent.parentWidget()
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QScrollArea):
            parent.ensureWidgetVisible(widget)
        parent = parent.parentWidget()
