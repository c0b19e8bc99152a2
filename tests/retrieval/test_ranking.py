"""The ranking rules of skillstudio/retrieval/ranking.py, alone and as the Retriever applies them."""

from __future__ import annotations

import itertools
import math
import sqlite3

import pytest

from skillstudio.model import Confidence, EconomyState, GamePhase, Quality, SituationSignature, ThreatLevel
from skillstudio.retrieval import LocalEmbeddings, Mode, Retriever, embed_library, ranking
from skillstudio.retrieval.ranking import Evidence, evidence_factor, evidence_quality
from skillstudio.store import RunSkillEntry, SkillRepository, body_hash
from skillstudio.store.paired_runs import LiftRecord, PairedRuns
from skillstudio.store.runs import RunStore
from tests.factories import ai_skill
from tests.outside import engine_writes


def quality_of(games: int, rate: float, rating: float | None = None) -> float:
    return evidence_quality(Evidence(games, rate, rating))


# --- evidence ---------------------------------------------------------------------------------


def test_never_verified_skill_is_neutral_not_zero() -> None:
    for rate in (0.0, 0.3, 1.0):  # whatever an unplayed row says, no games is no evidence
        assert quality_of(0, rate) == 0.5
    assert evidence_factor(0.5) == 1.0
    relevance = 0.8
    # D057's relevance * success_rate would be 0 for a new skill; here it keeps its relevance.
    assert relevance * evidence_factor(quality_of(0, 0.0)) == pytest.approx(relevance)


def test_quality_is_the_beta_2_2_posterior_mean() -> None:
    assert quality_of(10, 0.8) == pytest.approx((8 + 2) / (10 + 4))
    assert quality_of(4, 0.25) == pytest.approx((1 + 2) / (4 + 4))


def test_more_wins_over_more_games_moves_quality_towards_the_rate() -> None:
    for rate in (0.9, 0.75, 0.6):
        qualities = [quality_of(games, rate) for games in (0, 4, 20, 100, 1000, 100_000)]
        assert qualities[0] == 0.5
        assert all(a < b for a, b in itertools.pairwise(qualities)), qualities
        assert all(q < rate for q in qualities)  # the prior always pulls a little towards 0.5
        assert qualities[-1] == pytest.approx(rate, abs=1e-3)


def test_losing_evidence_lowers_quality_below_half() -> None:
    for rate in (0.0, 0.2, 0.4):
        qualities = [quality_of(games, rate) for games in (2, 10, 50, 500)]
        assert all(q < 0.5 for q in qualities)
        assert all(a > b for a, b in itertools.pairwise(qualities)), qualities
        assert all(evidence_factor(q) < 1.0 for q in qualities)
    # a more often losing skill sits lower than a less often losing one with the same games
    assert quality_of(20, 0.1) < quality_of(20, 0.3) < quality_of(20, 0.5) == 0.5


def test_evidence_factor_is_bounded_between_0_6_and_1_4() -> None:
    assert evidence_factor(1.0) == pytest.approx(1.4)
    assert evidence_factor(0.0) == pytest.approx(0.6)
    rates = (0.0, 0.01, 0.5, 0.99, 1.0, 7.5, -3.0)  # out-of-range rates are clipped
    ratings = (None, 1.0, 3.0, 5.0, 40.0, -2.0)
    for games, rate, rating in itertools.product((0, 1, 10, 10**4, 10**9), rates, ratings):
        factor = evidence_factor(quality_of(games, rate, rating))
        assert 0.6 <= factor <= 1.4, (games, rate, rating, factor)
    assert evidence_factor(quality_of(10**9, 1.0)) == pytest.approx(1.4, abs=1e-6)
    assert evidence_factor(quality_of(10**9, 0.0)) == pytest.approx(0.6, abs=1e-6)


def test_rating_counts_for_content_skills_only_with_plays() -> None:
    assert quality_of(0, 0.0, 5.0) == 0.5  # a rating without plays is no evidence
    assert quality_of(20, 0.8, 5.0) > quality_of(20, 0.8)  # 5 stars lift
    assert quality_of(20, 0.8, 1.0) < quality_of(20, 0.8)  # 1 star drags


def test_negative_game_count_is_no_evidence() -> None:
    assert quality_of(-5, 0.9) == 0.5
    assert quality_of(-5, 0.0) == 0.5


def test_non_finite_success_rate_is_no_evidence() -> None:
    assert quality_of(10, math.nan) == 0.5
    assert quality_of(10, math.inf) == 0.5


