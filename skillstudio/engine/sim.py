"""The vectorised skirmish simulator: N games of one match-up as array arithmetic over a games axis.

Side 0 is the skill, side 1 the opponent. State arrays are shaped ``[2, games]`` (one number per
side and game) or ``[2, games, unit_types]`` (unit counts). docs/reference-engine.md explains
the model; this module is its implementation.

Determinism: every game's randomness is a counter-based hash of its own seed (:mod:`rng`) and
all per-game arithmetic is elementwise. The one sum across unit types, the matrix product
``counts @ W``, is exact: counts are rounded to a grid of 1/1024 unit before it and ``W`` holds
integers (real values scaled by powers of two), so every partial sum is an integer below 2**53
and the order in which a BLAS library adds them cannot change the result. The only other
reduction, an army's value summed over its few target classes after a fight, adds a fixed number
of terms per game in a fixed order. A game's result is therefore bit-identical whatever batch,
chunk or internal block it is simulated in (tests/engine/test_determinism.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from skillstudio.engine import rng
from skillstudio.engine.doctrine import Doctrine
from skillstudio.engine.module import GameModule, MatchConfig, UnitType

QUANTUM = 1024.0  # unit counts are multiples of 1/1024 unit
MAX_COUNT_Q = float(2**23)  # at most 8192 units of one type per side
W_LIMIT = 2**24  # largest integer in W (with MAX_COUNT_Q and <= 48 types, sums stay below 2**53)
BLOCK = 16384  # games simulated together; results do not depend on it

# Random streams (each side adds 32 * side).
S_INCOME, S_BUILD, S_FIRST, S_THETA, S_EXPAND, S_TECH, S_ADAPT, S_LUCK, S_PERCEIVE, S_FORM = range(10)

OUTCOME_LOSS, OUTCOME_DRAW, OUTCOME_WIN = -1, 0, 1
SLOW_EVERY = 3  # raids, pressure on expansions and map control are resolved every 3 steps

# Per-mix properties (SideTables.props columns).
P_CAPRATE, P_MOBILE, P_SPEED, P_RAID, P_RAIDER = range(5)
N_PROPS = 5


# ================================================================================================
# Compiling a module and two doctrines into arrays
# ================================================================================================


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


def _counter_weights(cm: CompiledModule, enemy_value_shares: np.ndarray, available: np.ndarray) -> np.ndarray:
    """What an adaptive AI builds against an enemy mix: Lanchester strength (dps x hp) per credit."""
    cost = np.array([float(u.cost) for u in cm.units])
    hp = np.array([u.hp for u in cm.units])
    enemy_count = enemy_value_shares / cost
    class_hp = np.zeros(cm.n_classes)
    np.add.at(class_hp, cm.class_of_unit, enemy_count * hp)
    hp_share = _normalized(class_hp)
    enemy_dps = enemy_count @ cm.dps  # [C] enemy damage per credit against each class
    offense = (cm.dps @ hp_share) / cost
    threat = enemy_dps[cm.class_of_unit]
    defense = hp / cost / (threat + 1e-3 * max(enemy_dps.mean(), 1e-9))
    mobile = np.array([not u.static for u in cm.units])
    score: np.ndarray = offense * defense * available * mobile
    if not np.any(score > 0):
        return np.zeros_like(score)
    top = np.argsort(-score, kind="stable")[:3]
    out = np.zeros_like(score)
    out[top] = score[top]
    out[out < 0.5 * score[top[0]]] = 0.0
    return out


def compile_side(cm: CompiledModule, doctrine: Doctrine, enemy: Doctrine) -> SideTables:
    module = cm.module
    tiers = module.max_tier
    cost = np.array([float(u.cost) for u in cm.units])
    build_time = np.array([u.build_time_s for u in cm.units])
    tier_of = np.array([u.tier for u in cm.units])
    static = np.array([u.static for u in cm.units])
    queues = sorted({u.queue for u in cm.units})
    queue_of = np.array([queues.index(u.queue) for u in cm.units])
    own_units, own_defenses = _weights(cm, doctrine.units), _weights(cm, doctrine.defenses)
    enemy_units = _weights(cm, enemy.units)
    static_share = doctrine.param("defense_ratio") / 250.0
    notes: list[str] = []
    mix_q = np.zeros((tiers * 2, len(cm.units)))
    props = np.zeros((tiers * 2, N_PROPS))
    raider = np.array([u.raider for u in cm.units])
    for t in range(1, tiers + 1):
        available = tier_of <= t
        mobile_w = _normalized(own_units * available)
        if mobile_w.sum() == 0:
            mobile_w = _normalized((available & ~static).astype(float))
            notes.append(f"{doctrine.label}: nothing of its mix is available at tier {t}; builds every unlocked unit")
        static_w = _normalized(own_defenses * available)
        share = static_share if static_w.sum() > 0 else 0.0
        enemy_w = _normalized(enemy_units * (tier_of <= t))
        counter = _normalized(_counter_weights(cm, enemy_w, available))
        for adapted in (0, 1):
            mobile_mix = mobile_w
            if adapted and doctrine.adaptation > 0 and counter.sum() > 0:
                mobile_mix = (1 - doctrine.adaptation) * mobile_w + doctrine.adaptation * counter
            value = (1 - share) * mobile_mix + share * static_w
            m = (t - 1) * 2 + adapted
            mix_q[m] = value / cost * QUANTUM
            queue_time = np.bincount(queue_of, weights=value * build_time / cost, minlength=len(queues))
            mobile_value = max(float(value[~static].sum()), 1e-12)
            props[m, P_CAPRATE] = 1.0 / max(queue_time.max(), 1e-9)
            props[m, P_MOBILE] = float(value[~static].sum())
            props[m, P_SPEED] = float((value * cm.speed_cells).sum()) / mobile_value
            props[m, P_RAID] = float((value / cost * cm.raid_dps).sum()) / mobile_value
            props[m, P_RAIDER] = float(value[raider & ~static].sum()) / mobile_value
    return SideTables(doctrine=doctrine, mix_q=mix_q, props=props, notes=notes)


@dataclass
class MatchSetup:
    cm: CompiledModule
    sides: tuple[SideTables, SideTables]

    @property
    def module(self) -> GameModule:
        return self.cm.module


def compile_match(
    module: GameModule, skill: Doctrine, opponent: Doctrine, cm: CompiledModule | None = None
) -> MatchSetup:
    cm = cm or compile_module(module)
    return MatchSetup(cm, (compile_side(cm, skill, opponent), compile_side(cm, opponent, skill)))


# ================================================================================================
# The step loop
# ================================================================================================


@dataclass
class RawResults:
    outcome: np.ndarray  # int8: 1 win, 0 draw, -1 loss, from the skill's side
    duration_s: np.ndarray
    resource_delta: np.ndarray  # credits gathered, skill minus opponent
    army_value_delta: np.ndarray  # army value (units and defences) at the end, skill minus opponent
    map_control: np.ndarray  # the skill's share at the end, 0..1
    timeline: np.ndarray  # [games, samples, 2] army value per side
    timeline_t: np.ndarray  # [samples] seconds


def _col(side_values: list[float]) -> np.ndarray:
    return np.array(side_values, dtype=np.float64).reshape(2, 1)


def simulate(setup: MatchSetup, seeds: np.ndarray, *, trace: Callable[[float, Any], None] | None = None) -> RawResults:
    """Simulate one game per seed (uint64 array). Results are independent of how seeds are batched."""
    seeds = np.ascontiguousarray(seeds, dtype=np.uint64)
    games = seeds.shape[0]
    match = setup.module.match
    samples = match.timeline_samples
    out = RawResults(
        outcome=np.zeros(games, dtype=np.int8),
        duration_s=np.zeros(games),
        resource_delta=np.zeros(games),
        army_value_delta=np.zeros(games),
        map_control=np.zeros(games),
        timeline=np.zeros((games, samples, 2)),
        timeline_t=np.array([match.time_limit_s * (k + 1) / samples for k in range(samples)]),
    )
    for start in range(0, games, BLOCK):
        _simulate_block(setup, seeds[start : start + BLOCK], out, start, trace)
    return out


class _Games:
    """The per-game arrays of a block. The games axis is the last one, except in ``counts``."""

    # set once per block by _simulate_block; float64 unless stated
    rows: npt.NDArray[np.intp]  # block row -> game
    tech_share: np.ndarray
    gather: np.ndarray
    build_speed: np.ndarray
    first_attack: np.ndarray
    theta: np.ndarray
    expand_at: np.ndarray
    adapt_at: np.ndarray
    form: np.ndarray
    luck: npt.NDArray[np.float32]
    perceive: npt.NDArray[np.float32]
    # the state, [2, G] unless stated
    credits: np.ndarray
    harvesters: np.ndarray
    expanded: np.ndarray
    saving: np.ndarray
    expansion_hp: np.ndarray
    ore_main: np.ndarray
    ore_exp: np.ndarray
    tier: npt.NDArray[np.intp]
    next_cost: np.ndarray
    tech_fund: np.ndarray
    factories: np.ndarray
    adapted: npt.NDArray[np.bool_]
    mix_index: npt.NDArray[np.intp]
    props: np.ndarray  # [N_PROPS, 2, G]
    capacity: np.ndarray
    fire: np.ndarray
    counts: np.ndarray  # [2, G, U]
    pending: np.ndarray
    mobile_value: np.ndarray
    army_value: np.ndarray
    position: np.ndarray
    direction: np.ndarray
    launch_value: np.ndarray
    base_hp: np.ndarray
    gathered: np.ndarray
    control: np.ndarray  # [G]
    engaged: npt.NDArray[np.bool_]  # [G]
    alive: npt.NDArray[np.bool_]  # [G]
    on_exp: np.ndarray

    def compact(self, keep: np.ndarray) -> None:
        for name, value in vars(self).items():
            if isinstance(value, np.ndarray):
                setattr(self, name, value[:, keep] if name == "counts" else value[..., keep])


def _simulate_block(
    setup: MatchSetup, seeds: np.ndarray, out: RawResults, offset: int, trace: Callable[[float, Any], None] | None
) -> None:
    cm, module = setup.cm, setup.module
    match, combat, econ = module.match, module.combat, module.economy
    d0, d1 = setup.sides[0].doctrine, setup.sides[1].doctrine
    G = seeds.shape[0]
    U, Cm = len(cm.units), cm.n_mobile_classes
    dt, steps = match.step_s, match.steps
    samples = match.timeline_samples
    sample_steps = np.array([round(out.timeline_t[k] / dt) - 1 for k in range(samples)])
    sample_index = {int(step): k for k, step in enumerate(sample_steps)}
    g = _Games()
    g.rows = np.arange(G)  # block row -> game (rows shrink when finished games are dropped)
    side_seeds = np.stack([seeds, seeds ^ np.uint64(0x5DEECE66D5DEECE6)])  # [2, G]

    def jitter(stream: int, spread: float) -> np.ndarray:
        return 1.0 + spread * np.stack([rng.symmetric(side_seeds[s], stream + 32 * s) for s in (0, 1)])

    def param(name: str) -> np.ndarray:
        return _col([float(d0.param(name)), float(d1.param(name))])

    def attr(name: str) -> np.ndarray:
        return _col([float(getattr(d0, name)), float(getattr(d1, name))])

    # --- per-side constants [2, 1] -------------------------------------------------------------
    aggression = param("aggression")
    urgency = param("reaction_urgency")
    expansion = param("expansion_priority")
    harvester_target = param("harvester_count_target")
    harass = param("harassment") / 200.0
    guard = param("harvester_defense") / 100.0
    retreat_frac = param("retreat_threshold") / 100.0
    scout = param("scout_priority") / 100.0
    vision = attr("vision")
    delay_penalty = 1.0 - 0.5 * np.minimum(attr("reaction_delay_s"), dt) / dt
    defender_bonus = combat.defender_bonus * delay_penalty
    map_weight = attr("map_weight") * vision * (0.75 + 0.5 * scout)
    army_cap = 12000.0 * (1.5 - aggression / 100.0)
    late_game_s = match.time_limit_s / 2  # after this an AI attacks ever more readily
    harvest_rate_cap = dt / econ.harvester_build_time_s
    slots = econ.harvester_slots
    regrowth = econ.regrowth_per_s * dt
    structure_weight = combat.structure_target_weight
    slow_dt = SLOW_EVERY * dt
    raid_scale = harass * combat.raid_efficiency * slow_dt / (econ.harvester_hp * vision)
    control_rate = 1.0 - 0.9**SLOW_EVERY

    # --- per-game values, each drawn from the game's own seed [2, G] -----------------------------
    g.tech_share = (0.03 + 0.25 * param("tech_priority") / 100.0) * jitter(S_TECH, 0.2)
    g.gather = econ.gather_rate_per_s * dt * attr("gather_rate") * jitter(S_INCOME, 0.04)
    g.build_speed = dt / attr("build_time") * jitter(S_BUILD, 0.06)
    first_attack = (600.0 - 4.5 * aggression) * (1.0 - 0.3 * np.maximum(urgency - 50.0, 0.0) / 50.0)
    g.first_attack = first_attack * jitter(S_FIRST, 0.2)
    g.theta = (1.6 - 0.012 * aggression) * jitter(S_THETA, 0.1)
    g.expand_at = np.where(expansion >= 10, 900.0 - 7.0 * expansion, np.inf) * jitter(S_EXPAND, 0.15)
    g.adapt_at = np.where(attr("adaptation") > 0, attr("adaptation_time_s"), np.inf) * jitter(S_ADAPT, 0.2)
    g.form = attr("combat_efficiency") * jitter(S_FORM, combat.form)  # how well each side plays this game
    period = max(1, round(combat.luck_period_s / dt))
    periods = np.arange((steps + period - 1) // period, dtype=np.uint64)[:, None]
    g.luck = (
        1.0 + combat.luck * np.stack([rng.symmetric(side_seeds[s], S_LUCK + 32 * s, periods) for s in (0, 1)], axis=1)
    ).astype(np.float32)  # [P, 2, G]; float32 halves the copying when finished games are dropped
    g.perceive = (
        1.0
        + (0.3 / (vision * (0.5 + scout)))
        * np.stack([rng.symmetric(side_seeds[s], S_PERCEIVE + 32 * s, periods) for s in (0, 1)], axis=1)
    ).astype(np.float32)
    expand_first = float(g.expand_at.min())
    next_due, lost_expansion = expand_first, False
    adapt_first = float(g.adapt_at.min())

    tiers = module.max_tier
    tier_cost = np.array([float(module.tier_cost(t + 2)) for t in range(tiers - 1)] + [np.inf])  # to leave tier t
    M = tiers * 2
    mix_table = np.concatenate([setup.sides[0].mix_q, setup.sides[1].mix_q])  # [2M, U]
    prop_table = np.concatenate([setup.sides[0].props, setup.sides[1].props]).T.copy()  # [N_PROPS, 2M]
    side_offset = np.array([[0], [M]], dtype=np.intp)
    W_combat, scale_combat, cols = cm.W_combat, cm.scale_combat, cm.cols
    class_of_unit, air = cm.class_of_unit, cm.air_classes
    static_fire = combat.intensity * combat.static_bonus * dt
    structure = cm.n_classes - 1
    move_scale = dt / match.base_distance_cells

    # --- state -----------------------------------------------------------------------------------
    shape = (2, G)
    g.credits = np.full(shape, econ.start_credits)
    g.harvesters = np.full(shape, econ.start_harvesters)
    g.expanded = np.zeros(shape)
    g.saving = np.zeros(shape)  # credits held back for a due expansion
    g.expansion_hp = np.zeros(shape)
    g.ore_main = np.full(shape, econ.field_ore)
    g.ore_exp = np.full(shape, econ.field_ore)
    g.tier = np.zeros(shape, dtype=np.intp)  # 0-based
    g.next_cost = np.full(shape, tier_cost[0])
    g.tech_share *= tier_cost[0] < np.inf  # a module with a single tier has nothing to research
    g.tech_fund = np.zeros(shape)
    g.factories = np.full(shape, float(econ.start_factories))
    g.adapted = np.zeros(shape, dtype=bool)
    g.mix_index = np.broadcast_to(side_offset, shape).copy()
    g.props = prop_table[:, g.mix_index]  # [N_PROPS, 2, G]
    g.capacity = g.factories * g.props[P_CAPRATE] * g.build_speed
    g.fire = g.form * (1.0 - harass * g.props[P_RAIDER]) * (combat.intensity * dt)  # raiders are away
    g.counts = np.zeros((2, G, U))  # units in 1/1024; exact multiples whenever they are multiplied
    g.pending = np.zeros(shape)  # credits produced since the counts were last brought up to date
    g.mobile_value = np.zeros(shape)
    g.army_value = np.zeros(shape)  # mobile units and static defences
    g.position = np.zeros(shape)  # 0 home .. 1 at the enemy base
    g.direction = np.zeros(shape)  # +1 attacking, -1 retreating, 0 at home
    g.launch_value = np.zeros(shape)
    g.base_hp = np.full(shape, module.base.hp)
    g.gathered = np.zeros(shape)
    g.control = np.full(G, 0.5)  # side 0's share of map control
    g.engaged = np.zeros(G, dtype=bool)
    g.alive = np.ones(G, dtype=bool)
    g.on_exp = np.zeros(shape)

    def switch_mix(side: np.ndarray, row: np.ndarray, new: np.ndarray) -> None:
        """Bring the counts up to date with the old mix, then build the new one."""
        g.counts[side, row] += g.pending[side, row, None] * mix_table[g.mix_index[side, row]]
        g.pending[side, row] = 0.0
        g.mix_index[side, row] = new
        g.props[:, side, row] = prop_table[:, new]
        g.capacity[side, row] = g.factories[side, row] * g.props[P_CAPRATE, side, row] * g.build_speed[side, row]
        raiders_away = 1.0 - harass[side, 0] * g.props[P_RAIDER, side, row]
        g.fire[side, row] = g.form[side, row] * raiders_away * (combat.intensity * dt)

    for step in range(steps):
        now = (step + 1) * dt
        credits, harvesters, expanded, mobile_value = g.credits, g.harvesters, g.expanded, g.mobile_value

        # --- economy ---------------------------------------------------------------------------------
        on_main = np.minimum(harvesters, slots)
        beyond = harvesters - on_main
        on_exp = np.minimum(beyond, slots)
        on_exp *= expanded
        g.on_exp = on_exp
        beyond -= on_exp
        beyond *= econ.crowding_yield
        beyond += on_main
        beyond *= g.gather
        income = np.minimum(beyond, g.ore_main)
        g.ore_main -= income
        g.ore_main += regrowth
        if expand_first <= now:
            income_exp = np.minimum(on_exp * g.gather, g.ore_exp)
            g.ore_exp -= income_exp
            g.ore_exp += regrowth * expanded
            income += income_exp
        credits += income
        g.gathered += income
        short = harvester_target - harvesters
        if (short > 0).any():  # rebuild harvesters first
            buy = np.minimum(np.clip(short, 0.0, harvest_rate_cap), credits / econ.harvester_cost)
            credits -= buy * econ.harvester_cost
            harvesters += buy
        if expand_first <= now:
            if now >= next_due or lost_expansion:  # expansions fall due, or were lost: save for one
                g.saving = np.where((expanded == 0) & (g.expand_at <= now), econ.refinery_cost, 0.0)
                later = g.expand_at[g.expand_at > now]
                next_due = float(later.min()) if later.size else np.inf
                lost_expansion = False
            build = g.saving > 0
            if build.any():
                build &= credits >= econ.refinery_cost
                if build.any():
                    credits -= build * econ.refinery_cost
                    expanded[build] = 1.0
                    g.expansion_hp[build] = econ.refinery_hp
                    g.saving[build] = 0.0
        fund = credits * g.tech_share
        credits -= fund
        g.tech_fund += fund
        up = g.tech_fund >= g.next_cost
        if up.any():
            side, row = np.nonzero(up)
            g.tech_fund[side, row] -= g.next_cost[side, row]
            g.tier[side, row] += 1
            g.next_cost[side, row] = tier_cost[g.tier[side, row]]
            g.tech_share[side, row] *= g.next_cost[side, row] < np.inf
            switch_mix(side, row, g.mix_index[side, row] + 2)
        grow = credits > econ.float_threshold
        if grow.any():
            grow &= g.factories < econ.max_factories
            if grow.any():
                side, row = np.nonzero(grow)
                g.factories[side, row] += 1.0
                credits[side, row] -= econ.factory_cost
                g.capacity[side, row] = (
                    g.factories[side, row] * g.props[P_CAPRATE, side, row] * g.build_speed[side, row]
                )
        if adapt_first <= now:
            adapt = (g.adapt_at <= now) & ~g.adapted
            if adapt.any():
                side, row = np.nonzero(adapt)
                g.adapted[side, row] = True
                switch_mix(side, row, g.mix_index[side, row] + 1)

        # --- production: credits now, unit counts when a fight needs them ---------------------------
        spend = credits - g.saving
        np.clip(spend, 0.0, g.capacity, out=spend)
        credits -= spend
        g.pending += spend
        g.army_value += spend
        spend *= g.props[P_MOBILE]
        mobile_value += spend
        enemy_mobile = mobile_value[::-1]

        # --- posture and movement -------------------------------------------------------------------
        p = step // period
        direction = g.direction
        regroup = mobile_value < combat.retreat_value
        threat = g.army_value[::-1] - enemy_mobile
        threat *= combat.static_weight
        threat += enemy_mobile
        threat *= g.perceive[p]
        impatience = 1.0 - 0.5 * min(max(now - late_game_s, 0.0) / late_game_s, 1.0)
        if now >= 0.8 * float(g.first_attack.min()):
            launch = (mobile_value >= g.theta * impatience * threat) | (mobile_value >= army_cap)
            launch &= direction == 0
            launch &= now >= g.first_attack
            launch &= ~regroup
            if launch.any():
                direction[launch] = 1.0
                g.launch_value[launch] = mobile_value[launch]
            retreat = (mobile_value < retreat_frac * g.launch_value) & (mobile_value < threat)
            retreat &= direction > 0
            retreat &= g.engaged
            if retreat.any():
                direction[retreat] = -1.0
        previous = g.position
        if regroup.any():
            direction[regroup] = 0.0
            previous = np.where(regroup, 0.0, previous)
        position = g.props[P_SPEED] * direction
        position *= move_scale
        position += previous
        np.clip(position, 0.0, 1.0, out=position)
        back = (direction < 0) & (position <= 0.0)
        if back.any():
            direction[back] = 0.0
        total = position[0] + position[1]
        overlap = total - 1.0
        if (overlap > 0).any():
            advanced = np.maximum(position - previous, 0.0)
            moved = advanced[0] + advanced[1]
            share = np.where(moved > 0, advanced / np.where(moved > 0, moved, 1.0), 0.5)
            position = np.maximum(position - np.maximum(overlap, 0.0) * share, 0.0)
            total = position[0] + position[1]
        g.position = position
        g.engaged = engaged = total >= 1.0 - 1e-9  # [G]

        # --- combat where the armies meet: Lanchester square law over target classes ---------------
        if engaged.any():
            e = np.flatnonzero(engaged)
            E = e.size
            at_base = np.take(position, e, axis=1) <= 1e-9  # [2, E]: the fight is at this side's base
            sub = np.take(g.counts, e, axis=1)
            pending = np.take(g.pending, e, axis=1)
            sub += pending[:, :, None] * np.take(mix_table, np.take(g.mix_index, e, axis=1), axis=0)
            _scatter(g.pending, e, 0.0)
            np.rint(sub, out=sub)
            np.minimum(sub, MAX_COUNT_Q, out=sub)
            X = (sub.reshape(2 * E, U) @ W_combat).reshape(2, E, -1)
            X *= scale_combat
            luck = np.take(g.luck[p], e, axis=1)
            fire = np.take(g.fire, e, axis=1)
            fire *= np.where(at_base, defender_bonus, 1.0)
            fire *= luck
            fire_static = luck * at_base
            fire_static *= static_fire
            single = X[:, :, cols["single_mobile"]] * fire[:, :, None]
            both = X[:, :, cols["both_mobile"]] * fire[:, :, None]
            if "single_static" in cols:
                single[:, :, :Cm] += X[:, :, cols["single_static"]] * fire_static[:, :, None]
            if "both_static" in cols:
                both[:, :, :Cm] += X[:, :, cols["both_static"]] * fire_static[:, :, None]
            hp = X[:, :, cols["hp"]]
            base_hp = np.take(g.base_hp, e, axis=1)
            # the targets: hit points present on each side (structures draw a reduced share of fire)
            surface_hp = hp[:, :, 2] + structure_weight * base_hp
            surface_hp *= at_base
            surface_hp += hp[:, :, 0]
            air_hp = hp[:, :, 1]
            inv_all = 1.0 / np.maximum(surface_hp + air_hp, 1.0)
            # the fraction of each class of side s that the other side's fire destroys in this step
            loss = single[::-1] * (1.0 / np.maximum(surface_hp, 1.0))[:, :, None]
            loss[:, :, air] = single[::-1, :, air] * (1.0 / np.maximum(air_hp, 1.0))[:, :, None]
            loss += both[::-1] * inv_all[:, :, None]
            loss[:, :, Cm:] *= at_base[:, :, None]  # static defences and structures: only at home
            loss[:, :, structure] *= structure_weight
            np.minimum(loss, 1.0, out=loss)
            np.subtract(1.0, loss, out=loss)  # what survives
            sub *= loss[:, :, class_of_unit]  # rounded again before the next product
            g.counts[0, e] = sub[0]
            g.counts[1, e] = sub[1]
            base_hp *= loss[:, :, structure]
            _scatter(g.base_hp, e, base_hp)
            value = X[:, :, cols["value"]]
            value *= loss[:, :, :structure]
            mobile = value[:, :, :Cm].sum(axis=2)  # per game, a fixed number of terms in a fixed order
            _scatter(g.mobile_value, e, mobile)
            mobile += value[:, :, Cm:].sum(axis=2)
            _scatter(g.army_value, e, mobile)
            fallen = base_hp <= 0.5
            ended_rows = e[(fallen[0] | fallen[1]) & np.take(g.alive, e)]
        else:
            ended_rows = None

        # --- raids on harvesters, pressure on expansions, map control (every SLOW_EVERY steps) -------
        if step % SLOW_EVERY == SLOW_EVERY - 1:
            mobile_value = g.mobile_value
            static_value = g.army_value - mobile_value
            if now >= combat.raid_start_s:
                raid = g.props[P_RAID] * mobile_value
                raid *= g.luck[p]
                raid *= raid_scale
                raid_power = g.props[P_RAIDER] * mobile_value
                raid_power *= harass
                defence = guard * mobile_value + static_value
                protected = defence + raid_power[::-1] + 1.0
                np.divide(defence, protected, out=protected)
                killed = 1.0 + g.on_exp / np.maximum(harvesters, 1e-9)  # expansions are more exposed
                killed *= 1.0 - protected
                killed *= raid[::-1]
                np.minimum(killed, harvesters, out=killed)
                harvesters -= killed
            if expand_first <= now:
                pressure = (position[::-1] >= 0.5) * mobile_value[::-1]
                pressure *= expanded
                if pressure.any():
                    g.expansion_hp -= combat.expansion_exposure * slow_dt * pressure
                    lost = (expanded > 0) & (g.expansion_hp <= 0)
                    if lost.any():
                        harvesters -= np.where(lost, g.on_exp, 0.0)
                        expanded[lost] = 0.0
                        lost_expansion = True
            influence = 0.5 + position
            influence *= mobile_value
            influence += 2000.0 * expanded
            influence *= map_weight
            influence += 1.0
            share0 = influence[0] / (influence[0] + influence[1])
            share0 -= g.control
            share0 *= control_rate
            g.control += share0

        if trace is not None:
            trace(now, g)

        # --- timeline and the end of games -------------------------------------------------------------
        sample = sample_index.get(step)
        if sample is not None:
            alive = g.alive
            out.timeline[offset + g.rows[alive], sample, :] = g.army_value[:, alive].T
        last = step == steps - 1
        if last:
            army, base = g.army_value, g.base_hp
            fallen = base <= 0.5
            outcome = np.where(
                fallen[0] | fallen[1], _fall_outcome(fallen), _points_outcome(match, army, g.control, base)
            )
            finish = g.alive
        elif ended_rows is not None and ended_rows.size:
            finish = np.zeros(g.rows.size, dtype=bool)
            finish[ended_rows] = True
            outcome = _fall_outcome(g.base_hp <= 0.5)
        else:
            continue
        army = g.army_value
        target = offset + g.rows[finish]
        out.outcome[target] = outcome[finish]
        out.duration_s[target] = now
        out.resource_delta[target] = (g.gathered[0] - g.gathered[1])[finish]
        out.army_value_delta[target] = (army[0] - army[1])[finish]
        out.map_control[target] = g.control[finish]
        first_open = int(np.searchsorted(sample_steps, step, side="right"))
        if first_open < samples:  # games that end early hold their final value
            out.timeline[target, first_open:, :] = army[:, finish].T[:, None, :]
        if last:
            break
        g.alive &= ~finish
        dead = g.alive.size - int(np.count_nonzero(g.alive))
        if dead == g.alive.size:
            break
        if dead * 3 >= g.alive.size:  # drop finished games from the arrays
            g.compact(g.alive.copy())


def _scatter(array: np.ndarray, rows: np.ndarray, values: np.ndarray | float) -> None:
    """``array[:, rows] = values`` for a [2, G] array, one side at a time (faster than fancy 2-D)."""
    if isinstance(values, float):
        array[0, rows] = values
        array[1, rows] = values
    else:
        array[0, rows] = values[0]
        array[1, rows] = values[1]


def _fall_outcome(fallen: np.ndarray) -> np.ndarray:
    return np.where(fallen[0] & fallen[1], OUTCOME_DRAW, np.where(fallen[1], OUTCOME_WIN, OUTCOME_LOSS)).astype(np.int8)


def _points_outcome(match: MatchConfig, army: np.ndarray, control: np.ndarray, base_hp: np.ndarray) -> np.ndarray:
    army_total = army[0] + army[1]
    base_total = base_hp[0] + base_hp[1]
    score = (
        match.points_army * np.where(army_total > 0, army[0] / np.maximum(army_total, 1e-9), 0.5)
        + match.points_map_control * control
        + match.points_base * np.where(base_total > 0, base_hp[0] / np.maximum(base_total, 1e-9), 0.5)
    )
    return np.where(
        np.abs(score - 0.5) < match.draw_margin, OUTCOME_DRAW, np.where(score > 0.5, OUTCOME_WIN, OUTCOME_LOSS)
    ).astype(np.int8)
