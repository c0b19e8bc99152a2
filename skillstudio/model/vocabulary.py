"""Names the IC documents use but no schema closes: AI parameters and scene templates.

Editors offer these as suggestions; nothing here is a validation rule. D041 has no global
registry of parameter names (each ``AiStrategy`` publishes its own and ignores names it does
not know), and a ``SceneInstance`` may name a template a mod adds. Source:
``../shared/reference/ic-formats.md`` section 1 (``set_parameter()`` names) and section 4
(the 14 built-in scene templates and their parameter names; the docs give no types, ranges or
defaults for them, only which parameters are lists ``[]`` or maps ``{}``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# --- AI parameters (D041 set_parameter, D044, D043, [R]) -----------------------------------------


@dataclass(frozen=True, slots=True)
class ParameterInfo:
    name: str
    hint: str  # what the documents say about its range, default or use
    source: str  # the document that names it: D044, D043, or [R] (research, not settled)


KNOWN_PARAMETERS: tuple[ParameterInfo, ...] = (
    ParameterInfo("aggression", "0–100 scale implied; 20 at Critical threat, 75 at Low", "D044"),
    ParameterInfo("expansion_priority", "90 for an Economy focus; 85 when expand is true", "D044"),
    ParameterInfo("harvester_count_target", "= the plan's harvester_target (e.g. 6)", "D044"),
    ParameterInfo("tech_priority_aa", "80 for an AntiAir focus", "D044"),
    ParameterInfo("tech_priority_armor", "research only", "[R]"),
    ParameterInfo("infantry_ratio", "research only", "[R]"),
    ParameterInfo("vehicle_ratio", "research only", "[R]"),
    ParameterInfo("naval_priority", "research only", "[R]"),
    ParameterInfo("defense_ratio", "20/40/65/85 by posture", "[R]"),
    ParameterInfo("defense_allocation", "20/40/60/80 by posture", "[R]"),
    ParameterInfo("harvester_defense", "70 or 30", "[R]"),
    ParameterInfo("scout_priority", "80 when the first target is a Scout", "D044"),
    ParameterInfo("reaction_urgency", "100 when time pressure is Immediate", "D044"),
    ParameterInfo("consultation_interval", "orchestrator: 30–3000 ticks, default 300 (~10 s)", "D044"),
    ParameterInfo("attack_target_x", "world position x of the first target when it is an Attack", "D044"),
    ParameterInfo("attack_target_y", "world position y of the first target when it is an Attack", "D044"),
    ParameterInfo("watch_direction", "research only", "[R]"),
    ParameterInfo("plan_depth", "example GOAP mod: 1–10, default 5", "D043"),
    ParameterInfo("replan_interval", "example GOAP mod: 10–120, default 30", "D043"),
    ParameterInfo("aggression_weight", "example GOAP mod: 0–100, default 50", "D043"),
    ParameterInfo("decision_interval", "LlmPlayerAi; no range given", "D044"),
    ParameterInfo("max_tokens", "LlmPlayerAi; no range given", "D044"),
)

_PARAMETERS = {info.name: info for info in KNOWN_PARAMETERS}


def parameter_names() -> tuple[str, ...]:
    """Known ``set_parameter()`` names, the ones D044 maps plans to first."""
    return tuple(info.name for info in KNOWN_PARAMETERS)


def parameter_info(name: str) -> ParameterInfo | None:
    return _PARAMETERS.get(name.strip())


# --- scene templates (04-MODDING / tera-templating) ----------------------------------------------

Shape = Literal["value", "list", "map"]


@dataclass(frozen=True, slots=True)
class SceneParameter:
    name: str
    shape: Shape = "value"  # the docs mark list parameters with [] and map parameters with {}
    options: tuple[str, ...] = ()  # the values the docs list, where they list any

    @property
    def label(self) -> str:
        suffix = {"value": "", "list": "[]", "map": "{}"}[self.shape]
        return self.name + suffix


@dataclass(frozen=True, slots=True)
class SceneTemplate:
    id: str
    summary: str  # our one-line description; the docs give only the id and parameter names
    parameters: tuple[SceneParameter, ...]

    @property
    def parameter_names(self) -> tuple[str, ...]:
        return tuple(parameter.name for parameter in self.parameters)

    def parameter(self, name: str) -> SceneParameter | None:
        for parameter in self.parameters:
            if parameter.name == name:
                return parameter
        return None


def _params(*specs: str | SceneParameter) -> tuple[SceneParameter, ...]:
    out = []
    for spec in specs:
        if isinstance(spec, SceneParameter):
            out.append(spec)
        elif spec.endswith("[]"):
            out.append(SceneParameter(spec[:-2], "list"))
        elif spec.endswith("{}"):
            out.append(SceneParameter(spec[:-2], "map"))
        else:
            out.append(SceneParameter(spec))
    return tuple(out)


DISPLAY_MODES = ("fullscreen", "radar_comm", "picture_in_picture")
WEATHER_TYPES = ("rain", "snow", "sandstorm", "blizzard", "fog", "storm")
# D043's built-in difficulties; Workshop packages may add more (a free id is valid).
DIFFICULTIES = ("sandbox", "easy", "normal", "hard", "brutal")

SCENE_TEMPLATES: dict[str, SceneTemplate] = {
    template.id: template
    for template in (
        SceneTemplate(
            "ambush",
            "Hidden units attack when the player enters a zone",
            _params("location", "attacker_units", "trigger_zone", "delay"),
        ),
        SceneTemplate(
            "patrol",
            "Units walk a route and react to intruders",
            _params("waypoints", "unit_composition", "alert_radius"),
        ),
        SceneTemplate(
            "convoy_escort",
            "Protect units travelling along a route",
            _params("route", "convoy_units", "ambush_points[]", "escort_units"),
        ),
        SceneTemplate(
            "defend_position",
            "Hold a position against waves",
            _params("position", "waves[]", "interval", "reinforcement_schedule"),
        ),
        SceneTemplate(
            "base_building",
            "Build a base from a starting budget",
            _params("start_resources", "available_structures", "tech_tree_limit"),
        ),
        SceneTemplate(
            "timed_objective",
            "Reach or hold a target before time runs out",
            _params("target", "time_limit", "failure_trigger"),
        ),
        SceneTemplate(
            "reinforcements", "Units arrive when a trigger fires", _params("trigger", "units", "entry_point", "delay")
        ),
        SceneTemplate(
            "scripted_scene",
            "A scripted moment with actors, dialogue and camera",
            _params("actors[]", "dialogue[]", "camera_positions[]"),
        ),
        SceneTemplate(
            "video_playback",
            "Play a video",
            _params("video_ref", "trigger", SceneParameter("display_mode", "value", DISPLAY_MODES), "skippable"),
        ),
        SceneTemplate(
            "weather",
            "Weather that changes vision or movement",
            _params(SceneParameter("type", "value", WEATHER_TYPES), "intensity", "trigger", "duration", "sim_effects"),
        ),
        SceneTemplate(
            "extraction",
            "Get units to a pickup zone for transport out",
            _params("pickup_zone", "transport_type", "signal_trigger"),
        ),
        SceneTemplate(
            "map_expansion",
            "Reveal a new map layer mid-mission",
            _params("trigger", "layer_name", "transition", "reinforcements[]", "briefing"),
        ),
        SceneTemplate(
            "sub_map_transition",
            "Move units into a sub-map and back",
            _params("portal_region", "sub_map", "allowed_units[]", "transition", "outcomes{}"),
        ),
        SceneTemplate(
            "phase_briefing",
            "A briefing between mission phases",
            _params(
                "briefing_ref",
                "video_ref",
                SceneParameter("display_mode", "value", DISPLAY_MODES),
                "layer_name",
                "reinforcements[]",
            ),
        ),
    )
}


def template_ids() -> tuple[str, ...]:
    """The 14 built-in scene template ids, in the order the docs list them."""
    return tuple(SCENE_TEMPLATES)


def scene_template(template_id: str) -> SceneTemplate | None:
    """The built-in template with this id, or None (a mod's own template, or a typo)."""
    return SCENE_TEMPLATES.get(template_id.strip())


__all__ = [
    "DIFFICULTIES",
    "DISPLAY_MODES",
    "KNOWN_PARAMETERS",
    "SCENE_TEMPLATES",
    "WEATHER_TYPES",
    "ParameterInfo",
    "SceneParameter",
    "SceneTemplate",
    "parameter_info",
    "parameter_names",
    "scene_template",
    "template_ids",
]
