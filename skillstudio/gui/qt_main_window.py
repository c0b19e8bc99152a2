"""The main window: the library browser (filters, search, table, detail pane) and its menus."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QByteArray,
    QEvent,
    QItemSelection,
    QItemSelectionModel,
    QObject,
    QPoint,
    QSettings,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDragEnterEvent,
    QDropEvent,
    QGuiApplication,
    QKeySequence,
    QShowEvent,
    QUndoCommand,
    QUndoStack,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QFileDialog,
    QHeaderView,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QMessageBox,
    QProgressBar,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from skillstudio.curation import retag
from skillstudio.gui.browser_state import BrowserState
from skillstudio.gui.qt_confidence_delegate import QtConfidenceDelegate
from skillstudio.gui.qt_detail_pane import QtDetailPane
from skillstudio.gui.qt_filter_panel import QtFilterPanel
from skillstudio.gui.qt_trash_dialog import QtTrashDialog
from skillstudio.gui.skill_table_model import COLUMNS, CONFIDENCE_COLUMN, SkillTableModel
from skillstudio.gui.workers import LibraryOp, show_error, without_full_collections
from skillstudio.library import (
    actor_for,
    create_library,
    library_name,
    recent_libraries,
    remember_recent,
    sample_library_path,
)
from skillstudio.model import ValidationError
from skillstudio.store import Actor, Database, LibraryChange, LibraryError, SkillQuery, SkillRepository
from skillstudio.store.backends import is_server_url

if TYPE_CHECKING:  # built once the window shows (see _add_docks)
    from skillstudio.gui.dashboard import QtDashboard
    from skillstudio.gui.qt_retrieval_preview import QtRetrievalPreview

SEARCH_DEBOUNCE_MS = 200
WATCH_INTERVAL_MS = 1000
PROGRESS_EVERY = 100  # skills between two progress reports of a long operation
SAVED_HIDDEN_MESSAGE_MS = 15_000  # long enough to read why a saved skill is not listed
# Column widths that show Name through Verifications at 1280x800 (with the default splitter
# sizes, see showEvent); the rest scroll into view.
DEFAULT_COLUMN_WIDTHS = {
    "Name": 210,
    "Domain": 80,
    "Module": 58,
    "Confidence": 92,
    "Success": 62,
    "Verifications": 88,
    "Rating": 55,
    "Uses": 50,
    "Source": 110,
    "Created by": 140,
    "Last verified": 95,
}
DASHBOARD_SHARE = 4  # by default the dashboard dock takes a quarter of the height,
DASHBOARD_MIN_HEIGHT = 280  # but no less than its plots need to read (axes, a five-row legend)
DETAILS_SHARE = 22  # the detail pane's default width, in % of the window's (at least its minimum)
LAYOUT_VERSION = 1  # saveState's version: bump it when the docks change, and old layouts are not restored
LAYOUT = "layout/"  # the QSettings group of the user's layout


def _fitting_size(width: int, height: int) -> tuple[int, int]:
    """The preferred size, shrunk to 90% of the screen on small displays (laptops, 1280x800)."""
    screen = QGuiApplication.primaryScreen()
    if screen is None:
        return width, height
    available = screen.availableGeometry()
    return min(width, int(available.width() * 0.9)), min(height, int(available.height() * 0.9))


class QtMainWindow(QMainWindow):
    """The browser. It owns the :class:`BrowserState` (``self.state``) every panel follows: the
    search box and the filter panel write its query, the table's selection writes its selection,
    and the library's changes reach each panel through it.

    The layout (window, docks, splitter, columns) is the user's: saved when the window closes,
    restored when it opens, and left alone when another library opens. The docks beside the
    browser (dashboard, retrieval preview) are built once the browser has shown: ``ready``."""

    ready = Signal()  # every panel is built (the docks too)
    # From a team library's listening thread (Database.watch_changes); queued to the GUI thread.
    pushed_change = Signal(object)  # the Database another writer committed to
    connection_changed = Signal(object, bool, str)  # (Database, connected, reason)

    def __init__(
        self, repository: SkillRepository, settings: QSettings | None = None, *, person: Actor | None = None
    ) -> None:
        super().__init__()
        self.settings = settings or QSettings()
        # Who uses the app: the actor of each library opened (a team library's server names its own).
        self._person = person or repository.actor
        self.setAcceptDrops(True)
        self.resize(*_fitting_size(1400, 820))
        self.undo_stack = QUndoStack(self)
        self._editors: list = []  # open skill editors, asked before the window closes
        self._data_version = 0
        self._pushed_pending = False  # a team library's server said others committed: reload when idle
        self._pushing: Database | None = None  # the team library whose pushes we hear (one listener each)
        self._pending_selection: list[str] = []  # to select once the running query shows it
        self._keep_filters = False  # the pending skill is a saved one: never clear filters for it
        self._restoring = False  # the window itself is re-selecting rows after a query
        self._closed = False
        self.state = BrowserState(repository, self)

        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Search names, descriptions and tags (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self._search_timer = QTimer(self, singleShot=True, interval=SEARCH_DEBOUNCE_MS)
        self._search_timer.timeout.connect(self.apply_filters)
        self.search.textChanged.connect(lambda _text: self._search_timer.start())

        self.table = QTableView(self)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setSortingEnabled(True)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.setShowGrid(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # uniform rows
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.horizontalHeader().setHighlightSections(False)
        self.table.setItemDelegateForColumn(CONFIDENCE_COLUMN, QtConfidenceDelegate(self.table))
        self.table.doubleClicked.connect(lambda _index: self.edit_current())
        self.model = SkillTableModel(self.state, self)
        self.model.query_started.connect(self._on_query_started)
        self.model.query_finished.connect(self._on_query_finished)
        self.model.query_failed.connect(lambda message: self.state.say(message, 10_000))
        self.table.setModel(self.model)
        self.table.selectionModel().selectionChanged.connect(self._on_table_selection)
        self.table.selectionModel().currentRowChanged.connect(self._on_table_selection)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionsMovable(True)
        header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        for column, spec in enumerate(COLUMNS):
            self.table.setColumnWidth(column, DEFAULT_COLUMN_WIDTHS.get(spec.title, 100))
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._show_columns_menu)

        self.filters = QtFilterPanel(self.state, self)
        self.detail = QtDetailPane(self.state, self)
        self.detail.skill_activated.connect(self.select_skill)
        centre = QWidget(self)
        layout = QVBoxLayout(centre)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.search)
        layout.addWidget(self.table)
        self.splitter = QSplitter(self)
        self.splitter.setObjectName("browser_splitter")
        self.splitter.addWidget(self.filters)
        self.splitter.addWidget(centre)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(1, 1)
        self._splitter_restored = False  # else the default sizes, once the window has its size
        self.setCentralWidget(self.splitter)

        self._watch_timer = QTimer(self, interval=WATCH_INTERVAL_MS)
        self._watch_timer.timeout.connect(self.check_external_changes)

        self._build_actions()
        self.state.library_opened.connect(self._on_library_opened)
        self.pushed_change.connect(self._on_pushed_change)
        self.connection_changed.connect(self._on_connection_changed)
        self.state.library_changed.connect(self._on_library_change)
        self.state.busy_changed.connect(self._show_busy)
        self.state.message.connect(self._show_message)
        self.state.current_changed.connect(self._follow_current)
        self.dashboard: QtDashboard | None = None  # the verification dashboard dock, once the window shows
        self.retrieval_preview: QtRetrievalPreview | None = None  # likewise
        self._starting_steps = {"rows", "choices"}
        self.model.query_finished.connect(lambda: self._started("rows"))
        self.model.query_failed.connect(lambda _message: self._started("rows"))
        self.filters.choices_loaded.connect(lambda: self._started("choices"))
        self._on_library_opened(repository)
        self._restore_layout()
        self._watch_timer.start()

    @property
    def repository(self) -> SkillRepository:
        """The open library as the current user (the state's; read it when acting)."""
        return self.state.require_repository()

    @property
    def starting(self) -> bool:
        """Shown, and its docks not built yet (they follow the first rows on screen)."""
        return self.isVisible() and self.dashboard is None and not self._closed

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._splitter_restored:  # the default: filters, the table as wide as it can be, details
            self._splitter_restored = True
            filters = self.filters.minimumWidth()
            details = max(self.detail.minimumWidth(), self.width() * DETAILS_SHARE // 100)
            self.splitter.setSizes([filters, self.width() - filters - details, details])

    def _started(self, step: str) -> None:
        """One read of start-up is done (the first rows, the filter choices). Once both are, the
        docks follow the table's next paint: building them holds the GUI thread for a moment,
        and the user should see the rows first (Qt paints after every other pending event)."""
        if step in self._starting_steps:
            self._starting_steps.discard(step)
            if not self._starting_steps:
                self.table.viewport().installEventFilter(self)
                self.table.viewport().update()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and watched is self.table.viewport():
            watched.removeEventFilter(self)
            QTimer.singleShot(0, self._add_docks)  # once this paint is on screen
        return super().eventFilter(watched, event)

    def _add_docks(self) -> None:
        """The dashboard and the retrieval preview: most of what starting took (pyqtgraph, numpy,
        eight plots, the retrieval providers), so they come once the browser shows."""
        if self._closed or self.dashboard is not None:
            return
        from skillstudio.gui.dashboard import QtDashboard
        from skillstudio.gui.qt_retrieval_preview import QtRetrievalPreview

        self.dashboard = QtDashboard(self.state, self)
        if not self.restoreDockWidget(self.dashboard):  # not in a saved layout: the default
            self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.dashboard)
            # The browser is the main view: the dock takes a quarter of the height, or what its
            # plots need to read on a small screen (35% of 800 pixels).
            height = max(self.height() // DASHBOARD_SHARE, DASHBOARD_MIN_HEIGHT)
            self.resizeDocks([self.dashboard], [height], Qt.Orientation.Vertical)
        self.menuBar().insertMenu(self.help_menu.menuAction(), self.dashboard.menu)
        self.table.addAction(self.dashboard.verify_action)  # also on the table's context menu
        self.retrieval_preview = QtRetrievalPreview(self.state, self)
        self.retrieval_preview.needs_width = not self.settings.value(f"{LAYOUT}preview_sized", False, bool)
        if not self.restoreDockWidget(self.retrieval_preview):
            self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.retrieval_preview)
        self.view_menu.addActions([self.retrieval_preview.toggle_action, self.retrieval_preview.embed_action])
        self.ready.emit()

    # ============================================================================================
    # Layout: the user's, kept in the settings
    # ============================================================================================

    def _restore_layout(self) -> None:
        """The layout the window had when it last closed (the docks' parts once they exist)."""
        geometry = self.settings.value(f"{LAYOUT}geometry")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        window = self.settings.value(f"{LAYOUT}window")
        if isinstance(window, QByteArray):
            self.restoreState(window, LAYOUT_VERSION)
        splitter = self.settings.value(f"{LAYOUT}splitter")
        if isinstance(splitter, QByteArray):
            self._splitter_restored = self.splitter.restoreState(splitter)
        columns = self.settings.value(f"{LAYOUT}columns")
        titles = self.settings.value(f"{LAYOUT}column_titles", [], list)
        # Saved for other columns (another version of the table): the defaults instead.
        if isinstance(columns, QByteArray) and titles == [column.title for column in COLUMNS]:
            header = self.table.horizontalHeader()
            header.restoreState(columns)
            header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)  # the order is each library's
        self._update_column_actions()

    def save_layout(self) -> None:
        """Remember the layout as it is now (the window does when it closes)."""
        self.settings.setValue(f"{LAYOUT}geometry", self.saveGeometry())
        self.settings.setValue(f"{LAYOUT}window", self.saveState(LAYOUT_VERSION))
        self.settings.setValue(f"{LAYOUT}splitter", self.splitter.saveState())
        self.settings.setValue(f"{LAYOUT}columns", self.table.horizontalHeader().saveState())
        self.settings.setValue(f"{LAYOUT}column_titles", [column.title for column in COLUMNS])
        if self.retrieval_preview is not None:
            self.settings.setValue(f"{LAYOUT}preview_sized", not self.retrieval_preview.needs_width)
        self.settings.sync()

    def _build_columns_menu(self) -> QMenu:
        """View › Columns (also the table header's context menu): which columns the table shows."""
        menu = QMenu("&Columns", self)
        self.column_actions: list[QAction] = []
        for column, spec in enumerate(COLUMNS):
            act = menu.addAction(spec.title)
            act.setCheckable(True)
            act.setChecked(True)
            act.setEnabled(column != 0)  # the name stays: a row must say which skill it is
            act.toggled.connect(lambda shown, c=column: self.table.setColumnHidden(c, not shown))
            self.column_actions.append(act)
        menu.addSeparator()
        menu.addAction("Show &All Columns", self.show_all_columns)
        return menu

    def _update_column_actions(self) -> None:
        for column, act in enumerate(self.column_actions):
            act.blockSignals(True)
            act.setChecked(not self.table.isColumnHidden(column))
            act.blockSignals(False)

    def show_all_columns(self) -> None:
        for act in self.column_actions:
            act.setChecked(True)

    def _show_columns_menu(self, position: QPoint) -> None:
        self.columns_menu.popup(self.table.horizontalHeader().mapToGlobal(position))

    # ============================================================================================
    # Library
    # ============================================================================================

    def install(self, repository: SkillRepository) -> None:
        """Show ``repository``'s library (whenever another library is opened)."""
        previous = self.state.repository
        self.state.operations.wait(-1)  # a bulk write on the previous library ends first
        # Every panel lets go of the previous library: the dashboard stops a batch, the preview
        # its search and Compute Embeddings, before the file closes below.
        self.state.set_repository(repository)  # the layout stays as the user left it
        if previous is not None and previous.database is not repository.database:
            previous.database.close()

    def _on_library_opened(self, repository: SkillRepository) -> None:
        self.undo_stack.clear()  # its commands belong to the previous library
        self._pending_selection = []
        self._keep_filters = False
        self._search_timer.stop()
        self.search.blockSignals(True)
        self.search.clear()  # the state's query starts empty for each library
        self.search.blockSignals(False)
        self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        database = repository.database
        self._pushed_pending = False
        self.connection_label.hide()
        if database is self._pushing:
            pass  # the same team library under another user name: its listener goes on
        elif database.watch_changes(
            lambda: self.pushed_change.emit(database),
            lambda connected, reason: self.connection_changed.emit(database, connected, reason),
        ):
            self._pushing = database  # the server pushes changes: nothing to compare
        else:
            self._data_version = database.data_version()
        path = self.state.library_path
        self.setWindowTitle(f"{path.stem if path is not None else library_name(database.location)} — SkillStudio")
        self.setWindowFilePath(str(path) if path is not None else "")
        self._remember_recent(database.location)
        self.status.setText("Searching…")  # the table's first query runs
        self._update_actions()

    def _refuse_while_busy(self) -> bool:
        """Another library cannot open under a running operation (it writes to this one)."""
        if not self.state.busy:
            return False
        QMessageBox.information(
            self,
            "An operation is running",
            f"{self.state.busy_text} is still running on this library; open another one when it is done.",
        )
        return True

    def open_library_file(self, path: str | Path) -> bool:
        """Open a library file or a team library's URL."""
        if self._refuse_while_busy():
            return False
        try:
            database = Database(path)
        except LibraryError as error:
            show_error(self, "Cannot open library", error)
            if not is_server_url(str(path)):  # a server may be back later: keep it in the list
                self._forget_recent(str(Path(path)))
            return False
        self.install(SkillRepository(database, actor_for(database, self._person)))
        return True

    def open_team_library_dialog(self) -> None:
        url, accepted = QInputDialog.getText(
            self,
            "Open Team Library",
            "The team library's URL, e.g. postgresql+psycopg://you@server/skills\n"
            "(the password comes from PGPASSWORD, ~/.pgpass or a service file; SkillStudio keeps none):",
        )
        url = url.strip()
        if not accepted or not url:
            return
        if not is_server_url(url):
            show_error(self, "Cannot open library", LibraryError(f"{url!r} is not a postgresql+psycopg:// URL"))
            return
        self.open_library_file(url)

    def new_library(self) -> None:
        if self._refuse_while_busy():
            return
        path, _ = QFileDialog.getSaveFileName(
            self, "New library", str(self.library_folder() / "skills.db"), "Skill libraries (*.db)"
        )
        if not path:
            return
        try:
            database = create_library(path)
        except LibraryError as error:
            show_error(self, "Cannot create library", error)
            return
        self.install(SkillRepository(database, self._person))

    def library_folder(self) -> Path:
        """Where the file dialogs start: the open library's folder (else the home folder)."""
        path = self.state.library_path
        return path.parent if path is not None and path.parent.is_dir() else Path.home()

    def open_library_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Open library", str(self.library_folder()), "Skill libraries (*.db);;All files (*)"
        )
        if path:
            self.open_library_file(path)

    def open_sample_library(self) -> None:
        try:
            path = sample_library_path()
        except (LibraryError, ValidationError, OSError) as error:
            show_error(self, "Cannot open the sample library", error)
            return
        self.open_library_file(path)

    def recent_libraries(self) -> list[str]:
        value = self.settings.value("recent_libraries", [])
        return [str(v) for v in (value if isinstance(value, list) else [value] if value else [])]

    def _remember_recent(self, location: str) -> None:
        self.settings.setValue("recent_libraries", remember_recent(self.recent_libraries(), location))
        self._rebuild_recent_menu()

    def _forget_recent(self, *locations: str) -> None:
        gone = set(locations)
        self.settings.setValue("recent_libraries", [p for p in self.recent_libraries() if p not in gone])
        self._rebuild_recent_menu()

    def _rebuild_recent_menu(self) -> None:
        """One entry per library opened before; one that cannot be opened now (its file is gone)
        is greyed out, with the reason in its tooltip. Rebuilt each time the menu opens."""
        self.recent_menu.clear()
        recent = recent_libraries(self.recent_libraries())
        for number, library in enumerate(recent, start=1):
            action = self.recent_menu.addAction(f"&{number} {library.name}  —  {library.location}")
            if library.problem is not None:
                action.setEnabled(False)
                action.setToolTip(library.problem)
            else:
                action.setToolTip(library.location)
                action.triggered.connect(lambda _checked=False, p=library.location: self.open_library_file(p))
        missing = [library.location for library in recent if library.problem is not None]
        if missing:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("&Forget the Missing Ones", lambda: self._forget_recent(*missing))
        self.recent_menu.setEnabled(bool(recent))

    # --- drag and drop of a .db file opens it ---------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if self._dropped_library(event) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        path = self._dropped_library(event)
        if path is not None:
            event.acceptProposedAction()
            self.open_library_file(path)

    @staticmethod
    def _dropped_library(event: QDragEnterEvent | QDropEvent) -> str | None:
        urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
        files = [url.toLocalFile() for url in urls if url.isLocalFile()]
        return files[0] if len(files) == 1 and files[0].lower().endswith(".db") else None

    # ============================================================================================
    # Browsing
    # ============================================================================================

    def current_query(self) -> SkillQuery:
        return self.state.query

    def apply_filters(self) -> None:
        """Search for what the search box says (after a pause in typing, or at once)."""
        self._search_timer.stop()
        self.state.set_query(replace(self.state.query, text=self.search.text()))

    def _on_query_started(self) -> None:
        self.status.setText("Searching…")

    def _on_query_finished(self) -> None:
        """The table shows a new result: select what was selected (or asked for) where it still is."""
        current: str | None
        if self._pending_selection:
            wanted, current = self._pending_selection, self._pending_selection[0]
        else:
            wanted, current = list(self.state.selection), self.state.current
        self._pending_selection = []
        keep_filters, self._keep_filters = self._keep_filters, False
        if keep_filters and current is not None and self.model.row_of(current) is None:
            self._show_alone(current)
            self._update_status()
            self.state.say(
                "The skill you saved does not match the filters or the search, so the table does not "
                "list it; it is shown on the right. View › Clear Filters lists every skill.",
                SAVED_HIDDEN_MESSAGE_MS,
            )
            return
        self._restore_selection(wanted, current)
        self._update_status()

    def _update_status(self) -> None:
        total = self.model.library_size
        shown = self.model.total
        self.status.setText(f"{shown:,} of {total:,} skills match" if shown != total else f"{total:,} skills")
        self._update_actions()

    def selected_ids(self) -> list[str]:
        return list(self.state.selection)

    def current_id(self) -> str | None:
        """The skill of the table's current row (None when the detail pane shows one the table does not)."""
        index = self.table.currentIndex()
        return self.model.id_at(index.row()) if index.isValid() else None

    def _table_selection(self) -> list[str]:
        rows = sorted(index.row() for index in self.table.selectionModel().selectedRows())
        return [self.model.id_at(row) for row in rows if row < self.model.rowCount()]

    def _on_table_selection(self, *_args: object) -> None:
        """The table's selection is the state's: the panels follow the state, not the table."""
        if self._restoring:
            return
        self.state.set_selection(self._table_selection(), self.current_id())
        self._update_actions()

    def select_skill(self, skill_id: str) -> None:
        """Go to a skill by id (a link followed); clears the filters and search if they hide it."""
        row = self.model.row_of(skill_id)
        if row is not None and not self.model.loading:
            self.table.selectRow(row)
            self.table.scrollTo(self.model.index(row, 0))
            return
        if not self.state.require_repository().exists(skill_id):
            self.state.say("That skill is not in this library (it may be in the trash).", 5000)
            return
        self._pending_selection = [skill_id]  # selected when the running (or next) query shows it
        self._keep_filters = False
        if row is None:
            self.clear_filters()  # re-queries; the selection follows when the result arrives

    def show_saved(self, skill_id: str) -> None:
        """An editor saved this skill: select its row, leaving the user's filters as they are.
        If they hide it, it is shown alone and the status bar says why it is not listed."""
        row = self.model.row_of(skill_id)
        if row is not None and not self.model.loading:
            self.table.selectRow(row)
            self.table.scrollTo(self.model.index(row, 0))
            return
        self._pending_selection = [skill_id]
        self._keep_filters = True
        if not self.model.loading:
            self.model.reload()  # the answer says whether the filters let it in

    def _follow_current(self, skill_id: str | None) -> None:
        """Another panel (the Retrieval Preview, the dashboard) made a skill current: select its row
        and the rows of the rest of the state's selection that the table shows, leaving the filters
        as they are; else the detail pane shows it alone."""
        if skill_id is None or skill_id == self.current_id():
            return
        if self.model.row_of(skill_id) is not None:
            shown = [i for i in self.state.selection if i != skill_id and self.model.row_of(i) is not None]
            self._restore_selection([skill_id, *shown], skill_id)
            return
        self._clear_table_selection()

    def _show_alone(self, skill_id: str) -> None:
        """The detail pane shows a skill no row of the table stands for."""
        self._clear_table_selection()
        self.state.set_selection((), skill_id)

    def _clear_table_selection(self) -> None:
        # Quietly: writing "nothing current" into the state now would send the panels to no
        # skill and back.
        self._restoring = True
        try:
            self.table.selectionModel().clear()
        finally:
            self._restoring = False
        self._update_actions()

    def _restore_selection(self, skill_ids: Sequence[str], current: str | None) -> None:
        """Select these skills' rows in one go (one signal, however many), ``current`` first."""
        rows = sorted(row for row in (self.model.row_of(i) for i in skill_ids) if row is not None)
        selection = QItemSelection()
        start = previous = None
        for row in [*rows, None]:
            if row is not None and previous is not None and row == previous + 1:
                previous = row
                continue
            if start is not None and previous is not None:
                selection.select(self.model.index(start, 0), self.model.index(previous, len(COLUMNS) - 1))
            start = previous = row
        current_row = self.model.row_of(current) if current is not None else None
        if current_row is None and rows:
            current_row = rows[0]
        model = self.table.selectionModel()
        self._restoring = True
        try:
            model.select(selection, QItemSelectionModel.SelectionFlag.ClearAndSelect)
            if current_row is not None:
                model.setCurrentIndex(self.model.index(current_row, 0), QItemSelectionModel.SelectionFlag.NoUpdate)
                self.table.scrollTo(self.model.index(current_row, 0))
        finally:
            self._restoring = False
        if rows or skill_ids:
            self._on_table_selection()
        else:  # nothing was selected: a skill the detail pane shows alone stays shown
            self.state.set_selection((), current)

    # --- changes --------------------------------------------------------------------------------

    def _on_library_change(self, change: LibraryChange) -> None:
        """A write from this process (the panels follow it themselves through the state). It
        moved the file's data_version too: remember that, so only other processes reload all."""
        repository = self.state.repository
        if repository is not None and repository.database is not self._pushing:
            self._data_version = repository.database.data_version()

    def check_external_changes(self) -> None:
        """Another process (the CLI, an engine, an agent) committed: reload what we show.

        A file is asked for its data_version each second; a team library's server pushes each
        commit (``pushed_change``), so it is never polled."""
        if self.dashboard is not None and self.dashboard.running:
            return  # a verification batch of ours is writing; everything reloads when it ends
        if self.state.busy:
            return  # our own operation is writing; its change announcement follows
        repository = self.state.repository
        if repository is None:
            return
        if repository.database is self._pushing:
            if self._pushed_pending:
                self._pushed_pending = False
                self.reload_all()
            return
        try:
            version = repository.database.data_version()
        except Exception:  # noqa: BLE001 - the file may be gone; keep showing what we have
            return
        if version != self._data_version:
            self._data_version = version
            self.reload_all()

    def _on_pushed_change(self, database: Database) -> None:
        if self.state.repository is None or self.state.repository.database is not database:
            return  # from a library closed meanwhile
        self._pushed_pending = True
        self.check_external_changes()  # now, or on the next tick once our own work is done

    def _on_connection_changed(self, database: Database, connected: bool, reason: str) -> None:
        if self.state.repository is None or self.state.repository.database is not database:
            return
        if connected:
            self.connection_label.hide()
            self._show_message(f"Reconnected to {database.location}", 5000)
        else:
            self.connection_label.setText("Connection to the team library lost; reconnecting…")
            self.connection_label.setToolTip(f"{database.location}: {reason}")
            self.connection_label.show()

    def reload_all(self) -> None:
        self.filters.reload_choices()
        self.model.reload()
        self.detail.refresh()
        if self.retrieval_preview is not None:
            self.retrieval_preview.schedule_search()

    # --- status bar -------------------------------------------------------------------------------

    def _show_busy(self, busy: bool) -> None:
        self.busy_bar.setVisible(busy)
        self.busy_label.setVisible(busy)
        self.busy_label.setText(self.state.busy_text if busy else "")

    def _show_progress(self, progress: object) -> None:
        if isinstance(progress, str) and self.state.busy:
            self.busy_label.setText(progress)

    def _show_message(self, text: str, timeout_ms: int) -> None:
        self.statusBar().showMessage(text, timeout_ms)

    # ============================================================================================
    # Actions
    # ============================================================================================

    def _build_actions(self) -> None:
        def action(text: str, slot, shortcut=None, tip: str = "") -> QAction:  # type: ignore[no-untyped-def]
            act = QAction(text, self)
            if shortcut is not None:
                act.setShortcut(shortcut)
            if tip:
                act.setStatusTip(tip)
            act.triggered.connect(lambda _checked=False: slot())
            return act

        file_menu = self.menuBar().addMenu("&File")
        self.new_library_action = action("&New Library…", self.new_library, QKeySequence("Ctrl+Shift+N"))
        self.open_library_action = action("&Open Library…", self.open_library_dialog, QKeySequence.StandardKey.Open)
        self.sample_action = action("Open &Sample Library", self.open_sample_library)
        self.open_team_action = action("Open &Team Library…", self.open_team_library_dialog)
        file_menu.addActions([self.new_library_action, self.open_library_action, self.open_team_action])
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.setToolTipsVisible(True)  # a greyed-out library says why
        self.recent_menu.aboutToShow.connect(self._rebuild_recent_menu)  # files come and go
        file_menu.addAction(self.sample_action)
        file_menu.addSeparator()
        self.import_action = action(
            "&Import…",
            self.import_skills,
            QKeySequence("Ctrl+I"),
            tip="Import a Workshop package, a SKILL.md folder, a JSON or Voyager library",
        )
        self.export_action = action(
            "&Export Selection…",
            self.export_selection,
            QKeySequence("Ctrl+E"),
            tip="Export the selected skills (or all shown) to a Workshop package",
        )
        self.prune_action = action(
            "&Prune…", self.prune_library, tip="Move stale, unused or superseded skills to the trash"
        )
        file_menu.addActions([self.import_action, self.export_action, self.prune_action])
        file_menu.addSeparator()
        file_menu.addAction(action("&Quit", self.close, QKeySequence.StandardKey.Quit))

        edit_menu = self.menuBar().addMenu("&Edit")
        self.undo_action = self.undo_stack.createUndoAction(self, "&Undo")
        self.undo_action.setShortcut(QKeySequence.StandardKey.Undo)
        self.redo_action = self.undo_stack.createRedoAction(self, "&Redo")
        self.redo_action.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence(QKeySequence.StandardKey.Redo)])
        edit_menu.addActions([self.undo_action, self.redo_action])
        edit_menu.addSeparator()
        self.new_skill_action = action("&New Skill…", self.new_skill, QKeySequence.StandardKey.New)
        self.edit_action = action("&Edit Skill…", self.edit_current, QKeySequence("Return"))
        self.edit_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.table.addAction(self.edit_action)  # Enter edits only while the table has focus
        self.add_tags_action = action("&Add Tags…", self.add_tags_to_selection, QKeySequence("Ctrl+T"))
        self.remove_tags_action = action("Remo&ve Tags…", self.remove_tags_from_selection, QKeySequence("Ctrl+Shift+T"))
        self.trash_action = action("Move to &Trash", self.trash_selection, QKeySequence.StandardKey.Delete)
        self.trash_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.table.addAction(self.trash_action)
        edit_menu.addActions([self.new_skill_action, self.edit_action])
        edit_menu.addSeparator()
        edit_menu.addActions([self.add_tags_action, self.remove_tags_action, self.trash_action])
        edit_menu.addSeparator()
        self.find_action = action("&Find", self.focus_search, QKeySequence.StandardKey.Find)
        edit_menu.addAction(self.find_action)
        edit_menu.addSeparator()
        edit_menu.addAction(action("Your &Name…", self.ask_user_name, tip="Recorded as the author of your edits"))
        self.settings_action = action(
            "&Settings…",
            self.show_settings,
            QKeySequence.StandardKey.Preferences,
            tip="Promotion thresholds, the reference opponent, prune limits: yours and this library's",
        )
        if self.settings_action.shortcut().isEmpty():  # no platform standard here (Linux): the usual one
            self.settings_action.setShortcut(QKeySequence("Ctrl+,"))
        edit_menu.addAction(self.settings_action)

        view_menu = self.menuBar().addMenu("&View")
        self.history_action = action("Skill &History…", self.show_history, QKeySequence("Ctrl+H"))
        self.trash_view_action = action("T&rash…", self.show_trash)
        self.refresh_action = action("Re&load", self.reload_all, QKeySequence.StandardKey.Refresh)
        self.clear_filters_action = action("&Clear Filters", self.clear_filters)
        view_menu.addActions(
            [self.history_action, self.trash_view_action, self.refresh_action, self.clear_filters_action]
        )
        self.columns_menu = self._build_columns_menu()
        view_menu.addMenu(self.columns_menu)
        view_menu.addSeparator()  # the Retrieval Preview's actions follow once the dock exists (_add_docks)
        self.view_menu = view_menu

        review_menu = self.menuBar().addMenu("Re&view")
        self.review_queue_action = action(
            "Review &Queue…",
            self.show_review_queue,
            QKeySequence("Ctrl+Shift+V"),
            "Pending skills: approve, reject or request changes",
        )
        self.audit_log_action = action("&Audit Log…", self.show_audit_log, QKeySequence("Ctrl+Shift+L"))
        review_menu.addActions([self.review_queue_action, self.audit_log_action])

        # The Verify menu, the dashboard's, goes before this one once the dock exists (_add_docks).
        self.help_menu = self.menuBar().addMenu("&Help")
        self.shortcuts_action = action(
            "&Keyboard Shortcuts", self.show_shortcuts, QKeySequence("F1"), tip="Every key the menus answer to"
        )
        self.documentation_action = action(
            "&Documentation", self.show_documentation, tip="The README and the docs, shown here"
        )
        self.about_action = action("&About SkillStudio", self.show_about)
        self.help_menu.addActions([self.shortcuts_action, self.documentation_action])
        self.help_menu.addSeparator()
        self.help_menu.addAction(self.about_action)

        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        for act in (
            self.edit_action,
            self.history_action,
            self.add_tags_action,
            self.remove_tags_action,
            self.trash_action,
            self.export_action,
        ):
            if act not in self.table.actions():
                self.table.addAction(act)

        self.busy_label = QLabel(self)  # what the running operation does (state.busy_text, progress)
        self.busy_bar = QProgressBar(self)
        self.busy_bar.setRange(0, 0)  # it runs; how far is in the label when the operation says
        self.busy_bar.setMaximumWidth(120)
        self.busy_bar.setTextVisible(False)
        for widget in (self.busy_label, self.busy_bar):
            widget.hide()
            self.statusBar().addPermanentWidget(widget)
        self.connection_label = QLabel(self)  # a team library's lost connection, until it is back
        self.connection_label.setStyleSheet("color: #b00020")
        self.connection_label.hide()
        self.statusBar().addPermanentWidget(self.connection_label)
        self.status = QLabel(self)
        self.statusBar().addPermanentWidget(self.status)

    def _update_actions(self) -> None:
        selected = bool(self.table.selectionModel() and self.table.selectionModel().hasSelection())
        for act in (self.add_tags_action, self.remove_tags_action, self.trash_action):
            act.setEnabled(selected)
        has_current = self.current_id() is not None
        self.edit_action.setEnabled(has_current)
        self.history_action.setEnabled(has_current)

    def ask_user_name(self) -> None:
        repository = self.state.require_repository()
        name, ok = QInputDialog.getText(
            self, "Your name", "Your edits are recorded under this name:", text=repository.actor.id
        )
        if ok and name.strip():
            self.settings.setValue("user/name", name.strip())
            self.state.set_repository(repository.as_actor(Actor(name.strip(), "human")))  # writes go out as them

    def clear_filters(self) -> None:
        """No filters, no search: the whole library (in the current order)."""
        self._search_timer.stop()
        self.search.blockSignals(True)
        self.search.clear()
        self.search.blockSignals(False)
        query = self.state.query
        self.state.set_query(SkillQuery(sort=query.sort, descending=query.descending))

    def focus_search(self) -> None:
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()

    # --- editing ------------------------------------------------------------------------------------

    def new_skill(self) -> None:
        self._open_editor(None)

    def edit_current(self) -> None:
        skill_id = self.current_id()
        if skill_id is not None:
            self._open_editor(skill_id)

    def _open_editor(self, skill_id: str | None) -> None:
        from skillstudio.gui.editor.qt_skill_editor import QtSkillEditor

        try:
            editor = QtSkillEditor(self.state, skill_id, self)
        except LibraryError as error:
            show_error(self, "Cannot edit this skill", error)
            return
        editor.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # closed editors do not pile up
        editor.saved.connect(self.show_saved)  # keeps the user's filters
        editor.open_skill_requested.connect(self.select_skill)
        editor.finished.connect(lambda _result, e=editor: self._editors.remove(e) if e in self._editors else None)
        self._editors.append(editor)
        editor.show()

    def show_history(self) -> None:
        from skillstudio.gui.qt_history import QtHistoryDialog

        skill_id = self.current_id()
        if skill_id is not None:
            QtHistoryDialog(self.state, skill_id, self).show()

    def show_review_queue(self) -> QDialog:
        from skillstudio.gui.review import QtReviewQueue

        dialog = QtReviewQueue(self.state, self)
        dialog.show()
        return dialog

    def show_audit_log(self) -> QDialog:
        from skillstudio.gui.review import QtAuditLog

        dialog = QtAuditLog(self.state, self)
        dialog.show()
        return dialog

    def show_trash(self) -> None:
        QtTrashDialog(self.state, self).exec()

    def show_settings(self) -> QDialog:
        from skillstudio.gui.qt_settings_dialog import QtSettingsDialog

        dialog = QtSettingsDialog(self.state, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    # --- help ----------------------------------------------------------------------------------------

    def show_shortcuts(self) -> QDialog:
        from skillstudio.gui.qt_help import QtShortcutsDialog

        dialog = QtShortcutsDialog(self.menuBar(), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def show_documentation(self) -> QDialog | None:
        from skillstudio.gui.qt_help import QtDocumentation
        from skillstudio.paths import documentation

        readme = documentation()
        if readme is None:
            QMessageBox.information(
                self,
                "Documentation",
                "This copy of SkillStudio was installed without its documentation. It is the README "
                "and the docs/ folder of the SkillStudio source.",
            )
            return None
        dialog = QtDocumentation(readme, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def show_about(self) -> None:
        from skillstudio.gui.qt_help import about_text

        QMessageBox.about(self, "About SkillStudio", about_text(self.repository.database.location))

    # --- sharing (docs/packages.md) ---------------------------------------------------------------

    def import_skills(self) -> None:
        from skillstudio.gui.qt_packages import QtImportDialog

        QtImportDialog(self.state, self).exec()

    def export_ids(self) -> list[str]:
        """The selection, or every skill the filters show when nothing is selected."""
        if self.selected_ids():
            return self.selected_ids()
        if not self.model.loading:
            return list(self.model.ids())  # what the table shows, without asking SQLite again
        return self.state.require_repository().query(self.current_query()).ids

    def export_selection(self) -> None:
        from skillstudio.gui.qt_packages import QtExportDialog

        QtExportDialog(self.state, self.export_ids(), self).exec()

    def prune_library(self) -> None:
        from skillstudio.gui.qt_packages import QtPruneDialog

        QtPruneDialog(self.state, self).exec()

    # --- bulk actions (undoable) -------------------------------------------------------------------

    def _ask_tags(self, title: str) -> list[str]:
        text, ok = QInputDialog.getText(self, title, "Tags, separated by commas:")
        return [tag.strip() for tag in text.split(",") if tag.strip()] if ok else []

    def add_tags_to_selection(self) -> None:
        tags = self._ask_tags("Add tags")
        if tags:
            self._push(_RetagCommand(self._run_operation, self.selected_ids(), add=tags))

    def remove_tags_from_selection(self) -> None:
        tags = self._ask_tags("Remove tags")
        if tags:
            self._push(_RetagCommand(self._run_operation, self.selected_ids(), remove=tags))

    def trash_selection(self) -> None:
        ids = self.selected_ids()
        if not ids:
            return
        noun, pronoun = ("this skill", "it") if len(ids) == 1 else (f"these {len(ids):,} skills", "them")
        answer = QMessageBox.question(
            self, "Move to trash", f"Move {noun} to the trash? (Edit › Undo brings {pronoun} back.)"
        )
        if answer == QMessageBox.StandardButton.Yes:
            self._push(_TrashCommand(self._run_operation, ids))

    def _run_operation(
        self, op: Callable[[SkillRepository], Any], title: str, success: Callable[[Any], None] | None = None
    ) -> None:
        """Run a write in the background, as the browser's busy work (progress in the status bar)."""
        operation: LibraryOp[Any] = LibraryOp(self.state, self, without_full_collections(op), title=title)
        operation.progress(self._show_progress)
        if success is not None:
            operation.success(success)
        operation.run_in_background()

    def _push(self, command: _BulkCommand) -> None:
        """Run a command; once its first run succeeded, it goes on the undo stack (a failure is
        reported, and the command stays off the stack)."""

        def applied(_result: object) -> None:
            command.first_run_done = True
            self.undo_stack.push(command)

        self._run_operation(command.apply, command.text(), applied)

    # --- closing ---------------------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        for editor in list(self._editors):  # each asks about its unsaved changes
            if not editor.can_close():
                event.ignore()
                return
        if self.dashboard is not None and not self.dashboard.can_close():  # asks, then cancels a batch
            event.ignore()
            return
        self.save_layout()
        self._closed = True
        if self.retrieval_preview is not None:
            self.retrieval_preview.shutdown()  # cancels Compute Embeddings; the batches stored stay stored
        self._watch_timer.stop()
        self.state.operations.wait(-1)  # a bulk write finishes before the library can close
        self.state.close()
        for panel in (self.model, self.filters, self.detail):
            panel.shutdown()
        super().closeEvent(event)


class _BulkCommand(QUndoCommand):
    """An undoable change of many skills; each run (do, undo, redo) is a background operation.

    QUndoStack.push() calls redo(); the window ran the command already, so the first call is
    skipped. Operations run one at a time in the order asked, so an undo queued behind its
    command's first run sees that run's result.
    """

    def __init__(self, run: Callable[..., None], text: str) -> None:
        super().__init__(text)
        self.run = run  # QtMainWindow._run_operation
        self.first_run_done = False

    def redo(self) -> None:
        if self.first_run_done:
            self.first_run_done = False
            return
        self.run(self.apply, self.text())

    def undo(self) -> None:
        self.run(self.revert, f"Undo: {self.text()}")

    def apply(self, repository: SkillRepository) -> Any:
        raise NotImplementedError

    def revert(self, repository: SkillRepository) -> Any:
        raise NotImplementedError


class _TrashCommand(_BulkCommand):
    def __init__(self, run: Callable[..., None], skill_ids: list[str]) -> None:
        super().__init__(run, f"Move {len(skill_ids)} skill{'s' if len(skill_ids) != 1 else ''} to the trash")
        self.skill_ids = skill_ids

    def apply(self, repository: SkillRepository) -> None:
        repository.trash.delete_many(self.skill_ids, message="moved to the trash from the browser")

    def revert(self, repository: SkillRepository) -> Iterator[str]:
        total = len(self.skill_ids)
        for done, skill_id in enumerate(self.skill_ids, start=1):
            repository.trash.restore(skill_id, message="undo: move to trash")
            if done % PROGRESS_EVERY == 0 or done == total:
                yield f"Restoring {done:,} of {total:,} skills…"


class _RetagCommand(_BulkCommand):
    def __init__(
        self, run: Callable[..., None], skill_ids: list[str], *, add: Sequence[str] = (), remove: Sequence[str] = ()
    ) -> None:
        verb = f"Add tags {', '.join(add)}" if add else f"Remove tags {', '.join(remove)}"
        super().__init__(run, verb)
        self.skill_ids, self.add, self.remove = skill_ids, tuple(add), tuple(remove)
        self.before: dict[str, tuple[str, ...]] = {}  # the tags of the skills retag changed

    def apply(self, repository: SkillRepository) -> None:
        tags = {row.id: row.tags for row in repository.summaries(self.skill_ids)}  # columns only: cheap
        changed = {skill.id for skill in retag(repository, self.skill_ids, add=self.add, remove=self.remove)}
        self.before = {skill_id: tags[skill_id] for skill_id in changed}

    def revert(self, repository: SkillRepository) -> None:
        if not self.before:
            return
        restored = [replace(skill, tags=self.before[skill.id]) for skill in repository.get_many(list(self.before))]
        repository.update_many(restored, message=f"undo: {self.text().lower()}")


__all__ = ["COLUMNS", "QtMainWindow"]
