"""The Settings dialog: the three layers side by side, checked by the core before anything is saved."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QDialog, QDialogButtonBox

from skillstudio.gui.qt_settings_dialog import IN_FORCE, LIBRARY, USER, QtSettingsDialog, value_text
from skillstudio.store import Database, SkillRepository
from skillstudio.store.settings import SETTINGS, load_user_values, save_user_values

ROW = {setting.key: row for row, setting in enumerate(SETTINGS)}


@pytest.fixture
def user_file(tmp_path: Path) -> Path:
    return tmp_path / "config" / "settings.yaml"


def open_dialog(qtbot, state, user_file: Path) -> QtSettingsDialog:
    dialog = QtSettingsDialog(state, user_path=user_file)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: not dialog.loading and dialog._saved_library is not None)
    return dialog


def cell(dialog: QtSettingsDialog, key: str, column: int) -> str:
    item = dialog.table.item(ROW[key], column)
    assert item is not None
    return item.text()


def type_into(dialog: QtSettingsDialog, key: str, column: int, text: str) -> None:
    item = dialog.table.item(ROW[key], column)
    assert item is not None
    item.setText(text)  # what the editor commits


def ok_enabled(dialog: QtSettingsDialog) -> bool:
    return dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).isEnabled()


def test_the_layers_show_side_by_side_with_where_each_value_comes_from(
    qtbot, browser_state, repository: SkillRepository, user_file: Path
) -> None:
    save_user_values({"thresholds.proven": 0.8}, user_file)
    repository.settings.save({"headless_max_tier": "established"}, below={"thresholds.proven": 0.8})
    dialog = open_dialog(qtbot, browser_state, user_file)
    assert cell(dialog, "thresholds.proven", USER) == "0.8" and cell(dialog, "thresholds.proven", LIBRARY) == ""
    assert cell(dialog, "thresholds.proven", IN_FORCE).startswith("0.8") and "(yours)" in cell(
        dialog, "thresholds.proven", IN_FORCE
    )
    assert cell(dialog, "headless_max_tier", LIBRARY) == "established"
    assert "(this library)" in cell(dialog, "headless_max_tier", IN_FORCE)
    assert "(default)" in cell(dialog, "thresholds.candidate", IN_FORCE)
    assert value_text(None) == "null" and value_text(["a b", "c"]) == "[a b, c]" and value_text(True) == "true"


def test_a_bad_value_is_named_by_its_key_and_nothing_is_saved(
    qtbot, browser_state, repository: SkillRepository, user_file: Path
) -> None:
    dialog = open_dialog(qtbot, browser_state, user_file)
    type_into(dialog, "thresholds.proven", USER, "1.4")
    assert not ok_enabled(dialog)
    assert "thresholds.proven" in dialog.message.text() and "not a rate between 0 and 1" in dialog.message.text()
    assert (USER, "thresholds.proven") in dialog.problems
    dialog.save()  # Enter in the table, say: refused while a problem stands
    assert not user_file.exists() and dialog.result() != QDialog.DialogCode.Accepted
    type_into(dialog, "thresholds.proven", USER, "")
    # A ladder whose bars overlap is refused too, in the layer that makes them overlap.
    type_into(dialog, "thresholds.candidate", LIBRARY, "0.9")
    assert not ok_enabled(dialog) and any(column == LIBRARY for column, _key in dialog.problems)
    assert "higher tier needs a higher bar" in dialog.message.text()
    type_into(dialog, "thresholds.candidate", LIBRARY, "")
    assert ok_enabled(dialog) and dialog.message.text() == ""
    assert repository.settings.values() == {}


def test_ok_saves_the_users_file_and_the_librarys_overrides(
    qtbot, browser_state, repository: SkillRepository, user_file: Path
) -> None:
    dialog = open_dialog(qtbot, browser_state, user_file)
    type_into(dialog, "prune.stale_days", USER, "30")
    type_into(dialog, "reference_opponent", LIBRARY, "IC Default Brutal")
    type_into(dialog, "demote_on_verify", LIBRARY, "true")
    changes = []
    browser_state.library_changed.connect(changes.append)
    dialog.save()
    qtbot.waitUntil(lambda: dialog.result() == QDialog.DialogCode.Accepted)
    assert load_user_values(user_file) == {"prune.stale_days": 30}
    assert repository.settings.values() == {"reference_opponent": "IC Default Brutal", "demote_on_verify": True}
    [entry] = repository.history.audit(limit=1)
    assert entry.action == "library.settings"
    qtbot.waitUntil(lambda: bool(changes))
    assert changes[-1].started_by(dialog)


def test_the_library_column_follows_the_open_library_and_changes_made_elsewhere(
    qtbot, browser_state, repository: SkillRepository, user_file: Path, tmp_path: Path
) -> None:
    dialog = open_dialog(qtbot, browser_state, user_file)
    other = SkillRepository(Database(tmp_path / "other.db", create=True), repository.actor)
    other.settings.save({"thresholds.proven_games": 25}, below={})
    browser_state.set_repository(other)
    qtbot.waitUntil(lambda: cell(dialog, "thresholds.proven_games", LIBRARY) == "25")
    # Another process (the CLI) changes this library's settings: the unedited column follows.
    SkillRepository(other.database, repository.actor).settings.save({"thresholds.proven_games": 40}, below={})
    qtbot.waitUntil(lambda: cell(dialog, "thresholds.proven_games", LIBRARY) == "40", timeout=5000)
    other.database.close()


def test_an_unreadable_settings_file_is_never_overwritten(qtbot, browser_state, user_file: Path) -> None:
    user_file.parent.mkdir(parents=True)
    user_file.write_text("thresholds: [unclosed\n", encoding="utf-8")
    dialog = open_dialog(qtbot, browser_state, user_file)
    assert dialog.user_unreadable and "Fix or remove the file" in dialog.message.text()
    item = dialog.table.item(ROW["thresholds.proven"], USER)
    assert item is not None and not item.flags() & item.flags().ItemIsEditable
    dialog.save()
    assert user_file.read_text(encoding="utf-8") == "thresholds: [unclosed\n"


def test_a_file_with_a_bad_value_opens_to_be_corrected(qtbot, browser_state, user_file: Path) -> None:
    user_file.parent.mkdir(parents=True)
    user_file.write_text("thresholds:\n  proven: lots\n", encoding="utf-8")
    dialog = open_dialog(qtbot, browser_state, user_file)
    assert cell(dialog, "thresholds.proven", USER) == "lots" and not ok_enabled(dialog)
    type_into(dialog, "thresholds.proven", USER, "0.72")
    dialog.save()
    assert load_user_values(user_file) == {"thresholds.proven": 0.72}
