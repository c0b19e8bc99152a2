"""Check a content skill's EncounterPattern against the scene templates' typed schemas.

Template ids and parameter names come from :mod:`skillstudio.model.vocabulary` (ic-formats.md
section 4); types and ranges from ``resources/scene_templates.yaml`` (SkillStudio's, since the
documents give none). Unit types are checked against the game module's units (the reference
engine's ``resources/modules``).

Errors (each naming the scene and parameter): an unknown template, an unknown unit type, a value
of the wrong type or out of range, a missing required parameter, no victory outcome. Warnings:
an unknown parameter, a module whose units are unknown, a lopsided force balance.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import yaml

from skillstudio.model import EncounterPattern, Skill
from skillstudio.model.vocabulary import SCENE_TEMPLATES
from skillstudio.paths import resource

TYPES = (
    "id",
    "text",
    "int",
    "number",
    "bool",
    "enum",
    "point",
    "points",
    "zone",
    "units",
    "waves",
    "schedule",
    "ids",
    "texts",
    "unit_ids",
    "id_map",
)
_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_\-/.:]{0,127}$")
BALANCE_RATIO = 4.0  # a side more than 4x the other (in unit cost) draws a warning


@dataclass(frozen=True)
class ParameterSchema:
    name: str
    type: str
    required: bool = False
    minimum: float | None = None
    maximum: float | None = None
    values: tuple[str, ...] = ()
    min_items: int = 0
    max_items: int = 1000
    side: str | None = None  # hostile | friendly: counted in the force balance


@dataclass(frozen=True)
class TemplateSchema:
    id: str
    parameters: Mapping[str, ParameterSchema]


@dataclass(frozen=True)
class Schemas:
    templates: Mapping[str, TemplateSchema]
    map_cells: int
    max_units: int
    extra_units: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class Finding:
    severity: str  # error | warning
    path: str  # "scene_composition[0] (ambush).attacker_units"
    message: str

    def __str__(self) -> str:
        return f"{self.severity}: {self.path}: {self.message}"


@dataclass(frozen=True)
class ContentReport:
    skill_id: str
    findings: tuple[Finding, ...]

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "warning")

    @property
    def ok(self) -> bool:
        return not self.errors


@cache
def scene_schemas() -> Schemas:
    """The typed schemas, checked against the vocabulary's templates and parameter names."""
    data = yaml.safe_load(resource("scene_templates.yaml").read_text(encoding="utf-8"))
    templates: dict[str, TemplateSchema] = {}
    for template_id, parameters in data["templates"].items():
        known = SCENE_TEMPLATES.get(template_id)
        if known is None:
            raise ValueError(f"scene_templates.yaml: {template_id} is not a built-in scene template")
        if set(parameters) != set(known.parameter_names):
            raise ValueError(f"scene_templates.yaml: {template_id} parameters differ from the vocabulary's")
        schemas = {}
        for name, spec in parameters.items():
            if spec["type"] not in TYPES:
                raise ValueError(f"scene_templates.yaml: {template_id}.{name}: unknown type {spec['type']}")
            schemas[name] = ParameterSchema(
                name,
                spec["type"],
                bool(spec.get("required", False)),
                spec.get("min"),
                spec.get("max"),
                tuple(spec.get("values", ())),
                int(spec.get("min_items", 0)),
                int(spec.get("max_items", 1000)),
                spec.get("side"),
            )
        templates[template_id] = TemplateSchema(template_id, schemas)
    if set(templates) != set(SCENE_TEMPLATES):
        raise ValueError("scene_templates.yaml must type every built-in scene template")
    extra = {module: tuple(units) for module, units in (data.get("extra_units") or {}).items()}
    return Schemas(templates, int(data["map_cells"]), int(data["max_units"]), extra)


def module_units(game_module: str) -> dict[str, int] | None:
    """Unit type -> cost (0 where unknown) for a game module: the reference engine's units plus
    the module's ``extra_units``; None for a module neither knows."""
    from skillstudio.engine import load_module

    extra = scene_schemas().extra_units.get(game_module, ())
    try:
        units = {unit.id: int(unit.cost) for unit in load_module(game_module).units}
    except (ValueError, LookupError, OSError):
        units = None
    if units is None and not extra:
        return None
    return {**dict.fromkeys(extra, 0), **(units or {})}


