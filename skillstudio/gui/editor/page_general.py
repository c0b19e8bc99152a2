"""The editor's General page: name, domain and body type, game module, tags, description and
the skills it composes with."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QComboBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QWidget

from skillstudio.curation.form import KIND_ORDER, FormState
from skillstudio.curation.session import EditSession, FormChange, Validation
from skillstudio.gui.browser_state import BrowserState
from skillstudio.gui.editor.page_base import EditorPage, subscribe
from skillstudio.gui.editor.page_body import BODY_EDITORS
from skillstudio.gui.editor.widgets import (
    EnumCombo,
    Located,
    Marker,
    PathMap,
    SkillRefPicker,
    TextArea,
    TokenLineEdit,
    label_of,
)
from skillstudio.model import BodyKind, Domain, Skill
from skillstudio.model.skill import BODIES_BY_DOMAIN
from skillstudio.store import LibraryError


class GeneralPage(EditorPage):
    """``kind_chosen(kind)`` fires when the person picks another body type (or a domain that
    forces one), before the edit is reported: the body page shows that kind's editor."""

    kind_chosen = Signal(object)  # BodyKind

    def __init__(self, state: BrowserState, session: EditSession, parent: QWidget | None = None) -> None:
        super().__init__(state, session, parent)
        self._showing = False
        self._paths = PathMap()
        self._marker = Marker()

        self.name_edit = QLineEdit(self)
        self.name_edit.setPlaceholderText("A short, human-readable name")
        self.domain_combo = EnumCombo(Domain, self, serde=False)
        self.domain_combo.setItemText(0, "AI strategy")
        self.domain_combo.setItemText(1, "Content generation")
        self.kind_combo = QComboBox(self)
        for kind in KIND_ORDER:
            self.kind_combo.addItem(BODY_EDITORS[kind].title, kind.value)
        self.module_combo = QComboBox(self)
        self.module_combo.setEditable(True)
        self.module_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.module_combo.addItems(sorted({"ra1", "td", *self._known_modules()}))
        self.module_combo.setToolTip(
            "The game module the skill is for: ra1 (Red Alert), td (Tiberian Dawn), a mod's id"
        )
        self.engine_edit = QLineEdit(self)
        self.engine_edit.setPlaceholderText("e.g. 0.5.0")
        self.engine_edit.setToolTip("The engine version the skill was made with or checked against")
        self.tags_edit = TokenLineEdit(self)
        self.tags_edit.setPlaceholderText("comma-separated, e.g. anti-air, early-game")
        self.load_tag_completions()
        self.description_edit = TextArea(self, min_lines=5)
        self.description_edit.setPlaceholderText(
            "What the skill does and when it applies; retrieval searches this text"
        )
        self.composable = SkillRefPicker(state, self)

        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("&Name:", self.name_edit)
        kind_row = QHBoxLayout()
        kind_row.addWidget(self.domain_combo, 1)
        kind_label = QLabel("Bod&y type:", self)
        kind_label.setBuddy(self.kind_combo)
        kind_row.addSpacing(12)
        kind_row.addWidget(kind_label)
        kind_row.addWidget(self.kind_combo, 1)
        form.addRow("&Domain:", kind_row)
        label_of(form, kind_row).setBuddy(self.domain_combo)
        module_row = QHBoxLayout()
        module_row.addWidget(self.module_combo, 1)
        engine_label = QLabel("&Engine version:", self)
        engine_label.setBuddy(self.engine_edit)
        module_row.addSpacing(12)
        module_row.addWidget(engine_label)
        module_row.addWidget(self.engine_edit, 1)
        form.addRow("Game m&odule:", module_row)
        label_of(form, module_row).setBuddy(self.module_combo)
        form.addRow("&Tags:", self.tags_edit)
        form.addRow("Descr&iption:", self.description_edit)
        form.addRow("&Composable with:", self.composable)
        label_of(form, self.composable).setBuddy(self.composable.search)

        self.name_edit.textEdited.connect(lambda _t: self._edited("name", True))
        self.description_edit.textChanged.connect(lambda: self._edited("description", True))
        self.domain_combo.currentIndexChanged.connect(self._domain_changed)
        self.kind_combo.currentIndexChanged.connect(self._kind_changed)
        self.module_combo.editTextChanged.connect(lambda _t: self._edited("provenance.game_module", True))
        self.engine_edit.textEdited.connect(lambda _t: self._edited("provenance.engine_version", True))
        self.tags_edit.textEdited.connect(lambda _t: self._edited("tags", True))
        self.composable.edited.connect(lambda: self._edited("composable_with"))
        self.composable.search.setProperty("own_undo", True)  # a search box, not part of the skill
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

        subscribe(self, session.events.base, self._base_changed)
        subscribe(self, session.events.form, self._form_changed)
        subscribe(self, session.events.validated, self._validated)
        self._base_changed(session.skill)
        self.show_form(session.form)
        self._validated(session.validation)

    # --- reading and showing the form ----------------------------------------------------------

    def read(self, form: FormState) -> FormState:
        """``form`` with this page's fields as the widgets show them (the body is not here)."""
        return replace(
            form,
            name=self.name_edit.text(),
            description=self.description_edit.text(),
            domain=Domain(self.domain_combo.value()),
            game_module=self.module_combo.currentText(),
            engine_version=self.engine_edit.text(),
            tags=tuple(self.tags_edit.tokens()),
            composable_with=tuple(self.composable.ids()),
        )

    def kind(self) -> BodyKind:
        return BodyKind(self.kind_combo.currentData())

    def show_form(self, form: FormState) -> None:
        if self.read(form) == form and self.kind() is form.body_kind:
            return  # the widgets show it already (e.g. the person's own edit): keep their text
        self._showing = True
        try:
            if self.name_edit.text() != form.name:
                self.name_edit.setText(form.name)
            self.description_edit.set_text(form.description)
            self.domain_combo.set_value(form.domain.value)
            index = self.kind_combo.findData(form.body_kind.value)
            if index != self.kind_combo.currentIndex():
                self.kind_combo.setCurrentIndex(index)
            if self.module_combo.currentText() != form.game_module:
                self.module_combo.setEditText(form.game_module)
            if self.engine_edit.text() != form.engine_version:
                self.engine_edit.setText(form.engine_version)
            self.tags_edit.set_tokens(form.tags)
            self.composable.set_ids(form.composable_with)
        finally:
            self._showing = False
        self._update_kind_choices()

    def _form_changed(self, change: FormChange) -> None:
        self.show_form(change.after)

    def _edited(self, key: str, mergeable: bool = False) -> None:
        if not self._showing:
            self.edited.emit(key, mergeable)

    # --- the session's other news --------------------------------------------------------------

    def _base_changed(self, _skill: Skill | None) -> None:
        self.composable.exclude_id = self.session.skill_id
        self._update_kind_choices()

    def _validated(self, validation: Validation) -> None:
        self._marker.apply([i for i in validation.issues if not i.path.startswith("body.")], self.locate)

    def locate(self, path: str) -> Located | None:
        return self._paths.locate(path)

    def load_tag_completions(self) -> None:
        repository = self.state.repository
        if repository is None:
            return
        try:
            counts = repository.facets.tag_counts()
        except LibraryError:
            return
        self.tags_edit.set_completions(sorted(counts, key=lambda tag: (-counts[tag], tag)))

    def _known_modules(self) -> list[str]:
        repository = self.state.repository
        try:
            return repository.facets.game_modules() if repository is not None else []
        except LibraryError:
            return []

    # --- domain and body type ------------------------------------------------------------------

    def _update_kind_choices(self) -> None:
        """A new skill may take any body its domain allows; a stored skill keeps its body type,
        so only the domains that allow that body are offered."""
        is_new = self.session.is_new
        domain = Domain(self.domain_combo.value())
        kind = self.kind()
        kind_model, domain_model = self.kind_combo.model(), self.domain_combo.model()
        assert isinstance(kind_model, QStandardItemModel) and isinstance(domain_model, QStandardItemModel)
        for row, candidate in enumerate(KIND_ORDER):
            kind_model.item(row).setEnabled(candidate in BODIES_BY_DOMAIN[domain])
        for row in range(self.domain_combo.count()):
            other = Domain(self.domain_combo.itemData(row))
            domain_model.item(row).setEnabled(is_new or kind in BODIES_BY_DOMAIN[other])
        self.kind_combo.setEnabled(is_new)
        self.kind_combo.setToolTip(
            "The kind of body; the domain decides which kinds are allowed"
            if is_new
            else "A stored skill keeps its body type (the Raw YAML tab can still change it)"
        )

    def _domain_changed(self, _index: int) -> None:
        if self._showing:
            return
        domain = Domain(self.domain_combo.value())
        if self.kind() not in BODIES_BY_DOMAIN[domain]:
            allowed = [kind for kind in KIND_ORDER if kind in BODIES_BY_DOMAIN[domain]]
            self._showing = True
            try:
                self.kind_combo.setCurrentIndex(self.kind_combo.findData(allowed[0].value))
            finally:
                self._showing = False
            self.kind_chosen.emit(allowed[0])
        self._update_kind_choices()
        self._edited("domain")

    def _kind_changed(self, _index: int) -> None:
        if self._showing:
            return
        self.kind_chosen.emit(self.kind())
        self._edited("body")
