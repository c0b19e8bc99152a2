"""The dashboard's plots read well in the main window at 1280×800 and 1600×1000 (issue 15.5):
a handful of series and a sum of the others in a legend, axes as wide as their labels, and the
live plot in sight while a batch runs. Offscreen, on a copy of the sample library."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")
pytestmark = pytest.mark.gui

from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QMessageBox  # noqa: E402

from skillstudio.gui.dashboard.qt_plots import MAX_SERIES, MIN_PLOT_HEIGHT, QtPlotPanel  # noqa: E402
from skillstudio.gui.dashboard.verify_worker import BatchOptions  # noqa: E402
from skillstudio.gui.qt_main_window import QtMainWindow  # noqa: E402
from skillstudio.model import Domain  # noqa: E402
from skillstudio.store import Actor, Database, SkillQuery, SkillRepository  # noqa: E402
from tests.gui.conftest import wait_for_browser  # noqa: E402

WAIT = 20_000
SIZES = ((1280, 800), (1600, 1000))


@pytest.fixture
def window(qtbot, tmp_path: Path, library_copy: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    window = QtMainWindow(
        SkillRepository(Database(library_copy), Actor("mira")),
        QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat),
    )
    qtbot.addWidget(window)
    window.show()
    wait_for_browser(qtbot, window)
    yield window
    window.close()
    window.repository.database.close()


def select_everything(qtbot, window: QtMainWindow) -> int:
    with qtbot.waitSignal(window.dashboard.data_loaded, timeout=WAIT):
        window.table.selectRow(0)
        window.table.selectAll()
    qtbot.waitUntil(lambda: not window.dashboard.loading, timeout=WAIT)
    return len(window.selected_ids())


def axes_fit(panel: QtPlotPanel) -> bool:
    """The left axis holds its widest label; right of the bottom axis (before the legend beside
    the plot, or the edge) there is room for half of its widest label, centred on the last tick."""
    left = panel.item.getAxis("left")
    widest = max((panel.text_width(label) for label in panel.tick_labels("left")), default=0.0)
    if left.isVisible() and left.width() < widest + left.style["tickTextOffset"][0]:
        return False
    half = max((panel.text_width(label) for label in panel.tick_labels("bottom")), default=0.0) / 2
    end = panel.item.getAxis("bottom").sceneBoundingRect().right()
    beside = panel.legend.scene() is not None and panel.legend.pos().x() > end
    limit = panel.legend.sceneBoundingRect().left() if beside else panel.plot.viewport().width()
    return end + half <= limit


@pytest.mark.parametrize("size", SIZES)
def test_with_every_skill_selected_a_legend_draws_a_handful_and_sums_up_the_others(qtbot, window, size) -> None:
    window.resize(*size)
    selected = select_everything(qtbot, window)
    dashboard = window.dashboard
    names = dashboard.history_plot.legend_names
    drawn = [series for series in dashboard.snapshot.skills if series.history]
    assert selected > MAX_SERIES and len(drawn) == MAX_SERIES
    assert len(names) == MAX_SERIES + 2  # the skills drawn, the others, the tiers' bars
    [others] = [name for name in names if name.startswith("+")]
    assert others.startswith(f"+{selected - MAX_SERIES} more: ") and others.endswith(" games")
    assert "candidate 40 · established 60 · proven 70%" in names
    assert f"{MAX_SERIES} of {selected} selected skills drawn" in dashboard.standing.text()


@pytest.mark.parametrize("size", SIZES)
def test_every_axis_is_as_wide_as_its_widest_label_in_every_tab(qtbot, window, size) -> None:
    window.resize(*size)
    select_everything(qtbot, window)
    dashboard = window.dashboard
    dashboard.live_plot.set_total(5000)  # a long batch: "5000" at the axis' end reads in full
    assert "5000" in dashboard.live_plot.tick_labels("bottom")
    for index in range(dashboard.tabs.count()):
        dashboard.tabs.setCurrentIndex(index)
        for panel in dashboard.plots():
            if panel.isVisible():
                qtbot.waitUntil(lambda panel=panel: axes_fit(panel), timeout=WAIT)
                assert panel.plot.height() >= MIN_PLOT_HEIGHT


def test_the_live_plot_comes_into_sight_when_a_batch_starts(qtbot, window) -> None:
    window.resize(1280, 800)
    dashboard = window.dashboard
    dashboard.toggle_action.trigger()  # the user closed the dock, and looked at another tab
    dashboard.tabs.setCurrentIndex(dashboard.tabs.count() - 1)
    assert not dashboard.isVisible()
    repository = window.repository
    ids = list(repository.query(SkillQuery(domains=(Domain.AI_STRATEGY,))).ids)
    seen: list[tuple[bool, bool, int]] = []

    def look(_update) -> None:  # what the user sees while the batch plays
        plot = dashboard.live_plot
        seen.append((dashboard.isVisible(), not plot.visibleRegion().isEmpty(), plot.plot.height()))
        if len(seen) == 3:  # a few updates in: the layout has had its turns of the event loop
            dashboard.cancel_batch()

    dashboard.batch_progress.connect(look)
    with qtbot.waitSignal(dashboard.batch_finished, timeout=WAIT):
        assert dashboard.start_batch(ids, BatchOptions(games=100, chunk_games=10))
    qtbot.waitUntil(lambda: not dashboard.running, timeout=WAIT)
    visible, in_sight, height = seen[-1]
    assert visible and in_sight and height >= MIN_PLOT_HEIGHT
    assert dashboard.tabs.currentWidget() is dashboard.batch_page
