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
