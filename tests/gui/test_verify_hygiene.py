"""Verify Selection from the GUI (issue 16): it plays what the CLI would play, says what it left
out and why, and a new batch draws a fresh seed unless one is typed in."""

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
from skillstudio.model import Domain  # noqa: E402
from skillstudio.store import Actor, Database, SkillRepository  # noqa: E402
from skillstudio.store.runs import RunStore  # noqa: E402
from tests.factories import example_skill, instructions_skill  # noqa: E402
from tests.verification.helpers import make_library, playable_skills  # noqa: E402

WAIT = 20_000


@pytest.fixture
def state(tmp_path: Path):
    repository = SkillRepository(Database(make_library(tmp_path / "lib.db", 1)), Actor("mira"))
    state = BrowserState(repository)
    yield state
    state.close()
    repository.database.close()


def test_the_dialog_draws_a_fresh_seed_unless_one_is_typed(qtbot) -> None:
    dialog = QtVerifyDialog(2)
    qtbot.addWidget(dialog)
    assert dialog.seed.text() == "new each batch"
    assert dialog.options().seed is None and BatchOptions().seed is None
    dialog.seed.setValue(42)  # a run's recorded seed, to replay its games
    assert dialog.options().seed == 42
    again = QtVerifyDialog(2, options=dialog.options())
    qtbot.addWidget(again)
    assert again.options().seed == 42


def test_verify_selection_leaves_out_what_the_engine_cannot_play(qtbot, state: BrowserState) -> None:
    repository = state.require_repository()
    instructions = repository.create(instructions_skill(domain=Domain.AI_STRATEGY))
    example = repository.create(example_skill())
    playable = playable_skills(1)[0].id
    dashboard = QtDashboard(state)
    qtbot.addWidget(dashboard)
    qtbot.waitUntil(lambda: not dashboard.loading, timeout=WAIT)
    with qtbot.waitSignal(dashboard.batch_finished, timeout=WAIT) as finished:
        assert dashboard.start_batch([playable, instructions.id, example.id], BatchOptions(games=3, seed=42))
    outcome = finished.args[0]
    qtbot.waitUntil(lambda: not dashboard.running, timeout=WAIT)
    skipped = {s.skill_id: s.reason for s in outcome.finished.skipped}
    assert set(skipped) == {instructions.id, example.id}
    assert "instructions body" in skipped[instructions.id] and "verified_example body" in skipped[example.id]
    assert "2 skipped" in dashboard.panel.summary.text() and "built-in engine plays" in dashboard.panel.summary.text()
    run = RunStore(repository.database).run(outcome.finished.run_id)
    assert [s.skill_id for s in RunStore(repository.database).skills(run.id)] == [playable]
    assert run.seed == 42  # the typed seed, recorded; the next dialog draws a fresh one again
    assert dashboard._options.seed is None and dashboard._options.games == 3
    for skipped_id in (instructions.id, example.id):  # no all-error session rewrote their figures
        assert repository.evidence.verifications(skipped_id) == []
        assert (
            repository.get(skipped_id).quality == (instructions if skipped_id == instructions.id else example).quality
        )


def test_the_verify_dialog_has_room_for_every_field_and_offers_what_the_cli_does(qtbot) -> None:
    dialog = QtVerifyDialog(3)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    engine = dialog.engine  # its placeholder reads in full
    assert engine.width() > engine.fontMetrics().horizontalAdvance(engine.placeholderText()) + 12
    assert dialog.width() >= 520 and dialog.height() >= dialog.minimumSizeHint().height()
    # --until-decided --max-games N: the games per skill become a maximum
    assert not dialog.until_decided.isChecked() and not dialog.max_games.isEnabled()
    dialog.until_decided.setChecked(True)
    dialog.max_games.setValue(60)
    assert not dialog.games.isEnabled() and dialog.max_games.isEnabled()
    options = dialog.options()
    assert options.until_decided and options.games == 60
    again = QtVerifyDialog(3, options=options)  # the next dialog starts from the last batch's options
    qtbot.addWidget(again)
    assert again.until_decided.isChecked() and again.max_games.value() == 60
    # --baseline needs the built-in engine: refused in the dialog, nothing starts
    dialog.baseline.setChecked(True)
    dialog.engine.setText("/opt/engine --protocol")
    dialog.accept()
    assert dialog.result() != QtVerifyDialog.DialogCode.Accepted and "built-in engine" in dialog.error.text()


