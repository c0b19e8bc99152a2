"""The browser's table model: the ordered ids of one query, rows built lazily into a cache.

As in Anki's browser, a query returns only ids (cheap even for 100,000 skills); a row's
columns are read from the store the first time a view paints it, a page at a time, and kept
in a bounded cache. Sorting re-runs the query in SQLite rather than sorting in Python.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QCoreApplication,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRunnable,
    Qt,
    QThreadPool,
    Signal,
)

from skillstudio.store import LibraryError, QueryResult, SkillQuery, SkillRepository, SkillSummary, SortKey

ID_ROLE = Qt.ItemDataRole.UserRole + 1
SUMMARY_ROLE = Qt.ItemDataRole.UserRole + 2

_ALIGN = Qt.ItemDataRole.TextAlignmentRole
_ROLES = frozenset({Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole, _ALIGN, ID_ROLE, SUMMARY_ROLE})
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)

PAGE = 200  # rows read per cache miss: about two screens
CACHE_LIMIT = 20_000  # rows kept; older pages are dropped first

_DOMAIN_LABELS = {"ai_strategy": "AI strategy", "content_generation": "Content"}
_SOURCE_LABELS = {
    "llm_discovered": "LLM discovered",
    "hand_authored": "Hand authored",
    "workshop": "Workshop",
    "human_refined": "Human refined",
}


@dataclass(frozen=True)
class Column:
    title: str
    sort: SortKey
    numeric: bool = False


COLUMNS: tuple[Column, ...] = (
    Column("Name", SortKey.NAME),
    Column("Domain", SortKey.DOMAIN),
    Column("Module", SortKey.GAME_MODULE),
    Column("Confidence", SortKey.CONFIDENCE),
    Column("Success", SortKey.SUCCESS_RATE, numeric=True),
    Column("Verifications", SortKey.VERIFICATION_COUNT, numeric=True),
    Column("Rating", SortKey.AVERAGE_RATING, numeric=True),
    Column("Uses", SortKey.USE_COUNT, numeric=True),
    Column("Source", SortKey.SOURCE),
    Column("Created by", SortKey.CREATED_BY),
    Column("Last verified", SortKey.LAST_VERIFIED),
)
CONFIDENCE_COLUMN = 3


def display(summary: SkillSummary, column: int) -> str:
    match column:
        case 0:
            return summary.name
        case 1:
            return _DOMAIN_LABELS.get(summary.domain, summary.domain)
        case 2:
            return summary.game_module
        case 3:
            return summary.confidence
        case 4:
            return (
                "" if summary.success_rate is None or not summary.verification_count else f"{summary.success_rate:.0%}"
            )
        case 5:
            return str(summary.verification_count or 0)
        case 6:
            return "" if summary.average_rating is None else f"{summary.average_rating:.2f}"
        case 7:
            return str(summary.use_count or 0)
        case 8:
            return _SOURCE_LABELS.get(summary.source, summary.source)
        case 9:
            return summary.created_by
        case 10:
            return (summary.last_verified or "")[:10]
    return ""


class _QuerySignals(QObject):
    finished = Signal(int, object, object, int)  # generation, QueryResult, first page, library size
    failed = Signal(int, str)


class _QueryTask(QRunnable):
    """Runs one query off the GUI thread; talks back only through signals, never to widgets."""

    def __init__(self, repository: SkillRepository, query: SkillQuery, generation: int, signals: _QuerySignals) -> None:
        super().__init__()
        self.repository, self.query, self.generation, self.signals = repository, query, generation, signals

    def run(self) -> None:
        try:
            result = self.repository.query(self.query)
            first_page = self.repository.summaries(result.ids[:PAGE])  # the first screen, ready to paint
            library_size = self.repository.count()  # for "N of M match"; a scan at 100k
        except LibraryError as error:
            self.signals.failed.emit(self.generation, str(error))
            return
        self.signals.finished.emit(self.generation, result, first_page, library_size)


class SkillTableModel(QAbstractTableModel):
    query_finished = Signal()
    query_failed = Signal(str)

    def __init__(self, repository: SkillRepository, parent: Any = None) -> None:
        super().__init__(parent)
        self.repository = repository
        self.query = SkillQuery()
        self._ids: list[str] = []
        self._rows: dict[str, int] = {}
        self._cache: OrderedDict[str, SkillSummary] = OrderedDict()
        self.total = 0  # matching skills (== len(ids): the browser never pages)
        self.busy = False
        self.library_size = 0  # skills in the library, whatever the query
        self._generation = 0
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)  # one query at a time; newer ones replace queued ones
        self._signals = _QuerySignals(self)
        self._signals.finished.connect(self._apply)
        self._signals.failed.connect(self._fail)

    # --- querying --------------------------------------------------------------------------------

    def set_query(self, query: SkillQuery) -> None:
        """Show what ``query`` matches (its own offset/limit are ignored: we show them all)."""
        self.query = replace(query, offset=0, limit=None)
        self.reload()

    def reload(self) -> None:
        """Re-run the query (rows may have appeared, gone or moved) on a worker thread.

        At 100k skills a common search word takes SQLite half a second; the window keeps
        answering meanwhile, and only the newest query's result is shown (``query_finished``).
        """
        self._generation += 1
        self.busy = True
        self._pool.clear()  # queries not started yet are already stale
        self._pool.start(_QueryTask(self.repository, self.query, self._generation, self._signals))

    def wait(self, timeout_ms: int = 30_000) -> bool:
        """Block until the running query is done and applied (tests, benchmarks, shutdown)."""
        self._pool.waitForDone(timeout_ms)
        QCoreApplication.sendPostedEvents()  # deliver its queued result now
        return not self.busy

    def shutdown(self) -> None:
        """Before the repository closes: let a running query finish, ignore its result."""
        self._generation += 1
        self._pool.clear()
        self._pool.waitForDone()

    def _apply(self, generation: int, result: QueryResult, first_page: list[SkillSummary], library_size: int) -> None:
        if generation != self._generation:
            return  # a newer query is on its way
        self.library_size = library_size
        self.beginResetModel()
        self._ids = result.ids
        self._rows = {skill_id: row for row, skill_id in enumerate(self._ids)}
        self._cache.clear()
        self._cache.update((summary.id, summary) for summary in first_page)
        self.total = result.total
        self.endResetModel()
        self.busy = False
        self.query_finished.emit()

    def _fail(self, generation: int, message: str) -> None:
        if generation == self._generation:
            self.busy = False
            self.query_failed.emit(message)

    def refresh(self, skill_ids: Iterable[str]) -> None:
        """Forget cached rows of these skills and repaint them (their content changed)."""
        for skill_id in skill_ids:
            self._cache.pop(skill_id, None)
            row = self._rows.get(skill_id)
            if row is not None:
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMNS) - 1))

    def ids(self) -> Sequence[str]:
        return self._ids

    def row_of(self, skill_id: str) -> int | None:
        return self._rows.get(skill_id)

    def id_at(self, row: int) -> str:
        return self._ids[row]

    def summary_at(self, row: int) -> SkillSummary | None:
        skill_id = self._ids[row]
        summary = self._cache.get(skill_id)
        if summary is None:
            self._load_page(row)
            summary = self._cache.get(skill_id)
        return summary

    def _load_page(self, row: int) -> None:
        start = max(0, row - PAGE // 4)  # a little behind too: scrolling goes both ways
        wanted = [skill_id for skill_id in self._ids[start : start + PAGE] if skill_id not in self._cache]
        for summary in self.repository.summaries(wanted):
            self._cache[summary.id] = summary
        while len(self._cache) > CACHE_LIMIT:
            self._cache.popitem(last=False)

    # --- Qt model interface ----------------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._ids)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section].title
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # Qt asks for a dozen roles per cell per paint; answer the ones we ignore at once.
        if role not in _ROLES or not index.isValid() or index.row() >= len(self._ids):
            return None
        if role == ID_ROLE:
            return self._ids[index.row()]
        if role == _ALIGN:
            return _RIGHT if COLUMNS[index.column()].numeric else _LEFT
        summary = self._cache.get(self._ids[index.row()]) or self.summary_at(index.row())
        if summary is None:  # deleted since the query ran; the next reload drops the row
            return "(removed)" if role == Qt.ItemDataRole.DisplayRole and index.column() == 0 else None
        if role == SUMMARY_ROLE:
            return summary
        if role == Qt.ItemDataRole.ToolTipRole:
            if index.column() == 0:
                tags = ", ".join(summary.tags) or "untagged"
                return f"{summary.name}\n{tags}"
            return None
        return display(summary, index.column())

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if not 0 <= column < len(COLUMNS):  # no sort column: relevance for a search, else name
            query = replace(self.query, sort=SortKey.RELEVANCE, descending=False)
        else:
            descending = order == Qt.SortOrder.DescendingOrder
            query = replace(self.query, sort=COLUMNS[column].sort, descending=descending)
        if query != self.query:
            self.query = query
            self.reload()
