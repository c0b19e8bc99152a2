"""`verify --until-decided`: the sequential test's stopping rule, its error rates on simulated
coins, and runs that stop each skill once the evidence decides."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from skillstudio.model import Confidence, Quality
from skillstudio.model.evidence import EvidenceKind, VerificationRecord
from skillstudio.store import Actor, Database, GameRow, SkillRepository, body_hash
from skillstudio.store.paired_runs import PairedRuns
from skillstudio.store.runs import RunStore
from skillstudio.verification import sequential
from skillstudio.verification.executors import ChunkResult
from skillstudio.verification.policy import DEFAULT_POLICY, VerificationPolicy
from skillstudio.verification.runner import collect, run_verification, start_run
from skillstudio.verification.sequential import ABOVE, BELOW, UNDECIDED, Bar, Sprt, Stopping, bar_for, simulate
from tests.factories import ai_skill
from tests.verification.helpers import fill_library, playable_skills

RUNS = 2_000
ALPHA = 0.05
TOLERANCE = 3 * math.sqrt(ALPHA * (1 - ALPHA) / RUNS)  # three standard errors of an estimated 5% rate


# --- the test itself ---------------------------------------------------------------------------


def test_the_bounds_are_villes_and_the_bar_brackets_the_indifference_zone() -> None:
    sprt = Sprt(0.4)
    assert (sprt.p0, sprt.p1) == pytest.approx((0.3, 0.5))
    assert (sprt.upper, sprt.lower) == pytest.approx((math.log(20), math.log(0.05)))
    assert sprt.decide(0, 0) is None
    assert sprt.decide(0, 9) == BELOW  # 9 losses: 9 ln(5/7) = -3.03 <= ln 0.05
    assert sprt.decide(0, 8) is None
    assert sprt.decide(6, 6) == ABOVE  # 6 ln(5/3) = 3.06 >= ln 20
    assert Sprt(0.4, min_games=10).decide(6, 6) is None  # enough evidence, too few games: "above" waits
    assert Sprt(0.4, min_games=10).decide(10, 10) == ABOVE
    assert Sprt(0.4, min_games=10).decide(0, 9) == BELOW  # "below" needs no minimum
    assert Sprt(0.7).decide(10, 10) is None and Sprt(0.7).decide(11, 11) == ABOVE  # 11 ln(8/6) >= ln 20
    for bad in ({"bar": 0.05}, {"bar": 0.4, "alpha": 0.0}, {"bar": 0.4, "delta": 0.6}):
        with pytest.raises(ValueError):
            Sprt(**bad)


@pytest.mark.parametrize(
    ("bar", "min_games"),
    [(0.4, 1), (0.6, 3), (0.7, 10)],
    ids=["candidate", "established", "proven"],
)
@pytest.mark.parametrize("round_games", [1, 10])
def test_error_rates_hold_under_repeated_looks(bar: float, min_games: int, round_games: int) -> None:
    """2,000 seeded skills of true rate bar - delta and bar + delta each, looked at after every game
    or every round of 10, at most 200 games: wrongly called above (resp. below) at most alpha
    (resp. beta) = 5%, within three standard errors of the estimate."""
    sprt = Sprt(bar, min_games=min_games)
    low = simulate(sprt, sprt.p0, runs=RUNS, round_games=round_games, seed=1)
    high = simulate(sprt, sprt.p1, runs=RUNS, round_games=round_games, seed=2)
    assert low.rate(ABOVE) <= ALPHA + TOLERANCE
    assert high.rate(BELOW) <= ALPHA + TOLERANCE
    # ...and it does decide, far sooner than a fixed 200 games.
    assert low.rate(BELOW) > 0.85 and high.rate(ABOVE) > 0.85
    assert low.mean_games < 80 and high.mean_games < 80


def _naive_error(p0: float, looks: np.ndarray, runs: int = RUNS) -> float:
    """A fixed-sample one-sided z-test of H0: p <= p0 at 5%, repeated at every look."""
    rng = np.random.default_rng(3)
    wins = np.cumsum(rng.random((runs, int(looks[-1]))) < p0, axis=1)[:, looks - 1]
    z = (wins / looks - p0) / np.sqrt(p0 * (1 - p0) / looks)
    return float((z >= 1.6449).any(axis=1).mean())


def test_the_simulation_tells_a_test_that_ignores_repeated_looks_apart() -> None:
    """The check above can fail: the naive rule, at the same 5% level, calls a skill of rate
    bar - delta above the bar far more often than 5% once it looks every round."""
    assert _naive_error(0.3, np.arange(10, 201, 10)) > 0.10
    assert simulate(Sprt(0.4), 0.3, runs=RUNS, seed=3).rate(ABOVE) <= ALPHA


def test_the_bar_is_the_next_tiers_and_headless_evidence_is_capped() -> None:
    def skill(tier: Confidence):
        return ai_skill(quality=Quality(0, 0.0, None, tier, None))

    def evidence(target, wins: int, losses: int) -> list[VerificationRecord]:
        return [
            VerificationRecord(
                "2026-01-01T00:00:00.000Z",
                EvidenceKind.HEADLESS,
                wins,
                losses,
                0,
                0,
                "IC Default Hard",
                body_hash=body_hash(target),
            )
        ]

    fresh = skill(Confidence.TENTATIVE)
    # D057's default: headless games make a candidate and no more, so the bar stays the candidate's
    assert bar_for(skill(Confidence.ESTABLISHED), DEFAULT_POLICY, []) == Bar("candidate", 0.4, 1)
    # a studio that trusts its headless engine climbs the whole ladder
    ladder = replace(DEFAULT_POLICY, headless_max_tier=Confidence.PROVEN)
    assert bar_for(fresh, ladder, []) == Bar("candidate", 0.4, 1)
    assert bar_for(fresh, ladder, evidence(fresh, 1, 4)).name == "candidate"
    assert bar_for(fresh, ladder, evidence(fresh, 3, 2)) == Bar("established", 0.6, 3)
    assert bar_for(skill(Confidence.ESTABLISHED), ladder, []) == Bar("proven", 0.7, 10)
    assert bar_for(skill(Confidence.PROVEN), ladder, []) == Bar("proven", 0.7, 10)
    custom = VerificationPolicy(
        candidate_rate=0.5, proven_rate=0.8, proven_games=20, headless_max_tier=Confidence.PROVEN
    )
    assert bar_for(skill(Confidence.ESTABLISHED), custom, []) == Bar("proven", 0.8, 20)
    # D057: headless evidence makes a candidate and no more; the test then settles that bar.
    assert bar_for(skill(Confidence.PROVEN), DEFAULT_POLICY, [], max_tier=Confidence.TENTATIVE).name == "candidate"


# --- runs ----------------------------------------------------------------------------------------


def _until_decided(database: Database, skills, **options) -> str:
    return start_run(
        database,
        skills,
        opponent="IC Default Hard",
        games=options.pop("games", 200),
        seed=options.pop("seed", 11),
        chunk_games=options.pop("chunk_games", 10),
        options=sequential.options(**options),
    )


def test_a_run_stops_each_skill_when_the_test_decides(more_libraries, tmp_path: Path) -> None:
    path = fill_library(more_libraries("lib"), 5)
    with Database(path) as database:
        skills = SkillRepository(database).get_many([s.id for s in playable_skills(5)])
        run_id = _until_decided(database, skills)
        finished = collect(run_verification(database, run_id))
        assert finished.status == "finished"
        store = RunStore(database)
        decisions = PairedRuns(database).decisions(run_id)
        counts = store.counts(run_id)
        for entry in store.skills(run_id):
            games = counts[entry.skill_id].played
            decision = decisions[entry.skill_id]
            # Rounds of 10, in process: nothing played past the decision.
            assert games % 10 == 0 and games < 200, (entry.skill_id, games)
            assert decision.decision in (ABOVE, BELOW)
            sprt = Sprt(decision.bar, decision.delta, decision.alpha, decision.beta, decision.min_games)
            c = counts[entry.skill_id]
            assert (decision.wins, decision.decided) == (c.wins, c.decided)
            assert sprt.decide(c.wins, c.decided) == decision.decision
            # One round fewer would not have decided: it stopped at the first look that did.
            assert sprt.decide(*_first(store.games(run_id, entry.skill_id), games - 10)) is None
            assert entry.applied_at is not None and entry.wins == c.wins
        assert finished.games_done == sum(c.played for c in counts.values()) == finished.games_total


def _first(games: list[GameRow], n: int) -> tuple[int, int]:
    rows = sorted(games, key=lambda g: g.game)[:n]
    return sum(g.outcome == "win" for g in rows), sum(g.outcome != "error" for g in rows)


def test_a_cancelled_run_resumes_to_the_same_decisions(more_libraries, tmp_path: Path) -> None:
    reference = fill_library(more_libraries("reference"), 4)
    with Database(reference) as database:
        skills = SkillRepository(database).get_many([s.id for s in playable_skills(4)])
        run_id = _until_decided(database, skills, seed=5)
        collect(run_verification(database, run_id))
        expected = {k: (d.decision, d.decided) for k, d in PairedRuns(database).decisions(run_id).items()}
    interrupted = fill_library(more_libraries("interrupted"), 4)
    with Database(interrupted) as database:
        skills = SkillRepository(database).get_many([s.id for s in playable_skills(4)])
        run_id = _until_decided(database, skills, seed=5)
        chunks = 0

        def stop() -> bool:
            return chunks >= 3

        events = run_verification(database, run_id, cancel=stop)
        for event in events:
            chunks += type(event).__name__ == "Progress"
        assert RunStore(database).run(run_id).status == "cancelled"
        assert collect(run_verification(database, run_id)).status == "finished"
        found = {k: (d.decision, d.decided) for k, d in PairedRuns(database).decisions(run_id).items()}
    assert found == expected


def test_games_in_flight_past_a_decision_are_not_kept(library_target, tmp_path: Path) -> None:
    """A parallel executor may return a round of a skill the test has already decided (and
    applied): those games are dropped, so the stored games are what the stopping rule saw."""
    with Database(library_target) as database:
        skill = SkillRepository(database, Actor("t")).create(ai_skill())
        info = RunStore(database).run(_until_decided(database, [skill]))
        stopping = Stopping(database, info, {skill.id: (Bar("candidate", 0.4, 1), Sprt(0.4))})
        needs = {skill.id: 200}
        wins = [GameRow(skill.id, i, "win") for i in range(10)]
        assert stopping.observe(wins, needs) == 200 and needs[skill.id] == 0  # 10 wins: above
        late = ChunkResult(1, tuple(GameRow(skill.id, i, "loss") for i in range(10, 20)), "v", 0.0)
        assert stopping.keep(late).rows == ()
        assert PairedRuns(database).decisions(info.id)[skill.id].decision == ABOVE


def test_a_skill_of_only_error_games_stops_after_one_round(library_target, tmp_path: Path) -> None:
    with Database(library_target) as database:
        skill = SkillRepository(database, Actor("t")).create(
            replace(ai_skill(), provenance=replace(ai_skill().provenance, game_module="nosuchmodule"))
        )
        run_id = _until_decided(database, [skill])
        collect(run_verification(database, run_id))
        assert RunStore(database).counts(run_id)[skill.id].errors == 10
        assert PairedRuns(database).decisions(run_id)[skill.id].decision == UNDECIDED
