"""What drives one side of a match: a :class:`Doctrine`, derived from a skill's StrategicPattern
(D044's plan-to-parameter mapping, then the skill's own ``parameter_bindings``) or from an AI
preset at a difficulty (D043).

Parameters use D041's convention: ``set_parameter(name, i32)`` with each AI publishing its own
names and ranges (:data:`PARAMETERS`); values outside a range are clamped, and names this AI
does not know are ignored and reported, as D041 says an AI does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from skillstudio.engine.module import HARVESTER, ROLES, GameModule, Mix, Preset
from skillstudio.model.enums import BuildFocus, TargetType, ThreatLevel, TimePressure
from skillstudio.model.skill import StrategicPattern


@dataclass(frozen=True)
class ParameterSpec:
    """D041's ParameterSpec (without current_value): what ``set_parameter`` accepts."""

    name: str
    min_value: int
    max_value: int
    default_value: int
    description: str


# The reference AI's published parameters. Names follow ic-formats.md section 1 where IC has one.
PARAMETERS: dict[str, ParameterSpec] = {
    spec.name: spec
    for spec in (
        ParameterSpec(
            "aggression", 0, 100, 50, "how readily the army attacks: lower attack threshold, earlier first attack"
        ),
        ParameterSpec("expansion_priority", 0, 100, 0, "when to build an expansion refinery; below 10 never"),
        ParameterSpec("harvester_count_target", 0, 20, 4, "harvesters kept alive (rebuilt when lost)"),
        ParameterSpec("tech_priority", 0, 100, 40, "share of spare credits put into unlocking the next tech tier"),
        ParameterSpec("tech_priority_aa", 0, 100, 50, "weight of anti-air capable units (50 neutral, 100 doubles)"),
        ParameterSpec("tech_priority_armor", 0, 100, 50, "weight of armoured vehicles (50 neutral)"),
        ParameterSpec("tech_priority_air", 0, 100, 50, "weight of aircraft (50 neutral)"),
        ParameterSpec("infantry_ratio", 0, 100, 50, "weight of infantry (50 neutral)"),
        ParameterSpec("vehicle_ratio", 0, 100, 50, "weight of vehicles (50 neutral)"),
        ParameterSpec("naval_priority", 0, 100, 50, "weight of naval units (50 neutral)"),
        ParameterSpec("defense_ratio", 0, 100, 40, "static defences' share of production (ratio / 2.5 percent)"),
        ParameterSpec("defense_allocation", 0, 100, 40, "same as defense_ratio (the [R] docs use both names)"),
        ParameterSpec("harvester_defense", 0, 100, 30, "share of the army guarding harvesters against raids"),
        ParameterSpec(
            "harassment", 0, 100, 10, "share of raiding units sent against enemy harvesters (ratio / 2 percent)"
        ),
        ParameterSpec("scout_priority", 0, 100, 40, "scouting: better estimates of the enemy and more map control"),
        ParameterSpec("reaction_urgency", 0, 100, 50, "how early the first attack comes (100: 30% earlier)"),
        ParameterSpec(
            "retreat_threshold", 0, 100, 30, "an attacking army retreats below this percent of its launch value"
        ),
        # Accepted so a skill written for IC's orchestrator is not reported as wrong, but without
        # effect here: this engine has no map geometry and no consultation loop.
        ParameterSpec("attack_target_x", -(2**31), 2**31 - 1, 0, "accepted, no effect (no map geometry)"),
        ParameterSpec("attack_target_y", -(2**31), 2**31 - 1, 0, "accepted, no effect (no map geometry)"),
        ParameterSpec("watch_direction", -(2**31), 2**31 - 1, 0, "accepted, no effect (no map geometry)"),
        ParameterSpec(
            "consultation_interval", 30, 3000, 300, "accepted, no effect (the plan holds for the whole match)"
        ),
    )
}
NO_EFFECT = frozenset({"attack_target_x", "attack_target_y", "watch_direction", "consultation_interval"})

