"""Retriever.retrieve: what is served, the filters, the fallbacks, the breakdown and bad input."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from skillstudio.library import create_library
from skillstudio.model import (
    Confidence,
    Domain,
    EconomyState,
    GamePhase,
    Quality,
    ReviewState,
    SituationSignature,
    ThreatLevel,
)
from skillstudio.retrieval import (
    LOCAL_MODEL_ID,
    LocalEmbeddings,
    Mode,
    ProviderError,
    Retriever,
    embed_library,
    ranking,
)
from skillstudio.store import Actor, Database, ImportItem, SkillExtras, SkillRepository
from tests.factories import ai_skill, instructions_skill, strategic_body

ALL_MODES = tuple(Mode)
YAK = "Early AA against Yak rush"
YAK_QUERY = "yak rush anti-air early-game aircraft"
PLAYED = Quality(10, 0.6, None, Confidence.TENTATIVE, "2026-03-02T10:00:00.000Z")


def embed_all(repository: SkillRepository, provider: object) -> None:
    for _progress in embed_library(repository, provider):
        pass


@pytest.fixture(scope="module")
def embedded_sample_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("retriever") / "sample.db"
    with create_library(path, sample=True) as database:
        embed_all(SkillRepository(database, Actor("tester")), LocalEmbeddings())
    return path


@pytest.fixture
def sample(embedded_sample_path: Path, tmp_path: Path):
    """A private copy of the embedded 47-skill sample library."""
    copy = tmp_path / "sample.db"
    with sqlite3.connect(embedded_sample_path) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    with Database(copy) as database:
        yield SkillRepository(database, Actor("tester"))


def id_named(repository: SkillRepository, name: str) -> str:
    for summary in repository.summaries(repository.query().ids):
        if summary.name == name:
            return summary.id
    raise AssertionError(f"no skill named {name!r}")


# --- test doubles of external embedding models ------------------------------------------------


class FailingProvider:
    """A remote provider that cannot be reached."""

    where = "http://embeddings.example.invalid:11434"
    model_id = LOCAL_MODEL_ID
    dimensions = 256

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise ProviderError(self.where, "connection refused")


class ShapeProvider:
    """Answers with the local model's vectors, cut or broken into a wrong shape."""

    model_id = LOCAL_MODEL_ID
    dimensions = 256

    def __init__(self, how: str) -> None:
        self.how, self.local = how, LocalEmbeddings()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        good = self.local.embed(texts)
        if self.how == "narrow":
            return good[:, :128]
        if self.how == "wide":
            return np.hstack([good, good])
        if self.how == "flat":
            return good.reshape(-1)
        if self.how == "nan":
            return np.full_like(good, np.nan)
        if self.how == "none":
            return np.zeros((0, 256), np.float32)
        raise AssertionError(self.how)


# --- what is served ---------------------------------------------------------------------------


def test_trashed_skill_is_never_returned(sample: SkillRepository) -> None:
    retriever = Retriever(sample, LocalEmbeddings())
    yak = id_named(sample, YAK)
    for mode in ALL_MODES:
        assert yak in retriever.retrieve(YAK_QUERY, mode=mode, k=100).ids, mode
    sample.trash.delete(yak, message="gone")
    for mode in ALL_MODES:
        result = retriever.retrieve(YAK_QUERY, mode=mode, k=100)
        assert result.used is mode
        assert yak not in result.ids, mode
        assert result.hits, mode  # the rest is still served
    # a fresh retriever (full load) agrees
    fresh = Retriever(sample, LocalEmbeddings())
    for mode in ALL_MODES:
        assert yak not in fresh.retrieve(YAK_QUERY, mode=mode, k=100).ids


def test_review_rejected_skill_is_never_returned(sample: SkillRepository) -> None:
    retriever = Retriever(sample, LocalEmbeddings())
    yak = id_named(sample, YAK)
    retriever.retrieve(YAK_QUERY, k=100)  # the index is loaded before the decision
    sample.reviews.review(yak, ReviewState.REJECTED, comment="unsafe plan", version=sample.get(yak).version)
    for provider in (LocalEmbeddings(), None):
        for mode in ALL_MODES:
            for candidate in (retriever, Retriever(sample, provider)):
                assert yak not in candidate.retrieve(YAK_QUERY, mode=mode, k=100).ids, (mode, provider)
    sample.reviews.review(yak, ReviewState.APPROVED, comment="fixed after all", version=sample.get(yak).version)
    for mode in ALL_MODES:
        assert yak in retriever.retrieve(YAK_QUERY, mode=mode, k=100).ids, mode


