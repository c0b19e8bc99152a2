"""Games start from the skill's SituationSignature (docs/reference-engine.md, "The situation").

Fixed seeds and margins well inside what the engine shows over batch seeds 1 to 5 (the table in
the docs): e.g. AntiAir 0.97-0.99 against AntiArmor 0.46-0.49 on a mid-game air-heavy estimate.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from skillstudio.engine import sim
from skillstudio.engine.batch import BatchResult, prepare, run_batch
from skillstudio.engine.module import Mix, load_module
from skillstudio.engine.protocol import Job
from skillstudio.engine.server import serve
from skillstudio.engine.situation import STANDARD, Situation, SituationError, situation_from_signature
from skillstudio.model import BuildFocus, EconomyState, GamePhase, SituationSignature, StrategicPattern, ThreatLevel
from tests.engine.plans import SENSIBLE, pattern, skill
from tests.engine.test_determinism import assert_identical

SEED = 20250101
GAMES = 300
AIR = (("mig", 40), ("longbow", 40), ("rifle_infantry", 20))
ARMOUR = (("heavy_tank", 50), ("medium_tank", 30), ("rifle_infantry", 20))


def signature(
    phase: GamePhase = GamePhase.MID,
    *,
    economy: EconomyState = EconomyState.EVEN,
    army: tuple[tuple[str, int], ...] = (),
    enemy: tuple[tuple[str, int], ...] = (),
    control: float = 0.5,
    threat: ThreatLevel = ThreatLevel.LOW,
    tech: tuple[str, ...] = (),
) -> SituationSignature:
    return SituationSignature(phase, economy, army, enemy, control, threat, tech)


def situated(focus: BuildFocus = BuildFocus.MIXED, **fields: Any) -> StrategicPattern:
    """A plan whose own signature is the situation (the way a stored skill carries it)."""
    return replace(pattern(focus), situation=signature(**fields))


# --- the standard opening, exactly as before ---------------------------------------------------

FIELDS = ("game", "seed", "outcome", "duration_s", "resource_delta", "army_value_delta", "map_control", "timeline")


def digest(batch: BatchResult) -> str:
    h = hashlib.sha256()
    for name in (*FIELDS, "timeline_t"):
        h.update(getattr(batch, name).tobytes())
    return h.hexdigest()[:32]


# Recorded with engine 1.0.0 (before games were situated), then again when the modules' data
# version 2 added the units skills name (yak, aa_gun, apc, ...; an adaptive AI may now build them
# as counters, and its engine version changed with the data). A change here changes every stored
# verification of a skill without a situation, so it must be deliberate.
GOLDEN = {
    "sensible-hard": "688e2912ee19c9a37a0134d0fe217925",
    "anti-air-classic": "c416ccbd2e81c28083528d00def84293",
    "td-openra-brutal": "dbcf15d88f649445936ef6aa3cf37a26",
    "tech-mirror": "8dbbf6e2ba59dbf0b3d4240606eecf65",
}


def test_a_standard_signature_plays_the_games_of_engine_1_0_bit_for_bit() -> None:
    assert digest(run_batch(SENSIBLE, "IC Default Hard", 200, 16)) == GOLDEN["sensible-hard"]
    assert digest(run_batch(pattern(BuildFocus.ANTI_AIR), "Classic RA Normal", 200, 16)) == GOLDEN["anti-air-classic"]
    assert digest(run_batch(skill(SENSIBLE, module="td"), "OpenRA Brutal", 200, 16, "td")) == GOLDEN["td-openra-brutal"]
    assert digest(run_batch(pattern(BuildFocus.TECH), "mirror", 200, 16)) == GOLDEN["tech-mirror"]


def test_standard_forces_the_opening_and_what_cannot_change_it_keeps_it() -> None:
    plain = run_batch(SENSIBLE, "IC Default Hard", 200, 16)
    assert plain.situation is None and plain.start_s == 0.0
    air_mid = situated(BuildFocus.MIXED, enemy=AIR)
    assert digest(run_batch(air_mid, "IC Default Hard", 200, 16, situation=STANDARD)) == GOLDEN["sensible-hard"]
    # an early army (the opening has none), unknown units, threat none: still the opening, with notes
    idle = signature(GamePhase.EARLY, army=(("heavy_tank", 100),), enemy=(("hovercraft", 60),), threat=ThreatLevel.NONE)
    result = run_batch(SENSIBLE, "IC Default Hard", 200, 16, situation=idle)
    assert digest(result) == GOLDEN["sensible-hard"] and result.situation is None
    assert any("hovercraft" in note for note in result.notes)
    assert any("early-game situation starts with the opening's empty armies" in note for note in result.notes)


def test_the_skill_carries_its_situation_and_an_argument_replaces_it() -> None:
    own = run_batch(situated(enemy=AIR), "IC Default Normal", 100, 3)
    assert own.situation is not None and own.situation.enemy and own.start_s == 480.0
    assert_identical(own, run_batch(SENSIBLE, "IC Default Normal", 100, 3, situation=signature(enemy=AIR)))
    assert own.engine_version.startswith("1.1.0+ra1")


# --- each field -------------------------------------------------------------------------------


@pytest.mark.parametrize("phase", [GamePhase.EARLY, GamePhase.MID])
def test_anti_air_against_an_air_heavy_estimate_anti_armor_against_an_armour_heavy_one(phase: GamePhase) -> None:
    def rate(focus: BuildFocus, enemy: tuple[tuple[str, int], ...]) -> float:
        return run_batch(situated(focus, phase=phase, enemy=enemy), "IC Default Normal", GAMES, SEED).win_rate

    air = {focus: rate(focus, AIR) for focus in (BuildFocus.ANTI_AIR, BuildFocus.ANTI_ARMOR)}
    armour = {focus: rate(focus, ARMOUR) for focus in (BuildFocus.ANTI_AIR, BuildFocus.ANTI_ARMOR)}
    assert air[BuildFocus.ANTI_AIR] >= air[BuildFocus.ANTI_ARMOR] + 0.3, air
    assert armour[BuildFocus.ANTI_ARMOR] >= armour[BuildFocus.ANTI_AIR] + 0.3, armour
    # the estimate is what changed it: from the standard opening the same opponent beats AntiAir
    standard = run_batch(pattern(BuildFocus.ANTI_AIR), "IC Default Normal", GAMES, SEED).win_rate
    assert air[BuildFocus.ANTI_AIR] >= standard + 0.5, (air, standard)


def test_the_estimate_is_the_opponents_production_and_starting_army() -> None:
    module = load_module("ra1")
    setup = prepare(situated(enemy=(("heavy_tank", 3), ("Mig", 1))), "IC Default Hard", module)[0]
    opponent = setup.sides[1].doctrine
    assert set(opponent.units) == {"heavy_tank", "mig"}  # by value: share x cost
    assert opponent.units["heavy_tank"] / opponent.units["mig"] == pytest.approx(3 * 950 / 1200)
    assert opponent.defenses == module.presets["ic-default"].unit_mix.defenses  # the preset's own
    assert opponent.adaptation > 0  # hard still adapts
    start = setup.start
    assert start is not None
    units = [u.id for u in module.units]
    mobile_counts = {
        units[i]: start.counts_q[1, i] for i in np.flatnonzero(start.counts_q[1]) if not module.units[i].static
    }
    assert set(mobile_counts) == {"heavy_tank", "mig"}
    assert mobile_counts["heavy_tank"] / mobile_counts["mig"] == pytest.approx(3, rel=0.01)  # shares count units
    # an explicit production mix (tests, experiments) wins for production, not for the start
    mix = Mix({"rifle_infantry": 1.0}, {})
    custom = prepare(situated(enemy=(("heavy_tank", 3),)), "IC Default Hard", module, opponent_mix=mix)[0]
    assert dict(custom.sides[1].doctrine.units) == {"rifle_infantry": 1.0}
    assert custom.start is not None and custom.start.counts_q[1, module.unit_index["heavy_tank"]] > 0


@pytest.mark.parametrize(
    ("phase", "start_s", "tier", "army"), [(GamePhase.MID, 480.0, 2, 5000.0), (GamePhase.LATE, 1080.0, 3, 8000.0)]
)
def test_the_phase_sets_start_time_tech_and_army(phase: GamePhase, start_s: float, tier: int, army: float) -> None:
    setup = prepare(situated(phase=phase), "IC Default Normal")[0]
    assert setup.start is not None
    assert setup.start.tier.tolist() == [tier, tier]
    assert setup.start.army_value == pytest.approx([army, army], rel=0.01)
    result = run_batch(situated(phase=phase), "IC Default Normal", 200, SEED)
    assert result.start_s == start_s and result.duration_s.min() > start_s
    before = result.timeline_t <= start_s  # samples before the start hold the starting armies
    assert before.any() and np.allclose(result.timeline[:, before, :], setup.start.army_value)
    assert result.timeline_t[-1] == 1800.0  # the match still ends at the module's time limit


def test_tech_and_units_raise_a_sides_tier() -> None:
    setup = prepare(situated(phase=GamePhase.EARLY, tech=("T3",), enemy=AIR), "IC Default Normal")[0]
    assert setup.start is not None and setup.start.tier.tolist() == [3, 2]  # migs need tier 2
    setup = prepare(situated(army=(("mammoth_tank", 100),), tech=("radar_dome",)), "IC Default Normal")[0]
    assert setup.start is not None and setup.start.tier.tolist() == [3, 2]


def test_economy_sets_the_skills_income() -> None:
    results = {e: run_batch(situated(economy=e), "IC Default Normal", GAMES, SEED) for e in EconomyState}
    ahead, even, behind = (results[e] for e in (EconomyState.AHEAD, EconomyState.EVEN, EconomyState.BEHIND))
    assert ahead.resource_delta.mean() > even.resource_delta.mean() + 3000  # seed 20250101: +5,500
    assert even.resource_delta.mean() > behind.resource_delta.mean() + 1500  # +2,600
    assert ahead.win_rate >= even.win_rate + 0.1 and even.win_rate >= behind.win_rate + 0.04, (
        ahead.win_rate,
        even.win_rate,
        behind.win_rate,
    )


def test_army_composition_sets_the_skills_starting_army() -> None:
    def rate(army: tuple[tuple[str, int], ...]) -> float:
        return run_batch(situated(army=army, enemy=ARMOUR), "IC Default Normal", GAMES, SEED).win_rate

    rockets, flak = rate((("rocket_infantry", 70), ("rifle_infantry", 30))), rate((("flak_truck", 100),))
    assert rockets >= flak + 0.3, (rockets, flak)


@pytest.mark.parametrize("phase", [GamePhase.EARLY, GamePhase.MID])
def test_threat_sets_the_initial_pressure(phase: GamePhase) -> None:
    rates = [run_batch(situated(phase=phase, threat=t), "IC Default Normal", GAMES, SEED).win_rate for t in ThreatLevel]
    none, low, medium, high, critical = rates
    assert none >= low - 0.02 and low >= medium + 0.05 and medium >= high + 0.05 and high >= critical, rates
    assert low >= critical + 0.35, rates
    setup = prepare(situated(phase=phase, threat=ThreatLevel.CRITICAL), "IC Default Normal")[0]
    assert setup.start is not None
    assert setup.start.direction.tolist() == [0.0, 1.0] and setup.start.position[1] == 0.5  # already attacking
    assert setup.start.army_value[1] >= 5000 * 0.99


def test_map_control_sets_the_initial_share_and_territory() -> None:
    low, high = (run_batch(situated(control=c), "IC Default Normal", GAMES, SEED) for c in (0.3, 0.7))
    assert high.win_rate >= low.win_rate + 0.2 and high.map_control.mean() > low.map_control.mean() + 0.2
    starts = {
        c: prepare(situated(phase=p, control=c), "IC Default Normal")[0].start
        for p, c in ((GamePhase.MID, 0.3), (GamePhase.MID, 0.5), (GamePhase.EARLY, 0.85))
    }
    assert [s.expanded.tolist() for s in starts.values() if s is not None] == [[0.0, 1.0], [1.0, 1.0], [1.0, 0.0]]
    assert [s.control for s in starts.values() if s is not None] == [0.3, 0.5, 0.85]


# --- untrusted values ------------------------------------------------------------------------


def notes_of(situation: SituationSignature) -> tuple[str, ...]:
    return situation_from_signature(situation, load_module("ra1")).notes


def test_out_of_range_values_are_clamped_or_left_out_with_a_reason() -> None:
    read = situation_from_signature(
        signature(
            army=(
                ("heavy_tank", 900),
                ("Heavy Tank", 10),
                ("hovercraft", 50),
                ("rifle_infantry",),
                ("mig", math.inf),
                ("Ore Truck", 20),
            ),
            control=-3,
            tech=("tier9", "warp gate"),
        ),
        load_module("ra1"),
    )
    assert read.army == (("heavy_tank", 1.0),) and read.map_control == 0.0 and read.tech_tier == 3
    assert read.notes == (
        "army_composition[0]: share 900 of 'heavy_tank' clamped to 255 (0..255)",
        "army_composition[3]: ('rifle_infantry',) is not a [unit, share] pair; left out",
        "army_composition[4]: ('mig', inf) is not a [unit, share] pair; left out",
        "army_composition: not units of module ra1, left out: 'hovercraft'",
        "army_composition: harvesters are the economy's (economy_state), not the army's: 'Ore Truck'",
        "map_control: -3 clamped to 0 (0..1)",
        "active_tech: not a tier or a structure of module ra1, ignored: 'warp gate'",
        "active_tech: tier 9 clamped to 3, the highest of module ra1",
    )
    assert notes_of(signature(control=55)) == ("map_control: read 55 as a percentage (0.55)",)
    many = notes_of(signature(enemy=tuple(("mig", 1) for _ in range(100))))
    assert many == ("enemy_composition_estimate: 100 entries, only the first 32 read",)
    played = run_batch(SENSIBLE, "IC Default Normal", 10, 1, situation=signature(enemy=(("hovercraft", 5), ("mig", 5))))
    assert "enemy_composition_estimate: not units of module ra1, left out: 'hovercraft'" in played.notes


@pytest.mark.parametrize(
    ("situation", "message"),
    [
        (signature(control=math.nan), "map_control: nan is not a number from 0 to 1"),
        (signature(control="lots"), "map_control: 'lots' is not a number from 0 to 1"),
        (signature(enemy="mig"), "enemy_composition_estimate: expected a list of [unit, share] pairs, got str"),
        (replace(signature(), game_phase="middle"), "game_phase: 'middle' is not one of early|mid|late"),
        ("mid", "situation: expected a SituationSignature, got str"),
        (Situation(module="td"), "situation: read for module td, this game is in ra1"),
    ],
)
def test_unreadable_values_are_refused_with_the_field_and_reason(situation: object, message: str) -> None:
    with pytest.raises(SituationError) as caught:
        run_batch(SENSIBLE, "IC Default Normal", 10, 1, situation=situation)
    assert str(caught.value) == message
    assert isinstance(caught.value, ValueError)  # the runner turns it into error games, never a crash


# --- reproducibility ---------------------------------------------------------------------------


def test_situated_games_do_not_depend_on_chunks_or_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = situated(phase=GamePhase.LATE, enemy=AIR, threat=ThreatLevel.CRITICAL, economy=EconomyState.BEHIND)
    whole = run_batch(plan, "IC Default Hard", 90, 5)
    parts = BatchResult.concatenate(
        [run_batch(plan, "IC Default Hard", n, 5, first_game=s) for s, n in ((0, 7), (7, 83))]
    )
    assert_identical(whole, parts)
    monkeypatch.setattr(sim, "BLOCK", 16)
    assert_identical(whole, run_batch(plan, "IC Default Hard", 90, 5))
    assert 0 < whole.wins < 90 and whole.situation is not None


def test_the_protocol_engine_plays_the_skills_situation_too() -> None:
    """The process path sends the skill document, situation included; the reference engine
    behind it starts from it exactly as the in-process engine does."""
    situated_skill = skill(situated(BuildFocus.ANTI_AIR, enemy=AIR, threat=ThreatLevel.HIGH))
    out = io.StringIO()
    assert serve(io.BytesIO(Job.for_skill(situated_skill, "IC Default Hard", 30, 7).to_line()), out) == 0
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    games = [line for line in lines if line["type"] == "game"]
    expected = run_batch(situated_skill, "IC Default Hard", 30, 7)
    assert [g["outcome"] for g in games] == [r.outcome for r in expected]
    assert [g["duration_s"] for g in games] == [round(float(d), 3) for d in expected.duration_s]
    summary = lines[-1]
    assert summary["type"] == "summary" and summary["engine_version"] == expected.engine_version
    assert "situation: mid game, economy even, threat high" in " ".join(summary["notes"])


def test_the_sample_anti_air_plan_meets_the_yaks_it_was_written_for() -> None:
    """Engine data 2 knows the units the sample's skills name. "Early AA against Yak rush" used to
    lose every game: its estimate's Yaks were left out, so its anti-air army met no aircraft. Now
    the opponent starts with them and builds them, and the plan is judged in its own situation."""
    from skillstudio.library.sample import load_sample

    module = load_module("ra1")
    [aa] = [s.skill for s in load_sample() if s.skill.name == "Early AA against Yak rush"]
    assert isinstance(aa.body, StrategicPattern)
    read = situation_from_signature(aa.body.situation, module)
    assert dict(read.enemy)["yak"] == pytest.approx(0.45) and not any("left out" in n for n in read.notes)
    setup = prepare(aa, "IC Default Hard", module)[0]
    assert "yak" in setup.sides[1].doctrine.units  # the opponent's production follows the estimate
    start = setup.start
    assert start is not None and start.counts_q[1, module.unit_index["yak"]] > 0  # and its army at 0:00
    own = run_batch(aa, "IC Default Hard", GAMES, SEED).win_rate
    standard = run_batch(aa, "IC Default Hard", GAMES, SEED, situation=STANDARD).win_rate
    assert own >= standard + 0.3, (own, standard)


def test_a_priority_ore_truck_is_one_more_harvester() -> None:
    from skillstudio.engine.doctrine import doctrine_from_pattern

    module = load_module("ra1")
    plain = situated(BuildFocus.ECONOMY)
    guidance = plain.plan.economic_guidance
    trucks = replace(guidance, priority_builds=("Ore Truck",))
    more = replace(plain, plan=replace(plain.plan, economic_guidance=trucks))
    before = doctrine_from_pattern(plain, module).param("harvester_count_target")
    after = doctrine_from_pattern(more, module)
    assert after.param("harvester_count_target") == before + 1 and not after.notes
