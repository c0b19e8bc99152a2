"""The history dialog and the diff view (pytest-qt, offscreen)."""

from __future__ import annotations

from dataclasses import replace

import pytest

pytest.importorskip("PySide6")
pytestmark = pytest.mark.gui

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QMessageBox  # noqa: E402

from skillstudio.curation import save_edit  # noqa: E402
from skillstudio.gui.browser_state import BrowserState  # noqa: E402
from skillstudio.gui.qt_diff_view import QtDiffView  # noqa: E402
from skillstudio.gui.qt_history import QtHistoryDialog  # noqa: E402
from skillstudio.store import Actor, Database, SkillRepository  # noqa: E402
from tests.factories import ai_skill, content_skill  # noqa: E402
from tests.gui.test_editor import answer_next_modal  # noqa: E402


@pytest.fixture
def edited(repository: SkillRepository):
    """A hand-authored skill renamed twice: revisions 1 (A), 2 (B), 3 (C)."""
    skill = repository.create(content_skill(name="Ambush A"))
    skill = repository.update(replace(skill, name="Ambush B"), message="second name")
    return repository.update(replace(skill, name="Ambush C", tags=("ambush", "bridge", "night")), message="third")


@pytest.fixture
def state(browser_state: BrowserState) -> BrowserState:
    return browser_state


def settled(qtbot, dialog: QtHistoryDialog) -> None:
    """Until what the dialog reads in the background is shown."""
    qtbot.waitUntil(lambda: not dialog.loading, timeout=10_000)


@pytest.fixture
def open_history(qtbot, state: BrowserState, owner):
    def make(skill_id: str) -> QtHistoryDialog:
        dialog = QtHistoryDialog(state, skill_id, owner)
        dialog.show()
        qtbot.waitExposed(dialog)
        settled(qtbot, dialog)
        return dialog

    return make


def test_history_lists_revisions_and_diffs_the_selected_one_against_its_predecessor(open_history, edited) -> None:
    dialog = open_history(edited.id)
    assert dialog.revision_numbers() == [1, 2, 3]
    rows = [dialog.list.topLevelItem(i) for i in range(dialog.list.topLevelItemCount())]
    assert [row.text(0) for row in rows] == ["3", "2", "1"]  # newest first
    assert [row.text(1) for row in rows] == ["edited", "edited", "created"]
    assert rows[0].text(2) == "tester" and rows[0].text(4) == "third"
    assert dialog.selected_numbers() == [3]
    changed = [(row.old, row.new) for row in dialog.diff.changed_rows()]
    assert ("name: Ambush B", "name: Ambush C") in changed
    assert any(new == "- night" for _old, new in changed)
    assert "Revision 2" in dialog.diff.title.text() and "Revision 3" in dialog.diff.title.text()


def test_two_selected_revisions_are_compared_and_the_unified_view_shows_them(qtbot, open_history, edited) -> None:
    dialog = open_history(edited.id)
    dialog.list.clearSelection()
    item_1 = dialog.list.topLevelItem(2)
    item_3 = dialog.list.topLevelItem(0)
    qtbot.mouseClick(dialog.list.viewport(), Qt.MouseButton.LeftButton, pos=dialog.list.visualItemRect(item_3).center())
    qtbot.mouseClick(
        dialog.list.viewport(),
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.ControlModifier,
        pos=dialog.list.visualItemRect(item_1).center(),
    )
    assert dialog.selected_numbers() == [1, 3]
    assert ("name: Ambush A", "name: Ambush C") in [(r.old, r.new) for r in dialog.diff.changed_rows()]
    qtbot.mouseClick(dialog.diff.unified_button, Qt.MouseButton.LeftButton)
    assert dialog.diff.is_unified() and dialog.diff.stack.currentWidget() is dialog.diff.text
    text = dialog.diff.text.toPlainText()
    assert "-name: Ambush A" in text and "+name: Ambush C" in text
    assert not dialog.revert_button.isEnabled()  # two selected: nothing to revert to


def test_the_first_revision_shows_as_wholly_added(open_history, edited) -> None:
    dialog = open_history(edited.id)
    dialog.select_revisions([1])
    rows = dialog.diff.rows()
    assert rows and all(row.kind == "insert" for row in rows)
    assert any(row.new == "name: Ambush A" for row in rows)


def test_revert_asks_then_makes_a_new_revision(qtbot, open_history, edited, repository: SkillRepository) -> None:
    dialog = open_history(edited.id)
    dialog.select_revisions([3])
    assert not dialog.revert_button.isEnabled()  # the current revision
    dialog.select_revisions([1])
    assert dialog.revert_button.isEnabled()
    answer = answer_next_modal(lambda box: box.button(QMessageBox.StandardButton.Cancel).click())
    qtbot.mouseClick(dialog.revert_button, Qt.MouseButton.LeftButton)
    answer.check()
    assert len(repository.history.revisions(edited.id)) == 3
    answer = answer_next_modal(lambda box: box.button(QMessageBox.StandardButton.Yes).click())
    with qtbot.waitSignal(dialog.reverted):
        qtbot.mouseClick(dialog.revert_button, Qt.MouseButton.LeftButton)
    answer.check()
    settled(qtbot, dialog)
    revisions = repository.history.revisions(edited.id)
    assert [r.number for r in revisions] == [1, 2, 3, 4]
    assert revisions[-1].message == "revert to revision 1"
    assert repository.get(edited.id).name == "Ambush A"
    assert dialog.revision_numbers() == [1, 2, 3, 4] and dialog.selected_numbers() == [4]
    assert ("name: Ambush C", "name: Ambush A") in [(r.old, r.new) for r in dialog.diff.changed_rows()]