def break_row(repository: SkillRepository, skill_id: str, assignment: str) -> None:
    """Another program (an engine) writes a row that holds no valid skill."""
    with sqlite3.connect(repository.database.backend.location) as other:
        other.execute(f"UPDATE skills SET {assignment} WHERE id = ?", (skill_id,))


@pytest.mark.parametrize("mode", ALL_MODES)
@pytest.mark.parametrize(
    "assignment", ["body_json = 'not json'", "success_rate = 'abc'", "tags = '{}'", "created_at = 'x'"]
)
def test_a_row_that_holds_no_valid_skill_gives_its_place_to_the_next(
    sample: SkillRepository, mode: Mode, assignment: str
) -> None:
    retriever = Retriever(sample, LocalEmbeddings())
    before = retriever.retrieve(YAK_QUERY, mode=mode, k=4)
    assert len(before.hits) == 4 and not before.unserved
    broken = before.ids[0]
    break_row(sample, broken, assignment)
    after = Retriever(sample, LocalEmbeddings()).retrieve(YAK_QUERY, mode=mode, k=4)
    assert broken not in after.ids
    assert after.ids[:3] == before.ids[1:] and len(after.ids) == 4  # the fifth moved up: k are served
    if mode is Mode.TAGS and assignment.startswith("tags"):
        assert not after.unserved  # unreadable tags match no tag: the row never ranked
    else:
        assert list(after.unserved) == [broken] and after.unserved[broken].startswith("not a valid skill")
        assert any(broken[:8] in note for note in after.notes)
    assert [skill.id for skill in retriever.load(after)] == after.ids  # the prompt holds every hit


def test_a_withheld_skill_gives_its_place_to_the_next_and_says_why(sample: SkillRepository) -> None:
    query = "GDI survival ion storm waves"
    lenient = Retriever(sample, LocalEmbeddings()).retrieve(query, k=5)
    never_approved = [
        skill_id
        for skill_id in lenient.ids
        if sample.get(skill_id).review_state is ReviewState.PENDING
        and sample.reviews.last_approved_revision(skill_id) is None
    ]
    assert never_approved  # the sample's agents' candidates await their first review
    retriever = Retriever(sample, LocalEmbeddings(), serve_unapproved=False)
    strict = retriever.retrieve(query, k=5)
    assert not set(never_approved) & set(strict.ids) and len(strict.ids) == 5
    for skill_id in never_approved:
        assert strict.unserved[skill_id] == "withheld: awaiting its first review approval"
    assert [skill.id for skill in retriever.load(strict)] == strict.ids


@pytest.mark.parametrize("mode", ALL_MODES)
def test_domain_and_module_filters_hold(sample: SkillRepository, mode: Mode) -> None:
    retriever = Retriever(sample, LocalEmbeddings())
    query = "defense rush harvesters escort ambush naval air waves mission example checklist"
    seen = 0
    for domain in (None, Domain.AI_STRATEGY, "content_generation"):
        for module in (None, "ra1", "td"):
            result = retriever.retrieve(query, mode=mode, domain=domain, game_module=module, k=100)
            assert result.used is mode
            for hit in result.hits:
                if domain is not None:
                    assert hit.domain == Domain.parse(str(domain.value if isinstance(domain, Domain) else domain)).value
                if module is not None:
                    assert hit.game_module == module
            seen += len(result.hits)
            if mode in (Mode.FTS, Mode.TAGS):  # keyword matches do not depend on the rest of the filter
                wanted = Domain.parse(str(getattr(domain, "value", domain))).value if domain else None
                expected = {
                    h.skill_id
                    for h in retriever.retrieve(query, mode=mode, k=100).hits
                    if wanted in (None, h.domain) and module in (None, h.game_module)
                }
                assert {h.skill_id for h in result.hits} == expected
    assert seen > 0
    assert retriever.retrieve(query, mode=mode, game_module="no-such-module", k=100).hits == []


