"""Module data: the shipped files load; malformed files are rejected with file, field and reason."""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path

import pytest
import yaml

from skillstudio.engine.module import BUILT_IN_DIFFICULTIES, available_modules, load_module, parse_module
from skillstudio.model import BuildFocus, ValidationError
from skillstudio.paths import resource

RA1 = resource("modules", "ra1.yaml")


@cache
def _ra1_text() -> dict:
    return yaml.safe_load(RA1.read_text(encoding="utf-8"))


def ra1_data() -> dict:
    return copy.deepcopy(_ra1_text())


def reject(data: object, name: str = "broken.yaml") -> ValidationError:
    text = data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False)
    with pytest.raises(ValidationError) as caught:
        parse_module(text, path=f"/somewhere/{name}")
    return caught.value


@pytest.mark.parametrize("module_id", ["ra1", "td"])
def test_shipped_modules_load(module_id: str) -> None:
    module = load_module(module_id)
    assert module.id == module_id
    assert set(module.presets) >= {"classic-ra", "openra", "ic-default"}
    assert set(module.difficulties) >= set(BUILT_IN_DIFFICULTIES)
    assert set(module.build_focus) == set(BuildFocus)
    assert module.max_tier >= 2
    assert module.sources, "a module says where its figures come from"
    assert module_id in available_modules()


def test_ra1_uses_the_figures_ic_gives() -> None:
    """ic-formats.md sections 2 and 5, where the docs give a number."""
    m = load_module("ra1")
    rifle = m.unit("rifle_infantry")
    assert (rifle.cost, rifle.build_time_s, rifle.hp, rifle.armor, rifle.speed) == (100, 5.0, 50, "none", 56)
    assert rifle.weapons == ("m1_carbine",) and rifle.prerequisites == ("barracks",)
    assert m.unit("medium_tank").cost == 800
    assert (m.unit("heavy_tank").hp, m.unit("heavy_tank").armor) == (400, "heavy")
    gun = m.weapons["105mm"]
    assert (gun.damage, gun.rate_of_fire, gun.range) == (60, 80, 5)
    assert dict(gun.versus) == {"none": 100, "light": 80, "medium": 60, "heavy": 40, "wood": 120, "concrete": 30}
    tesla = m.unit("tesla_coil")
    assert (tesla.cost, tesla.hp, tesla.armor, m.weapons["tesla_zap"].damage) == (1500, 400, "concrete", 200)
    assert "radar_dome" in tesla.prerequisites
    assert m.armor_classes == ("none", "light", "medium", "heavy", "wood", "concrete")
    assert (m.economy.cargo_capacity, m.economy.harvest_rate_per_tick, m.economy.unload_rate_per_tick) == (20, 3, 2)
    assert m.presets["classic-ra"].personality["aggression"] == 0.6
    assert m.presets["ic-default"].personality["aggression"] == 0.5
    table = {d: (x.gather_rate, x.build_time, x.reaction_delay_ticks, x.vision) for d, x in m.difficulties.items()}
    assert table == {
        "sandbox": (0.5, 1.5, 30, 0.8),
        "easy": (0.8, 1.2, 8, 1.0),
        "normal": (1.0, 1.0, 0, 1.0),
        "hard": (1.0, 1.0, 0, 1.0),
        "brutal": (1.3, 0.8, 0, 1.2),
    }
    assert m.difficulties["brutal"].personality == {"aggression": 0.8, "micro_level": "extreme", "adaptation": "full"}
    assert m.difficulties["hard"].personality == {"micro_level": "moderate", "adaptation": "reactive"}


def test_tiers_come_from_prerequisites() -> None:
    m = load_module("ra1")
    assert m.unit("rifle_infantry").tier == 1
    assert m.unit("tesla_coil").tier == 2  # radar dome
    assert m.unit("mammoth_tank").tier == 3  # tech center
    assert m.tier_cost(1) == 0 and m.tier_cost(2) > 0


def test_bad_yaml_names_the_file_and_line() -> None:
    error = reject("module: ra1\nunits: [unclosed\n")
    assert "broken.yaml" in str(error) and "line" in str(error)


