"""Compiling a game module and two doctrines into the arrays the step loop (:mod:`sim`) works on.

Done once per match-up, before any game is played: the unit tables (damage per second of each
unit type against each target class, hit points and values, quantised to integers so the one sum
across unit types is exact; see :mod:`sim`) and, for each side, its production mixes per tech tier,
plain and adapted to the enemy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from skillstudio.engine.doctrine import Doctrine
from skillstudio.engine.module import GameModule, UnitType
from skillstudio.engine.tuning import DEFAULT_TUNING, Tuning

if TYPE_CHECKING:  # situation.py compiles StartTables with this module's help
    from skillstudio.engine.situation import Situation

QUANTUM = 1024.0  # unit counts are multiples of 1/1024 unit
MAX_COUNT_Q = float(2**23)  # at most 8192 units of one type per side
W_LIMIT = 2**24  # largest integer in W (with MAX_COUNT_Q and <= 48 types, sums stay below 2**53)

# Per-mix properties (SideTables.props columns).
P_CAPRATE, P_MOBILE, P_SPEED, P_RAID, P_RAIDER = range(5)
N_PROPS = 5


@dataclass
class CompiledModule:
    """The unit-type tables of a module, as the step loop needs them."""

    module: GameModule
    units: tuple[UnitType, ...]
    n_classes: int  # target classes, the base's structures last
    n_mobile_classes: int
    class_keys: list[tuple[str, str, bool]]  # (domain, armour, static); ("structure", armour, True) last
    class_of_unit: np.ndarray  # [U] int
    class_is_air: np.ndarray  # [C] bool
    air_classes: slice  # the air classes, contiguous
    class_is_static: np.ndarray  # [C] bool: static defences and structures (present only at home)
    dps: np.ndarray  # [U, C] damage per second if all fire went to that class
    W_combat: np.ndarray  # [U, K] integers (float64): firepower by class, hit points
    scale_combat: np.ndarray  # [K] multiply counts_q @ W_combat by this to get real values
    cols: dict[str, slice]  # column blocks of W_combat
    speed_cells: np.ndarray  # [U] cells per second (0 for static defences)
    raid_dps: np.ndarray  # [U] damage per second against harvesters (raiders only)
    # per unit type, for compiling a side's mixes (once per module, not per match-up)
    cost: np.ndarray  # [U] credits
    hp: np.ndarray  # [U]
    build_time_s: np.ndarray  # [U]
    tier_of: np.ndarray  # [U] int, 1-based
    static: np.ndarray  # [U] bool
    raider: np.ndarray  # [U] bool
    queue_of: np.ndarray  # [U] int: the production queue
    n_queues: int


def _weapon_dps(module: GameModule, unit: UnitType, armor: str, domain: str) -> float:
    combat = module.combat
    total = 0.0
    for weapon_id in unit.weapons:
        weapon = module.weapons[weapon_id]
        if domain not in weapon.targets:
            continue
        range_factor = (weapon.range / combat.range_reference_cells) ** combat.range_exponent
        total += weapon.damage * weapon.versus.get(armor, 0.0) / 100.0 * 30.0 / weapon.rate_of_fire * range_factor
    total *= unit.uptime
    if unit.domain == "naval":
        total *= module.match.naval_access
    return total


def _targets_air(module: GameModule, unit: UnitType) -> bool:
    return any("air" in module.weapons[w].targets for w in unit.weapons)


def _targets_surface(module: GameModule, unit: UnitType) -> bool:
    return any(module.weapons[w].targets & {"ground", "naval"} for w in unit.weapons)


def compile_module(module: GameModule) -> CompiledModule:
    units = module.units
    mobile_keys: list[tuple[str, str, bool]] = []
    static_keys: list[tuple[str, str, bool]] = []
    for unit in units:
        key = (unit.domain, unit.armor, unit.static)
        bucket = static_keys if unit.static else mobile_keys
        if key not in bucket:
            bucket.append(key)
    mobile_keys.sort(key=lambda key: key[0] == "air")  # air classes last among the mobile ones: a slice
    class_keys = mobile_keys + static_keys + [("structure", module.base.armor, True)]
    n_classes, n_mobile = len(class_keys), len(mobile_keys)
    class_of_unit = np.array([class_keys.index((u.domain, u.armor, u.static)) for u in units], dtype=np.intp)
    class_is_air = np.array([key[0] == "air" for key in class_keys])
    class_is_static = np.array([key[2] for key in class_keys])
    dps = np.zeros((len(units), n_classes))
    for i, unit in enumerate(units):
        for c, (domain, armor, _static) in enumerate(class_keys):
            dps[i, c] = _weapon_dps(module, unit, armor, "ground" if domain == "structure" else domain)

    air_only = np.array([_targets_air(module, u) and not _targets_surface(module, u) for u in units])
    surface_only = np.array([_targets_surface(module, u) and not _targets_air(module, u) for u in units])
    both = np.array([_targets_air(module, u) and _targets_surface(module, u) for u in units])
    static = np.array([u.static for u in units])
    mobile = ~static
    single = np.where(class_is_air[None, :], air_only[:, None], surface_only[:, None]) * dps
    dual = both[:, None] * dps
    hp = np.array([u.hp for u in units])
    cost = np.array([float(u.cost) for u in units])
    speed_cells = np.array([u.speed * 30.0 / 1024.0 for u in units])
    raider = np.array([u.raider for u in units])
    harvester_class = ("ground", module.economy.harvester_armor)
    raid_dps = np.array([_weapon_dps(module, u, harvester_class[1], "ground") for u in units]) * raider
    unit_is_air = np.array([u.domain == "air" for u in units])
    queues = sorted({u.queue for u in units})

    combat_blocks = [
        ("single_mobile", single * mobile[:, None]),
        ("both_mobile", dual * mobile[:, None]),
        ("single_static", (single * static[:, None])[:, :n_mobile]),
        ("both_static", (dual * static[:, None])[:, :n_mobile]),
        ("hp", np.stack([hp * mobile * ~unit_is_air, hp * mobile * unit_is_air, hp * static], axis=1)),
        ("value", np.stack([cost * (class_of_unit == c) for c in range(n_classes - 1)], axis=1)),  # by class
    ]
    combat_blocks = [(name, block) for name, block in combat_blocks if np.any(block) or name in ("hp", "value")]
    W_combat, scale_combat, cols = _quantize_blocks(combat_blocks)
    return CompiledModule(
        module=module,
        units=units,
        n_classes=n_classes,
        n_mobile_classes=n_mobile,
        class_keys=class_keys,
        class_of_unit=class_of_unit,
        class_is_air=class_is_air,
        class_is_static=class_is_static,
        dps=dps,
        air_classes=slice(int(np.argmax(class_is_air)), int(np.argmax(class_is_air)) + int(class_is_air.sum())),
        W_combat=W_combat,
        scale_combat=scale_combat,
        cols=cols,
        speed_cells=speed_cells * mobile,
        raid_dps=raid_dps,
        cost=cost,
        hp=hp,
        build_time_s=np.array([u.build_time_s for u in units]),
        tier_of=np.array([u.tier for u in units]),
        static=static,
        raider=raider,
        queue_of=np.array([queues.index(u.queue) for u in units]),
        n_queues=len(queues),
    )


def _quantize_blocks(blocks: list[tuple[str, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, dict[str, slice]]:
    columns, scales, cols = [], [], {}
    start = 0
    for name, block in blocks:
        for j in range(block.shape[1]):
            integer, scale = _quantize_column(block[:, j])
            columns.append(integer)
            scales.append(scale)
        cols[name] = slice(start, start + block.shape[1])
        start += block.shape[1]
    return np.stack(columns, axis=1), np.array(scales) / QUANTUM, cols


def _quantize_column(values: np.ndarray) -> tuple[np.ndarray, float]:
    """Integers ``round(values * 2**e)`` with the largest e <= 8 that keeps them below W_LIMIT."""
    peak = float(np.max(np.abs(values))) if values.size else 0.0
    exponent = 8
    while exponent > -40 and peak * 2.0**exponent >= W_LIMIT:
        exponent -= 1
    return np.rint(values * 2.0**exponent), 2.0**-exponent


@dataclass
class SideTables:
    """One side's doctrine as arrays (``M`` production mixes: tier x adapted)."""

    doctrine: Doctrine
    mix_q: np.ndarray  # [M, U] quantum units per credit
    props: np.ndarray  # [M, N_PROPS] what each mix means for the step loop (see P_*)
    notes: list[str] = field(default_factory=list)


