"""The EncounterPattern editor: an ordered list of scene instances and mission-structure hints.

Scene parameter values are free JSON (a scalar, a list or a map), typed here as YAML flow text
(``north_bridge``, ``300``, ``[reduced_vision]``, ``{center: [42, 31], radius: 4}``). The editor
form keeps that text as typed, so a value that does not parse yet survives undo and redo;
the problem is reported at the parameter's path.
"""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from skillstudio.curation.form import EncounterForm, HintsForm, SceneForm
from skillstudio.gui.browser_state import BrowserState
from skillstudio.gui.editor.body_base import BodyEditor
from skillstudio.gui.editor.widgets import (
    INVALID_BACKGROUND,
    Column,
    Located,
    RowTable,
    TextArea,
    TokenLineEdit,
)
from skillstudio.model import BodyKind, Issue
from skillstudio.model.vocabulary import DIFFICULTIES, scene_template, template_ids

SCENES = "body.scene_composition"
HINTS = "body.mission_structure"
MISSION_TYPES = ("assault", "defend", "escort", "extraction", "infiltration", "survival", "base_building")
FACTIONS = ("allies", "soviet", "gdi", "nod")
_SCENE_PATH = re.compile(r"^body\.scene_composition\[(\d+)\](?:\.(.*))?$")


# --- the editor -----------------------------------------------------------------------------------


