"""The VerifiedExample editor: the prompt context and the response, as plain text."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from skillstudio.curation.form import ExampleForm
from skillstudio.gui.browser_state import BrowserState
from skillstudio.gui.editor.body_base import BodyEditor
from skillstudio.gui.editor.widgets import TextArea
from skillstudio.model import BodyKind


class VerifiedExampleEditor(BodyEditor):
    kind = BodyKind.VERIFIED_EXAMPLE
    title = "Verified example"

    def __init__(self, state: BrowserState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        intro = QLabel(
            "A prompt and the reply that produced a verified good result; future consultations get "
            "it as a few-shot example.",
            self,
        )
        intro.setWordWrap(True)
        self.prompt = TextArea(self, min_lines=5)
        self.prompt.setPlaceholderText("The prompt context the model was given")
        self.response = TextArea(self, fixed=True, min_lines=5)
        self.response.setPlaceholderText("The model's response, exactly as it was verified")
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        for label_text, editor in (("&Prompt context", self.prompt), ("Respo&nse", self.response)):
            box = QWidget(splitter)
            label = QLabel(label_text, box)
            label.setBuddy(editor)
            editor.setParent(box)
            layout = QVBoxLayout(box)
            layout.setContentsMargins(0, 0, 0, 0)
            layout.addWidget(label)
            layout.addWidget(editor, 1)
            splitter.addWidget(box)
        splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(splitter, 1)
        self._watch_text(self.prompt, "body.prompt_context")
        self._watch_text(self.response, "body.response")
        self.paths.add("body.prompt_context", self.prompt)
        self.paths.add("body.response", self.response)

    def form(self) -> ExampleForm:
        return ExampleForm(self.prompt.text(), self.response.text())

    def _show(self, form: ExampleForm) -> None:
        self.prompt.set_text(form.prompt_context)
        self.response.set_text(form.response)