def test_filters_follow_an_edit_of_the_module(sample: SkillRepository) -> None:
    retriever = Retriever(sample, LocalEmbeddings())
    yak = id_named(sample, YAK)
    for mode in ALL_MODES:
        assert yak in retriever.retrieve(YAK_QUERY, mode=mode, game_module="ra1", k=100).ids
    skill = sample.get(yak)
    sample.update(replace(skill, provenance=replace(skill.provenance, game_module="td")))
    for mode in ALL_MODES:
        assert yak not in retriever.retrieve(YAK_QUERY, mode=mode, game_module="ra1", k=100).ids, mode
        assert yak in retriever.retrieve(YAK_QUERY, mode=mode, game_module="td", k=100).ids, mode


# --- the breakdown ----------------------------------------------------------------------------


def test_hybrid_hits_carry_a_full_breakdown(sample: SkillRepository) -> None:
    result = Retriever(sample, LocalEmbeddings()).retrieve(YAK_QUERY, k=100)
    assert result.used is Mode.HYBRID and result.model_id == LOCAL_MODEL_ID
    assert result.hits and result.hits[0].name == YAK
    best_bm25 = max(hit.score.bm25 for hit in result.hits if hit.score.bm25 is not None)
    for hit in result.hits:
        score = hit.score
        assert score.fts is not None and score.semantic is not None and score.cosine is not None
        assert score.situation is None and score.tags is None
        assert 0.0 <= score.fts <= 1.0 and 0.0 <= score.semantic <= 1.0
        if score.bm25 is None:
            assert score.fts == 0.0
        else:
            assert score.fts <= score.bm25 / best_bm25 + 1e-9
        assert score.relevance == pytest.approx(ranking.fuse(score.fts, score.semantic))
        assert score.evidence == pytest.approx(ranking.evidence_factor(score.quality))
        assert score.final == pytest.approx(score.relevance * score.evidence)
        assert (
            score.quality
            == pytest.approx(ranking.evidence_quality(ranking.Evidence(hit.verification_count, hit.success_rate)))
            or hit.domain == "content_generation"
        )  # content skills add their rating
    finals = [hit.score.final for hit in result.hits]
    assert finals == sorted(finals, reverse=True)
    assert any(hit.score.bm25 is not None for hit in result.hits)
    assert any(hit.score.bm25 is None for hit in result.hits)  # found by meaning alone


def test_a_keyword_hit_outside_the_semantic_pool_is_scored_by_its_own_cosine(sample: SkillRepository) -> None:
    """The pools bound which skills enter the ranking, not how one is scored: a skill that
    entered by its words has its semantic relevance from its own cosine, as with the whole
    library in the pool (it once got its keyword score alone, and so outranked skills that
    matched both ways)."""
    whole = Retriever(sample, LocalEmbeddings()).retrieve(YAK_QUERY, k=100)  # a pool of 200 > 47 skills
    scores = {hit.skill_id: hit.score for hit in whole.hits}
    by_meaning = sorted(scores, key=lambda skill_id: (-(scores[skill_id].cosine or 0.0), skill_id))[:5]
    narrow = Retriever(sample, LocalEmbeddings(), candidates=5).retrieve(YAK_QUERY, k=10)  # pools of 5
    entered_by_words = [hit for hit in narrow.hits if hit.skill_id not in by_meaning]
    assert entered_by_words  # the case this test is about
    for hit in narrow.hits:
        expected = scores[hit.skill_id]
        assert hit.score.cosine == pytest.approx(expected.cosine)
        assert hit.score.semantic == pytest.approx(expected.semantic)
        if hit.score.bm25 is not None:  # in the keyword pool too: scored as with every skill in the pools
            assert hit.score.final == pytest.approx(expected.final)
    finals = [hit.score.final for hit in narrow.hits]
    assert finals == sorted(finals, reverse=True)


