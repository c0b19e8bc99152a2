"""The Retrieval Preview dock and Compute Embeddings, driven through their widgets (pytest-qt, offscreen)."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytestmark = pytest.mark.gui

from PySide6.QtCore import QSettings, Qt  # noqa: E402
from PySide6.QtGui import QGuiApplication  # noqa: E402
from PySide6.QtWidgets import QMessageBox, QPushButton  # noqa: E402

from skillstudio.gui import qt_retrieval_preview  # noqa: E402
from skillstudio.gui.qt_main_window import QtMainWindow  # noqa: E402
from skillstudio.gui.qt_retrieval_preview import QtRetrievalPreview  # noqa: E402
from skillstudio.gui.workers import LibraryOp  # noqa: E402
from skillstudio.library import create_library  # noqa: E402
from skillstudio.retrieval import (  # noqa: E402
    LOCAL_MODEL_ID,
    LocalEmbeddings,
    ProviderError,
    Retriever,
    embed_library,
)
from skillstudio.store import Actor, Database, SkillRepository  # noqa: E402
from tests.factories import ai_skill  # noqa: E402
from tests.gui.conftest import wait_for_browser  # noqa: E402

QUERY = "enemy aircraft raiding my ore trucks"
SEMANTIC, SITUATION = 5, 6  # results columns


@pytest.fixture(scope="module")
def sample_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample library with a vector for every skill (each test works on a copy)."""
    path = tmp_path_factory.mktemp("sample") / "template.db"
    database = create_library(path, sample=True)
    for _progress in embed_library(SkillRepository(database, Actor("setup")), LocalEmbeddings()):
        pass
    database.close()
    return path


