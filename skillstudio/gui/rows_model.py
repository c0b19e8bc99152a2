"""A dialog's list of many rows (an import's steps, an export's privacy findings, a prune's
candidates), each made into text only when the view shows it.

One widget item per row, or a tree view over a model, costs the GUI thread in proportion to the
rows when they arrive: a tree view asks the model of every row whether it has children (200,000
calls into Python, 235 ms, for an import plan of 100,000 skills), and 100,000 tree-widget items
took 0.35 s to make and 0.12 s to clear. A table view asks for the rows it paints.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

_ROOT = QModelIndex()


class RowsModel(QAbstractTableModel):
    """``rows`` shown through ``cells(row)``, one text per header; ``key(row)`` is a row's
    UserRole (what a caller acts on); columns in ``tips`` show their whole text as a tooltip."""

    def __init__(
        self,
        headers: Sequence[str],
        cells: Callable[[Any], Sequence[str]],
        parent: QObject | None = None,
        *,
        key: Callable[[Any], object] | None = None,
        tips: Sequence[int] = (),
    ) -> None:
        super().__init__(parent)
        self.headers = tuple(headers)
        self._cells = cells
        self._key = key
        self._tips = frozenset(tips)
        self._rows: Sequence[Any] = ()

    def set_rows(self, rows: Sequence[Any]) -> None:
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(self.headers)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole or (
            role == Qt.ItemDataRole.ToolTipRole and index.column() in self._tips
        ):
            return self._cells(row)[index.column()]
        if role == Qt.ItemDataRole.UserRole and self._key is not None:
            return self._key(row)
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.headers[section]
        return None


def rows_view(parent: QWidget, model: RowsModel, widths: Sequence[int] = (90, 300)) -> QTableView:
    """A table that reads like a list: whole rows selected, no grid, rows of one line's height,
    the first columns ``widths`` pixels wide (fitting them to their contents would read every
    row), the last taking the width left."""
    view = QTableView(parent)
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setShowGrid(False)
    view.setWordWrap(False)
    view.verticalHeader().hide()
    view.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # no row is measured
    view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 6)
    view.horizontalHeader().setStretchLastSection(True)
    for column, width in enumerate(widths):
        view.setColumnWidth(column, width)
    return view


__all__ = ["RowsModel", "rows_view"]