def _normalized(weights: np.ndarray) -> np.ndarray:
    total = weights.sum()
    return weights / total if total > 0 else weights


def _weights(cm: CompiledModule, mapping: Mapping[str, float]) -> np.ndarray:
    out = np.zeros(len(cm.units))
    for unit_id, weight in mapping.items():
        out[cm.module.unit_index[unit_id]] = weight
    return out


def _counter_weights(
    cm: CompiledModule, enemy_value_shares: np.ndarray, available: np.ndarray, tuning: Tuning
) -> np.ndarray:
    """What an adaptive AI builds against an enemy mix: Lanchester strength (dps x hp) per credit."""
    cost, hp = cm.cost, cm.hp
    enemy_count = enemy_value_shares / cost
    class_hp = np.zeros(cm.n_classes)
    np.add.at(class_hp, cm.class_of_unit, enemy_count * hp)
    hp_share = _normalized(class_hp)
    enemy_dps = enemy_count @ cm.dps  # [C] enemy damage per credit against each class
    offense = (cm.dps @ hp_share) / cost
    threat = enemy_dps[cm.class_of_unit]
    defense = hp / cost / (threat + 1e-3 * max(enemy_dps.mean(), 1e-9))
    score: np.ndarray = offense * defense * available * ~cm.static
    if not np.any(score > 0):
        return np.zeros_like(score)
    top = np.argsort(-score, kind="stable")[: tuning.counter_units]
    out = np.zeros_like(score)
    out[top] = score[top]
    out[out < tuning.counter_cutoff * score[top[0]]] = 0.0
    return out


