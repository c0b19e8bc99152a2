"""What a skill editor's form holds, typed: :class:`FormState` and one form per body kind.

A form keeps what a person typed, invalid input included (``"abc"`` in a number column stays
``"abc"``), so that an edit that does not parse yet survives undo and redo, and the core's parser
(not the form) says what is wrong and where. :func:`form_document` lays a form over the document
of the skill as it was read: the form holds only what a person edits; id, provenance source,
quality and dates stay as they were read.

Each form converts from a body (:func:`body_form`) exactly as an editor's widgets show and read it
back, so a form shown and read again is equal to itself and an untouched editor is never dirty.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any, ClassVar

import yaml

from skillstudio.model import (
    BodyKind,
    BuildFocus,
    Domain,
    EconomyState,
    EncounterPattern,
    GamePhase,
    Instructions,
    Issue,
    SituationSignature,
    Skill,
    SkillBody,
    StrategicPattern,
    StrategicPlan,
    VerifiedExample,
)

# A table cell as typed: a whole number when the text is one, else the text itself (the parser
# names the problem); None for an empty optional number.
Cell = int | str | None

SCENES = "body.scene_composition"

# --- StrategicPattern ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SituationForm:
    game_phase: str  # enum values in their serde spelling, as body_json holds them
    economy_state: str
    army_composition: tuple[tuple[Cell, ...], ...]  # (unit type, share) rows
    enemy_composition_estimate: tuple[tuple[Cell, ...], ...]
    map_control: float
    threat_level: str
    active_tech: tuple[str, ...]


@dataclass(frozen=True)
class TargetRow:
    target_type: str
    priority: Cell
    x: Cell
    y: Cell
    z: Cell
    description: str


@dataclass(frozen=True)
class GuidanceForm:
    expand: bool
    harvester_target: int
    sell_structures: tuple[str, ...]
    priority_builds: tuple[str, ...]


@dataclass(frozen=True)
class RiskForm:
    threat_level: str
    time_pressure: str
    expected_attack_direction: str  # "" for none
    recommended_defense: str


@dataclass(frozen=True)
class PlanForm:
    priority_targets: tuple[TargetRow, ...]
    build_focus: str
    economic_guidance: GuidanceForm
    risk_assessment: RiskForm
    confidence: int
    reasoning: str


@dataclass(frozen=True)
class StrategicForm:
    situation: SituationForm
    plan: PlanForm
    parameter_bindings: tuple[tuple[Cell, ...], ...]  # (name, value) rows

    kind: ClassVar[BodyKind] = BodyKind.STRATEGIC_PATTERN

    @classmethod
    def of(cls, body: StrategicPattern) -> StrategicForm:
        s, plan = body.situation, body.plan
        guidance, risk = plan.economic_guidance, plan.risk_assessment
        return cls(
            situation=SituationForm(
                game_phase=s.game_phase.serde,
                economy_state=s.economy_state.serde,
                army_composition=tuple((unit, share) for unit, share in s.army_composition),
                enemy_composition_estimate=tuple((unit, share) for unit, share in s.enemy_composition_estimate),
                map_control=s.map_control,
                threat_level=s.threat_level.serde,
                active_tech=s.active_tech,
            ),
            plan=PlanForm(
                priority_targets=tuple(
                    TargetRow(
                        target.target_type.serde,
                        target.priority,
                        None if target.position is None else target.position.x,
                        None if target.position is None else target.position.y,
                        None if target.position is None else target.position.z,
                        target.description,
                    )
                    for target in plan.priority_targets
                ),
                build_focus=plan.build_focus.serde,
                economic_guidance=GuidanceForm(
                    guidance.expand, guidance.harvester_target, guidance.sell_structures, guidance.priority_builds
                ),
                risk_assessment=RiskForm(
                    risk.threat_level.serde,
                    risk.time_pressure.serde,
                    risk.expected_attack_direction or "",
                    risk.recommended_defense or "",
                ),
                confidence=plan.confidence,
                reasoning=plan.reasoning,
            ),
            parameter_bindings=tuple((name, value) for name, value in body.parameter_bindings),
        )

    def document(self, issues: list[Issue]) -> dict[str, Any]:
        s, plan = self.situation, self.plan
        guidance, risk = plan.economic_guidance, plan.risk_assessment
        targets = []
        for row in plan.priority_targets:
            position = None
            if row.x is not None or row.y is not None or row.z not in (None, 0):
                position = {"x": row.x, "y": row.y, "z": 0 if row.z is None else row.z}
            targets.append(
                {
                    "target_type": row.target_type,
                    "position": position,
                    "priority": row.priority,
                    "description": row.description,
                }
            )
        return {
            "situation": {
                "game_phase": s.game_phase,
                "economy_state": s.economy_state,
                "army_composition": [list(row) for row in s.army_composition],
                "enemy_composition_estimate": [list(row) for row in s.enemy_composition_estimate],
                "map_control": s.map_control,
                "threat_level": s.threat_level,
                "active_tech": list(s.active_tech),
            },
            "plan": {
                "priority_targets": targets,
                "build_focus": plan.build_focus,
                "economic_guidance": {
                    "expand": guidance.expand,
                    "harvester_target": guidance.harvester_target,
                    "sell_structures": list(guidance.sell_structures),
                    "priority_builds": list(guidance.priority_builds),
                },
                "risk_assessment": {
                    "threat_level": risk.threat_level,
                    "expected_attack_direction": _optional(risk.expected_attack_direction),
                    "recommended_defense": _optional(risk.recommended_defense),
                    "time_pressure": risk.time_pressure,
                },
                "confidence": plan.confidence,
                "reasoning": plan.reasoning,
            },
            "parameter_bindings": [list(row) for row in self.parameter_bindings],
        }


def _optional(text: str) -> str | None:
    return text if text.strip() else None


# --- EncounterPattern ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SceneForm:
    template: str
    values: tuple[tuple[str, str], ...]  # (parameter, value as YAML flow text), as typed


@dataclass(frozen=True)
class HintsForm:
    mission_type: str  # "" for none
    player_faction: str
    difficulty: str
    estimated_minutes: int  # 0 for none
    objectives: tuple[str, ...]
    outcomes: tuple[str, ...]
    notes: str


@dataclass(frozen=True)
class EncounterForm:
    scene_composition: tuple[SceneForm, ...]
    mission_structure: HintsForm

    kind: ClassVar[BodyKind] = BodyKind.ENCOUNTER_PATTERN

    @classmethod
    def of(cls, body: EncounterPattern) -> EncounterForm:
        hints = body.mission_structure
        return cls(
            scene_composition=tuple(
                SceneForm(scene.template, tuple((name, value_text(value)) for name, value in scene.values.items()))
                for scene in body.scene_composition
            ),
            mission_structure=HintsForm(
                hints.mission_type or "",
                hints.player_faction or "",
                hints.difficulty or "",
                hints.estimated_minutes or 0,
                hints.objectives,
                hints.outcomes,
                hints.notes,
            ),
        )

    def document(self, issues: list[Issue]) -> dict[str, Any]:
        scenes = []
        for index, scene in enumerate(self.scene_composition):
            path = f"{SCENES}[{index}].values"
            values: dict[str, Any] = {}
            for row, (name, text) in enumerate(scene.values):
                name = name.strip()
                if not name:
                    issues.append(Issue(f"{path}[{row}]", f"row {row + 1} has no parameter name"))
                    continue
                if name in values:
                    issues.append(Issue(f"{path}[{row}]", f"{name!r} is set twice"))
                    continue
                if not text.strip():
                    issues.append(Issue(f"{path}.{name}", "has no value (write null for none)"))
                    continue
                try:
                    values[name] = parse_value(text)
                except ValueError as error:
                    issues.append(Issue(f"{path}.{name}", str(error)))
            scenes.append({"template": scene.template.strip(), "values": values})
        hints = self.mission_structure
        return {
            "scene_composition": scenes,
            "mission_structure": {
                "mission_type": hints.mission_type.strip() or None,
                "player_faction": hints.player_faction.strip() or None,
                "difficulty": hints.difficulty.strip() or None,
                "estimated_minutes": hints.estimated_minutes or None,
                "objectives": list(hints.objectives),
                "outcomes": list(hints.outcomes),
                "notes": hints.notes,
            },
        }


class _ValueLoader(yaml.SafeLoader):
    """Safe YAML without the timestamp rule: ``2026-01-01`` stays text, as JSON has no dates."""


_ValueLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def value_text(value: Any) -> str:
    """A scene parameter's JSON value as one line of YAML flow text (``{center: [42, 31]}``)."""
    text = yaml.safe_dump(value, default_flow_style=True, width=1_000_000, allow_unicode=True, sort_keys=False)
    text = text.removesuffix("\n...\n")
    text = text.rstrip("\n")
    if "\n" in text:  # multi-line text: JSON's escapes keep it on one line (and JSON is YAML)
        text = json.dumps(value, ensure_ascii=False)
    return text


