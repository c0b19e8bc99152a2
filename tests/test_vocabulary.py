"""The suggestion lists editors offer: AI parameter names and scene templates (no Qt)."""

from __future__ import annotations

from pathlib import Path

import yaml

from skillstudio.model import parse_skill
from skillstudio.model.vocabulary import (
    DISPLAY_MODES,
    parameter_info,
    parameter_names,
    scene_template,
    template_ids,
)

SAMPLE = Path(__file__).resolve().parents[1] / "resources" / "sample_library"


def test_the_fourteen_scene_templates_of_the_docs_in_order() -> None:
    assert template_ids() == (
        "ambush",
        "patrol",
        "convoy_escort",
        "defend_position",
        "base_building",
        "timed_objective",
        "reinforcements",
        "scripted_scene",
        "video_playback",
        "weather",
        "extraction",
        "map_expansion",
        "sub_map_transition",
        "phase_briefing",
    )


def test_template_parameters_keep_their_shapes_and_options() -> None:
    ambush = scene_template("ambush")
    assert ambush is not None
    assert ambush.parameter_names == ("location", "attacker_units", "trigger_zone", "delay")
    defend = scene_template("defend_position")
    assert defend is not None and defend.parameter("waves").shape == "list"
    assert defend.parameter("waves").label == "waves[]"
    transition = scene_template("sub_map_transition")
    assert transition is not None and transition.parameter("outcomes").shape == "map"
    video = scene_template("video_playback")
    assert video is not None and video.parameter("display_mode").options == DISPLAY_MODES
    assert scene_template(" weather ").parameter("type").options[-1] == "storm"
    assert scene_template("bridge_ambush") is None  # D057's illustrative names are not templates
    assert ambush.parameter("nonexistent") is None


def test_known_parameter_names_include_d044s_and_the_research_ones() -> None:
    names = parameter_names()
    for name in (
        "aggression",
        "expansion_priority",
        "harvester_count_target",
        "tech_priority_aa",
        "tech_priority_armor",
        "infantry_ratio",
        "vehicle_ratio",
        "naval_priority",
        "defense_ratio",
        "defense_allocation",
        "harvester_defense",
        "scout_priority",
        "reaction_urgency",
        "consultation_interval",
        "attack_target_x",
        "attack_target_y",
    ):
        assert name in names
    assert len(names) == len(set(names))
    assert parameter_info("consultation_interval").source == "D044"
    assert "300" in parameter_info("consultation_interval").hint
    assert parameter_info("no_such_parameter") is None


def test_every_template_and_parameter_the_sample_library_uses_is_known() -> None:
    """The sample library was written against the docs: the vocabulary must cover it."""
    seen_templates: set[str] = set()
    for path in sorted(SAMPLE.rglob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data.pop("verifications", None)
        skill = parse_skill(data)
        scenes = getattr(skill.body, "scene_composition", ())
        for scene in scenes:
            template = scene_template(scene.template)
            assert template is not None, f"{path.name}: {scene.template}"
            seen_templates.add(scene.template)
            unknown = set(scene.values) - set(template.parameter_names)
            assert not unknown, f"{path.name}: {scene.template} {unknown}"
    assert len(seen_templates) >= 10
