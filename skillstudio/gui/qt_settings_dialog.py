"""Settings: the studio policy in its layers (defaults, the user's file, this library's own).

What a key means and whether a value is valid is the core's (``store/settings.py``): this dialog
shows the three layers side by side, lets the user type a value into the user's or the
library's column (empty: not set there, the layer below applies), and asks :func:`resolve` after
every edit, so a bad value or an overlapping ladder is named by its key before anything is
saved. The user's layer is a small file written atomically; the library's is a write to the
library, run as a background operation that other panels hear about as a settings change.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import yaml
from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSignalBlocker, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from skillstudio.gui.browser_state import BrowserState
from skillstudio.gui.rich_text import escaped
from skillstudio.gui.workers import LatestOnly, LibraryOp, show_error
from skillstudio.model import Confidence
from skillstudio.model.validation import Issue, ValidationError
from skillstudio.store import ChangeKind, LibraryChange, SkillRepository
from skillstudio.store.settings import (
    DEFAULTS,
    SETTINGS,
    Values,
    load_user_values,
    parse_value,
    resolve,
    save_user_values,
    to_values,
    user_settings_path,
)
from skillstudio.store.types import JsonValue

KEY, DEFAULT, USER, LIBRARY, IN_FORCE = range(5)
HEADERS = ("Setting", "Default", "Yours (every library)", "This library", "In force")
LAYER_NAMES = {USER: "your settings", LIBRARY: "this library's settings"}
CHOICES = {  # keys whose values are a few words: edited with a list, not typed
    "headless_max_tier": ["", *(c.value for c in Confidence)],
    "decay_tier": ["", *(c.value for c in Confidence)],
    "demote_on_verify": ["", "true", "false"],
}
PROBLEM = QColor(255, 205, 205)


def value_text(value: JsonValue) -> str:
    """A value as it is typed back: ``0.75``, ``true``, ``null``, ``[a, b]``, ``IC Default Hard``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    return yaml.safe_dump(value, default_flow_style=True, width=10_000).strip().removesuffix("...").strip()