def parse_value(text: str) -> Any:
    """The JSON value a line of YAML flow text means; raises ValueError with the reason."""
    try:
        return yaml.load(text, Loader=_ValueLoader)
    except yaml.YAMLError as error:
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ValueError(f"is not valid YAML ({problem})") from None


# --- VerifiedExample and Instructions -----------------------------------------------------------


@dataclass(frozen=True)
class ExampleForm:
    prompt_context: str
    response: str

    kind: ClassVar[BodyKind] = BodyKind.VERIFIED_EXAMPLE

    @classmethod
    def of(cls, body: VerifiedExample) -> ExampleForm:
        return cls(body.prompt_context, body.response)

    def document(self, issues: list[Issue]) -> dict[str, Any]:
        return {"prompt_context": self.prompt_context, "response": self.response}


@dataclass(frozen=True)
class InstructionsForm:
    instructions: str
    tools: tuple[str, ...]
    model: str  # as typed; blank for none
    references: tuple[str, ...]

    kind: ClassVar[BodyKind] = BodyKind.INSTRUCTIONS

    @classmethod
    def of(cls, body: Instructions) -> InstructionsForm:
        return cls(body.instructions, body.tools, body.model or "", body.references)

    def document(self, issues: list[Issue]) -> dict[str, Any]:
        return {
            "instructions": self.instructions,
            "tools": list(self.tools),
            "model": self.model.strip() or None,
            "references": list(self.references),
        }


