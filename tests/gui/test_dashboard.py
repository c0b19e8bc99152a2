"""The verification dashboard, driven through its widgets (pytest-qt, offscreen): batches from the
GUI on a worker thread, cancel, engine errors, the runs list, closing mid-batch, plot export; and,
on a BrowserState alone (no main window, no table), following the state and forgetting a library."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QMessageBox  # noqa: E402

from skillstudio.gui.browser_state import BrowserState  # noqa: E402
from skillstudio.gui.dashboard import QtDashboard  # noqa: E402
from skillstudio.gui.dashboard.qt_dashboard import IDLE_RESULT, IDLE_TITLE, NO_SELECTION  # noqa: E402
from skillstudio.gui.dashboard.qt_verify_dialog import QtVerifyDialog  # noqa: E402
from skillstudio.gui.dashboard.verify_worker import BatchOptions  # noqa: E402
from skillstudio.gui.qt_main_window import QtMainWindow  # noqa: E402
from skillstudio.gui.rich_text import escaped  # noqa: E402
from skillstudio.library import create_library  # noqa: E402
from skillstudio.store import Actor, AuditAction, Database, LibraryChange, SkillQuery, SkillRepository  # noqa: E402
from skillstudio.store.runs import RunStore  # noqa: E402
from tests.gui.conftest import (  # noqa: E402
    answer_next_modal,
    wait_for_browser,
)
from tests.verification.helpers import make_library, playable_skills  # noqa: E402

WAIT = 20_000


def open_window(qtbot, path: Path, tmp_path: Path) -> QtMainWindow:
    window = QtMainWindow(
        SkillRepository(Database(path), Actor("mira")),
        QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat),
    )
    qtbot.addWidget(window)
    window.show()
    wait_for_browser(qtbot, window)
    return window


@pytest.fixture
def window(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    window = open_window(qtbot, make_library(tmp_path / "lib.db", 3), tmp_path)
    yield window
    window.close()
    window.repository.database.close()


def select_all(window: QtMainWindow) -> None:
    window.table.selectRow(0)  # as a user does: a click on a row, then Ctrl+A
    window.table.selectAll()
    assert len(window.selected_ids()) == window.model.rowCount()


def wait_for_batch(qtbot, window: QtMainWindow) -> None:
    qtbot.waitUntil(lambda: not window.dashboard.running, timeout=WAIT)
    wait_for_browser(qtbot, window)
    qtbot.waitUntil(lambda: not window.dashboard.loading, timeout=WAIT)


def notice(dashboard: QtDashboard) -> QMessageBox:
    """The report the dashboard shows without blocking (engine errors)."""
    [box] = [box for box in dashboard.findChildren(QMessageBox) if box.isVisible()]
    return box


def test_a_batch_from_the_verify_action_completes_and_updates_table_plots_and_runs(qtbot, window, monkeypatch) -> None:
    dashboard = window.dashboard
    select_all(window)

    def fill_in(dialog: QtVerifyDialog) -> int:  # what a user types into the dialog
        dialog.games.setValue(6)
        dialog.seed.setValue(4)
        dialog.opponent.setCurrentText("IC Default Hard")
        dialog.executor.setCurrentText("inprocess")
        return QtVerifyDialog.DialogCode.Accepted

    monkeypatch.setattr(QtVerifyDialog, "exec", fill_in)
    with qtbot.waitSignal(dashboard.batch_finished, timeout=WAIT) as finished:
        dashboard.verify_action.trigger()
        assert dashboard.running and not dashboard.verify_action.isEnabled()
    outcome = finished.args[0]
    assert outcome.finished.status == "finished" and outcome.finished.games_done == 18
    wait_for_batch(qtbot, window)

    # the run is recorded
    [run] = RunStore(window.repository.database).runs()
    assert (run.status, run.games_recorded, run.skills, run.seed) == ("finished", 18, 3, 4)
    # the browser's rows show the new evidence
    rows = [window.model.summary_at(r) for r in range(window.model.rowCount())]
    assert all(
        row.verification_count == sum(r.counts.decided for r in outcome.finished.results if r.skill_id == row.id)
        for row in rows
    )
    assert any(row.verification_count for row in rows)
    # the progress panel and the plots
    assert dashboard.panel.bar.value() == 18 and "Promoted:" in dashboard.panel.summary.text()
    assert dashboard.live_plot.games[-1] == 18
    assert {name for _, name, _ in dashboard.live_plot.rows()} >= {"all skills", "Playable plan 0"}
    history = dashboard.history_plot.rows()
    assert {row[0] for row in history} == {
        s.id
        for s in playable_skills(3)
        if any(r.skill_id == s.id and r.counts.decided for r in outcome.finished.results)
    }
    opponents = dashboard.opponent_plot.rows()
    assert opponents[0][0] == "IC Default Hard" and sum(opponents[0][1:5]) == 18
    tiers = dashboard.tier_plot.rows()
    assert sum(row[-1] for row in tiers) == 3
    assert sum(row[2] for row in dashboard.histogram_plot.rows()) == dashboard.snapshot.histogram.verified
    # hover read-out of an exact value
    session, rate = history[0][2], history[0][6]
    assert f"{rate * 100:.1f}%" in dashboard.history_plot.readout_at(session, rate * 100)
    # the detail pane shows the selected skill's new figures
    assert window.detail.skill_id is not None


def test_cancel_stops_the_batch_keeps_finished_games_and_the_run_resumes(qtbot, window) -> None:
    dashboard = window.dashboard
    ids = [s.id for s in playable_skills(3)]

    def cancel(_update) -> None:  # as soon as the first games are in
        dashboard.cancel_batch()

    dashboard.batch_progress.connect(cancel)
    with qtbot.waitSignal(dashboard.batch_finished, timeout=WAIT) as finished:
        assert dashboard.start_batch(ids, BatchOptions(games=200, seed=1, chunk_games=20))
    dashboard.batch_progress.disconnect(cancel)
    outcome = finished.args[0]
    assert outcome.finished.status == "cancelled"
    wait_for_batch(qtbot, window)
    store = RunStore(window.repository.database)
    [run] = store.runs()
    assert run.status == "cancelled"
    assert 0 < run.games_recorded < 600  # the games played before Cancel are kept
    assert run.games_recorded == sum(c.played for c in store.counts(run.id).values())
    assert "cancelled" in dashboard.panel.title.text()

    # the runs list offers to resume it; resuming plays only what is missing
    dialog = dashboard.show_runs()
    dialog.select_run(run.id)
    assert dialog.resume_button.isEnabled()
    with qtbot.waitSignal(dashboard.batch_finished, timeout=60_000) as resumed:
        dialog.resume_button.click()
    assert resumed.args[0].finished.status == "finished"
    wait_for_batch(qtbot, window)
    assert store.run(run.id).status == "finished" and store.run(run.id).games_recorded == 600


def test_engine_errors_are_shown_readably_and_the_app_stays_usable(qtbot, window) -> None:
    dashboard = window.dashboard
    ids = [s.id for s in playable_skills(3)]
    with qtbot.waitSignal(dashboard.batch_finished, timeout=WAIT):
        dashboard.start_batch(ids[:1], BatchOptions(games=4, engine=("/nonexistent/engine",), chunk_games=2))
    wait_for_batch(qtbot, window)
    box = notice(dashboard)  # shown with open(): the event loop keeps running
    assert "engine error" in box.text() and "Traceback" not in box.text()
    assert box.detailedText()  # what the engine said, on demand
    box.close()

    # a batch that cannot start at all (an unknown opponent): a message, details on demand
    shown = {}
    answer = answer_next_modal(
        lambda box: shown.update(text=box.text(), details=box.detailedText()) or box.close(), timeout_s=WAIT / 1000
    )
    with qtbot.waitSignal(dashboard.batch_finished, timeout=WAIT) as failed:
        dashboard.start_batch(ids[:1], BatchOptions(games=4, opponent="Nobody Strong"))
    assert failed.args[0] is None
    wait_for_batch(qtbot, window)
    answer.check()
    assert "Nobody Strong" in shown["text"] and "Traceback" not in shown["text"] and "Traceback" in shown["details"]

    # still usable: filtering and another batch work
    window.search.setText("plan 1")
    window.apply_filters()
    wait_for_browser(qtbot, window)
    assert window.model.rowCount() == 1
    with qtbot.waitSignal(dashboard.batch_finished, timeout=WAIT) as again:
        dashboard.start_batch(ids[1:2], BatchOptions(games=3))
    assert again.args[0].finished.status == "finished"
    wait_for_batch(qtbot, window)


def test_no_other_library_opens_under_a_running_batch_and_the_user_is_told_how_to_stop_it(
    qtbot, tmp_path, window, monkeypatch
) -> None:
    dashboard = window.dashboard
    told: list[str] = []
    monkeypatch.setattr(QMessageBox, "information", lambda *args, **_kw: told.append(args[2]))
    seen = []
    dashboard.batch_progress.connect(lambda _update: seen.append(1))
    assert dashboard.start_batch([s.id for s in playable_skills(3)], BatchOptions(games=3000, chunk_games=10))
    qtbot.waitUntil(lambda: bool(seen), timeout=WAIT)
    assert window.state.busy  # the batch writes to this library: the browser says so

    first = window.repository.database.path
    other = make_library(tmp_path / "other.db", 1)
    assert not window.open_library_file(other)
    assert dashboard.running and window.repository.database.path == first  # still this library, still playing
    assert len(told) == 1 and "Cancel Batch" in told[0]

    dashboard.cancel_batch()
    wait_for_batch(qtbot, window)
    assert not window.state.busy
    assert window.open_library_file(other)  # once the batch has stopped
    assert window.repository.database.path == other and dashboard.panel.title.text() == IDLE_TITLE


def test_a_crashing_engine_script_is_an_error_message_too(qtbot, window) -> None:
    import sys

    crash = Path(__file__).resolve().parent.parent / "engine" / "broken_engines" / "crash.py"
    with qtbot.waitSignal(window.dashboard.batch_finished, timeout=WAIT) as finished:
        window.dashboard.start_batch(
            [playable_skills(1)[0].id], BatchOptions(games=6, engine=(sys.executable, str(crash), "2"), chunk_games=6)
        )
    wait_for_batch(qtbot, window)
    outcome = finished.args[0]
    assert outcome.finished.status == "finished" and outcome.errors == 1  # game 2 crashed the engine
    box = notice(window.dashboard)
    assert "1 of 6 games" in box.text() and "Traceback" not in box.text()
    assert "exited (code 3)" in box.detailedText()
    box.close()


def test_closing_during_a_batch_asks_then_cancels_and_keeps_games(qtbot, tmp_path, monkeypatch) -> None:
    window = open_window(qtbot, make_library(tmp_path / "lib.db", 3), tmp_path)
    answers = [QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes]
    asked = []
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: asked.append(a) or answers.pop(0))
    dashboard = window.dashboard
    seen = []
    dashboard.batch_progress.connect(lambda _update: seen.append(1))
    assert dashboard.start_batch([s.id for s in playable_skills(3)], BatchOptions(games=3000, chunk_games=10))
    qtbot.waitUntil(lambda: bool(seen), timeout=WAIT)
    assert not window.close()  # "No": the window stays and the batch goes on
    assert window.isVisible() and dashboard.running
    assert window.close()  # "Yes": cancelled, then closed
    assert len(asked) == 2 and not dashboard.running
    database = window.repository.database
    [run] = RunStore(database).runs()
    assert run.status == "cancelled" and 0 < run.games_recorded < 9000
    database.close()


def test_plot_export_writes_png_and_csv_files(qtbot, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    path = tmp_path / "sample.db"
    create_library(path, sample=True).close()
    window = open_window(qtbot, path, tmp_path)
    try:
        with qtbot.waitSignal(window.dashboard.data_loaded, timeout=WAIT):
            window.table.selectRow(0)
        qtbot.waitUntil(lambda: not window.dashboard.loading, timeout=WAIT)
        for plot in window.dashboard.plots():
            png = plot.export_png(tmp_path / f"{plot.export_name}.png")
            csv = plot.export_csv(tmp_path / f"{plot.export_name}.csv")
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 1000
            assert csv.read_text(encoding="utf-8").splitlines()[0] == ",".join(plot.csv_headers)
        assert len((tmp_path / "tier-distribution.csv").read_text().splitlines()) > 1
        assert len((tmp_path / "success-rate-histogram.csv").read_text().splitlines()) == 11
    finally:
        window.close()
        window.repository.database.close()


def test_verify_menu_shortcuts_collide_with_no_other_action(window) -> None:
    from PySide6.QtGui import QAction

    dashboard = window.dashboard
    ours = {dashboard.verify_action, dashboard.cancel_action, dashboard.runs_action, dashboard.toggle_action}
    others = {
        a.shortcut().toString() for a in window.findChildren(QAction) if a not in ours and not a.shortcut().isEmpty()
    }
    for action in ours:
        assert action.shortcut().isEmpty() or action.shortcut().toString() not in others, action.text()
    assert not dashboard.cancel_action.isEnabled() and dashboard.verify_action.isEnabled()


def test_the_dashboard_benchmark_runs(tmp_path) -> None:
    import json

    from benchmarks import bench_dashboard

    assert bench_dashboard.main(["--skills", "2", "--games", "5", "--chunks", "5", "--out", str(tmp_path)]) == 0
    [run] = json.loads((tmp_path / "dashboard.json").read_text())["runs"]
    assert run["status"] == "finished" and run["games"] == 10 and run["ticks"] > 0


# --- the dashboard on a BrowserState alone --------------------------------------------------------


@pytest.fixture
def state(tmp_path: Path):
    repository = SkillRepository(Database(make_library(tmp_path / "lib.db", 3)), Actor("mira"))
    state = BrowserState(repository)
    yield state
    state.close()
    repository.database.close()


@pytest.fixture
def dashboard(qtbot, state: BrowserState) -> QtDashboard:
    dashboard = QtDashboard(state)  # no main window, no table: everything comes from the state
    qtbot.addWidget(dashboard)
    qtbot.waitUntil(lambda: not dashboard.loading, timeout=WAIT)
    return dashboard


def test_the_dashboard_follows_the_states_selection_and_query(qtbot, state, dashboard) -> None:
    ids = [s.id for s in playable_skills(3)]
    assert dashboard.snapshot is not None and dashboard.snapshot.skills == ()
    assert "3 filtered skills, 0 selected" in dashboard.following.text()

    with qtbot.waitSignal(dashboard.data_loaded, timeout=WAIT):
        state.set_selection(ids[1:], current=ids[1])
    assert [series.skill_id for series in dashboard.snapshot.skills] == ids[1:]
    assert "3 filtered skills, 2 selected" in dashboard.following.text()
    assert dashboard.verify_ids() == (ids[1:], 0)

    with qtbot.waitSignal(dashboard.data_loaded, timeout=WAIT):
        state.set_selection([])
        state.set_query(SkillQuery(text="plan 1"))
    assert sum(group.total for group in dashboard.snapshot.tiers) == 1
    assert "1 filtered skills, 0 selected" in dashboard.following.text()
    assert dashboard.verify_ids() == ([ids[1]], 0)  # nothing selected: every filtered AI skill


def test_data_loaded_waits_for_the_reload_of_a_selection_made_while_an_older_one_was_read(
    qtbot, state, dashboard
) -> None:
    """A reload under way when the selection changes still lands and is drawn, but its plots are
    already out of date: data_loaded says so only for the reload the new selection asks for (it
    once came first, and a test then found the plots without the selected skills)."""
    ids = [s.id for s in playable_skills(3)]
    announced: list[tuple[str, ...]] = []
    dashboard.data_loaded.connect(
        lambda: announced.append(tuple(series.skill_id for series in dashboard.snapshot.skills))
    )
    dashboard.refresh()  # a read of the nothing-selected plots, under way
    with qtbot.waitSignal(dashboard.data_loaded, timeout=WAIT):
        state.set_selection(ids, current=ids[0])  # its reload waits out the debounce, after that read
    assert announced == [tuple(ids)]
    qtbot.waitUntil(lambda: not dashboard.loading, timeout=WAIT)  # its worker may still be ending
    assert announced == [tuple(ids)]  # that reload was the last: nothing came after it


def test_a_new_selection_repaints_the_skills_plots_and_leaves_the_filtered_ones(
    qtbot, monkeypatch, state, dashboard
) -> None:
    repainted = []
    for plot in dashboard.plots()[:5]:  # the five that follow the browser (the sixth is the batch's)
        monkeypatch.setattr(plot, "update_data", lambda *_args, plot=plot: repainted.append(plot))
    with qtbot.waitSignal(dashboard.data_loaded, timeout=WAIT):
        state.set_selection([playable_skills(1)[0].id])
    assert repainted == [dashboard.history_plot, dashboard.content_plot]  # no evidence yet: no opponents
    repainted.clear()
    with qtbot.waitSignal(dashboard.data_loaded, timeout=WAIT):
        state.set_query(SkillQuery(text="plan 1"))
    assert repainted == [dashboard.tier_plot, dashboard.histogram_plot]


def test_plots_reload_for_changes_to_what_they_show_only(qtbot, state, dashboard) -> None:
    [skill_id] = [playable_skills(1)[0].id]
    state.library_changed.emit(LibraryChange(AuditAction.REVIEW, (skill_id,), "someone"))
    assert not dashboard.loading  # a review decision changes nothing plotted
    with qtbot.waitSignal(dashboard.data_loaded, timeout=WAIT):
        state.library_changed.emit(LibraryChange(AuditAction.VERIFY, (skill_id,), "someone"))
        assert dashboard.loading


def test_opening_another_library_forgets_the_cancelled_run_and_the_live_plot(qtbot, tmp_path, state, dashboard) -> None:
    ids = [s.id for s in playable_skills(3)]
    first = state.require_repository()
    with qtbot.waitSignal(dashboard.batch_finished, timeout=WAIT):  # some evidence to plot
        assert dashboard.start_batch(ids, BatchOptions(games=3, seed=2))
    qtbot.waitUntil(lambda: not dashboard.running, timeout=WAIT)

    def cancel(_update) -> None:
        dashboard.cancel_batch()

    dashboard.batch_progress.connect(cancel)
    with qtbot.waitSignal(dashboard.batch_finished, timeout=WAIT) as finished:
        assert dashboard.start_batch(ids, BatchOptions(games=200, seed=1, chunk_games=20))
    dashboard.batch_progress.disconnect(cancel)
    qtbot.waitUntil(lambda: not dashboard.running, timeout=WAIT)
    assert finished.args[0].finished.status == "cancelled"
    assert "Resume finishes the run" in dashboard.panel.summary.text() and dashboard.live_plot.rows()
    assert dashboard.last_outcome is not None
    with qtbot.waitSignal(dashboard.data_loaded, timeout=WAIT):
        state.set_selection(ids, current=ids[0])
    assert dashboard.history_plot.rows() and dashboard.opponent_plot.rows() and dashboard.tier_plot.rows()
    runs = dashboard.show_runs()  # the previous library's runs, with its resume offer
    assert runs is not None and runs.runs

    other = SkillRepository(Database(make_library(tmp_path / "other.db", 1)), first.actor)
    try:
        state.set_repository(other)
        # at once, before the new library's figures are read: nothing of the previous one shows
        assert dashboard.panel.title.text() == IDLE_TITLE and dashboard.panel.summary.text() == IDLE_RESULT
        assert not dashboard.panel.verdicts.text() and not dashboard.panel.figures.text()
        assert dashboard.panel.bar.text() == "" and not dashboard.panel.cancel_button.isEnabled()
        assert dashboard.live_plot.rows() == [] and dashboard.live_plot.games == []
        assert all(plot.rows() == [] for plot in dashboard.plots() if plot is not dashboard.histogram_plot)
        assert not any(row[2] for row in dashboard.histogram_plot.rows())
        assert dashboard.standing.text() == NO_SELECTION
        assert not runs.isVisible()  # its runs (and Resume) belong to the library that closed
        assert dashboard.last_outcome is None
        qtbot.waitUntil(lambda: dashboard.snapshot is not None and not dashboard.loading, timeout=WAIT)
        assert sum(group.total for group in dashboard.snapshot.tiers) == 1  # the plots show the new library
    finally:
        state.set_repository(first)
        other.database.close()


def test_opening_another_library_during_a_batch_cancels_it_there_and_shows_nothing_of_it(
    qtbot, tmp_path, state, dashboard
) -> None:
    first = state.require_repository()
    seen = []
    dashboard.batch_progress.connect(lambda _update: seen.append(1))
    assert dashboard.start_batch([s.id for s in playable_skills(3)], BatchOptions(games=3000, chunk_games=10))
    qtbot.waitUntil(lambda: bool(seen), timeout=WAIT)

    other = SkillRepository(Database(make_library(tmp_path / "other.db", 1)), first.actor)
    try:
        state.set_repository(other)  # returns once the batch has stopped: its library may close now
        assert not dashboard.running and dashboard.verify_action.isEnabled()
        [run] = RunStore(first.database).runs()
        assert run.status == "cancelled" and 0 < run.games_recorded < 9000  # its games are kept
        assert dashboard.panel.title.text() == IDLE_TITLE and dashboard.live_plot.rows() == []
        assert RunStore(other.database).runs() == []
    finally:
        state.set_repository(first)
        other.database.close()


def test_a_batchs_changes_name_the_dashboard_as_their_initiator(qtbot, state, dashboard) -> None:
    changes: list[LibraryChange] = []
    state.library_changed.connect(changes.append)
    with qtbot.waitSignal(dashboard.batch_finished, timeout=WAIT):
        assert dashboard.start_batch([s.id for s in playable_skills(2)], BatchOptions(games=3))
    qtbot.waitUntil(lambda: not dashboard.running, timeout=WAIT)
    assert {change.action for change in changes} <= {AuditAction.VERIFY, AuditAction.PROMOTE, AuditAction.DEMOTE}
    assert len(changes) == 2 and all(change.started_by(dashboard) for change in changes)


def test_the_progress_bar_reads_right_when_idle_running_cancelled_and_finished(qtbot, state, dashboard) -> None:
    panel = dashboard.panel
    ids = [s.id for s in playable_skills(3)]
    assert (panel.bar.text(), panel.figures.text()) == ("", "")  # idle: no "0 / 1 games"
    running: list[tuple[str, str]] = []

    def cancel(_update) -> None:  # what the panel read while the batch ran, then Cancel
        running.append((panel.bar.text(), panel.figures.text()))
        dashboard.cancel_batch()

    dashboard.batch_progress.connect(cancel)
    with qtbot.waitSignal(dashboard.batch_finished, timeout=WAIT):
        assert dashboard.start_batch(ids, BatchOptions(games=200, seed=1, chunk_games=20))
    dashboard.batch_progress.disconnect(cancel)
    qtbot.waitUntil(lambda: not dashboard.running, timeout=WAIT)
    bar, figures = running[0]
    assert bar.endswith("/ 600 games") and "remaining" in figures and "W " in figures
    assert panel.bar.text().endswith("/ 600 games · cancelled")
    assert panel.figures.text().startswith("cancelled after") and "remaining" not in panel.figures.text()

    with qtbot.waitSignal(dashboard.batch_finished, timeout=WAIT):
        assert dashboard.start_batch(ids[:1], BatchOptions(games=6, seed=3))
    qtbot.waitUntil(lambda: not dashboard.running, timeout=WAIT)
    assert panel.bar.text() == "6 / 6 games · finished" and panel.bar.value() == panel.bar.maximum() == 6
    assert panel.figures.text().startswith("finished after") and "remaining" not in panel.figures.text()


def test_a_batch_says_why_tiers_did_not_follow_their_figures_and_the_selection_shows_the_flags(qtbot, tmp_path) -> None:
    from skillstudio.model import Confidence

    repository = SkillRepository(Database(make_library(tmp_path / "proven.db", 3, Confidence.PROVEN)), Actor("mira"))
    state = BrowserState(repository)
    dashboard = QtDashboard(state)
    qtbot.addWidget(dashboard)
    try:
        ids = [s.id for s in playable_skills(3)]
        with qtbot.waitSignal(dashboard.batch_finished, timeout=WAIT) as finished:
            assert dashboard.start_batch(ids, BatchOptions(games=6, seed=5))
        qtbot.waitUntil(lambda: not dashboard.running and not dashboard.loading, timeout=WAIT)
        outcome = finished.args[0]
        # six games keep no Proven tier, a batch lowers none (D057): each skill is explained
        assert "Demoted: none" in dashboard.panel.summary.text() and len(outcome.verdicts) == 3
        shown = dashboard.panel.verdicts.text()
        assert shown.count("<li>") == 3 and "3 skills to look at" in shown
        for verdict in outcome.verdicts:
            assert escaped(verdict.name) in shown and escaped(verdict.why) in shown and escaped(verdict.todo) in shown
            assert "demote_on_verify is off" in verdict.why and "demote_on_verify" in verdict.todo

        with qtbot.waitSignal(dashboard.data_loaded, timeout=WAIT):
            state.set_selection(ids, current=ids[0])
        contradicted = [v for v in outcome.verdicts if v.contradicted]
        assert contradicted and [f.skill_id for f in dashboard.snapshot.flagged] == [v.skill_id for v in contradicted]
        tab = dashboard.tabs.tabText(dashboard.tabs.indexOf(dashboard.selected_page))
        assert tab == f"Selected skills ⚠ {len(contradicted)}"
        standing = dashboard.standing.text()
        assert f"{len(contradicted)} contradicted tier" in standing and standing.count("To settle:") == len(
            contradicted
        )
        assert {name for name in dashboard.history_plot.legend_names if name.startswith("⚠ ")} == {
            f"⚠ {v.name}" for v in contradicted
        }
    finally:
        dashboard.close()
        state.close()
        repository.database.close()


def test_a_plot_export_that_fails_says_so_and_leaves_the_earlier_file(
    qtbot, tmp_path: Path, dashboard: QtDashboard, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CSV was written row by row into the opened file: a failure left half of it, and the
    error was only a traceback on stderr."""
    from PySide6.QtWidgets import QFileDialog

    import skillstudio.gui.dashboard.qt_plots as plots_module

    plot = dashboard.tier_plot
    earlier = tmp_path / "tiers.csv"
    earlier.write_text("the earlier export\n")

    rows = list(plot.rows())
    assert rows  # a row is written before the failure

    def failing_rows():
        yield rows[0]
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(plot, "rows", failing_rows)
    errors: list[str] = []
    monkeypatch.setattr(plots_module, "show_error", lambda _parent, title, error: errors.append(f"{title}: {error}"))
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(earlier), ""))
    plot._ask_export("csv")
    assert errors == ["CSV not exported: [Errno 28] No space left on device"]
    assert earlier.read_text() == "the earlier export\n"


def test_a_png_export_that_writes_nothing_says_so(
    qtbot, tmp_path: Path, dashboard: QtDashboard, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtWidgets import QFileDialog

    import skillstudio.gui.dashboard.qt_plots as plots_module

    errors: list[str] = []
    monkeypatch.setattr(plots_module, "show_error", lambda _parent, title, error: errors.append(f"{title}: {error}"))
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(blocker / "tiers.png"), ""))
    dashboard.tier_plot._ask_export("png")
    assert errors == [f"PNG not exported: could not write an image to {blocker / 'tiers.png'}"]
