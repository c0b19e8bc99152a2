"""The verification dashboard: plots that follow the browser, and batches run off the GUI thread.

``QtDashboard(state)`` is a dock the main window places under the browser. It follows the
:class:`~skillstudio.gui.browser_state.BrowserState`, and reaches into no other widget:

- the query and the selection say what to plot. The data is computed by
  :mod:`skillstudio.verification.dashboard_data` through one ``LatestOnly`` loader and applied
  one plot per event-loop turn;
- ``library_changed``: changes to what the plots show (quality, runs, membership, content)
  reload them; a running batch's own changes, one per skill applied, at most every
  ``REFRESH_DURING_BATCH_MS``;
- ``library_opened``: everything about the previous library is forgotten at once: the last
  batch's result and verdicts, the live plot, every plot's data, the runs list and any report.

The plots are in tabs, two side by side, so that a dock a third of the window high shows them
whole; the Batch tab (the live plot beside the result) comes forward when a batch starts.

A batch is the core runner driven by :func:`~skillstudio.gui.dashboard.verify_worker.batch_events`
in the dashboard's own ``Tasks``: not the browser's write queue, since a batch runs for minutes
and the browser's edits must not wait behind it. Its writes name the dashboard as initiator. It
keeps the browser busy while it runs, so the main window opens no other library under it. When
it ends, the result says, for each skill whose tier did not follow its figures, why and what to
do (:mod:`skillstudio.verification.verdicts`).
The main window adds :attr:`QtDashboard.menu` to its menu bar and asks :meth:`QtDashboard.can_close`
before it closes (during a batch, the dashboard asks the user).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, replace

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from skillstudio.gui.browser_state import BrowserState
from skillstudio.gui.dashboard.qt_plots import (
    FLAG,
    MAX_SERIES,
    QtCompositionPlot,
    QtContentPlot,
    QtHistogramPlot,
    QtLiftPlot,
    QtLiveRatePlot,
    QtOpponentPlot,
    QtPlotPanel,
    QtSuccessHistoryPlot,
    QtTierPlot,
)
from skillstudio.gui.dashboard.qt_runs_dialog import QtRunsDialog
from skillstudio.gui.dashboard.qt_verify_dialog import QtVerifyDialog
from skillstudio.gui.dashboard.verify_worker import BatchOptions, BatchOutcome, BatchUpdate, batch_events
from skillstudio.gui.rich_text import escaped
from skillstudio.gui.workers import LatestOnly, Tasks, readable, show_error
from skillstudio.model import Domain
from skillstudio.store import AuditAction, ChangeKind, LibraryChange, SkillQuery, SkillRepository, initiated_by
from skillstudio.store.runs import RunStore
from skillstudio.verification.dashboard_data import Snapshot, snapshot
from skillstudio.verification.lift import BaselineProgress
from skillstudio.verification.paired_data import PairedSnapshot, paired_snapshot
from skillstudio.verification.runner import Progress, RunStarted
from skillstudio.verification.verdicts import Verdict, summarize

log = logging.getLogger(__name__)

REFRESH_DEBOUNCE_MS = 250
REFRESH_DURING_BATCH_MS = 2000  # how often the plots reload while a batch applies skill after skill
BATCH_STOP_TIMEOUT_MS = 120_000  # a chunk in flight finishes before the runner sees Cancel
SELECTED_FOR_PLOTS = 500  # ranked for the plots (the most credited games drawn); the rest is not read
PLOTTED = ChangeKind.QUALITY | ChangeKind.RUNS | ChangeKind.MEMBERSHIP | ChangeKind.CONTENT
IDLE_TITLE = "<b>No batch running.</b> Select skills, then Verify Selection… (Ctrl+Shift+B)."
IDLE_RESULT = "No batch has run on this library since it was opened; Runs… lists the earlier ones."
BUSY_TEXT = "A verification batch (Verify › Cancel Batch stops it)"  # what the browser says it is busy with
SELECTED_TAB = "Selected skills"
NO_SELECTION = "Select skills in the browser: their tiers, credited evidence and contradicted tiers show here."


# --- the batch panel ------------------------------------------------------------------------------


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class QtBatchPanel(QWidget):
    """The running batch: its title, games done / total, times, W/L/D/E, Cancel; and, in
    :attr:`results` (which the dashboard places beside the live plot), the last batch's result
    and the verdicts on the skills whose tier did not follow their figures."""

    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel(IDLE_TITLE, self)
        self.bar = QProgressBar(self)
        self.figures = QLabel("", self)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel_requested.emit)
        # Fixed heights: text that changes must never re-layout the dock, or every plot would
        # resize and repaint at once (a stall of six plots' worth).
        line = self.fontMetrics().lineSpacing()
        for label in (self.title, self.figures):
            label.setFixedHeight(line + 4)
        self.title.setMinimumWidth(60)  # a long title is cut by the layout, never widens the dock
        self.bar.setMinimumWidth(160)
        # One row: the dock is a third of the window high, and its height is the plots'.
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title, 3)
        layout.addWidget(self.bar, 2)
        layout.addWidget(self.figures)
        layout.addWidget(self.cancel_button)

        # The result: what was recorded and changed (plain text), then the verdicts (rich text).
        self.summary = QLabel("", self)
        self.summary.setWordWrap(True)
        self.verdicts = QLabel("", self)
        self.verdicts.setWordWrap(True)
        self.verdicts.setTextFormat(Qt.TextFormat.RichText)
        for label in (self.summary, self.verdicts):
            label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.results = _scrolled(self.summary, self.verdicts)

        self.started_at = 0.0
        self.done_at_start = 0
        self.done = 0
        self.total = 0
        self.counts = (0, 0, 0, 0)
        self._tick = QTimer(self, interval=1000)
        self._tick.timeout.connect(self._show_running)
        self.reset()

    def reset(self) -> None:
        """Back to "no batch" (another library: the last batch's result is about the previous one)."""
        self._tick.stop()
        self.title.setText(IDLE_TITLE)
        self.figures.setText("")
        self.summary.setText(IDLE_RESULT)
        self.verdicts.setText("")
        self.bar.setRange(0, 1)
        self.bar.setValue(0)
        self.bar.setFormat("")  # no batch: nothing to count
        self.cancel_button.setEnabled(False)
        self.cancel_button.setText("Cancel")
        self.started_at = 0.0
        self.done = self.done_at_start = self.total = 0
        self.counts = (0, 0, 0, 0)

    def begin(self, text: str) -> None:
        self.title.setText(f"<b>{escaped(text)}</b>")
        self.summary.setText("The result and what to do about it show here when the batch ends.")
        self.verdicts.setText("")
        self.bar.setRange(0, 0)  # busy until the run says how many games
        self.bar.setFormat("starting…")
        self.figures.setText("")
        self.cancel_button.setEnabled(True)
        self.cancel_button.setText("Cancel")
        self.started_at = time.monotonic()
        self.done = self.done_at_start = self.total = 0
        self.counts = (0, 0, 0, 0)
        self._tick.start()

    def started(self, event: RunStarted) -> None:
        skipped = f", {len(event.skipped):,} skipped" if event.skipped else ""
        self.title.setText(
            f"<b>Run {escaped(event.run_id)}</b>: {event.skills:,} skills{skipped} on {escaped(event.executor)}, "
            f"seed {event.seed}"
        )
        self.total, self.done, self.done_at_start = event.games_total, event.games_done, event.games_done
        self.bar.setRange(0, max(1, event.games_total))
        self.bar.setValue(event.games_done)
        self.bar.setFormat("%v / %m games")
        self._show_running()

    def progress(self, event: Progress) -> None:
        self.done, self.total = event.games_done, event.games_total
        self.counts = (event.wins, event.losses, event.draws, event.errors)
        self.bar.setMaximum(max(1, event.games_total))
        self.bar.setValue(event.games_done)
        self._show_running()

    def baseline(self, event: BaselineProgress) -> None:
        """The default plan's games (--baseline), played after the skills'."""
        self.done, self.total = event.games_done, event.games_total
        self.bar.setMaximum(max(1, event.games_total))
        self.bar.setValue(event.games_done)
        self.bar.setFormat("%v / %m games of the default plan")
        c = event.counts
        self.figures.setText(f"default plan: W {c.wins:,}  L {c.losses:,}  D {c.draws:,}  E {c.errors:,}")

    def cancelling(self) -> None:
        self.cancel_button.setEnabled(False)
        self.cancel_button.setText("Cancelling…")

    def _show_running(self) -> None:
        elapsed = time.monotonic() - self.started_at
        rate = (self.done - self.done_at_start) / elapsed if elapsed > 0 else 0.0
        eta = f"remaining ~{_clock((self.total - self.done) / rate)}" if rate > 0 else "remaining …"
        self.figures.setText(f"{_clock(elapsed)} · {eta} · {self._counts_text()}")

    def _counts_text(self) -> str:  # W/L/D/E, as the CLI prints them
        wins, losses, draws, errors = self.counts
        return f"W {wins:,}  L {losses:,}  D {draws:,}  E {errors:,}"

    def end(self, title: str, summary: str, status: str, verdicts_html: str = "") -> None:
        """The batch ended (``status``: finished, cancelled, failed): the bar and figures say so,
        and nothing is left running or estimated."""
        self._tick.stop()
        took = _clock(time.monotonic() - self.started_at)
        self.figures.setText(f"{status} after {took} · {self._counts_text()}" if self.bar.maximum() else f"{status}")
        self.title.setText(f"<b>{escaped(title)}</b>")
        self.summary.setText(summary)
        self.verdicts.setText(verdicts_html)
        self.cancel_button.setEnabled(False)
        self.cancel_button.setText("Cancel")
        if self.bar.maximum() == 0:  # it never started: an empty bar, not a busy one
            self.bar.setRange(0, 1)
            self.bar.setValue(0)
            self.bar.setFormat(status)
        else:
            self.bar.setFormat(f"%v / %m games · {status}")


def _scrolled(*labels: QLabel) -> QScrollArea:
    """Labels stacked in a frameless scroll area (long text scrolls, the dock keeps its size)."""
    inner = QWidget()
    layout = QVBoxLayout(inner)
    layout.setContentsMargins(6, 2, 6, 2)
    for label in labels:
        layout.addWidget(label)
    layout.addStretch(1)
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidget(inner)
    return area


@dataclass
class _Batch:
    cancel: threading.Event  # the runner's own cancel token: it stops between chunks
    busy: int  # the browser's busy token: no other library opens under a running batch
    run_id: str | None = None
    seed: int | None = None


# --- the dashboard --------------------------------------------------------------------------------


class QtDashboard(QDockWidget):
    """Plots following the browser's filter and selection, the batch panel, Verify and Runs."""

    batch_progress = Signal(object)  # BatchUpdate, throttled in the worker
    batch_finished = Signal(object)  # BatchOutcome, or None when the batch failed
    data_loaded = Signal()  # the plots are up to date: drawn, and no newer reload due

    def __init__(self, state: BrowserState, parent: QWidget | None = None) -> None:
        super().__init__("Verification dashboard", parent)
        self.setObjectName("dashboard_dock")
        self.setAllowedAreas(Qt.DockWidgetArea.BottomDockWidgetArea | Qt.DockWidgetArea.RightDockWidgetArea)
        self.state = state
        self.batch: _Batch | None = None
        self.last_outcome: BatchOutcome | None = None
        self.snapshot: Snapshot | None = None
        self.paired: PairedSnapshot | None = None  # lifts and compositions of the selection
        self._options = BatchOptions()  # the Verify dialog starts from the last batch's options
        self._selected_count = 0
        self._notice: QMessageBox | None = None  # the last batch's engine-error report, if open
        self._runs_dialog: QtRunsDialog | None = None  # the runs list, if open (it is this library's)

        body = QWidget(self)
        self.verify_button = QPushButton("Verify Selection…", body)
        self.verify_button.clicked.connect(self.verify_selection)
        self.runs_button = QPushButton("Runs…", body)
        self.runs_button.clicked.connect(self.show_runs)
        self.panel = QtBatchPanel(body)
        self.panel.cancel_requested.connect(self.cancel_batch)

        self.history_plot = QtSuccessHistoryPlot(body)
        self.opponent_plot = QtOpponentPlot(body)
        self.content_plot = QtContentPlot(body)
        self.tier_plot = QtTierPlot(body)
        self.histogram_plot = QtHistogramPlot(body)
        self.live_plot = QtLiveRatePlot(body)
        self.lift_plot = QtLiftPlot(body)
        self.composition_plot = QtCompositionPlot(body)
        self.standing = QLabel(NO_SELECTION, body)  # the selected skills' standing: drawn, others, flags
        self.standing.setWordWrap(True)
        self.standing.setTextFormat(Qt.TextFormat.RichText)
        self.standing.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.standing.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # One tab a subject, two panels side by side: a dock a third of the window high has room
        # for one row of plots, and the running batch has a tab of its own that comes forward.
        self.tabs = QTabWidget(body)
        self.tabs.setDocumentMode(True)
        self.batch_page = _page(self.tabs, (self.live_plot, 3), (self.panel.results, 2))
        self.selected_page = _page(self.tabs, (self.history_plot, 3), (_scrolled(self.standing), 2))
        self.tabs.addTab(self.batch_page, "Batch")
        self.tabs.addTab(self.selected_page, SELECTED_TAB)
        self.tabs.addTab(_page(self.tabs, (self.opponent_plot, 1), (self.lift_plot, 1)), "Opponents && lift")
        self.tabs.addTab(_page(self.tabs, (self.composition_plot, 1), (self.content_plot, 1)), "Compositions && plays")
        self.tabs.addTab(_page(self.tabs, (self.tier_plot, 1), (self.histogram_plot, 1)), "Filtered skills")
        self.tabs.setCurrentWidget(self.selected_page)
        self.following = QLabel("", body)
        self.following.setStyleSheet("color: #555; padding-right: 6px;")
        corner = QWidget(body)  # beside the tabs: what the plots follow, and the batch actions
        actions = QHBoxLayout(corner)
        actions.setContentsMargins(0, 0, 0, 2)
        actions.addWidget(self.following)
        actions.addWidget(self.verify_button)
        actions.addWidget(self.runs_button)
        self.tabs.setCornerWidget(corner, Qt.Corner.TopRightCorner)
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.setSpacing(2)
        layout.addWidget(self.panel)
        layout.addWidget(self.tabs, 1)
        # Scrollable, so the plots' minimum sizes never squeeze the browser on a small screen.
        scroller = QScrollArea(self)
        scroller.setWidgetResizable(True)
        scroller.setFrameShape(QFrame.Shape.NoFrame)
        scroller.setWidget(body)
        self.setWidget(scroller)

        self._loader = LatestOnly(self, self._apply_snapshot, self._load_failed)
        self._batches = Tasks(self, threads=1)
        self._refresh_timer = QTimer(self, singleShot=True, interval=REFRESH_DEBOUNCE_MS)
        self._refresh_timer.timeout.connect(self.refresh)
        self._batch_refresh_timer = QTimer(self, singleShot=True, interval=REFRESH_DURING_BATCH_MS)
        self._batch_refresh_timer.timeout.connect(self.refresh)
        self._pending_updates: list[Callable[[], None]] = []
        self._reloads = 0  # reloads asked for, so data_loaded waits for the latest one's answer
        self._drawing = 0  # the reload whose answer the plots are being given
        self._step_timer = QTimer(self, singleShot=True, interval=0)
        self._step_timer.timeout.connect(self._next_update)
        self._build_actions()

        # Bound methods, not lambdas: Qt disconnects them if the dashboard goes before the state.
        state.query_changed.connect(self._on_browsing_changed)
        state.selection_changed.connect(self._on_browsing_changed)
        state.library_opened.connect(self._on_library_opened)
        state.library_changed.connect(self._on_library_changed)
        if state.repository is not None:
            self.schedule_refresh()

    def _build_actions(self) -> None:
        self.verify_action = QAction("&Verify Selection…", self)
        self.verify_action.setShortcut(QKeySequence("Ctrl+Shift+B"))
        self.verify_action.setStatusTip(
            "Play the selected AI skills (or all filtered) headless and apply the promotion policy"
        )
        self.verify_action.triggered.connect(lambda _checked=False: self.verify_selection())
        self.cancel_action = QAction("&Cancel Batch", self)
        self.cancel_action.triggered.connect(lambda _checked=False: self.cancel_batch())
        self.runs_action = QAction("&Runs…", self)
        self.runs_action.setStatusTip("Past verification runs; resume one that did not finish")
        self.runs_action.triggered.connect(lambda _checked=False: self.show_runs())
        self.toggle_action = self.toggleViewAction()
        self.toggle_action.setText("&Dashboard")
        self.toggle_action.setShortcut(QKeySequence("Ctrl+D"))
        self.menu = QMenu("Ve&rify", self)  # the main window adds it to its menu bar
        self.menu.addActions([self.verify_action, self.cancel_action, self.runs_action])
        self.menu.addSeparator()
        self.menu.addAction(self.toggle_action)
        self._update_actions()

    def plots(self) -> list[QtPlotPanel]:
        return [
            self.history_plot,
            self.opponent_plot,
            self.content_plot,
            self.tier_plot,
            self.histogram_plot,
            self.live_plot,
            self.lift_plot,
            self.composition_plot,
        ]

    # --- following the browser ---------------------------------------------------------------------

    def _on_library_opened(self, _repository: SkillRepository) -> None:
        """Another library: finish with the previous one (it is about to close), forget it, show this one.

        The main window opens no library while a batch runs (the batch keeps the browser busy);
        a library set under one anyway stops it first, its games so far kept in its own library."""
        self.cancel_batch(wait=True)
        self._stop_loading()
        self.last_outcome = None
        self._selected_count = 0
        self.following.setText("")
        self.panel.reset()
        self.live_plot.reset([], {})
        for dialog in (self._notice, self._runs_dialog):  # about the previous library; closing deletes them
            if dialog is not None and isValid(dialog):
                dialog.close()
        self._notice = self._runs_dialog = None
        self._show(Snapshot.empty(), PairedSnapshot())  # nothing of the previous library stays drawn
        self.snapshot = self.paired = None
        self.schedule_refresh()

    def _on_browsing_changed(self, _query_or_selection: object) -> None:
        self.schedule_refresh()

    def _on_library_changed(self, change: LibraryChange) -> None:
        if not change.touches(PLOTTED):
            return
        if self.batch is not None and change.started_by(self):
            # One change per skill the batch applies: reload every few seconds, not per skill.
            if not self._batch_refresh_timer.isActive():
                self._batch_refresh_timer.start()
            return
        self.schedule_refresh()

    def schedule_refresh(self) -> None:
        self._refresh_timer.start()

    @property
    def loading(self) -> bool:
        """Whether the plots are about to change: a reload is due, running, or being applied."""
        return self._refresh_timer.isActive() or self._loader.loading or self._step_timer.isActive()

    def refresh(self) -> None:
        """Reload the plots' data for the browser's query and selection, off the GUI thread."""
        self._refresh_timer.stop()
        self._batch_refresh_timer.stop()
        repository = self.state.repository
        if repository is None:
            return
        selected = self.state.selection
        self._selected_count = len(selected)
        self._reloads += 1
        self._loader.request(_snapshots, repository, self.state.query, list(selected[:SELECTED_FOR_PLOTS]))

    def _apply_snapshot(self, loaded: tuple[Snapshot, PairedSnapshot]) -> None:
        data, paired = loaded
        self._drawing = self._reloads  # only the latest request's answer is delivered (LatestOnly)
        before, self.snapshot = self.snapshot, data
        paired_before, self.paired = self.paired, paired
        shown = sum(group.total for group in data.tiers)  # every filtered skill has one tier
        flags = f" ({len(data.contradicted):,} {FLAG}contradicted)" if data.contradicted else ""
        self.following.setText(
            f"Following the browser: {shown:,} filtered skills{flags}, {self._selected_count:,} selected"
        )
        # Only the plots whose data changed repaint (a new selection leaves the tiers as they are;
        # a batch's reloads mostly change one or two), and one plot per turn of the event loop,
        # so each repaints on its own: all five at once would be a stall of five plots' worth.
        self._pending_updates = self._updates(data, paired, before, paired_before)
        self._step_timer.start()

    def _show(self, data: Snapshot, paired: PairedSnapshot) -> None:
        """Show this data in every plot now (no library's figures: the plots are cleared)."""
        for update in self._updates(data, paired, None, None):
            update()

    def _updates(
        self, data: Snapshot, paired: PairedSnapshot, before: Snapshot | None, paired_before: PairedSnapshot | None
    ) -> list[Callable[[], None]]:
        """One update per plot (and the selected skills' standing) whose data differs from before."""
        skills_changed = before is None or (data.skills, data.thresholds, data.others, data.flagged) != (
            before.skills,
            before.thresholds,
            before.others,
            before.flagged,
        )
        flagged = [f.skill_id for f in data.flagged]
        updates: list[tuple[bool, Callable[[], None]]] = [
            (
                skills_changed,
                lambda: self.history_plot.update_data(data.skills, data.thresholds, data.others, flagged),
            ),
            (skills_changed, lambda: self._show_standing(data)),
            (
                before is None or data.opponents != before.opponents,
                lambda: self.opponent_plot.update_data(data.opponents),
            ),
            (skills_changed, lambda: self.content_plot.update_data(data.skills)),
            (before is None or data.tiers != before.tiers, lambda: self.tier_plot.update_data(data.tiers)),
            (
                before is None or data.histogram != before.histogram,
                lambda: self.histogram_plot.update_data(data.histogram),
            ),
            (
                paired_before is None
                or (paired.lifts, paired.more_lifts) != (paired_before.lifts, paired_before.more_lifts),
                lambda: self.lift_plot.update_data(paired.lifts, paired.more_lifts),
            ),
            (
                paired_before is None or paired != paired_before or skills_changed,
                lambda: self.composition_plot.update_data(
                    paired.composition_skill,
                    paired.composition_name,
                    paired.compositions,
                    data.thresholds.get("candidate", 0.4),
                ),
            ),
        ]
        return [update for changed, update in updates if changed]

    def _show_standing(self, data: Snapshot) -> None:
        """The selected skills beside their plot: which are drawn, the others, the contradicted tiers."""
        self.tabs.setTabText(
            self.tabs.indexOf(self.selected_page),
            f"{SELECTED_TAB} {FLAG}{len(data.flagged)}" if data.flagged else SELECTED_TAB,
        )
        self.standing.setText(standing_html(data, self._selected_count))

    def _next_update(self) -> None:
        if self._pending_updates:
            self._pending_updates.pop(0)()
        if self._pending_updates:
            self._step_timer.start()
        elif self._drawing == self._reloads and not self._refresh_timer.isActive():
            # Only once nothing newer is due or under way: a read that started before the
            # selection changed still lands, and what it draws is already out of date.
            self.data_loaded.emit()

    def _load_failed(self, error: BaseException) -> None:
        self.state.say(f"Dashboard: {readable(error)}", 10_000)

    def _stop_loading(self) -> None:
        """Drop the plots' pending work, and let a read in flight end before its library closes."""
        self._refresh_timer.stop()
        self._batch_refresh_timer.stop()
        self._step_timer.stop()
        self._pending_updates = []
        self._loader.discard()
        self._loader.wait()

    # --- batches -----------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.batch is not None

    def verify_ids(self) -> tuple[list[str], int]:
        """The AI skills Verify would play (the selection, else every filtered skill), and how many
        content skills were left out."""
        repository = self.state.require_repository()
        selected = list(self.state.selection)
        if selected:
            summaries = repository.summaries(selected)
            ai = [s.id for s in summaries if s.domain == Domain.AI_STRATEGY.value]
            return ai, len(summaries) - len(ai)
        query = self.state.query
        everything = repository.query(query).total
        domains = query.domains or tuple(Domain)
        if Domain.AI_STRATEGY not in domains:
            return [], everything
        ai = repository.query(replace(query, domains=(Domain.AI_STRATEGY,))).ids
        return list(ai), everything - len(ai)

    def verify_selection(self) -> None:
        if self.running:
            self.state.say("A batch is running; cancel it or wait for it to end.", 5000)
            return
        if self.state.repository is None:
            return
        ids, skipped = self.verify_ids()
        dialog = QtVerifyDialog(len(ids), skipped, self, self._options)
        if dialog.exec() == QtVerifyDialog.DialogCode.Accepted:
            self.start_batch(ids, dialog.options())

    def start_batch(self, skill_ids: Sequence[str], options: BatchOptions) -> bool:
        """Verify these skills off the GUI thread; whether a batch started."""
        if self.running or not skill_ids:
            return False
        self._options = replace(options, seed=None)  # a typed seed replays one run; the next draws its own
        repository = self.state.require_repository()
        self.live_plot.reset([], {})  # the run's skills once it has started
        noun = "skill" if len(skill_ids) == 1 else "skills"
        games = (
            f"at most {options.games:,} games (until decided)" if options.until_decided else f"{options.games:,} games"
        )
        self._start(
            f"Verifying {len(skill_ids):,} {noun} × {games} against {options.opponent}…",
            repository,
            skill_ids=list(skill_ids),
            options=options,
        )
        return True

    def resume_run(self, run_id: str, executor: str | None = None) -> bool:
        if self.running:
            return False
        repository = self.state.require_repository()
        self.live_plot.reset([], {})  # the run's skills once it has started
        self._start(f"Resuming run {run_id}…", repository, run_id=run_id, executor=executor)
        return True

    def _start(
        self,
        text: str,
        repository: SkillRepository,
        *,
        skill_ids: Sequence[str] = (),
        options: BatchOptions | None = None,
        run_id: str | None = None,
        executor: str | None = None,
    ) -> None:
        cancel = threading.Event()
        self.batch = _Batch(cancel, self.state.begin_busy(BUSY_TEXT))
        database, actor = repository.database, repository.actor

        def work() -> Generator[RunStarted | BatchUpdate, None, BatchOutcome]:
            with initiated_by(self):  # the changes it commits say the dashboard asked for them
                return (
                    yield from batch_events(
                        database,
                        actor,
                        cancel,
                        skill_ids=skill_ids,
                        options=options,
                        run_id=run_id,
                        executor=executor,
                    )
                )

        self.panel.begin(text)
        self._update_actions()
        self._watch_batch()
        self._batches.run(
            work, done=self._on_outcome, failed=self._on_failed, progress=self._on_event, finished=self._on_batch_ended
        )

    def _watch_batch(self) -> None:
        """Where a running batch is watched: the dock shown, its Batch tab (the live plot) in front."""
        self.show()
        self.raise_()
        self.tabs.setCurrentWidget(self.batch_page)

    def cancel_batch(self, *, wait: bool = False) -> None:
        """Ask the runner to stop between chunks; the games already played stay recorded.

        ``wait``: block until it has stopped and its results are shown (the library is about
        to close under it)."""
        if self.batch is None:
            return
        self.batch.cancel.set()
        self.panel.cancelling()
        if wait and not self._batches.wait(BATCH_STOP_TIMEOUT_MS):
            log.warning("the verification batch did not stop within %d s", BATCH_STOP_TIMEOUT_MS // 1000)

    def _on_event(self, event: RunStarted | BatchUpdate) -> None:
        if isinstance(event, RunStarted):
            self._on_run_started(event)
        else:
            self._on_progress(event)
            self.batch_progress.emit(event)

    def _on_run_started(self, event: RunStarted) -> None:
        if self.batch is not None:
            self.batch.run_id, self.batch.seed = event.run_id, event.seed
        self.panel.started(event)
        self._reset_live_plot(event.run_id)
        self.live_plot.set_total(event.games_total)

    def _reset_live_plot(self, run_id: str) -> None:
        """The live plot draws the run's skills: the ones it plays, not the ones skipped."""
        repository = self.state.require_repository()
        skill_ids = [s.skill_id for s in RunStore(repository.database).skills(run_id)]
        names = {s.id: s.name for s in repository.summaries(skill_ids[: QtLiveRatePlot.MAX_LIVE])}
        self.live_plot.reset(skill_ids, names)

    def _on_progress(self, update: BatchUpdate) -> None:
        if update.progress is not None:
            self.panel.progress(update.progress)
            self.live_plot.add_progress(update.progress)
        if update.baseline is not None:
            self.panel.baseline(update.baseline)
        changed = [r for r in update.results if r.action in (AuditAction.PROMOTE, AuditAction.DEMOTE)]
        if changed:
            self.state.say("; ".join(f"{r.name}: {r.before} → {r.after}" for r in changed[-3:]), 5000)

    def _on_outcome(self, outcome: BatchOutcome) -> None:
        self.last_outcome = outcome
        self.live_plot.flush()
        finished = outcome.finished
        title = f"Run {finished.run_id} {finished.status}"
        self.panel.end(
            title,
            result_text(outcome, self.batch.seed if self.batch else None),
            finished.status,
            verdicts_html(outcome.verdicts) if finished.results else "",
        )
        if outcome.errors:
            self._notify(
                "Engine errors",
                f"{outcome.errors:,} of {finished.games_done:,} games of run {finished.run_id} ended in an engine error. "
                "Error games are recorded but count neither as wins nor as losses.",
                "Errors reported by the engine:\n\n" + "\n\n".join(outcome.error_texts),
            )
        self.batch_finished.emit(outcome)

    def _on_failed(self, error: BaseException) -> None:
        run = self.batch.run_id if self.batch else None
        self.panel.end("The batch could not run" if run is None else f"Run {run} failed", readable(error), "failed")
        self.last_outcome = None
        self.batch_finished.emit(None)
        show_error(self, "Verification failed", error)

    def _on_batch_ended(self) -> None:
        if self.batch is not None:
            self.state.end_busy(self.batch.busy)
        self.batch = None
        self._update_actions()
        self.schedule_refresh()  # everything the batch changed, at once

    def _notify(self, title: str, text: str, details: str) -> None:
        """A report with details on demand; window-modal, but the event loop (and the app) go on."""
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Ok, self)
        box.setDetailedText(details)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self._notice = box

    def _update_actions(self) -> None:
        self.verify_button.setEnabled(not self.running)
        self.verify_action.setEnabled(not self.running)
        self.cancel_action.setEnabled(self.running)

    def show_runs(self) -> QtRunsDialog | None:
        repository = self.state.repository
        if repository is None:
            return None
        dialog = QtRunsDialog(repository, self, busy=self.running)
        dialog.resume_requested.connect(self.resume_run)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        self._runs_dialog = dialog
        return dialog

    # --- closing -----------------------------------------------------------------------------------

    def can_close(self) -> bool:
        """Closing during a batch asks, then cancels it (finished games are kept) and waits."""
        if self.batch is not None:
            panel = self.panel
            answer = QMessageBox.question(
                self,
                "A verification batch is running",
                f"{panel.done:,} of {panel.total:,} games are played. Cancel the batch and close?\n\n"
                "The games already played are kept; Verify › Runs… › Resume finishes the run later.",
            )
            if answer != QMessageBox.StandardButton.Yes:
                return False
            self.cancel_batch(wait=True)
        self._stop_loading()
        return True


def _snapshots(
    repository: SkillRepository, query: SkillQuery, selected: Sequence[str]
) -> tuple[Snapshot, PairedSnapshot]:
    """One refresh's data, on the loader's thread: the plots', and the lifts' and compositions'."""
    return (
        snapshot(repository, query, selected, max_skills=MAX_SERIES),
        paired_snapshot(repository, selected, max_lifts=MAX_SERIES),
    )


def result_text(outcome: BatchOutcome, seed: int | None) -> str:
    """What a batch recorded and changed, in a few lines of plain text."""
    finished = outcome.finished
    promoted = [r for r in finished.results if r.action == AuditAction.PROMOTE]
    demoted = [r for r in finished.results if r.action == AuditAction.DEMOTE]
    first = (
        f"{finished.games_done:,} of {finished.games_total:,} games recorded; {len(finished.results):,} skills applied"
    )
    if outcome.errors:
        first += f"; {outcome.errors:,} error games (they count for nothing)"
    if finished.skipped:
        reasons = sorted({s.reason for s in finished.skipped})
        first += f"; {len(finished.skipped):,} skipped ({'; '.join(reasons[:2])}{'; …' if len(reasons) > 2 else ''})"
    lines = []
    if finished.status == "cancelled":
        lines.append("Cancelled: the games already played are kept; Runs… › Resume finishes the run.")
    lines.append(first + ".")
    if seed is not None:
        lines.append(f"Seed {seed}: recorded with the run; typed into Verify… › Seed, it replays these games.")
    lines.append(
        " · ".join(
            (
                "Promoted: " + (", ".join(f"{r.name} ({r.before} → {r.after})" for r in promoted) or "none"),
                "Demoted: " + (", ".join(f"{r.name} ({r.before} → {r.after})" for r in demoted) or "none"),
            )
        )
        + "."
    )
    if outcome.decisions:
        decided = ", ".join(f"{count:,} {decision}" for decision, count in sorted(outcome.decisions.items()))
        saved = outcome.games_at_most - finished.games_done
        lines.append(
            f"Until decided: {decided}; {finished.games_done:,} games played of {outcome.games_at_most:,} at most"
            + (f" ({saved:,} saved)." if saved > 0 and finished.status == "finished" else ".")
        )
    if outcome.lifts:
        worse = [r.name for r in outcome.lifts if r.lift.worse]
        lines.append(
            f"Lift measured for {len(outcome.lifts):,} skills; worse than the default plan: "
            + (", ".join(worse) if worse else "none")
            + "."
        )
    return "\n".join(lines)


def _page(parent: QWidget, *panels: tuple[QWidget, int]) -> QWidget:
    """A tab's page: panels side by side, each with its share of the width."""
    page = QWidget(parent)
    row = QHBoxLayout(page)
    row.setContentsMargins(0, 2, 0, 0)
    row.setSpacing(6)
    for panel, stretch in panels:
        row.addWidget(panel, stretch)
    return page


def standing_html(data: Snapshot, selected: int) -> str:
    """The selected skills beside their success-rate plot: which are drawn (their tier and credited
    evidence per kind), what the others add up to, and each contradicted tier with what settles it."""
    if not selected:
        return NO_SELECTION
    ranked = len(data.skills) + data.others.skills
    if data.ranked:
        head = f"<b>{len(data.skills)} of {selected:,} selected skills drawn</b>, the most credited games first"
        if ranked < selected:
            head += f" (ranked among the first {ranked:,} selected)"
    else:
        head = f"<b>{selected:,} selected skill{'s' if selected != 1 else ''}</b>"
    if data.others.skills:
        rest = data.others
        pooled = f"{rest.rate:.0%} over {rest.games:,} credited games" if rest.rate is not None else "no credited games"
        head += f"; the other {rest.skills:,}: {pooled}, pooled"
    parts = [f"<p>{head}.</p>"]
    if data.flagged:
        noun = "tier" if len(data.flagged) == 1 else "tiers"
        parts.append(f"<p><b>{FLAG}{len(data.flagged):,} contradicted {noun}</b> among the selected:</p><ul>")
        parts.extend(
            f"<li><b>{escaped(flag.name)}</b> ({flag.contradiction.tier.value}): {escaped(flag.contradiction.reason)}."
            f"<br><i>To settle:</i> {escaped(flag.contradiction.advice)}.</li>"
            for flag in data.flagged
        )
        parts.append("</ul>")
    else:
        parts.append("<p>No selected skill's tier is contradicted by its credited evidence.</p>")
    drawn = [(series.name, series.standing) for series in data.skills if series.standing is not None]
    if drawn:
        parts.append("<p>Credited evidence, per kind:</p><ul>")
        for name, standing in drawn:
            kinds = [k.describe() for k in (standing.headless, standing.gameplay, standing.plays) if k.decided]
            evidence = "; ".join(kinds) or "none"
            parts.append(f"<li>{escaped(name)} ({standing.tier.value}): {escaped(evidence)}</li>")
        parts.append("</ul>")
    return "".join(parts)


def verdicts_html(verdicts: Sequence[Verdict]) -> str:
    """The skills whose tier did not follow their figures, or whose session changed nothing:
    why, and what to do; counted by cause first."""
    if not verdicts:
        return f"<p>{escaped(summarize(verdicts))}</p>"
    items = "".join(
        f"<li><b>{escaped(v.name)}</b> ({v.tier.value}): {escaped(v.why)}.<br><i>To do:</i> {escaped(v.todo)}.</li>"
        for v in verdicts
    )
    return f"<p><b>{escaped(summarize(verdicts))}.</b></p><ul>{items}</ul>"


__all__ = ["QtBatchPanel", "QtDashboard"]