class _ChoiceDelegate(QStyledItemDelegate):
    """A list of the valid words for the keys that have a few (tiers, true/false)."""

    def createEditor(
        self, parent: QWidget, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QWidget:
        key = index.model().index(index.row(), KEY).data(Qt.ItemDataRole.UserRole)
        if key not in CHOICES:
            return super().createEditor(parent, option, index)
        editor = QComboBox(parent)
        editor.addItems(CHOICES[key])
        editor.setItemText(0, "(not set)")
        return editor

    def setEditorData(self, editor: QWidget, index: QModelIndex | QPersistentModelIndex) -> None:
        if isinstance(editor, QComboBox):
            text = index.data() or ""
            editor.setCurrentIndex(max(0, editor.findText(text)) if text else 0)
        else:
            super().setEditorData(editor, index)

    def setModelData(self, editor: QWidget, model, index: QModelIndex | QPersistentModelIndex) -> None:  # type: ignore[no-untyped-def]
        if isinstance(editor, QComboBox):
            model.setData(index, "" if editor.currentIndex() == 0 else editor.currentText())
        else:
            super().setModelData(editor, model, index)


class QtSettingsDialog(QDialog):
    """Edit the user's and the open library's settings; OK saves what changed."""

    def __init__(self, state: BrowserState, parent: QWidget | None = None, *, user_path: Path | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.user_path = user_path or user_settings_path()
        self.setWindowTitle("Settings")
        self.resize(980, 560)
        self._saved_user: Values = {}
        self._saved_library: Values | None = None  # None until the library's layer has been read
        self.problems: dict[tuple[int, str], str] = {}  # (column, key) -> what is wrong
        self._saving = False
        self.user_unreadable = ""  # why the user's file cannot be read at all (then it is left alone)

        layout = QVBoxLayout(self)
        intro = QLabel(
            "Promotion thresholds, the reference opponent and prune limits. <b>Yours</b> apply to "
            "every library you open (saved in "
            f"<code>{escaped(self.user_path)}</code>); <b>this library</b>'s override yours for everyone "
            "who opens it. Leave a cell empty to use the layer below. Hover a setting for what it means.",
            self,
        )
        intro.setWordWrap(True)
        intro.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(intro)

        self.table = QTableWidget(len(SETTINGS), len(HEADERS), self)
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.verticalHeader().setVisible(False)
        self.table.setItemDelegate(_ChoiceDelegate(self.table))
        self.table.setEditTriggers(
            QTableWidget.EditTrigger.DoubleClicked
            | QTableWidget.EditTrigger.EditKeyPressed
            | QTableWidget.EditTrigger.AnyKeyPressed
        )
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(KEY, QHeaderView.ResizeMode.ResizeToContents)
        for column in (DEFAULT, USER, LIBRARY):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            self.table.setColumnWidth(column, 150)
        header.setSectionResizeMode(IN_FORCE, QHeaderView.ResizeMode.Stretch)
        defaults = to_values(DEFAULTS)
        for row, setting in enumerate(SETTINGS):
            key_item = QTableWidgetItem(setting.key)
            key_item.setData(Qt.ItemDataRole.UserRole, setting.key)
            key_item.setToolTip(setting.help)
            self.table.setItem(row, KEY, key_item)
            self.table.setItem(row, DEFAULT, QTableWidgetItem(value_text(defaults[setting.key])))
            for column in (USER, LIBRARY):
                item = QTableWidgetItem("")
                item.setToolTip(f"{setting.help}. Empty: not set in {LAYER_NAMES[column]}.")
                self.table.setItem(row, column, item)
            self.table.setItem(row, IN_FORCE, QTableWidgetItem(""))
            for column in (KEY, DEFAULT, IN_FORCE):
                self._item(row, column).setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
        self.table.cellChanged.connect(self._on_cell_changed)
        layout.addWidget(self.table)

        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.message)

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.clear_user_button = QPushButton("Clear &Yours", self)
        self.clear_library_button = QPushButton("Clear This &Library's", self)
        self.clear_user_button.setToolTip("Leave every key to the defaults (and the library's)")
        self.clear_library_button.setToolTip("Drop every override this library stores")
        self.buttons.addButton(self.clear_user_button, QDialogButtonBox.ButtonRole.ResetRole)
        self.buttons.addButton(self.clear_library_button, QDialogButtonBox.ButtonRole.ResetRole)
        self.clear_user_button.clicked.connect(lambda: self._clear(USER))
        self.clear_library_button.clicked.connect(lambda: self._clear(LIBRARY))
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)

        self._loader = LatestOnly(self, self._show_library_values, self._library_unreadable)
        state.library_opened.connect(self._on_library_opened)
        state.library_changed.connect(self._on_library_change)
        self._load_user_values()
        self._reload_library()

    # --- reading the layers ------------------------------------------------------------------------

    @property
    def loading(self) -> bool:
        return self._loader.loading

    def _item(self, row: int, column: int) -> QTableWidgetItem:
        item = self.table.item(row, column)
        assert item is not None
        return item

    def _load_user_values(self) -> None:
        try:
            self._saved_user = load_user_values(self.user_path)
        except ValidationError:
            try:  # a file with a bad value opens unchecked: the check below names it, to correct
                self._saved_user = load_user_values(self.user_path, checked=False)
            except ValidationError as error:
                # Unreadable as a whole: never overwrite it from an empty column.
                self.user_unreadable = str(error)
        self._fill(USER, self._saved_user)

    def _reload_library(self) -> None:
        repository = self.state.repository
        self._saved_library = None
        self._fill(LIBRARY, {})
        if repository is None:
            self._update_buttons()
            return
        self._loader.request(repository.settings.values)
        self._update_buttons()

    def _show_library_values(self, values: Values) -> None:
        self._saved_library = dict(values)
        self._fill(LIBRARY, values)

    def _library_unreadable(self, error: BaseException) -> None:
        show_error(self, "Cannot read this library's settings", error)

    def _fill(self, column: int, values: Mapping[str, JsonValue]) -> None:
        with QSignalBlocker(self.table):  # a layer read is no edit to check cell by cell
            for row, setting in enumerate(SETTINGS):
                self._item(row, column).setText(value_text(values[setting.key]) if setting.key in values else "")
        self._check()

    # --- the user's edits ---------------------------------------------------------------------------

    def layer(self, column: int) -> Values:
        """What the cells of this column set (empty cells set nothing)."""
        values: Values = {}
        for row, setting in enumerate(SETTINGS):
            text = self._item(row, column).text().strip()
            if text:
                values[setting.key] = parse_value(text)
        return values

    def _on_cell_changed(self, _row: int, column: int) -> None:
        if column in (USER, LIBRARY):
            self._check()

    def _clear(self, column: int) -> None:
        self._fill(column, {})

    def _check(self) -> None:
        """Ask the core about each layer as it would be saved; mark what it refuses."""
        with QSignalBlocker(self.table):  # the marks below are no edits to check
            self._mark()

    def _mark(self) -> None:
        user, library = self.layer(USER), self.layer(LIBRARY)
        self.problems = {}
        in_force = DEFAULTS
        try:
            in_force = resolve(user, context="your settings")
        except ValidationError as error:
            self._note(USER, error.issues)
        if not self.problems and self._saved_library is not None:
            try:
                in_force = resolve(user, library, context="this library's settings")
            except ValidationError as error:
                self._note(LIBRARY, error.issues)
        forced = to_values(in_force)
        for row, setting in enumerate(SETTINGS):
            source = "this library" if setting.key in library else "yours" if setting.key in user else "default"
            self._item(row, IN_FORCE).setText(f"{value_text(forced[setting.key])}   ({source})")
            for column in (USER, LIBRARY):
                problem = self.problems.get((column, setting.key))
                item = self._item(row, column)
                item.setBackground(QBrush(PROBLEM) if problem else QBrush())
                item.setToolTip(problem or f"{setting.help}. Empty: not set in {LAYER_NAMES[column]}.")
        lines = [f"{LAYER_NAMES[column].capitalize()}, {key}: {why}" for (column, key), why in self.problems.items()]
        if self.user_unreadable:
            lines.insert(0, f"{self.user_unreadable}. Fix or remove the file to edit your settings here.")
        if lines:
            self.message.setText("<br>".join(escaped(line) for line in lines))
            self.message.setStyleSheet("color: #a00000")
        else:
            self.message.setText("")
            self.message.setStyleSheet("")
        self._update_buttons()

    def _note(self, column: int, issues: tuple[Issue, ...]) -> None:
        for issue in issues:
            self.problems[(column, issue.path or "(file)")] = issue.message

    def _update_buttons(self) -> None:
        library_ready = self._saved_library is not None and self.state.repository is not None
        idle = not self._saving  # a batch may run meanwhile: it applies the policy it recorded
        editable = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEditable
        with QSignalBlocker(self.table):  # flags are no edits to check
            for row in range(self.table.rowCount()):
                for column, ready in ((USER, not self.user_unreadable), (LIBRARY, library_ready)):
                    self._item(row, column).setFlags(editable if ready else Qt.ItemFlag.ItemIsSelectable)
        self.clear_user_button.setEnabled(not self.user_unreadable)
        self.clear_library_button.setEnabled(library_ready)
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setEnabled(not self.problems and idle)

    # --- saving -------------------------------------------------------------------------------------

    def save(self) -> None:
        """Write the layers that changed: the user's file at once, the library's in the background
        (the dialog closes when it is stored, and stays open with the error if it is refused)."""
        if self.problems:
            return
        user, library = self.layer(USER), self.layer(LIBRARY)
        if user != self._saved_user and not self.user_unreadable:
            try:
                save_user_values(user, self.user_path)
            except (ValidationError, OSError) as error:
                show_error(self, "Cannot save your settings", error)
                return
            self._saved_user = user
        if self._saved_library is None or library == self._saved_library or self.state.repository is None:
            self.accept()
            return

        def stored(_result: object) -> None:
            self._saving = False
            self._saved_library = library
            self.state.say("Saved this library's settings")
            self.accept()

        LibraryOp(
            self.state, self, lambda repository: repository.settings.save(library, below=user), title="Save settings"
        ).success(stored).failure(self._not_saved).run_in_background(initiator=self)
        self._saving = True
        self._update_buttons()

    def _not_saved(self, error: BaseException) -> None:
        self._saving = False
        self._update_buttons()
        show_error(self, "Cannot save this library's settings", error)

    # --- the library changes ------------------------------------------------------------------------

    def _on_library_opened(self, _repository: SkillRepository) -> None:
        self._loader.discard()
        self._reload_library()  # the library column is about the library now open

    def _on_library_change(self, change: LibraryChange) -> None:
        # Another user's (or the CLI's) change to the library's settings: show it, unless this
        # dialog made it or the user has edited the column since it was read.
        if not change.touches(ChangeKind.SETTINGS) or change.started_by(self):
            return
        if self._saved_library is not None and self.layer(LIBRARY) != self._saved_library:
            self.message.setText("This library's settings were changed elsewhere; OK will replace them with yours.")
            return
        self._reload_library()


__all__ = ["QtSettingsDialog", "value_text"]
