"""Game-module data for the reference engine: ``resources/modules/<id>.yaml``, read and validated.

A module file is untrusted input (a studio may ship its own): it is read with
``yaml.safe_load`` only, bounded in size, and every problem is reported at once as a
:class:`~skillstudio.model.validation.ValidationError` whose context is the file and whose
issues name the field path and the reason, e.g. ``ra1.yaml: units.medium_tank.armor: 'steel'
is not an armour class (none|light|...)``.

The format is described in docs/reference-engine.md; resources/modules/ra1.yaml is the
annotated example.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from skillstudio.model.enums import BuildFocus
from skillstudio.model.validation import Checker, Issue, ValidationError, describe, join_path
from skillstudio.paths import resource

MAX_MODULE_BYTES = 1_000_000
MAX_UNITS = 48
MAX_WEAPONS = 256
MAX_ENTRIES = 64
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
MODULE_ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")

QUEUES = ("infantry", "vehicle", "aircraft", "naval", "defense")
ROLES = (
    "anti_infantry",
    "anti_armor",
    "anti_air",
    "artillery",
    "scout",
    "main_battle",
    "heavy",
    "naval",
    "defense",
    "support",
)
DOMAINS = ("ground", "air", "naval")
HARVESTER = "harvester"  # an alias target: the economy's harvesters, not an army unit
BUILT_IN_DIFFICULTIES = ("sandbox", "easy", "normal", "hard", "brutal")
# Personality keys IC names (ic-formats.md section 2). Each needs a table in personality_effects
# except aggression (a number) and build_order (kept for fidelity, no effect here).
PERSONALITY_KEYS = (
    "aggression",
    "tech_priority",
    "micro_level",
    "scout_frequency",
    "build_order",
    "expansion_style",
    "focus_fire",
    "retreat_behavior",
    "adaptation",
    "group_tactics",
    "influence_maps",
    "harassment",
)
EFFECT_TABLES: dict[str, tuple[float, float]] = {  # table -> allowed value range
    "tech_priority": (0, 100),
    "micro_level": (0.1, 5),
    "scout_frequency": (0, 100),
    "expansion_style": (0, 100),
    "retreat_behavior": (0, 100),
    "adaptation": (0, 1),
    "adaptation_time_s": (0, 36_000),
    "group_tactics": (0, 10),
    "focus_fire": (0.1, 5),
    "influence_maps": (0.1, 10),
    "harassment": (0, 100),
}


# ================================================================================================
# The validated module
# ================================================================================================


@dataclass(frozen=True)
class Weapon:
    id: str
    damage: float
    rate_of_fire: float  # ticks between shots
    range: float  # cells
    targets: frozenset[str]  # domains it can hit
    versus: Mapping[str, float]  # armour class -> percent


@dataclass(frozen=True)
class UnitType:
    id: str
    cost: int
    build_time_s: float
    hp: float
    armor: str
    speed: float  # world units per tick; 0 for static defences
    weapons: tuple[str, ...]
    queue: str
    domain: str
    role: str  # one of ROLES: what the unit is for
    prerequisites: tuple[str, ...]
    tier: int  # the highest tier among its prerequisites
    uptime: float = 1.0
    raider: bool = False

    @property
    def static(self) -> bool:
        return self.queue == "defense"


@dataclass(frozen=True)
class Mix:
    """Weights by value over mobile units and over static defences."""

    units: Mapping[str, float]
    defenses: Mapping[str, float]


@dataclass(frozen=True)
class Preset:
    id: str
    name: str
    personality: Mapping[str, Any]
    harvester_target: int
    defense_ratio: int  # 0..100
    unit_mix: Mix


@dataclass(frozen=True)
class Difficulty:
    id: str
    gather_rate: float
    build_time: float
    reaction_delay_ticks: int
    vision: float
    personality: Mapping[str, Any]


@dataclass(frozen=True)
class MatchConfig:
    step_s: float
    time_limit_s: float
    base_distance_cells: float
    naval_access: float
    timeline_samples: int
    points_army: float
    points_map_control: float
    points_base: float
    draw_margin: float

    @property
    def steps(self) -> int:
        return round(self.time_limit_s / self.step_s)


@dataclass(frozen=True)
class CombatConfig:
    intensity: float
    defender_bonus: float
    static_bonus: float
    range_reference_cells: float
    range_exponent: float
    luck: float
    luck_period_s: float
    form: float
    retreat_value: float
    static_weight: float
    raid_efficiency: float
    raid_start_s: float
    expansion_exposure: float
    structure_target_weight: float


@dataclass(frozen=True)
class EconomyConfig:
    start_credits: float
    start_harvesters: float
    harvester_cost: float
    harvester_build_time_s: float
    harvester_hp: float
    harvester_armor: str
    cargo_capacity: float
    harvest_rate_per_tick: float
    unload_rate_per_tick: float
    bale_value: float
    trip_time_s: float
    refinery_cost: float
    refinery_hp: float
    field_ore: float
    regrowth_per_s: float
    harvester_slots: float
    crowding_yield: float
    factory_cost: float
    start_factories: int
    max_factories: int
    float_threshold: float

    @property
    def gather_rate_per_s(self) -> float:
        """Credits one harvester brings per second at full rate (one load per round trip)."""
        load = self.cargo_capacity * self.bale_value
        ticks = self.cargo_capacity / self.harvest_rate_per_tick + self.cargo_capacity / self.unload_rate_per_tick
        return load / (ticks / 30.0 + self.trip_time_s)


@dataclass(frozen=True)
class BaseConfig:
    hp: float
    structures: float
    armor: str


@dataclass(frozen=True)
class GameModule:
    id: str
    name: str
    data_version: int
    path: str
    fingerprint: str  # sha256 of the file, first 16 hex digits
    sources: Mapping[str, str]
    match: MatchConfig
    combat: CombatConfig
    economy: EconomyConfig
    base: BaseConfig
    armor_classes: tuple[str, ...]
    structures: Mapping[str, tuple[int, int]]  # id -> (tier, cost)
    weapons: Mapping[str, Weapon]
    units: tuple[UnitType, ...]
    build_focus: Mapping[BuildFocus, Mix]
    presets: Mapping[str, Preset]
    difficulties: Mapping[str, Difficulty]
    personality_effects: Mapping[str, Mapping[str, float]]
    unit_index: Mapping[str, int] = field(default_factory=dict)
    # Other names skills use for a unit, a structure or the economy's harvester (``ore_truck``
    # in Red Alert is the harvester; ``kennel`` is where dogs are trained, the barracks here).
    aliases: Mapping[str, str] = field(default_factory=dict)

    @property
    def max_tier(self) -> int:
        return max(tier for tier, _cost in self.structures.values())

    def tier_cost(self, tier: int) -> int:
        """Credits to unlock ``tier`` (the structures of that tier); tier 1 stands at the start."""
        return sum(cost for t, cost in self.structures.values() if t == tier) if tier > 1 else 0

    def unit(self, unit_id: str) -> UnitType:
        return self.units[self.unit_index[unit_id]]

    def resolve(self, name: str) -> str:
        """A name as a skill writes it (any case, spaces or hyphens), as this module's id: a unit,
        a structure, :data:`HARVESTER`, or the name itself when the module does not know it."""
        key = "_".join(name.strip().lower().replace("-", " ").split())
        return self.aliases.get(key, key)


# ================================================================================================
# Loading
# ================================================================================================


def modules_dir() -> Path:
    return resource("modules")


def available_modules(directory: Path | None = None) -> list[str]:
    root = directory or modules_dir()
    return sorted(path.stem for path in root.glob("*.yaml") if MODULE_ID_PATTERN.match(path.stem))


def load_module(module: str | Path, *, search: tuple[Path, ...] = ()) -> GameModule:
    """A module by id (``ra1``, looked up in ``search`` then resources/modules/) or by file path."""
    if isinstance(module, Path) or module.endswith((".yaml", ".yml")) or "/" in module or "\\" in module:
        return load_module_file(Path(module))
    if not MODULE_ID_PATTERN.match(module):
        raise ValidationError([Issue("module", f"{describe(module)} is not a game module id (like ra1, td)")])
    for directory in (*search, modules_dir()):
        path = Path(directory) / f"{module}.yaml"
        if path.is_file():
            return load_module_file(path)
    known = sorted({*available_modules(), *(m for d in search for m in available_modules(Path(d)))})
    raise ValidationError([Issue("module", f"no module {module!r}; available: {', '.join(known) or 'none'}")])


def load_module_file(path: Path) -> GameModule:
    path = Path(path)
    try:
        stat = path.stat()
    except OSError as error:
        raise ValidationError([Issue("", f"cannot be read ({error.strerror or error})")], context=str(path)) from None
    return _load_cached(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=16)
def _load_cached(path: str, _mtime: int, _size: int) -> GameModule:
    raw = Path(path).read_bytes()
    return parse_module(raw, path=path)


def parse_module(raw: bytes | str, *, path: str = "<module>") -> GameModule:
    """Parse and validate module text; ``path`` names the file in every error."""
    name = Path(path).name
    data_bytes = raw.encode("utf-8") if isinstance(raw, str) else raw
    if len(data_bytes) > MAX_MODULE_BYTES:
        raise ValidationError([Issue("", f"file is larger than {MAX_MODULE_BYTES} bytes")], context=name)
    try:
        data = yaml.safe_load(data_bytes.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ValidationError([Issue("", f"is not UTF-8 text ({error.reason})")], context=name) from None
    except yaml.YAMLError as error:
        where = ""
        mark = getattr(error, "problem_mark", None)
        if mark is not None:
            where = f" at line {mark.line + 1}, column {mark.column + 1}"
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ValidationError([Issue("", f"is not valid YAML{where}: {problem}")], context=name) from None
    check = Checker()
    module = _read_module(check, data, path, hashlib.sha256(data_bytes).hexdigest()[:16])
    check.raise_if_failed(name)
    assert module is not None
    return module


# ================================================================================================
# Reading, field by field
# ================================================================================================


class _Reader:
    """Checker helpers for one mapping: required/optional numbers with ranges, unknown keys."""

    def __init__(self, check: Checker, data: object, path: str, known: tuple[str, ...] | None = None):
        self.check = check
        self.path = path
        self.data: Mapping[str, Any] = check.mapping(data, path) or {}
        self.ok = isinstance(data, Mapping)
        if known is not None and self.ok:
            for key in self.data:
                if key not in known:
                    check.fail(join_path(path, key), f"unknown field (expected one of {', '.join(known)})")

    def where(self, key: str) -> str:
        return join_path(self.path, key)

    def number(self, key: str, lo: float, hi: float, default: float | None = None) -> float:
        if key not in self.data:
            if default is not None:
                return default
            self.check.fail(self.where(key), "missing")
            return lo
        value = self.check.number(self.data[key], self.where(key), lo, hi)
        return lo if value is None else value

    def integer(self, key: str, lo: int, hi: int, default: int | None = None) -> int:
        if key not in self.data:
            if default is not None:
                return default
            self.check.fail(self.where(key), "missing")
            return lo
        value = self.check.integer(self.data[key], self.where(key), lo, hi)
        return lo if value is None else value

    def text(self, key: str, default: str | None = None, max_len: int = 200) -> str:
        if key not in self.data:
            if default is not None:
                return default
            self.check.fail(self.where(key), "missing")
            return ""
        value = self.check.text(self.data[key], self.where(key), max_len=max_len, allow_empty=False)
        return value or ""

    def choice(self, key: str, choices: tuple[str, ...] | list[str], what: str) -> str:
        value = self.text(key)
        if value and value not in choices:
            self.check.fail(self.where(key), f"{describe(value)} is not {what} ({'|'.join(choices)})")
        return value

    def boolean(self, key: str, default: bool) -> bool:
        if key not in self.data:
            return default
        value = self.check.boolean(self.data[key], self.where(key))
        return default if value is None else value

    def mapping(self, key: str, *, required: bool = True) -> Any:
        if key not in self.data:
            if required:
                self.check.fail(self.where(key), "missing")
            return None
        return self.data[key]


def _read_id(check: Checker, value: object, path: str) -> str | None:
    if not isinstance(value, str) or not ID_PATTERN.match(value):
        check.fail(path, f"{describe(value)} is not an id (lowercase letters, digits, _ and -, at most 40)")
        return None
    return value


def _read_table(
    check: Checker,
    value: object,
    path: str,
    read: Callable[[str, Any, str], Any],
    *,
    max_items: int = MAX_ENTRIES,
    allow_empty: bool = False,
) -> dict[str, Any]:
    """A mapping of id -> entry, each entry read by ``read(id, value, path)``."""
    data = check.mapping(value, path)
    if data is None:
        return {}
    if len(data) > max_items:
        check.fail(path, f"has {len(data)} entries, at most {max_items} allowed")
        return {}
    if not data and not allow_empty:
        check.fail(path, "must not be empty")
    out: dict[str, Any] = {}
    for key, item in data.items():
        where = join_path(path, key)
        if _read_id(check, key, where) is None:
            continue
        entry = read(key, item, where)
        if entry is not None:
            out[key] = entry
    return out


def _read_module(check: Checker, data: object, path: str, fingerprint: str) -> GameModule | None:
    top = _Reader(
        check,
        data,
        "",
        (
            "module",
            "name",
            "data_version",
            "sources",
            "match",
            "combat",
            "economy",
            "base",
            "armor_classes",
            "structures",
            "weapons",
            "units",
            "build_focus",
            "ai_presets",
            "difficulties",
            "personality_effects",
            "aliases",
        ),
    )
    if not top.ok:
        return None
    module_id = top.text("module", max_len=32)
    if module_id and not MODULE_ID_PATTERN.match(module_id):
        check.fail("module", f"{describe(module_id)} is not a game module id (like ra1, td)")
    name = top.text("name")
    data_version = top.integer("data_version", 0, 1_000_000)
    sources = _read_sources(check, top.mapping("sources"), "sources")

    match = _read_match(check, top.mapping("match"), "match")
    combat = _read_combat(check, top.mapping("combat"), "combat")
    armor_classes = _read_armor_classes(check, top.mapping("armor_classes"), "armor_classes")
    economy = _read_economy(check, top.mapping("economy"), "economy", armor_classes)
    base = _read_base(check, top.mapping("base"), "base", armor_classes)
    structures = _read_table(
        check, top.mapping("structures"), "structures", lambda k, v, p: _read_structure(check, v, p)
    )
    if structures and not any(tier == 1 for tier, _ in structures.values()):
        check.fail("structures", "needs at least one tier-1 structure (what stands at the start)")
    weapons = _read_table(
        check,
        top.mapping("weapons"),
        "weapons",
        lambda k, v, p: _read_weapon(check, k, v, p, armor_classes),
        max_items=MAX_WEAPONS,
    )
    units_map = _read_table(
        check,
        top.mapping("units"),
        "units",
        lambda k, v, p: _read_unit(check, k, v, p, armor_classes, weapons, structures),
        max_items=MAX_UNITS,
    )
    units = tuple(units_map.values())
    if units_map and not any(not u.static for u in units):
        check.fail("units", "needs at least one mobile unit")

    def read_mix(value: object, where: str) -> Mix | None:
        return _read_mix(check, value, where, units_map)

    focus = _read_build_focus(check, top.mapping("build_focus"), "build_focus", read_mix)
    effects = _read_effects(check, top.mapping("personality_effects"), "personality_effects")
    presets = _read_table(
        check,
        top.mapping("ai_presets"),
        "ai_presets",
        lambda k, v, p: _read_preset(check, k, v, p, read_mix, effects),
    )
    difficulties = _read_table(
        check,
        top.mapping("difficulties"),
        "difficulties",
        lambda k, v, p: _read_difficulty(check, k, v, p, effects),
    )
    missing = [d for d in BUILT_IN_DIFFICULTIES if d not in difficulties]
    if isinstance(top.data.get("difficulties"), Mapping) and missing:
        check.fail("difficulties", f"missing the built-in difficulties {', '.join(missing)}")
    _check_mixes_buildable(check, focus, presets, units_map)
    aliases = _read_aliases(check, top.mapping("aliases", required=False), "aliases", units_map, structures)

    if check.issues:
        return None
    return GameModule(
        id=module_id,
        name=name,
        data_version=data_version,
        path=path,
        fingerprint=fingerprint,
        sources=sources,
        match=match,
        combat=combat,
        economy=economy,
        base=base,
        armor_classes=armor_classes,
        structures=structures,
        weapons=weapons,
        units=units,
        build_focus=focus,
        presets=presets,
        difficulties=difficulties,
        personality_effects=effects,
        unit_index={unit.id: index for index, unit in enumerate(units)},
        aliases=aliases,
    )


def _read_aliases(
    check: Checker,
    value: object,
    path: str,
    units: Mapping[str, UnitType],
    structures: Mapping[str, tuple[int, int]],
) -> dict[str, str]:
    """``other_name: target``; a target is a unit, a structure or ``harvester`` (the economy's),
    and an alias may not shadow a unit or structure of its own name."""
    if value is None:
        return {}
    data = check.mapping(value, path)
    out: dict[str, str] = {}
    for key, target in (data or {}).items():
        where = join_path(path, str(key))
        name = _read_id(check, key, where)
        if name is None:
            continue
        if name in units or name in structures or name == HARVESTER:
            check.fail(where, f"{name} is already a unit, a structure or the harvester; an alias cannot rename it")
        elif not isinstance(target, str) or not (target in units or target in structures or target == HARVESTER):
            check.fail(where, f"{describe(target)} is not a unit, a structure or {HARVESTER}")
        else:
            out[name] = target
    return out


def _read_sources(check: Checker, value: object, path: str) -> dict[str, str]:
    if isinstance(value, str):
        return {"notes": value}
    data = check.mapping(value, path)
    out: dict[str, str] = {}
    for key, item in (data or {}).items():
        text = check.text(item, join_path(path, key), max_len=20_000)
        if text is not None:
            out[key] = text
    return out


def _read_match(check: Checker, value: object, path: str) -> MatchConfig:
    r = _Reader(
        check,
        value,
        path,
        ("step_s", "time_limit_s", "base_distance_cells", "naval_access", "timeline_samples", "points", "draw_margin"),
    )
    step = r.number("step_s", 0.5, 60)
    limit = r.number("time_limit_s", 60, 14_400)
    if r.ok and "step_s" in r.data and "time_limit_s" in r.data and limit / step > 5_000:
        check.fail(r.where("step_s"), f"{limit:g} s in steps of {step:g} s is more than 5000 steps")
    points = _Reader(check, r.mapping("points"), r.where("points"), ("army", "map_control", "base"))
    army, control, base = (points.number(key, 0, 1) for key in ("army", "map_control", "base"))
    if points.ok and abs(army + control + base - 1) > 1e-6 and not check.issues:
        check.fail(r.where("points"), f"weights must add up to 1, they add up to {army + control + base:g}")
    return MatchConfig(
        step_s=step,
        time_limit_s=limit,
        base_distance_cells=r.number("base_distance_cells", 4, 1_000),
        naval_access=r.number("naval_access", 0, 1),
        timeline_samples=r.integer("timeline_samples", 2, 100, default=12),
        points_army=army,
        points_map_control=control,
        points_base=base,
        draw_margin=r.number("draw_margin", 0, 0.5),
    )


def _read_combat(check: Checker, value: object, path: str) -> CombatConfig:
    r = _Reader(
        check,
        value,
        path,
        (
            "intensity",
            "defender_bonus",
            "static_bonus",
            "range_reference_cells",
            "range_exponent",
            "luck",
            "luck_period_s",
            "form",
            "retreat_value",
            "static_weight",
            "raid_efficiency",
            "raid_start_s",
            "expansion_exposure",
            "structure_target_weight",
        ),
    )
    return CombatConfig(
        intensity=r.number("intensity", 0.01, 10),
        defender_bonus=r.number("defender_bonus", 0.5, 5),
        static_bonus=r.number("static_bonus", 0.5, 5),
        range_reference_cells=r.number("range_reference_cells", 0.5, 50),
        range_exponent=r.number("range_exponent", 0, 1),
        luck=r.number("luck", 0, 0.9),
        luck_period_s=r.number("luck_period_s", 1, 3_600),
        form=r.number("form", 0, 0.9),
        retreat_value=r.number("retreat_value", 0, 1e6),
        static_weight=r.number("static_weight", 0, 10),
        raid_efficiency=r.number("raid_efficiency", 0, 10),
        raid_start_s=r.number("raid_start_s", 0, 14_400),
        expansion_exposure=r.number("expansion_exposure", 0, 10),
        structure_target_weight=r.number("structure_target_weight", 0.001, 1),
    )


def _read_armor_classes(check: Checker, value: object, path: str) -> tuple[str, ...]:
    items = check.sequence(value, path, max_items=32)
    if items is None:
        return ()
    out: list[str] = []
    for index, item in enumerate(items):
        armor = _read_id(check, item, join_path(path, index))
        if armor is not None:
            if armor in out:
                check.fail(join_path(path, index), f"{armor!r} is listed twice")
            out.append(armor)
    if not out:
        check.fail(path, "must not be empty")
    return tuple(out)


def _armor(check: Checker, r: _Reader, key: str, armor_classes: tuple[str, ...]) -> str:
    value = r.text(key)
    if value and armor_classes and value not in armor_classes:
        check.fail(r.where(key), f"{describe(value)} is not an armour class ({'|'.join(armor_classes)})")
    return value


def _read_economy(check: Checker, value: object, path: str, armor_classes: tuple[str, ...]) -> EconomyConfig:
    r = _Reader(
        check, value, path, ("start_credits", "start_harvesters", "harvester", "refinery", "ore_field", "production")
    )
    h = _Reader(
        check,
        r.mapping("harvester"),
        r.where("harvester"),
        (
            "cost",
            "build_time_s",
            "hp",
            "armor",
            "cargo_capacity",
            "harvest_rate_per_tick",
            "unload_rate_per_tick",
            "bale_value",
            "trip_time_s",
        ),
    )
    ref = _Reader(check, r.mapping("refinery"), r.where("refinery"), ("cost", "hp"))
    ore = _Reader(
        check,
        r.mapping("ore_field"),
        r.where("ore_field"),
        ("ore", "regrowth_per_s", "harvester_slots", "crowding_yield"),
    )
    prod = _Reader(
        check,
        r.mapping("production"),
        r.where("production"),
        ("factory_cost", "start_factories", "max_factories", "float_threshold"),
    )
    start_factories = prod.integer("start_factories", 1, 20)
    max_factories = prod.integer("max_factories", 1, 20)
    if prod.ok and max_factories < start_factories:
        check.fail(prod.where("max_factories"), f"{max_factories} is below start_factories ({start_factories})")
    return EconomyConfig(
        start_credits=r.number("start_credits", 0, 1e6),
        start_harvesters=r.number("start_harvesters", 0, 50),
        harvester_cost=h.number("cost", 1, 1e5),
        harvester_build_time_s=h.number("build_time_s", 0.5, 600),
        harvester_hp=h.number("hp", 1, 1e5),
        harvester_armor=_armor(check, h, "armor", armor_classes),
        cargo_capacity=h.number("cargo_capacity", 1, 1e4),
        harvest_rate_per_tick=h.number("harvest_rate_per_tick", 0.01, 1e4),
        unload_rate_per_tick=h.number("unload_rate_per_tick", 0.01, 1e4),
        bale_value=h.number("bale_value", 0.01, 1e4),
        trip_time_s=h.number("trip_time_s", 0, 3_600),
        refinery_cost=ref.number("cost", 0, 1e5),
        refinery_hp=ref.number("hp", 1, 1e6),
        field_ore=ore.number("ore", 0, 1e8),
        regrowth_per_s=ore.number("regrowth_per_s", 0, 1e4),
        harvester_slots=ore.number("harvester_slots", 1, 50),
        crowding_yield=ore.number("crowding_yield", 0, 1),
        factory_cost=prod.number("factory_cost", 0, 1e5),
        start_factories=start_factories,
        max_factories=max_factories,
        float_threshold=prod.number("float_threshold", 0, 1e6),
    )


def _read_base(check: Checker, value: object, path: str, armor_classes: tuple[str, ...]) -> BaseConfig:
    r = _Reader(check, value, path, ("hp", "structures", "armor"))
    return BaseConfig(
        hp=r.number("hp", 1, 1e7),
        structures=r.number("structures", 1, 1_000),
        armor=_armor(check, r, "armor", armor_classes),
    )


def _read_structure(check: Checker, value: object, path: str) -> tuple[int, int] | None:
    r = _Reader(check, value, path, ("tier", "cost"))
    if not r.ok:
        return None
    return (r.integer("tier", 1, 5), r.integer("cost", 0, 100_000))


def _read_weapon(check: Checker, key: str, value: object, path: str, armor_classes: tuple[str, ...]) -> Weapon | None:
    r = _Reader(check, value, path, ("damage", "rate_of_fire", "range", "targets", "versus"))
    if not r.ok:
        return None
    targets = check.each(
        r.mapping("targets"),
        r.where("targets"),
        lambda v, p: v if v in DOMAINS else check.fail(p, f"{describe(v)} is not a domain ({'|'.join(DOMAINS)})"),
        max_items=3,
    )
    if "targets" in r.data and not targets and isinstance(r.data["targets"], list):
        check.fail(r.where("targets"), "must name at least one domain")
    versus_path = r.where("versus")
    versus_data = check.mapping(r.mapping("versus"), versus_path) if "versus" in r.data else None
    versus: dict[str, float] = {}
    if versus_data is not None:
        for armor, pct in versus_data.items():
            if armor_classes and armor not in armor_classes:
                check.fail(
                    join_path(versus_path, armor),
                    f"{describe(armor)} is not an armour class ({'|'.join(armor_classes)})",
                )
                continue
            number = check.number(pct, join_path(versus_path, armor), 0, 1_000)
            if number is not None:
                versus[armor] = number
        missing = [armor for armor in armor_classes if armor not in versus_data]
        if missing:
            check.fail(versus_path, f"missing armour classes {', '.join(missing)}")
    return Weapon(
        id=key,
        damage=r.number("damage", 0, 100_000),
        rate_of_fire=r.number("rate_of_fire", 1, 100_000),
        range=r.number("range", 0.1, 100),
        targets=frozenset(targets),
        versus=versus,
    )


def _read_unit(
    check: Checker,
    key: str,
    value: object,
    path: str,
    armor_classes: tuple[str, ...],
    weapons: Mapping[str, Weapon],
    structures: Mapping[str, tuple[int, int]],
) -> UnitType | None:
    r = _Reader(
        check,
        value,
        path,
        (
            "cost",
            "build_time_s",
            "hp",
            "armor",
            "speed",
            "weapons",
            "queue",
            "domain",
            "role",
            "prerequisites",
            "uptime",
            "raider",
        ),
    )
    if not r.ok:
        return None
    queue = r.choice("queue", QUEUES, "a production queue")
    domain = r.choice("domain", DOMAINS, "a domain")
    role = r.choice("role", ROLES, "a role")
    speed = r.number("speed", 0, 10_000)
    if queue == "defense" and speed != 0:
        check.fail(r.where("speed"), "static defences (queue defense) must have speed 0")
    if queue and queue != "defense" and "speed" in r.data and speed <= 0:
        check.fail(r.where("speed"), "mobile units need a speed above 0")
    if queue == "defense" and domain and domain != "ground":
        check.fail(r.where("domain"), "static defences stand on the ground")

    # isinstance first: a list or mapping in the file is not hashable, and `in` would raise TypeError
    def weapon_ref(v: object, p: str) -> str | None:
        if not isinstance(v, str) or v not in weapons:
            check.fail(p, f"{describe(v)} is not a weapon defined under weapons")
            return None
        return v

    def structure_ref(v: object, p: str) -> str | None:
        if not isinstance(v, str) or v not in structures:
            check.fail(p, f"{describe(v)} is not a structure defined under structures")
            return None
        return v

    unit_weapons = check.each(r.mapping("weapons"), r.where("weapons"), weapon_ref, max_items=4)
    prerequisites = check.each(
        r.mapping("prerequisites", required=False) or [], r.where("prerequisites"), structure_ref, max_items=8
    )
    tier = max((structures[p][0] for p in prerequisites), default=1)
    return UnitType(
        id=key,
        cost=r.integer("cost", 25, 100_000),
        build_time_s=r.number("build_time_s", 0.5, 3_600),
        hp=r.number("hp", 1, 1_000_000),
        armor=_armor(check, r, "armor", armor_classes),
        speed=speed,
        weapons=unit_weapons,
        queue=queue,
        domain=domain,
        role=role,
        prerequisites=prerequisites,
        tier=tier,
        uptime=r.number("uptime", 0.01, 1, default=1.0),
        raider=r.boolean("raider", False),
    )


def _read_weights(
    check: Checker, value: object, path: str, units: Mapping[str, UnitType], static: bool
) -> dict[str, float]:
    data = check.mapping(value, path)
    out: dict[str, float] = {}
    for unit_id, weight in (data or {}).items():
        where = join_path(path, unit_id)
        unit = units.get(unit_id)
        if unit is None:
            check.fail(where, f"{describe(unit_id)} is not a unit defined under units")
            continue
        if unit.static != static:
            kind = "a static defence (list it under defenses)" if unit.static else "a mobile unit (list it under units)"
            check.fail(where, f"{unit_id!r} is {kind}")
            continue
        number = check.number(weight, where, 0, 1_000)
        if number is not None:
            out[unit_id] = number
    return out


def _read_mix(check: Checker, value: object, path: str, units: Mapping[str, UnitType]) -> Mix | None:
    r = _Reader(check, value, path, ("units", "defenses"))
    if not r.ok:
        return None
    mobile = _read_weights(check, r.mapping("units"), r.where("units"), units, static=False)
    if "units" in r.data and isinstance(r.data["units"], Mapping) and not any(w > 0 for w in mobile.values()):
        check.fail(r.where("units"), "needs at least one mobile unit with a weight above 0")
    defenses = _read_weights(
        check, r.mapping("defenses", required=False) or {}, r.where("defenses"), units, static=True
    )
    return Mix(units=mobile, defenses=defenses)


def _read_build_focus(
    check: Checker, value: object, path: str, read_mix: Callable[[object, str], Mix | None]
) -> dict[BuildFocus, Mix]:
    data = check.mapping(value, path)
    if data is None:
        return {}
    out: dict[BuildFocus, Mix] = {}
    for key, item in data.items():
        try:
            focus = BuildFocus(key)
        except ValueError:
            check.fail(join_path(path, key), f"{describe(key)} is not a build focus ({BuildFocus.choices()})")
            continue
        mix = read_mix(item, join_path(path, key))
        if mix is not None:
            out[focus] = mix
    missing = [focus.value for focus in BuildFocus if focus.value not in data]
    if missing:
        check.fail(path, f"missing build focus {', '.join(missing)}")
    return out


def _effect_key(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _read_effects(check: Checker, value: object, path: str) -> dict[str, dict[str, float]]:
    data = check.mapping(value, path)
    if data is None:
        return {}
    out: dict[str, dict[str, float]] = {}
    for table, (lo, hi) in EFFECT_TABLES.items():
        where = join_path(path, table)
        if table not in data:
            check.fail(where, "missing")
            continue
        entries = check.mapping(data[table], where)
        if entries is None:
            continue
        row: dict[str, float] = {}
        for key, item in entries.items():
            number = check.number(item, join_path(where, key), lo, hi)
            if number is not None:
                row[_effect_key(key)] = number
        if not row:
            check.fail(where, "must not be empty")
        out[table] = row
    for key in data:
        if key not in EFFECT_TABLES:
            check.fail(join_path(path, key), f"unknown table (expected one of {', '.join(EFFECT_TABLES)})")
    return out


def _read_personality(
    check: Checker, value: object, path: str, effects: Mapping[str, Mapping[str, float]], *, partial: bool
) -> dict[str, Any]:
    data = check.mapping(value, path)
    if data is None:
        return {}
    out: dict[str, Any] = {}
    for key, item in data.items():
        where = join_path(path, key)
        if key not in PERSONALITY_KEYS:
            check.fail(where, f"unknown personality key (expected one of {', '.join(PERSONALITY_KEYS)})")
            continue
        if key == "aggression":
            number = check.number(item, where, 0, 1)
            if number is not None:
                out[key] = number
            continue
        if key == "build_order":
            text = check.text(item, where, max_len=40)
            if text is not None:
                out[key] = text
            continue
        table = effects.get(key)
        if table is None:
            continue  # the missing table is reported under personality_effects
        if _effect_key(item) not in table:
            check.fail(where, f"{describe(item)} is not one of {'|'.join(table)} (personality_effects.{key})")
            continue
        out[key] = _effect_key(item)
    if not partial:
        missing = [key for key in PERSONALITY_KEYS if key not in data]
        if missing:
            check.fail(path, f"missing personality keys {', '.join(missing)}")
    return out


def _read_preset(
    check: Checker,
    key: str,
    value: object,
    path: str,
    read_mix: Callable[[object, str], Mix | None],
    effects: Mapping[str, Mapping[str, float]],
) -> Preset | None:
    r = _Reader(check, value, path, ("name", "personality", "economy", "unit_mix"))
    if not r.ok:
        return None
    personality = _read_personality(check, r.mapping("personality"), r.where("personality"), effects, partial=False)
    econ = _Reader(check, r.mapping("economy"), r.where("economy"), ("harvester_target", "defense_ratio"))
    mix = read_mix(r.mapping("unit_mix"), r.where("unit_mix"))
    return Preset(
        id=key,
        name=r.text("name"),
        personality=personality,
        harvester_target=econ.integer("harvester_target", 0, 20),
        defense_ratio=econ.integer("defense_ratio", 0, 100),
        unit_mix=mix or Mix({}, {}),
    )


def _read_difficulty(
    check: Checker, key: str, value: object, path: str, effects: Mapping[str, Mapping[str, float]]
) -> Difficulty | None:
    r = _Reader(check, value, path, ("gather_rate", "build_time", "reaction_delay_ticks", "vision", "personality"))
    if not r.ok:
        return None
    personality = _read_personality(
        check, r.mapping("personality", required=False) or {}, r.where("personality"), effects, partial=True
    )
    return Difficulty(
        id=key,
        gather_rate=r.number("gather_rate", 0.05, 20),
        build_time=r.number("build_time", 0.05, 20),
        reaction_delay_ticks=r.integer("reaction_delay_ticks", 0, 3_000),
        vision=r.number("vision", 0.05, 10),
        personality=personality,
    )


def _check_mixes_buildable(
    check: Checker, focus: Mapping[BuildFocus, Mix], presets: Mapping[str, Preset], units: Mapping[str, UnitType]
) -> None:
    """Every mix must have a mobile unit at tier 1, or a side would have nothing to build."""
    mixes = [(f"build_focus.{f.value}.units", m) for f, m in focus.items()]
    mixes += [(f"ai_presets.{p}.unit_mix.units", preset.unit_mix) for p, preset in presets.items()]
    for where, mix in mixes:
        if mix.units and not any(units[u].tier == 1 and w > 0 for u, w in mix.units.items() if u in units):
            check.fail(where, "needs a unit available at tier 1 (with only tier-1 prerequisites)")