class EncounterPatternEditor(BodyEditor):
    kind = BodyKind.ENCOUNTER_PATTERN
    title = "Encounter pattern"

    def __init__(self, state: BrowserState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self._scenes: list[dict[str, Any]] = []
        self._current = -1
        self._issues: list[Issue] = []
        self.tabs = QTabWidget(self)
        self.tabs.addTab(self._scenes_page(), "Sce&nes")
        self.tabs.addTab(self._structure_page(), "M&ission structure")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)

    # --- pages ----------------------------------------------------------------------------------

    def _scenes_page(self) -> QWidget:
        page = QWidget(self)
        self.scene_list = QListWidget(page)
        self.scene_list.setMinimumWidth(220)
        self.scene_list.setSpacing(2)
        self.scene_list.currentRowChanged.connect(self._select_scene)
        list_label = QLabel("Scene &list (in order)", page)
        list_label.setBuddy(self.scene_list)
        self.new_template = QComboBox(page)
        self.new_template.addItems(template_ids())
        self.new_template.setToolTip("The template of the scene to add")
        self.new_template.setAccessibleName("Template of the new scene")
        self.add_scene_button = QPushButton("&Add scene", page)
        self.add_scene_button.clicked.connect(lambda: self.add_scene(self.new_template.currentText()))
        self.remove_scene_button = QPushButton("Remove", page)
        self.remove_scene_button.setToolTip("Remove the selected scene")
        self.remove_scene_button.clicked.connect(self.remove_scene)
        self.up_scene_button = QToolButton(page)
        self.up_scene_button.setArrowType(Qt.ArrowType.UpArrow)
        self.up_scene_button.setToolTip("Move the scene earlier")
        self.up_scene_button.setAccessibleName("Move scene up")
        self.up_scene_button.clicked.connect(lambda: self.move_scene(-1))
        self.down_scene_button = QToolButton(page)
        self.down_scene_button.setArrowType(Qt.ArrowType.DownArrow)
        self.down_scene_button.setToolTip("Move the scene later")
        self.down_scene_button.setAccessibleName("Move scene down")
        self.down_scene_button.clicked.connect(lambda: self.move_scene(1))
        add_row = QHBoxLayout()
        add_row.addWidget(self.new_template, 1)
        add_row.addWidget(self.add_scene_button)
        move_row = QHBoxLayout()
        move_row.addWidget(self.remove_scene_button)
        move_row.addStretch(1)
        move_row.addWidget(self.up_scene_button)
        move_row.addWidget(self.down_scene_button)
        left = QVBoxLayout()
        left.addWidget(list_label)
        left.addWidget(self.scene_list, 1)
        left.addLayout(move_row)
        left.addLayout(add_row)

        self.detail = QGroupBox("Scene", page)
        self.template = QComboBox(self.detail)
        self.template.setEditable(True)
        self.template.addItems(template_ids())
        self.template.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.template.setToolTip("A scene template id: one of the 14 built-in templates, or a mod's own")
        self.template.editTextChanged.connect(self._template_edited)
        self.template_hint = QLabel(self.detail)
        self.template_hint.setWordWrap(True)
        self.template_hint.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.values = RowTable(
            [
                Column("name", "Parameter", width=170),
                Column("value", "Value (YAML: text, number, [list] or {map})", kind="yaml"),
            ],
            self.detail,
            add_label="Add parameter",
            new_row=self._new_parameter_row,
            visible_rows=6,
        )
        self.values.set_completion_source(self._parameter_completions)
        self.values.edited.connect(self._values_edited)
        self.fill_button = QPushButton("Add all &known parameters", self.detail)
        self.fill_button.setToolTip("Add a row for each parameter of the template not set yet (value null)")
        self.fill_button.clicked.connect(self.add_known_parameters)
        self.values.button_row.insertWidget(2, self.fill_button)
        values_label = QLabel("&Parameter values", self.detail)
        values_label.setBuddy(self.values.table)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        form.addRow("&Template:", self.template)
        detail_layout = QVBoxLayout(self.detail)
        detail_layout.addLayout(form)
        detail_layout.addWidget(self.template_hint)
        detail_layout.addWidget(values_label)
        detail_layout.addWidget(self.values, 1)

        layout = QHBoxLayout(page)
        layout.addLayout(left, 2)
        layout.addWidget(self.detail, 5)
        self.paths.add(SCENES, self.scene_list)
        self._update_detail()
        return page

    def _structure_page(self) -> QWidget:
        page = QWidget(self)
        self.mission_type = _suggesting_combo(page, MISSION_TYPES, "e.g. defend, escort, assault")
        self.faction = _suggesting_combo(page, FACTIONS, "e.g. allies, soviet")
        self.difficulty = _suggesting_combo(page, DIFFICULTIES, "sandbox … brutal, or a Workshop difficulty id")
        self.minutes = QSpinBox(page)
        self.minutes.setRange(0, 1440)
        self.minutes.setSuffix(" min")
        self.minutes.setSpecialValueText("not set")
        self.minutes.setToolTip("Estimated play time in minutes (1–1440); 0 leaves it unset")
        self.objectives = TextArea(page, min_lines=4)
        self.objectives.setPlaceholderText("One objective per line")
        self.outcomes = TokenLineEdit(page, completions=("victory", "defeat", "partial_victory"))
        self.outcomes.setPlaceholderText("named outcomes, comma-separated, e.g. victory, defeat")
        self.notes = TextArea(page, min_lines=4)
        form = QFormLayout(page)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        form.addRow("Mission t&ype:", self.mission_type)
        form.addRow("Player &faction:", self.faction)
        form.addRow("Diffi&culty:", self.difficulty)
        form.addRow("Estimated d&uration:", self.minutes)
        form.addRow("&Objectives:", self.objectives)
        form.addRow("Ou&tcomes:", self.outcomes)
        form.addRow("Not&es:", self.notes)
        for combo, key in (
            (self.mission_type, "mission_type"),
            (self.faction, "player_faction"),
            (self.difficulty, "difficulty"),
        ):
            combo.editTextChanged.connect(lambda _t, key=key: self._emit(f"{HINTS}.{key}", True))
            self.paths.add(f"{HINTS}.{key}", combo)
        self.minutes.valueChanged.connect(lambda _v: self._emit(f"{HINTS}.estimated_minutes", True))
        self._watch_text(self.objectives, f"{HINTS}.objectives")
        self._watch_line(self.outcomes, f"{HINTS}.outcomes")
        self._watch_text(self.notes, f"{HINTS}.notes")
        self.paths.add(f"{HINTS}.estimated_minutes", self.minutes)
        self.paths.add(f"{HINTS}.objectives", self.objectives)
        self.paths.add(f"{HINTS}.outcomes", self.outcomes)
        self.paths.add(f"{HINTS}.notes", self.notes)
        self.paths.add(HINTS, self.mission_type)
        return page

    # --- scenes -----------------------------------------------------------------------------------

    def scene_count(self) -> int:
        return len(self._scenes)

    def current_scene(self) -> int:
        return self._current

    def add_scene(self, template: str) -> None:
        known = scene_template(template)
        rows = [[name, "null"] for name in known.parameter_names] if known else []
        self._scenes.append({"template": template, "values": rows})
        self._render_list(select=len(self._scenes) - 1)
        self._emit(SCENES)

    def add_known_parameters(self) -> None:
        if self._current < 0:
            return
        known = scene_template(self._scenes[self._current]["template"])
        if known is None:
            return
        rows = self.values.texts()
        have = {row[0].strip() for row in rows}
        rows += [[name, "null"] for name in known.parameter_names if name not in have]
        self.values.set_rows(rows)
        self._values_edited()

    def remove_scene(self) -> None:
        if not 0 <= self._current < len(self._scenes):
            return
        del self._scenes[self._current]
        self._render_list(select=min(self._current, len(self._scenes) - 1))
        self._emit(SCENES)

    def move_scene(self, step: int) -> None:
        index, target = self._current, self._current + step
        if not (0 <= index < len(self._scenes) and 0 <= target < len(self._scenes)):
            return
        self._scenes[index], self._scenes[target] = self._scenes[target], self._scenes[index]
        self._render_list(select=target)
        self._emit(SCENES)

    def select_scene(self, index: int) -> None:
        self.scene_list.setCurrentRow(index)

    def _render_list(self, select: int) -> None:
        self.scene_list.blockSignals(True)
        self.scene_list.clear()
        for index, scene in enumerate(self._scenes):
            template = scene["template"].strip()
            known = scene_template(template)
            label = f"{index + 1}.  {template or '(no template)'}"
            if known is None:
                label += "  (unknown template)"
            item = QListWidgetItem(label)
            item.setToolTip(known.summary if known else "Not one of the 14 built-in scene templates")
            self.scene_list.addItem(item)
        self.scene_list.blockSignals(False)
        self._current = select if 0 <= select < len(self._scenes) else -1
        if self._current >= 0:
            self.scene_list.blockSignals(True)
            self.scene_list.setCurrentRow(self._current)
            self.scene_list.blockSignals(False)
        self._update_detail()
        self._mark_scene_list()

    def _select_scene(self, row: int) -> None:
        self._current = row
        self._update_detail()

    def _update_detail(self) -> None:
        scene = self._scenes[self._current] if 0 <= self._current < len(self._scenes) else None
        self.detail.setEnabled(scene is not None)
        for button in (self.remove_scene_button, self.up_scene_button, self.down_scene_button):
            button.setEnabled(scene is not None)
        was_loading, self._loading = self._loading, True
        try:
            if scene is None:
                self.detail.setTitle("No scene selected")
                self.template.setEditText("")
                self.values.set_rows([])
            else:
                self.detail.setTitle(f"Scene {self._current + 1}")
                if self.template.currentText() != scene["template"]:
                    self.template.setEditText(scene["template"])
                self.values.set_rows(scene["values"])
        finally:
            self._loading = was_loading
        self._update_template_hint()
        self._remark()

    def _update_template_hint(self) -> None:
        if self._current < 0:
            self.template_hint.setText("Add a scene with the template chooser below the list.")
            self.fill_button.setEnabled(False)
            return
        known = scene_template(self.template.currentText())
        self.fill_button.setEnabled(known is not None)
        if known is None:
            self.template_hint.setText(
                "Not one of the 14 built-in templates; a mod may define it. Parameter names are not suggested."
            )
            return
        parts = []
        for parameter in known.parameters:
            text = f"<code>{parameter.label}</code>"
            if parameter.options:
                text += " (" + "/".join(parameter.options) + ")"
            parts.append(text)
        self.template_hint.setText(f"{known.summary}. Parameters: " + ", ".join(parts))

    def _template_edited(self, text: str) -> None:
        if self._loading or not 0 <= self._current < len(self._scenes):
            return
        self._scenes[self._current]["template"] = text
        item = self.scene_list.item(self._current)
        known = scene_template(text)
        item.setText(
            f"{self._current + 1}.  {text.strip() or '(no template)'}" + ("" if known else "  (unknown template)")
        )
        self._update_template_hint()
        self._emit(f"{SCENES}[{self._current}].template", True)

    def _values_edited(self) -> None:
        if self._loading or not 0 <= self._current < len(self._scenes):
            return
        self._scenes[self._current]["values"] = self.values.texts()
        self._emit(f"{SCENES}[{self._current}].values")

    def _parameter_completions(self, row: int, column: int) -> list[str]:
        if column != 0 or self._current < 0:
            return []
        known = scene_template(self._scenes[self._current]["template"])
        return list(known.parameter_names) if known else []

    def _new_parameter_row(self) -> list[str]:
        used = {row[0].strip() for row in self.values.texts()}
        names = self._parameter_completions(0, 0)
        return [next((n for n in names if n not in used), ""), "null"]

    # --- the form -------------------------------------------------------------------------------

    def form(self) -> EncounterForm:
        return EncounterForm(
            scene_composition=tuple(
                SceneForm(scene["template"], tuple((name, text) for name, text in scene["values"]))
                for scene in self._scenes
            ),
            mission_structure=HintsForm(
                mission_type=self.mission_type.currentText(),
                player_faction=self.faction.currentText(),
                difficulty=self.difficulty.currentText(),
                estimated_minutes=self.minutes.value(),
                objectives=_lines(self.objectives.text()),
                outcomes=tuple(self.outcomes.tokens()),
                notes=self.notes.text(),
            ),
        )

    def _show(self, form: EncounterForm) -> None:
        # The editor keeps the scenes as mutable rows while they are edited; the form is a copy.
        scenes = [
            {"template": scene.template, "values": [[name, text] for name, text in scene.values]}
            for scene in form.scene_composition
        ]
        if scenes != self._scenes:
            self._scenes = scenes
            keep = self._current if 0 <= self._current < len(scenes) else (0 if scenes else -1)
            self._render_list(select=keep)
        hints = form.mission_structure
        for combo, text in (
            (self.mission_type, hints.mission_type),
            (self.faction, hints.player_faction),
            (self.difficulty, hints.difficulty),
        ):
            if combo.currentText() != text:
                combo.setEditText(text)
        if hints.estimated_minutes != self.minutes.value():
            self.minutes.setValue(hints.estimated_minutes)
        if _lines(self.objectives.text()) != hints.objectives:
            self.objectives.set_text("\n".join(hints.objectives))
        self.outcomes.set_tokens(hints.outcomes)
        self.notes.set_text(hints.notes)

    # --- issues ---------------------------------------------------------------------------------

    def locate(self, path: str) -> Located | None:
        match = _SCENE_PATH.match(path)
        if match is None:
            return self.paths.locate(path)
        index, rest = int(match.group(1)), match.group(2) or ""
        if index != self._current:
            return Located(self.scene_list)
        if rest == "template" or rest.startswith("template."):
            return Located(self.template)
        if rest.startswith("values"):
            tail = rest[len("values") :]
            row_match = re.match(r"^\[(\d+)\]", tail)
            if row_match:
                return Located(self.values.table, self.values, int(row_match.group(1)), 0)
            name = tail.lstrip(".").split(".", 1)[0].split("[", 1)[0]
            if name:
                for row, (row_name, _text) in enumerate(self.values.texts()):
                    if row_name.strip() == name:
                        return Located(self.values.table, self.values, row, 1)
            return Located(self.values.table, self.values)
        return Located(self.scene_list)

    def prepare_focus(self, path: str) -> None:
        match = _SCENE_PATH.match(path)
        if match is not None:
            index = int(match.group(1))
            self.tabs.setCurrentIndex(0)
            if index != self._current and 0 <= index < len(self._scenes):
                self.select_scene(index)

    def show_issues(self, issues: list[Issue]) -> None:
        self._issues = list(issues)
        self._remark()

    def _remark(self) -> None:
        # The scene list item stands for its scene; only the shown scene's cells can be tinted.
        other, current = [], []
        for issue in self._issues:
            match = _SCENE_PATH.match(issue.path)
            if match is None:
                other.append(issue)
            elif int(match.group(1)) == self._current:
                current.append(issue)
        self._marker.apply(other + current, self.locate)
        self._mark_scene_list()

    def _mark_scene_list(self) -> None:
        bad: dict[int, list[str]] = {}
        for issue in self._issues:
            match = _SCENE_PATH.match(issue.path)
            if match:
                bad.setdefault(int(match.group(1)), []).append(str(issue))
        for row in range(self.scene_list.count()):
            item = self.scene_list.item(row)
            messages = bad.get(row)
            item.setBackground(QBrush(INVALID_BACKGROUND) if messages else QBrush())
            known = scene_template(self._scenes[row]["template"]) if row < len(self._scenes) else None
            base = known.summary if known else "Not one of the 14 built-in scene templates"
            item.setToolTip("\n".join(messages) if messages else base)
            item.setForeground(QBrush(QColor("#9a3412")) if known is None else QBrush())


def _lines(text: str) -> tuple[str, ...]:
    return tuple(line.strip() for line in text.splitlines() if line.strip())


def _suggesting_combo(parent: QWidget, words: tuple[str, ...], placeholder: str) -> QComboBox:
    combo = QComboBox(parent)
    combo.setEditable(True)
    combo.addItems(["", *words])
    combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
    line = combo.lineEdit()
    assert line is not None  # an editable combo has one
    line.setPlaceholderText(placeholder)
    combo.setMinimumContentsLength(18)
    return combo
