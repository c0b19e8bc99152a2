"""The situation a reference game starts from: a skill's SituationSignature, validated against a
game module (:class:`Situation`) and compiled into a starting state (:func:`compile_start`).
docs/reference-engine.md, "The situation", has the mapping with its numbers; they live in
:class:`~skillstudio.engine.tuning.Tuning`.

A signature is untrusted input. A unit the module does not know is left out, a share or a map
control outside its range is clamped, a tech name nobody knows is ignored, and every such change
is noted (the notes reach the batch result and the protocol summary). Only a value that cannot be
read at all (a phase that is not a phase, a map control that is not a number, a composition that
is not a list) refuses the situation: :class:`SituationError` names the field and the reason.

A signature that changes nothing (early game, even economy, no enemy estimate, map control 0.5,
threat none or low, no tech beyond tier 1) is the standard opening, played exactly as before.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

import numpy as np

from skillstudio.engine.doctrine import Doctrine
from skillstudio.engine.module import HARVESTER, GameModule
from skillstudio.engine.tables import MAX_COUNT_Q, QUANTUM, MatchSetup, StartTables, own_mix_q
from skillstudio.engine.tuning import PhaseStart, Tuning
from skillstudio.model.enums import EconomyState, GamePhase, SpelledEnum, ThreatLevel
from skillstudio.model.skill import SituationSignature

MAX_ENTRIES = 32  # composition entries and active_tech names read; the rest is left out (noted)
SHARE_LIMIT = 255  # D057's u8
_TIER_NAME = re.compile(r"^(?:tier|t)[\s_-]*(\d{1,3})$")

E = TypeVar("E", bound=SpelledEnum)
Composition = tuple[tuple[str, float], ...]  # (unit id, share of the units by count); shares sum to 1


class SituationError(ValueError):
    """A situation that cannot be read; the message names the field and the reason."""


@dataclass(frozen=True, slots=True)
class Situation:
    """A SituationSignature checked against one module: known unit ids only, shares normalised,
    map control in 0..1, the tech tier that ``active_tech`` names."""

    phase: GamePhase = GamePhase.EARLY
    economy: EconomyState = EconomyState.EVEN
    army: Composition = ()
    enemy: Composition = ()
    map_control: float = 0.5
    threat: ThreatLevel = ThreatLevel.LOW
    tech_tier: int = 1
    module: str = ""  # the module whose units these are ("" names none)
    notes: tuple[str, ...] = ()  # what was left out or clamped, and why

    @property
    def is_standard(self) -> bool:
        """Nothing here changes the module's standard opening (the early phase has no army, so
        ``army`` does not count)."""
        return (
            self.phase is GamePhase.EARLY
            and self.economy is EconomyState.EVEN
            and not self.enemy
            and self.map_control == 0.5
            and self.threat in (ThreatLevel.NONE, ThreatLevel.LOW)
            and self.tech_tier <= 1
        )

    def describe(self) -> str:
        if self.is_standard:
            return "the standard opening"
        parts = [
            f"{self.phase.value} game",
            f"economy {self.economy.value}",
            f"threat {self.threat.value}",
            f"map control {self.map_control:.2f}",
        ]
        if self.army:
            parts.append("army " + _shares(self.army))
        if self.enemy:
            parts.append("enemy " + _shares(self.enemy))
        if self.tech_tier > 1:
            parts.append(f"tech tier {self.tech_tier}")
        return ", ".join(parts)


STANDARD = Situation()  # the module's standard skirmish opening


def _shares(composition: Composition) -> str:
    return " ".join(f"{unit} {share:.0%}" for unit, share in composition)


# ================================================================================================
# Reading a signature
# ================================================================================================


def situation_from_signature(signature: SituationSignature | Situation, module: GameModule) -> Situation:
    """Validate a signature (or re-check a :class:`Situation`) against ``module``."""
    if isinstance(signature, Situation):
        if signature.module not in ("", module.id):
            raise SituationError(f"situation: read for module {signature.module}, this game is in {module.id}")
        tier = signature.tech_tier
        if isinstance(tier, bool) or not isinstance(tier, int):
            raise SituationError(f"tech_tier: {tier!r} is not a tier number")
        return _read(
            signature.phase,
            signature.economy,
            [(unit, share * 100) for unit, share in signature.army],
            [(unit, share * 100) for unit, share in signature.enemy],
            signature.map_control,
            signature.threat,
            [f"tier{tier}"],
            module,
        )
    if not isinstance(signature, SituationSignature):
        raise SituationError(f"situation: expected a SituationSignature, got {type(signature).__name__}")
    return _read(
        signature.game_phase,
        signature.economy_state,
        signature.army_composition,
        signature.enemy_composition_estimate,
        signature.map_control,
        signature.threat_level,
        signature.active_tech,
        module,
    )


def _read(
    phase_raw: object,
    economy: object,
    army_raw: object,
    enemy: object,
    map_control: object,
    threat: object,
    tech: object,
    module: GameModule,
) -> Situation:
    notes: list[str] = []
    phase = _enum(GamePhase, phase_raw, "game_phase")
    army = _composition(army_raw, "army_composition", module, notes)
    if army and phase is GamePhase.EARLY:
        notes.append("army_composition: an early-game situation starts with the opening's empty armies; not used")
    return Situation(
        phase=phase,
        economy=_enum(EconomyState, economy, "economy_state"),
        army=army,
        enemy=_composition(enemy, "enemy_composition_estimate", module, notes),
        map_control=_map_control(map_control, notes),
        threat=_enum(ThreatLevel, threat, "threat_level"),
        tech_tier=_tech_tier(tech, module, notes),
        module=module.id,
        notes=tuple(notes),
    )


def _enum(kind: type[E], raw: object, name: str) -> E:
    try:
        return kind.parse(raw)
    except ValueError as error:
        raise SituationError(f"{name}: {error}") from None


def _number(raw: object) -> float | None:
    if isinstance(raw, bool) or not isinstance(raw, int | float | np.integer | np.floating):
        return None
    return float(raw)


def _map_control(raw: object, notes: list[str]) -> float:
    value = _number(raw)
    if value is None or not math.isfinite(value):
        raise SituationError(f"map_control: {raw!r} is not a number from 0 to 1")
    if 1.0 < value <= 100.0:
        notes.append(f"map_control: read {value:g} as a percentage ({value / 100:g})")
        return value / 100.0
    if not 0.0 <= value <= 1.0:
        clamped = min(max(value, 0.0), 1.0)
        notes.append(f"map_control: {value:g} clamped to {clamped:g} (0..1)")
        return clamped
    return value


def _composition(raw: object, name: str, module: GameModule, notes: list[str]) -> Composition:
    """Known units with their shares by count, summing to 1; () when nothing usable is left."""
    if not isinstance(raw, Sequence) or isinstance(raw, str | bytes):
        raise SituationError(f"{name}: expected a list of [unit, share] pairs, got {type(raw).__name__}")
    entries = list(raw)
    if len(entries) > MAX_ENTRIES:
        notes.append(f"{name}: {len(entries)} entries, only the first {MAX_ENTRIES} read")
        entries = entries[:MAX_ENTRIES]
    shares: dict[str, float] = {}
    unknown: list[str] = []
    economic: list[str] = []
    for i, entry in enumerate(entries):
        pair = entry if isinstance(entry, Sequence) and not isinstance(entry, str | bytes) else ()
        unit = pair[0] if len(pair) == 2 else None
        share = _number(pair[1]) if len(pair) == 2 else None
        if not isinstance(unit, str) or share is None or not math.isfinite(share):
            notes.append(f"{name}[{i}]: {_short(entry)} is not a [unit, share] pair; left out")
            continue
        if not 0 <= share <= SHARE_LIMIT:
            clamped = min(max(share, 0.0), float(SHARE_LIMIT))
            notes.append(f"{name}[{i}]: share {share:g} of {_short(unit)} clamped to {clamped:g} (0..{SHARE_LIMIT})")
            share = clamped
        unit_id = module.resolve(unit)
        if unit_id == HARVESTER:
            economic.append(_short(unit))
            continue
        if unit_id not in module.unit_index:
            unknown.append(_short(unit))
            continue
        shares[unit_id] = shares.get(unit_id, 0.0) + share
    if unknown:
        notes.append(f"{name}: not units of module {module.id}, left out: {', '.join(unknown)}")
    if economic:
        notes.append(f"{name}: harvesters are the economy's (economy_state), not the army's: {', '.join(economic)}")
    total = sum(shares.values())
    if total <= 0:
        if entries:
            notes.append(f"{name}: no known unit with a share above 0; not used")
        return ()
    return tuple((unit, share / total) for unit, share in shares.items() if share > 0)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _tech_tier(raw: object, module: GameModule, notes: list[str]) -> int:
    """The highest tier ``active_tech`` names: ``tier2``/``t2``, or a structure of the module."""
    if not isinstance(raw, Sequence) or isinstance(raw, str | bytes):
        raise SituationError(f"active_tech: expected a list of names, got {type(raw).__name__}")
    names = list(raw)
    if len(names) > MAX_ENTRIES:
        notes.append(f"active_tech: {len(names)} names, only the first {MAX_ENTRIES} read")
        names = names[:MAX_ENTRIES]
    tier, unknown = 1, []
    for name in names:
        key = module.resolve(name) if isinstance(name, str) else ""
        match = _TIER_NAME.match(key.replace("_", ""))
        if match:
            tier = max(tier, int(match.group(1)))
        elif key in module.structures:
            tier = max(tier, module.structures[key][0])
        else:
            unknown.append(_short(name))
    if unknown:
        notes.append(f"active_tech: not a tier or a structure of module {module.id}, ignored: {', '.join(unknown)}")
    if tier > module.max_tier:
        notes.append(f"active_tech: tier {tier} clamped to {module.max_tier}, the highest of module {module.id}")
        tier = module.max_tier
    return tier


# ================================================================================================
# The starting state
# ================================================================================================


def with_composition(doctrine: Doctrine, composition: Composition, module: GameModule) -> Doctrine:
    """The doctrine building ``composition``: its mobile units, and its static defences if it
    names any (else the doctrine's own). Shares by count become weights by value."""
    units = {u: s * module.unit(u).cost for u, s in composition if not module.unit(u).static}
    defenses = {u: s * module.unit(u).cost for u, s in composition if module.unit(u).static}
    return replace(doctrine, units=units or doctrine.units, defenses=defenses or doctrine.defenses)


def _highest_tier(composition: Composition, module: GameModule) -> int:
    return max((module.unit(unit).tier for unit, _share in composition), default=1)


def _phase(situation: Situation, tuning: Tuning) -> PhaseStart | None:
    return {GamePhase.MID: tuning.mid_game, GamePhase.LATE: tuning.late_game}.get(situation.phase)


def start_tiers(situation: Situation, module: GameModule, tuning: Tuning) -> tuple[tuple[int, int], tuple[str, ...]]:
    """The tech tier each side starts at (1-based) and why, if it is not the phase's."""
    if situation.is_standard:
        return (1, 1), ()
    phase = _phase(situation, tuning)
    base_tier = phase.tier if phase else 1
    army_tier = _highest_tier(situation.army, module) if phase else 1
    enemy_tier = _highest_tier(situation.enemy, module)
    notes = []
    if army_tier > max(base_tier, situation.tech_tier):
        notes.append(f"situation: the skill's side starts at tier {army_tier}, which its army's units need")
    if enemy_tier > base_tier:
        notes.append(f"situation: the opponent starts at tier {enemy_tier}, which its estimated army's units need")
    skill_tier = max(base_tier, situation.tech_tier, army_tier)
    rival_tier = max(base_tier, enemy_tier)
    return (min(skill_tier, module.max_tier), min(rival_tier, module.max_tier)), tuple(notes)


def compile_start(setup: MatchSetup, situation: Situation) -> tuple[StartTables | None, tuple[str, ...]]:
    """The starting state of ``situation`` (None for the standard opening) and notes about it."""
    if situation.is_standard:
        return None, ()
    cm, module, t = setup.cm, setup.module, setup.tuning
    econ, match = module.economy, module.match
    skill, rival = setup.sides[0].doctrine, setup.sides[1].doctrine
    notes: list[str] = []
    phase = _phase(situation, t)
    threat = t.threats[situation.threat.value]

    tiers, tier_notes = start_tiers(situation, module, t)
    notes.extend(tier_notes)

    value = phase.army if phase else 0.0
    rival_value = value * threat.army_factor
    if threat.army_floor > 0:
        rival_value = max(rival_value, threat.army_floor)
    cost, static = cm.cost, cm.static
    counts = np.zeros((2, len(cm.units)))
    for side, (doctrine, composition, army_value) in enumerate(
        ((skill, situation.army if phase else (), value), (rival, situation.enemy, rival_value))
    ):
        if army_value <= 0:
            continue
        row = (tiers[side] - 1) * 2  # the side's own mix at its tier, not yet adapted
        if composition:
            mix_q = own_mix_q(cm, with_composition(doctrine, composition, module), tiers[side], t)
        else:
            mix_q = setup.sides[side].mix_q[row]
        counts[side] = np.minimum(np.rint(army_value * mix_q), MAX_COUNT_Q)
    army = (counts * cost).sum(axis=1) / QUANTUM
    mobile = (counts * (cost * ~static)).sum(axis=1) / QUANTUM

    share = (situation.map_control, 1.0 - situation.map_control)
    territory = t.territory_share if phase else t.early_territory_share
    expanded = [1.0 if s >= territory else 0.0 for s in share]
    position, direction = [0.0, 0.0], [0.0, 0.0]
    if threat.position is not None and mobile[1] >= module.combat.retreat_value:
        position[1], direction[1] = threat.position, 1.0
    start_step = round(phase.start_s / match.step_s) if phase else 0
    if start_step >= match.steps:
        notes.append(
            f"situation: the {situation.phase.value} game would start after module {module.id}'s time limit;"
            " it starts one step before it"
        )
        start_step = match.steps - 1

    def pair(skill_side: float, other: float | None = None) -> np.ndarray:
        return np.array([skill_side, skill_side if other is None else other], dtype=np.float64)

    start = StartTables(
        start_step=start_step,
        tier=np.array(tiers, dtype=np.intp),
        counts_q=counts,
        army_value=army,
        mobile_value=mobile,
        credits=pair(phase.credits if phase else econ.start_credits),
        harvesters=pair(phase.harvesters if phase else econ.start_harvesters),
        factories=pair(min(phase.factories, econ.max_factories) if phase else float(econ.start_factories)),
        ore_main=pair(max(econ.field_ore - phase.ore_mined, 0.0) if phase else econ.field_ore),
        expanded=np.array(expanded),
        position=np.array(position),
        direction=np.array(direction),
        income=pair(t.income[situation.economy.value], 1.0),
        control=situation.map_control,
    )
    return start, tuple(notes)
