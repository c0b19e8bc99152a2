"""Retrieval evaluation: the metrics, and the default ranking against FTS alone and plain RRF."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from skillstudio.library import create_library
from skillstudio.paths import resource
from skillstudio.retrieval import LocalEmbeddings, Mode, Retriever, embed_library
from skillstudio.retrieval.evaluation import evaluate, load_queries, query_metrics
from skillstudio.store import SkillRepository


def test_query_metrics_against_hand_computed_values() -> None:
    relevant = {"b", "d"}
    recall, reciprocal, ndcg = query_metrics(["a", "b", "c", "d", "e"], relevant, 5)
    assert recall == 1.0 and reciprocal == 0.5
    ideal = 1 + 1 / math.log2(3)
    assert ndcg == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / ideal)
    assert query_metrics(["a", "b"], relevant, 1) == (0.0, 0.0, 0.0)  # cut-off k: "b" is second
    assert query_metrics(["d"], relevant, 5)[:2] == (0.5, 1.0)


@pytest.fixture(scope="module")
def sample_scores(tmp_path_factory: pytest.TempPathFactory) -> dict[Mode, tuple[float, float, float]]:
    path = tmp_path_factory.mktemp("eval") / "sample.db"
    with create_library(path, sample=True) as database:
        repository = SkillRepository(database)
        provider = LocalEmbeddings()
        for _progress in embed_library(repository, provider):
            pass
        queries = load_queries(resource("retrieval", "sample_queries.yaml"), repository)
        assert len(queries) >= 60
        scores = evaluate(Retriever(repository, provider), queries, k=5)
    return {s.mode: (s.recall, s.mrr, s.ndcg) for s in scores}


def test_every_sample_skill_is_an_answer_somewhere(tmp_path: Path) -> None:
    with create_library(tmp_path / "s.db", sample=True) as database:
        repository = SkillRepository(database)
        queries = load_queries(resource("retrieval", "sample_queries.yaml"), repository)
        assert {skill_id for q in queries for skill_id in q.relevant} == set(repository.query().ids)


@pytest.mark.parametrize("baseline", [Mode.FTS, Mode.RRF])
def test_the_default_ranking_beats_fts_alone_and_plain_rrf(sample_scores, baseline: Mode) -> None:
    hybrid, other = sample_scores[Mode.HYBRID], sample_scores[baseline]
    for name, ours, theirs in zip(("recall@5", "MRR", "nDCG@5"), hybrid, other, strict=True):
        assert ours > theirs, f"hybrid {name} {ours:.3f} <= {baseline.value} {theirs:.3f}"