# Compiled sides by what they depend on (a library's skills share a few unit mixes, and the
# opponent's counters depend only on the skill's mix): key -> (cm, tuning, mix_q, props, the
# tiers at which nothing of the side's own mix is available).
_SIDES: dict[tuple[object, ...], tuple[CompiledModule, Tuning, np.ndarray, np.ndarray, tuple[int, ...]]] = {}
SIDE_CACHE = 4096


def _own_weights(
    cm: CompiledModule, own_units: np.ndarray, own_defenses: np.ndarray, static_share: float, tier: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, bool]:
    """A side's own weights at ``tier``: (units available, mobile weights, static weights, the
    static share, whether nothing of its mix is available so that it builds every unlocked unit)."""
    available = cm.tier_of <= tier
    mobile_w = _normalized(own_units * available)
    fallback = bool(mobile_w.sum() == 0)
    if fallback:
        mobile_w = _normalized((available & ~cm.static).astype(float))
    static_w = _normalized(own_defenses * available)
    share = static_share if static_w.sum() > 0 else 0.0
    return available, mobile_w, static_w, share, fallback


def own_mix_q(cm: CompiledModule, doctrine: Doctrine, tier: int, tuning: Tuning = DEFAULT_TUNING) -> np.ndarray:
    """The side's own mix at ``tier``, not adapted (quantum units per credit): the row
    ``(tier - 1) * 2`` of ``compile_side(cm, doctrine, ...).mix_q``, without compiling the rest."""
    static_share = doctrine.param("defense_ratio") / tuning.defense_divisor
    _available, mobile_w, static_w, share, _fallback = _own_weights(
        cm, _weights(cm, doctrine.units), _weights(cm, doctrine.defenses), static_share, tier
    )
    value = (1 - share) * mobile_w + share * static_w
    mix_q: np.ndarray = value / cm.cost * QUANTUM
    return mix_q


def forget_sides() -> None:
    _SIDES.clear()


def compile_side(
    cm: CompiledModule, doctrine: Doctrine, enemy: Doctrine, tuning: Tuning = DEFAULT_TUNING, first_tier: int = 1
) -> SideTables:
    """The side's production mixes at every tier; ``first_tier`` is the lowest it plays (a
    situated game may start higher), below which nothing is worth a note. The tables are shared
    with every side compiled from the same inputs (never change them)."""
    adaptive = doctrine.adaptation > 0  # only an adaptive side's mixes hold counters of the enemy's
    key = (
        id(cm),
        id(tuning),
        tuple(doctrine.units.items()),
        tuple(doctrine.defenses.items()),
        doctrine.param("defense_ratio"),
        doctrine.adaptation,
        tuple(enemy.units.items()) if adaptive else None,
    )
    cached = _SIDES.get(key)
    if cached is None or cached[0] is not cm or cached[1] is not tuning:  # ids can be reused
        if len(_SIDES) >= SIDE_CACHE:
            _SIDES.clear()
        cached = _SIDES[key] = (cm, tuning, *_compile_side(cm, doctrine, enemy, tuning, adaptive))
    notes = [
        f"{doctrine.label}: nothing of its mix is available at tier {t}; builds every unlocked unit"
        for t in cached[4]
        if t >= first_tier
    ]
    return SideTables(doctrine=doctrine, mix_q=cached[2], props=cached[3], notes=notes)