# D044's mapping where IC gives a value, [R] or our fill elsewhere (docs/reference-engine.md).
THREAT_AGGRESSION = {  # D044: 20 at Critical, 75 at Low
    ThreatLevel.NONE: 85,
    ThreatLevel.LOW: 75,
    ThreatLevel.MEDIUM: 55,
    ThreatLevel.HIGH: 40,
    ThreatLevel.CRITICAL: 20,
}
THREAT_DEFENSE = {  # [R] defense_ratio 20/40/65/85
    ThreatLevel.NONE: 10,
    ThreatLevel.LOW: 20,
    ThreatLevel.MEDIUM: 40,
    ThreatLevel.HIGH: 65,
    ThreatLevel.CRITICAL: 85,
}
PRESSURE_AGGRESSION = {
    TimePressure.NONE: 0,
    TimePressure.LOW: 0,
    TimePressure.MEDIUM: 5,
    TimePressure.URGENT: 10,
    TimePressure.IMMEDIATE: 15,
}
PRESSURE_URGENCY = {
    TimePressure.NONE: 40,
    TimePressure.LOW: 45,
    TimePressure.MEDIUM: 55,
    TimePressure.URGENT: 75,
    TimePressure.IMMEDIATE: 100,
}
TARGET_AGGRESSION = {  # per point of a target's priority (1..10)
    TargetType.ATTACK: 1.5,
    TargetType.HARASS: 0.5,
    TargetType.DEFEND: -1.5,
    TargetType.RETREAT: -3.0,
    TargetType.SCOUT: 0.0,
    TargetType.EXPAND: 0.0,
}
TECH_STRUCTURES = ("radar_dome", "tech_center", "airfield", "helipad")
REFINERIES = ("ore_refinery", "refinery", "tiberium_refinery")  # a priority refinery means expanding


@dataclass(frozen=True)
class Doctrine:
    """One side's behaviour. ``parameters`` holds the D041 values (0..100 scales mostly)."""

    label: str
    parameters: Mapping[str, int]
    units: Mapping[str, float]  # mobile unit id -> weight by value
    defenses: Mapping[str, float]  # static defence id -> weight by value
    combat_efficiency: float = 1.0  # micro and focus fire
    map_weight: float = 1.0  # influence maps
    gather_rate: float = 1.0  # difficulty multipliers
    build_time: float = 1.0
    reaction_delay_s: float = 0.0
    vision: float = 1.0
    adaptation: float = 0.0  # share of production switched to counters of the enemy
    adaptation_time_s: float = 0.0
    ignored_parameters: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())

    def param(self, name: str) -> int:
        return self.parameters.get(name, PARAMETERS[name].default_value)


def _clamp_param(name: str, value: float) -> int:
    spec = PARAMETERS[name]
    return int(min(max(round(value), spec.min_value), spec.max_value))