def test_python_tags_are_not_executed() -> None:
    error = reject("module: !!python/object/apply:os.system ['echo pwned']\n")
    assert "broken.yaml" in str(error)


def test_not_a_mapping() -> None:
    assert "expected a mapping" in str(reject("- just\n- a list\n"))


@pytest.mark.parametrize(
    ("change", "path", "reason"),
    [
        (lambda d: d["units"]["medium_tank"].update(armor="steel"), "units.medium_tank.armor", "not an armour class"),
        (lambda d: d["units"]["medium_tank"].update(weapons=["laser"]), "units.medium_tank.weapons[0]", "not a weapon"),
        (
            lambda d: d["units"]["medium_tank"].update(weapons=[["105mm"]]),
            "units.medium_tank.weapons[0]",
            "not a weapon",
        ),
        (lambda d: d["units"]["medium_tank"].update(cost="cheap"), "units.medium_tank.cost", "expected a whole number"),
        (lambda d: d["units"]["medium_tank"].update(cost=-5), "units.medium_tank.cost", "outside"),
        (
            lambda d: d["units"]["medium_tank"].update(prerequisites=["moon_base"]),
            "units.medium_tank.prerequisites[0]",
            "not a structure",
        ),
        (
            lambda d: d["units"]["medium_tank"].update(prerequisites=[{"war_factory": 1}]),
            "units.medium_tank.prerequisites[0]",
            "not a structure",
        ),
        (lambda d: d["units"]["medium_tank"].update(turbo=True), "units.medium_tank.turbo", "unknown field"),
        (lambda d: d["units"]["medium_tank"].update(role="tank"), "units.medium_tank.role", "not a role"),
        (lambda d: d["units"]["pillbox"].update(speed=5), "units.pillbox.speed", "speed 0"),
        (lambda d: d["weapons"]["105mm"]["versus"].pop("wood"), "weapons.105mm.versus", "missing armour classes wood"),
        (lambda d: d["weapons"]["105mm"].update(damage=float("nan")), "weapons.105mm.damage", "not a finite number"),
        (lambda d: d["weapons"]["105mm"].update(targets=["space"]), "weapons.105mm.targets[0]", "not a domain"),
        (lambda d: d["difficulties"].pop("hard"), "difficulties", "missing the built-in difficulties hard"),
        (lambda d: d["difficulties"]["hard"].update(gather_rate=0), "difficulties.hard.gather_rate", "outside"),
        (
            lambda d: d["ai_presets"]["ic-default"]["personality"].update(micro_level="godlike"),
            "ai_presets.ic-default.personality.micro_level",
            "not one of",
        ),
        (
            lambda d: d["ai_presets"]["ic-default"]["personality"].pop("aggression"),
            "ai_presets.ic-default.personality",
            "missing personality keys aggression",
        ),
        (
            lambda d: d["ai_presets"]["openra"]["unit_mix"]["units"].update(tesla_coil=1),
            "ai_presets.openra.unit_mix.units.tesla_coil",
            "static defence",
        ),
        (lambda d: d["build_focus"].pop("naval"), "build_focus", "missing build focus naval"),
        (
            lambda d: d["build_focus"].update(stealth={"units": {"rifle_infantry": 1}}),
            "build_focus.stealth",
            "not a build focus",
        ),
        (lambda d: d["build_focus"]["tech"].update(units={"mammoth_tank": 1}), "build_focus.tech.units", "tier 1"),
        (
            lambda d: d["match"].update(points={"army": 0.5, "map_control": 0.5, "base": 0.5}),
            "match.points",
            "add up to 1",
        ),
        (lambda d: d["economy"]["harvester"].pop("bale_value"), "economy.harvester.bale_value", "missing"),
        (lambda d: d.pop("units"), "units", "missing"),
        (lambda d: d.update(modul="typo"), "modul", "unknown field"),
    ],
)
def test_malformed_module_names_file_field_and_reason(change, path: str, reason: str) -> None:
    data = ra1_data()
    change(data)
    error = reject(data)
    text = str(error)
    assert text.startswith("broken.yaml"), text
    assert any(issue.path == path and reason in issue.message for issue in error.issues), text


