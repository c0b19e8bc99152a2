"""The skill editor: pages over an editing session, live validation, undo, raw YAML.

How it works:

* The logic is the Qt-free :class:`~skillstudio.curation.session.EditSession`: the skill as read,
  the typed form, its validation (issues with field paths), dirty state, raw YAML, and saving by
  the HumanRefined rule (an LLM-discovered or Workshop skill is never rewritten: saving creates a
  refinement, which the editor then edits).
* The **pages** (General, Body, Raw YAML, and the read-only provenance panel) are built from the
  session and show what it announces. A person's edits are read back from the pages into the
  session 150 ms after the last keystroke; the session validates them; the problems are listed,
  and clicking one goes to its field. Save is disabled while there are any.
* **Undo** keeps the session's forms: every edit the session announces as undoable is pushed on
  the dialog's undo stack; consecutive typing in one field is one command. The dialog's own
  Ctrl+Z / Ctrl+Shift+Z / Ctrl+Y actions drive it, also while a field has the focus.
* The editor follows the library (``state.library_changed``): a skill that left it (trash,
  prune, an import) cannot be saved; someone else's change reloads a clean form, or makes the
  save show both versions (a conflict never overwrites). A save goes out as the current user.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from html import escape

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QIcon, QKeySequence, QUndoStack
from PySide6.QtWidgets import (
    QAbstractItemDelegate,
    QAbstractItemView,
    QApplication,
    QDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QStyle,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from skillstudio.curation.form import FormState
from skillstudio.curation.session import (
    Conflict,
    EditSession,
    Failed,
    Followed,
    FormChange,
    Gone,
    Invalid,
    Refined,
    Saved,
    SessionStatus,
    Unchanged,
    Validation,
)
from skillstudio.gui.browser_state import BrowserState
from skillstudio.gui.editor.body_base import BodyEditor
from skillstudio.gui.editor.conflict import QtConflictDialog
from skillstudio.gui.editor.page_base import subscribe
from skillstudio.gui.editor.page_body import BodyPage
from skillstudio.gui.editor.page_general import GeneralPage
from skillstudio.gui.editor.page_provenance import ProvenancePage, skill_link
from skillstudio.gui.editor.page_raw import ERROR_COLOR, RawYamlPage
from skillstudio.gui.editor.undo import SnapshotCommand, UndoKeys
from skillstudio.gui.editor.widgets import focus_located, reveal
from skillstudio.gui.workers import show_error
from skillstudio.model import BodyKind, Skill, SourceKind
from skillstudio.store import LibraryChange, SkillRepository

VALIDATE_DELAY_MS = 150
BANNER_STYLE = "QLabel { background: #fff4e5; border: 1px solid #f0b35b; border-radius: 4px; padding: 6px 8px; }"
NOTICE_STYLE = "QLabel { background: #e8f1fd; border: 1px solid #9dbbe8; border-radius: 4px; padding: 6px 8px; }"
CLOSED = "another library was opened"


class QtSkillEditor(QDialog):
    """Edit ``skill`` (as read, or its id, read now: a LibraryError if it cannot be), or write a
    new one when ``skill`` is None, in the library ``state`` shows."""

    saved = Signal(str)  # the stored skill's id (a refinement's new id when one was created)
    refined = Signal(str, str)  # original id, refinement id
    open_skill_requested = Signal(str)  # the user clicked a link to another skill

    def __init__(self, state: BrowserState, skill: Skill | str | None, parent: QWidget | None = None) -> None:
        repository = state.require_repository()
        if isinstance(skill, str):
            skill = repository.get(skill)  # before any widget exists: a refusal leaves nothing behind
        super().__init__(parent)
        self.state = state
        self.session = EditSession(skill, author=repository.actor.id)
        self.setWindowFlag(Qt.WindowType.WindowMaximizeButtonHint, True)
        self.setSizeGripEnabled(True)
        self.resize(1120, 800)
        self.undo_stack = QUndoStack(self)
        self._pending_key: str | None = None  # the field edited since the last flush
        self._pending_merge = False
        self._generation = 0  # focus moves: typing after one is a new undo step
        self._timer = QTimer(self, singleShot=True, interval=VALIDATE_DELAY_MS)
        self._timer.timeout.connect(self.flush)
        self._build()
        self._undo_keys = UndoKeys(self)
        self._undo_keys.focus_moved.connect(self._focus_moved)

        subscribe(self, self.session.events.base, self._base_changed)
        subscribe(self, self.session.events.form, self._form_changed)
        subscribe(self, self.session.events.validated, self._validated)
        subscribe(self, self.session.events.dirty, self._dirty_changed)
        subscribe(self, self.session.events.status, self._status_changed)
        state.library_changed.connect(self._library_changed)
        state.library_opened.connect(self._library_opened)
        state.repository_changed.connect(self._repository_changed)

        self._base_changed(self.session.skill)
        self._validated(self.session.validation)
        self._update_undo_buttons()
        self.name_edit.setFocus(Qt.FocusReason.OtherFocusReason)

    # ============================================================================================
    # Building the window
    # ============================================================================================

    def _build(self) -> None:
        state, session = self.state, self.session
        self.banner = QLabel(self)
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet(BANNER_STYLE)
        self.banner.setTextFormat(Qt.TextFormat.RichText)
        self.banner.linkActivated.connect(self._link)
        self.notice = QLabel(self)
        self.notice.setWordWrap(True)
        self.notice.setStyleSheet(NOTICE_STYLE)
        self.notice.hide()

        self.general_page = GeneralPage(state, session, self)
        self.provenance_page = ProvenancePage(state, session, self)
        self.body_page = BodyPage(state, session, self)
        self.raw_page = RawYamlPage(state, session, self)
        general = QWidget(self)
        general_layout = QHBoxLayout(general)
        general_layout.addWidget(self.general_page, 3)
        general_layout.addSpacing(8)
        general_layout.addWidget(self.provenance_page, 2)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(general)
        self.tabs = QTabWidget(self)
        self.tabs.addTab(scroll, "&General")
        self.tabs.addTab(self.body_page, "&Body")
        self.tabs.addTab(self.raw_page, "&Raw YAML")
        self.tabs.currentChanged.connect(lambda _index: self.flush())

        self.general_page.edited.connect(self._edited)
        self.general_page.kind_chosen.connect(self.body_page.show_kind)
        self.body_page.edited.connect(self._edited)
        self.raw_page.apply_requested.connect(self.apply_raw)
        self.provenance_page.open_skill_requested.connect(self.open_skill_requested)
        # Its fields by name, as the editor offered them before it had pages (scripts, tests).
        self.name_edit = self.general_page.name_edit
        self.description_edit = self.general_page.description_edit
        self.tags_edit = self.general_page.tags_edit
        self.domain_combo = self.general_page.domain_combo
        self.kind_combo = self.general_page.kind_combo
        self.composable = self.general_page.composable
        self.raw_edit = self.raw_page.raw_edit
        self.raw_status = self.raw_page.raw_status
        self.raw_apply_button = self.raw_page.raw_apply_button

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
        # The main window's Ctrl+H (Skill History) does not reach this window: the same key here.
        self.history_action = QAction("History", self)
        self.history_action.setShortcut(QKeySequence("Ctrl+H"))
        self.history_action.triggered.connect(self.open_history)
        for action in (self.undo_action, self.redo_action, self.save_action, self.history_action):
            self.addAction(action)
        self.undo_stack.canUndoChanged.connect(self._update_undo_buttons)
        self.undo_stack.canRedoChanged.connect(self._update_undo_buttons)
        self.undo_stack.indexChanged.connect(self._update_undo_buttons)

        style = self.style()
        self.undo_button = QPushButton(style.standardIcon(QStyle.StandardPixmap.SP_ArrowBack), "Undo", self)
        self.undo_button.clicked.connect(self.undo)
        self.redo_button = QPushButton(style.standardIcon(QStyle.StandardPixmap.SP_ArrowForward), "Redo", self)
        self.redo_button.clicked.connect(self.redo)
        self.history_button = QPushButton("&History…", self)
        self.history_button.setToolTip("Revisions of this skill, their differences, revert (Ctrl+H)")
        self.history_button.clicked.connect(self.open_history)
        self.save_button = QPushButton(style.standardIcon(QStyle.StandardPixmap.SP_DialogSaveButton), "&Save", self)
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
        # In a dialog every push button would otherwise be "default": Enter in a field would save.
        for button in self.findChildren(QPushButton):
            button.setAutoDefault(False)
            button.setDefault(False)

    # ============================================================================================
    # What the editor shows
    # ============================================================================================

    @property
    def skill(self) -> Skill | None:
        """The skill as stored (None for a new skill not saved yet)."""
        return self.session.skill

    @property
    def is_new(self) -> bool:
        return self.session.is_new

    def current_kind(self) -> BodyKind:
        return self.body_page.current_kind()

    def body_editor(self) -> BodyEditor:
        return self.body_page.body_editor()

    def form(self) -> FormState:
        """What the pages show now, pending edits included."""
        return replace(self.general_page.read(self.session.form), body=self.body_page.read())

    def is_dirty(self) -> bool:
        """Whether the pages show something else than the library holds (pending edits too)."""
        return self.form() != self.session.saved_form

    def _base_changed(self, _skill: Skill | None) -> None:
        self._update_banner()
        self.history_button.setEnabled(not self.session.is_new)
        self._update_title()

    def _update_banner(self) -> None:
        session = self.session
        provenance = session.base_document["provenance"]
        source = SourceKind(provenance["source"])
        if session.is_new:
            self.banner.setText(
                "A new <b>hand-authored</b> skill. Choose its domain and body type first: the domain decides "
                "which bodies it may carry."
            )
            self.banner.setStyleSheet(NOTICE_STYLE)
        elif session.becomes_refinement:
            what = (
                "was discovered by an LLM"
                if source is SourceKind.LLM_DISCOVERED
                else f"was imported from Workshop ({escape(provenance.get('source_id') or '?', quote=False)})"
            )
            self.banner.setText(
                f"This skill {what}. <b>Saving does not change it:</b> it creates a new "
                "<b>human-refined</b> skill that refines it, with its own (empty) verification record. "
                "The original and its evidence stay as they are."
            )
            self.banner.setStyleSheet(BANNER_STYLE)
        elif source is SourceKind.HUMAN_REFINED:
            link = skill_link(self.state.repository, provenance.get("original_id"))
            self.banner.setText(f"A human refinement of {link}. Saving updates it in place, as a new revision.")
            self.banner.setStyleSheet(NOTICE_STYLE)
        else:
            self.banner.setText("")
        self.banner.setVisible(bool(self.banner.text()))

    def _link(self, href: str) -> None:
        if href.startswith("skill:"):
            self.open_skill_requested.emit(href[len("skill:") :])

    def _update_title(self) -> None:
        name = self.session.form.name.strip()
        if self.session.is_new:
            title = f"New skill{': ' + name if name else ''}[*] — SkillStudio"
        else:
            title = f"{name or '(no name)'}[*] — Edit skill — SkillStudio"
        self.setWindowTitle(title)
        self.setWindowModified(self.session.dirty)

    def _dirty_changed(self, _dirty: bool) -> None:
        self._update_title()

    def _status_changed(self, status: SessionStatus) -> None:
        if status.closed:
            text = (
                f"This skill's library is closed ({escape(status.closed, quote=False)}): nothing can be saved "
                "to it any more. The Raw YAML tab still shows your edit."
            )
        elif status.departure:
            text = f"This skill {escape(status.departure, quote=False)}. It cannot be saved unless it is restored."
        elif status.stale_by:
            text = (
                f"{escape(status.stale_by, quote=False)} changed this skill in the library since you opened it. "
                "Saving will show both versions so that you can choose."
            )
        else:
            text = ""
        self.notice.setText(text)
        self.notice.setVisible(bool(text))

    def _say(self, text: str, *, error: bool = False) -> None:
        color = ERROR_COLOR if error else "#1f2937"
        self.status.setText(f"<span style='color:{color}'>{escape(text, quote=False)}</span>" if text else "")
        self.status.setVisible(bool(text))

    # ============================================================================================
    # Edits, undo, validation
    # ============================================================================================

    def _edited(self, key: str, mergeable: bool = False) -> None:
        if self._pending_key is not None and self._pending_key != key:
            mergeable = False  # two fields changed within one validation delay
        self._pending_key = key
        self._pending_merge = mergeable
        self._timer.start()

    def _focus_moved(self, left: bool) -> None:
        # Leaving a field ends its run of typing: the next edit there is a new undo step.
        self._generation += 1
        if left and self._timer.isActive():
            self.flush()

    def flush(self) -> None:
        """Hand pending edits to the session now (one undo step if the form changed)."""
        self._timer.stop()
        key = self._pending_key or "edit"
        merge = f"{key}#{self._generation}" if self._pending_merge else None
        self._pending_key = None
        self._pending_merge = False
        self.session.set_form(self.form(), key, merge=merge)

    def _form_changed(self, change: FormChange) -> None:
        if change.undoable:
            command = SnapshotCommand(
                self, change.before, change.after, key=change.key, text=_describe(change.key), merge_key=change.merge
            )
            self.undo_stack.push(command)
        self._update_title()

    def apply_snapshot(self, form: FormState, key: str) -> None:
        """Put an undo snapshot back (called by the undo commands)."""
        self._timer.stop()
        self._pending_key = None
        self.session.restore(form, key)
        self._reveal_path(key)

    def undo(self) -> None:
        self._commit_cell_editor()
        self.flush()
        if self.undo_stack.canUndo():
            text = self.undo_stack.undoText()
            self.undo_stack.undo()
            self._say(f"Undid: {text}.")

    def redo(self) -> None:
        self._commit_cell_editor()
        self.flush()
        if self.undo_stack.canRedo():
            text = self.undo_stack.redoText()
            self.undo_stack.redo()
            self._say(f"Redid: {text}.")

    def _update_undo_buttons(self) -> None:
        with contextlib.suppress(RuntimeError):  # the stack or the buttons are being deleted with the window
            self._update_undo_buttons_now()

    def _update_undo_buttons_now(self) -> None:
        stack = self.undo_stack
        self.undo_button.setEnabled(stack.canUndo())
        self.redo_button.setEnabled(stack.canRedo())
        self.undo_button.setToolTip(f"Undo {stack.undoText()} (Ctrl+Z)" if stack.canUndo() else "Nothing to undo")
        self.redo_button.setToolTip(f"Redo {stack.redoText()} (Ctrl+Shift+Z)" if stack.canRedo() else "Nothing to redo")

    def _commit_cell_editor(self) -> None:
        """Finish an open table-cell edit so that undo and save see what was typed."""
        focus = QApplication.focusWidget()
        if focus is None or not self.isAncestorOf(focus):
            return
        widget: QWidget | None = focus
        while widget is not None and widget is not self:
            parent = widget.parentWidget()
            view = parent.parentWidget() if parent is not None else None
            if isinstance(view, QAbstractItemView) and parent is view.viewport() and widget is not view:
                delegate = view.itemDelegate()
                delegate.commitData.emit(widget)
                delegate.closeEditor.emit(widget, QAbstractItemDelegate.EndEditHint.NoHint)
                view.setFocus()
                return
            widget = parent

    def _validated(self, validation: Validation) -> None:
        issues = validation.issues
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
                f"<b style='color:{ERROR_COLOR}'>{count} problem{'s' if count != 1 else ''}</b> — fix "
                f"{'them' if count != 1 else 'it'} to save. Click a problem to go to its field."
            )
        else:
            self.problems_label.setText("<span style='color:#2e7d32'>✓ No problems.</span>")
        in_body = any(issue.path.startswith("body.") for issue in issues)
        elsewhere = any(not issue.path.startswith("body.") for issue in issues)
        warning = self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)
        self.tabs.setTabIcon(0, warning if elsewhere else QIcon())
        self.tabs.setTabIcon(1, warning if in_body else QIcon())
        self.save_button.setEnabled(not issues)
        self.save_button.setToolTip("Save (Ctrl+S)" if not issues else "Fix the problems listed below to save")

    def _issue_activated(self, item: QListWidgetItem) -> None:
        self.focus_path(item.data(Qt.ItemDataRole.UserRole) or "")

    def focus_path(self, path: str) -> bool:
        """Show and focus the widget editing ``path``; False if no widget edits it."""
        if path.startswith("body."):
            self.tabs.setCurrentWidget(self.body_page)
            self.body_page.prepare_focus(path)
            located = self.body_page.locate(path)
        else:
            located = self.general_page.locate(path)
        if located is None:
            return False
        reveal(located.widget)
        focus_located(located)
        return True

    def _reveal_path(self, key: str) -> None:
        if key in ("raw", "reload", "load", "edit"):
            return
        if key.startswith("body") and key != "body":
            self.tabs.setCurrentWidget(self.body_page)
            self.body_page.prepare_focus(key)
            located = self.body_page.locate(key)
        else:
            located = self.general_page.locate(key)
        if located is not None:
            reveal(located.widget)

    # ============================================================================================
    # Raw YAML
    # ============================================================================================

    def apply_raw(self) -> bool:
        """Validate the YAML text and show it in the form (one undo step)."""
        self.flush()
        return self.raw_page.apply()

    # ============================================================================================
    # Saving
    # ============================================================================================

    def save(self) -> bool:
        """Store the edit as the current user; True if the library now holds what the form shows."""
        self._commit_cell_editor()
        self.flush()
        repository = self.state.repository
        if repository is None:  # the window is closing its library
            self._say("Not saved: no library is open.", error=True)
            return False
        outcome = self.session.save(repository, message=self.message_edit.text().strip())
        if isinstance(outcome, Invalid):
            count = len(outcome.issues)
            self._say(
                f"Not saved: {count} problem{'s' if count != 1 else ''} to fix first — {outcome.issues[0]}",
                error=True,
            )
            self.problems.setFocus()
            if self.problems.count():
                self.problems.setCurrentRow(0)
            return False
        if isinstance(outcome, Conflict):
            self._show_conflict(outcome)
            return False
        if isinstance(outcome, Gone):
            self._say(f"Not saved: this skill {outcome.reason}.", error=True)
            return False
        if isinstance(outcome, Failed):
            self._say(f"Not saved: {outcome.error}", error=True)
            show_error(self, "Cannot save the skill", outcome.error)
            return False
        if isinstance(outcome, Unchanged):
            self._say("Nothing changed; nothing was saved.")
            return True
        self._saved(outcome)
        return True

    def _saved(self, outcome: Saved | Refined) -> None:
        stored = outcome.skill
        self.message_edit.clear()
        self.general_page.load_tag_completions()
        self.undo_stack.setClean()
        if isinstance(outcome, Refined):
            text = (
                f"Saved as a new human-refined skill; “{outcome.original.name}” is unchanged. "
                "You are now editing the refinement."
            )
        else:
            text = f"Saved “{stored.name}”."
        self._say(text)
        self.state.say(text)
        self.saved.emit(stored.id)
        if isinstance(outcome, Refined):
            self.refined.emit(outcome.original.id, stored.id)

    def _show_conflict(self, conflict: Conflict) -> None:
        self._say(f"Not saved: {conflict.message}", error=True)
        dialog = QtConflictDialog(conflict.theirs, conflict.yours, self)
        try:
            choice = dialog.exec()
        finally:
            dialog.deleteLater()
        if choice == QtConflictDialog.RELOAD_THEIRS:
            self.reload_from(conflict.theirs)

    def reload_from(self, stored: Skill) -> None:
        """Show ``stored`` (the library's version); one undo step brings the form's edit back."""
        self.flush()
        self.session.reload(stored)
        self._say("Showing the library's version. Undo (Ctrl+Z) brings your edit back.")

    # ============================================================================================
    # History, the library changing
    # ============================================================================================

    def open_history(self) -> None:
        skill = self.session.skill
        repository = self.state.repository
        if skill is None or repository is None:
            return
        from skillstudio.gui.qt_history import QtHistoryDialog

        dialog = QtHistoryDialog(self.state, skill.id, self)
        dialog.exec()
        dialog.deleteLater()

    def _library_changed(self, change: LibraryChange) -> None:
        repository = self.state.repository
        if repository is None:
            return
        if self._timer.isActive():
            self.flush()  # the session decides by the form as the person left it
        if self.session.follow(change, repository) is Followed.RELOADED:
            self._say(f"Reloaded: {change.actor} changed this skill in the library.")

    def _library_opened(self, _repository: SkillRepository) -> None:
        # Another library is shown: this skill's library is closed. An editor without edits
        # closes; one with edits stays open (nothing is lost) but can no longer save.
        self.flush()
        if not self.session.dirty:
            self._timer.stop()
            super().reject()
            return
        self.session.detach(CLOSED)

    def _repository_changed(self, repository: SkillRepository) -> None:
        self.session.set_author(repository.actor.id)  # a save reads state.repository, as this user

    # ============================================================================================
    # Closing
    # ============================================================================================

    def ask_unsaved(self) -> QMessageBox.StandardButton:
        """Save / Discard / Cancel for closing with unsaved changes."""
        # the name typed, else the stored one (a name emptied in the form is still that skill's)
        name = self.name_edit.text().strip() or (self.skill.name if self.skill is not None else "")
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Unsaved changes",
            f"Save your changes to “{name}” before closing?" if name else "Save the new skill before closing?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setDefaultButton(QMessageBox.StandardButton.Save)
        if self.session.issues:
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


def _describe(key: str) -> str:
    if key in ("domain", "body"):
        return "change the domain" if key == "domain" else "change the body type"
    if key == "raw":
        return "apply YAML"
    if key == "reload":
        return "reload from the library"
    last = key.rsplit(".", 1)[-1]
    if "[" in last:
        last = last.split("[", 1)[0]
    return "edit " + last.replace("_", " ")
