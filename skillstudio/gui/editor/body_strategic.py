"""The StrategicPattern editor: situation signature, strategic plan, parameter bindings."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from skillstudio.curation.form import (
    Cell,
    GuidanceForm,
    PlanForm,
    RiskForm,
    SituationForm,
    StrategicForm,
    TargetRow,
)
from skillstudio.gui.browser_state import BrowserState
from skillstudio.gui.editor.body_base import BodyEditor
from skillstudio.gui.editor.widgets import (
    Column,
    EnumCombo,
    ExactDoubleSpinBox,
    RowTable,
    TextArea,
    TokenLineEdit,
    label_of,
)
from skillstudio.model import (
    BodyKind,
    BuildFocus,
    EconomyState,
    GamePhase,
    TargetType,
    ThreatLevel,
    TimePressure,
)
from skillstudio.model.vocabulary import parameter_info, parameter_names

P = "body"
SITUATION = "body.situation"
PLAN = "body.plan"
GUIDANCE = "body.plan.economic_guidance"
RISK = "body.plan.risk_assessment"


def _composition_table(parent: QWidget, what: str) -> RowTable:
    return RowTable(
        [
            Column("0", "Unit type", tooltip=f"A unit type id in the {what}, e.g. rifle_infantry"),
            Column("1", "% of army", kind="int", width=90, tooltip="Share of the army in percent (0–100)"),
        ],
        parent,
        add_label="Add unit",
        new_row=lambda: ["", 10],
        visible_rows=4,
    )


class StrategicPatternEditor(BodyEditor):
    kind = BodyKind.STRATEGIC_PATTERN
    title = "Strategic pattern"

    def __init__(self, state: BrowserState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self.tabs = QTabWidget(self)
        self.tabs.addTab(self._situation_page(), "S&ituation")
        self.tabs.addTab(self._plan_page(), "&Plan")
        self.tabs.addTab(self._economy_page(), "Economy and ris&k")
        self.tabs.addTab(self._parameters_page(), "Parameter bi&ndings")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)

    # --- pages ----------------------------------------------------------------------------------

    def _situation_page(self) -> QWidget:
        page = QWidget(self)
        self.phase = EnumCombo(GamePhase, page)
        self.economy = EnumCombo(EconomyState, page)
        self.situation_threat = EnumCombo(ThreatLevel, page)
        self.map_control = ExactDoubleSpinBox(page)
        self.map_control.setRange(0.0, 1.0)
        self.map_control.setDecimals(2)
        self.map_control.setSingleStep(0.05)
        self.map_control.setToolTip("Share of the map under your control, 0.0–1.0")
        self.active_tech = TokenLineEdit(page)
        self.active_tech.setPlaceholderText("tech tiers, comma-separated, e.g. tier1, radar")
        self.army = _composition_table(page, "own army")
        self.enemy = _composition_table(page, "enemy's army")

        form = QFormLayout()

        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        form.addRow("Game ph&ase:", self.phase)
        form.addRow("&Economy:", self.economy)
        form.addRow("&Threat level:", self.situation_threat)
        form.addRow("Map &control:", self.map_control)
        form.addRow("Acti&ve tech:", self.active_tech)
        for combo in (self.phase, self.economy, self.situation_threat):
            combo.setSizeAdjustPolicy(combo.SizeAdjustPolicy.AdjustToContents)

        army_label = QLabel("Army c&omposition", page)
        army_label.setBuddy(self.army.table)
        enemy_label = QLabel("Enem&y composition estimate", page)
        enemy_label.setBuddy(self.enemy.table)
        tables = QGridLayout()
        tables.addWidget(army_label, 0, 0)
        tables.addWidget(enemy_label, 0, 1)
        tables.addWidget(self.army, 1, 0)
        tables.addWidget(self.enemy, 1, 1)

        layout = QVBoxLayout(page)
        layout.addLayout(form)
        layout.addSpacing(6)
        layout.addLayout(tables, 1)

        for combo, key in (
            (self.phase, "game_phase"),
            (self.economy, "economy_state"),
            (self.situation_threat, "threat_level"),
        ):
            combo.currentIndexChanged.connect(lambda _i, key=key: self._emit(f"{SITUATION}.{key}"))
            self.paths.add(f"{SITUATION}.{key}", combo)
        self.map_control.valueChanged.connect(lambda _v: self._emit(f"{SITUATION}.map_control", True))
        self.paths.add(f"{SITUATION}.map_control", self.map_control)
        self._watch_line(self.active_tech, f"{SITUATION}.active_tech")
        self.paths.add(f"{SITUATION}.active_tech", self.active_tech)
        for table, key in ((self.army, "army_composition"), (self.enemy, "enemy_composition_estimate")):
            table.edited.connect(lambda key=key: self._emit(f"{SITUATION}.{key}"))
            self.paths.add_table(f"{SITUATION}.{key}", table)
        return page

    def _plan_page(self) -> QWidget:
        page = QWidget(self)
        self.build_focus = EnumCombo(BuildFocus, page)
        self.confidence = QSpinBox(page)
        self.confidence.setRange(0, 1000)
        self.confidence.setSingleStep(50)
        self.confidence.setToolTip("D044's fixed-point confidence: 0–1000 (1000 = certain)")
        self.confidence_hint = QLabel(page)
        self.confidence.valueChanged.connect(lambda v: self.confidence_hint.setText(f"= {v / 10:g} %"))
        self.targets = RowTable(
            [
                Column(
                    "target_type",
                    "Type",
                    kind="choice",
                    width=110,
                    choices=tuple((t.serde, t.label) for t in TargetType),
                    default=TargetType.ATTACK.serde,
                ),
                Column("priority", "Priority", kind="int", width=70, default=5, tooltip="1 (low) … 10 (highest)"),
                Column("x", "X", kind="optional_int", width=80, tooltip="World position x (optional)"),
                Column("y", "Y", kind="optional_int", width=80, tooltip="World position y (optional)"),
                Column("z", "Z", kind="optional_int", hidden=True),
                Column("description", "Description"),
            ],
            page,
            add_label="Add target",
            visible_rows=5,
        )
        self.reasoning = TextArea(page, min_lines=4)

        confidence_row = QHBoxLayout()
        confidence_row.addWidget(self.confidence)
        confidence_row.addWidget(self.confidence_hint)
        confidence_row.addStretch(1)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        form.addRow("Build &focus:", self.build_focus)
        form.addRow("Confi&dence:", confidence_row)
        label_of(form, confidence_row).setBuddy(self.confidence)
        targets_label = QLabel("Priority &targets (in order)", page)
        targets_label.setBuddy(self.targets.table)
        reasoning_label = QLabel("Reas&oning", page)
        reasoning_label.setBuddy(self.reasoning)

        layout = QVBoxLayout(page)
        layout.addLayout(form)
        layout.addSpacing(6)
        layout.addWidget(targets_label)
        layout.addWidget(self.targets, 3)
        layout.addWidget(reasoning_label)
        layout.addWidget(self.reasoning, 2)

        self.build_focus.currentIndexChanged.connect(lambda _i: self._emit(f"{PLAN}.build_focus"))
        self.confidence.valueChanged.connect(lambda _v: self._emit(f"{PLAN}.confidence", True))
        self.targets.edited.connect(lambda: self._emit(f"{PLAN}.priority_targets"))
        self._watch_text(self.reasoning, f"{PLAN}.reasoning")
        self.paths.add(f"{PLAN}.build_focus", self.build_focus)
        self.paths.add(f"{PLAN}.confidence", self.confidence)
        self.paths.add_table(f"{PLAN}.priority_targets", self.targets)
        self.paths.add(f"{PLAN}.reasoning", self.reasoning)
        self.paths.add(PLAN, self.build_focus)
        return page

    def _economy_page(self) -> QWidget:
        page = QWidget(self)
        guidance = QGroupBox("Economic guidance", page)
        self.expand = QCheckBox("E&xpand to a new ore field", guidance)
        self.harvesters = QSpinBox(guidance)
        self.harvesters.setRange(0, 255)
        self.harvesters.setToolTip("How many harvesters to keep (D044 sets harvester_count_target from it)")
        self.sell = TokenLineEdit(guidance)
        self.sell.setPlaceholderText("structure ids to sell, comma-separated")
        self.builds = TokenLineEdit(guidance)
        self.builds.setPlaceholderText("unit or structure ids to build first, comma-separated")
        form = QFormLayout(guidance)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        form.addRow(self.expand)
        form.addRow("Harvester &target:", self.harvesters)
        form.addRow("Se&ll structures:", self.sell)
        form.addRow("Priority b&uilds:", self.builds)

        risk = QGroupBox("Risk assessment", page)
        self.risk_threat = EnumCombo(ThreatLevel, risk)
        self.time_pressure = EnumCombo(TimePressure, risk)
        self.direction = QLineEdit(risk)
        self.direction.setPlaceholderText("optional, e.g. north, the river ford")
        self.defense = QLineEdit(risk)
        self.defense.setPlaceholderText("optional, e.g. pillboxes at the ore field")
        risk_form = QFormLayout(risk)
        risk_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        risk_form.addRow("Threat le&vel:", self.risk_threat)
        risk_form.addRow("Time pr&essure:", self.time_pressure)
        risk_form.addRow("Expected attack &direction:", self.direction)
        risk_form.addRow("Recommended de&fense:", self.defense)

        layout = QVBoxLayout(page)
        layout.addWidget(guidance)
        layout.addWidget(risk)
        layout.addStretch(1)

        self.expand.toggled.connect(lambda _b: self._emit(f"{GUIDANCE}.expand"))
        self.harvesters.valueChanged.connect(lambda _v: self._emit(f"{GUIDANCE}.harvester_target", True))
        self._watch_line(self.sell, f"{GUIDANCE}.sell_structures")
        self._watch_line(self.builds, f"{GUIDANCE}.priority_builds")
        self.risk_threat.currentIndexChanged.connect(lambda _i: self._emit(f"{RISK}.threat_level"))
        self.time_pressure.currentIndexChanged.connect(lambda _i: self._emit(f"{RISK}.time_pressure"))
        self._watch_line(self.direction, f"{RISK}.expected_attack_direction")
        self._watch_line(self.defense, f"{RISK}.recommended_defense")
        for key, widget in (
            (f"{GUIDANCE}.expand", self.expand),
            (f"{GUIDANCE}.harvester_target", self.harvesters),
            (f"{GUIDANCE}.sell_structures", self.sell),
            (f"{GUIDANCE}.priority_builds", self.builds),
            (f"{RISK}.threat_level", self.risk_threat),
            (f"{RISK}.time_pressure", self.time_pressure),
            (f"{RISK}.expected_attack_direction", self.direction),
            (f"{RISK}.recommended_defense", self.defense),
        ):
            self.paths.add(key, widget)
        return page

    def _parameters_page(self) -> QWidget:
        page = QWidget(self)
        known = parameter_names()
        self.bindings = RowTable(
            [
                Column(
                    "0",
                    "Parameter",
                    completions=known,
                    tooltip="A set_parameter() name; each AI publishes its own and ignores unknown names",
                ),
                Column("1", "Value", kind="int", width=110, tooltip="A whole number (i32); most AIs use 0–100"),
            ],
            page,
            add_label="Add binding",
            new_row=self._new_binding,
            visible_rows=8,
        )
        self.binding_hint = QLabel(page)
        self.binding_hint.setWordWrap(True)
        self.binding_hint.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        intro = QLabel(
            "Parameter adjustments applied to the inner AI through <code>set_parameter()</code>, in order. "
            "Names are suggested from D044/D041; any name is allowed.",
            page,
        )
        intro.setWordWrap(True)
        label = QLabel("Bin&dings", page)
        label.setBuddy(self.bindings.table)
        layout = QVBoxLayout(page)
        layout.addWidget(intro)
        layout.addWidget(label)
        layout.addWidget(self.bindings, 1)
        layout.addWidget(self.binding_hint)
        self.bindings.edited.connect(lambda: self._emit(f"{P}.parameter_bindings"))
        self.bindings.edited.connect(self._update_binding_hint)
        self.bindings.current_row_changed.connect(lambda _row: self._update_binding_hint())
        self.paths.add_table(f"{P}.parameter_bindings", self.bindings)
        self._update_binding_hint()
        return page

    def _new_binding(self) -> list[Any]:
        used = {row[0] for row in self.bindings.texts()}
        name = next((n for n in parameter_names() if n not in used), "")
        return [name, 50]

    def _update_binding_hint(self) -> None:
        row = self.bindings.table.currentRow()
        texts = self.bindings.texts()
        if not 0 <= row < len(texts):
            self.binding_hint.setText("Select a binding to see what the documents say about it.")
            return
        name = texts[row][0].strip()
        info = parameter_info(name)
        if info is None:
            self.binding_hint.setText(
                f"<b>{name or '(no name)'}</b>: not a name the IC documents list; "
                "only an AI that publishes it will use it."
            )
        else:
            self.binding_hint.setText(f"<b>{info.name}</b> ({info.source}): {info.hint}")

    # --- the form -------------------------------------------------------------------------------

    def form(self) -> StrategicForm:
        return StrategicForm(
            situation=SituationForm(
                game_phase=self.phase.value(),
                economy_state=self.economy.value(),
                army_composition=_rows(self.army.values()),
                enemy_composition_estimate=_rows(self.enemy.values()),
                map_control=self.map_control.exact_value(),
                threat_level=self.situation_threat.value(),
                active_tech=tuple(self.active_tech.tokens()),
            ),
            plan=PlanForm(
                priority_targets=tuple(TargetRow(*row) for row in self.targets.values()),
                build_focus=self.build_focus.value(),
                economic_guidance=GuidanceForm(
                    expand=self.expand.isChecked(),
                    harvester_target=self.harvesters.value(),
                    sell_structures=tuple(self.sell.tokens()),
                    priority_builds=tuple(self.builds.tokens()),
                ),
                risk_assessment=RiskForm(
                    threat_level=self.risk_threat.value(),
                    time_pressure=self.time_pressure.value(),
                    expected_attack_direction=self.direction.text(),
                    recommended_defense=self.defense.text(),
                ),
                confidence=self.confidence.value(),
                reasoning=self.reasoning.text(),
            ),
            parameter_bindings=_rows(self.bindings.values()),
        )

    def _show(self, form: StrategicForm) -> None:
        situation, plan = form.situation, form.plan
        guidance, risk = plan.economic_guidance, plan.risk_assessment
        self.phase.set_value(situation.game_phase)
        self.economy.set_value(situation.economy_state)
        self.army.set_rows(situation.army_composition)
        self.enemy.set_rows(situation.enemy_composition_estimate)
        if situation.map_control != self.map_control.exact_value():
            self.map_control.set_exact(situation.map_control)
        self.situation_threat.set_value(situation.threat_level)
        self.active_tech.set_tokens(situation.active_tech)
        self.targets.set_rows(
            [[t.target_type, t.priority, t.x, t.y, t.z, t.description] for t in plan.priority_targets]
        )
        self.build_focus.set_value(plan.build_focus)
        self._set_spin(self.confidence, plan.confidence)
        self.reasoning.set_text(plan.reasoning)
        self.expand.setChecked(guidance.expand)
        self._set_spin(self.harvesters, guidance.harvester_target)
        self.sell.set_tokens(guidance.sell_structures)
        self.builds.set_tokens(guidance.priority_builds)
        self.risk_threat.set_value(risk.threat_level)
        self.time_pressure.set_value(risk.time_pressure)
        _set_line(self.direction, risk.expected_attack_direction)
        _set_line(self.defense, risk.recommended_defense)
        self.bindings.set_rows(form.parameter_bindings)
        self.confidence_hint.setText(f"= {self.confidence.value() / 10:g} %")
        self._update_binding_hint()

    @staticmethod
    def _set_spin(spin: QSpinBox, value: object) -> None:
        if isinstance(value, int) and value != spin.value():
            spin.setValue(value)


def _set_line(widget: QLineEdit, text: str) -> None:
    if widget.text() != text:
        widget.setText(text)


def _rows(values: list[list[Any]]) -> tuple[tuple[Cell, ...], ...]:
    return tuple(tuple(row) for row in values)
