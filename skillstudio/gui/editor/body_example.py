"""The VerifiedExample editor: the prompt context and the response, as plain text."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from skillstudio.gui.editor.body_base import BodyEditor
from skillstudio.gui.editor.widgets import TextArea
from skillstudio.model import BodyKind, VerifiedExample


class VerifiedExampleEditor(BodyEditor):
    kind = BodyKind.VERIFIED_EXAMPLE
    title = "Verified example"

    def __init__(self, repository, parent: QWidget | None = None) -> None:  # type: ignore[no-untyped-def]
        super().__init__(repository, parent)
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

    @classmethod
    def default_body(cls) -> VerifiedExample:
        return VerifiedExample("", "")

    def state(self) -> dict[str, Any]:
        return {"prompt_context": self.prompt.text(), "response": self.response.text()}

    def _show(self, state: dict[str, Any]) -> None:
        self.prompt.set_text(state.get("prompt_context") or "")
        self.response.set_text(state.get("response") or "")