def validate_skill(skill: Skill) -> ContentReport:
    if not isinstance(skill.body, EncounterPattern):
        return ContentReport(
            skill.id, (Finding("error", "body", f"a {skill.body_kind.value} body is not an EncounterPattern"),)
        )
    return ContentReport(skill.id, tuple(validate_pattern(skill.body, skill.provenance.game_module)))


def validate_pattern(pattern: EncounterPattern, game_module: str) -> list[Finding]:
    schemas = scene_schemas()
    units = module_units(game_module)
    findings: list[Finding] = []
    if units is None:
        findings.append(Finding("warning", "game_module", f"unknown module {game_module!r}: unit types not checked"))
    forces = {"hostile": 0, "friendly": 0}
    for index, scene in enumerate(pattern.scene_composition):
        where = f"scene_composition[{index}] ({scene.template})"
        template = schemas.templates.get(scene.template)
        if template is None:
            findings.append(
                Finding(
                    "error",
                    f"scene_composition[{index}].template",
                    f"unknown scene template {scene.template!r} (built-in: {', '.join(schemas.templates)})",
                )
            )
            continue
        findings.extend(
            Finding(
                "warning", f"{where}.{name}", f"not a parameter of {scene.template} ({', '.join(template.parameters)})"
            )
            for name in scene.values
            if name not in template.parameters
        )
        for name, schema in template.parameters.items():
            path = f"{where}.{name}"
            if name not in scene.values or scene.values[name] is None:
                if schema.required:
                    findings.append(Finding("error", path, f"missing (required by {scene.template})"))
                continue
            checker = _Check(path, schemas, units, findings)
            cost = checker.value(schema, scene.values[name])
            if schema.side and cost:
                forces[schema.side] += cost
    outcomes = [o.strip().lower() for o in pattern.mission_structure.outcomes]
    if not any(o == "victory" or o.startswith("victory") for o in outcomes):
        findings.append(
            Finding(
                "error",
                "mission_structure.outcomes",
                "no victory outcome (name one 'victory'); a mission must be winnable",
            )
        )
    hostile, friendly = forces["hostile"], forces["friendly"]
    if hostile and friendly and max(hostile / friendly, friendly / hostile) > BALANCE_RATIO:
        stronger = "hostile" if hostile > friendly else "friendly"
        findings.append(
            Finding(
                "warning",
                "scene_composition",
                f"force balance: hostile units cost {hostile:,} vs friendly {friendly:,} "
                f"({max(hostile, friendly) / min(hostile, friendly):.1f}x, {stronger} side)",
            )
        )
    return findings