def test_every_problem_is_reported_at_once() -> None:
    data = ra1_data()
    data["units"]["medium_tank"]["armor"] = "steel"
    data["weapons"]["90mm"]["damage"] = "lots"
    error = reject(data)
    paths = {issue.path for issue in error.issues}
    assert {"units.medium_tank.armor", "weapons.90mm.damage"} <= paths


def test_oversized_file_is_refused() -> None:
    error = reject("# " + "x" * 1_100_000 + "\n")
    assert "larger than" in str(error)


def test_unknown_module_lists_the_known_ones() -> None:
    with pytest.raises(ValidationError) as caught:
        load_module("ra9")
    assert "ra1" in str(caught.value) and "td" in str(caught.value)


def test_module_by_path_and_search_dirs(tmp_path: Path) -> None:
    data = ra1_data()
    data["module"] = "mymod"
    path = tmp_path / "mymod.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert load_module(str(path)).id == "mymod"
    assert load_module("mymod", search=(tmp_path,)).id == "mymod"


def minimal_module() -> dict:
    """Three units, no aircraft, no static defences, a single tech tier."""
    data = ra1_data()
    keep = {"rifle_infantry", "rocket_infantry", "medium_tank"}
    data["module"] = "mini"
    data["units"] = {k: v for k, v in data["units"].items() if k in keep}
    used = {w for unit in data["units"].values() for w in unit["weapons"]}
    data["weapons"] = {k: v for k, v in data["weapons"].items() if k in used}
    data["structures"] = {k: v for k, v in data["structures"].items() if v["tier"] == 1}
    data["aliases"] = {
        k: v for k, v in data["aliases"].items() if v in data["units"] or v in data["structures"] or v == "harvester"
    }
    mix = {"units": {"rifle_infantry": 2, "rocket_infantry": 1, "medium_tank": 2}}
    data["build_focus"] = {focus: dict(mix) for focus in data["build_focus"]}
    for preset in data["ai_presets"].values():
        preset["unit_mix"] = dict(mix)
    return data


def test_a_minimal_module_plays(tmp_path: Path) -> None:
    from skillstudio.engine.batch import run_batch
    from tests.engine.plans import SENSIBLE

    path = tmp_path / "mini.yaml"
    path.write_text(yaml.safe_dump(minimal_module()), encoding="utf-8")
    module = load_module(str(path))
    assert module.max_tier == 1 and not any(u.static or u.domain == "air" for u in module.units)
    mirror = run_batch(SENSIBLE, "mirror", 300, 3, module)
    assert 0.3 <= mirror.win_rate <= 0.7
    harder = run_batch(SENSIBLE, "IC Default Brutal", 300, 3, module)
    assert harder.win_rate < mirror.win_rate


def test_aliases_name_units_structures_and_the_harvester() -> None:
    module = load_module("ra1")
    assert module.resolve("Ore Truck") == "harvester" and module.resolve("kennel") == "barracks"
    assert module.resolve("V2-Rocket") == "v2_launcher" and module.resolve("yak") == "yak"
    assert module.resolve("hovercraft") == "hovercraft"  # unknown names stay themselves


@pytest.mark.parametrize(
    ("aliases", "problem"),
    [
        ({"ore_truck": "mcv"}, "aliases.ore_truck: 'mcv' is not a unit, a structure or harvester"),
        ({"yak": "mig"}, "aliases.yak: yak is already a unit"),
        ({"Bad Name": "mig"}, "aliases.Bad Name"),
        ({"dog": ["attack_dog"]}, "aliases.dog"),
    ],
)
def test_a_bad_alias_is_refused_with_its_path(tmp_path: Path, aliases: dict, problem: str) -> None:
    data = ra1_data()
    data["aliases"] = aliases
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ValidationError) as caught:
        load_module(str(path))
    assert problem in str(caught.value)