def doctrine_from_pattern(pattern: StrategicPattern, module: GameModule, *, label: str = "skill") -> Doctrine:
    """D044's mapping of a StrategicPlan to parameters, then the skill's parameter_bindings."""
    plan = pattern.plan
    guidance = plan.economic_guidance
    risk = plan.risk_assessment
    focus = plan.build_focus
    notes: list[str] = []

    aggression: float = THREAT_AGGRESSION[risk.threat_level] + PRESSURE_AGGRESSION[risk.time_pressure]
    harassment = 10
    expansion = 0
    retreat = 30
    for target in plan.priority_targets:
        aggression += TARGET_AGGRESSION[target.target_type] * target.priority
        if target.target_type is TargetType.HARASS:
            harassment = max(harassment, 20 + 5 * target.priority)
        elif target.target_type is TargetType.EXPAND:
            expansion = max(expansion, 50 + 4 * target.priority)
        elif target.target_type is TargetType.RETREAT:
            retreat = max(retreat, 50)
    if focus is BuildFocus.ECONOMY:
        expansion = 90  # D044
    elif guidance.expand:
        expansion = max(expansion, 85)  # D044
    params: dict[str, float] = {
        "aggression": aggression,
        "expansion_priority": expansion,
        "harvester_count_target": guidance.harvester_target,
        "tech_priority": 80 if focus in (BuildFocus.TECH, BuildFocus.AIR_POWER) else 40,  # aircraft need tier 2
        "tech_priority_aa": 80 if focus is BuildFocus.ANTI_AIR else 50,  # D044: 80 for AntiAir
        "tech_priority_armor": 80 if focus is BuildFocus.ANTI_ARMOR else 50,
        "defense_ratio": THREAT_DEFENSE[risk.threat_level] + (10 if risk.recommended_defense else 0),
        "harvester_defense": 70 if risk.threat_level in (ThreatLevel.HIGH, ThreatLevel.CRITICAL) else 30,  # [R]
        "harassment": harassment,
        "scout_priority": 80
        if plan.priority_targets and plan.priority_targets[0].target_type is TargetType.SCOUT
        else 40,
        "reaction_urgency": PRESSURE_URGENCY[risk.time_pressure],
        "retreat_threshold": retreat,
    }
    units = dict(module.build_focus[focus].units)
    defenses = dict(module.build_focus[focus].defenses)

    ignored_builds: list[str] = []
    for raw in guidance.priority_builds:
        name = module.resolve(raw)
        if name == HARVESTER:  # one harvester more than the guidance's target
            params["harvester_count_target"] = params["harvester_count_target"] + 1
        elif name in module.unit_index:
            mix = defenses if module.unit(name).static else units
            mix[name] = mix.get(name, 0.0) + 0.25 * max(sum(mix.values()), 1.0)
        elif name in ROLES:  # a role: every unit of that role in the mix (or in the module) gains
            role_units = [u for u in module.units if u.role == name]
            for unit in role_units:
                mix = defenses if unit.static else units
                mix[unit.id] = mix.get(unit.id, 0.0) + 0.25 * max(sum(mix.values()), 1.0) / len(role_units)
        elif name in TECH_STRUCTURES:
            params["tech_priority"] = params["tech_priority"] + 15
        elif name in REFINERIES:
            params["expansion_priority"] = max(params["expansion_priority"], 60)
        elif name in module.structures:
            notes.append(f"priority build {raw!r}: stands at the start, no effect")
        else:
            ignored_builds.append(raw)
    if ignored_builds:
        notes.append(f"priority builds not in module {module.id}, ignored: {', '.join(ignored_builds)}")
    if guidance.sell_structures:
        notes.append("sell_structures is not modelled by the reference engine")

    values = {name: _clamp_param(name, value) for name, value in params.items()}
    ignored, binding_notes = _apply_bindings(values, pattern.parameter_bindings)
    notes.extend(binding_notes)
    return Doctrine(
        label=label,
        parameters=values,
        units=_scale_weights(units, values, module),
        defenses=defenses,
        ignored_parameters=ignored,
        notes=tuple(notes),
    )


def _apply_bindings(values: dict[str, int], bindings: tuple[tuple[str, int], ...]) -> tuple[tuple[str, ...], list[str]]:
    ignored: dict[str, None] = {}
    notes: list[str] = []
    for name, value in bindings:
        spec = PARAMETERS.get(name)
        if spec is None:
            ignored[name] = None
            continue
        clamped = min(max(int(value), spec.min_value), spec.max_value)
        if clamped != value:
            notes.append(f"parameter {name}={value} clamped to {clamped} ({spec.min_value}..{spec.max_value})")
        if name == "defense_allocation":
            name = "defense_ratio"
        values[name] = clamped
    return tuple(ignored), notes