def _compile_side(
    cm: CompiledModule, doctrine: Doctrine, enemy: Doctrine, tuning: Tuning, adaptive: bool
) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    module = cm.module
    tiers = module.max_tier
    cost, build_time, tier_of, static, queue_of, raider = (
        cm.cost,
        cm.build_time_s,
        cm.tier_of,
        cm.static,
        cm.queue_of,
        cm.raider,
    )
    own_units, own_defenses = _weights(cm, doctrine.units), _weights(cm, doctrine.defenses)
    enemy_units = _weights(cm, enemy.units)
    static_share = doctrine.param("defense_ratio") / tuning.defense_divisor
    fallback_tiers: list[int] = []
    mix_q = np.zeros((tiers * 2, len(cm.units)))
    props = np.zeros((tiers * 2, N_PROPS))
    for t in range(1, tiers + 1):
        available, mobile_w, static_w, share, fallback = _own_weights(cm, own_units, own_defenses, static_share, t)
        if fallback:
            fallback_tiers.append(t)
        if adaptive:
            enemy_w = _normalized(enemy_units * (tier_of <= t))
            counter = _normalized(_counter_weights(cm, enemy_w, available, tuning))
        for adapted in (0, 1):
            mobile_mix = mobile_w
            if adapted and adaptive and counter.sum() > 0:
                mobile_mix = (1 - doctrine.adaptation) * mobile_w + doctrine.adaptation * counter
            value = (1 - share) * mobile_mix + share * static_w
            m = (t - 1) * 2 + adapted
            mix_q[m] = value / cost * QUANTUM
            queue_time = np.bincount(queue_of, weights=value * build_time / cost, minlength=cm.n_queues)
            mobile_value = max(float(value[~static].sum()), 1e-12)
            props[m, P_CAPRATE] = 1.0 / max(queue_time.max(), 1e-9)
            props[m, P_MOBILE] = float(value[~static].sum())
            props[m, P_SPEED] = float((value * cm.speed_cells).sum()) / mobile_value
            props[m, P_RAID] = float((value / cost * cm.raid_dps).sum()) / mobile_value
            props[m, P_RAIDER] = float(value[raider & ~static].sum()) / mobile_value
    return mix_q, props, tuple(fallback_tiers)


@dataclass(frozen=True)
class StartTables:
    """Where situated games start (situation.py compiles it), per side ``[2]`` unless stated.
    Every game of a batch starts from the same state; their draws still differ."""

    start_step: int  # steps already played: the game clock starts at start_step x step
    tier: np.ndarray  # [2] int, 1-based
    counts_q: np.ndarray  # [2, U] units in quanta
    army_value: np.ndarray
    mobile_value: np.ndarray
    credits: np.ndarray
    harvesters: np.ndarray
    factories: np.ndarray
    ore_main: np.ndarray
    expanded: np.ndarray  # 1.0 where the side holds an expansion
    position: np.ndarray  # how far along the lane each army is
    direction: np.ndarray  # +1 for an army already attacking
    income: np.ndarray  # multiplies each side's income
    control: float  # the skill side's share of map control

    @property
    def launched(self) -> bool:
        return bool(np.any(self.direction > 0))


@dataclass(frozen=True)
class PlanSwitch:
    """From game step ``at_step`` on (game clock ``at_step x step``), the sides play these tables:
    the skill's side the next plan of a composition, the opponent its own doctrine compiled
    against it (its counters follow the new plan)."""

    at_step: int
    sides: tuple[SideTables, SideTables]
    label: str  # the plan, for notes


@dataclass
class MatchSetup:
    cm: CompiledModule
    sides: tuple[SideTables, SideTables]
    tuning: Tuning = DEFAULT_TUNING
    start: StartTables | None = None  # None: the module's standard opening
    situation: Situation | None = None  # what ``start`` was compiled from (None: not situated)
    switches: tuple[PlanSwitch, ...] = ()  # a composition's later plans, in time order

    @property
    def module(self) -> GameModule:
        return self.cm.module


def compile_match(
    module: GameModule,
    skill: Doctrine,
    opponent: Doctrine,
    cm: CompiledModule | None = None,
    *,
    tuning: Tuning = DEFAULT_TUNING,
    first_tiers: tuple[int, int] = (1, 1),
) -> MatchSetup:
    cm = cm or compile_module(module)
    sides = (
        compile_side(cm, skill, opponent, tuning, first_tiers[0]),
        compile_side(cm, opponent, skill, tuning, first_tiers[1]),
    )
    return MatchSetup(cm, sides, tuning)
