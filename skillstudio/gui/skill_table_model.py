"""The browser's table model: the ordered ids of one query, rows built lazily into a cache.

As in Anki's browser, a query returns only ids (cheap even for 100,000 skills); a row's
columns are read from the store the first time a view paints it, a page at a time, and kept
in a bounded cache. Sorting re-runs the query in SQLite rather than sorting in Python.

Each page also reads its rows' marks (:func:`page_marks`, one batch per page): a tier the
credited evidence contradicts (the confidence badge's warning and tooltip), and a person's
refinement and the original it supersedes, which share a name (a mark in the name cell).

The model shows ``BrowserState.query``: it re-queries when the query changes, when another
library opens, and when skills join or leave the library; it repaints the rows whose content,
quality, review or evidence changed (whoever wrote them, in this process), and every row when
the library's settings (the policy that judges tiers) change.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt, QTimer, Signal

from skillstudio.gui.qt_confidence_delegate import CONTRADICTION_ROLE
from skillstudio.gui.workers import LatestOnly, give_back_freed_memory, readable
from skillstudio.store import (
    Cancellation,
    ChangeKind,
    LibraryChange,
    PackedIds,
    SkillQuery,
    SkillRepository,
    SkillSummary,
    SortKey,
)
from skillstudio.verification.marks import RowMarks, page_marks

if TYPE_CHECKING:
    from skillstudio.gui.browser_state import BrowserState

ID_ROLE = Qt.ItemDataRole.UserRole + 1
SUMMARY_ROLE = Qt.ItemDataRole.UserRole + 2

_ALIGN = Qt.ItemDataRole.TextAlignmentRole
_ROLES = frozenset(
    {Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole, _ALIGN, ID_ROLE, SUMMARY_ROLE, CONTRADICTION_ROLE}
)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_LEFT = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)

PAGE = 200  # rows read per cache miss: about two screens
FIRST_SCREEN = 64  # rows read before a query's answer shows: a tall window's worth
CACHE_LIMIT = 20_000  # rows kept; older pages are dropped first
FOLLOW_CHANGES_MS = 50  # changes arriving within this follow together

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
NAME_COLUMN, CONFIDENCE_COLUMN = 0, 3
_NO_MARKS = RowMarks()


def display(summary: SkillSummary, column: int, marks: RowMarks = _NO_MARKS) -> str:
    match column:
        case 0:
            # A refinement keeps its original's name: without the mark the two rows look the same.
            # The mark comes first, where eliding a long name cannot cut it off.
            return f"[{marks.lineage}] {summary.name}" if marks.lineage else summary.name
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


@dataclass(frozen=True)
class _FirstScreen:
    """The beginning of one query's answer: its first ids, their rows and marks."""

    query: SkillQuery
    ids: list[str]
    rows: list[SkillSummary]
    marks: dict[str, RowMarks]
    library_size: int | None  # read only when these ids are all there is


@dataclass(frozen=True)
class _Answer:
    """All of one query's ids, in order, and the library's size."""

    query: SkillQuery
    ids: PackedIds
    library_size: int


def _first_screen(repository: SkillRepository, query: SkillQuery) -> _FirstScreen:
    """Off the GUI thread: the first page alone, so that it shows before the rest is read (at
    100k skills every match of a common word ranked takes half a second, a page a tenth)."""
    ids = repository.first_page(query, FIRST_SCREEN)
    rows = repository.summaries(ids)
    library_size = repository.count() if len(ids) < FIRST_SCREEN else None
    return _FirstScreen(query, ids, rows, page_marks(repository, rows), library_size)


def _all_ids(repository: SkillRepository, query: SkillQuery, cancellation: Cancellation) -> _Answer:
    """Off the GUI thread, after the first screen: every id, and where each one is (unless
    another query is asked for first: ``cancellation`` stops SQLite then). Packed: a million ids
    as strings, and a dict of where each one is, took some 160 MB."""
    ids = repository.query_ids(query, cancellation=cancellation)
    give_back_freed_memory()  # the reading's temporaries, and the answer shown before this one
    return _Answer(query, ids, repository.count())


