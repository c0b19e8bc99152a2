"""The verification dashboard: plots that follow the browser, and batches run on a worker thread.

``QtDashboard(window)`` lives in a dock beside the browser. It reads the browser's filter
(``window.current_query()``) and selection (``window.selected_ids()``); its data is computed by
:mod:`skillstudio.verification.dashboard_data` on a worker thread and plotted in place. A batch
runs on a :class:`~skillstudio.gui.dashboard.verify_worker.VerifyThread`; the batch panel shows
its progress (throttled), and when it ends the browser, the detail pane and the plots reload
from the library.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from skillstudio.gui.dashboard.qt_plots import (
    QtContentPlot,
    QtHistogramPlot,
    QtLiveRatePlot,
    QtOpponentPlot,
    QtSuccessHistoryPlot,
    QtTierPlot,
)
from skillstudio.gui.dashboard.qt_runs_dialog import QtRunsDialog
from skillstudio.gui.dashboard.qt_verify_dialog import QtVerifyDialog
from skillstudio.gui.dashboard.verify_worker import BatchOptions, BatchOutcome, VerifyThread
from skillstudio.model import Domain
from skillstudio.store import LibraryError, SkillQuery, SkillRepository
from skillstudio.store.runs import RunStore
from skillstudio.verification.dashboard_data import Snapshot, snapshot
from skillstudio.verification.runner import Progress, RunStarted, SkillResult

REFRESH_DEBOUNCE_MS = 250
ROWS_DURING_BATCH_MS = 2000  # how often the browser's rows of applied skills repaint during a batch
_BATCH_ACTIONS = frozenset({"skill.verify", "skill.promote", "skill.demote"})
_TIER_RANK = {"tentative": 0, "established": 1, "proven": 2}


# --- loading the plots' data off the GUI thread ---------------------------------------------------


class _LoadSignals(QObject):
    loaded = Signal(int, object)  # generation, Snapshot
    failed = Signal(int, str)


class _LoadTask(QRunnable):
    def __init__(
        self,
        repository: SkillRepository,
        query: SkillQuery,
        selected: list[str],
        generation: int,
        signals: _LoadSignals,
    ) -> None:
        super().__init__()
        self.repository, self.query, self.selected, self.generation, self.signals = (
            repository,
            query,
            selected,
            generation,
            signals,
        )

    def run(self) -> None:
        try:
            data = snapshot(self.repository, self.query, self.selected)
        except (LibraryError, ValueError) as error:
            self.signals.failed.emit(self.generation, str(error))
            return
        except Exception as error:  # noqa: BLE001 - a closed library while loading: show nothing new
            self.signals.failed.emit(self.generation, f"{type(error).__name__}: {error}")
            return
        self.signals.loaded.emit(self.generation, data)


# --- the batch panel ------------------------------------------------------------------------------


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class QtBatchPanel(QWidget):
    """Progress of the running batch: games done / total, times, W/L/D/E, Cancel; and the
    summary of the last batch."""

    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel(
            "<b>No batch running.</b> Select skills and use Verify › Verify Selection… (Ctrl+Shift+B).", self
        )
        self.bar = QProgressBar(self)
        self.bar.setFormat("%v / %m games")
        self.bar.setRange(0, 1)
        self.bar.setValue(0)
        self.figures = QLabel("", self)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel_requested.emit)
        self.summary = QLabel("", self)
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Fixed heights: text that changes must never re-layout the dock, or every plot would
        # resize and repaint at once (a stall of six plots' worth).
        line = self.fontMetrics().lineSpacing()
        for label, lines in ((self.title, 1), (self.figures, 1), (self.summary, 2)):
            label.setFixedHeight(line * lines + 4)
        self.summary.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        heading = QHBoxLayout()
        heading.addWidget(self.title, 1)
        heading.addWidget(self.figures)
        row = QHBoxLayout()
        row.addWidget(self.bar, 1)
        row.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        layout.setSpacing(2)
        layout.addLayout(heading)
        layout.addLayout(row)
        layout.addWidget(self.summary)
        self.started_at = 0.0
        self.done_at_start = 0
        self.done = 0
        self.total = 0
        self.counts = (0, 0, 0, 0)
        self._tick = QTimer(self, interval=1000)
        self._tick.timeout.connect(self._show_figures)

    def begin(self, text: str) -> None:
        self.title.setText(f"<b>{text}</b>")
        self.summary.setText("")
        self.bar.setRange(0, 0)  # busy until the run says how many games
        self.figures.setText("starting…")
        self.cancel_button.setEnabled(True)
        self.cancel_button.setText("Cancel")
        self.started_at = time.monotonic()
        self.done = self.done_at_start = self.total = 0
        self.counts = (0, 0, 0, 0)
        self._tick.start()

    def started(self, event: RunStarted) -> None:
        self.title.setText(f"<b>Run {event.run_id}</b>: {event.skills:,} skills on {event.executor}")
        self.total, self.done, self.done_at_start = event.games_total, event.games_done, event.games_done
        self.bar.setRange(0, max(1, event.games_total))
        self.bar.setValue(event.games_done)
        self._show_figures()

    def progress(self, event: Progress) -> None:
        self.done, self.total = event.games_done, event.games_total
        self.counts = (event.wins, event.losses, event.draws, event.errors)
        self.bar.setMaximum(max(1, event.games_total))
        self.bar.setValue(event.games_done)
        self._show_figures()

    def cancelling(self) -> None:
        self.cancel_button.setEnabled(False)
        self.cancel_button.setText("Cancelling…")

    def _show_figures(self) -> None:
        elapsed = time.monotonic() - self.started_at
        played = self.done - self.done_at_start
        rate = played / elapsed if elapsed > 0 else 0.0
        remaining = (self.total - self.done) / rate if rate > 0 else None
        w, l, d, e = self.counts
        self.figures.setText(
            f"elapsed {_clock(elapsed)} · remaining {'~' + _clock(remaining) if remaining is not None else '…'} · "
            f"{rate:,.0f} games/s · W {w:,}  L {l:,}  D {d:,}  E {e:,}"
        )

    def end(self, title: str, summary: str) -> None:
        self._tick.stop()
        self._show_figures()
        self.title.setText(f"<b>{title}</b>")
        self.summary.setText(summary)
        self.summary.setToolTip(summary)
        self.cancel_button.setEnabled(False)
        self.cancel_button.setText("Cancel")
        if self.bar.maximum() == 0:
            self.bar.setRange(0, 1)


@dataclass
class _Batch:
    thread: VerifyThread
    run_id: str | None = None


# --- the dashboard --------------------------------------------------------------------------------


class QtDashboard(QWidget):
    """Plots following the browser's filter and selection, the batch panel, Verify and Runs."""

    batch_finished = Signal(object)  # BatchOutcome, or None when the batch failed
    data_loaded = Signal()

    def __init__(self, window: Any) -> None:  # a QtMainWindow
        super().__init__(window)
        self.window_ = window
        self.batch: _Batch | None = None
        self.last_outcome: BatchOutcome | None = None
        self.last_message: QMessageBox | None = None
        self.snapshot: Snapshot | None = None
        self.loads = 0  # snapshots applied (tests)

        self.verify_button = QPushButton("Verify Selection…", self)
        self.verify_button.clicked.connect(self.verify_selection)
        self.runs_button = QPushButton("Runs…", self)
        self.runs_button.clicked.connect(self.show_runs)
        self.following = QLabel("", self)
        self.following.setStyleSheet("color: #555;")
        top = QHBoxLayout()
        top.addWidget(self.following, 1)
        top.addWidget(self.verify_button)
        top.addWidget(self.runs_button)

        self.panel = QtBatchPanel(self)
        self.panel.cancel_requested.connect(self.cancel_batch)
        self.history_plot = QtSuccessHistoryPlot(self)
        self.opponent_plot = QtOpponentPlot(self)
        self.content_plot = QtContentPlot(self)
        self.tier_plot = QtTierPlot(self)
        self.histogram_plot = QtHistogramPlot(self)
        self.live_plot = QtLiveRatePlot(self)
        grid = QGridLayout()
        grid.setSpacing(6)
        for index, plot in enumerate(self.plots()):
            grid.addWidget(plot, index // 3, index % 3)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.panel)
        layout.addLayout(grid, 1)

        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._generation = 0
        self._signals = _LoadSignals(self)
        self._signals.loaded.connect(self._apply_snapshot)
        self._signals.failed.connect(self._load_failed)
        self._refresh_timer = QTimer(self, singleShot=True, interval=REFRESH_DEBOUNCE_MS)
        self._refresh_timer.timeout.connect(self.refresh)
        self._pending_updates: list = []  # type: ignore[type-arg]
        self._step_timer = QTimer(self, singleShot=True, interval=0)
        self._step_timer.timeout.connect(self._next_update)
        self._connections: list[tuple[Any, Any]] = []
        self._changed_rows: set[str] = set()
        self._rows_timer = QTimer(self, singleShot=True, interval=ROWS_DURING_BATCH_MS)
        self._rows_timer.timeout.connect(self._repaint_changed_rows)

    def plots(self) -> list:  # type: ignore[type-arg]
        return [
            self.history_plot,
            self.opponent_plot,
            self.content_plot,
            self.tier_plot,
            self.histogram_plot,
            self.live_plot,
        ]

    # --- following the browser ---------------------------------------------------------------------

    def install(self, repository: SkillRepository) -> None:
        """The window shows another library (or the first one): stop a batch on the old one,
        follow the new model and selection."""
        del repository  # always read as window.repository, which ask_user_name may replace
        if self.batch is not None:
            self.cancel_batch(wait=True)
        for signal, slot in self._connections:
            try:
                signal.disconnect(slot)
            except (RuntimeError, TypeError):
                pass
        window = self.window_
        self._connections = [
            (window.model.query_finished, self.schedule_refresh),
            (window.table.selectionModel().selectionChanged, self._on_selection_changed),
        ]
        for signal, slot in self._connections:
            signal.connect(slot)
        self.schedule_refresh()

    def _on_selection_changed(self, *_args: Any) -> None:
        self.schedule_refresh()

    def schedule_refresh(self) -> None:
        self._refresh_timer.start()

    def refresh(self) -> None:
        """Reload the plots' data for the current filter and selection, off the GUI thread."""
        self._refresh_timer.stop()
        window = self.window_
        if window.repository is None:
            return
        selected = window.selected_ids()
        self._generation += 1
        self._pool.clear()
        self._pool.start(
            _LoadTask(window.repository, window.current_query(), selected[:50], self._generation, self._signals)
        )
        shown = window.model.total
        self.following.setText(f"Following the browser: {shown:,} filtered skills, {len(selected):,} selected")

    def wait(self, timeout_ms: int = 30_000) -> bool:
        """Block until the data being loaded is plotted (tests, screenshots)."""
        from PySide6.QtCore import QCoreApplication

        if self._refresh_timer.isActive():  # a refresh is due: start it now
            self.refresh()
        ok = self._pool.waitForDone(timeout_ms)
        QCoreApplication.sendPostedEvents()
        self._step_timer.stop()
        while self._pending_updates:
            self._next_update()
        return ok

    def _apply_snapshot(self, generation: int, data: Snapshot) -> None:
        if generation != self._generation:
            return
        self.snapshot = data
        # One plot per turn of the event loop, so each repaints on its own: updating all five at
        # once would paint them in one go, a stall of five plots' worth.
        self._pending_updates = [
            lambda: self.history_plot.update_data(data.skills, data.thresholds),
            lambda: self.opponent_plot.update_data(data.opponents),
            lambda: self.content_plot.update_data(data.skills),
            lambda: self.tier_plot.update_data(data.tiers),
            lambda: self.histogram_plot.update_data(data.histogram),
        ]
        self._step_timer.start()

    def _next_update(self) -> None:
        if not self._pending_updates:
            return
        self._pending_updates.pop(0)()
        if self._pending_updates:
            self._step_timer.start()
        else:
            self.loads += 1
            self.data_loaded.emit()

    def _load_failed(self, generation: int, message: str) -> None:
        if generation == self._generation:
            self.window_.statusBar().showMessage(f"Dashboard: {message}", 10_000)

    def shutdown(self) -> None:
        self._generation += 1
        self._refresh_timer.stop()
        self._step_timer.stop()
        self._pending_updates = []
        self._pool.clear()
        self._pool.waitForDone()

    # --- batches -----------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.batch is not None

    def verify_ids(self) -> tuple[list[str], int]:
        """The AI skills Verify would play (the selection, else every filtered skill), and how many
        content skills were left out."""
        window = self.window_
        repository = window.repository
        selected = window.selected_ids()
        if selected:
            summaries = repository.summaries(selected)
            ai = [s.id for s in summaries if s.domain == Domain.AI_STRATEGY.value]
            return ai, len(summaries) - len(ai)
        query = window.current_query()
        everything = repository.query(query).total
        domains = query.domains or tuple(Domain)
        if Domain.AI_STRATEGY not in domains:
            return [], everything
        from dataclasses import replace

        ai = repository.query(replace(query, domains=(Domain.AI_STRATEGY,))).ids
        return list(ai), everything - len(ai)

    def verify_selection(self) -> None:
        if self.running:
            self.window_.statusBar().showMessage("A batch is running; cancel it or wait for it to end.", 5000)
            return
        ids, skipped = self.verify_ids()
        dialog = QtVerifyDialog(len(ids), skipped, self, self._last_options())
        if dialog.exec() == QtVerifyDialog.DialogCode.Accepted:
            self.start_batch(ids, dialog.options())

    def _last_options(self) -> BatchOptions:
        return getattr(self, "_options", BatchOptions())

    def start_batch(self, skill_ids: Sequence[str], options: BatchOptions) -> VerifyThread | None:
        """Verify these skills on a worker thread; returns the thread (tests wait on it)."""
        if self.running or not skill_ids:
            return None
        self._options = options
        repository = self.window_.repository
        names = {s.id: s.name for s in repository.summaries(list(skill_ids)[: QtLiveRatePlot.MAX_LIVE])}
        self.live_plot.reset(list(skill_ids), names)
        thread = VerifyThread(repository.database, repository.actor, skill_ids=skill_ids, options=options, parent=self)
        noun = "skill" if len(skill_ids) == 1 else "skills"
        self._start(
            thread, f"Verifying {len(skill_ids):,} {noun} × {options.games:,} games against {options.opponent}…"
        )
        return thread

    def resume_run(self, run_id: str, executor: str | None = None) -> VerifyThread | None:
        if self.running:
            return None
        repository = self.window_.repository
        skill_ids = [s.skill_id for s in RunStore(repository.database).skills(run_id)]
        names = {s.id: s.name for s in repository.summaries(skill_ids[: QtLiveRatePlot.MAX_LIVE])}
        self.live_plot.reset(skill_ids, names)
        thread = VerifyThread(repository.database, repository.actor, run_id=run_id, executor=executor, parent=self)
        self._start(thread, f"Resuming run {run_id}…")
        return thread

    def _start(self, thread: VerifyThread, text: str) -> None:
        self.batch = _Batch(thread)
        thread.run_started.connect(self._on_run_started)
        thread.progress.connect(self._on_progress)
        thread.outcome.connect(self._on_outcome)
        thread.failed.connect(self._on_failed)
        thread.finished.connect(self._on_thread_finished)
        self.panel.begin(text)
        self._update_actions()
        thread.start()

    def cancel_batch(self, *, wait: bool = False) -> None:
        """Ask the runner to stop between chunks; the games already played stay recorded."""
        if self.batch is None:
            return
        self.batch.thread.cancel()
        self.panel.cancelling()
        if wait:
            self.batch.thread.wait(120_000)
            from PySide6.QtCore import QCoreApplication

            QCoreApplication.sendPostedEvents(self)  # its last signals, so the panel says how it ended
            self._on_thread_finished()

    def takes_change(self, change: Any) -> bool:
        """While a batch runs, its skills' quality changes (one per skill applied) would each
        re-query the browser; the dashboard takes them instead and repaints those rows every
        ``ROWS_DURING_BATCH_MS`` (no re-query). When the batch ends everything reloads."""
        if self.batch is None or change.action not in _BATCH_ACTIONS:
            return False
        self._changed_rows.update(change.skill_ids)
        if not self._rows_timer.isActive():
            self._rows_timer.start()
        return True

    def _repaint_changed_rows(self) -> None:
        ids, self._changed_rows = self._changed_rows, set()
        window = self.window_
        window.model.refresh(ids)
        if window.detail.skill_id in ids:
            window.detail.refresh()

    def _on_run_started(self, event: RunStarted) -> None:
        if self.batch is not None:
            self.batch.run_id = event.run_id
        self.panel.started(event)
        self.live_plot.set_total(event.games_total)

    def _on_progress(self, progress: Progress | None, results: list[SkillResult]) -> None:
        if progress is not None:
            self.panel.progress(progress)
            self.live_plot.add_progress(progress)
        if results:
            changed = [r for r in results if r.action in ("skill.promote", "skill.demote")]
            if changed:
                self.window_.statusBar().showMessage(
                    "; ".join(f"{r.name}: {r.before} → {r.after}" for r in changed[-3:]), 5000
                )

    def _on_outcome(self, outcome: BatchOutcome) -> None:
        self.last_outcome = outcome
        self.live_plot.flush()
        finished = outcome.finished
        promoted = [r for r in finished.results if r.action == "skill.promote"]
        demoted = [r for r in finished.results if r.action == "skill.demote"]
        first = f"{finished.games_done:,} of {finished.games_total:,} games recorded; {len(finished.results):,} skills applied"
        if outcome.errors:
            first += f"; {outcome.errors:,} error games (they count for nothing)"
        lines = [first + "."]
        changes = [
            "Promoted: " + (", ".join(f"{r.name} ({r.before} → {r.after})" for r in promoted) if promoted else "none"),
            "Demoted: " + (", ".join(f"{r.name} ({r.before} → {r.after})" for r in demoted) if demoted else "none"),
        ]
        lines.append(" · ".join(changes) + ".")
        title = {
            "finished": f"Run {finished.run_id} finished",
            "cancelled": f"Run {finished.run_id} cancelled: the games already played are kept (Runs… › Resume finishes it)",
        }.get(finished.status, f"Run {finished.run_id}: {finished.status}")
        self.panel.end(title, "\n".join(lines))
        if outcome.errors:
            self._message(
                QMessageBox.Icon.Warning,
                "Engine errors",
                f"{outcome.errors:,} of {finished.games_done:,} games of run {finished.run_id} ended in an engine error. "
                "Error games are recorded but count neither as wins nor as losses.",
                "Errors reported by the engine:\n\n" + "\n\n".join(outcome.error_texts),
            )
        self.batch_finished.emit(outcome)

    def _on_failed(self, message: str, details: str) -> None:
        run = self.batch.run_id if self.batch else None
        self.panel.end("The batch could not run" if run is None else f"Run {run} failed", message)
        self._message(QMessageBox.Icon.Warning, "Verification failed", message, details)
        self.last_outcome = None
        self.batch_finished.emit(None)

    def _on_thread_finished(self) -> None:
        if self.batch is None:
            return
        self.batch.thread.deleteLater()
        self.batch = None
        self._rows_timer.stop()
        self._changed_rows.clear()
        self._update_actions()
        window = self.window_
        try:
            window.reload_all()  # rows (which may now match other filters), filter choices, the detail pane
        except Exception:  # noqa: BLE001 - closing: the library may be gone
            return
        self.schedule_refresh()

    def _message(self, icon: QMessageBox.Icon, title: str, text: str, details: str) -> None:
        """A readable message, details on demand; window-modal but not blocking the event loop."""
        box = QMessageBox(icon, title, text, QMessageBox.StandardButton.Ok, self.window_)
        box.setDetailedText(details)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.last_message = box

    def _update_actions(self) -> None:
        self.verify_button.setEnabled(not self.running)
        if hasattr(self, "verify_action"):
            self.verify_action.setEnabled(not self.running)
            self.cancel_action.setEnabled(self.running)

    def show_runs(self) -> QtRunsDialog:
        dialog = QtRunsDialog(self.window_.repository, self.window_, busy=self.running)
        dialog.resume_requested.connect(self.resume_run)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    # --- closing -----------------------------------------------------------------------------------

    def can_close(self) -> bool:
        """Closing during a batch asks, then cancels it (finished games are kept) and waits."""
        if self.batch is None:
            self.shutdown()
            return True
        panel = self.panel
        answer = QMessageBox.question(
            self.window_,
            "A verification batch is running",
            f"{panel.done:,} of {panel.total:,} games are played. Cancel the batch and close?\n\n"
            "The games already played are kept; Verify › Runs… › Resume finishes the run later.",
        )
        if answer != QMessageBox.StandardButton.Yes:
            return False
        self.cancel_batch(wait=True)
        self.shutdown()
        return True


def attach_dashboard(window: Any) -> QtDashboard:
    """Add the dashboard dock and the Verify menu to a QtMainWindow."""
    dashboard = QtDashboard(window)
    dock = QDockWidget("Verification dashboard", window)
    dock.setObjectName("dashboard_dock")
    # Scrollable, so the plots' minimum sizes never squeeze the browser on a small screen.
    scroller = QScrollArea(dock)
    scroller.setWidgetResizable(True)
    scroller.setFrameShape(QFrame.Shape.NoFrame)
    scroller.setWidget(dashboard)
    dock.setWidget(scroller)
    dock.setAllowedAreas(Qt.DockWidgetArea.BottomDockWidgetArea | Qt.DockWidgetArea.RightDockWidgetArea)
    window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
    # The browser is the main view: the dock starts at about a third of the window's height.
    window.resizeDocks([dock], [max(240, window.height() // 3)], Qt.Orientation.Vertical)
    dashboard.dock = dock
    menu = window.menuBar().addMenu("Ve&rify")
    dashboard.verify_action = QAction("&Verify Selection…", window)
    dashboard.verify_action.setShortcut(QKeySequence("Ctrl+Shift+B"))
    dashboard.verify_action.setStatusTip(
        "Play the selected AI skills (or all filtered) headless and apply the promotion policy"
    )
    dashboard.verify_action.triggered.connect(lambda _checked=False: dashboard.verify_selection())
    dashboard.cancel_action = QAction("&Cancel Batch", window)
    dashboard.cancel_action.triggered.connect(lambda _checked=False: dashboard.cancel_batch())
    dashboard.runs_action = QAction("&Runs…", window)
    dashboard.runs_action.setStatusTip("Past verification runs; resume one that did not finish")
    dashboard.runs_action.triggered.connect(lambda _checked=False: dashboard.show_runs())
    toggle = dock.toggleViewAction()
    toggle.setText("&Dashboard")
    toggle.setShortcut(QKeySequence("Ctrl+D"))
    menu.addActions([dashboard.verify_action, dashboard.cancel_action, dashboard.runs_action])
    menu.addSeparator()
    menu.addAction(toggle)
    window.table.addAction(dashboard.verify_action)
    dashboard._update_actions()
    dashboard.install(window.repository)
    return dashboard