# --- relevance and fusion ---------------------------------------------------------------------


def test_fuse_is_a_convex_combination() -> None:
    assert 0.0 < ranking.W_SEMANTIC < 1.0
    grid = (0.0, 0.1, 0.37, 0.5, 0.9, 1.0)
    for fts, semantic in itertools.product(grid, grid):
        fused = ranking.fuse(fts, semantic)
        assert fused == pytest.approx(ranking.W_SEMANTIC * semantic + (1 - ranking.W_SEMANTIC) * fts)
        assert min(fts, semantic) - 1e-12 <= fused <= max(fts, semantic) + 1e-12
    assert ranking.fuse(1.0, 1.0) == pytest.approx(1.0)
    assert ranking.fuse(1.0, 0.0) == pytest.approx(1 - ranking.W_SEMANTIC)
    assert ranking.fuse(0.0, 1.0) == pytest.approx(ranking.W_SEMANTIC)
    # a missing signal leaves the other one alone
    assert ranking.fuse(0.4, None) == 0.4
    assert ranking.fuse(None, 0.7) == 0.7
    assert ranking.fuse(None, None) == 0.0


def test_semantic_relevance_places_and_clips() -> None:
    assert ranking.semantic_relevance(0.3, 0.1, 0.5) == pytest.approx(0.5)
    assert ranking.semantic_relevance(0.5, 0.1, 0.5) == pytest.approx(1.0)
    assert ranking.semantic_relevance(0.9, 0.1, 0.5) == 1.0  # above the best: clipped
    assert ranking.semantic_relevance(0.05, 0.1, 0.5) == 0.0  # below the typical: clipped
    assert ranking.semantic_relevance(-1.0, 0.1, 0.5) == 0.0
    assert ranking.semantic_relevance(None, 0.1, 0.5) == 0.0
    # best == typical (one skill in the filter, or all alike): none stands out, each counts fully,
    # so a lone skill with a vector is still found by semantic search.
    assert ranking.semantic_relevance(0.4, 0.4, 0.4) == 1.0


def test_keyword_relevance_is_bm25_over_best() -> None:
    assert ranking.keyword_relevance(3.0, 6.0) == pytest.approx(0.5)
    assert ranking.keyword_relevance(6.0, 6.0) == 1.0
    assert ranking.keyword_relevance(9.0, 6.0) == 1.0
    assert ranking.keyword_relevance(None, 6.0) == 0.0
    assert ranking.keyword_relevance(3.0, 0.0) == 0.0


def test_with_situation_blends_by_weight() -> None:
    assert ranking.with_situation(0.8, None) == 0.8
    assert ranking.with_situation(0.8, 0.2) == pytest.approx(
        (1 - ranking.W_SITUATION) * 0.8 + ranking.W_SITUATION * 0.2
    )


def test_reciprocal_rank_fusion_sums_reciprocal_ranks() -> None:
    scores = ranking.reciprocal_rank_fusion(["a", "b"], ["b", "c"])
    k = ranking.RRF_K
    assert scores["a"] == pytest.approx(1 / (k + 1))
    assert scores["b"] == pytest.approx(1 / (k + 2) + 1 / (k + 1))
    assert scores["c"] == pytest.approx(1 / (k + 2))
    assert max(scores, key=scores.__getitem__) == "b"


# --- situations -------------------------------------------------------------------------------


def signature(enemy: tuple[tuple[str, int], ...], **overrides: object) -> SituationSignature:
    fields: dict[str, object] = {
        "game_phase": GamePhase.MID,
        "economy_state": EconomyState.EVEN,
        "army_composition": (("rifle_infantry", 50), ("light_tank", 50)),
        "enemy_composition_estimate": enemy,
        "map_control": 0.5,
        "threat_level": ThreatLevel.MEDIUM,
        "active_tech": ("tier2",),
    }
    fields.update(overrides)
    return SituationSignature(**fields)


AIR = (("yak", 60), ("mig", 30), ("rifle_infantry", 10))
ARMOUR = (("heavy_tank", 70), ("mammoth_tank", 20), ("rifle_infantry", 10))


def test_identical_signatures_are_1() -> None:
    for enemy in (AIR, ARMOUR):
        for phase in GamePhase:
            for threat in (ThreatLevel.NONE, ThreatLevel.CRITICAL):
                s = signature(enemy, game_phase=phase, threat_level=threat, map_control=0.9)
                assert ranking.situation_similarity(s, s) == pytest.approx(1.0)


