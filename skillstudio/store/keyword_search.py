"""Keyword candidates for retrieval: any word may match, ranked by bm25 (docs/retrieval.md).

The browser's search requires every word (a filter); retrieval asks "which skills share the
most telling words with this situation", so words are OR-ed. Words that occur in more than
half of the library say little (bm25 gives them almost no weight) yet make the index score most
of the library; they are dropped when rarer words remain. The backend ranks (SQLite: FTS5's
bm25; PostgreSQL: ts_rank) and counts each word's documents (an fts5vocab table in SQLite's
TEMP schema, so the file is not changed; a GIN index lookup on PostgreSQL).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from sqlalchemy import Connection, func, or_, select, text

from skillstudio.store.backends import Backend
from skillstudio.store.backends.sqlite import COLUMN_WEIGHTS
from skillstudio.store.database import Database
from skillstudio.store.orm import SkillMetaRow, SkillRow
from skillstudio.store.query import id_lists

_WORD = re.compile(r"\w+", re.UNICODE)
MAX_QUERY_WORDS = 64  # of a pasted 100 kB text, only the first words are looked at
MAX_MATCH_TERMS = 16  # the rarest ones, when a query has more
COMMON_SHARE = 0.5  # a word in more than this share of skills is dropped if rarer ones remain
# bm25 is computed for every skill that matches any kept word. Words are kept rarest first while
# their skill counts add up to at most this (the rarest is always kept), so a query of everyday
# words costs the same at 100k skills as at 10k; the words dropped would weigh least in bm25.
MAX_SCORED = 4_000
SERVED_CONFIDENCES = ("tentative", "established", "proven")


@dataclass(frozen=True)
class KeywordHit:
    skill_id: str
    bm25: float  # the backend's relevance (FTS5's bm25 negated; ts_rank): higher is better, > 0


@dataclass(frozen=True)
class KeywordResult:
    hits: list[KeywordHit]
    terms: tuple[str, ...]  # the words actually matched on
    dropped: tuple[str, ...]  # words left out as too common
    weights: dict[str, float] = field(default_factory=dict)  # term -> inverse document frequency


def term_coverage(database: Database, ids: list[str], weights: dict[str, float]) -> dict[str, float]:
    """For each skill, the share of the query's terms (weighted by idf) that its name, description
    or tags contain as a word prefix, as the keyword index matches them: a skill that shares one of five
    telling words is weaker keyword evidence than one that shares all five, whatever bm25 says."""
    total = sum(weights.values())
    if not ids or total <= 0:
        return {}
    out: dict[str, float] = {}
    # A term matches a word it begins (FTS5's prefix match); a pattern per term runs in C.
    patterns = [(re.compile(r"(?<!\w)" + re.escape(term), re.IGNORECASE), weight) for term, weight in weights.items()]
    with database.read() as session:
        connection = session.connection()
        for marks, params in id_lists(ids):
            rows = connection.execute(
                text(f"SELECT id, name, description, tags FROM skills WHERE id IN ({marks})"), params
            )
            for skill_id, *fields in rows:
                joined = "\n".join(field_text for field_text in fields if isinstance(field_text, str))
                matched = sum(weight for pattern, weight in patterns if pattern.search(joined))
                out[str(skill_id)] = matched / total
    return out


def query_words(user_text: str) -> list[str]:
    """The words of a query, lower-cased, each once, in order; never search syntax."""
    words = [word.lower() for word in _WORD.findall(user_text[: MAX_QUERY_WORDS * 64])]
    return list(dict.fromkeys(words))[:MAX_QUERY_WORDS]


def keyword_candidates(
    database: Database,
    user_text: str,
    *,
    domain: str | None = None,
    game_module: str | None = None,
    limit: int = 200,
    tags_only: bool = False,
) -> KeywordResult:
    """The best ``limit`` served skills sharing a word (as a prefix) with ``user_text``.

    Served: not rejected by review, with a D057 confidence (tentative or better; NULL is D057's
    default, tentative). Trashed skills are not in ``skills`` at all.
    """
    words = query_words(user_text)
    if not words:
        return KeywordResult([], (), ())
    backend = database.backend
    with database.read() as session:
        connection = session.connection()
        # Word frequencies change only when someone commits: keep them until then (a user typing
        # a query asks for the same words again and again; counting them is not free).
        known: dict[str, int] = database.cached("retrieval.word-frequencies", dict)
        total = database.cached(
            "retrieval.skill-count",
            lambda: int(connection.execute(select(func.count()).select_from(SkillRow)).scalar_one()),
        )
        terms, dropped, frequencies = _telling_terms(connection, backend, words, known, total, keep_common=tags_only)
        if not terms:
            return KeywordResult([], (), tuple(dropped))
        weights = {term: math.log(1 + total / frequencies[term]) for term in terms}
        # Rank inside the index first, then join the few best to the skills for the filters:
        # joining every match costs five times the ranking. A filter may leave fewer than ``limit``.
        pool = limit * (5 if domain or game_module else 2)
        best = backend.any_word_ranking(connection, terms, prefix=True, tags_only=tags_only, pool=pool)
        statement = (
            select(SkillRow.id, best.c.score)
            .select_from(best)
            .join(SkillRow, backend.skill_key() == best.c.key)
            .outerjoin(SkillMetaRow, SkillMetaRow.skill_id == SkillRow.id)
            .where(
                or_(SkillMetaRow.review_state.is_(None), SkillMetaRow.review_state != "rejected"),
                or_(SkillRow.confidence.is_(None), SkillRow.confidence.in_(SERVED_CONFIDENCES)),
            )
            .order_by(best.c.score.desc(), SkillRow.id)
            .limit(int(limit))
        )
        if domain is not None:
            statement = statement.where(SkillRow.domain == domain)
        if game_module is not None:
            statement = statement.where(SkillRow.game_module == game_module)
        rows = connection.execute(statement).all()
    hits = [KeywordHit(str(skill_id), float(score)) for skill_id, score in rows if score is not None]
    return KeywordResult(hits, tuple(terms), tuple(dropped), weights)


def _telling_terms(
    connection: Connection,
    backend: Backend,
    words: list[str],
    known: dict[str, int],
    total: int,
    *,
    keep_common: bool = False,
) -> tuple[list[str], list[str], dict[str, int]]:
    """The words worth matching on, rarest first, and the common ones dropped (unless
    ``keep_common``: a tag match counts whole tags, however common their words are)."""
    missing = [word for word in words if word not in known]
    if missing:
        counted = backend.word_frequencies(connection, missing)
        known.update({word: counted.get(word, 0) for word in missing})
    frequencies = {word: known[word] for word in words if known[word]}
    ranked = sorted(frequencies, key=lambda w: (frequencies[w], w))
    rare = ranked if keep_common else [w for w in ranked if frequencies[w] <= COMMON_SHARE * max(total, 1)]
    kept: list[str] = []
    scored = 0
    for word in (rare or ranked[:1])[:MAX_MATCH_TERMS]:
        if kept and scored + frequencies[word] > MAX_SCORED:
            break
        kept.append(word)
        scored += frequencies[word]
    dropped = [w for w in ranked if w not in kept]
    return kept, dropped, frequencies


__all__ = ["COLUMN_WEIGHTS", "KeywordHit", "KeywordResult", "keyword_candidates", "query_words", "term_coverage"]
