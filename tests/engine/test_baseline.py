"""The module's default plan as a baseline: played in the skill's place with the skill's seeds,
situation and opponent, so that its games pair with the skill's one by one (issue 16, lift)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from skillstudio.engine.batch import prepare, run_batch
from skillstudio.engine.doctrine import default_plan
from skillstudio.engine.module import load_module
from skillstudio.engine.sim import simulate
from skillstudio.engine.tables import compile_match
from skillstudio.model import BuildFocus, EconomyState, GamePhase, SituationSignature, StrategicPattern
from tests.engine.plans import pattern, skill
from tests.engine.test_determinism import assert_identical

SEED = 20250101
AIR = (("mig", 40), ("longbow", 40), ("rifle_infantry", 20))
ARMOUR = (("heavy_tank", 50), ("medium_tank", 30), ("rifle_infantry", 20))
AIR_MID = SituationSignature(GamePhase.MID, EconomyState.EVEN, enemy_composition_estimate=AIR)


def test_the_default_plan_is_the_stock_ai_at_normal() -> None:
    module = load_module("ra1")
    plan = default_plan(module)
    preset = module.presets["ic-default"]
    assert dict(plan.units) == dict(preset.unit_mix.units) and plan.label == "default plan"
    assert (plan.gather_rate, plan.build_time, plan.vision, plan.adaptation) == (1.0, 1.0, 1.0, 0.0)  # normal


def test_baseline_games_pair_with_the_skills() -> None:
    anti_air = skill(replace(pattern(BuildFocus.ANTI_AIR), situation=AIR_MID))
    played = run_batch(anti_air, "IC Default Hard", 200, SEED)
    base = run_batch(anti_air, "IC Default Hard", 200, SEED, baseline=True)
    assert base.baseline and not played.baseline
    assert np.array_equal(base.seed, played.seed) and base.skill_id == played.skill_id == anti_air.id
    assert base.situation == played.situation and base.start_s == played.start_s == 480.0
    assert not np.array_equal(base.outcome, played.outcome)
    # exactly the default plan against the same (situated) opponent, nothing of the skill's plan
    setup = prepare(anti_air, "IC Default Hard", baseline=True)[0]
    assert setup.sides[0].doctrine == default_plan(load_module("ra1"))
    skill_setup = prepare(anti_air, "IC Default Hard")[0]
    assert setup.sides[1].doctrine == skill_setup.sides[1].doctrine
    manual = compile_match(setup.module, default_plan(setup.module), skill_setup.sides[1].doctrine)
    manual.start, manual.situation = setup.start, setup.situation
    raw = simulate(manual, base.seed)
    assert raw.outcome.tobytes() == base.outcome.tobytes() and raw.timeline.tobytes() == base.timeline.tobytes()
    # chunks of a baseline batch are its games too
    first, rest = (
        run_batch(anti_air, "IC Default Hard", n, SEED, first_game=s, baseline=True) for s, n in ((0, 50), (50, 150))
    )
    assert_identical(base, type(base).concatenate([first, rest]))


def test_lift_has_the_sign_the_situation_calls_for() -> None:
    armour_mid = SituationSignature(GamePhase.MID, EconomyState.EVEN, enemy_composition_estimate=ARMOUR)

    def lift(plan: StrategicPattern, opponent: str) -> float:
        own = run_batch(plan, opponent, 400, SEED)
        return own.win_rate - run_batch(plan, opponent, 400, SEED, baseline=True).win_rate

    # the right counter in its own situation beats the stock AI's combined arms (seed 3: +0.18)
    assert lift(replace(pattern(BuildFocus.ANTI_ARMOR), situation=armour_mid), "IC Default Hard") >= 0.08
    # anti-air with nothing to shoot at (seed 3: -0.47)
    assert lift(pattern(BuildFocus.ANTI_AIR), "IC Default Normal") <= -0.3
    # the stock AI against itself at the same difficulty: a fair fight
    assert 0.35 <= run_batch(pattern(), "IC Default Normal", 600, SEED, baseline=True).win_rate <= 0.65