def test_identical_sparse_signatures_are_1() -> None:
    sparse = SituationSignature(GamePhase.EARLY, EconomyState.EVEN)
    assert ranking.situation_similarity(sparse, sparse) == pytest.approx(1.0)


def test_opposite_signatures_are_0() -> None:
    a = signature(
        AIR,
        game_phase=GamePhase.EARLY,
        economy_state=EconomyState.BEHIND,
        map_control=0.0,
        threat_level=ThreatLevel.NONE,
        army_composition=(("a", 1),),
        active_tech=("x",),
    )
    b = signature(
        ARMOUR[:2],
        game_phase=GamePhase.LATE,
        economy_state=EconomyState.AHEAD,
        map_control=1.0,
        threat_level=ThreatLevel.CRITICAL,
        army_composition=(("b", 1),),
        active_tech=("y",),
    )
    assert ranking.situation_similarity(a, b) == pytest.approx(0.0)


def test_air_heavy_query_is_closer_to_air_heavy_skill() -> None:
    query = signature((("yak", 80), ("rifle_infantry", 20)))
    air_skill, armour_skill = signature(AIR), signature(ARMOUR)
    to_air = ranking.situation_similarity(query, air_skill)
    to_armour = ranking.situation_similarity(query, armour_skill)
    assert to_air > to_armour
    armour_query = signature((("heavy_tank", 90), ("rifle_infantry", 10)))
    assert ranking.situation_similarity(armour_query, armour_skill) > ranking.situation_similarity(
        armour_query, air_skill
    )


def test_situation_similarity_is_symmetric_and_in_unit_range() -> None:
    signatures = [
        signature(AIR),
        signature(ARMOUR),
        signature(AIR, game_phase=GamePhase.LATE, map_control=0.1),
        SituationSignature(GamePhase.EARLY, EconomyState.BEHIND),
    ]
    for a, b in itertools.product(signatures, signatures):
        value = ranking.situation_similarity(a, b)
        assert 0.0 <= value <= 1.0 + 1e-9
        assert value == pytest.approx(ranking.situation_similarity(b, a))
        assert value <= ranking.situation_similarity(a, a) + 1e-9  # nothing is closer than itself


def test_composition_shares_ignore_case_and_scale() -> None:
    a = signature((("Yak", 60), ("MIG", 40)))
    b = signature((("yak", 30), ("mig", 20)))  # same proportions, other case
    assert ranking.situation_similarity(a, b) == pytest.approx(1.0)


# --- the rules as the Retriever applies them --------------------------------------------------


def test_highly_relevant_unverified_outranks_weakly_relevant_proven(repository: SkillRepository) -> None:
    new = ai_skill(
        name="Flak trooper wall against paratrooper drops",
        description="Flak troopers and AA guns ring the base when paratrooper drops and badger planes come.",
        tags=("anti-air", "paratroopers"),
        quality=Quality(0, 0.0, None, Confidence.TENTATIVE, None),
    )
    proven = ai_skill(
        name="Tesla coil turtle",
        description="Tesla coils and walls; late game a single flak gun covers the approach.",
        tags=("defense",),
        quality=Quality(200, 0.95, None, Confidence.PROVEN, "2026-03-02T10:00:00.000Z"),
    )
    filler = [
        ai_skill(name=f"Filler plan {n}", description=f"Unrelated economy plan number {n}.", tags=()) for n in range(4)
    ]
    repository.create_many([new, proven, *filler])
    result = Retriever(repository, None).retrieve("flak troopers paratrooper drops badger planes", mode=Mode.FTS)
    by_id = {hit.skill_id: hit for hit in result.hits}
    assert new.id in by_id and proven.id in by_id  # both relevant: the order is what is tested
    assert by_id[proven.id].score.evidence > by_id[new.id].score.evidence == 1.0
    assert by_id[proven.id].score.relevance < by_id[new.id].score.relevance
    assert result.ids[0] == new.id