class SkillTableModel(QAbstractTableModel):
    """The rows of ``state.query``, following the state: its query, its library, its changes.

    ``query_started`` / ``query_finished`` / ``query_failed`` frame each query; ``loading`` says
    whether one (or a refresh after a change) is under way. A query's first screen of rows is
    shown first (``first_rows_shown``); the rest of its ids arrive after it, as more rows.
    """

    query_started = Signal()
    first_rows_shown = Signal()  # the query's first screen is in the table; the rest may follow
    query_finished = Signal()
    query_failed = Signal(str)

    def __init__(self, state: BrowserState, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.query = state.query  # the query of the rows shown (or being loaded)
        self._ids: Sequence[str] = []
        self._row_of: Callable[[str], int | None] = dict[str, int]().get  # where an id of _ids is
        self._cache: OrderedDict[str, SkillSummary] = OrderedDict()
        self._marks: dict[str, RowMarks] = {}  # of the cached rows that have any
        self.total = 0  # matching skills (== len(ids) once the whole answer is in)
        self.library_size = 0  # skills in the library, whatever the query
        self._loader = LatestOnly(self, self._show_first_screen, self._fail)
        # The rest of the ids read on a thread of their own: a new query's first screen never
        # waits behind the previous query's full ranking (seconds at 1M skills).
        self._rest_loader = LatestOnly(self, self._show_all, self._fail)
        self._rest_cancellation = Cancellation()  # of the rest being read
        # The rest is asked for once the first screen is painted (a 0 ms timer fires after the
        # events already posted, the repaint among them): reading it on another thread while
        # the table repaints slowed that repaint, the last part of a keystroke's first screen.
        self._rest_timer = QTimer(self, singleShot=True, interval=0)
        self._rest_timer.timeout.connect(self._read_the_rest)
        # A burst of changes (a verification batch, an undo restoring skills one by one) is
        # followed once: one re-query, or one repaint of the rows that changed.
        self._changed_ids: set[str] = set()
        self._requery = False
        self._follow_timer = QTimer(self, singleShot=True, interval=FOLLOW_CHANGES_MS)
        self._follow_timer.timeout.connect(self._follow_changes)
        state.query_changed.connect(self._on_query_changed)
        state.library_opened.connect(self._on_library_opened)
        state.library_changed.connect(self._on_library_changed)
        self.reload()

    # --- querying --------------------------------------------------------------------------------

    @property
    def loading(self) -> bool:
        """A query runs, or changes wait to be followed: the rows may not be the latest yet."""
        return (
            self._loader.loading
            or self._rest_timer.isActive()
            or self._rest_loader.loading
            or self._follow_timer.isActive()
        )

    def reload(self) -> None:
        """Re-run the query (rows may have appeared, gone or moved) on a worker thread; the
        window keeps answering meanwhile, and only the newest query's result is shown."""
        repository = self.state.repository
        if repository is None:
            return
        self.query = self.state.query
        self._stop_reading_the_rest()
        self._loader.request(_first_screen, repository, self.query)
        self.query_started.emit()

    def shutdown(self) -> None:
        """Before the library closes: drop what is pending, let a running query finish unseen."""
        self._follow_timer.stop()
        self._loader.discard()
        self._stop_reading_the_rest()
        for loader in (self._loader, self._rest_loader):
            loader.wait()

    def _stop_reading_the_rest(self) -> None:
        """The rest of an older query is nobody's question now: drop it, and stop SQLite."""
        self._rest_timer.stop()
        self._rest_loader.discard()
        self._rest_cancellation.cancel()
        self._rest_cancellation = Cancellation()

    def _on_query_changed(self, _query: SkillQuery) -> None:
        self.reload()

    def _on_library_opened(self, _repository: SkillRepository) -> None:
        self.shutdown()  # the running query reads the library about to close
        self._changed_ids.clear()
        self._requery = False
        self.beginResetModel()
        self._show_ids([])
        self.total, self.library_size = 0, 0
        self._cache.clear()
        self._marks.clear()
        self.endResetModel()
        self.reload()

    def _on_library_changed(self, change: LibraryChange) -> None:
        if change.touches(ChangeKind.MEMBERSHIP):
            self._requery = True  # rows come or go: only the query knows where
        elif change.touches(ChangeKind.SETTINGS):
            self._changed_ids.update(self._cache)  # another policy judges every tier afresh
        elif change.touches(ChangeKind.CONTENT | ChangeKind.QUALITY | ChangeKind.REVIEW | ChangeKind.RUNS):
            self._changed_ids.update(change.skill_ids)
        else:
            return
        if not self._follow_timer.isActive():
            self._follow_timer.start()

    def _follow_changes(self) -> None:
        changed, self._changed_ids = self._changed_ids, set()
        if self._requery:
            self._requery = False
            self.reload()  # reads every shown row afresh
        else:
            self.refresh(changed)

    def _show_first_screen(self, screen: _FirstScreen) -> None:
        self.beginResetModel()
        self._show_ids(screen.ids)
        self._cache.clear()
        self._cache.update((summary.id, summary) for summary in screen.rows)
        self._marks = dict(screen.marks)
        self.total = len(self._ids)
        self.endResetModel()
        if screen.library_size is None:  # the rest is due: before the signal, whose slots may ask anew
            self._rest_timer.start()
        self.first_rows_shown.emit()
        if screen.library_size is not None and self.query is screen.query:  # the whole answer
            self.library_size = screen.library_size
            self.query_finished.emit()

    def _read_the_rest(self) -> None:
        """The rest of ``self.query``'s ids: a new query (reload) stops this timer first."""
        repository = self.state.repository
        if repository is not None:
            self._rest_loader.request(_all_ids, repository, self.query, self._rest_cancellation)

    def _show_all(self, answer: _Answer) -> None:
        self.library_size = answer.library_size
        ids = answer.ids
        shown = len(self._ids)
        if ids[:shown] == list(self._ids):  # as it should be: the rest goes below the first screen
            if len(ids) > shown:
                self.beginInsertRows(QModelIndex(), shown, len(ids) - 1)
                self._show_ids(ids)
                self.endInsertRows()
        else:  # the library changed in between: show the whole answer afresh
            self.beginResetModel()
            self._show_ids(ids)
            self.endResetModel()
        self.total = len(ids)
        self.query_finished.emit()

    def _show_ids(self, ids: Sequence[str]) -> None:
        """Rows for these ids (a first screen's few as a list, a whole answer packed)."""
        self._ids = ids
        self._row_of = ids.row_of if isinstance(ids, PackedIds) else {i: row for row, i in enumerate(ids)}.get

    def _fail(self, error: BaseException) -> None:
        self.query_failed.emit(readable(error))

    def refresh(self, skill_ids: Iterable[str]) -> None:
        """Forget cached rows of these skills, and of the rows whose marks name them (a renamed
        original), and repaint them (their content changed).

        One dataChanged over the span of the rows: the view repaints only what it shows, so a
        retag of 10,000 skills costs one signal, not 10,000."""
        changed = set(skill_ids)
        changed.update(i for i, marks in self._marks.items() if not marks.linked.isdisjoint(changed))
        rows = []
        for skill_id in changed:
            self._cache.pop(skill_id, None)
            self._marks.pop(skill_id, None)
            row = self._row_of(skill_id)
            if row is not None:
                rows.append(row)
        if rows:
            self.dataChanged.emit(self.index(min(rows), 0), self.index(max(rows), len(COLUMNS) - 1))

    def ids(self) -> Sequence[str]:
        return self._ids

    def row_of(self, skill_id: str) -> int | None:
        return self._row_of(skill_id)

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
        repository = self.state.repository
        if repository is None:
            return
        start = max(0, row - PAGE // 4)  # a little behind too: scrolling goes both ways
        wanted = [skill_id for skill_id in self._ids[start : start + PAGE] if skill_id not in self._cache]
        summaries = repository.summaries(wanted)
        for summary in summaries:
            self._cache[summary.id] = summary
        self._marks.update(page_marks(repository, summaries))
        while len(self._cache) > CACHE_LIMIT:
            dropped, _ = self._cache.popitem(last=False)
            self._marks.pop(dropped, None)

    # --- Qt model interface ----------------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._ids)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
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
        marks = self._marks.get(summary.id, _NO_MARKS)
        if role == CONTRADICTION_ROLE:
            return marks.contradiction
        if role == Qt.ItemDataRole.ToolTipRole:
            if index.column() == NAME_COLUMN:
                tags = ", ".join(summary.tags) or "untagged"
                return "\n".join(line for line in (summary.name, tags, marks.lineage_text()) if line)
            if index.column() == CONFIDENCE_COLUMN:
                return marks.tier_text() or None
            return None
        return display(summary, index.column(), marks)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sorting is part of the query: SQLite sorts, and the state says how the rows are ordered."""
        current = self.state.query
        if not 0 <= column < len(COLUMNS):  # no sort column: relevance for a search, else name
            query = replace(current, sort=SortKey.RELEVANCE, descending=False)
        else:
            descending = order == Qt.SortOrder.DescendingOrder
            query = replace(current, sort=COLUMNS[column].sort, descending=descending)
        self.state.set_query(query)