def test_until_decided_from_the_gui_runs_the_clis_sequential_test_and_says_what_it_saved(
    qtbot, state: BrowserState
) -> None:
    from skillstudio.store.paired_runs import PairedRuns
    from skillstudio.verification import sequential

    repository = state.require_repository()
    skill_id = playable_skills(1)[0].id
    dashboard = QtDashboard(state)
    qtbot.addWidget(dashboard)
    qtbot.waitUntil(lambda: not dashboard.loading, timeout=WAIT)
    with qtbot.waitSignal(dashboard.batch_finished, timeout=WAIT) as finished:
        # A fixed seed: with a fresh one, about 1 run in 25 needed all 200 games to decide
        assert dashboard.start_batch([skill_id], BatchOptions(games=200, until_decided=True, seed=57))
    qtbot.waitUntil(lambda: not dashboard.running, timeout=WAIT)
    outcome = finished.args[0]
    run = RunStore(repository.database).run(outcome.finished.run_id)
    # what `verify --until-decided --max-games 200` records: the design, rounds, the maximum
    assert sequential.design_of(run) == {"delta": 0.1, "alpha": 0.05, "beta": 0.05}
    assert (run.games, run.chunk_games) == (200, sequential.DEFAULT_ROUND_GAMES)
    [decision] = PairedRuns(repository.database).decisions(run.id).values()
    assert outcome.decisions == {decision.decision: 1} and outcome.games_at_most == 200
    played = outcome.finished.games_done
    assert played < 200  # the sample plan is decided long before the maximum
    assert f"Until decided: 1 {decision.decision}; {played} games played of 200 at most ({200 - played} saved)." in (
        dashboard.panel.summary.text()
    )


def test_the_batchs_seed_is_shown_while_it_runs_after_it_ends_and_in_the_runs_list(qtbot, state: BrowserState) -> None:
    dashboard = QtDashboard(state)
    qtbot.addWidget(dashboard)
    qtbot.waitUntil(lambda: not dashboard.loading, timeout=WAIT)
    titles: list[str] = []
    dashboard.batch_progress.connect(lambda _update: titles.append(dashboard.panel.title.text()))
    with qtbot.waitSignal(dashboard.batch_finished, timeout=WAIT) as finished:
        assert dashboard.start_batch([playable_skills(1)[0].id], BatchOptions(games=4))  # a fresh seed
    qtbot.waitUntil(lambda: not dashboard.running, timeout=WAIT)
    seed = RunStore(state.require_repository().database).run(finished.args[0].finished.run_id).seed
    assert f"seed {seed}" in titles[0]
    assert f"Seed {seed}: recorded with the run" in dashboard.panel.summary.text()
    runs = dashboard.show_runs()
    assert runs is not None
    column = [runs.table.horizontalHeaderItem(c).text() for c in range(runs.table.columnCount())].index("Seed")
    assert runs.table.item(0, column).text() == str(seed)
    runs.close()


def test_a_batch_started_from_the_window_records_a_chunk_for_its_live_plot() -> None:
    """Not the CLI's 4,000-game chunk (one point for a small batch), nor one skill per chunk."""
    from skillstudio.verification.runner import chunk_games_for

    options = BatchOptions(games=40)
    assert options.games_per_chunk(6) == chunk_games_for(240)
    assert BatchOptions(games=40, chunk_games=7).games_per_chunk(6) == 7
