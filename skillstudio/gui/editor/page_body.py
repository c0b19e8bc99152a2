"""The editor's Body page: the editor of the skill's body kind (one per kind, made when first
shown), above which the kind's name stands."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QPushButton, QStackedWidget, QVBoxLayout, QWidget

from skillstudio.curation.form import BodyForm, default_body_form
from skillstudio.curation.session import EditSession, FormChange, Validation
from skillstudio.gui.browser_state import BrowserState
from skillstudio.gui.editor.body_base import BodyEditor
from skillstudio.gui.editor.body_encounter import EncounterPatternEditor
from skillstudio.gui.editor.body_example import VerifiedExampleEditor
from skillstudio.gui.editor.body_instructions import InstructionsEditor
from skillstudio.gui.editor.body_strategic import StrategicPatternEditor
from skillstudio.gui.editor.page_base import EditorPage, subscribe
from skillstudio.gui.editor.widgets import Located
from skillstudio.model import BodyKind, Skill

BODY_EDITORS: dict[BodyKind, type[BodyEditor]] = {
    BodyKind.STRATEGIC_PATTERN: StrategicPatternEditor,
    BodyKind.ENCOUNTER_PATTERN: EncounterPatternEditor,
    BodyKind.VERIFIED_EXAMPLE: VerifiedExampleEditor,
    BodyKind.INSTRUCTIONS: InstructionsEditor,
}


class BodyPage(EditorPage):
    def __init__(self, state: BrowserState, session: EditSession, parent: QWidget | None = None) -> None:
        super().__init__(state, session, parent)
        self._editors: dict[BodyKind, BodyEditor] = {}
        self.body_title = QLabel(self)
        self.body_stack = QStackedWidget(self)
        layout = QVBoxLayout(self)
        layout.addWidget(self.body_title)
        layout.addWidget(self.body_stack, 1)
        subscribe(self, session.events.base, self._base_changed)
        subscribe(self, session.events.form, self._form_changed)
        subscribe(self, session.events.validated, self._validated)
        self.show_form(session.form.body)
        self._validated(session.validation)

    def editor(self, kind: BodyKind) -> BodyEditor:
        """The editor of ``kind``'s bodies; a new one starts with the kind's default body."""
        editor = self._editors.get(kind)
        if editor is None:
            editor = BODY_EDITORS[kind](self.state, self.body_stack)
            editor.show_form(default_body_form(kind))
            editor.changed.connect(self.edited)
            if isinstance(editor, InstructionsEditor):
                editor.references.exclude_id = self.session.skill_id
                editor.references.search.setProperty("own_undo", True)  # a search box, not the skill
            for button in editor.findChildren(QPushButton):  # in a dialog, Enter must not press them
                button.setAutoDefault(False)
                button.setDefault(False)
            self._editors[kind] = editor
            self.body_stack.addWidget(editor)
        return editor

    def show_kind(self, kind: BodyKind) -> None:
        editor = self.editor(kind)
        self.body_stack.setCurrentWidget(editor)
        self.body_title.setText(f"<b>{editor.title}</b>")

    def current_kind(self) -> BodyKind:
        current = self.body_stack.currentWidget()
        assert isinstance(current, BodyEditor)
        return current.kind

    def body_editor(self) -> BodyEditor:
        return self.editor(self.current_kind())

    def read(self) -> BodyForm:
        """The body the shown editor holds."""
        return self.body_editor().form()

    def show_form(self, body: BodyForm) -> None:
        self.show_kind(body.kind)
        editor = self.editor(body.kind)
        if editor.form() != body:  # else the widgets show it already: keep their text as typed
            editor.show_form(body)

    def _form_changed(self, change: FormChange) -> None:
        self.show_form(change.after.body)

    def _validated(self, validation: Validation) -> None:
        self.body_editor().show_issues([i for i in validation.issues if i.path.startswith("body.")])

    def _base_changed(self, _skill: Skill | None) -> None:
        for editor in self._editors.values():
            if isinstance(editor, InstructionsEditor):
                editor.references.exclude_id = self.session.skill_id

    def locate(self, path: str) -> Located | None:
        return self.body_editor().locate(path)

    def prepare_focus(self, path: str) -> None:
        self.body_editor().prepare_focus(path)