def _scale_weights(units: Mapping[str, float], values: Mapping[str, int], module: GameModule) -> dict[str, float]:
    """Apply the *_ratio / *_priority weight parameters (50 is neutral) to the unit mix."""

    def factor(name: str) -> float:
        return values.get(name, PARAMETERS[name].default_value) / 50.0

    out: dict[str, float] = {}
    for unit_id, weight in units.items():
        unit = module.unit(unit_id)
        scale = 1.0
        if unit.queue == "infantry":
            scale *= factor("infantry_ratio")
        if unit.queue == "vehicle":
            scale *= factor("vehicle_ratio")
        if unit.queue == "naval":
            scale *= factor("naval_priority")
        if unit.queue == "aircraft":
            scale *= factor("tech_priority_air")
        if unit.domain != "air" and unit.armor in ("heavy", "medium") and unit.queue != "naval":
            scale *= factor("tech_priority_armor")
        if any("air" in module.weapons[w].targets for w in unit.weapons):
            scale *= factor("tech_priority_aa")
        out[unit_id] = weight * scale
    if not any(w > 0 for w in out.values()):  # every weight was scaled to zero: keep the plan's mix
        return dict(units)
    return out


def doctrine_from_preset(
    module: GameModule, preset_id: str, difficulty_id: str, *, unit_mix: Mix | None = None, label: str = ""
) -> Doctrine:
    """D043: a PersonalityDrivenAi preset, its personality overridden by the difficulty's."""
    preset: Preset = module.presets[preset_id]
    difficulty = module.difficulties[difficulty_id]
    personality: dict[str, Any] = {**preset.personality, **difficulty.personality}
    effects = module.personality_effects

    def effect(key: str, default: float) -> float:
        value = personality.get(key)
        return effects[key].get(str(value), default) if value is not None else default

    adaptation_key = str(personality.get("adaptation", "none"))
    params = {
        "aggression": _clamp_param("aggression", 100 * float(personality.get("aggression", 0.5))),
        "expansion_priority": _clamp_param("expansion_priority", effect("expansion_style", 50)),
        "harvester_count_target": preset.harvester_target,
        "tech_priority": _clamp_param("tech_priority", effect("tech_priority", 40)),
        "defense_ratio": preset.defense_ratio,
        "harvester_defense": 50,
        "harassment": _clamp_param("harassment", effect("harassment", 10) * effect("group_tactics", 1.0)),
        "scout_priority": _clamp_param("scout_priority", effect("scout_frequency", 40)),
        "reaction_urgency": 50,
        "retreat_threshold": _clamp_param("retreat_threshold", effect("retreat_behavior", 30)),
    }
    mix = unit_mix or preset.unit_mix
    return Doctrine(
        label=label or f"{preset.name} {difficulty_id.capitalize()}",
        parameters=params,
        units=dict(mix.units),
        defenses=dict(mix.defenses),
        combat_efficiency=effect("micro_level", 1.0) * effect("focus_fire", 1.0),
        map_weight=effect("influence_maps", 1.0),
        gather_rate=difficulty.gather_rate,
        build_time=difficulty.build_time,
        reaction_delay_s=difficulty.reaction_delay_ticks / 30.0,
        vision=difficulty.vision,
        adaptation=effects["adaptation"].get(adaptation_key, 0.0),
        adaptation_time_s=effects["adaptation_time_s"].get(adaptation_key, 0.0),
    )


def with_difficulty(doctrine: Doctrine, module: GameModule, difficulty_id: str) -> Doctrine:
    """A plan-driven side at a difficulty's engine multipliers (for a mirror at another level)."""
    difficulty = module.difficulties[difficulty_id]
    return replace(
        doctrine,
        gather_rate=difficulty.gather_rate,
        build_time=difficulty.build_time,
        reaction_delay_s=difficulty.reaction_delay_ticks / 30.0,
        vision=difficulty.vision,
    )


DEFAULT_PRESET, DEFAULT_DIFFICULTY = "ic-default", "normal"


def default_plan(module: GameModule) -> Doctrine:
    """The module's default plan, the baseline a skill is measured against: what the stock AI
    plays when no skill is retrieved, i.e. the default preset (``ic-default``, else the module's
    first) at normal difficulty (else the module's first), like the skill's side."""
    preset = DEFAULT_PRESET if DEFAULT_PRESET in module.presets else next(iter(module.presets))
    difficulty = DEFAULT_DIFFICULTY if DEFAULT_DIFFICULTY in module.difficulties else next(iter(module.difficulties))
    return doctrine_from_preset(module, preset, difficulty, label="default plan")
