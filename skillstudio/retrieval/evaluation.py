"""Retrieval evaluation: labelled queries in, recall@k, MRR and nDCG per mode out.

A query file (YAML or JSON) lists queries with the skills that acceptably answer them::

    version: 1
    queries:
      - query: enemy aircraft keep strafing my ore trucks in the opening minutes
        domain: ai            # optional: ai | content
        game_module: ra1      # optional
        relevant: [Early AA against Yak rush]   # names (unique in the library) or ids

Every mode runs every query; plain reciprocal-rank fusion of FTS and cosine runs beside them
as the baseline the default ranking has to beat. Metrics use binary relevance at cut-off k:
recall@k (share of acceptable skills in the top k), MRR (1 / rank of the first acceptable one,
0 when none is in the top k) and nDCG@k.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skillstudio.model import Domain, Issue, ValidationError
from skillstudio.model.validation import Checker, join_path
from skillstudio.packages.safe_yaml import load_yaml
from skillstudio.retrieval.retriever import Mode, Retriever
from skillstudio.store import SkillRepository

MAX_QUERY_FILE = 4 * 1024 * 1024
MAX_QUERIES = 10_000
NODES_PER_QUERY = 64  # YAML values: a query, its labels and notes
EVALUATED_MODES = (Mode.HYBRID, Mode.FTS, Mode.SEMANTIC, Mode.TAGS, Mode.RRF)


@dataclass(frozen=True)
class LabelledQuery:
    query: str
    relevant: frozenset[str]  # skill ids
    domain: Domain | None = None
    game_module: str | None = None


@dataclass
class Miss:
    query: str
    expected: list[str]  # names
    got: list[str]  # names, best first


@dataclass
class ModeScores:
    mode: Mode
    k: int
    recall: float = 0.0
    mrr: float = 0.0
    ndcg: float = 0.0
    queries: int = 0
    misses: list[Miss] = field(default_factory=list)
    notes: set[str] = field(default_factory=set)


def load_queries(path: Path, repository: SkillRepository) -> list[LabelledQuery]:
    """Read and check a query file; every label must name exactly one skill in the library."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise ValidationError([Issue("", f"cannot read the file ({error.strerror})")], context=str(path)) from None
    if len(raw) > MAX_QUERY_FILE:
        raise ValidationError([Issue("", f"larger than {MAX_QUERY_FILE} bytes")], context=str(path))
    data = load_yaml(raw.decode("utf-8", "replace"), str(path), max_nodes=MAX_QUERIES * NODES_PER_QUERY)
    check = Checker()
    document = check.mapping(data, "")
    items = check.each(
        document.get("queries") if document is not None else None, "queries", lambda v, p: v, max_items=MAX_QUERIES
    )
    names = _names(repository)
    out: list[LabelledQuery] = []
    for number, item in enumerate(items or ()):
        where = join_path("queries", number)
        entry = check.mapping(item, where)
        if entry is None:
            continue
        query = check.text(entry.get("query"), join_path(where, "query"), max_len=10_000, allow_empty=False)
        domain = None
        if entry.get("domain") is not None:
            domain = check.enum(Domain, entry.get("domain"), join_path(where, "domain"))
        module = None
        if entry.get("game_module") is not None:
            module = check.text(
                entry.get("game_module"), join_path(where, "game_module"), max_len=64, allow_empty=False
            )
        labels = check.each(
            entry.get("relevant"),
            join_path(where, "relevant"),
            lambda v, p: check.text(v, p, max_len=300, allow_empty=False),
            max_items=100,
        )
        relevant: set[str] = set()
        for position, label in enumerate(labels or ()):
            if label is None:
                continue
            label_where = join_path(join_path(where, "relevant"), position)
            if repository.exists(label):
                relevant.add(label)
            elif len(names.get(label, [])) == 1:
                relevant.add(names[label][0])
            elif names.get(label):
                check.fail(label_where, f"{label!r} names {len(names[label])} skills; give an id")
            else:
                check.fail(label_where, f"no skill named or with id {label!r} in this library")
        if labels is not None and not labels:
            check.fail(join_path(where, "relevant"), "list at least one acceptable skill")
        if query and relevant:
            out.append(LabelledQuery(query, frozenset(relevant), domain, module))
    check.raise_if_failed(str(path))
    return out


def evaluate(
    retriever: Retriever, queries: Sequence[LabelledQuery], *, k: int = 5, modes: Sequence[Mode] = EVALUATED_MODES
) -> list[ModeScores]:
    """Each mode's mean recall@k, MRR and nDCG@k over ``queries``, with the queries it missed."""
    names = {s.id: s.name for s in retriever.repository.summaries(list({i for q in queries for i in q.relevant}))}
    results = []
    for mode in modes:
        scores = ModeScores(mode, k)
        for labelled in queries:
            result = retriever.retrieve(
                labelled.query, domain=labelled.domain, game_module=labelled.game_module, k=k, mode=mode
            )
            ranked = result.ids
            scores.notes.update(note for note in result.notes if "fall" in note or "provider" in note)
            recall, reciprocal, ndcg = query_metrics(ranked, labelled.relevant, k)
            scores.recall += recall
            scores.mrr += reciprocal
            scores.ndcg += ndcg
            scores.queries += 1
            if reciprocal == 0.0:
                scores.misses.append(
                    Miss(
                        labelled.query,
                        sorted(names.get(i, i) for i in labelled.relevant),
                        [h.name for h in result.hits],
                    )
                )
        if scores.queries:
            scores.recall /= scores.queries
            scores.mrr /= scores.queries
            scores.ndcg /= scores.queries
        results.append(scores)
    return results


def query_metrics(ranked: Sequence[str], relevant: frozenset[str] | set[str], k: int) -> tuple[float, float, float]:
    """(recall@k, reciprocal rank within k, nDCG@k) of one ranking, with binary relevance."""
    top = list(ranked[:k])
    found = [index for index, skill_id in enumerate(top) if skill_id in relevant]
    recall = len(found) / len(relevant) if relevant else 0.0
    reciprocal = 1.0 / (found[0] + 1) if found else 0.0
    dcg = sum(1.0 / math.log2(index + 2) for index in found)
    ideal = sum(1.0 / math.log2(index + 2) for index in range(min(len(relevant), k)))
    return recall, reciprocal, (dcg / ideal if ideal else 0.0)


def _names(repository: SkillRepository) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    ids = repository.query().ids
    for summary in repository.summaries(ids):
        out.setdefault(summary.name, []).append(summary.id)
    return out


__all__ = ["EVALUATED_MODES", "LabelledQuery", "Miss", "ModeScores", "evaluate", "load_queries", "query_metrics"]
