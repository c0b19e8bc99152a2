"""EncounterPattern validation against the typed scene-template schemas."""

from __future__ import annotations

from dataclasses import replace

import pytest

from skillstudio.model import EncounterPattern, MissionStructureHints, SceneInstance
from skillstudio.model.vocabulary import SCENE_TEMPLATES
from skillstudio.verification.content import scene_schemas, validate_pattern, validate_skill
from tests.factories import ai_skill, content_skill

OK_MISSION = MissionStructureHints(outcomes=("victory", "defeat"))


def findings(*scenes: SceneInstance, module: str = "ra1", mission: MissionStructureHints = OK_MISSION):
    return validate_pattern(EncounterPattern(tuple(scenes), mission), module)


def errors(*scenes: SceneInstance, **kwargs) -> list[str]:
    return [f"{f.path}: {f.message}" for f in findings(*scenes, **kwargs) if f.severity == "error"]


AMBUSH = {
    "location": "bridge",
    "attacker_units": {"rifle_infantry": 4, "light_tank": 1},
    "delay": 20,
    "trigger_zone": {"center": [10, 12], "radius": 4},
}


def test_every_builtin_template_is_typed_like_the_vocabulary() -> None:
    schemas = scene_schemas()
    assert set(schemas.templates) == set(SCENE_TEMPLATES) and len(schemas.templates) == 14
    for template_id, template in schemas.templates.items():
        assert tuple(template.parameters) == SCENE_TEMPLATES[template_id].parameter_names


def test_a_valid_pattern_passes() -> None:
    assert findings(SceneInstance("ambush", AMBUSH), SceneInstance("weather", {"type": "fog", "intensity": 0.5})) == []


def test_unknown_template_names_the_scene() -> None:
    assert errors(SceneInstance("ambush", AMBUSH), SceneInstance("air_raid", {})) == [
        "scene_composition[1].template: unknown scene template 'air_raid' (built-in: "
        + ", ".join(SCENE_TEMPLATES)
        + ")"
    ]


def test_unknown_unit_type() -> None:
    bad = dict(AMBUSH, attacker_units={"rifle_infantry": 2, "laser_tank": 1})
    assert errors(SceneInstance("ambush", bad)) == [
        "scene_composition[0] (ambush).attacker_units.laser_tank: unknown unit type 'laser_tank'"
    ]
    # units are the module's: an Orca is td's, a MiG ra1's
    patrol = {"waypoints": [[1, 1], [2, 2]], "unit_composition": {"orca": 1, "mig": 1}}
    assert errors(SceneInstance("patrol", patrol), module="td") == [
        "scene_composition[0] (patrol).unit_composition.mig: unknown unit type 'mig'"
    ]
    assert errors(SceneInstance("patrol", patrol), module="ra1") == [
        "scene_composition[0] (patrol).unit_composition.orca: unknown unit type 'orca'"
    ]


@pytest.mark.parametrize(
    ("template", "values", "message"),
    [
        ("ambush", dict(AMBUSH, delay=-5), "scene_composition[0] (ambush).delay: -5 is out of range 0..3600"),
        ("ambush", dict(AMBUSH, delay="soon"), "scene_composition[0] (ambush).delay: expected an integer, got 'soon'"),
        ("ambush", dict(AMBUSH, delay=True), "scene_composition[0] (ambush).delay: expected an integer, got True"),
        (
            "weather",
            {"type": "fog", "intensity": 1.5},
            "scene_composition[0] (weather).intensity: 1.5 is out of range 0.0..1.0",
        ),
        (
            "weather",
            {"type": "acid_rain"},
            "scene_composition[0] (weather).type: 'acid_rain' is not one of rain, snow, sandstorm, blizzard, fog, storm",
        ),
        (
            "timed_objective",
            {"target": "hq"},
            "scene_composition[0] (timed_objective).time_limit: missing (required by timed_objective)",
        ),
        (
            "ambush",
            dict(AMBUSH, attacker_units={"rifle_infantry": 0}),
            "scene_composition[0] (ambush).attacker_units.rifle_infantry: count 0 is out of range 1..200",
        ),
        (
            "patrol",
            {"waypoints": [[1, 1]], "unit_composition": {"rifle_infantry": 2}},
            "scene_composition[0] (patrol).waypoints: 1 items, expected 2..1000",
        ),
        (
            "extraction",
            {"pickup_zone": {"center": [5000, 1]}},
            "scene_composition[0] (extraction).pickup_zone.center: [5000, 1] is outside the map (0..1024)",
        ),
        (
            "video_playback",
            {"video_ref": "intro", "skippable": "yes"},
            "scene_composition[0] (video_playback).skippable: expected true or false, got 'yes'",
        ),
    ],
)
def test_type_and_range_errors(template: str, values: dict, message: str) -> None:
    assert errors(SceneInstance(template, values)) == [message]


def test_missing_victory_outcome() -> None:
    assert errors(SceneInstance("ambush", AMBUSH), mission=MissionStructureHints(outcomes=("defeat",))) == [
        "mission_structure.outcomes: no victory outcome (name one 'victory'); a mission must be winnable"
    ]


def test_force_balance_and_unknown_parameters_are_warnings() -> None:
    lopsided = dict(AMBUSH, attacker_units={"mammoth_tank": 10})
    result = findings(
        SceneInstance("ambush", lopsided),
        SceneInstance("reinforcements", {"trigger": "t", "units": {"rifle_infantry": 2}}),
        SceneInstance("ambush", dict(AMBUSH, colour="red")),
    )
    assert [f.severity for f in result] == ["warning", "warning"]
    assert "colour" in result[0].path and "force balance" in result[1].message


def test_unknown_module_skips_unit_checks_with_a_warning() -> None:
    result = findings(SceneInstance("ambush", dict(AMBUSH, attacker_units={"anything": 3})), module="mymod")
    assert [(f.severity, f.path) for f in result] == [("warning", "game_module")]


def test_skills() -> None:
    assert validate_skill(ai_skill()).errors
    skill = content_skill()
    assert [f.path for f in validate_skill(skill).errors] == ["scene_composition[0] (ambush).attacker_units"]
    td_ambush = dict(AMBUSH, attacker_units={"minigunner": 4, "recon_bike": 2})  # the factory's skill is td's
    skill = replace(skill, body=EncounterPattern((SceneInstance("ambush", td_ambush),), OK_MISSION))
    assert validate_skill(skill).ok
    broken = replace(skill, body=replace(skill.body, mission_structure=MissionStructureHints(outcomes=())))
    assert not validate_skill(broken).ok