def test_equally_relevant_skills_rank_by_evidence(repository: SkillRepository) -> None:
    # Same name, description and tags: the same words and the same vectors, so the same relevance
    # in every mode. Created worst first, so a tie broken by id would put the worst first.
    description = "Rocket soldiers behind sandbags stop an early light tank rush."
    same = {"name": "Sandbag screen", "description": description, "tags": ("defense",)}
    worse = ai_skill(**same, quality=Quality(30, 0.4, None, Confidence.TENTATIVE, "2026-03-02T10:00:00.000Z"))
    unplayed = ai_skill(**same, quality=Quality(0, 0.0, None, Confidence.TENTATIVE, None))
    better = ai_skill(**same, quality=Quality(30, 0.8, None, Confidence.ESTABLISHED, "2026-03-02T10:00:00.000Z"))
    assert worse.id < unplayed.id < better.id
    others = [ai_skill(name=f"Other {n}", description=f"Naval plan {n} with destroyers.", tags=()) for n in range(3)]
    repository.create_many([worse, better, unplayed, *others])
    provider = LocalEmbeddings()
    for _ in embed_library(repository, provider):
        pass
    retriever = Retriever(repository, provider)
    for mode in (Mode.HYBRID, Mode.FTS, Mode.SEMANTIC):
        result = retriever.retrieve("rocket soldiers sandbags light tank rush", mode=mode, k=10)
        assert result.used is mode
        top = [hit for hit in result.hits if hit.skill_id in {worse.id, better.id, unplayed.id}]
        assert [hit.skill_id for hit in top] == [better.id, unplayed.id, worse.id], mode
        assert top[0].score.relevance == pytest.approx(top[1].score.relevance) == pytest.approx(top[2].score.relevance)


def _two_equal_skills(repository: SkillRepository) -> tuple[str, str]:
    a = ai_skill(
        name="Alpha plan",
        description="Engineers capture the enemy refinery.",
        tags=(),
        quality=Quality(0, 0.0, None, Confidence.TENTATIVE, None),
    )
    b = ai_skill(
        name="Bravo plan",
        description="Engineers capture the enemy refinery.",
        tags=(),
        quality=Quality(0, 0.0, None, Confidence.TENTATIVE, None),
    )
    others = [ai_skill(name=f"Other {n}", description=f"Naval plan {n} with destroyers.", tags=()) for n in range(3)]
    repository.create_many([a, b, *others])
    return a.id, b.id


@pytest.mark.sqlite_only("SQLite's dynamic typing: an engine's text in a number column")
def test_a_negative_or_text_count_by_an_engine_is_ranked_then_passed_over(repository: SkillRepository) -> None:
    a, b = _two_equal_skills(repository)
    with sqlite3.connect(repository.database.path) as engine:
        engine.execute("UPDATE skills SET verification_count = -7, success_rate = 0.0 WHERE id = ?", (b,))
        engine.execute("UPDATE skills SET verification_count = 'lots' WHERE id = ?", (a,))
    result = Retriever(repository, None).retrieve("engineers capture refinery", mode=Mode.FTS)
    assert result.hits == []  # ranked without a crash, then passed over: neither row holds a valid skill
    assert all(result.unserved[i].startswith("not a valid skill: verification_count") for i in (a, b))


@pytest.mark.sqlite_only("SQLite's dynamic typing: an engine's text in a number column")
@pytest.mark.parametrize("mode", [Mode.FTS, Mode.TAGS, Mode.RRF])
def test_text_success_rate_by_an_engine_does_not_crash(repository: SkillRepository, mode: Mode) -> None:
    a, b = _two_equal_skills(repository)
    with sqlite3.connect(repository.database.path) as engine:
        engine.execute("UPDATE skills SET verification_count = 40, success_rate = 'very high' WHERE id = ?", (b,))
        assert engine.execute("SELECT typeof(success_rate) FROM skills WHERE id = ?", (b,)).fetchone() == ("text",)
        engine.execute("UPDATE skills SET tags = '[\"engineers\"]' WHERE id IN (?, ?)", (a, b))
    result = Retriever(repository, None).retrieve("engineers capture refinery", mode=mode)
    # Ranked without a crash, then passed over: the row holds no valid skill, so serves nothing.
    assert b not in result.ids and result.unserved[b].startswith("not a valid skill: success_rate")
    assert a in result.ids
    for hit in result.hits:
        assert 0.6 <= hit.score.evidence <= 1.4 and math.isfinite(hit.score.final)


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param("very high", marks=pytest.mark.sqlite_only("SQLite's dynamic typing: text in a number column")),
        float("nan"),
        None,
    ],
)
def test_malformed_success_rate_counts_as_no_evidence(repository: SkillRepository, bad: object) -> None:
    _a, b = _two_equal_skills(repository)
    with engine_writes(repository.database) as engine:
        # SQLite stores a NaN as NULL (PostgreSQL as NaN); a text that is no number stays text
        engine.execute("UPDATE skills SET verification_count = 40, success_rate = ? WHERE id = ?", (bad, b))
    result = Retriever(repository, None).retrieve("engineers capture refinery", mode=Mode.FTS)
    stored_null = bad is None or (isinstance(bad, float) and repository.database.backend.name == "sqlite")
    if stored_null:  # D057's column allows NULL (SQLite keeps a NaN so): a valid skill with no success figure
        hit = next(hit for hit in result.hits if hit.skill_id == b)
        assert hit.score.quality == 0.5
        assert hit.score.evidence == 1.0
    else:  # ranked as no evidence, then passed over: not a valid skill, it serves nothing
        assert b not in result.ids and result.unserved[b].startswith("not a valid skill: success_rate")