def test_a_skill_without_a_vector_gets_no_semantic_relevance_in_hybrid_mode(sample: SkillRepository) -> None:
    """docs/retrieval.md: a skill matched by one signal only gets 0 for the other. A skill not
    embedded yet is found by its words, with no semantic relevance, rather than by its keyword
    score alone above the skills that match both ways."""
    fresh = sample.create(ai_skill(name="Yak rush answered early with anti-air", tags=("anti-air", "early-game")))
    result = Retriever(sample, LocalEmbeddings()).retrieve(YAK_QUERY, k=100)
    [hit] = [hit for hit in result.hits if hit.skill_id == fresh.id]
    assert hit.score.cosine is None and hit.score.fts
    assert hit.score.semantic == 0.0
    assert hit.score.relevance == pytest.approx(ranking.fuse(hit.score.fts, 0.0))
    assert result.hits[0].name == YAK


def test_each_mode_fills_its_own_signals(sample: SkillRepository) -> None:
    retriever = Retriever(sample, LocalEmbeddings())
    fts = retriever.retrieve(YAK_QUERY, mode="fts", k=100)
    assert fts.used is Mode.FTS and fts.model_id is None and fts.hits
    assert all(h.score.semantic is None and h.score.cosine is None and h.score.fts for h in fts.hits)
    semantic = retriever.retrieve(YAK_QUERY, mode="semantic", k=100)
    assert semantic.used is Mode.SEMANTIC and semantic.hits
    assert all(h.score.fts is None and h.score.bm25 is None and h.score.semantic for h in semantic.hits)
    tags = retriever.retrieve(YAK_QUERY, mode="tags", k=100)
    assert tags.hits and all(h.score.tags and h.score.fts is None and h.score.semantic is None for h in tags.hits)
    rrf = retriever.retrieve(YAK_QUERY, mode="rrf", k=100)
    assert rrf.hits and all(h.score.evidence == 1.0 and h.score.final == h.score.relevance for h in rrf.hits)
    for result in (fts, semantic, tags):
        for hit in result.hits:
            assert hit.score.final == pytest.approx(hit.score.relevance * hit.score.evidence)


def test_no_provider_means_no_semantic_and_a_note(sample: SkillRepository) -> None:
    retriever = Retriever(sample, None)
    fts_only = retriever.retrieve(YAK_QUERY, mode=Mode.FTS, k=100)
    for mode in (Mode.HYBRID, Mode.SEMANTIC, Mode.RRF):
        result = retriever.retrieve(YAK_QUERY, mode=mode, k=100)
        assert result.mode is mode and result.used is Mode.FTS and result.model_id is None
        assert any("fallback" in note.lower() for note in result.notes), result.notes
        assert result.ids == fts_only.ids  # ranked exactly as FTS5 ranks
        assert all(hit.score.semantic is None and hit.score.cosine is None for hit in result.hits)
    assert retriever.embedding_status() is None


def test_a_failing_provider_falls_back_to_fts_naming_where(sample: SkillRepository) -> None:
    fts_only = Retriever(sample, None).retrieve(YAK_QUERY, mode=Mode.FTS, k=100)
    retriever = Retriever(sample, FailingProvider())
    for mode in (Mode.HYBRID, Mode.SEMANTIC, Mode.RRF):
        result = retriever.retrieve(YAK_QUERY, mode=mode, k=100)
        assert result.used is Mode.FTS
        assert any(FailingProvider.where in note for note in result.notes), result.notes
        assert result.ids == fts_only.ids
        assert all(hit.score.semantic is None for hit in result.hits)


@pytest.mark.parametrize("how", ["narrow", "wide", "flat", "nan"])
def test_a_wrong_shaped_answer_falls_back_to_fts(sample: SkillRepository, how: str) -> None:
    fts_only = Retriever(sample, None).retrieve(YAK_QUERY, mode=Mode.FTS, k=100)
    result = Retriever(sample, ShapeProvider(how)).retrieve(YAK_QUERY, k=100)
    assert result.used is Mode.FTS and result.ids == fts_only.ids
    assert any("fallback" in note.lower() for note in result.notes), result.notes


def test_a_provider_answering_no_rows_falls_back_to_fts(sample: SkillRepository) -> None:
    result = Retriever(sample, ShapeProvider("none")).retrieve(YAK_QUERY, k=100)
    assert result.used is Mode.FTS and result.hits


# --- tags and roles ---------------------------------------------------------------------------