def test_compare_with_the_original_of_a_refinement(qtbot, open_history, repository: SkillRepository) -> None:
    original = repository.create(ai_skill(name="Raw find"))
    refinement = save_edit(repository, original, replace(original, name="Refined find")).skill
    repository.update(replace(repository.get(original.id), description="The original moved on."))
    dialog = open_history(refinement.id)
    assert dialog.original_button.isEnabled()
    dialog.original_button.click()
    settled(qtbot, dialog)
    changed = [(r.old, r.new) for r in dialog.diff.changed_rows()]
    assert ("name: Raw find", "name: Refined find") in changed
    assert any(old and "The original moved on." in old for old, _new in changed)
    assert "as it is now" in dialog.diff.title.text()

    repository.trash.delete(original.id)  # in the trash: compared as last stored
    dialog.original_button.click()
    settled(qtbot, dialog)
    assert "in the trash" in dialog.diff.title.text()
    repository.trash.empty()  # gone for good
    dialog.original_button.click()
    settled(qtbot, dialog)
    assert dialog.diff.stack.currentWidget() is dialog.diff.message
    assert "no longer in this library" in dialog.diff.message.text()


def test_a_skill_that_is_not_a_refinement_has_no_original(open_history, edited) -> None:
    dialog = open_history(edited.id)
    assert not dialog.original_button.isEnabled()


def test_history_of_a_trashed_skill_cannot_revert(open_history, edited, repository: SkillRepository) -> None:
    repository.trash.delete(edited.id)
    dialog = open_history(edited.id)
    assert dialog.revision_numbers() == [1, 2, 3, 4]
    dialog.select_revisions([2])
    assert not dialog.revert_button.isEnabled() and "trash" in dialog.revert_button.toolTip()


def test_the_diff_view_folds_unchanged_lines(qtbot) -> None:
    view = QtDiffView()
    qtbot.addWidget(view)
    old = content_skill(name="One")
    view.set_skills(old, replace(old, name="Two"), old_label="old", new_label="new")
    assert view.changed_count() == 1 and view.summary.text() == "1 line differs"
    folded = view.model.shown_rows()
    assert any(isinstance(entry, int) for entry in folded)  # "⋯ n unchanged lines"
    view.changes_only.setChecked(False)
    assert len(view.model.shown_rows()) == len(view.rows())
    view.show_message("Nothing here.")
    assert view.rows() == [] and not view.unified_button.isEnabled()


def test_the_history_follows_changes_saved_elsewhere(qtbot, open_history, edited, repository: SkillRepository) -> None:
    dialog = open_history(edited.id)
    repository.update(replace(repository.get(edited.id), name="Ambush D"), message="from another window")
    qtbot.waitUntil(lambda: dialog.revision_numbers() == [1, 2, 3, 4], timeout=10_000)
    assert dialog.selected_numbers() == [4]
    assert ("name: Ambush C", "name: Ambush D") in [(r.old, r.new) for r in dialog.diff.changed_rows()]


def test_the_history_is_read_in_the_background(qtbot, state: BrowserState, edited, owner) -> None:
    dialog = QtHistoryDialog(state, edited.id, owner)
    assert dialog.loading and dialog.revision_numbers() == []  # the window answers meanwhile
    assert not dialog.revert_button.isEnabled() and not dialog.original_button.isEnabled()
    settled(qtbot, dialog)
    assert dialog.revision_numbers() == [1, 2, 3] and dialog.selected_numbers() == [3]


def test_a_revision_chosen_before_the_history_arrives_is_selected_when_it_does(
    qtbot, state: BrowserState, edited, owner
) -> None:
    # The audit log opens the dialog on the revision an entry wrote, before it has read anything.
    dialog = QtHistoryDialog(state, edited.id, owner)
    dialog.select_revisions([2])
    settled(qtbot, dialog)
    assert dialog.selected_numbers() == [2]
    assert ("name: Ambush A", "name: Ambush B") in [(r.old, r.new) for r in dialog.diff.changed_rows()]


def test_the_history_keeps_the_revision_looked_at_when_someone_else_writes(
    qtbot, open_history, edited, repository: SkillRepository
) -> None:
    dialog = open_history(edited.id)
    dialog.select_revisions([2])
    repository.update(replace(repository.get(edited.id), name="Ambush D"), message="from another window")
    qtbot.waitUntil(lambda: dialog.revision_numbers() == [1, 2, 3, 4], timeout=10_000)
    assert dialog.selected_numbers() == [2]


def test_the_history_closes_when_another_library_opens(
    qtbot, open_history, edited, state: BrowserState, tmp_path
) -> None:
    dialog = open_history(edited.id)
    assert dialog.isVisible()
    with Database(tmp_path / "other.db", create=True) as other:
        state.set_repository(SkillRepository(other, Actor("tester")))
        assert not dialog.isVisible()


def test_a_dialog_given_only_a_repository_still_follows_the_library(
    qtbot, edited, repository: SkillRepository, owner
) -> None:
    # The editor and the audit log open it with their repository until they hold the state.
    dialog = QtHistoryDialog(repository, edited.id, owner)
    settled(qtbot, dialog)
    repository.update(replace(repository.get(edited.id), name="Ambush D"))
    qtbot.waitUntil(lambda: dialog.revision_numbers() == [1, 2, 3, 4], timeout=10_000)
