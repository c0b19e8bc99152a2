"""The editor's read-only panel: where the skill comes from (provenance, refinements) and what
verification found (quality). It follows the session's base: the skill as the library holds it."""

from __future__ import annotations

from datetime import datetime
from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFormLayout, QGroupBox, QLabel, QVBoxLayout, QWidget

from skillstudio.curation.session import EditSession
from skillstudio.gui.browser_state import BrowserState
from skillstudio.gui.editor.page_base import EditorPage, subscribe
from skillstudio.gui.editor.widgets import fixed_font
from skillstudio.model import Skill, SourceKind
from skillstudio.store import LibraryError, SkillRepository

SOURCE_TEXT = {
    SourceKind.LLM_DISCOVERED: "Discovered by an LLM",
    SourceKind.HAND_AUTHORED: "Hand-authored",
    SourceKind.WORKSHOP: "Imported from Workshop",
    SourceKind.HUMAN_REFINED: "Human refinement",
}


def when(timestamp: str | None) -> str:
    if not timestamp:
        return "—"
    try:
        moment = datetime.fromisoformat(timestamp).astimezone()  # Python 3.11 reads the Z
    except ValueError:
        return timestamp
    return moment.strftime("%Y-%m-%d %H:%M")


def skill_link(repository: SkillRepository | None, skill_id: str | None) -> str:
    """A ``skill:`` link named after the skill, or its id when the library no longer has it."""
    if not skill_id:
        return "—"
    try:
        summaries = repository.summaries([skill_id]) if repository is not None else []
    except LibraryError:
        summaries = []
    if summaries:
        return f"<a href='skill:{escape(skill_id)}'>{escape(summaries[0].name, quote=False)}</a>"
    return f"{escape(skill_id, quote=False)} <i>(no longer in this library)</i>"


class ProvenancePage(EditorPage):
    """``open_skill_requested(id)``: the person clicked a link to another skill."""

    open_skill_requested = Signal(str)

    def __init__(self, state: BrowserState, session: EditSession, parent: QWidget | None = None) -> None:
        super().__init__(state, session, parent)
        self.provenance_box = QGroupBox("Provenance (read-only)", self)
        self.provenance_form = QFormLayout(self.provenance_box)
        self.quality_box = QGroupBox("Quality (read-only: it comes from verification)", self)
        self.quality_form = QFormLayout(self.quality_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.provenance_box)
        layout.addWidget(self.quality_box)
        layout.addStretch(1)
        subscribe(self, session.events.base, self._base_changed)
        self._base_changed(session.skill)

    def link(self, href: str) -> None:
        if href.startswith("skill:"):
            self.open_skill_requested.emit(href[len("skill:") :])

    def _row(self, form: QFormLayout, label: str, text: str, *, rich: bool = False, tooltip: str = "") -> QLabel:
        value = QLabel(text if rich else escape(text, quote=False))
        value.setTextFormat(Qt.TextFormat.RichText)
        value.setWordWrap(True)
        flags = Qt.TextInteractionFlag.TextSelectableByMouse
        if "<a " in text:  # only links are Tab stops; plain values are not
            flags |= Qt.TextInteractionFlag.LinksAccessibleByMouse | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
        value.setTextInteractionFlags(flags)
        value.setToolTip(tooltip)
        value.linkActivated.connect(self.link)
        form.addRow(label, value)
        return value

    def _base_changed(self, _skill: Skill | None) -> None:
        session = self.session
        repository = self.state.repository
        doc = session.base_document
        provenance = doc["provenance"]
        quality = doc["quality"]
        source = SourceKind(provenance["source"])
        for form in (self.provenance_form, self.quality_form):
            while form.rowCount():
                form.removeRow(0)
        row = self._row
        row(self.provenance_form, "Source:", SOURCE_TEXT[source] + (" (new, not saved yet)" if session.is_new else ""))
        if source is SourceKind.WORKSHOP:
            row(self.provenance_form, "Package:", provenance.get("source_id") or "—")
            row(self.provenance_form, "Author:", provenance.get("author") or "—")
        if source is SourceKind.HUMAN_REFINED:
            row(self.provenance_form, "Refines:", skill_link(repository, provenance.get("original_id")), rich=True)
        row(self.provenance_form, "Model:", provenance.get("model_id") or "—", tooltip="The LLM that produced it")
        row(self.provenance_form, "Created by:", doc.get("created_by") or "unknown")
        row(self.provenance_form, "Created:", when(doc.get("created_at")), tooltip=doc.get("created_at") or "")
        row(self.provenance_form, "Id:", doc["id"]).setFont(fixed_font())
        if not session.is_new:
            refinements = self._refinements(repository, doc["id"])
            if refinements:
                row(self.provenance_form, "Refined by:", refinements, rich=True)

        rating = quality.get("average_rating")
        rate = quality.get("success_rate") or 0.0
        row(self.quality_form, "Confidence:", str(quality.get("confidence", "tentative")).capitalize())
        row(self.quality_form, "Verifications:", str(quality.get("verification_count", 0)))
        row(self.quality_form, "Success rate:", f"{rate * 100:.0f} %")
        row(self.quality_form, "Average rating:", "—" if rating is None else f"{rating:.2f} / 5")
        verified = quality.get("last_verified")
        row(self.quality_form, "Last verified:", when(verified), tooltip=verified or "")
        row(self.quality_form, "Uses:", f"{doc.get('use_count', 0)}, last {when(doc.get('last_used'))}")
        review = doc.get("review_state")
        row(self.quality_form, "Review:", review.replace("_", " ") if review else "not reviewed")

    @staticmethod
    def _refinements(repository: SkillRepository | None, skill_id: str) -> str:
        if repository is None:
            return ""
        try:
            summaries = repository.summaries(repository.refinements_of(skill_id))
        except LibraryError:
            return ""
        return ", ".join(f"<a href='skill:{escape(s.id)}'>{escape(s.name, quote=False)}</a>" for s in summaries)