def test_tags_mode_ranks_by_tag_overlap(repository: SkillRepository) -> None:
    description = "A plan for the coast."
    three = ai_skill(name="Plan one", description=description, tags=("naval", "submarine", "defense"), quality=PLAYED)
    two = ai_skill(name="Plan two", description=description, tags=("naval", "defense", "economy"), quality=PLAYED)
    one = ai_skill(name="Plan six", description=description, tags=("naval", "rush"), quality=PLAYED)
    words_only = ai_skill(
        name="Naval submarine defense",
        description="Naval submarine defense everywhere.",
        tags=("armor",),
        quality=PLAYED,
    )
    anti_air = ai_skill(name="Plan ten", description=description, tags=("anti-air",), quality=PLAYED)
    # unrelated skills, so that no query word is in most of the library (those are dropped)
    fillers = [ai_skill(name=f"Filler {n}", description="Ore trucks.", tags=("economy",)) for n in range(6)]
    repository.create_many([three, two, one, words_only, anti_air, *fillers])
    result = Retriever(repository, None).retrieve("naval submarines and defense", mode=Mode.TAGS, k=10)
    assert result.ids == [three.id, two.id, one.id]  # words in name or description do not count
    assert [hit.score.tags for hit in result.hits] == pytest.approx([1.0, 2 / 3, 1 / 3])
    # a tag of several words counts only when the query names all of them
    assert Retriever(repository, None).retrieve("air defense", mode=Mode.TAGS, k=10).ids == [three.id, two.id]
    assert anti_air.id in Retriever(repository, None).retrieve("anti air", mode=Mode.TAGS, k=10).ids


def test_role_filter_keeps_matching_and_role_less_skills(repository: SkillRepository) -> None:
    description = "Checklist for reviewing generated missions before release."
    reviewer = instructions_skill(name="Mission checklist for reviewers", description=description, tags=("checklist",))
    author = instructions_skill(name="Mission checklist for authors", description=description, tags=("checklist",))
    both = instructions_skill(name="Mission checklist for everyone", description=description, tags=("checklist",))
    anyone = instructions_skill(name="Mission checklist without roles", description=description, tags=("checklist",))
    fillers = [ai_skill(name=f"Naval plan {n}", description="Destroyers shell the coast.", tags=()) for n in range(4)]
    repository.create_many(fillers)  # so that the checklists stand out from "typical" by meaning
    repository.import_skills(
        [
            ImportItem(reviewer, SkillExtras(frontmatter={"roles": ["reviewer"]})),
            ImportItem(author, SkillExtras(frontmatter={"roles": ["author"]})),
            ImportItem(both, SkillExtras(frontmatter={"roles": "Reviewer, author"})),
            ImportItem(anyone, SkillExtras(frontmatter={"license": "MIT"})),
        ]
    )
    provider = LocalEmbeddings()
    embed_all(repository, provider)
    retriever = Retriever(repository, provider)
    everything = {reviewer.id, author.id, both.id, anyone.id}

    def found(mode: Mode, role: str | None) -> set[str]:
        return set(retriever.retrieve("mission checklist", mode=mode, role=role, k=10).ids) & everything

    for mode in ALL_MODES:
        assert found(mode, None) == everything, mode
        assert found(mode, "reviewer") == {reviewer.id, both.id, anyone.id}, mode
        assert found(mode, " AUTHOR ") == {author.id, both.id, anyone.id}, mode
        assert found(mode, "translator") == {anyone.id}, mode


# --- situations -------------------------------------------------------------------------------