BodyForm = StrategicForm | EncounterForm | ExampleForm | InstructionsForm

# The order the editor offers body kinds in.
KIND_ORDER = (BodyKind.STRATEGIC_PATTERN, BodyKind.ENCOUNTER_PATTERN, BodyKind.VERIFIED_EXAMPLE, BodyKind.INSTRUCTIONS)


def body_form(body: SkillBody) -> BodyForm:
    match body:
        case StrategicPattern():
            return StrategicForm.of(body)
        case EncounterPattern():
            return EncounterForm.of(body)
        case VerifiedExample():
            return ExampleForm.of(body)
        case Instructions():
            return InstructionsForm.of(body)
    raise TypeError(f"not a skill body: {body!r}")  # pragma: no cover - the union is closed


def default_body(kind: BodyKind) -> SkillBody:
    """What a new body of ``kind`` starts as: a complete plan, or empty text and lists."""
    match kind:
        case BodyKind.STRATEGIC_PATTERN:
            return StrategicPattern(
                SituationSignature(GamePhase.EARLY, EconomyState.EVEN), StrategicPlan(BuildFocus.MIXED)
            )
        case BodyKind.ENCOUNTER_PATTERN:
            return EncounterPattern(scene_composition=())
        case BodyKind.VERIFIED_EXAMPLE:
            return VerifiedExample("", "")
        case BodyKind.INSTRUCTIONS:
            return Instructions("")
    raise ValueError(f"not a body kind: {kind!r}")  # pragma: no cover - the enum is closed


def default_body_form(kind: BodyKind) -> BodyForm:
    return body_form(default_body(kind))


# --- the whole form -----------------------------------------------------------------------------


@dataclass(frozen=True)
class FormState:
    """Every field a person edits; ``body.kind`` is the body type."""

    name: str
    description: str
    domain: Domain
    game_module: str
    engine_version: str
    tags: tuple[str, ...]
    composable_with: tuple[str, ...]
    body: BodyForm

    @property
    def body_kind(self) -> BodyKind:
        return self.body.kind

    @classmethod
    def of(cls, skill: Skill) -> FormState:
        return cls(
            name=skill.name,
            description=skill.description,
            domain=skill.domain,
            game_module=skill.game_module,
            engine_version=skill.provenance.engine_version,
            tags=skill.tags,
            composable_with=skill.composable_with,
            body=body_form(skill.body),
        )


def form_document(form: FormState, base: dict[str, Any], issues: list[Issue]) -> dict[str, Any]:
    """The skill document ``form`` describes over ``base`` (the document of the skill as read).

    Problems only the form can see (a scene value that is not YAML) are appended to ``issues``."""
    document = copy.deepcopy(base)
    document.update(
        name=form.name,
        description=form.description,
        domain=form.domain.value,
        tags=list(form.tags),
        composable_with=list(form.composable_with),
    )
    document["provenance"] = {
        **document["provenance"],
        "game_module": form.game_module,
        "engine_version": form.engine_version,
    }
    document["body"] = {form.body.kind.serde: form.body.document(issues)}
    return document


__all__ = [
    "KIND_ORDER",
    "BodyForm",
    "Cell",
    "EncounterForm",
    "ExampleForm",
    "FormState",
    "GuidanceForm",
    "HintsForm",
    "InstructionsForm",
    "PlanForm",
    "RiskForm",
    "SceneForm",
    "SituationForm",
    "StrategicForm",
    "TargetRow",
    "body_form",
    "default_body",
    "default_body_form",
    "form_document",
    "parse_value",
    "value_text",
]
