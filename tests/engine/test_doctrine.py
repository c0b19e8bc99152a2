"""A StrategicPattern drives its side through D044's plan-to-parameter mapping and D041 bindings."""

from __future__ import annotations

import pytest

from skillstudio.engine.doctrine import PARAMETERS, doctrine_from_pattern, doctrine_from_preset
from skillstudio.engine.module import load_module
from skillstudio.model import BuildFocus, TargetType, ThreatLevel, TimePressure
from skillstudio.model.skill import StrategicTarget
from tests.engine.plans import attack, pattern


@pytest.fixture(scope="module")
def ra1():
    return load_module("ra1")


def test_d044_mapping(ra1) -> None:
    low = doctrine_from_pattern(pattern(threat=ThreatLevel.LOW), ra1)
    critical = doctrine_from_pattern(pattern(threat=ThreatLevel.CRITICAL), ra1)
    assert low.param("aggression") == 75 and critical.param("aggression") == 20  # D044
    assert doctrine_from_pattern(pattern(expand=True), ra1).param("expansion_priority") == 85  # D044
    assert doctrine_from_pattern(pattern(BuildFocus.ECONOMY, expand=False), ra1).param("expansion_priority") == 90
    assert doctrine_from_pattern(pattern(expand=False), ra1).param("expansion_priority") == 0
    assert doctrine_from_pattern(pattern(harvesters=6), ra1).param("harvester_count_target") == 6
    assert doctrine_from_pattern(pattern(BuildFocus.ANTI_AIR), ra1).param("tech_priority_aa") == 80  # D044
    assert critical.param("defense_ratio") > low.param("defense_ratio")


def test_targets_and_time_pressure_shape_posture(ra1) -> None:
    calm = doctrine_from_pattern(pattern(), ra1).param("aggression")
    assert doctrine_from_pattern(pattern(targets=(attack(8),)), ra1).param("aggression") > calm
    assert doctrine_from_pattern(pattern(pressure=TimePressure.IMMEDIATE), ra1).param("reaction_urgency") == 100
    defend = (StrategicTarget(TargetType.DEFEND, 9, "hold the ridge"),)
    assert doctrine_from_pattern(pattern(targets=defend), ra1).param("aggression") < calm
    harass = (StrategicTarget(TargetType.HARASS, 6, "raid the ore trucks"),)
    assert doctrine_from_pattern(pattern(targets=harass), ra1).param("harassment") > 10


def test_build_focus_and_priority_builds_shape_the_mix(ra1) -> None:
    anti_air = doctrine_from_pattern(pattern(BuildFocus.ANTI_AIR), ra1)
    anti_armor = doctrine_from_pattern(pattern(BuildFocus.ANTI_ARMOR), ra1)
    assert max(anti_air.units, key=anti_air.units.get) == "flak_truck"
    assert "flak_truck" not in anti_armor.units
    boosted = doctrine_from_pattern(pattern(priority_builds=("Heavy Tank", "radar_dome", "gizmo_factory")), ra1)
    plain = doctrine_from_pattern(pattern(), ra1)
    assert boosted.units["heavy_tank"] > plain.units["heavy_tank"]
    assert boosted.param("tech_priority") > plain.param("tech_priority")
    assert any("gizmo_factory" in note for note in boosted.notes)


def test_a_priority_build_may_name_a_role(ra1) -> None:
    plain = doctrine_from_pattern(pattern(), ra1)
    boosted = doctrine_from_pattern(pattern(priority_builds=("anti_air",)), ra1)
    assert boosted.units["flak_truck"] > plain.units["flak_truck"]
    assert boosted.defenses["sam_site"] > plain.defenses["sam_site"]
    assert boosted.units["medium_tank"] == plain.units["medium_tank"]


def test_bindings_override_and_clamp(ra1) -> None:
    doctrine = doctrine_from_pattern(
        pattern(
            bindings=(("aggression", 90), ("harvester_count_target", 3), ("aggression", 95), ("defense_ratio", 250))
        ),
        ra1,
    )
    assert doctrine.param("aggression") == 95  # later bindings win, as repeated set_parameter calls do
    assert doctrine.param("harvester_count_target") == 3
    assert doctrine.param("defense_ratio") == PARAMETERS["defense_ratio"].max_value
    assert any("defense_ratio=250 clamped" in note for note in doctrine.notes)
    assert doctrine.ignored_parameters == ()


def test_unknown_parameters_are_ignored_and_reported(ra1) -> None:
    bindings = (("aggression", 80), ("warp_speed", 9), ("attack_target_x", 1200), ("plan_depth", 3), ("warp_speed", 1))
    doctrine = doctrine_from_pattern(pattern(bindings=bindings), ra1)
    assert doctrine.ignored_parameters == ("warp_speed", "plan_depth")  # first-seen order, once each
    assert doctrine.param("aggression") == 80  # the known ones still apply


def test_ratio_parameters_scale_the_mix(ra1) -> None:
    base = doctrine_from_pattern(pattern(), ra1)
    no_infantry = doctrine_from_pattern(pattern(bindings=(("infantry_ratio", 0),)), ra1)
    assert base.units["rifle_infantry"] > 0 and no_infantry.units["rifle_infantry"] == 0
    assert no_infantry.units["medium_tank"] == base.units["medium_tank"]


def test_presets_and_difficulties(ra1) -> None:
    normal = doctrine_from_preset(ra1, "ic-default", "normal")
    hard = doctrine_from_preset(ra1, "ic-default", "hard")
    brutal = doctrine_from_preset(ra1, "ic-default", "brutal")
    sandbox = doctrine_from_preset(ra1, "ic-default", "sandbox")
    assert normal.param("aggression") == 50 and brutal.param("aggression") == 80 and sandbox.param("aggression") == 10
    assert (brutal.gather_rate, brutal.build_time, brutal.vision) == (1.3, 0.8, 1.2)
    assert hard.combat_efficiency > normal.combat_efficiency and hard.adaptation > 0 == normal.adaptation
    assert sandbox.reaction_delay_s == 1.0  # 30 ticks
    assert doctrine_from_preset(ra1, "classic-ra", "normal").param("aggression") == 60