# --- lift over the default plan ------------------------------------------------------------------


def test_only_a_lift_the_interval_establishes_counts() -> None:
    assert ranking.conservative_lift(0.05, 0.30) == 0.05  # clearly better: by its lower bound
    assert ranking.conservative_lift(-0.40, -0.10) == -0.10  # clearly worse: by its upper bound
    assert ranking.conservative_lift(-0.20, 0.25) == 0.0  # undecided: no effect
    assert ranking.conservative_lift(math.nan, 0.2) == 0.0 and ranking.conservative_lift(0.3, 0.1) == 0.0
    assert ranking.lift_factor(0.0) == 1.0
    assert ranking.lift_factor(-0.10) < 1.0 < ranking.lift_factor(0.05)
    assert 0.5 <= ranking.lift_factor(-5.0) <= ranking.lift_factor(5.0) <= 1.5


def _lift(repository: SkillRepository, skill_id: str, low: float, high: float, body: str | None = None) -> None:
    skill = repository.get(skill_id)
    run = RunStore(repository.database).create_run(
        skills=[RunSkillEntry(skill_id, "ra1", body_hash(skill), "tentative")],
        opponent="IC Default Hard",
        games=20,
        seed=1,
        executor="inprocess",
        chunk_games=20,
        actor="t",
    )
    counts = (2, 2, 10, 6) if high < 0 else (2, 10, 2, 6)  # both, skill only, default only, neither
    PairedRuns(repository.database).write_lifts(
        run, [LiftRecord(run, skill_id, body or body_hash(skill), "IC Default Hard", "1.1.0", *counts, 0, low, high)]
    )


def test_a_plan_worse_than_the_default_plan_sinks_and_a_better_one_rises(repository: SkillRepository) -> None:
    a, b = _two_equal_skills(repository)
    c = ai_skill(
        name="Charlie plan",
        description="Engineers capture the enemy refinery.",
        tags=(),
        quality=Quality(0, 0.0, None, Confidence.TENTATIVE, None),
    )
    repository.create(c)
    retriever = Retriever(repository, None)
    query = "engineers capture refinery"
    before = {hit.skill_id: hit.score for hit in retriever.retrieve(query, mode=Mode.FTS, k=10).hits}
    assert before[a].final == pytest.approx(before[b].final) == pytest.approx(before[c.id].final)
    assert before[a].lift is None and before[a].lift_factor == 1.0
    _lift(repository, a, -0.45, -0.12)  # worse than the default plan
    _lift(repository, b, 0.08, 0.41)  # better
    _lift(repository, c.id, -0.3, 0.2)  # undecided
    hits = retriever.retrieve(query, mode=Mode.FTS, k=10).hits
    order = [hit.skill_id for hit in hits if hit.skill_id in {a, b, c.id}]
    assert order == [b, c.id, a]
    score = {hit.skill_id: hit.score for hit in hits}
    assert score[a].lift == -0.12 and score[b].lift == 0.08 and score[c.id].lift == 0.0
    for hit in hits:
        assert hit.score.final == pytest.approx(hit.score.relevance * hit.score.evidence * hit.score.lift_factor)


def test_a_lift_measured_with_another_body_does_not_count(repository: SkillRepository) -> None:
    a, b = _two_equal_skills(repository)
    _lift(repository, a, -0.45, -0.12, body="an older body's hash")
    hits = {hit.skill_id: hit.score for hit in Retriever(repository, None).retrieve("engineers refinery", k=10).hits}
    assert hits[a].lift is None and hits[a].final == pytest.approx(hits[b].final)