@pytest.fixture
def window(qtbot, tmp_path: Path, sample_file: Path, monkeypatch: pytest.MonkeyPatch) -> QtMainWindow:
    library = tmp_path / "library.db"
    library.write_bytes(sample_file.read_bytes())
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    repository = SkillRepository(Database(library), Actor("mira"))
    window = QtMainWindow(repository, QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show()
    wait_for_browser(qtbot, window)
    yield window
    window.close()
    window.repository.database.close()


def open_preview(window: QtMainWindow) -> QtRetrievalPreview:
    preview = window.retrieval_preview
    assert preview is not None and not preview.isVisible()  # hidden at start
    window.retrieval_preview.toggle_action.trigger()
    assert preview.isVisible()
    return preview


def idle(preview: QtRetrievalPreview) -> bool:
    """No search is due or running."""
    return not preview.loader.loading and not preview.debounce.isActive()


def shown(qtbot, preview: QtRetrievalPreview, query: str = QUERY, **request: object) -> None:
    """Wait until the preview shows the result of ``query`` (and of these request fields)."""

    def done() -> bool:
        current = preview.preview
        if current is None or not idle(preview) or current.request.query != query:
            return False
        return all(getattr(current.request, key) == value for key, value in request.items())

    qtbot.waitUntil(done, timeout=10_000)


def column(preview: QtRetrievalPreview, number: int) -> list[str]:
    return [preview.table.item(row, number).text() for row in range(preview.table.rowCount())]


def test_the_shortcut_opens_the_dock_and_a_query_shows_skills_and_prompt(qtbot, window: QtMainWindow) -> None:
    preview = window.retrieval_preview
    assert not preview.isVisible()
    assert preview.toggle_action.shortcut().toString() == "Ctrl+Shift+R"
    assert preview.toggle_action in window.view_menu.actions()
    window.activateWindow()
    window.table.setFocus()
    qtbot.keyClick(window, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert preview.isVisible() and preview.toggle_action.isChecked()
    assert window.dockWidgetArea(preview) == Qt.DockWidgetArea.RightDockWidgetArea

    qtbot.keyClicks(preview.query, QUERY)
    shown(qtbot, preview)
    assert preview.table.rowCount() == 5  # k
    scores = [float(text) for text in column(preview, 3)]
    assert scores == sorted(scores, reverse=True) and scores[0] > 0
    assert all(text != "—" for text in column(preview, SEMANTIC))  # hybrid: meaning counts
    assert set(column(preview, SITUATION)) == {"—"}  # no situation asked for
    assert "hybrid" in preview.status.text() and LOCAL_MODEL_ID in preview.status.text()
    prompt = preview.prompt.toPlainText()
    assert prompt.startswith("Previously successful")
    assert f"{len(prompt):,} of 4,000 characters" in preview.prompt_size.text()
    assert preview.catalog_text.toPlainText().startswith("Available skills")
    assert "vs full content" in preview.catalog_size.text()
    assert not preview.lacking.isVisible()  # the whole library is embedded
    assert preview.table.horizontalHeaderItem(SEMANTIC).toolTip()


def test_budget_and_k_change_the_prompt(qtbot, window: QtMainWindow) -> None:
    preview = open_preview(window)
    preview.query.setText(QUERY)
    preview.k.setValue(3)
    preview.budget.setValue(1500)
    shown(qtbot, preview, k=3, budget=1500)
    assert preview.table.rowCount() == 3
    assert preview.preview.context.size <= 1500
    assert "of 1,500 characters; left out: " in preview.prompt_size.text()


def test_fts_mode_drops_the_semantic_breakdown(qtbot, window: QtMainWindow) -> None:
    preview = open_preview(window)
    preview.query.setText(QUERY)
    shown(qtbot, preview)
    hybrid = column(preview, 3)
    preview.mode.setCurrentIndex(preview.mode.findData("fts"))
    shown(qtbot, preview, mode="fts")
    assert preview.table.rowCount() > 0
    assert set(column(preview, SEMANTIC)) == {"—"}
    assert all(text != "—" for text in column(preview, 4))
    assert column(preview, 3) != hybrid
    assert "<b>Mode:</b> fts" in preview.status.text()


def test_selecting_a_result_selects_the_skill_in_the_browser(qtbot, window: QtMainWindow) -> None:
    preview = open_preview(window)
    preview.query.setText(QUERY)
    shown(qtbot, preview)
    preview.table.selectRow(1)
    skill_id = preview.selected_id()
    assert skill_id == preview.preview.result.hits[1].skill_id
    wait_for_browser(qtbot, window)
    assert window.current_id() == skill_id
    assert window.detail.skill_id == skill_id


def test_a_result_the_browser_filters_out_shows_in_the_detail_pane_alone(qtbot, window: QtMainWindow) -> None:
    preview = open_preview(window)
    preview.query.setText(QUERY)
    shown(qtbot, preview)
    hit = next(h for h in preview.preview.result.hits if h.game_module == "ra1")
    for row in range(window.filters.module.list.count()):  # the browser shows td skills only
        item = window.filters.module.list.item(row)
        if item.data(Qt.ItemDataRole.UserRole) == "td":
            item.setCheckState(Qt.CheckState.Checked)
    wait_for_browser(qtbot, window)
    preview.table.selectRow(preview.preview.result.ids.index(hit.skill_id))
    assert window.detail.skill_id == hit.skill_id
    assert window.current_id() is None
    assert window.filters.module.checked() == ["td"]  # the filters stay as they were


def test_copy_puts_the_prompt_on_the_clipboard(qtbot, window: QtMainWindow) -> None:
    preview = open_preview(window)
    preview.query.setText(QUERY)
    shown(qtbot, preview)
    qtbot.mouseClick(preview.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == preview.prompt.toPlainText() != ""


def test_a_skill_without_a_vector_is_reported_and_embed_computes_it(qtbot, window: QtMainWindow) -> None:
    preview = open_preview(window)
    preview.query.setText(QUERY)
    shown(qtbot, preview)
    window.repository.create(ai_skill(name="Flak screen for the ore trucks"))  # not embedded
    qtbot.waitUntil(preview.lacking.isVisible, timeout=10_000)
    assert preview.lacking.text() == f"1 skill lacks a current vector for {LOCAL_MODEL_ID}"
    assert preview.embed_button.isVisible()

    qtbot.mouseClick(preview.embed_button, Qt.MouseButton.LeftButton)  # View › Compute Embeddings
    job = preview.embed_job
    assert job is not None
    qtbot.waitUntil(lambda: not window.state.busy, timeout=10_000)
    assert job.result is not None and (job.result.stored, job.result.total) == (1, 1)
    assert "Stored 1 of 1 vectors" in job.message.text()
    job.message.close()
    qtbot.waitUntil(lambda: not preview.lacking.isVisible() and idle(preview), timeout=10_000)


def test_a_failing_provider_is_reported_readably(qtbot, window: QtMainWindow, monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        model_id, dimensions = "broken/model", 8

        def embed(self, texts):
            raise ProviderError("http://localhost:1", "connection refused")

    window.repository.create(ai_skill())
    window.retrieval_preview.provider = Broken()
    seen: list[tuple[str, QMessageBox.Icon]] = []

    def read(box: QMessageBox) -> int:  # what the user reads; the progress dialog is modal too
        seen.append((box.text(), box.icon()))
        return QMessageBox.StandardButton.Ok.value

    monkeypatch.setattr(QMessageBox, "exec", read)
    job = window.retrieval_preview.compute_embeddings()
    assert job is not None
    qtbot.waitUntil(lambda: not window.state.busy, timeout=10_000)
    assert job.result is None and not job.dialog.isVisible()
    [(error, icon)] = seen
    assert "connection refused" in error and "0 vectors were stored" in error
    assert icon == QMessageBox.Icon.Warning


def test_cancel_stops_computing_embeddings_after_the_batch_and_keeps_it(
    qtbot, window: QtMainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    reached, proceed = threading.Event(), threading.Event()

    class Gated:  # a new model: every skill lacks its vector
        model_id, dimensions = "gated/model", 8

        def embed(self, texts: list[str]) -> np.ndarray:
            reached.set()
            proceed.wait(10)
            return np.ones((len(texts), 8), dtype=np.float32)

    monkeypatch.setattr(qt_retrieval_preview, "embed_library", partial(embed_library, batch=10))
    preview = window.retrieval_preview
    preview.provider = Gated()
    job = preview.compute_embeddings()
    assert job is not None and job.dialog.isVisible()
    qtbot.waitUntil(reached.is_set, timeout=10_000)  # the first batch is being embedded
    qtbot.mouseClick(job.dialog.findChild(QPushButton), Qt.MouseButton.LeftButton)  # Cancel
    assert job.dialog.labelText() == "Cancelling after this batch…"
    proceed.set()
    qtbot.waitUntil(lambda: not window.state.busy, timeout=10_000)
    total = window.repository.embeddings.status("gated/model").total
    assert job.result is not None and job.result.cancelled
    assert (job.result.stored, job.result.total) == (10, total)
    assert window.repository.embeddings.status("gated/model").current == 10  # the batch stored stays stored
    assert "Stored 10 of" in job.message.text() and "cancelled" in job.message.text()
    job.message.close()


def test_the_situation_is_validated_inline_and_scores_strategic_patterns(qtbot, window: QtMainWindow) -> None:
    preview = open_preview(window)
    preview.query.setText("yak rush anti air")
    preview.situation_box.setChecked(True)
    preview.phase.setCurrentIndex(preview.phase.findData("early"))
    preview.threat.setCurrentIndex(preview.threat.findData("high"))
    preview.enemy.setText("yak lots")
    shown(qtbot, preview, "yak rush anti air")
    assert preview.situation_error.isVisible() and "enemy" in preview.situation_error.text()
    assert preview.preview.request.situation is None
    preview.enemy.setText("yak 300")  # a share must be 0..255: parse_situation names the field
    shown(qtbot, preview, "yak rush anti air")
    qtbot.waitUntil(lambda: "enemy_composition_estimate" in preview.situation_error.text(), timeout=10_000)
    preview.enemy.setText("yak 50, rifle_infantry 50")
    preview.army.setText("rifle_infantry 60, aa_gun 40")
    qtbot.waitUntil(
        lambda: preview.preview.request.situation is not None and idle(preview),
        timeout=10_000,
    )
    assert not preview.situation_error.isVisible()
    situation = preview.preview.request.situation
    assert situation.enemy_composition_estimate == (("yak", 50), ("rifle_infantry", 50))
    assert any(text != "—" for text in column(preview, SITUATION))


def test_the_dock_starts_from_the_browser_filter(qtbot, window: QtMainWindow) -> None:
    for row in range(window.filters.module.list.count()):
        item = window.filters.module.list.item(row)
        if item.data(Qt.ItemDataRole.UserRole) == "td":
            item.setCheckState(Qt.CheckState.Checked)
    wait_for_browser(qtbot, window)
    preview = open_preview(window)
    assert preview.module.currentData() == "td"
    preview.query.setText("harvester")
    shown(qtbot, preview, "harvester", game_module="td")
    assert {hit.game_module for hit in preview.preview.result.hits} == {"td"}


def test_the_preview_follows_another_library(qtbot, window: QtMainWindow, tmp_path: Path) -> None:
    preview = open_preview(window)
    preview.query.setText(QUERY)
    shown(qtbot, preview)
    assert preview.table.rowCount() == 5
    other = tmp_path / "other.db"
    database = create_library(other)
    SkillRepository(database, Actor("x")).create(
        ai_skill(name="Flak around the ore trucks", description="Enemy aircraft keep raiding the ore trucks.")
    )
    database.close()

    assert window.open_library_file(other)
    assert preview.table.rowCount() == 0 and preview.prompt.toPlainText() == ""  # the old results are gone
    assert preview.retriever.repository is window.repository
    shown(qtbot, preview)
    assert [hit.name for hit in preview.preview.result.hits] == ["Flak around the ore trucks"]
    assert preview.lacking.isVisible()  # the new library has no vectors yet...
    assert "<b>Mode:</b> fts (asked for hybrid)" in preview.status.text()  # ...so keywords rank alone
    assert [preview.module.itemText(i) for i in range(preview.module.count())] == ["Any", "ra1"]


def test_the_detail_pane_says_whether_a_skill_has_a_vector(qtbot, window: QtMainWindow) -> None:
    skill_id = window.model.id_at(0)
    window.select_skill(skill_id)
    wait_for_browser(qtbot, window)  # the pane reads in the background
    assert f"{LOCAL_MODEL_ID}, 256 dimensions" in window.detail.toPlainText()

    skill = window.repository.get(skill_id)
    window.repository.update(replace(skill, description=skill.description + " Changed."))
    qtbot.waitUntil(lambda: "stale (description changed)" in window.detail.toPlainText(), timeout=10_000)

    fresh = window.repository.create(ai_skill(name="Aaa brand new skill"))
    window.select_skill(fresh.id)
    qtbot.waitUntil(lambda: window.detail.skill_id == fresh.id, timeout=10_000)
    wait_for_browser(qtbot, window)
    assert "Embedding\nnone\n" in window.detail.toPlainText()


def test_a_broken_vector_store_does_not_break_the_detail_pane(qtbot, window: QtMainWindow, monkeypatch) -> None:
    def fail(_skill_id: str) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(window.repository.embeddings, "info", fail)
    window.select_skill(window.model.id_at(0))
    wait_for_browser(qtbot, window)
    text = window.detail.toPlainText()
    assert "unknown (the vectors cannot be read)" in text and "Quality" in text


def test_skills_this_window_writes_get_their_vectors_soon_after(qtbot, window: QtMainWindow) -> None:
    ours = window.repository.create(ai_skill(name="Fresh skill written here"))
    theirs = window.repository.as_actor(Actor("someone-else")).create(ai_skill(name="Written by another writer"))
    qtbot.waitUntil(lambda: window.repository.embeddings.info(ours.id) is not None, timeout=10_000)
    info = window.repository.embeddings.info(ours.id)
    assert info is not None and info.model_id == LOCAL_MODEL_ID and info.current and info.label_current
    # Another writer's skills are its business (the CLI and agents embed their own writes).
    assert window.repository.embeddings.info(theirs.id) is None


def other_library(tmp_path: Path) -> Path:
    """A library of one skill about the query, without vectors."""
    path = tmp_path / "other.db"
    database = create_library(path)
    SkillRepository(database, Actor("x")).create(
        ai_skill(name="Flak around the ore trucks", description="Enemy aircraft keep raiding the ore trucks.")
    )
    database.close()
    return path


def test_a_search_running_when_another_library_opens_shows_nothing_of_the_old_one(
    qtbot, window: QtMainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    preview = open_preview(window)
    preview.query.setText(QUERY)
    shown(qtbot, preview)
    old = window.repository.database
    started, ended = threading.Event(), threading.Event()
    retrieve = Retriever.retrieve

    def slow_on_the_old_library(self: Retriever, *args: object, **kwargs: object) -> object:
        if self.repository.database is not old:
            return retrieve(self, *args, **kwargs)
        started.set()
        time.sleep(0.5)  # still running when the other library opens
        try:
            return retrieve(self, *args, **kwargs)
        finally:
            ended.set()

    monkeypatch.setattr(Retriever, "retrieve", slow_on_the_old_library)
    preview.k.setValue(4)  # a search of the old library
    qtbot.waitUntil(started.is_set, timeout=10_000)
    preview.toggle_action.trigger()  # hidden, the dock asks nothing of the next library until shown again
    assert window.open_library_file(other_library(tmp_path))
    assert ended.is_set()  # the old library closed only after the search on it had ended
    qtbot.waitUntil(ended.is_set, timeout=10_000)  # (were it still running, its answer would come...)
    qtbot.wait(200)  # (...by now)
    preview.toggle_action.trigger()
    assert preview.preview is None and preview.table.rowCount() == 0  # nothing of the old library...
    assert "failed" not in preview.status.text()  # ...not even its search failing as its library closed
    shown(qtbot, preview, k=4)
    assert [hit.name for hit in preview.preview.result.hits] == ["Flak around the ore trucks"]


def test_a_write_another_part_of_the_window_asked_for_runs_the_search_again(qtbot, window: QtMainWindow) -> None:
    preview = open_preview(window)
    preview.query.setText(QUERY)
    shown(qtbot, preview)
    first = preview.preview.result.hits[0]
    browser = object()  # the initiator of the write: the browser's Move to Trash, say

    def trash(repository: SkillRepository) -> None:
        repository.trash.delete(first.skill_id, message="moved to the trash from the browser")

    # A write that needs no vector: the preview's own embedding cannot be what runs the search.
    LibraryOp(window.state, window, trash, title="Move to Trash").run_in_background(initiator=browser)
    qtbot.waitUntil(
        lambda: first.skill_id not in preview.preview.result.ids and idle(preview),
        timeout=10_000,
    )
    assert preview.table.item(0, 1).text() != first.name


def test_a_measured_lift_shows_as_its_factor(qtbot, window: QtMainWindow) -> None:
    from skillstudio.store import RunSkillEntry, body_hash
    from skillstudio.store.paired_runs import LiftRecord, PairedRuns
    from skillstudio.store.runs import RunStore

    preview = open_preview(window)
    preview.query.setText(QUERY)
    shown(qtbot, preview)
    lift_column = [preview.table.horizontalHeaderItem(c).text() for c in range(preview.table.columnCount())].index(
        "Lift"
    )
    assert set(column(preview, lift_column)) == {"—"}  # nothing measured yet
    repository = window.repository
    first = preview.preview.result.hits[0].skill_id
    skill = repository.get(first)
    database = repository.database
    run = RunStore(database).create_run(
        skills=[RunSkillEntry(first, skill.game_module, body_hash(skill), "tentative")],
        opponent="IC Default Hard",
        games=20,
        seed=1,
        executor="inprocess",
        chunk_games=20,
        actor="t",
    )
    record = LiftRecord(run, first, body_hash(skill), "IC Default Hard", "1.1.0", 2, 2, 10, 6, 0, -0.45, -0.12)
    PairedRuns(database).write_lifts(run, [record])  # announced: the search runs again
    qtbot.waitUntil(lambda: idle(preview) and "0.880" in column(preview, lift_column), timeout=10_000)