def test_situation_signal_reorders_strategic_patterns(repository: SkillRepository) -> None:
    def situated(enemy: tuple[tuple[str, int], ...]) -> object:
        body = strategic_body()
        situation = SituationSignature(
            GamePhase.EARLY, EconomyState.EVEN, (("rifle_infantry", 100),), enemy, 0.5, ThreatLevel.MEDIUM, ("tier1",)
        )
        return replace(body, situation=situation)

    same = {"name": "Hold the ridge", "description": "Hold the ridge with a mixed force.", "tags": ("defense",)}
    air = ai_skill(**same, body=situated((("yak", 80), ("mig", 20))), quality=PLAYED)
    armour = ai_skill(**same, body=situated((("heavy_tank", 90), ("v2", 10))), quality=PLAYED)
    plain = instructions_skill(**same, domain=Domain.AI_STRATEGY, quality=PLAYED)
    repository.create_many([air, armour, plain])
    retriever = Retriever(repository, None)
    no_situation = retriever.retrieve("hold the ridge", mode=Mode.FTS)
    assert all(hit.score.situation is None for hit in no_situation.hits)
    query_air = SituationSignature(
        GamePhase.EARLY,
        EconomyState.EVEN,
        (("rifle_infantry", 100),),
        (("yak", 100),),
        0.5,
        ThreatLevel.MEDIUM,
        ("tier1",),
    )
    query_armour = replace(query_air, enemy_composition_estimate=(("heavy_tank", 100),))
    for mode in (Mode.FTS, Mode.TAGS, Mode.HYBRID):
        by_air = retriever.retrieve("hold the ridge defense", mode=mode, situation=query_air)
        by_armour = retriever.retrieve("hold the ridge defense", mode=mode, situation=query_armour)
        assert by_air.ids[0] == air.id and by_armour.ids[0] == armour.id, mode
        scores = {hit.skill_id: hit.score.situation for hit in by_air.hits}
        assert scores[air.id] > scores[armour.id]
        assert scores[plain.id] == ranking.NEUTRAL_SITUATION  # no signature: neutral, not penalised


# --- k and bad queries ------------------------------------------------------------------------


@pytest.mark.parametrize("k", [0, -1, 101, 10**6, True, 2.0, "5", None])
def test_k_out_of_bounds_raises(sample: SkillRepository, k: object) -> None:
    with pytest.raises(ValueError):
        Retriever(sample, None).retrieve(YAK_QUERY, k=k)


def test_k_bounds_the_hits(sample: SkillRepository) -> None:
    retriever = Retriever(sample, LocalEmbeddings())
    for k in (1, 3, 100):
        for mode in ALL_MODES:
            assert 1 <= len(retriever.retrieve(YAK_QUERY, mode=mode, k=k).hits) <= k
    assert len(retriever.retrieve("defense rush soviet allies gdi nod", mode=Mode.SEMANTIC, k=100).hits) > 5


def test_unknown_mode_is_a_value_error(sample: SkillRepository) -> None:
    with pytest.raises(ValueError, match="unknown mode"):
        Retriever(sample, None).retrieve(YAK_QUERY, mode="psychic")


def _random_text(seed: int, size: int) -> str:
    rng = random.Random(seed)
    alphabet = [chr(c) for c in range(0x20, 0x2FFF) if not 0xD800 <= c <= 0xDFFF]
    return "".join(rng.choice(alphabet) for _ in range(size))


BAD_QUERIES = [
    '"',
    "*",
    "NEAR",
    "-",
    ":",
    "((",
    'a" OR "b',
    "col:value",
    "NEAR(yak rush)",
    "yak AND",
    "OR",
    "NOT yak",
    "^yak",
    "{tags}: yak",
    "name:yak",
    "yak*",
    '"yak',
    "yak)",
    "",
    "!?.,;:'\"()[]{}<>-_=+*&^%$#@~`|\\/",
    "\U0001f680\U0001f525🙂",
    "yak 🙂 rush",
    "\x00",
    "yak\x00rush\x00\x00",
    " \t\n",
    "a" * 10_000,
    _random_text(1, 100_000),
    "yak " * 25_000,
]


@pytest.mark.parametrize("mode", ALL_MODES)
def test_bad_queries_never_raise(sample: SkillRepository, mode: Mode) -> None:
    retriever = Retriever(sample, LocalEmbeddings())
    for query in BAD_QUERIES:
        result = retriever.retrieve(query, mode=mode, k=10)
        assert isinstance(result.hits, list), repr(query[:40])
        assert len(result.hits) <= 10
    assert retriever.retrieve("yak", mode=mode, k=10).hits  # still working afterwards


def test_a_lone_surrogate_in_the_query_never_raises(sample: SkillRepository) -> None:
    retriever = Retriever(sample, LocalEmbeddings())
    for mode in ALL_MODES:
        assert isinstance(retriever.retrieve("yak \udcff rush", mode=mode).hits, list)
