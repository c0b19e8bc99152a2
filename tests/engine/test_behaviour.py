"""The behaviours issue 4 requires of the reference engine, each with a fixed seed and enough
games to be stable. The margins are far below what the engine shows: over batch seeds 1..10 the
observed ranges were mirror 0.48-0.53; easy 0.74-0.78, normal 0.55-0.59, hard 0.39-0.43, brutal
0.05-0.09; AntiArmor 0.95-0.97 and AntiAir 0.00 against Classic RA Normal; no harvesters
0.000-0.003 (docs/reference-engine.md, "Calibration")."""

from __future__ import annotations

import pytest

from skillstudio.engine.batch import run_batch
from skillstudio.engine.module import Mix, load_module
from skillstudio.model import BuildFocus
from tests.engine.plans import SENSIBLE, pattern

SEED = 20250101


def test_mirror_match_wins_40_to_60_percent() -> None:
    result = run_batch(SENSIBLE, "mirror", 600, SEED)
    assert 0.40 <= result.win_rate <= 0.60, result.win_rate
    assert result.draws <= 60  # most games are decided
    assert 0.40 <= result.losses / len(result) <= 0.60


def test_win_rate_falls_with_difficulty() -> None:
    rate = {d: run_batch(SENSIBLE, f"IC Default {d}", 600, SEED).win_rate for d in ("Easy", "Normal", "Hard", "Brutal")}
    assert rate["Easy"] >= rate["Normal"] + 0.05, rate
    assert rate["Normal"] >= rate["Hard"] + 0.05, rate
    assert rate["Normal"] >= rate["Brutal"] + 0.20, rate


def armoured_share(mix: Mix) -> float:
    units = load_module("ra1").units
    heavy = {u.id for u in units if u.armor in ("heavy", "medium") and u.domain == "ground"}
    return sum(w for u, w in mix.units.items() if u in heavy) / sum(mix.units.values())


def test_anti_armor_beats_anti_air_against_an_armour_heavy_opponent() -> None:
    # The premise: Classic RA's unit mix (module data) is armour-heavy.
    assert armoured_share(load_module("ra1").presets["classic-ra"].unit_mix) >= 0.7
    anti_armor = run_batch(pattern(BuildFocus.ANTI_ARMOR), "Classic RA Normal", 400, SEED).win_rate
    anti_air = run_batch(pattern(BuildFocus.ANTI_AIR), "Classic RA Normal", 400, SEED).win_rate
    assert anti_armor >= anti_air + 0.30, (anti_armor, anti_air)


TANKS = Mix({"heavy_tank": 3, "medium_tank": 3, "mammoth_tank": 2, "light_tank": 1}, {"turret": 1})
AIRCRAFT = Mix({"longbow": 4, "mig": 4, "rifle_infantry": 1, "rocket_infantry": 1}, {})


@pytest.mark.parametrize(
    ("mix", "winner", "loser"),
    [(TANKS, BuildFocus.ANTI_ARMOR, BuildFocus.ANTI_AIR), (AIRCRAFT, BuildFocus.ANTI_AIR, BuildFocus.ANTI_ARMOR)],
)
def test_the_right_counter_wins_against_an_overridden_mix(mix: Mix, winner: BuildFocus, loser: BuildFocus) -> None:
    """With a test-only opponent mix (IC Default Normal's personality, these units): the
    advantage follows the weapon-versus-armour table, it is not a property of the focus name."""
    good = run_batch(pattern(winner), "IC Default Normal", 400, SEED, opponent_mix=mix).win_rate
    bad = run_batch(pattern(loser), "IC Default Normal", 400, SEED, opponent_mix=mix).win_rate
    assert good >= bad + 0.30, (winner, good, loser, bad)


@pytest.mark.parametrize("opponent", ["IC Default Hard", "IC Default Normal"])
def test_no_harvesters_and_no_expansion_almost_always_loses(opponent: str) -> None:
    starved = run_batch(pattern(expand=False, harvesters=0), opponent, 400, SEED)
    assert starved.win_rate <= 0.05, starved.win_rate
    fed = run_batch(pattern(expand=False, harvesters=5), opponent, 400, SEED)  # the same plan with an economy
    assert fed.win_rate >= starved.win_rate + 0.10, (fed.win_rate, starved.win_rate)
    assert (starved.resource_delta / starved.duration_s).mean() < (fed.resource_delta / fed.duration_s).mean() < 0
