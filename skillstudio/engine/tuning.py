"""The reference engine's behavioural constants, in one record.

The game data (unit tables, economy, combat intensity, difficulties) lives in the module file;
what is here is how the *model* turns a doctrine's parameters into behaviour: when an AI first
attacks, how much its estimates are off, how fast map control moves. docs/reference-engine.md
states each of them in words; change them here, and only here.

Every default is the value the engine has always used, so results stay bit-identical. Some are
written as divisors rather than factors for that reason: ``x / 200.0`` and ``x * 0.005`` can
differ in the last bit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True, slots=True)
class PhaseStart:
    """Where a game in the mid or late phase starts (the early phase is the module's opening).
    The figures are what an even standard game of the ra1 module holds at that time, on average
    (sensible plan against IC Default Normal and Hard: docs/reference-engine.md)."""

    start_s: float  # game clock at the start; a multiple of the step
    tier: int  # tech tier unlocked by both sides
    army: float  # each side's army value in credits (units and static defences)
    harvesters: float
    factories: float
    credits: float
    ore_mined: float  # taken from each side's main field


@dataclass(frozen=True, slots=True)
class ThreatStart:
    """The opponent's army at the start for a threat level: ``max(phase army x army_factor,
    army_floor)``, and, when ``position`` is set, already attacking, that far along the lane."""

    army_factor: float
    army_floor: float = 0.0
    position: float | None = None


MID_GAME = PhaseStart(
    start_s=480.0, tier=2, army=5000.0, harvesters=4.0, factories=2.0, credits=300.0, ore_mined=22000.0
)
LATE_GAME = PhaseStart(
    start_s=1080.0, tier=3, army=8000.0, harvesters=4.0, factories=2.0, credits=200.0, ore_mined=49000.0
)
# By ThreatLevel value. In this model an attack into a defended base is costly, so an attack
# already under way threatens less than a bigger army does: the ladder raises the opponent's army
# first and launches it only at critical (each step lowers the win rate, in every phase).
THREATS: Mapping[str, ThreatStart] = MappingProxyType(
    {
        "none": ThreatStart(0.8),
        "low": ThreatStart(1.0),  # the standard
        "medium": ThreatStart(1.2, 1500.0),
        "high": ThreatStart(1.4, 3000.0),
        "critical": ThreatStart(1.6, 5000.0, 0.5),
    }
)
# by EconomyState value: the skill side's income, relative to what it would gather
INCOME: Mapping[str, float] = MappingProxyType({"ahead": 1.1, "even": 1.0, "behind": 0.9})


@dataclass(frozen=True, slots=True)
class Tuning:
    # --- per-game randomness: the +- spread of each triangular draw (docs: "Randomness") ---------
    spread_income: float = 0.04
    spread_build_speed: float = 0.06
    spread_first_attack: float = 0.2
    spread_attack_threshold: float = 0.1
    spread_expansion: float = 0.15
    spread_tech: float = 0.2
    spread_adaptation: float = 0.2
    misjudgement: float = 0.3  # how far off an estimate of the enemy is, at vision 1 and scouting 50

    # --- technology: the share of spare credits put into the next tier ---------------------------
    tech_share_base: float = 0.03
    tech_share_per_priority: float = 0.25  # at tech_priority 100

    # --- attacking (parameter ``aggression``) ----------------------------------------------------
    first_attack_s: float = 600.0  # at aggression 0
    first_attack_per_aggression_s: float = 4.5
    urgency_neutral: float = 50.0  # reaction_urgency above this brings the first attack earlier...
    urgency_speedup: float = 0.3  # ...by up to this share at 100
    attack_threshold: float = 1.6  # attack when the army is worth this x the believed enemy, at aggression 0
    attack_threshold_per_aggression: float = 0.012
    army_cap: float = 12000.0  # attack anyway at army_cap x (army_cap_factor - aggression / 100)
    army_cap_factor: float = 1.5
    impatience_from: float = 0.5  # share of the time limit after which the threshold falls...
    impatience: float = 0.5  # ...steadily, to (1 - impatience) of itself at the time limit
    # Posture is only evaluated from this share of the earliest first attack on (an army cannot
    # launch earlier); it saves work and does not change behaviour.
    posture_lookahead: float = 0.8

    # --- expansions (parameter ``expansion_priority``) -------------------------------------------
    expansion_min_priority: float = 10.0  # below: never expands
    expansion_s: float = 900.0  # due at expansion_s - expansion_per_priority_s x priority
    expansion_per_priority_s: float = 7.0
    expansion_pressure_position: float = 0.5  # an enemy army this far along the lane wears expansions down

    # --- combat -----------------------------------------------------------------------------------
    reaction_delay_penalty: float = 0.5  # fire at home x (1 - this x min(delay, step) / step)

    # --- raids, map control ------------------------------------------------------------------------
    slow_every: int = 3  # raids, expansion pressure and map control are resolved every 3 steps
    harassment_divisor: float = 200.0  # share of raiders away raiding: harassment / 200
    map_weight_base: float = 0.75  # map-control weight x (base + per_scout x scout_priority / 100)
    map_weight_per_scout: float = 0.5
    influence_at_home: float = 0.5  # an army's map influence: its value x (this + its position, 0..1)
    expansion_influence: float = 2000.0  # map influence of one expansion, in credits of army
    control_keep: float = 0.9  # per step, map control keeps this share of its old value

    # --- production mixes (compiled once per match-up) ---------------------------------------------
    defense_divisor: float = 250.0  # static defences get defense_ratio / 250 of production
    counter_units: int = 3  # an adapting AI builds the best few counters...
    counter_cutoff: float = 0.5  # ...that score at least this share of the best one

    # --- the starting situation (a skill's SituationSignature; situation.py) -----------------------
    mid_game: PhaseStart = MID_GAME
    late_game: PhaseStart = LATE_GAME
    threats: Mapping[str, ThreatStart] = field(default_factory=lambda: THREATS)
    income: Mapping[str, float] = field(default_factory=lambda: INCOME)
    # A side holds an expansion at the start with at least this share of map control: in the
    # early phase only a clear majority does, later an even share is enough.
    early_territory_share: float = 0.8
    territory_share: float = 0.35


DEFAULT_TUNING = Tuning()