class _Check:
    """Type checks for one parameter value; returns the unit cost it adds (0 if none)."""

    def __init__(self, path: str, schemas: Schemas, units: dict[str, int] | None, findings: list[Finding]) -> None:
        self.path, self.schemas, self.units, self.findings = path, schemas, units, findings

    def fail(self, message: str, suffix: str = "") -> int:
        self.findings.append(Finding("error", self.path + suffix, message))
        return 0

    def value(self, schema: ParameterSchema, value: Any) -> int:
        kind = schema.type
        if kind == "id":
            return (
                0
                if isinstance(value, str) and _ID.match(value)
                else self.fail(f"expected a name (letters, digits, _-/.), got {value!r}")
            )
        if kind == "text":
            return (
                0
                if isinstance(value, str) and len(value) <= 10_000
                else self.fail(f"expected text, got {type(value).__name__}")
            )
        if kind in ("int", "number"):
            ok_type = isinstance(value, int) if kind == "int" else isinstance(value, int | float)
            if isinstance(value, bool) or not ok_type:
                return self.fail(f"expected {'an integer' if kind == 'int' else 'a number'}, got {value!r}")
            if (schema.minimum is not None and value < schema.minimum) or (
                schema.maximum is not None and value > schema.maximum
            ):
                return self.fail(f"{value} is out of range {schema.minimum}..{schema.maximum}")
            return 0
        if kind == "bool":
            return 0 if isinstance(value, bool) else self.fail(f"expected true or false, got {value!r}")
        if kind == "enum":
            return 0 if value in schema.values else self.fail(f"{value!r} is not one of {', '.join(schema.values)}")
        if kind == "point":
            return self.point(value, "")
        if kind == "points":
            items = self.items(schema, value)
            for i, item in enumerate(items or ()):
                self.point(item, f"[{i}]")
            return 0
        if kind == "zone":
            return self.zone(value, "")
        if kind == "units":
            return self.group(value, "")
        if kind == "waves":
            return sum(self.group(item, f"[{i}]") for i, item in enumerate(self.items(schema, value) or ()))
        if kind == "schedule":
            total = 0
            for i, item in enumerate(self.items(schema, value) or ()):
                if not isinstance(item, dict) or "units" not in item:
                    self.fail("expected {at?, units, entry_point?}", f"[{i}]")
                    continue
                total += self.group(item["units"], f"[{i}].units")
                at = item.get("at")
                if at is not None and (isinstance(at, bool) or not isinstance(at, int | float) or not 0 <= at <= 7200):
                    self.fail(f"{at!r} is out of range 0..7200 seconds", f"[{i}].at")
            return total
        if kind in ("ids", "texts", "unit_ids"):
            for i, item in enumerate(self.items(schema, value) or ()):
                if not isinstance(item, str) or (kind != "texts" and not _ID.match(item)):
                    self.fail(f"expected a {'text' if kind == 'texts' else 'name'}, got {item!r}", f"[{i}]")
                elif kind == "unit_ids" and self.units is not None and item not in self.units:
                    self.fail(f"unknown unit type {item!r}", f"[{i}]")
            return 0
        if kind == "id_map":
            if not isinstance(value, dict):
                return self.fail(f"expected a mapping of names, got {type(value).__name__}")
            for key, item in value.items():
                if not isinstance(item, str) or not _ID.match(str(key)) or not _ID.match(item):
                    self.fail(f"expected a name, got {item!r}", f".{key}")
            return 0
        raise AssertionError(kind)

    def items(self, schema: ParameterSchema, value: Any) -> list[Any] | None:
        if not isinstance(value, list):
            self.fail(f"expected a list, got {type(value).__name__}")
            return None
        if not schema.min_items <= len(value) <= schema.max_items:
            self.fail(f"{len(value)} items, expected {schema.min_items}..{schema.max_items}")
        return value

    def point(self, value: Any, suffix: str) -> int:
        cells = self.schemas.map_cells
        if (
            not isinstance(value, list)
            or len(value) not in (2, 3)
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        ):
            return self.fail(f"expected a cell [x, y], got {value!r}", suffix)
        if not all(0 <= v <= cells for v in value[:2]):
            return self.fail(f"{value} is outside the map (0..{cells})", suffix)
        return 0

    def zone(self, value: Any, suffix: str) -> int:
        if isinstance(value, str) and _ID.match(value):
            return 0  # a region the map names
        if not isinstance(value, dict) or "center" not in value:
            return self.fail("expected {center: [x, y], radius: N} or a region name", suffix)
        self.point(value["center"], suffix + ".center")
        radius = value.get("radius", 1)
        if isinstance(radius, bool) or not isinstance(radius, int | float) or not 0 < radius <= 64:
            self.fail(f"{radius!r} is out of range 1..64", suffix + ".radius")
        return 0

    def group(self, value: Any, suffix: str) -> int:
        """Units as {type: count}, [[type, count]] or [type, ...]; returns their total cost."""
        pairs: Iterable[tuple[Any, Any]]
        if isinstance(value, dict):
            pairs = value.items()
        elif isinstance(value, list):
            pairs = [(item[0], item[1]) if isinstance(item, list) and len(item) == 2 else (item, 1) for item in value]
        else:
            return self.fail(f"expected units as {{type: count}}, got {type(value).__name__}", suffix)
        cost = 0
        for unit, count in pairs:
            where = f"{suffix}.{unit}" if isinstance(unit, str) else suffix
            if not isinstance(unit, str):
                self.fail(f"expected a unit type, got {unit!r}", suffix)
                continue
            if self.units is not None and unit not in self.units:
                self.fail(f"unknown unit type {unit!r}", where)
                continue
            if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= self.schemas.max_units:
                self.fail(f"count {count!r} is out of range 1..{self.schemas.max_units}", where)
                continue
            cost += count * (self.units or {}).get(unit, 0)
        return cost
