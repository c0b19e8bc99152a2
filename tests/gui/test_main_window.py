"""The main window as a whole: its layout, start-up, menus, keys and file dialogs (pytest-qt, offscreen)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytestmark = pytest.mark.gui

from PySide6.QtCore import QSettings, Qt  # noqa: E402
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox  # noqa: E402

from skillstudio import __version__  # noqa: E402
from skillstudio.gui.qt_main_window import QtMainWindow  # noqa: E402
from skillstudio.library import create_library, load_sample  # noqa: E402
from skillstudio.model import Provenance, Source  # noqa: E402
from skillstudio.store import Actor, Database, SkillRepository  # noqa: E402
from tests.factories import ai_skill  # noqa: E402
from tests.gui.conftest import answer_next_modal, wait_for_browser  # noqa: E402

# The offscreen screen is 800x800: a size that fits it is restored as it was.
SIZE = (790, 760)


def settings_at(path: Path) -> QSettings:
    return QSettings(str(path), QSettings.Format.IniFormat)


@pytest.fixture
def open_window(qtbot, tmp_path: Path):
    """Opens a main window on a library with the settings file every window of the test shares."""
    opened: list[QtMainWindow] = []

    def make(library: Path) -> QtMainWindow:
        window = QtMainWindow(SkillRepository(Database(library), Actor("mira")), settings_at(tmp_path / "settings.ini"))
        qtbot.addWidget(window)
        window.show()
        wait_for_browser(qtbot, window)  # the docks follow the first rows on screen
        opened.append(window)
        return window

    yield make
    for window in opened:
        if window.isVisible():
            window.close()
        window.state.require_repository().database.close()


@pytest.fixture
def window(open_window, library_copy: Path) -> QtMainWindow:
    return open_window(library_copy)


def column(title: str) -> int:
    from skillstudio.gui.skill_table_model import COLUMNS

    return [c.title for c in COLUMNS].index(title)


def layout_of(window: QtMainWindow) -> dict:
    header = window.table.horizontalHeader()
    return {
        "dashboard": window.dashboard.height(),
        "splitter": window.splitter.sizes(),
        "hidden": [c for c in range(header.count()) if header.isSectionHidden(c)],
        "name width": header.sectionSize(0),
        "order": [header.logicalIndex(v) for v in range(header.count())],
    }


# --- 1. the layout is the user's ------------------------------------------------------------------------


def test_the_layout_is_kept_when_another_library_opens_and_restored_at_the_next_start(
    qtbot, open_window, library_copy: Path, tmp_path: Path
) -> None:
    window = open_window(library_copy)
    assert window.dashboard is not None and window.retrieval_preview is not None
    window.resize(*SIZE)
    qtbot.waitUntil(lambda: window.size().toTuple() == SIZE)
    # The user's layout: a small dashboard, a wide table, a column hidden, one wider, one moved.
    window.resizeDocks([window.dashboard], [150], Qt.Orientation.Vertical)
    window.splitter.setSizes([210, 400, 170])
    window.column_actions[column("Rating")].trigger()
    window.table.setColumnWidth(0, 333)
    window.table.horizontalHeader().moveSection(column("Uses"), 1)
    qtbot.waitUntil(lambda: window.dashboard.height() == 150)
    mine = layout_of(window)
    assert mine["hidden"] == [column("Rating")] and mine["name width"] == 333

    other = tmp_path / "other.db"
    create_library(other, sample=True).close()
    assert window.open_library_file(other)
    wait_for_browser(qtbot, window)
    qtbot.waitUntil(lambda: not window.dashboard.loading, timeout=10_000)
    assert layout_of(window) == mine  # opening a library changes nothing of it

    window.close()
    again = open_window(other)  # the next start, with the same settings
    assert again.size().toTuple() == SIZE
    qtbot.waitUntil(lambda: layout_of(again) == mine)  # the restored dock is laid out as it was
    assert not again.column_actions[column("Rating")].isChecked()


def test_the_retrieval_preview_comes_back_open_and_as_wide_as_it_was(qtbot, library_copy: Path, tmp_path: Path) -> None:
    def start() -> QtMainWindow:
        window = QtMainWindow(SkillRepository(Database(library_copy), Actor("mira")), settings_at(tmp_path / "s.ini"))
        qtbot.addWidget(window)
        window.resize(1600, 1000)  # wider than the offscreen screen, which a restored geometry fits into
        window.show()
        wait_for_browser(qtbot, window)
        return window

    window = start()
    preview = window.retrieval_preview
    assert not preview.isVisible()  # hidden until asked for, then given a useful width
    preview.toggle_action.trigger()
    qtbot.waitUntil(lambda: preview.width() >= 600)
    window.resizeDocks([preview], [500], Qt.Orientation.Horizontal)  # the user narrows it
    qtbot.waitUntil(lambda: preview.width() == 500)
    window.close()
    window.repository.database.close()

    again = start()
    qtbot.waitUntil(lambda: again.retrieval_preview.isVisible() and again.retrieval_preview.width() == 500)
    qtbot.wait(100)  # a first-show sizing would land on the next turns of the event loop
    assert again.retrieval_preview.width() == 500
    again.close()
    again.repository.database.close()


def test_by_default_the_browser_keeps_most_of_the_height(window: QtMainWindow) -> None:
    from skillstudio.gui.qt_main_window import DASHBOARD_MIN_HEIGHT

    assert window.dashboard.height() <= max(window.height() // 4, DASHBOARD_MIN_HEIGHT) + 1
    assert window.table.height() > window.dashboard.height()


def test_the_docks_come_after_the_browser_shows(qtbot, library_copy: Path, tmp_path: Path) -> None:
    import sys

    window = QtMainWindow(SkillRepository(Database(library_copy), Actor("mira")), settings_at(tmp_path / "s.ini"))
    qtbot.addWidget(window)
    assert window.dashboard is None and window.retrieval_preview is None  # nothing of them before it shows
    built = []
    window.ready.connect(lambda: built.append(sys.modules.get("pyqtgraph") is not None))
    window.show()
    wait_for_browser(qtbot, window)
    assert built == [True] and window.dashboard is not None and window.retrieval_preview is not None
    assert [a.text() for a in window.menuBar().actions()][-2:] == ["Ve&rify", "&Help"]
    window.close()
    window.repository.database.close()


# --- 6. columns -----------------------------------------------------------------------------------------


def test_the_user_chooses_the_columns_from_the_header_or_the_view_menu(qtbot, window: QtMainWindow) -> None:
    verifications = column("Verifications")
    assert window.columns_menu in [a.menu() for a in window.view_menu.actions()]
    header = window.table.horizontalHeader()
    menus = []
    answer = answer_next_popup(qtbot, menus)
    header.customContextMenuRequested.emit(header.rect().center())  # a right click on the header
    answer()
    assert menus == [window.columns_menu]
    action = window.column_actions[verifications]
    assert action.text() == "Verifications" and action.isChecked()
    action.trigger()
    assert window.table.isColumnHidden(verifications)
    assert not window.column_actions[0].isEnabled()  # the name always shows
    window.show_all_columns()
    assert not window.table.isColumnHidden(verifications) and action.isChecked()


def answer_next_popup(qtbot, seen: list):
    """Records and closes the popup menu a right click opens."""

    def wait() -> None:
        qtbot.waitUntil(lambda: QApplication.activePopupWidget() is not None, timeout=5_000)
        popup = QApplication.activePopupWidget()
        seen.append(popup)
        popup.close()

    return wait


def test_the_key_columns_fit_at_1280x800(qtbot, library_copy: Path, tmp_path: Path) -> None:
    window = QtMainWindow(SkillRepository(Database(library_copy), Actor("mira")), settings_at(tmp_path / "s.ini"))
    qtbot.addWidget(window)
    window.resize(1152, 720)  # a 1280x800 laptop: the window takes 90% of the screen (_fitting_size)
    window.show()
    wait_for_browser(qtbot, window)
    last_key = column("Verifications")
    right_edge = window.table.columnViewportPosition(last_key) + window.table.columnWidth(last_key)
    assert right_edge <= window.table.viewport().width()
    window.close()
    window.repository.database.close()


# --- 2. the filter lists follow the library ------------------------------------------------------------


def modules(window: QtMainWindow) -> list[str]:
    panel = window.filters.module.list
    return [panel.item(row).text() for row in range(panel.count())]


def test_the_filter_lists_follow_an_import_and_another_library(qtbot, window: QtMainWindow, tmp_path: Path) -> None:
    from skillstudio.gui.qt_packages import QtImportDialog
    from skillstudio.packages.icpkg import PackageMeta, export_package

    assert modules(window) == ["ra1", "td"]
    package = tmp_path / "ra3.icpkg"
    incoming = ai_skill(name="From a package", provenance=Provenance(Source.llm_discovered(), "ra3", "0.5.0", None))
    package.write_bytes(export_package([incoming], PackageMeta("ra3-pack", "kessler", "1.0.0")))
    dialog = QtImportDialog(window.state, window, path=package)
    dialog.show()
    dialog.preview()
    qtbot.waitUntil(lambda: not dialog.reader.loading, timeout=10_000)
    dialog.apply()  # as File › Import does
    wait_for_browser(qtbot, window)
    assert modules(window) == ["ra1", "ra3", "td"]

    other = tmp_path / "other.db"
    with Database(other, create=True) as database:
        SkillRepository(database, Actor("mira")).create(ai_skill(provenance=Provenance(Source.llm_discovered(), "ra2")))
    window.open_library_file(other)
    wait_for_browser(qtbot, window)
    assert modules(window) == ["ra2"]


# --- 3. saving keeps the filters ---------------------------------------------------------------------


def test_saving_keeps_the_filters_and_says_when_the_saved_skill_is_outside_them(qtbot, window: QtMainWindow) -> None:
    from tests.gui.test_browser import check

    check(qtbot, window, window.filters.source, "llm_discovered")
    window.table.selectRow(0)
    original = window.current_id()
    window.edit_current()
    editor = window._editors[0]
    qtbot.keyClicks(editor.description_edit, " Refined by hand.")
    editor.flush()
    assert editor.save()  # an LLM-discovered skill: the save is a new human-refined skill
    refinement = editor.skill.id
    assert refinement != original
    wait_for_browser(qtbot, window)
    assert window.filters.source.checked() == ["llm_discovered"]  # still filtered as the user chose
    assert window.model.row_of(refinement) is None
    assert window.detail.skill_id == refinement and window.state.current == refinement  # shown, alone
    assert "does not match the filters" in window.statusBar().currentMessage()
    editor.ask_unsaved = lambda: QMessageBox.StandardButton.Discard
    editor.close()


def test_a_saved_skill_the_filters_let_in_is_selected(qtbot, window: QtMainWindow) -> None:
    window.table.selectRow(2)
    window.edit_current()
    editor = window._editors[0]
    qtbot.keyClicks(editor.description_edit, " Again.")
    editor.flush()
    assert editor.save()
    wait_for_browser(qtbot, window)
    assert window.current_id() == editor.skill.id
    editor.close()


# --- 4. keyboard and mouse ---------------------------------------------------------------------------


def test_ctrl_h_opens_the_history_inside_the_editor(qtbot, window: QtMainWindow) -> None:
    window.table.selectRow(0)
    window.edit_current()
    editor = window._editors[0]
    editor.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is editor, timeout=10_000)
    seen = []
    answer = answer_next_modal(lambda dialog: (seen.append(type(dialog).__name__), dialog.close()))
    qtbot.keyClick(editor.name_edit, Qt.Key.Key_H, Qt.KeyboardModifier.ControlModifier)
    answer.check()
    assert seen == ["QtHistoryDialog"]
    editor.close()


def test_clicking_a_filter_label_toggles_its_box(qtbot, window: QtMainWindow) -> None:
    facet = window.filters.module
    item = facet.list.item(modules(window).index("td"))
    label = facet.list.visualItemRect(item)
    where = label.center()  # on the text, right of the box
    qtbot.mouseClick(facet.list.viewport(), Qt.MouseButton.LeftButton, pos=where)
    assert item.checkState() == Qt.CheckState.Checked
    assert window.state.query.game_modules == ("td",)
    wait_for_browser(qtbot, window)
    qtbot.mouseClick(facet.list.viewport(), Qt.MouseButton.LeftButton, pos=where)
    assert item.checkState() == Qt.CheckState.Unchecked and window.state.query.game_modules == ()
    wait_for_browser(qtbot, window)


def test_the_shortcut_list_is_read_from_the_menus(window: QtMainWindow) -> None:
    dialog = window.show_shortcuts()
    rows = {
        (dialog.table.item(r, 0).text(), dialog.table.item(r, 1).text()): dialog.table.item(r, 2).text()
        for r in range(dialog.table.rowCount())
    }
    assert rows[("File", "Open Library")] == "Ctrl+O"
    assert rows[("View", "Skill History")] == "Ctrl+H"
    assert rows[("Verify", "Verify Selection")] == "Ctrl+Shift+B"  # the dashboard's, once it is built
    assert rows[("Edit", "Move to Trash")] == "Del (in the skill table)"
    assert rows[("Help", "Keyboard Shortcuts")] == "F1"
    assert ("View › Columns", "Show All Columns") not in rows  # no key, no row
    dialog.close()
    # Read from the actions when it opens: a new action is listed, a changed key shows as changed.
    window.view_menu.addAction("Zoom").setShortcut("Ctrl+=")
    window.history_action.setShortcut("Ctrl+Shift+H")
    dialog = window.show_shortcuts()
    rows = {(dialog.table.item(r, 1).text()): dialog.table.item(r, 2).text() for r in range(dialog.table.rowCount())}
    assert rows["Zoom"] == "Ctrl+=" and rows["Skill History"] == "Ctrl+Shift+H"
    dialog.close()


def test_the_documentation_is_read_from_the_bundled_readme(window: QtMainWindow) -> None:
    dialog = window.show_documentation()
    assert dialog is not None
    assert dialog.browser.source().isLocalFile() and dialog.browser.source().fileName() == "README.md"
    assert "SkillStudio" in dialog.browser.toPlainText()
    dialog.browser.setSource(dialog.browser.source().resolved("docs/architecture.md"))  # a link in it
    assert "Architecture" in dialog.browser.toPlainText()
    dialog.close()


def test_about_names_the_versions_and_the_library(window: QtMainWindow, library_copy: Path) -> None:
    import sqlite3

    from PySide6.QtCore import qVersion

    texts = []
    answer = answer_next_modal(lambda box: (texts.append(box.text()), box.close()))
    window.about_action.trigger()
    answer.check()
    [text] = texts
    for expected in (__version__, str(library_copy), f"SQLite {sqlite3.sqlite_version}", f"Qt {qVersion()}", "PySide6"):
        assert expected in text


# --- 5. the trash prompt ----------------------------------------------------------------------------------


def test_the_trash_prompt_says_it_for_one_skill_and_them_for_several(
    qtbot, window: QtMainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = []
    monkeypatch.setattr(
        QMessageBox, "question", lambda _parent, _title, text: asked.append(text) or QMessageBox.StandardButton.No
    )
    window.table.selectRow(0)
    window.trash_selection()
    window.table.selectAll()
    window.trash_selection()
    count = len(load_sample())
    assert asked == [
        "Move this skill to the trash? (Edit › Undo brings it back.)",
        f"Move these {count} skills to the trash? (Edit › Undo brings them back.)",
    ]


# --- 8, 9. Open Recent and the Open dialog ------------------------------------------------------------


def test_open_recent_greys_out_a_library_whose_file_is_gone(qtbot, window: QtMainWindow, tmp_path: Path) -> None:
    gone = tmp_path / "gone.db"
    create_library(gone).close()
    assert window.open_library_file(gone)
    wait_for_browser(qtbot, window)
    assert window.open_library_file(window.recent_libraries()[1])  # back to the first library
    wait_for_browser(qtbot, window)
    gone.unlink()
    window.recent_menu.aboutToShow.emit()  # the menu is read afresh each time it opens
    entries = {a.text().split("—")[-1].strip(): a for a in window.recent_menu.actions() if not a.isSeparator()}
    assert not entries[str(gone)].isEnabled() and "gone" in entries[str(gone)].toolTip()
    assert entries[str(window.state.library_path)].isEnabled()
    entries[str(gone)].trigger()  # a disabled entry does nothing, and fails on nothing
    assert window.state.library_path != gone
    forget = next(a for a in window.recent_menu.actions() if a.text().startswith("&Forget"))
    forget.trigger()
    assert str(gone) not in window.recent_libraries()


def test_the_open_dialog_starts_in_the_library_folder(qtbot, window: QtMainWindow, library_copy: Path) -> None:
    folders = []

    def look(dialog: QFileDialog) -> None:
        folders.append(Path(dialog.directory().absolutePath()))
        dialog.reject()

    answer = answer_next_modal(look)
    window.open_library_dialog()
    answer.check()
    assert folders == [library_copy.parent]


def test_edit_settings_opens_the_settings_on_the_open_library(qtbot, window: QtMainWindow) -> None:
    from skillstudio.gui.qt_settings_dialog import LIBRARY, QtSettingsDialog

    assert window.settings_action.shortcut().toString()  # Ctrl+, where the platform names none
    window.settings_action.trigger()
    dialog = next(w for w in window.findChildren(QtSettingsDialog) if w.isVisible())
    qtbot.waitUntil(lambda: not dialog.loading and dialog._saved_library is not None)
    item = dialog.table.item(0, LIBRARY)
    assert item is not None and item.flags() & item.flags().ItemIsEditable
    dialog.close()
