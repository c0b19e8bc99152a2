"""The skill editor: a form for every field of a skill, live validation, undo, raw YAML.

How it works:

* The form's **state** is plain data capturing what the widgets show (invalid input too). It is
  turned into a skill **document** by laying the editable fields over the document of the skill
  as it was read (id, provenance source, quality... stay as they were), and validated with the
  core's :func:`~skillstudio.model.parse_skill`, 150 ms after the last keystroke. Its issues,
  with their field paths, are listed; clicking one goes to the field. Save is disabled while
  there are any.
* **Undo** keeps snapshots: each committed edit pushes the state before and after; undo and
  redo put a snapshot back into the form. Consecutive typing in one field is one command.
* **Saving** goes through :mod:`skillstudio.curation` (the HumanRefined rule lives there): an
  LLM-discovered or Workshop skill is never rewritten; saving creates a refinement, and the
  editor then edits that. A conflict (someone else saved first) shows both versions and never
  overwrites.
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QIcon, QKeyEvent, QKeySequence, QShortcut, QUndoStack
from PySide6.QtWidgets import (
    QAbstractItemDelegate,
    QAbstractItemView,
    QApplication,
    QComboBox,
    QDialog,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QStyle,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from skillstudio.curation import new_skill, save_edit
from skillstudio.curation.edits import edit_becomes_refinement
from skillstudio.gui.editor.body_base import BodyEditor
from skillstudio.gui.editor.body_encounter import EncounterPatternEditor
from skillstudio.gui.editor.body_example import VerifiedExampleEditor
from skillstudio.gui.editor.body_instructions import InstructionsEditor
from skillstudio.gui.editor.body_strategic import StrategicPatternEditor
from skillstudio.gui.editor.conflict import QtConflictDialog
from skillstudio.gui.editor.undo import SnapshotCommand
from skillstudio.gui.editor.widgets import (
    EnumCombo,
    Marker,
    PathMap,
    SkillRefPicker,
    TextArea,
    TokenLineEdit,
    fixed_font,
    focus_located,
    forward_library_changes,
    reveal,
)
from skillstudio.model import (
    BodyKind,
    Domain,
    Issue,
    Provenance,
    Skill,
    Source,
    SourceKind,
    ValidationError,
    new_skill_id,
    parse_skill,
    skill_to_document,
    utc_now,
)
from skillstudio.model.skill import BODIES_BY_DOMAIN
from skillstudio.model.yaml_form import document_to_yaml, skill_from_yaml, skill_to_yaml
from skillstudio.store import ConflictError, LibraryError, SkillRepository
from skillstudio.store.events import LibraryChange

BODY_EDITORS: dict[BodyKind, type[BodyEditor]] = {
    BodyKind.STRATEGIC_PATTERN: StrategicPatternEditor,
    BodyKind.ENCOUNTER_PATTERN: EncounterPatternEditor,
    BodyKind.VERIFIED_EXAMPLE: VerifiedExampleEditor,
    BodyKind.INSTRUCTIONS: InstructionsEditor,
}
KIND_ORDER = tuple(BODY_EDITORS)
VALIDATE_DELAY_MS = 150
# What the form edits; everything else in the document stays as it was read.
EDITABLE = (
    "name",
    "description",
    "domain",
    "tags",
    "composable_with",
    "body",
    "provenance.game_module",
    "provenance.engine_version",
)
READ_ONLY_LABELS = {
    "id": "id",
    "created_by": "created by",
    "created_at": "created",
    "last_used": "last used",
    "use_count": "use count",
    "quality": "quality",
    "provenance.source": "source",
    "provenance.source_id": "Workshop package",
    "provenance.author": "Workshop author",
    "provenance.original_id": "original",
    "provenance.model_id": "model id",
}
BANNER_STYLE = "QLabel { background: #fff4e5; border: 1px solid #f0b35b; border-radius: 4px; padding: 6px 8px; }"
NOTICE_STYLE = "QLabel { background: #e8f1fd; border: 1px solid #9dbbe8; border-radius: 4px; padding: 6px 8px; }"


def document_yaml(document: dict[str, Any]) -> str:
    shown = {key: value for key, value in document.items() if key not in ("review_state", "version")}
    return document_to_yaml(shown)


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _when(timestamp: str | None) -> str:
    if not timestamp:
        return "—"
    try:
        moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00")).astimezone()
    except ValueError:
        return timestamp
    return moment.strftime("%Y-%m-%d %H:%M")


class _UndoKeys(QObject):
    """Sends Ctrl+Z / Ctrl+Shift+Z / Ctrl+Y typed in the editor's fields to the editor's undo
    stack instead of the field's own undo (a line edit would otherwise take them)."""

    def __init__(self, editor: QtSkillEditor) -> None:
        super().__init__(editor)
        self.editor = editor

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.ShortcutOverride or not isinstance(watched, QWidget):
            return False
        assert isinstance(event, QKeyEvent)
        if not _is_undo_key(event) or not self.editor.isAncestorOf(watched):
            return False
        widget: QWidget | None = watched
        while widget is not None and widget is not self.editor:
            if widget.property("own_undo"):
                return False
            widget = widget.parentWidget()
        event.ignore()  # not overridden: the editor's shortcut fires
        return True


def _is_undo_key(event: QKeyEvent) -> bool:
    modifiers = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
    control = Qt.KeyboardModifier.ControlModifier
    return (event.key() == Qt.Key.Key_Z and modifiers in (control, control | Qt.KeyboardModifier.ShiftModifier)) or (
        event.key() == Qt.Key.Key_Y and modifiers == control
    )


