"""The dashboard's lift and composition plots, and the verify dialog's baseline checkbox
(pytest-qt, offscreen), on a BrowserState alone."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

from skillstudio.gui.browser_state import BrowserState  # noqa: E402
from skillstudio.gui.dashboard import QtDashboard  # noqa: E402
from skillstudio.gui.dashboard.qt_verify_dialog import QtVerifyDialog  # noqa: E402
from skillstudio.gui.dashboard.verify_worker import BatchOptions  # noqa: E402
from skillstudio.store import Actor, Database, SkillQuery, SkillRepository  # noqa: E402
from skillstudio.store.paired_runs import PairedRuns  # noqa: E402
from skillstudio.verification.compositions import plan_sequence, start_sequence  # noqa: E402
from skillstudio.verification.drive import drive_run  # noqa: E402

WAIT = 30_000


@pytest.fixture
def state(library_copy: Path):
    repository = SkillRepository(Database(library_copy), Actor("mira"))
    state = BrowserState(repository)
    yield state
    state.close()
    repository.database.close()


@pytest.fixture
def dashboard(qtbot, state: BrowserState) -> QtDashboard:
    dashboard = QtDashboard(state)
    qtbot.addWidget(dashboard)
    qtbot.waitUntil(lambda: not dashboard.loading, timeout=WAIT)
    return dashboard


def _ids(state: BrowserState, *names: str) -> list[str]:
    repository = state.require_repository()
    summaries = repository.summaries(repository.query(SkillQuery()).ids)
    return [next(s.id for s in summaries if s.name.startswith(name)) for name in names]


def test_the_dialogs_checkbox_asks_for_the_baseline(qtbot) -> None:
    dialog = QtVerifyDialog(2, options=BatchOptions(baseline=True))
    qtbot.addWidget(dialog)
    assert dialog.baseline.isChecked() and dialog.options().baseline
    dialog.baseline.setChecked(False)
    assert dialog.options().baseline is False


def test_a_baseline_batch_from_the_dashboard_plots_each_skills_lift(qtbot, state, dashboard) -> None:
    mig, rush = _ids(state, "MiG strikes on exposed ore trucks", "Light tank rush at 5:00")
    with qtbot.waitSignal(dashboard.batch_finished, timeout=WAIT) as finished:
        assert dashboard.start_batch([mig, rush], BatchOptions(games=10, seed=2, chunk_games=5, baseline=True))
    outcome = finished.args[0]
    assert outcome.finished.status == "finished"
    assert {r.skill_id for r in outcome.lifts} == {mig, rush}
    assert "worse than the default plan: Light tank rush at 5:00" in dashboard.panel.summary.text()
    qtbot.waitUntil(lambda: not dashboard.running and not dashboard.loading, timeout=WAIT)
    with qtbot.waitSignal(dashboard.data_loaded, timeout=WAIT):
        state.set_selection([mig, rush], current=mig)
    rows = dashboard.lift_plot.rows()
    assert [(row[0], row[9]) for row in rows] == [(mig, False), (rush, True)]  # in selection order; the rush is worse
    [rush_row] = [row for row in rows if row[0] == rush]
    text = dashboard.lift_plot.readout_at(rush_row[6] * 100, 0)
    assert text is not None and "worse than the default plan" in text and "over 10 pairs" in text


def test_the_composition_plot_shows_the_selected_skills_partners(qtbot, state, dashboard) -> None:
    rush, armor = _ids(state, "Light tank rush at 5:00", "Transition to medium armor")
    repository = state.require_repository()
    run_id = start_sequence(
        repository.database, plan_sequence(repository, [rush, armor]), opponent="IC Default Hard", games=8, seed=1
    )
    list(drive_run(repository.database, run_id))
    [pair] = PairedRuns(repository.database).pairs(run_id)
    with qtbot.waitSignal(dashboard.data_loaded, timeout=WAIT):
        state.set_selection([rush], current=rush)
    assert dashboard.paired is not None and dashboard.paired.composition_skill == rush
    rows = {row[1]: row for row in dashboard.composition_plot.rows()}
    assert rows[armor][3] == "first" and rows[armor][6] == 1 and rows[armor][8:10] == (pair.counts.wins, 8)
    assert "Compositions of Light tank rush" in dashboard.composition_plot.item.titleLabel.text
    for plot in (dashboard.lift_plot, dashboard.composition_plot):
        assert plot in dashboard.plots()
