"""The Instructions editor: markdown with a rendered preview, tools, model and references."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QFormLayout,
    QLabel,
    QLineEdit,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from skillstudio.curation.form import InstructionsForm
from skillstudio.gui.browser_state import BrowserState
from skillstudio.gui.editor.body_base import BodyEditor
from skillstudio.gui.editor.widgets import SkillRefPicker, TextArea, TokenLineEdit
from skillstudio.model import BodyKind

COMMON_TOOLS = ("Read", "Write", "Edit", "Grep", "Glob", "Bash", "WebFetch", "WebSearch")


class InstructionsEditor(BodyEditor):
    kind = BodyKind.INSTRUCTIONS
    title = "Instructions"

    def __init__(self, state: BrowserState, parent: QWidget | None = None, *, skill_id: str | None = None) -> None:
        super().__init__(state, parent)
        self.tools = TokenLineEdit(self, completions=COMMON_TOOLS)
        self.tools.setPlaceholderText("tool names, comma-separated; empty means every tool")
        self.model = QLineEdit(self)
        self.model.setPlaceholderText("optional: the model these instructions are written for")
        self.references = SkillRefPicker(state, self, exclude_id=skill_id)
        form = QFormLayout()
        form.addRow("&Tools:", self.tools)
        form.addRow("Mo&del:", self.model)
        form.addRow("Re&ferences:", self.references)

        self.markdown = TextArea(self, fixed=True, min_lines=8)
        self.markdown.setPlaceholderText("Markdown, injected into an agent's system prompt")
        self.preview = QTextBrowser(self)
        self.preview.setOpenExternalLinks(False)
        self.preview.setOpenLinks(False)
        self.preview.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        for label_text, widget in (("&Instructions (markdown)", self.markdown), ("Preview", self.preview)):
            box = QWidget(splitter)
            label = QLabel(label_text, box)
            if widget is self.markdown:
                label.setBuddy(widget)
            widget.setParent(box)
            layout = QVBoxLayout(box)
            layout.setContentsMargins(0, 0, 0, 0)
            layout.addWidget(label)
            layout.addWidget(widget, 1)
            splitter.addWidget(box)
        splitter.setChildrenCollapsible(False)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(splitter, 1)

        self._preview_timer = QTimer(self, singleShot=True, interval=200)
        self._preview_timer.timeout.connect(self.update_preview)
        self.markdown.textChanged.connect(self._preview_timer.start)
        self._watch_text(self.markdown, "body.instructions")
        self._watch_line(self.tools, "body.tools")
        self._watch_line(self.model, "body.model")
        self.references.edited.connect(lambda: self._emit("body.references"))
        self.paths.add("body.instructions", self.markdown)
        self.paths.add("body.tools", self.tools)
        self.paths.add("body.model", self.model)
        self.paths.add_picker("body.references", self.references)

    def update_preview(self) -> None:
        self._preview_timer.stop()
        self.preview.setMarkdown(self.markdown.text())

    def form(self) -> InstructionsForm:
        return InstructionsForm(
            self.markdown.text(), tuple(self.tools.tokens()), self.model.text(), tuple(self.references.ids())
        )

    def _show(self, form: InstructionsForm) -> None:
        self.markdown.set_text(form.instructions)
        self.tools.set_tokens(form.tools)
        if self.model.text() != form.model:
            self.model.setText(form.model)
        self.references.set_ids(form.references)
        self.update_preview()
