"""The skill editor, driven through its widgets as a user would (pytest-qt, offscreen)."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytestmark = pytest.mark.gui

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QTextCursor  # noqa: E402
from PySide6.QtWidgets import QAbstractItemView, QApplication, QLabel, QLineEdit, QMessageBox  # noqa: E402

from skillstudio.curation.form import FormState  # noqa: E402
from skillstudio.gui.browser_state import BrowserState  # noqa: E402
from skillstudio.gui.editor import QtSkillEditor  # noqa: E402
from skillstudio.gui.editor.body_encounter import EncounterPatternEditor  # noqa: E402
from skillstudio.gui.editor.body_example import VerifiedExampleEditor  # noqa: E402
from skillstudio.gui.editor.body_instructions import InstructionsEditor  # noqa: E402
from skillstudio.gui.editor.body_strategic import StrategicPatternEditor  # noqa: E402
from skillstudio.gui.editor.conflict import QtConflictDialog  # noqa: E402
from skillstudio.model import BodyKind, Confidence, Domain, Quality, Source, SourceKind  # noqa: E402
from skillstudio.packages.importer import Incoming, apply_plan, plan_import  # noqa: E402
from skillstudio.packages.prune import apply_prune, plan_prune  # noqa: E402
from skillstudio.store import Actor, Database, SkillExtras, SkillRepository  # noqa: E402
from tests.factories import ai_skill, content_skill, example_skill, instructions_skill  # noqa: E402
from tests.gui.conftest import answer_next_modal  # noqa: E402
from tests.outside import engine_writes  # noqa: E402

CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier


@pytest.fixture
def browser_state(qtbot, repository: SkillRepository):
    state = BrowserState(repository)
    yield state
    state.close()


@pytest.fixture
def open_editor(qtbot, browser_state: BrowserState, repository: SkillRepository):
    def make(skill=None, *, store: bool = True) -> QtSkillEditor:
        stored = repository.create(skill) if (skill is not None and store) else skill
        editor = QtSkillEditor(browser_state, stored)
        qtbot.addWidget(editor, before_close_func=_discard_on_teardown)
        editor.show()
        qtbot.waitExposed(editor)
        editor.activateWindow()
        qtbot.waitUntil(lambda: QApplication.activeWindow() is editor, timeout=10_000)
        return editor

    return make


def _discard_on_teardown(editor: QtSkillEditor) -> None:
    # A failed test can leave unsaved edits: closing must not wait for an answer then.
    editor.ask_unsaved = lambda: QMessageBox.StandardButton.Discard


def retype(qtbot, widget: QLineEdit, text: str) -> None:
    widget.setFocus()
    widget.selectAll()
    qtbot.keyClick(widget, Qt.Key.Key_Backspace)
    qtbot.keyClicks(widget, text)


def edit_cell(qtbot, table, row: int, column: int, text: str) -> None:
    """Type into a table cell through its editor, as a user does (F2, type, Return)."""
    table.setFocus()
    table.setCurrentCell(row, column)
    table.editItem(table.item(row, column))
    [editor] = [child for child in table.viewport().findChildren(QLineEdit) if child.isVisible()]
    editor.selectAll()
    qtbot.keyClicks(editor, text)
    qtbot.keyClick(editor, Qt.Key.Key_Return)  # the delegate commits on the next event loop turn
    qtbot.waitUntil(lambda: table.state() != QAbstractItemView.State.EditingState, timeout=10_000)


def _import(repository: SkillRepository, skills, version: str, mode="merge") -> None:
    """Skills imported from a Workshop package, as File › Import does."""
    origin = f"workshop:someone/pack@{version}"
    incoming = [Incoming(f"skills/{s.id}.json", s, SkillExtras(origin=origin)) for s in skills]
    apply_plan(repository, plan_import(repository, incoming, origin=origin, source="pack", mode=mode, signer=None))


def problems(editor: QtSkillEditor) -> list[str]:
    return [editor.problems.item(i).text() for i in range(editor.problems.count())]


# --- saving: the HumanRefined rule -----------------------------------------------------------------


def test_saving_an_llm_discovered_skill_creates_a_refinement_and_leaves_the_original(
    qtbot, open_editor, repository: SkillRepository
) -> None:
    editor = open_editor(ai_skill(name="Rocket screen"))
    original = editor.skill
    assert editor.banner.isVisible() and "human-refined" in editor.banner.text()
    retype(qtbot, editor.name_edit, "Rocket screen, tighter")
    qtbot.keyClicks(editor.message_edit, "shorter reasoning")
    saved, refined = [], []
    editor.saved.connect(saved.append)
    editor.refined.connect(lambda *args: refined.append(args))
    qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
    [new_id] = saved
    assert refined == [(original.id, new_id)]
    assert new_id != original.id
    refinement = repository.get(new_id)
    assert refinement.provenance.source == Source.human_refined(original.id)
    assert refinement.name == "Rocket screen, tighter" and refinement.created_by == "tester"
    assert repository.get(original.id) == original  # untouched
    assert repository.refinements_of(original.id) == [new_id]
    assert repository.history.revisions(new_id)[0].message == "shorter reasoning"
    # The editor now edits the refinement: a second save updates it in place.
    assert editor.skill.id == new_id and not editor.is_dirty()
    assert "refinement of" in editor.banner.text()
    retype(qtbot, editor.name_edit, "Rocket screen v3")
    assert editor.save()
    assert repository.get(new_id).name == "Rocket screen v3"
    assert repository.refinements_of(original.id) == [new_id]


def test_editing_a_hand_authored_skill_updates_it_in_place(qtbot, open_editor, repository: SkillRepository) -> None:
    editor = open_editor(content_skill())
    before = editor.skill
    assert not editor.banner.isVisible()
    editor.description_edit.setFocus()
    editor.description_edit.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(editor.description_edit, " Clearer.")
    editor.flush()
    assert editor.is_dirty() and editor.windowTitle().endswith("— SkillStudio")
    qtbot.keyClick(editor, Qt.Key.Key_S, CTRL)  # Ctrl+S
    stored = repository.get(before.id)
    assert stored.description.endswith("Clearer.") and stored.version == before.version + 1
    assert stored.provenance.source.kind is SourceKind.HAND_AUTHORED
    assert [r.action for r in repository.history.revisions(before.id)] == ["create", "update"]
    assert repository.count() == 1 and not editor.is_dirty()


# --- undo / redo ----------------------------------------------------------------------------------


def test_undo_and_redo_a_name_edit_with_the_keyboard(qtbot, open_editor) -> None:
    editor = open_editor(content_skill(name="Bridge ambush"))
    editor.name_edit.setFocus()
    editor.name_edit.end(False)
    qtbot.keyClicks(editor.name_edit, " at dawn")
    editor.flush()
    assert editor.undo_stack.count() == 1  # consecutive typing is one step
    qtbot.keyClick(editor.name_edit, Qt.Key.Key_Z, CTRL)
    assert editor.name_edit.text() == "Bridge ambush" and not editor.is_dirty()
    qtbot.keyClick(editor.name_edit, Qt.Key.Key_Z, CTRL | SHIFT)
    assert editor.name_edit.text() == "Bridge ambush at dawn" and editor.is_dirty()
    qtbot.keyClick(editor.name_edit, Qt.Key.Key_Z, CTRL)
    qtbot.keyClick(editor.name_edit, Qt.Key.Key_Y, CTRL)  # Ctrl+Y redoes too
    assert editor.name_edit.text() == "Bridge ambush at dawn"
    # Leaving the field ends the run of typing: the next edit is its own step.
    editor.tags_edit.setFocus()
    editor.name_edit.setFocus()
    qtbot.keyClicks(editor.name_edit, "!")
    editor.flush()
    assert editor.undo_stack.count() == 2


def test_undo_and_redo_a_table_edit(qtbot, open_editor) -> None:
    editor = open_editor(ai_skill())
    body = editor.body_editor()
    assert isinstance(body, StrategicPatternEditor)
    editor.tabs.setCurrentWidget(editor.body_page)
    body.tabs.setCurrentIndex(3)
    table = body.bindings.table
    assert body.bindings.texts() == [["aggression", "40"], ["tech_priority_armor", "70"]]
    edit_cell(qtbot, table, 0, 1, "85")
    editor.flush()
    assert body.bindings.values()[0] == ["aggression", 85]
    qtbot.mouseClick(body.bindings.add_button, Qt.MouseButton.LeftButton)
    editor.flush()
    assert body.bindings.row_count() == 3 and body.bindings.texts()[2] == ["expansion_priority", "50"]
    assert editor.undo_stack.count() == 2
    editor.undo()
    assert body.bindings.row_count() == 2
    editor.undo()
    assert body.bindings.values()[0] == ["aggression", 40] and not editor.is_dirty()
    editor.redo()
    assert body.bindings.values()[0] == ["aggression", 85]
    # Ctrl+Z while a cell is still being edited undoes that typing.
    table.setCurrentCell(1, 1)
    table.editItem(table.item(1, 1))
    [cell] = [child for child in table.viewport().findChildren(QLineEdit) if child.isVisible()]
    cell.selectAll()
    qtbot.keyClicks(cell, "99")
    qtbot.keyClick(cell, Qt.Key.Key_Z, CTRL)
    assert table.state() != QAbstractItemView.State.EditingState
    assert body.bindings.values()[1] == ["tech_priority_armor", 70]
    assert body.bindings.values()[0] == ["aggression", 85]


# --- validation -----------------------------------------------------------------------------------


def test_an_invalid_priority_blocks_saving_until_fixed(qtbot, open_editor, repository: SkillRepository) -> None:
    editor = open_editor(ai_skill())
    body = editor.body_editor()
    editor.tabs.setCurrentWidget(editor.body_page)
    body.tabs.setCurrentIndex(1)
    edit_cell(qtbot, body.targets.table, 0, 1, "14")
    qtbot.waitUntil(lambda: not editor.save_button.isEnabled(), timeout=10_000)  # live, debounced
    assert problems(editor) == ["body.plan.priority_targets[0].priority: 14 is outside 1..10"]
    assert body.targets.table.item(0, 1).toolTip() == "14 is outside 1..10"
    # Ctrl+S is refused with the message; nothing is written.
    qtbot.keyClick(editor, Qt.Key.Key_S, CTRL)
    assert "Not saved" in editor.status.text() and len(repository.history.revisions(editor.skill.id)) == 1
    # Clicking the problem goes to the cell.
    editor.tabs.setCurrentIndex(0)
    body.tabs.setCurrentIndex(0)
    item = editor.problems.item(0)
    qtbot.mouseClick(
        editor.problems.viewport(), Qt.MouseButton.LeftButton, pos=editor.problems.visualItemRect(item).center()
    )
    assert editor.tabs.currentWidget() is editor.body_page and body.tabs.currentIndex() == 1
    assert (body.targets.table.currentRow(), body.targets.table.currentColumn()) == (0, 1)
    edit_cell(qtbot, body.targets.table, 0, 1, "9")
    editor.flush()
    assert editor.save_button.isEnabled() and problems(editor) == []
    assert editor.save()
    assert repository.get(editor.skill.id).body.plan.priority_targets[0].priority == 9


def test_an_empty_name_blocks_saving(qtbot, open_editor) -> None:
    editor = open_editor(content_skill())
    retype(qtbot, editor.name_edit, "   ")
    editor.flush()
    assert problems(editor) == ["name: must not be empty"]
    assert not editor.save_button.isEnabled() and editor.name_edit.property("invalid")
    assert editor.tabs.tabIcon(0).isNull() is False
    qtbot.keyClicks(editor.name_edit, "Named again")
    editor.flush()
    assert editor.save_button.isEnabled() and not editor.name_edit.property("invalid")


def test_a_bad_scene_value_names_its_parameter(qtbot, open_editor) -> None:
    editor = open_editor(content_skill())
    body = editor.body_editor()
    assert isinstance(body, EncounterPatternEditor) and body.scene_count() == 2
    editor.tabs.setCurrentWidget(editor.body_page)
    body.select_scene(1)
    assert body.values.texts() == [["pickup_zone", "lz_alpha"], ["transport_type", "chinook"]]
    edit_cell(qtbot, body.values.table, 0, 1, "{center: [51, 24")
    editor.flush()
    [problem] = problems(editor)
    assert problem.startswith("body.scene_composition[1].values.pickup_zone: is not valid YAML")
    edit_cell(qtbot, body.values.table, 0, 1, "{center: [51, 24], radius: 3}")
    editor.flush()
    assert problems(editor) == []
    assert editor.session.document()["body"]["EncounterPattern"]["scene_composition"][1]["values"]["pickup_zone"] == {
        "center": [51, 24],
        "radius": 3,
    }


# --- raw YAML -------------------------------------------------------------------------------------


def test_raw_yaml_applies_to_the_form_and_reports_bad_yaml(qtbot, open_editor) -> None:
    editor = open_editor(instructions_skill(name="Wave checklist"))
    editor.tabs.setCurrentWidget(editor.raw_page)
    text = editor.raw_edit.toPlainText()
    assert "name: Wave checklist" in text and "Instructions:" in text
    editor.raw_edit.setPlainText(text.replace("name: Wave checklist", "name: Wave checklist (raw)"))
    qtbot.mouseClick(editor.raw_apply_button, Qt.MouseButton.LeftButton)
    assert editor.name_edit.text() == "Wave checklist (raw)" and editor.is_dirty()
    editor.undo()
    assert editor.name_edit.text() == "Wave checklist"
    assert editor.raw_edit.toPlainText() == text  # the raw tab follows the form
    editor.raw_edit.setPlainText("name: [unclosed\n")
    assert not editor.apply_raw()
    assert "Not applied" in editor.raw_status.text() and "line 2" in editor.raw_status.text()
    assert editor.name_edit.text() == "Wave checklist"
    editor.raw_edit.setPlainText(text.replace("domain: content_generation", "domain: nonsense"))
    editor.raw_edit.setFocus()
    qtbot.keyClick(editor.raw_edit, Qt.Key.Key_Return, CTRL)
    assert (
        "domain: &#x27;nonsense&#x27;" in editor.raw_status.text() or "domain: 'nonsense'" in editor.raw_status.text()
    )


# --- conflicts ------------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [content_skill, ai_skill], ids=["in-place", "refinement"])
def test_a_concurrent_change_shows_a_conflict_and_overwrites_nothing(
    qtbot, open_editor, repository: SkillRepository, database: Database, make
) -> None:
    editor = open_editor(make(name="Ours at first"))
    skill_id = editor.skill.id
    with engine_writes(database) as other:  # another program: no change is announced
        other.execute("UPDATE skills SET name = 'Theirs' WHERE id = ?", (skill_id,))
    retype(qtbot, editor.name_edit, "Mine")
    seen: dict[str, object] = {}

    def keep_editing(dialog) -> None:
        assert isinstance(dialog, QtConflictDialog)
        seen["rows"] = [(row.old, row.new) for row in dialog.diff.changed_rows()]
        dialog.keep_button.click()

    answer = answer_next_modal(keep_editing)
    assert not editor.save()
    answer.check()
    assert ("name: Theirs", "name: Mine") in seen["rows"]
    assert repository.get(skill_id).name == "Theirs" and repository.count() == 1
    assert editor.name_edit.text() == "Mine" and "Not saved" in editor.status.text()

    answer = answer_next_modal(lambda dialog: dialog.reload_button.click())
    assert not editor.save()
    answer.check()
    assert editor.name_edit.text() == "Theirs" and not editor.is_dirty()
    editor.undo()  # brings my edit back, now on top of their version
    assert editor.name_edit.text() == "Mine"
    assert editor.save()
    assert repository.get(editor.skill.id).name == "Mine"


# --- new skills -----------------------------------------------------------------------------------


def _fill_strategic(qtbot, editor: QtSkillEditor) -> None:
    pass  # the default plan is complete


def _fill_encounter(qtbot, editor: QtSkillEditor) -> None:
    body = editor.body_editor()
    assert isinstance(body, EncounterPatternEditor)
    body.new_template.setCurrentText("defend_position")
    qtbot.mouseClick(body.add_scene_button, Qt.MouseButton.LeftButton)
    edit_cell(qtbot, body.values.table, 0, 1, "radar_hill")


def _fill_example(qtbot, editor: QtSkillEditor) -> None:
    body = editor.body_editor()
    assert isinstance(body, VerifiedExampleEditor)
    body.prompt.setFocus()
    qtbot.keyClicks(body.prompt, "Enemy gunboats raid the shore.")
    body.response.setFocus()
    qtbot.keyClicks(body.response, '{"build_focus": "Naval"}')


def _fill_instructions(qtbot, editor: QtSkillEditor) -> None:
    body = editor.body_editor()
    assert isinstance(body, InstructionsEditor)
    body.markdown.setFocus()
    qtbot.keyClicks(body.markdown, "# Waves")
    qtbot.keyClick(body.markdown, Qt.Key.Key_Return)
    qtbot.keyClick(body.markdown, Qt.Key.Key_Return)
    qtbot.keyClicks(body.markdown, "Keep the first wave small.")
    qtbot.keyClicks(body.tools, "Read, Grep")
    body.update_preview()
    assert "Keep the first wave small." in body.preview.toPlainText()


@pytest.mark.parametrize(
    ("domain", "kind", "fill"),
    [
        (Domain.AI_STRATEGY, BodyKind.STRATEGIC_PATTERN, _fill_strategic),
        (Domain.CONTENT_GENERATION, BodyKind.ENCOUNTER_PATTERN, _fill_encounter),
        (Domain.AI_STRATEGY, BodyKind.VERIFIED_EXAMPLE, _fill_example),
        (Domain.CONTENT_GENERATION, BodyKind.INSTRUCTIONS, _fill_instructions),
    ],
)
def test_a_new_skill_of_each_body_type_is_saved_hand_authored(
    qtbot, open_editor, repository: SkillRepository, domain: Domain, kind: BodyKind, fill
) -> None:
    editor = open_editor(None)
    assert editor.is_new and not editor.history_button.isEnabled()
    assert problems(editor) == ["name: must not be empty"]
    qtbot.keyClicks(editor.name_edit, f"New {kind.value}")
    editor.domain_combo.set_value(domain)
    editor.kind_combo.setCurrentIndex(editor.kind_combo.findData(kind.value))
    assert editor.body_editor().kind is kind
    editor.tabs.setCurrentWidget(editor.body_page)
    fill(qtbot, editor)
    editor.flush()
    assert problems(editor) == []
    with qtbot.waitSignal(editor.saved) as blocker:
        assert editor.save()
    stored = repository.get(blocker.args[0])
    assert stored.body_kind is kind and stored.domain is domain
    assert stored.source_kind is SourceKind.HAND_AUTHORED and stored.created_by == "tester"
    assert not editor.is_new and not editor.kind_combo.isEnabled()
    if kind is BodyKind.ENCOUNTER_PATTERN:
        assert stored.body.scene_composition[0].template == "defend_position"
        assert stored.body.scene_composition[0].values["position"] == "radar_hill"
    if kind is BodyKind.INSTRUCTIONS:
        assert stored.body.tools == ("Read", "Grep")


def test_the_domain_decides_which_body_types_a_new_skill_may_have(qtbot, open_editor) -> None:
    editor = open_editor(None)
    assert editor.current_kind() is BodyKind.STRATEGIC_PATTERN
    editor.domain_combo.set_value(Domain.CONTENT_GENERATION)
    assert editor.current_kind() is BodyKind.ENCOUNTER_PATTERN
    model = editor.kind_combo.model()
    assert not model.item(editor.kind_combo.findData("strategic_pattern")).isEnabled()
    assert model.item(editor.kind_combo.findData("instructions")).isEnabled()
    editor.flush()
    editor.undo()
    assert editor.domain_combo.value() == "ai_strategy" and editor.current_kind() is BodyKind.STRATEGIC_PATTERN


def test_a_stored_skill_keeps_its_body_type_and_only_fitting_domains(open_editor) -> None:
    editor = open_editor(ai_skill())
    assert not editor.kind_combo.isEnabled()
    model = editor.domain_combo.model()
    assert not model.item(editor.domain_combo.findData("content_generation")).isEnabled()
    example = open_editor(example_skill())
    assert example.domain_combo.model().item(example.domain_combo.findData("content_generation")).isEnabled()


# --- pickers and completion -------------------------------------------------------------------------


def test_composable_with_is_picked_by_name_and_stored_as_ids(qtbot, open_editor, repository: SkillRepository) -> None:
    partner = repository.create(content_skill(name="Timed extraction under fire"))
    editor = open_editor(content_skill(name="Bridge ambush"))
    picker = editor.composable
    picker.search.setFocus()
    qtbot.keyClicks(picker.search, "extract")
    qtbot.waitUntil(lambda: picker.completer_popup().isVisible(), timeout=10_000)
    popup = picker.completer_popup()
    assert popup.model().rowCount() == 1 and "Timed extraction under fire" in popup.model().index(0, 0).data()
    qtbot.keyClick(popup, Qt.Key.Key_Down)
    qtbot.keyClick(popup, Qt.Key.Key_Return)
    assert picker.ids() == [partner.id] and picker.list.item(0).text() == "Timed extraction under fire"
    assert editor.save()
    assert repository.get(editor.skill.id).composable_with == (partner.id,)


def test_tags_complete_from_the_library(qtbot, open_editor, repository: SkillRepository) -> None:
    repository.create(content_skill(tags=("anti-air", "winter")))
    editor = open_editor(content_skill(tags=()))
    editor.tags_edit.setFocus()
    qtbot.keyClicks(editor.tags_edit, "win")
    popup = editor.tags_edit.completer_popup()
    qtbot.waitUntil(popup.isVisible, timeout=10_000)
    qtbot.keyClick(popup, Qt.Key.Key_Down)
    qtbot.keyClick(popup, Qt.Key.Key_Return)
    assert editor.tags_edit.tokens() == ["winter"]


# --- closing --------------------------------------------------------------------------------------


def test_closing_with_unsaved_changes_asks_first(qtbot, open_editor, repository: SkillRepository) -> None:
    editor = open_editor(content_skill(name="Before"))
    retype(qtbot, editor.name_edit, "After")
    answer = answer_next_modal(lambda box: box.button(QMessageBox.StandardButton.Cancel).click())
    qtbot.keyClick(editor.name_edit, Qt.Key.Key_Escape)
    answer.check()
    assert editor.isVisible()
    answer = answer_next_modal(lambda box: box.button(QMessageBox.StandardButton.Save).click())
    qtbot.mouseClick(editor.close_button, Qt.MouseButton.LeftButton)
    answer.check()
    assert not editor.isVisible() and repository.get(editor.skill.id).name == "After"


def test_discarding_closes_without_saving(qtbot, open_editor, repository: SkillRepository) -> None:
    editor = open_editor(content_skill(name="Before"))
    retype(qtbot, editor.name_edit, "After")
    answer = answer_next_modal(lambda box: box.button(QMessageBox.StandardButton.Discard).click())
    editor.close()
    answer.check()
    assert not editor.isVisible() and repository.get(editor.skill.id).name == "Before"


def test_the_close_prompt_names_the_skill_even_with_its_name_emptied(qtbot, open_editor) -> None:
    asked: list[str] = []

    def cancel(box) -> None:
        asked.append(box.text())
        box.button(QMessageBox.StandardButton.Cancel).click()

    editor = open_editor(content_skill(name="Bridge ambush"))
    retype(qtbot, editor.name_edit, "")  # emptied in the form: still the stored skill
    answer = answer_next_modal(cancel)
    editor.close()
    answer.check()
    new = open_editor()
    new.description_edit.setPlainText("Scout first.")  # a new skill, never named
    answer = answer_next_modal(cancel)
    new.close()
    answer.check()
    assert asked == ["Save your changes to “Bridge ambush” before closing?", "Save the new skill before closing?"]


def test_an_unchanged_editor_closes_without_asking(qtbot, open_editor) -> None:
    editor = open_editor(ai_skill())
    qtbot.keyClick(editor.name_edit, Qt.Key.Key_Escape)
    assert not editor.isVisible() and QApplication.activeModalWidget() is None


def test_history_opens_from_the_editor(qtbot, open_editor) -> None:
    editor = open_editor(content_skill())
    seen = []

    def read_history(dialog) -> None:
        qtbot.waitUntil(lambda: not dialog.loading, timeout=5_000)  # it reads in the background
        seen.append(dialog.revision_numbers())
        dialog.close()

    answer = answer_next_modal(read_history)
    qtbot.mouseClick(editor.history_button, Qt.MouseButton.LeftButton)
    answer.check()
    assert seen == [[1]]


# --- keyboard access --------------------------------------------------------------------------------


def _mnemonics(window) -> list[tuple[str, str]]:
    """(letter, text) of every visible mnemonic in the window: labels, buttons, tabs, boxes."""
    from PySide6.QtWidgets import QAbstractButton, QGroupBox, QLabel, QTabBar

    found = []

    def letter(text: str) -> str | None:
        cleaned = text.replace("&&", "")
        index = cleaned.find("&")
        return cleaned[index + 1].lower() if 0 <= index < len(cleaned) - 1 else None

    for widget in window.findChildren(QLabel) + window.findChildren(QAbstractButton) + window.findChildren(QGroupBox):
        if widget.isVisible():
            text = widget.title() if isinstance(widget, QGroupBox) else widget.text()
            if isinstance(widget, QLabel) and widget.buddy() is None:
                continue
            if (key := letter(text)) is not None:
                found.append((key, text))
    for bar in window.findChildren(QTabBar):
        if bar.isVisible():
            found += [(key, bar.tabText(i)) for i in range(bar.count()) if (key := letter(bar.tabText(i)))]
    return found


@pytest.mark.parametrize("make", [ai_skill, content_skill, example_skill, instructions_skill])
def test_every_page_has_distinct_mnemonics(qtbot, open_editor, make) -> None:
    editor = open_editor(make())
    body = editor.body_editor()
    pages = [(0, None), (2, None)] + [(1, i) for i in range(body.tabs.count() if hasattr(body, "tabs") else 1)]
    for outer, inner in pages:
        editor.tabs.setCurrentIndex(outer)
        if inner is not None and hasattr(body, "tabs"):
            body.tabs.setCurrentIndex(inner)
        qtbot.wait(1)
        found = _mnemonics(editor)
        letters = [key for key, _text in found]
        duplicates = {key: [t for k, t in found if k == key] for key in letters if letters.count(key) > 1}
        assert not duplicates, f"page {outer}/{inner}: {duplicates}"
        assert len(found) >= 8


# --- the library changing underneath ----------------------------------------------------------------


def test_a_change_saved_elsewhere_reloads_a_clean_editor_and_warns_a_dirty_one(
    qtbot, open_editor, repository: SkillRepository
) -> None:
    from dataclasses import replace

    editor = open_editor(content_skill(name="First"))
    repository.update(replace(repository.get(editor.skill.id), name="Second"))  # e.g. another window
    qtbot.waitUntil(lambda: editor.name_edit.text() == "Second", timeout=10_000)
    assert not editor.is_dirty() and editor.skill.version == repository.get(editor.skill.id).version
    retype(qtbot, editor.name_edit, "Mine")
    editor.flush()
    repository.update(replace(repository.get(editor.skill.id), name="Third"))
    qtbot.waitUntil(editor.notice.isVisible, timeout=10_000)
    assert "changed this skill" in editor.notice.text() and editor.name_edit.text() == "Mine"


def test_a_store_error_is_shown_as_a_sentence(qtbot, open_editor, repository: SkillRepository) -> None:
    partner = repository.create(content_skill(name="Soon gone"))
    editor = open_editor(content_skill(name="Keeper"))
    editor.composable.add_id(partner.id)
    repository.trash.delete(partner.id)  # the partner goes to the trash before we save
    texts = []
    answer = answer_next_modal(
        lambda box: (texts.append(box.text()), box.button(QMessageBox.StandardButton.Ok).click())
    )
    assert not editor.save()
    answer.check()
    assert "no skill with id" in texts[0] and "Traceback" not in texts[0]
    assert "Not saved" in editor.status.text()


# --- following the library (BrowserState.library_changed) --------------------------------------------


def _stale_skill():
    old = "2020-01-01T00:00:00.000Z"
    return ai_skill(created_at=old, quality=Quality(1, 0.1, None, Confidence.TENTATIVE, old))


def test_a_skill_pruned_while_open_cannot_be_saved(qtbot, open_editor, repository: SkillRepository) -> None:
    editor = open_editor(_stale_skill())
    skill_id = editor.skill.id
    retype(qtbot, editor.name_edit, "Mine")
    assert apply_prune(repository.as_actor(Actor("mira")), plan_prune(repository)) == 1
    qtbot.waitUntil(editor.notice.isVisible, timeout=10_000)
    assert "pruned (moved to the trash) by mira" in editor.notice.text()
    assert not editor.save()
    assert "Not saved: this skill was pruned" in editor.status.text()
    assert repository.count() == 0 and [entry.skill_id for entry in repository.trash.entries()] == [skill_id]
    assert editor.name_edit.text() == "Mine" and editor.is_dirty()  # the edit is kept


def test_a_skill_an_import_moved_to_the_trash_cannot_be_saved(qtbot, open_editor, repository: SkillRepository) -> None:
    kept, dropped = ai_skill(name="Kept"), ai_skill(name="Dropped")
    _import(repository, [kept, dropped], "1.0.0")
    editor = open_editor(repository.get(dropped.id), store=False)
    other = open_editor(repository.get(kept.id), store=False)
    _import(repository, [kept], "2.0.0", mode="replace")  # version 2 of the package no longer has it
    qtbot.waitUntil(editor.notice.isVisible, timeout=10_000)
    assert "moved to the trash by an import" in editor.notice.text()
    retype(qtbot, editor.name_edit, "Mine")
    assert not editor.save() and "Not saved" in editor.status.text()
    assert not other.notice.isVisible()


def test_a_restored_skill_can_be_saved_again(qtbot, open_editor, repository: SkillRepository) -> None:
    editor = open_editor(content_skill(name="Before"))
    repository.trash.delete(editor.skill.id)
    qtbot.waitUntil(editor.notice.isVisible, timeout=10_000)
    repository.trash.restore(editor.skill.id)
    qtbot.waitUntil(lambda: not editor.notice.isVisible(), timeout=10_000)
    retype(qtbot, editor.name_edit, "After")
    assert editor.save() and repository.get(editor.skill.id).name == "After"


def test_a_save_goes_out_as_the_user_named_now(
    qtbot, open_editor, browser_state: BrowserState, repository: SkillRepository
) -> None:
    editor = open_editor(ai_skill(name="Theirs"))
    new = open_editor(None)
    browser_state.set_repository(repository.as_actor(Actor("mira")))  # Edit › Your Name
    retype(qtbot, editor.name_edit, "Refined by mira")
    assert editor.save()
    refinement = repository.get(editor.skill.id)
    assert refinement.created_by == "mira" and repository.history.revisions(refinement.id)[-1].author == "mira"
    assert "mira" in [label.text() for label in new.provenance_page.findChildren(QLabel)]  # "Created by"


def test_opening_another_library_closes_a_clean_editor_and_detaches_a_dirty_one(
    qtbot, open_editor, browser_state: BrowserState, repository: SkillRepository, tmp_path
) -> None:
    clean = open_editor(content_skill(name="Clean"))
    dirty = open_editor(content_skill(name="Dirty"))
    retype(qtbot, dirty.name_edit, "Edited")
    with Database(tmp_path / "other.db", create=True) as other:
        browser_state.set_repository(SkillRepository(other, Actor("tester")))
        assert not clean.isVisible()
        assert dirty.isVisible() and "library is closed" in dirty.notice.text()
        assert not dirty.save() and "Not saved" in dirty.status.text()
        assert SkillRepository(other).count() == 0
    assert repository.get(dirty.skill.id).name == "Dirty"


def test_the_editor_installs_nothing_on_the_application(qtbot, open_editor, monkeypatch) -> None:
    installed = []
    original = QApplication.installEventFilter
    monkeypatch.setattr(QApplication, "installEventFilter", lambda app, f: (installed.append(f), original(app, f))[1])
    editor = open_editor(content_skill(name="Bridge ambush"))
    editor.hide()
    editor.show()  # the old editor re-installed an application-wide filter on every show
    qtbot.waitExposed(editor)
    editor.name_edit.setFocus()
    editor.name_edit.end(False)
    qtbot.keyClicks(editor.name_edit, "!")
    qtbot.keyClick(editor.name_edit, Qt.Key.Key_Z, CTRL)  # still the editor's undo, not the field's
    assert editor.name_edit.text() == "Bridge ambush" and installed == []


def test_undo_keys_reach_the_editor_from_a_field_made_after_opening(qtbot, open_editor) -> None:
    editor = open_editor(None)
    editor.domain_combo.set_value(Domain.CONTENT_GENERATION)
    editor.kind_combo.setCurrentIndex(editor.kind_combo.findData(BodyKind.INSTRUCTIONS.value))
    editor.tabs.setCurrentWidget(editor.body_page)
    body = editor.body_editor()
    assert isinstance(body, InstructionsEditor)  # made now, long after the editor opened
    body.markdown.setFocus()
    qtbot.keyClicks(body.markdown, "# Waves")
    qtbot.keyClick(body.markdown, Qt.Key.Key_Z, CTRL)  # its own undo is off: only the editor's can undo
    assert body.markdown.text() == ""
    assert editor.current_kind() is BodyKind.INSTRUCTIONS


# --- the pages show the session's form exactly -------------------------------------------------------


@pytest.mark.parametrize("make", [ai_skill, content_skill, example_skill, instructions_skill])
def test_an_opened_skill_is_not_dirty(open_editor, make) -> None:
    editor = open_editor(make())
    assert editor.form() == FormState.of(editor.skill) and not editor.is_dirty()


def test_every_sample_skill_reads_back_from_the_pages_unchanged(qtbot, library_copy) -> None:
    # The pages show the core's form and read it back; any loss would open skills as edited.
    with Database(library_copy) as database:
        repository = SkillRepository(database, Actor("tester"))
        state = BrowserState(repository)
        for skill_id in repository.query().ids:
            editor = QtSkillEditor(state, skill_id)
            try:
                assert editor.form() == editor.session.saved_form, skill_id
            finally:
                editor.deleteLater()
        state.close()