class QtSkillEditor(QDialog):
    """Edit ``skill`` (as read from ``repository``), or write a new one when ``skill`` is None."""

    saved = Signal(str)  # the stored skill's id (a refinement's new id when one was created)
    refined = Signal(str, str)  # original id, refinement id
    open_skill_requested = Signal(str)  # the user clicked a link to another skill
    _library_changed = Signal(object)

    def __init__(self, repository: SkillRepository, skill: Skill | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.repository = repository
        self.setWindowFlag(Qt.WindowType.WindowMaximizeButtonHint, True)
        self.setSizeGripEnabled(True)
        self.resize(1120, 800)
        self._original: Skill | None = skill
        self._base: dict[str, Any] = skill_to_document(skill if skill is not None else self._blank_skill())
        self._editors: dict[BodyKind, BodyEditor] = {}
        self._applying = False
        self._pending_key: str | None = None
        self._pending_merge = False
        self._generation = 0
        self._issues: list[Issue] = []
        self._valid_skill: Skill | None = None
        self._committed: dict[str, Any] = {}
        self._saved_state: dict[str, Any] = {}
        self._raw_dirty = False
        self._raw_loading = False
        self._marker = Marker()
        self._paths = PathMap()
        self.conflict_dialog: QtConflictDialog | None = None  # the open one, for tests and scripts

        self._undo = QUndoStack(self)
        self._timer = QTimer(self, singleShot=True, interval=VALIDATE_DELAY_MS)
        self._timer.timeout.connect(self.flush)
        self._build()
        self._undo_keys = _UndoKeys(self)
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self._undo_keys)
            app.focusChanged.connect(self._focus_changed)
        self._subscribe()

        self._load(self._original, initial=True)
        self.name_edit.setFocus(Qt.FocusReason.OtherFocusReason)

    # ============================================================================================
    # Building the window
    # ============================================================================================

    def _blank_skill(self) -> Skill:
        return Skill(
            id=new_skill_id(),
            domain=Domain.AI_STRATEGY,
            name="",
            description="",
            body=StrategicPatternEditor.default_body(),
            provenance=Provenance(Source.hand_authored(), "ra1", ""),
            created_at=utc_now(),
            created_by=self.repository.actor.id,
        )

    def _build(self) -> None:
        self.banner = QLabel(self)
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet(BANNER_STYLE)
        self.banner.setTextFormat(Qt.TextFormat.RichText)
        self.banner.linkActivated.connect(self._link)
        self.notice = QLabel(self)
        self.notice.setWordWrap(True)
        self.notice.setStyleSheet(NOTICE_STYLE)
        self.notice.hide()

        self.tabs = QTabWidget(self)
        self.general_page = self._general_page()
        self.body_page = self._body_page()
        self.raw_page = self._raw_page()
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.general_page)
        self.tabs.addTab(scroll, "&General")
        self.tabs.addTab(self.body_page, "&Body")
        self.tabs.addTab(self.raw_page, "&Raw YAML")
        self.tabs.currentChanged.connect(self._tab_changed)

        self.problems_label = QLabel(self)
        self.problems = QListWidget(self)
        self.problems.setAccessibleName("Problems")
        line = self.problems.fontMetrics().height() + 6
        self.problems.setMaximumHeight(line * 4 + 8)
        self.problems.itemActivated.connect(self._issue_activated)
        self.problems.itemClicked.connect(self._issue_activated)
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status.hide()

        self.message_edit = QLineEdit(self)
        self.message_edit.setPlaceholderText("optional: what you changed and why (recorded in the history)")
        self.message_edit.setProperty("own_undo", True)
        message_label = QLabel("Commit &message:", self)
        message_label.setBuddy(self.message_edit)

        self.undo_action = QAction("Undo", self)
        self.undo_action.setShortcuts([QKeySequence(QKeySequence.StandardKey.Undo)])
        self.undo_action.triggered.connect(self.undo)
        self.redo_action = QAction("Redo", self)
        self.redo_action.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        self.redo_action.triggered.connect(self.redo)
        self.save_action = QAction("Save", self)
        self.save_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Save))
        self.save_action.triggered.connect(self.save)
        for action in (self.undo_action, self.redo_action, self.save_action):
            self.addAction(action)
        self._undo.canUndoChanged.connect(self._update_undo_buttons)
        self._undo.canRedoChanged.connect(self._update_undo_buttons)
        self._undo.indexChanged.connect(lambda _i: self._update_undo_buttons())

        self.undo_button = QPushButton(self.style().standardIcon(QStyle.StandardPixmap.SP_ArrowBack), "Undo", self)
        self.undo_button.clicked.connect(self.undo)
        self.redo_button = QPushButton(self.style().standardIcon(QStyle.StandardPixmap.SP_ArrowForward), "Redo", self)
        self.redo_button.clicked.connect(self.redo)
        self.history_button = QPushButton("&History…", self)
        self.history_button.setToolTip("Revisions of this skill, their differences, revert")
        self.history_button.clicked.connect(self.open_history)
        self.save_button = QPushButton(
            self.style().standardIcon(QStyle.StandardPixmap.SP_DialogSaveButton), "&Save", self
        )
        self.save_button.setToolTip("Save (Ctrl+S)")
        self.save_button.clicked.connect(self.save)
        self.close_button = QPushButton("Close", self)
        self.close_button.setToolTip("Close the editor (Esc); asks first if there are unsaved changes")
        self.close_button.clicked.connect(self.reject)

        message_row = QHBoxLayout()
        message_row.addWidget(message_label)
        message_row.addWidget(self.message_edit, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.undo_button)
        buttons.addWidget(self.redo_button)
        buttons.addWidget(self.history_button)
        buttons.addStretch(1)
        buttons.addWidget(self.save_button)
        buttons.addWidget(self.close_button)

        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        layout.addWidget(self.notice)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.problems_label)
        layout.addWidget(self.problems)
        layout.addWidget(self.status)
        layout.addLayout(message_row)
        layout.addLayout(buttons)
        self._no_auto_default()

    def _no_auto_default(self) -> None:
        # In a dialog every push button would otherwise be "default": Enter in a field would save.
        for button in self.findChildren(QPushButton):
            button.setAutoDefault(False)
            button.setDefault(False)

    def _general_page(self) -> QWidget:
        page = QWidget(self)
        self.name_edit = QLineEdit(page)
        self.name_edit.setPlaceholderText("A short, human-readable name")
        self.domain_combo = EnumCombo(Domain, page, serde=False)
        self.domain_combo.setItemText(0, "AI strategy")
        self.domain_combo.setItemText(1, "Content generation")
        self.kind_combo = QComboBox(page)
        for kind in KIND_ORDER:
            self.kind_combo.addItem(BODY_EDITORS[kind].title, kind.value)
        self.module_combo = QComboBox(page)
        self.module_combo.setEditable(True)
        self.module_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        try:
            modules = self.repository.facets.game_modules()
        except LibraryError:
            modules = []
        self.module_combo.addItems(sorted({"ra1", "td", *modules}))
        self.module_combo.setToolTip(
            "The game module the skill is for: ra1 (Red Alert), td (Tiberian Dawn), a mod's id"
        )
        self.engine_edit = QLineEdit(page)
        self.engine_edit.setPlaceholderText("e.g. 0.5.0")
        self.engine_edit.setToolTip("The engine version the skill was made with or checked against")
        self.tags_edit = TokenLineEdit(page)
        self.tags_edit.setPlaceholderText("comma-separated, e.g. anti-air, early-game")
        self._load_tag_completions()
        self.description_edit = TextArea(page, min_lines=5)
        self.description_edit.setPlaceholderText(
            "What the skill does and when it applies; retrieval searches this text"
        )
        self.composable = SkillRefPicker(self.repository, page)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("&Name:", self.name_edit)
        kind_row = QHBoxLayout()
        kind_row.addWidget(self.domain_combo, 1)
        kind_label = QLabel("Bod&y type:", page)
        kind_label.setBuddy(self.kind_combo)
        kind_row.addSpacing(12)
        kind_row.addWidget(kind_label)
        kind_row.addWidget(self.kind_combo, 1)
        form.addRow("&Domain:", kind_row)
        form.labelForField(kind_row).setBuddy(self.domain_combo)
        module_row = QHBoxLayout()
        module_row.addWidget(self.module_combo, 1)
        engine_label = QLabel("&Engine version:", page)
        engine_label.setBuddy(self.engine_edit)
        module_row.addSpacing(12)
        module_row.addWidget(engine_label)
        module_row.addWidget(self.engine_edit, 1)
        form.addRow("Game m&odule:", module_row)
        form.labelForField(module_row).setBuddy(self.module_combo)
        form.addRow("&Tags:", self.tags_edit)
        form.addRow("Descr&iption:", self.description_edit)
        form.addRow("&Composable with:", self.composable)
        form.labelForField(self.composable).setBuddy(self.composable.search)

        side = QVBoxLayout()
        self.provenance_box = QGroupBox("Provenance (read-only)", page)
        self.provenance_form = QFormLayout(self.provenance_box)
        self.quality_box = QGroupBox("Quality (read-only: it comes from verification)", page)
        self.quality_form = QFormLayout(self.quality_box)
        for box in (self.provenance_box, self.quality_box):
            box.setSizePolicy(box.sizePolicy().horizontalPolicy(), box.sizePolicy().verticalPolicy())
        side.addWidget(self.provenance_box)
        side.addWidget(self.quality_box)
        side.addStretch(1)

        layout = QHBoxLayout(page)
        layout.addLayout(form, 3)
        layout.addSpacing(8)
        layout.addLayout(side, 2)

        self.name_edit.textEdited.connect(lambda _t: self._on_changed("name", True))
        self.description_edit.textChanged.connect(lambda: self._on_changed("description", True))
        self.domain_combo.currentIndexChanged.connect(self._domain_changed)
        self.kind_combo.currentIndexChanged.connect(self._kind_changed)
        self.module_combo.editTextChanged.connect(lambda _t: self._on_changed("provenance.game_module", True))
        self.engine_edit.textEdited.connect(lambda _t: self._on_changed("provenance.engine_version", True))
        self.tags_edit.textEdited.connect(lambda _t: self._on_changed("tags", True))
        self.composable.edited.connect(lambda: self._on_changed("composable_with"))
        self.composable.search.setProperty("own_undo", True)
        for path, widget in (
            ("name", self.name_edit),
            ("description", self.description_edit),
            ("domain", self.domain_combo),
            ("body", self.kind_combo),
            ("tags", self.tags_edit),
            ("provenance.game_module", self.module_combo),
            ("provenance.engine_version", self.engine_edit),
        ):
            self._paths.add(path, widget)
        self._paths.add_picker("composable_with", self.composable)
        return page

    def _load_tag_completions(self) -> None:
        try:
            counts = self.repository.facets.tag_counts()
        except LibraryError:
            return
        self.tags_edit.set_completions(sorted(counts, key=lambda tag: (-counts[tag], tag)))

    def _body_page(self) -> QWidget:
        page = QWidget(self)
        self.body_title = QLabel(page)
        self.body_stack = QStackedWidget(page)
        layout = QVBoxLayout(page)
        layout.addWidget(self.body_title)
        layout.addWidget(self.body_stack, 1)
        return page

    def _raw_page(self) -> QWidget:
        page = QWidget(self)
        intro = QLabel(
            "The skill as YAML, in the canonical form (docs/formats.md). Edit it and apply to update the "
            "form; id, provenance source, quality and dates are read-only here too.",
            page,
        )
        intro.setWordWrap(True)
        self.raw_edit = QPlainTextEdit(page)
        self.raw_edit.setFont(fixed_font())
        self.raw_edit.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.raw_edit.setProperty("own_undo", True)  # its own undo until applied
        self.raw_edit.setTabChangesFocus(False)
        self.raw_edit.textChanged.connect(self._raw_edited)
        self.raw_status = QLabel(page)
        self.raw_status.setWordWrap(True)
        self.raw_status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.raw_apply_button = QPushButton("A&pply YAML", page)
        self.raw_apply_button.setToolTip("Check the YAML and put it into the form (Ctrl+Return)")
        self.raw_apply_button.clicked.connect(self.apply_raw)
        self.raw_reset_button = QPushButton("Discard YAML edits (show the &form)", page)
        self.raw_reset_button.clicked.connect(lambda: self._refresh_raw(force=True))
        shortcut = QShortcut(QKeySequence("Ctrl+Return"), self.raw_edit, context=Qt.ShortcutContext.WidgetShortcut)
        shortcut.activated.connect(self.apply_raw)
        buttons = QHBoxLayout()
        buttons.addWidget(self.raw_status, 1)
        buttons.addWidget(self.raw_reset_button)
        buttons.addWidget(self.raw_apply_button)
        layout = QVBoxLayout(page)
        layout.addWidget(intro)
        layout.addWidget(self.raw_edit, 1)
        layout.addLayout(buttons)
        return page

    def _editor(self, kind: BodyKind) -> BodyEditor:
        editor = self._editors.get(kind)
        if editor is None:
            editor = BODY_EDITORS[kind](self.repository, self.body_stack)
            editor.changed.connect(self._on_changed)
            self._editors[kind] = editor
            self.body_stack.addWidget(editor)
            if isinstance(editor, InstructionsEditor):
                editor.references.exclude_id = self._base.get("id")
                editor.references.search.setProperty("own_undo", True)
            self._no_auto_default()
        return editor

    def current_kind(self) -> BodyKind:
        return BodyKind(self.kind_combo.currentData())

    def body_editor(self) -> BodyEditor:
        return self._editor(self.current_kind())

    # ============================================================================================
    # State: what the form shows
    # ============================================================================================

    def state(self) -> dict[str, Any]:
        return {
            "name": self.name_edit.text(),
            "description": self.description_edit.text(),
            "domain": self.domain_combo.value(),
            "body_kind": self.current_kind().value,
            "game_module": self.module_combo.currentText(),
            "engine_version": self.engine_edit.text(),
            "tags": self.tags_edit.tokens(),
            "composable_with": self.composable.ids(),
            "body": self.body_editor().state(),
        }

    @staticmethod
    def state_of(skill: Skill) -> dict[str, Any]:
        kind = skill.body_kind
        inner = skill_to_document(skill)["body"][kind.serde]
        return {
            "name": skill.name,
            "description": skill.description,
            "domain": skill.domain.value,
            "body_kind": kind.value,
            "game_module": skill.game_module,
            "engine_version": skill.provenance.engine_version,
            "tags": list(skill.tags),
            "composable_with": list(skill.composable_with),
            "body": BODY_EDITORS[kind].state_from_body(inner),
        }

    def document(self, state: dict[str, Any] | None = None, issues: list[Issue] | None = None) -> dict[str, Any]:
        """The skill document the form describes (read-only fields as read)."""
        state = self.state() if state is None else state
        issues = [] if issues is None else issues
        document = copy.deepcopy(self._base)
        document.update(
            name=state["name"],
            description=state["description"],
            domain=state["domain"],
            tags=list(state["tags"]),
            composable_with=list(state["composable_with"]),
        )
        document["provenance"] = {
            **document["provenance"],
            "game_module": state["game_module"],
            "engine_version": state["engine_version"],
        }
        kind = BodyKind(state["body_kind"])
        document["body"] = {kind.serde: BODY_EDITORS[kind].body_from_state(state["body"], issues)}
        return document

    def _apply_state(self, state: dict[str, Any]) -> None:
        """Show a state in the widgets, without recording an edit."""
        self._applying = True
        try:
            if self.name_edit.text() != state["name"]:
                self.name_edit.setText(state["name"])
            self.description_edit.set_text(state["description"])
            self.domain_combo.set_value(state["domain"])
            kind = BodyKind(state["body_kind"])
            index = self.kind_combo.findData(kind.value)
            if index != self.kind_combo.currentIndex():
                self.kind_combo.setCurrentIndex(index)
            self._show_kind(kind)
            if self.module_combo.currentText() != state["game_module"]:
                self.module_combo.setEditText(state["game_module"])
            if self.engine_edit.text() != state["engine_version"]:
                self.engine_edit.setText(state["engine_version"])
            self.tags_edit.set_tokens(state["tags"])
            self.composable.set_ids(state["composable_with"])
            self._editor(kind).set_state(state["body"])
            self._update_kind_choices()
        finally:
            self._applying = False

    def _show_kind(self, kind: BodyKind) -> None:
        editor = self._editor(kind)
        self.body_stack.setCurrentWidget(editor)
        self.body_title.setText(f"<b>{editor.title}</b>")

    # ============================================================================================
    # Edits, undo, validation
    # ============================================================================================

    def _on_changed(self, key: str, mergeable: bool = False) -> None:
        if self._applying:
            return
        if self._pending_key is not None and self._pending_key != key:
            mergeable = False  # two fields changed within one validation delay
        self._pending_key = key
        self._pending_merge = mergeable
        self._timer.start()

    def _focus_changed(self, old: QWidget | None, new: QWidget | None) -> None:
        # Leaving a field ends its run of typing: the next edit there is a new undo step.
        self._generation += 1
        if old is not None and self._timer.isActive():
            try:
                inside = self.isAncestorOf(old)
            except RuntimeError:
                return
            if inside:
                self.flush()

    def flush(self) -> None:
        """Commit pending edits now: push an undo step if the form changed, and validate."""
        self._timer.stop()
        if self._applying or not self._saved_state:
            return
        state = self.state()
        if state != self._committed:
            key = self._pending_key or "edit"
            merge_key = f"{key}#{self._generation}" if self._pending_merge else None
            command = SnapshotCommand(self, self._committed, state, key=key, text=_describe(key), merge_key=merge_key)
            self._committed = state
            self._undo.push(command)
        self._pending_key = None
        self._pending_merge = False
        self._validate(state)
        self._update_dirty(state)
        if not self._raw_dirty and self.tabs.currentWidget() is self.raw_page:
            self._refresh_raw()

    def apply_snapshot(self, state: dict[str, Any], key: str) -> None:
        """Put an undo snapshot back into the form (called by the undo commands)."""
        self._timer.stop()
        self._pending_key = None
        self._apply_state(state)
        self._committed = self.state()
        self._validate(self._committed)
        self._update_dirty(self._committed)
        if not self._raw_dirty:
            self._refresh_raw()
        self._reveal_path(key)

    def undo(self) -> None:
        self._commit_cell_editor()
        self.flush()
        if self._undo.canUndo():
            text = self._undo.undoText()
            self._undo.undo()
            self._say(f"Undid: {text}.")

    def redo(self) -> None:
        self._commit_cell_editor()
        self.flush()
        if self._undo.canRedo():
            text = self._undo.redoText()
            self._undo.redo()
            self._say(f"Redid: {text}.")

    @property
    def undo_stack(self) -> QUndoStack:
        return self._undo

    def _update_undo_buttons(self) -> None:
        try:
            self._update_undo_buttons_now()
        except RuntimeError:  # the stack or the buttons are being deleted with the window
            pass

    def _update_undo_buttons_now(self) -> None:
        self.undo_button.setEnabled(self._undo.canUndo())
        self.redo_button.setEnabled(self._undo.canRedo())
        self.undo_button.setToolTip(
            f"Undo {self._undo.undoText()} (Ctrl+Z)" if self._undo.canUndo() else "Nothing to undo"
        )
        self.redo_button.setToolTip(
            f"Redo {self._undo.redoText()} (Ctrl+Shift+Z)" if self._undo.canRedo() else "Nothing to redo"
        )

    def _commit_cell_editor(self) -> None:
        """Finish an open table-cell edit so that undo and save see what was typed."""
        focus = QApplication.focusWidget()
        if focus is None or not self.isAncestorOf(focus):
            return
        widget: QWidget | None = focus
        while widget is not None and widget is not self:
            parent = widget.parentWidget()
            if parent is not None and isinstance(parent.parentWidget(), QAbstractItemView):
                view = parent.parentWidget()
                if parent is view.viewport() and widget is not view:
                    delegate = view.itemDelegate()
                    delegate.commitData.emit(widget)
                    delegate.closeEditor.emit(widget, QAbstractItemDelegate.EndEditHint.NoHint)
                    view.setFocus()
                    return
            widget = parent

    def _validate(self, state: dict[str, Any]) -> None:
        issues: list[Issue] = []
        document = self.document(state, issues)
        skill: Skill | None = None
        try:
            skill = parse_skill(document)
        except ValidationError as error:
            issues.extend(error.issues)
        self._issues = list(dict.fromkeys(issues))
        self._valid_skill = skill if not self._issues else None
        self._show_issues()

    def issues(self) -> list[Issue]:
        return list(self._issues)

    def is_valid(self) -> bool:
        return not self._issues

    def _show_issues(self) -> None:
        issues = self._issues
        self.problems.clear()
        for issue in issues:
            item = QListWidgetItem(f"{issue.path or '(document)'}: {issue.message}")
            item.setData(Qt.ItemDataRole.UserRole, issue.path)
            item.setToolTip("Go to the field")
            self.problems.addItem(item)
        self.problems.setVisible(bool(issues))
        if issues:
            count = len(issues)
            self.problems_label.setText(
                f"<b style='color:#b42318'>{count} problem{'s' if count != 1 else ''}</b> — fix "
                f"{'them' if count != 1 else 'it'} to save. Click a problem to go to its field."
            )
        else:
            self.problems_label.setText("<span style='color:#2e7d32'>✓ No problems.</span>")
        body_issues = [i for i in issues if i.path.startswith("body.")]
        top_issues = [i for i in issues if not i.path.startswith("body.")]
        self._marker.apply(top_issues, self._paths.locate)
        self.body_editor().show_issues(body_issues)
        warning = self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)
        self.tabs.setTabIcon(0, warning if top_issues else QIcon())
        self.tabs.setTabIcon(1, warning if body_issues else QIcon())
        self.save_button.setEnabled(not issues)
        self.save_button.setToolTip("Save (Ctrl+S)" if not issues else "Fix the problems listed below to save")

    def _issue_activated(self, item: QListWidgetItem) -> None:
        self.focus_path(item.data(Qt.ItemDataRole.UserRole) or "")

    def focus_path(self, path: str) -> bool:
        """Show and focus the widget editing ``path``; False if no widget edits it."""
        located = None
        if path.startswith("body."):
            self.tabs.setCurrentWidget(self.body_page)
            editor = self.body_editor()
            editor.prepare_focus(path)
            located = editor.locate(path)
        else:
            located = self._paths.locate(path)
        if located is None:
            return False
        reveal(located.widget)
        focus_located(located)
        return True

    def _reveal_path(self, key: str) -> None:
        if key in ("raw", "reload", "edit", "several"):
            return
        if key.startswith("body") and key != "body":
            self.tabs.setCurrentWidget(self.body_page)
            self.body_editor().prepare_focus(key)
            located = self.body_editor().locate(key)
        else:
            located = self._paths.locate(key)
        if located is not None:
            reveal(located.widget)

    # --- domain and body type ---------------------------------------------------------------------

    def _allowed_kinds(self, domain: Domain) -> list[BodyKind]:
        return [kind for kind in KIND_ORDER if kind in BODIES_BY_DOMAIN[domain]]

    def _update_kind_choices(self) -> None:
        """A new skill may take any body its domain allows; a stored skill keeps its body type,
        so only the domains that allow that body are offered."""
        domain = Domain(self.domain_combo.value())
        kind = self.current_kind()
        kind_model = self.kind_combo.model()
        domain_model = self.domain_combo.model()
        for row, candidate in enumerate(KIND_ORDER):
            kind_model.item(row).setEnabled(candidate in BODIES_BY_DOMAIN[domain])
        for row in range(self.domain_combo.count()):
            other = Domain(self.domain_combo.itemData(row))
            domain_model.item(row).setEnabled(self.is_new or kind in BODIES_BY_DOMAIN[other])
        self.kind_combo.setEnabled(self.is_new)
        self.kind_combo.setToolTip(
            "The kind of body; the domain decides which kinds are allowed"
            if self.is_new
            else "A stored skill keeps its body type (the Raw YAML tab can still change it)"
        )

    def _domain_changed(self, _index: int) -> None:
        if self._applying:
            return
        domain = Domain(self.domain_combo.value())
        if self.current_kind() not in BODIES_BY_DOMAIN[domain]:
            allowed = self._allowed_kinds(domain)
            self._applying = True
            try:
                self.kind_combo.setCurrentIndex(self.kind_combo.findData(allowed[0].value))
                self._show_kind(allowed[0])
            finally:
                self._applying = False
        self._update_kind_choices()
        self._on_changed("domain")

    def _kind_changed(self, _index: int) -> None:
        if self._applying:
            return
        self._show_kind(self.current_kind())
        self._on_changed("body")

    # ============================================================================================
    # Loading, dirty state, read-only panels
    # ============================================================================================

    @property
    def is_new(self) -> bool:
        return self._original is None

    @property
    def skill(self) -> Skill | None:
        """The skill as stored (None for a new skill not saved yet)."""
        return self._original

    def _load(self, skill: Skill | None, *, initial: bool = False, keep_undo: bool = True) -> None:
        self._original = skill
        if skill is not None:
            self._base = skill_to_document(skill)
            state = self.state_of(skill)
        else:
            state = self.state_of(parse_skill(self._base)) if not initial else self._blank_state()
        skill_id = self._base["id"]
        self.composable.exclude_id = skill_id
        for editor in self._editors.values():
            if isinstance(editor, InstructionsEditor):
                editor.references.exclude_id = skill_id
        self._apply_state(state)
        self._committed = self._saved_state = self.state()
        if not keep_undo:
            self._undo.clear()
        self._undo.setClean()
        self._update_read_only()
        self._update_banner()
        self._validate(self._committed)
        self._update_dirty(self._committed)
        self._update_undo_buttons()
        self.history_button.setEnabled(not self.is_new)
        self._raw_dirty = False
        self._refresh_raw(force=True)

    def _blank_state(self) -> dict[str, Any]:
        blank = self._base
        kind = KIND_ORDER[0]
        return {
            "name": blank["name"],
            "description": blank["description"],
            "domain": blank["domain"],
            "body_kind": kind.value,
            "game_module": blank["provenance"]["game_module"],
            "engine_version": blank["provenance"]["engine_version"],
            "tags": [],
            "composable_with": [],
            "body": BODY_EDITORS[kind].default_state(),
        }

    def is_dirty(self) -> bool:
        return self.state() != self._saved_state

    def _update_dirty(self, state: dict[str, Any]) -> None:
        dirty = state != self._saved_state
        name = state["name"].strip()
        if self.is_new:
            title = f"New skill{': ' + name if name else ''}[*] — SkillStudio"
        else:
            title = f"{name or '(no name)'}[*] — Edit skill — SkillStudio"
        self.setWindowTitle(title)
        self.setWindowModified(dirty)

    def _update_read_only(self) -> None:
        doc = self._base
        provenance = doc["provenance"]
        quality = doc["quality"]
        source = SourceKind(provenance["source"])
        for form in (self.provenance_form, self.quality_form):
            while form.rowCount():
                form.removeRow(0)

        def row(form: QFormLayout, label: str, text: str, *, rich: bool = False, tooltip: str = "") -> QLabel:
            value = QLabel(text if rich else _html(text))
            value.setTextFormat(Qt.TextFormat.RichText)
            value.setWordWrap(True)
            flags = Qt.TextInteractionFlag.TextSelectableByMouse
            if "<a " in text:  # only links are Tab stops; plain values are not
                flags |= (
                    Qt.TextInteractionFlag.LinksAccessibleByMouse | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
                )
            value.setTextInteractionFlags(flags)
            value.setToolTip(tooltip)
            value.linkActivated.connect(self._link)
            form.addRow(label, value)
            return value

        source_text = {
            SourceKind.LLM_DISCOVERED: "Discovered by an LLM",
            SourceKind.HAND_AUTHORED: "Hand-authored",
            SourceKind.WORKSHOP: "Imported from Workshop",
            SourceKind.HUMAN_REFINED: "Human refinement",
        }[source]
        row(self.provenance_form, "Source:", source_text + (" (new, not saved yet)" if self.is_new else ""))
        if source is SourceKind.WORKSHOP:
            row(self.provenance_form, "Package:", provenance.get("source_id") or "—")
            row(self.provenance_form, "Author:", provenance.get("author") or "—")
        if source is SourceKind.HUMAN_REFINED:
            row(self.provenance_form, "Refines:", self._original_link(provenance.get("original_id")), rich=True)
        row(self.provenance_form, "Model:", provenance.get("model_id") or "—", tooltip="The LLM that produced it")
        row(self.provenance_form, "Created by:", doc.get("created_by") or "unknown")
        row(self.provenance_form, "Created:", _when(doc.get("created_at")), tooltip=doc.get("created_at") or "")
        id_label = row(self.provenance_form, "Id:", doc["id"])
        id_label.setFont(fixed_font())
        if not self.is_new:
            refinements = self._refinements()
            if refinements:
                row(self.provenance_form, "Refined by:", refinements, rich=True)

        rating = quality.get("average_rating")
        rate = quality.get("success_rate") or 0.0
        row(self.quality_form, "Confidence:", str(quality.get("confidence", "tentative")).capitalize())
        row(self.quality_form, "Verifications:", str(quality.get("verification_count", 0)))
        row(self.quality_form, "Success rate:", f"{rate * 100:.0f} %")
        row(self.quality_form, "Average rating:", "—" if rating is None else f"{rating:.2f} / 5")
        row(
            self.quality_form,
            "Last verified:",
            _when(quality.get("last_verified")),
            tooltip=quality.get("last_verified") or "",
        )
        row(self.quality_form, "Uses:", f"{doc.get('use_count', 0)}, last {_when(doc.get('last_used'))}")
        review = doc.get("review_state")
        row(self.quality_form, "Review:", review.replace("_", " ") if review else "not reviewed")

    def _original_link(self, original_id: str | None) -> str:
        if not original_id:
            return "—"
        try:
            summaries = self.repository.summaries([original_id])
        except LibraryError:
            summaries = []
        if summaries:
            return f"<a href='skill:{_html(original_id)}'>{_html(summaries[0].name)}</a>"
        return f"{_html(original_id)} <i>(no longer in this library)</i>"

    def _refinements(self) -> str:
        try:
            ids = self.repository.refinements_of(self._base["id"])
            summaries = self.repository.summaries(ids)
        except LibraryError:
            return ""
        return ", ".join(f"<a href='skill:{_html(s.id)}'>{_html(s.name)}</a>" for s in summaries)

    def _link(self, href: str) -> None:
        if href.startswith("skill:"):
            self.open_skill_requested.emit(href[len("skill:") :])

    def _update_banner(self) -> None:
        source = SourceKind(self._base["provenance"]["source"])
        if self.is_new:
            self.banner.setText(
                "A new <b>hand-authored</b> skill. Choose its domain and body type first: the domain decides "
                "which bodies it may carry."
            )
            self.banner.setStyleSheet(NOTICE_STYLE)
        elif self._original is not None and edit_becomes_refinement(self._original):
            what = (
                "was discovered by an LLM"
                if source is SourceKind.LLM_DISCOVERED
                else f"was imported from Workshop ({_html(self._base['provenance'].get('source_id') or '?')})"
            )
            self.banner.setText(
                f"This skill {what}. <b>Saving does not change it:</b> it creates a new "
                "<b>human-refined</b> skill that refines it, with its own (empty) verification record. "
                "The original and its evidence stay as they are."
            )
            self.banner.setStyleSheet(BANNER_STYLE)
        elif source is SourceKind.HUMAN_REFINED:
            link = self._original_link(self._base["provenance"].get("original_id"))
            self.banner.setText(f"A human refinement of {link}. Saving updates it in place, as a new revision.")
            self.banner.setStyleSheet(NOTICE_STYLE)
        else:
            self.banner.setText("")
        self.banner.setVisible(bool(self.banner.text()))

    def _say(self, text: str, *, error: bool = False) -> None:
        color = "#b42318" if error else "#1f2937"
        self.status.setText(f"<span style='color:{color}'>{_html(text)}</span>" if text else "")
        self.status.setVisible(bool(text))

    def status_text(self) -> str:
        return self.status.text()

    # ============================================================================================
    # Raw YAML
    # ============================================================================================

    def _tab_changed(self, _index: int) -> None:
        self.flush()
        if self.tabs.currentWidget() is self.raw_page:
            self._refresh_raw()

    def _refresh_raw(self, force: bool = False) -> None:
        if self._raw_dirty and not force:
            return
        if self._valid_skill is not None:
            text = skill_to_yaml(self._valid_skill)
        else:
            text = document_yaml(self.document(self._committed or self.state()))
        self._raw_loading = True
        try:
            if self.raw_edit.toPlainText() != text:
                self.raw_edit.setPlainText(text)
        finally:
            self._raw_loading = False
        self._raw_dirty = False
        if force or not self.raw_status.text().startswith("<span style='color:#b42318'>"):
            self.raw_status.setText(
                "" if self._valid_skill is not None else "The form has problems; this shows it as it is."
            )

    def _raw_edited(self) -> None:
        if self._raw_loading:
            return
        self._raw_dirty = True
        self.raw_status.setText("Edited: apply (Ctrl+Return) to put it into the form.")

    def apply_raw(self) -> bool:
        """Validate the YAML text and show it in the form (one undo step)."""
        self.flush()
        try:
            skill = skill_from_yaml(self.raw_edit.toPlainText())
        except ValidationError as error:
            lines = "<br>".join(_html(str(issue)) for issue in error.issues[:12])
            more = f"<br>… and {len(error.issues) - 12} more" if len(error.issues) > 12 else ""
            self.raw_status.setText(f"<span style='color:#b42318'><b>Not applied:</b><br>{lines}{more}</span>")
            return False
        ignored = self._read_only_changes(skill)
        before = self._committed
        after = self.state_of(skill)
        if after != before:
            self._undo.push(SnapshotCommand(self, before, after, key="raw", text="apply YAML", applied=False))
        self._raw_dirty = False
        self._refresh_raw(force=True)
        note = "Applied to the form."
        if ignored:
            note += " Read-only fields were left as they were: " + ", ".join(ignored) + "."
        self.raw_status.setText(_html(note))
        return True

    def _read_only_changes(self, skill: Skill) -> list[str]:
        theirs = skill_to_document(skill, local=False)
        ours = self._base
        changed = []
        for key, label in READ_ONLY_LABELS.items():
            if "." in key:
                head, tail = key.split(".", 1)
                if theirs[head].get(tail) != ours[head].get(tail):
                    changed.append(label)
            elif theirs.get(key) != ours.get(key):
                changed.append(label)
        return changed

    # ============================================================================================
    # Saving
    # ============================================================================================

    def save(self) -> bool:
        """Store the edit; True if the library now holds what the form shows."""
        self._commit_cell_editor()
        self.flush()
        if self._issues:
            count = len(self._issues)
            self._say(
                f"Not saved: {count} problem{'s' if count != 1 else ''} to fix first — {self._issues[0]}", error=True
            )
            self.problems.setFocus()
            if self.problems.count():
                self.problems.setCurrentRow(0)
            return False
        assert self._valid_skill is not None
        edited = self._valid_skill
        message = self.message_edit.text().strip()
        refined_from: str | None = None
        try:
            if self._original is None:
                stored = new_skill(self.repository, edited, message=message)
                changed = True
            else:
                outcome = save_edit(self.repository, self._original, edited, message=message)
                stored, refined_from, changed = outcome.skill, outcome.refined_from, outcome.changed
        except ConflictError as error:
            self._show_conflict(error, edited)
            return False
        except LibraryError as error:
            self._say(f"Not saved: {error}", error=True)
            QMessageBox.warning(self, "Cannot save the skill", str(error))
            return False
        if not changed:
            self._say("Nothing changed; nothing was saved.")
            return True
        original_name = self._original.name if self._original is not None else ""
        self._load(stored)
        self.message_edit.clear()
        self._load_tag_completions()
        self.notice.hide()
        if refined_from is not None:
            self._say(
                f"Saved as a new human-refined skill; “{original_name}” is unchanged. You are now editing the refinement."
            )
        else:
            self._say(f"Saved “{stored.name}”.")
        self.saved.emit(stored.id)
        if refined_from is not None:
            self.refined.emit(refined_from, stored.id)
        return True

    def _show_conflict(self, error: ConflictError, mine: Skill) -> None:
        self._say(f"Not saved: {error}", error=True)
        dialog = QtConflictDialog(error.theirs, mine, self)
        self.conflict_dialog = dialog
        try:
            choice = dialog.exec()
        finally:
            self.conflict_dialog = None
            dialog.deleteLater()
        if choice == QtConflictDialog.RELOAD_THEIRS:
            self.reload_from(error.theirs)

    def reload_from(self, stored: Skill) -> None:
        """Show ``stored`` (the library's version); one undo step brings the form's edit back."""
        self.flush()
        before = self._committed
        self._load(stored)
        after = self._committed
        if before != after:
            self._undo.push(SnapshotCommand(self, before, after, key="reload", text="reload from the library"))
        self.notice.hide()
        self._say("Showing the library's version. Undo (Ctrl+Z) brings your edit back.")

    # ============================================================================================
    # History, library changes
    # ============================================================================================

    def open_history(self) -> None:
        if self._original is None:
            return
        from skillstudio.gui.qt_history import QtHistoryDialog

        dialog = QtHistoryDialog(self.repository, self._original.id, self)
        dialog.exec()
        dialog.deleteLater()

    def _subscribe(self) -> None:
        self._unsubscribe = forward_library_changes(self, self.repository, "_library_changed")
        self._library_changed.connect(self._on_library_change, Qt.ConnectionType.QueuedConnection)

    def _on_library_change(self, change: LibraryChange) -> None:
        if self._original is None or self._original.id not in change.skill_ids:
            return
        if change.action in ("skill.delete", "skill.purge"):
            self.notice.setText(
                f"This skill was moved to the trash by {_html(change.actor)}. It cannot be saved unless it is restored."
            )
            self.notice.show()
            return
        try:
            current = self.repository.get(self._original.id)
        except LibraryError:
            return
        if current.version == self._original.version:
            if self._base.get("review_state") != (current.review_state.value if current.review_state else None):
                self._base = {**self._base, "review_state": skill_to_document(current)["review_state"]}
                self._update_read_only()
            return
        self.flush()
        if not self.is_dirty():
            self._load(current)
            self._say(f"Reloaded: {change.actor} changed this skill in the library.")
        else:
            self.notice.setText(
                f"{_html(change.actor)} changed this skill in the library since you opened it. "
                "Saving will show both versions so that you can choose."
            )
            self.notice.show()

    # ============================================================================================
    # Closing
    # ============================================================================================

    def ask_unsaved(self) -> QMessageBox.StandardButton:
        """Save / Discard / Cancel for closing with unsaved changes."""
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Unsaved changes",
            f"Save your changes to “{self.name_edit.text().strip() or 'the new skill'}” before closing?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setDefaultButton(QMessageBox.StandardButton.Save)
        if self._issues:
            box.setInformativeText("The form has problems; Save will show them instead of saving.")
        answer = box.exec()
        box.deleteLater()
        return QMessageBox.StandardButton(answer)

    def can_close(self) -> bool:
        self._commit_cell_editor()
        self.flush()
        if not self.is_dirty():
            return True
        answer = self.ask_unsaved()
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def reject(self) -> None:
        # Esc, the Close button and the window's close box all come here.
        if self.can_close():
            self._timer.stop()
            super().reject()

    def done(self, result: int) -> None:
        super().done(result)
        app = QApplication.instance()
        if app is not None and not self.isVisible():
            app.removeEventFilter(self._undo_keys)

    def showEvent(self, event) -> None:  # type: ignore[no-untyped-def]
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self._undo_keys)
            app.installEventFilter(self._undo_keys)
        super().showEvent(event)


def _describe(key: str) -> str:
    if key in ("domain", "body"):
        return "change the domain" if key == "domain" else "change the body type"
    last = key.rsplit(".", 1)[-1]
    if "[" in last:
        last = last.split("[", 1)[0]
    return "edit " + last.replace("_", " ")
