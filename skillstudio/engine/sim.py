"""The vectorised skirmish simulator: the games of one or many match-ups as array arithmetic over a
games axis (:func:`simulate`, :func:`simulate_many`).

Side 0 is the skill, side 1 the opponent. State arrays are shaped ``[2, games]`` (one number per
side and game) or ``[unit_types, 2, games]`` (unit counts). docs/reference-engine.md explains
the model; this module is its implementation, :mod:`tables` compiles a match-up into the arrays
it works on and :mod:`tuning` holds the model's constants.

A block of games is played by :func:`_simulate_block`: :func:`_constants` (what is fixed for the
block: the module's tables and every plan's numbers, of which each game takes its own), :func:`_opening` (each game's draws and starting state, a :class:`Games`) and, for a
situated match, :func:`_situate` (the skill's SituationSignature, compiled by :mod:`situation`);
then every step the phases in order: :func:`_economy`, :func:`_production`, :func:`_posture`,
:func:`_movement`, :func:`_combat` (only where armies meet), :func:`_raids_and_control` (every
few steps), :func:`_record_timeline` and :func:`_end_games`. A composition's next plan takes
over between two steps, in that match-up's games (:func:`_switch_plan`).

Determinism: every game's randomness is a counter-based hash of its own seed (:mod:`rng`) and
all per-game arithmetic is elementwise. The one sum across unit types, the matrix product
``counts @ W``, is exact: counts are rounded to a grid of 1/1024 unit before it and ``W`` holds
integers (real values scaled by powers of two), so every partial sum is an integer below 2**53
and the order in which a BLAS library adds them cannot change the result. The only other
reduction, an army's value summed over its few target classes after a fight, adds a fixed number
of terms per game in a fixed order (:func:`_sum_classes`). A game's result is therefore
bit-identical whatever batch, chunk, internal block or company of other match-ups it is simulated
in (tests/engine/test_determinism.py, test_many_skills.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import numpy.typing as npt

from skillstudio.engine import rng
from skillstudio.engine.module import CombatConfig, EconomyConfig, MatchConfig
from skillstudio.engine.tables import (
    MAX_COUNT_Q,
    P_CAPRATE,
    P_MOBILE,
    P_RAID,
    P_RAIDER,
    P_SPEED,
    MatchSetup,
)
from skillstudio.engine.tuning import Tuning

BLOCK = 16384  # games simulated together; results do not depend on it

# Random streams (each side adds 32 * side).
S_INCOME, S_BUILD, S_FIRST, S_THETA, S_EXPAND, S_TECH, S_ADAPT, S_LUCK, S_PERCEIVE, S_FORM = range(10)

OUTCOME_LOSS, OUTCOME_DRAW, OUTCOME_WIN = -1, 0, 1

F64 = npt.NDArray[np.float64]
F32 = npt.NDArray[np.float32]
Ints = npt.NDArray[np.intp]
Bools = npt.NDArray[np.bool_]


@dataclass
class RawResults:
    outcome: np.ndarray  # int8: 1 win, 0 draw, -1 loss, from the skill's side
    duration_s: np.ndarray
    resource_delta: np.ndarray  # credits gathered, skill minus opponent
    army_value_delta: np.ndarray  # army value (units and defences) at the end, skill minus opponent
    map_control: np.ndarray  # the skill's share at the end, 0..1
    timeline: np.ndarray  # [games, samples, 2] army value per side
    timeline_t: np.ndarray  # [samples] seconds


def simulate(setup: MatchSetup, seeds: np.ndarray, *, trace: Callable[[float, Any], None] | None = None) -> RawResults:
    """Simulate one game per seed (uint64 array). Results are independent of how seeds are batched.

    ``trace(now, games)`` is called after every step with the block's :class:`Games` (read it,
    never change it): for calibration and debugging."""
    return simulate_many([setup], [seeds], trace=trace)


def group_key(setup: MatchSetup) -> tuple[int, int, int]:
    """Match-ups with the same key can be played in one :func:`simulate_many` pass: one compiled
    module, one tuning and one start step (the step loop is shared, each game's numbers are not)."""
    start_step = setup.start.start_step if setup.start is not None else 0
    return id(setup.cm), id(setup.tuning), start_step


def simulate_many(
    setups: Sequence[MatchSetup],
    seeds: Sequence[np.ndarray],
    *,
    trace: Callable[[float, Any], None] | None = None,
) -> RawResults:
    """The games of many match-ups in one vectorised pass: ``seeds[i]`` (uint64) are the games of
    ``setups[i]``, and the results hold every match-up's games in that order, one after another.
    Each game's doctrine is a column of numbers over the games axis, so a game's result is the one
    :func:`simulate` gives it alone, bit for bit. The setups must share a :func:`group_key`."""
    if not setups or len(setups) != len(seeds):
        raise ValueError("simulate_many: one seed array per match-up, and at least one match-up")
    if len({group_key(setup) for setup in setups}) > 1:
        raise ValueError("simulate_many: the match-ups must share a compiled module, the tuning and the start step")
    arrays = [np.ascontiguousarray(part, dtype=np.uint64) for part in seeds]
    all_seeds = np.concatenate(arrays)
    games = all_seeds.shape[0]
    match = setups[0].module.match
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
    if games == 0:
        return out
    request = np.repeat(np.arange(len(setups)), [part.shape[0] for part in arrays])
    k = _constants(setups, out.timeline_t)
    for start in range(0, games, BLOCK):
        _simulate_block(setups, k, all_seeds[start : start + BLOCK], request[start : start + BLOCK], out, start, trace)
    return out


def _simulate_block(
    setups: Sequence[MatchSetup],
    k: _Constants,
    seeds: np.ndarray,
    request: Ints,
    out: RawResults,
    offset: int,
    trace: Callable[[float, Any], None] | None,
) -> None:
    """Play one block; ``request[i]`` is the match-up of the block's game i."""
    g = _opening(k, seeds, k.first_plan[request])
    present = np.unique(request).tolist()
    if any(setups[r].start is not None for r in present):
        _situate(k, g, setups, request)
        _record_start(k, g, out, offset)
    slow_every, start_step = k.tuning.slow_every, k.start_step
    switches = _switch_schedule(setups, k, present)
    for step in range(k.steps):
        if switches and step in switches:
            for r, plan in switches[step]:
                _switch_plan(k, g, np.flatnonzero(request[g.rows] == r), plan, seeds)
        now = (start_step + step + 1) * k.dt  # the game clock
        p = step // k.period  # the luck period
        _economy(k, g, now)
        _production(g)
        _posture(k, g, now, p)
        _movement(k, g)
        ended_rows = _combat(k, g, p) if g.engaged.any() else None
        if step % slow_every == slow_every - 1:
            _raids_and_control(k, g, now, p)
        if trace is not None:
            trace(now, g)
        _record_timeline(k, g, out, offset, step)
        if _end_games(k, g, out, offset, step, now, ended_rows):
            break


def _switch_schedule(
    setups: Sequence[MatchSetup], k: _Constants, present: list[int]
) -> dict[int, list[tuple[int, int]]]:
    """step -> (match-up, plan) of the compositions' plan switches (a later switch to the same
    step replaces an earlier one, as each match-up alone plays them)."""
    schedule: dict[int, list[tuple[int, int]]] = {}
    for r in present:
        own = {
            max(switch.at_step - k.start_step, 0): int(k.first_plan[r]) + 1 + j
            for j, switch in enumerate(setups[r].switches)
        }
        for step, plan in own.items():
            schedule.setdefault(step, []).append((r, plan))
    return schedule


# ================================================================================================
# What a block works with
# ================================================================================================

# Each side's doctrine numbers that the step loop reads, per game (Games fields of the same names).
PER_GAME_SIDE = (
    "harvester_target",
    "harass",
    "guard",
    "retreat_frac",
    "defender_bonus",
    "map_weight",
    "army_cap",
    "raid_scale",
)
_PARAMS = (
    "aggression",
    "harassment",
    "scout_priority",
    "harvester_count_target",
    "harvester_defense",
    "retreat_threshold",
    "reaction_urgency",
    "expansion_priority",
    "tech_priority",
)
_ATTRS = (
    "vision",
    "reaction_delay_s",
    "map_weight",
    "build_time",
    "adaptation",
    "adaptation_time_s",
    "combat_efficiency",
    "gather_rate",
)


@dataclass(frozen=True, slots=True)
class _Constants:
    """What is fixed for a group of match-ups: the model's tables, and every plan they play (each
    match-up's first plan, then its composition's later ones): each side's doctrine numbers as
    ``[2, plans]`` arrays (a game takes its plan's column) and each plan's production
    mixes, stacked in ``mix_table`` / ``prop_table`` at ``plan_rows`` rows per plan."""

    tuning: Tuning
    match: MatchConfig
    combat: CombatConfig
    econ: EconomyConfig
    dt: float
    start_step: int  # steps before the first one played (a situated game starts later)
    steps: int  # steps played
    period: int  # steps per luck period
    sample_steps: Ints  # [samples] the step after which each timeline sample is taken (< 0: before the start)
    sample_index: dict[int, int]  # step -> sample
    doctrine: dict[str, F64]  # [2, plans] per side: the doctrines' parameters and attributes
    per_game: dict[str, F64]  # [2, plans] per side: the PER_GAME_SIDE numbers
    first_plan: Ints  # [match-ups] each one's first plan
    # scalars
    late_game_s: float
    harvest_rate_cap: float  # harvesters bought per step at most
    slots: float
    regrowth: float  # ore per step
    structure_weight: float
    base_hp: float
    slow_dt: float
    control_rate: float
    static_fire: float
    move_scale: float
    # tables
    tier_cost: F64  # [tiers] credits to leave each tier (inf at the top)
    mix_table: F64  # [U, plans * 2M] each plan's mixes (columns), side 0's M then side 1's; quantum units per credit
    units: Ints  # [U] the module's unit types that any game of the group can hold (U: their number)
    prop_table: F64  # [N_PROPS, plans * 2M]
    plan_rows: int  # 2M
    side_row: Ints  # [2, 1] a side's first row within its plan's rows
    W_combat: F64  # [K, U] (transposed: per-class arrays keep the games axis last, long and contiguous)
    scale_combat: F64  # [K, 1, 1]
    cols: dict[str, slice]
    class_of_unit: Ints
    air: slice  # the air classes
    structure: int  # the base's class
    n_mobile_classes: int
    n_units: int


def _constants(setups: Sequence[MatchSetup], timeline_t: F64) -> _Constants:
    setup = setups[0]
    cm, module, t = setup.cm, setup.module, setup.tuning
    match, combat, econ = module.match, module.combat, module.economy
    plans = [sides for one in setups for sides in (one.sides, *(switch.sides for switch in one.switches))]
    first_plan = np.cumsum([0] + [1 + len(one.switches) for one in setups[:-1]])
    dt = match.step_s
    start_step = setup.start.start_step if setup.start is not None else 0
    sample_steps = np.array([round(timeline_t[k] / dt) - 1 - start_step for k in range(match.timeline_samples)])
    doctrines = [(sides[0].doctrine, sides[1].doctrine) for sides in plans]
    side = {
        name: np.array([[float(d0.param(name)) for d0, _ in doctrines], [float(d1.param(name)) for _, d1 in doctrines]])
        for name in _PARAMS
    }
    side.update(
        (
            name,
            np.array(
                [[float(getattr(d0, name)) for d0, _ in doctrines], [float(getattr(d1, name)) for _, d1 in doctrines]]
            ),
        )
        for name in _ATTRS
    )
    # the same expressions as for one plan's [2, 1] columns: elementwise, so the same bits per plan
    aggression = side["aggression"]
    harass = side["harassment"] / t.harassment_divisor
    scout = side["scout_priority"] / 100.0
    vision = side["vision"]
    delay_penalty = 1.0 - t.reaction_delay_penalty * np.minimum(side["reaction_delay_s"], dt) / dt
    slow_dt = t.slow_every * dt
    derived = {
        "harvester_target": side["harvester_count_target"],
        "harass": harass,
        "guard": side["harvester_defense"] / 100.0,
        "retreat_frac": side["retreat_threshold"] / 100.0,
        "defender_bonus": combat.defender_bonus * delay_penalty,
        "map_weight": side["map_weight"] * vision * (t.map_weight_base + t.map_weight_per_scout * scout),
        "army_cap": t.army_cap * (t.army_cap_factor - aggression / 100.0),
        "raid_scale": harass * combat.raid_efficiency * slow_dt / (econ.harvester_hp * vision),
    }
    tiers = module.max_tier
    M = tiers * 2
    mix_table = np.concatenate([side_tables.mix_q for sides in plans for side_tables in sides])
    # The unit types a game of the group can ever hold: the others stay at exactly 0, and leaving
    # them out of the counts (and their zero terms out of the exact sums of counts @ W) changes no bit.
    present = mix_table.any(axis=0)
    for one in setups:
        if one.start is not None:
            present |= one.start.counts_q.any(axis=0)
    units = np.flatnonzero(present)
    return _Constants(
        tuning=t,
        match=match,
        combat=combat,
        econ=econ,
        dt=dt,
        start_step=start_step,
        steps=match.steps - start_step,
        period=max(1, round(combat.luck_period_s / dt)),
        sample_steps=sample_steps,
        sample_index={int(step): k for k, step in enumerate(sample_steps)},
        doctrine=side,
        per_game=derived,
        first_plan=first_plan.astype(np.intp),
        late_game_s=match.time_limit_s * t.impatience_from,
        harvest_rate_cap=dt / econ.harvester_build_time_s,
        slots=econ.harvester_slots,
        regrowth=econ.regrowth_per_s * dt,
        structure_weight=combat.structure_target_weight,
        base_hp=module.base.hp,
        slow_dt=slow_dt,
        control_rate=1.0 - t.control_keep**t.slow_every,
        static_fire=combat.intensity * combat.static_bonus * dt,
        move_scale=dt / match.base_distance_cells,
        tier_cost=np.array([float(module.tier_cost(n + 2)) for n in range(tiers - 1)] + [np.inf]),
        mix_table=np.ascontiguousarray(mix_table[:, units].T),
        units=units,
        prop_table=np.concatenate([side_tables.props for sides in plans for side_tables in sides]).T.copy(),
        plan_rows=2 * M,
        side_row=np.array([[0], [M]], dtype=np.intp),
        W_combat=np.ascontiguousarray(cm.W_combat[units].T),
        scale_combat=cm.scale_combat[:, None, None],
        cols=cm.cols,
        class_of_unit=cm.class_of_unit[units],
        air=cm.air_classes,
        structure=cm.n_classes - 1,
        n_mobile_classes=cm.n_mobile_classes,
        n_units=units.size,
    )


@dataclass(slots=True)
class Games:
    """The state of a block of games. Arrays are ``[2, G]`` (side, game), float64, unless stated;
    the games axis is the last one. :meth:`compact` drops finished games."""

    rows: Ints  # [G] block row -> game
    # --- each side's doctrine numbers (its plan's, see PER_GAME_SIDE) ---
    harvester_target: F64
    harass: F64  # share of raiders away raiding
    guard: F64  # share of the army guarding harvesters
    retreat_frac: F64
    defender_bonus: F64  # fire at home, after the reaction delay
    map_weight: F64
    army_cap: F64
    raid_scale: F64
    # --- drawn once per game from its seed ---
    tech_share: F64  # share of spare credits put into technology
    gather: F64  # credits per harvester and step
    build_speed: F64
    first_attack: F64  # s
    theta: F64  # attack threshold
    expand_at: F64  # s; inf: never
    adapt_at: F64  # s; inf: never
    form: F64  # how well each side plays this game
    luck: F32  # [P, 2, G] per luck period; float32 halves the copying in compact()
    perceive: F32  # [P, 2, G] misjudgement of the enemy per luck period
    # --- economy ---
    credits: F64
    harvesters: F64
    expanded: F64  # 1.0 with an expansion
    saving: F64  # credits held back for a due expansion
    expansion_hp: F64
    ore_main: F64
    ore_exp: F64
    on_exp: F64  # harvesters at the expansion
    gathered: F64
    # --- technology and production ---
    tier: Ints  # 0-based
    next_cost: F64  # credits to leave the tier
    tech_fund: F64
    factories: F64
    adapted: Bools
    mix_index: Ints  # column of mix_table / prop_table
    props: F64  # [N_PROPS, 2, G] the properties of the current mix
    capacity: F64  # credits turned into units per step at most
    fire: F64  # the army's fire multiplier (form, raiders away, intensity)
    # --- the armies ---
    counts: F64  # [U, 2, G] units in 1/1024 (of the types in _Constants.units); exact multiples whenever they are multiplied
    pending: F64  # credits produced since the counts were last brought up to date
    mobile_value: F64
    army_value: F64  # mobile units and static defences
    position: F64  # 0 home .. 1 at the enemy base
    direction: F64  # +1 attacking, -1 retreating, 0 at home
    launch_value: F64
    engaged: Bools  # [G]
    # --- bases, map, games ---
    base_hp: F64
    control: F64  # [G] side 0's share of map control
    alive: Bools  # [G]
    # --- block-wide times: skip work until the first game needs it ---
    expand_first: float
    adapt_first: float
    posture_from: float
    next_due: float  # the next time an expansion falls due
    lost_expansion: bool  # an expansion was lost since the last check

    def compact(self, keep: Bools) -> None:
        """Keep only the games ``keep`` selects."""
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                setattr(self, f.name, value[..., keep])


@dataclass(slots=True)
class _PlanDraws:
    """The per-game draws that follow from a side's plan parameters ([2, G]; perceive [P, 2, G])."""

    tech_share: F64
    first_attack: F64
    theta: F64
    expand_at: F64
    perceive: F32


def _side_seeds(seeds: np.ndarray) -> npt.NDArray[np.uint64]:
    return np.stack([seeds, seeds ^ np.uint64(0x5DEECE66D5DEECE6)])  # [2, G]


def _jitter(side_seeds: npt.NDArray[np.uint64], stream: int, spread: float) -> F64:
    return 1.0 + spread * np.stack([rng.symmetric(side_seeds[s], stream + 32 * s) for s in (0, 1)])


def _per_period(side_seeds: npt.NDArray[np.uint64], stream: int, k: _Constants) -> F64:
    periods = np.arange((k.steps + k.period - 1) // k.period, dtype=np.uint64)[:, None]
    return np.stack([rng.symmetric(side_seeds[s], stream + 32 * s, periods) for s in (0, 1)], axis=1)


def _plan_draws(k: _Constants, plan: Ints, side_seeds: npt.NDArray[np.uint64]) -> _PlanDraws:
    """``plan[i]``: the plan game i plays."""
    t = k.tuning

    def param(name: str) -> F64:
        return k.doctrine[name][:, plan]

    aggression = param("aggression")
    urgency = param("reaction_urgency")
    expansion = param("expansion_priority")
    scout = param("scout_priority") / 100.0
    vision = param("vision")
    tech_share = (t.tech_share_base + t.tech_share_per_priority * param("tech_priority") / 100.0) * _jitter(
        side_seeds, S_TECH, t.spread_tech
    )
    speedup = 1.0 - t.urgency_speedup * np.maximum(urgency - t.urgency_neutral, 0.0) / t.urgency_neutral
    first_attack = (t.first_attack_s - t.first_attack_per_aggression_s * aggression) * speedup
    expand_at = np.where(
        expansion >= t.expansion_min_priority, t.expansion_s - t.expansion_per_priority_s * expansion, np.inf
    ) * _jitter(side_seeds, S_EXPAND, t.spread_expansion)
    misjudgement = t.misjudgement / (vision * (0.5 + scout))
    return _PlanDraws(
        tech_share=tech_share,
        first_attack=first_attack * _jitter(side_seeds, S_FIRST, t.spread_first_attack),
        theta=(t.attack_threshold - t.attack_threshold_per_aggression * aggression)
        * _jitter(side_seeds, S_THETA, t.spread_attack_threshold),
        expand_at=expand_at,
        perceive=(1.0 + misjudgement * _per_period(side_seeds, S_PERCEIVE, k)).astype(np.float32),
    )


def _opening(k: _Constants, seeds: np.ndarray, plan: Ints) -> Games:
    """Each game's draws from its own seed, and the standard skirmish opening; ``plan[i]``: the
    plan game i starts with."""
    t, combat, econ = k.tuning, k.combat, k.econ
    G, dt = seeds.shape[0], k.dt
    side_seeds = _side_seeds(seeds)

    def attr(name: str) -> F64:
        return k.doctrine[name][:, plan]

    draws = _plan_draws(k, plan, side_seeds)
    tech_share = draws.tech_share
    tech_share *= k.tier_cost[0] < np.inf  # a module with a single tier has nothing to research
    build_speed = dt / attr("build_time") * _jitter(side_seeds, S_BUILD, t.spread_build_speed)
    adapt_at = np.where(attr("adaptation") > 0, attr("adaptation_time_s"), np.inf) * _jitter(
        side_seeds, S_ADAPT, t.spread_adaptation
    )
    form = attr("combat_efficiency") * _jitter(side_seeds, S_FORM, combat.form)
    first_attack, expand_at = draws.first_attack, draws.expand_at
    per_game = {name: values[:, plan] for name, values in k.per_game.items()}

    shape = (2, G)
    mix_index = plan * k.plan_rows + k.side_row
    props = k.prop_table[:, mix_index]  # [N_PROPS, 2, G]
    factories = np.full(shape, float(econ.start_factories))
    expand_first = float(expand_at.min())
    return Games(
        rows=np.arange(G),
        **per_game,
        tech_share=tech_share,
        gather=econ.gather_rate_per_s * dt * attr("gather_rate") * _jitter(side_seeds, S_INCOME, t.spread_income),
        build_speed=build_speed,
        first_attack=first_attack,
        theta=draws.theta,
        expand_at=expand_at,
        adapt_at=adapt_at,
        form=form,
        luck=(1.0 + combat.luck * _per_period(side_seeds, S_LUCK, k)).astype(np.float32),
        perceive=draws.perceive,
        credits=np.full(shape, econ.start_credits),
        harvesters=np.full(shape, econ.start_harvesters),
        expanded=np.zeros(shape),
        saving=np.zeros(shape),
        expansion_hp=np.zeros(shape),
        ore_main=np.full(shape, econ.field_ore),
        ore_exp=np.full(shape, econ.field_ore),
        on_exp=np.zeros(shape),
        gathered=np.zeros(shape),
        tier=np.zeros(shape, dtype=np.intp),
        next_cost=np.full(shape, k.tier_cost[0]),
        tech_fund=np.zeros(shape),
        factories=factories,
        adapted=np.zeros(shape, dtype=bool),
        mix_index=mix_index,
        props=props,
        capacity=factories * props[P_CAPRATE] * build_speed,
        fire=form * (1.0 - per_game["harass"] * props[P_RAIDER]) * (combat.intensity * dt),  # raiders are away
        counts=np.zeros((k.n_units, 2, G)),
        pending=np.zeros(shape),
        mobile_value=np.zeros(shape),
        army_value=np.zeros(shape),
        position=np.zeros(shape),
        direction=np.zeros(shape),
        launch_value=np.zeros(shape),
        engaged=np.zeros(G, dtype=bool),
        base_hp=np.full(shape, k.base_hp),
        control=np.full(G, 0.5),
        alive=np.ones(G, dtype=bool),
        expand_first=expand_first,
        adapt_first=float(adapt_at.min()),
        posture_from=t.posture_lookahead * float(first_attack.min()),
        next_due=expand_first,
        lost_expansion=False,
    )


def _situate(k: _Constants, g: Games, setups: Sequence[MatchSetup], request: Ints) -> None:
    """Replace the opening with each situated game's starting state (that of its match-up)."""
    econ = k.econ
    starts = [setup.start for setup in setups]
    situated = np.array([start is not None for start in starts])
    sit = np.flatnonzero(situated[request])  # block rows; nothing is compacted yet
    index = np.cumsum(situated) - 1
    tables = [start for start in starts if start is not None]
    which = index[request[sit]]  # each situated game's StartTables

    def per_game(name: str) -> np.ndarray:
        values: np.ndarray = np.stack([getattr(start, name) for start in tables])[which].T
        return values

    def floats(name: str) -> F64:
        return per_game(name).astype(np.float64)

    g.gather[:, sit] *= floats("income")
    g.credits[:, sit] = floats("credits")
    g.harvesters[:, sit] = floats("harvesters")
    g.factories[:, sit] = floats("factories")
    g.ore_main[:, sit] = floats("ore_main")
    expanded = floats("expanded")
    g.expanded[:, sit] = expanded
    g.expansion_hp[:, sit] = expanded * econ.refinery_hp
    tier = per_game("tier") - 1
    g.tier[:, sit] = tier
    next_cost = k.tier_cost[tier]
    g.next_cost[:, sit] = next_cost
    g.tech_share[:, sit] *= next_cost < np.inf  # nothing left to research at the top tier
    mix_index = g.mix_index[:, sit] + 2 * tier
    g.mix_index[:, sit] = mix_index
    props = k.prop_table[:, mix_index]
    g.props[:, :, sit] = props
    g.capacity[:, sit] = g.factories[:, sit] * props[P_CAPRATE] * g.build_speed[:, sit]
    g.fire[:, sit] = g.form[:, sit] * (1.0 - g.harass[:, sit] * props[P_RAIDER]) * (k.combat.intensity * k.dt)
    g.counts[:, :, sit] = np.stack([start.counts_q[:, k.units] for start in tables])[which].transpose(2, 1, 0)
    g.army_value[:, sit] = floats("army_value")
    mobile_value = floats("mobile_value")
    g.mobile_value[:, sit] = mobile_value
    g.position[:, sit] = floats("position")
    direction = floats("direction")
    g.direction[:, sit] = direction
    g.launch_value[:, sit] = mobile_value * (direction > 0)
    g.control[sit] = np.array([start.control for start in tables])[which]
    start_s = k.start_step * k.dt
    if any(start.expanded.any() for start in tables):  # expansions yield and can be worn down from the first step
        g.expand_first = min(g.expand_first, start_s)
        g.next_due = g.expand_first
    if any(start.launched for start in tables):  # an army already attacking may retreat before anyone's first attack
        g.posture_from = -np.inf


def _record_start(k: _Constants, g: Games, out: RawResults, offset: int) -> None:
    """Timeline samples before a situated game's start hold its starting army values (a group
    that starts later than the opening is situated throughout)."""
    before = np.flatnonzero(k.sample_steps < 0)
    if before.size:
        out.timeline[offset + g.rows[:, None], before[None, :], :] = g.army_value.T[:, None, :]


def _switch_plan(k: _Constants, g: Games, sel: Ints, plan: int, seeds: np.ndarray) -> None:
    """A composition's next plan takes over in the games ``sel``: units produced so far stay what
    they were built as, the plan's parameters, mixes and plan-driven draws (from the same seeds)
    replace the old."""
    if not sel.size:
        return
    old_index = g.mix_index[:, sel]
    g.counts[:, :, sel] += g.pending[:, sel] * k.mix_table[:, old_index]
    g.pending[:, sel] = 0.0
    mix_index = old_index % k.plan_rows + plan * k.plan_rows  # same tier, same adaptation, the new plan's mix
    g.mix_index[:, sel] = mix_index
    plans = np.full(sel.size, plan)
    draws = _plan_draws(k, plans, _side_seeds(seeds[g.rows[sel]]))
    g.tech_share[:, sel] = draws.tech_share * (g.next_cost[:, sel] < np.inf)
    g.first_attack[:, sel] = draws.first_attack
    g.theta[:, sel] = draws.theta
    g.expand_at[:, sel] = draws.expand_at
    g.perceive[:, :, sel] = draws.perceive
    for name, values in k.per_game.items():
        getattr(g, name)[:, sel] = values[:, plan, None]
    props = k.prop_table[:, mix_index]
    g.props[:, :, sel] = props
    g.capacity[:, sel] = g.factories[:, sel] * props[P_CAPRATE] * g.build_speed[:, sel]
    g.fire[:, sel] = g.form[:, sel] * (1.0 - g.harass[:, sel] * props[P_RAIDER]) * (k.combat.intensity * k.dt)
    g.expand_first = min(g.expand_first, float(draws.expand_at.min()))
    g.next_due = -np.inf  # expansions are re-planned under the new plan
    g.posture_from = min(g.posture_from, k.tuning.posture_lookahead * float(draws.first_attack.min()))


def _switch_mix(k: _Constants, g: Games, side: Ints, row: Ints, new: Ints) -> None:
    """Bring the counts up to date with the old mix, then build the new one."""
    g.counts[:, side, row] += g.pending[side, row] * k.mix_table[:, g.mix_index[side, row]]
    g.pending[side, row] = 0.0
    g.mix_index[side, row] = new
    g.props[:, side, row] = k.prop_table[:, new]
    g.capacity[side, row] = g.factories[side, row] * g.props[P_CAPRATE, side, row] * g.build_speed[side, row]
    raiders_away = 1.0 - g.harass[side, row] * g.props[P_RAIDER, side, row]
    g.fire[side, row] = g.form[side, row] * raiders_away * (k.combat.intensity * k.dt)


# ================================================================================================
# The phases of a step
# ================================================================================================


def _economy(k: _Constants, g: Games, now: float) -> None:
    """Income, then spending in order: harvesters, a due expansion, technology, factories; and
    an adapting AI's switch to counters."""
    _gather(k, g, now)
    _buy_harvesters(k, g)
    if g.expand_first <= now:
        _expand(k, g, now)
    _research(k, g)
    _add_factories(k, g)
    if g.adapt_first <= now:
        _adapt(k, g, now)


def _gather(k: _Constants, g: Games, now: float) -> None:
    harvesters, expanded = g.harvesters, g.expanded
    on_main = np.minimum(harvesters, k.slots)
    beyond = harvesters - on_main
    on_exp = np.minimum(beyond, k.slots)
    on_exp *= expanded
    g.on_exp = on_exp
    beyond -= on_exp
    beyond *= k.econ.crowding_yield
    beyond += on_main
    beyond *= g.gather
    income = np.minimum(beyond, g.ore_main)
    g.ore_main -= income
    g.ore_main += k.regrowth
    if g.expand_first <= now:
        income_exp = np.minimum(on_exp * g.gather, g.ore_exp)
        g.ore_exp -= income_exp
        g.ore_exp += k.regrowth * expanded
        income += income_exp
    g.credits += income
    g.gathered += income


def _buy_harvesters(k: _Constants, g: Games) -> None:
    short = g.harvester_target - g.harvesters
    if (short > 0).any():  # rebuild harvesters first
        cost = k.econ.harvester_cost
        buy = np.minimum(np.clip(short, 0.0, k.harvest_rate_cap), g.credits / cost)
        g.credits -= buy * cost
        g.harvesters += buy


def _expand(k: _Constants, g: Games, now: float) -> None:
    cost = k.econ.refinery_cost
    if now >= g.next_due or g.lost_expansion:  # expansions fall due, or were lost: save for one
        g.saving = np.where((g.expanded == 0) & (g.expand_at <= now), cost, 0.0)
        later = g.expand_at[g.expand_at > now]
        g.next_due = float(later.min()) if later.size else np.inf
        g.lost_expansion = False
    build = g.saving > 0
    if build.any():
        build &= g.credits >= cost
        if build.any():
            g.credits -= build * cost
            g.expanded[build] = 1.0
            g.expansion_hp[build] = k.econ.refinery_hp
            g.saving[build] = 0.0


def _research(k: _Constants, g: Games) -> None:
    fund = g.credits * g.tech_share
    g.credits -= fund
    g.tech_fund += fund
    up = g.tech_fund >= g.next_cost
    if up.any():
        side, row = np.nonzero(up)
        g.tech_fund[side, row] -= g.next_cost[side, row]
        g.tier[side, row] += 1
        g.next_cost[side, row] = k.tier_cost[g.tier[side, row]]
        g.tech_share[side, row] *= g.next_cost[side, row] < np.inf
        _switch_mix(k, g, side, row, g.mix_index[side, row] + 2)


def _add_factories(k: _Constants, g: Games) -> None:
    econ = k.econ
    grow = g.credits > econ.float_threshold
    if grow.any():
        grow &= g.factories < econ.max_factories
        if grow.any():
            side, row = np.nonzero(grow)
            g.factories[side, row] += 1.0
            g.credits[side, row] -= econ.factory_cost
            g.capacity[side, row] = g.factories[side, row] * g.props[P_CAPRATE, side, row] * g.build_speed[side, row]


def _adapt(k: _Constants, g: Games, now: float) -> None:
    adapt = (g.adapt_at <= now) & ~g.adapted
    if adapt.any():
        side, row = np.nonzero(adapt)
        g.adapted[side, row] = True
        _switch_mix(k, g, side, row, g.mix_index[side, row] + 1)


def _production(g: Games) -> None:
    """Credits become units up to the production capacity: credits now, unit counts when a
    fight needs them (``pending``)."""
    spend = g.credits - g.saving
    np.clip(spend, 0.0, g.capacity, out=spend)
    g.credits -= spend
    g.pending += spend
    g.army_value += spend
    spend *= g.props[P_MOBILE]
    g.mobile_value += spend


def _posture(k: _Constants, g: Games, now: float, p: int) -> None:
    """An army at home attacks when it believes itself strong enough; an attacking one that has
    lost too much retreats; a tiny one regroups at home."""
    t = k.tuning
    mobile_value, direction = g.mobile_value, g.direction
    enemy_mobile = mobile_value[::-1]
    threat = g.army_value[::-1] - enemy_mobile
    threat *= k.combat.static_weight
    threat += enemy_mobile
    threat *= g.perceive[p]
    impatience = 1.0 - t.impatience * min(max(now - k.late_game_s, 0.0) / k.late_game_s, 1.0)
    if now >= g.posture_from:
        regroup = mobile_value < k.combat.retreat_value
        launch = (mobile_value >= g.theta * impatience * threat) | (mobile_value >= g.army_cap)
        launch &= direction == 0
        launch &= now >= g.first_attack
        launch &= ~regroup
        if launch.any():
            direction[launch] = 1.0
            g.launch_value[launch] = mobile_value[launch]
        retreat = (mobile_value < g.retreat_frac * g.launch_value) & (mobile_value < threat)
        retreat &= direction > 0
        retreat &= g.engaged
        if retreat.any():
            direction[retreat] = -1.0


def _movement(k: _Constants, g: Games) -> None:
    """Armies move along the lane; where they meet (or one reaches the other base) they are engaged."""
    direction = g.direction
    regroup = g.mobile_value < k.combat.retreat_value
    previous = g.position
    if regroup.any():
        direction[regroup] = 0.0
        previous = np.where(regroup, 0.0, previous)
    position = g.props[P_SPEED] * direction
    position *= k.move_scale
    position += previous
    np.clip(position, 0.0, 1.0, out=position)
    back = (direction < 0) & (position <= 0.0)
    if back.any():
        direction[back] = 0.0
    total = position[0] + position[1]
    overlap = total - 1.0
    if (overlap > 0).any():  # they met on the way: each stops where it got, by how far it moved
        advanced = np.maximum(position - previous, 0.0)
        moved = advanced[0] + advanced[1]
        share = np.where(moved > 0, advanced / np.where(moved > 0, moved, 1.0), 0.5)
        position = np.maximum(position - np.maximum(overlap, 0.0) * share, 0.0)
        total = position[0] + position[1]
    g.position = position
    g.engaged = total >= 1.0 - 1e-9


def _combat(k: _Constants, g: Games, p: int) -> Ints:
    """Lanchester's square law over target classes, in the engaged games only. Returns the block
    rows of the games in which a base fell. Per-class arrays are ``[classes, 2, E]``."""
    Cm, U, cols, air, structure = k.n_mobile_classes, k.n_units, k.cols, k.air, k.structure
    e = np.flatnonzero(g.engaged)
    E = e.size
    position = g.position
    at_base = np.take(position, e, axis=1) <= 1e-9  # [2, E]: the fight is at this side's base
    sub = np.take(g.counts, e, axis=2)
    pending = np.take(g.pending, e, axis=1)
    sub += pending * np.take(k.mix_table, np.take(g.mix_index, e, axis=1), axis=1)
    _scatter(g.pending, e, 0.0)
    np.rint(sub, out=sub)
    np.minimum(sub, MAX_COUNT_Q, out=sub)
    X = (k.W_combat @ sub.reshape(U, 2 * E)).reshape(-1, 2, E)
    X *= k.scale_combat
    luck = np.take(g.luck[p], e, axis=1)
    fire = np.take(g.fire, e, axis=1)
    fire *= np.where(at_base, np.take(g.defender_bonus, e, axis=1), 1.0)
    fire *= luck
    fire_static = luck * at_base
    fire_static *= k.static_fire
    single = X[cols["single_mobile"]] * fire
    both = X[cols["both_mobile"]] * fire
    if "single_static" in cols:
        single[:Cm] += X[cols["single_static"]] * fire_static
    if "both_static" in cols:
        both[:Cm] += X[cols["both_static"]] * fire_static
    hp = X[cols["hp"]]
    base_hp = np.take(g.base_hp, e, axis=1)
    # the targets: hit points present on each side (structures draw a reduced share of fire)
    surface_hp = hp[2] + k.structure_weight * base_hp
    surface_hp *= at_base
    surface_hp += hp[0]
    air_hp = hp[1]
    inv_all = 1.0 / np.maximum(surface_hp + air_hp, 1.0)
    # the fraction of each class of side s that the other side's fire destroys in this step
    loss = single[:, ::-1] * (1.0 / np.maximum(surface_hp, 1.0))
    loss[air] = single[air, ::-1] * (1.0 / np.maximum(air_hp, 1.0))
    loss += both[:, ::-1] * inv_all
    loss[Cm:] *= at_base  # static defences and structures: only at home
    loss[structure] *= k.structure_weight
    np.minimum(loss, 1.0, out=loss)
    np.subtract(1.0, loss, out=loss)  # what survives
    sub *= np.take(loss, k.class_of_unit, axis=0)  # rounded again before the next product
    g.counts[:, :, e] = sub
    base_hp *= loss[structure]
    _scatter(g.base_hp, e, base_hp)
    value = X[cols["value"]]
    value *= loss[:structure]
    mobile = _sum_classes(value[:Cm])  # per game, a fixed number of terms in a fixed order
    _scatter(g.mobile_value, e, mobile)
    mobile += _sum_classes(value[Cm:])
    _scatter(g.army_value, e, mobile)
    fallen = base_hp <= 0.5
    ended: Ints = e[(fallen[0] | fallen[1]) & np.take(g.alive, e)]
    return ended


def _raids_and_control(k: _Constants, g: Games, now: float, p: int) -> None:
    """Raids on harvesters, an enemy army's pressure on expansions, and map control (every
    ``slow_every`` steps)."""
    t = k.tuning
    mobile_value, harvesters, expanded, position = g.mobile_value, g.harvesters, g.expanded, g.position
    static_value = g.army_value - mobile_value
    if now >= k.combat.raid_start_s:
        raid = g.props[P_RAID] * mobile_value
        raid *= g.luck[p]
        raid *= g.raid_scale
        raid_power = g.props[P_RAIDER] * mobile_value
        raid_power *= g.harass
        defence = g.guard * mobile_value + static_value
        protected = defence + raid_power[::-1] + 1.0
        np.divide(defence, protected, out=protected)
        killed = 1.0 + g.on_exp / np.maximum(harvesters, 1e-9)  # expansions are more exposed
        killed *= 1.0 - protected
        killed *= raid[::-1]
        np.minimum(killed, harvesters, out=killed)
        harvesters -= killed
    if g.expand_first <= now:
        pressure = (position[::-1] >= t.expansion_pressure_position) * mobile_value[::-1]
        pressure *= expanded
        if pressure.any():
            g.expansion_hp -= k.combat.expansion_exposure * k.slow_dt * pressure
            lost = (expanded > 0) & (g.expansion_hp <= 0)
            if lost.any():
                harvesters -= np.where(lost, g.on_exp, 0.0)
                expanded[lost] = 0.0
                g.lost_expansion = True
    influence = t.influence_at_home + position
    influence *= mobile_value
    influence += t.expansion_influence * expanded
    influence *= g.map_weight
    influence += 1.0
    share0 = influence[0] / (influence[0] + influence[1])
    share0 -= g.control
    share0 *= k.control_rate
    g.control += share0


def _record_timeline(k: _Constants, g: Games, out: RawResults, offset: int, step: int) -> None:
    sample = k.sample_index.get(step)
    if sample is not None:
        alive = g.alive
        out.timeline[offset + g.rows[alive], sample, :] = g.army_value[:, alive].T


def _end_games(
    k: _Constants, g: Games, out: RawResults, offset: int, step: int, now: float, ended_rows: Ints | None
) -> bool:
    """Write the results of the games that ended in this step; True when the block is done."""
    last = step == k.steps - 1
    if last:
        army, base = g.army_value, g.base_hp
        fallen = base <= 0.5
        outcome = np.where(
            fallen[0] | fallen[1], _fall_outcome(fallen), _points_outcome(k.match, army, g.control, base)
        )
        finish = g.alive
    elif ended_rows is not None and ended_rows.size:
        finish = np.zeros(g.rows.size, dtype=bool)
        finish[ended_rows] = True
        outcome = _fall_outcome(g.base_hp <= 0.5)
    else:
        return False
    army = g.army_value
    target = offset + g.rows[finish]
    out.outcome[target] = outcome[finish]
    out.duration_s[target] = now
    out.resource_delta[target] = (g.gathered[0] - g.gathered[1])[finish]
    out.army_value_delta[target] = (army[0] - army[1])[finish]
    out.map_control[target] = g.control[finish]
    first_open = int(np.searchsorted(k.sample_steps, step, side="right"))
    if first_open < k.match.timeline_samples:  # games that end early hold their final value
        out.timeline[target, first_open:, :] = army[:, finish].T[:, None, :]
    if last:
        return True
    g.alive &= ~finish
    dead = g.alive.size - int(np.count_nonzero(g.alive))
    if dead == g.alive.size:
        return True
    if dead * 3 >= g.alive.size:  # drop finished games from the arrays
        g.compact(g.alive.copy())
    return False


def _sum_classes(values: F64) -> F64:
    """The sum over the first (class) axis, bit for bit what summing each game's classes as a
    contiguous row gives (numpy's pairwise summation, as the engine has always added them):
    fewer than 8 terms numpy adds one after another from the first, and so do these adds."""
    n = values.shape[0]
    total: F64
    if not 2 <= n < 8:
        total = np.ascontiguousarray(np.moveaxis(values, 0, -1)).sum(axis=-1)
        return total
    total = values[0] + values[1]
    for j in range(2, n):
        total += values[j]
    return total


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
