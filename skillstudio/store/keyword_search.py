"""FTS5 keyword candidates for retrieval: any word may match, ranked by bm25 (docs/retrieval.md).

The browser's search requires every word (a filter); retrieval asks "which skills share the
most telling words with this situation", so words are OR-ed. Words that occur in more than
half of the library say little (bm25 gives them almost no weight) yet make FTS5 score most of
the library; they are dropped when rarer words remain. Document frequencies come from an
``fts5vocab`` table in the connection's TEMP schema, so the library file is not changed.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from sqlalchemy import Connection, text

from skillstudio.store.database import Database
from skillstudio.store.query import id_lists

_WORD = re.compile(r"\w+", re.UNICODE)
MAX_QUERY_WORDS = 64  # of a pasted 100 kB text, only the first words are looked at
MAX_MATCH_TERMS = 16  # the rarest ones, when a query has more
COMMON_SHARE = 0.5  # a word in more than this share of skills is dropped if rarer ones remain
# bm25 is computed for every skill that matches any kept word. Words are kept rarest first while
# their skill counts add up to at most this (the rarest is always kept), so a query of everyday
# words costs the same at 100k skills as at 10k; the words dropped would weigh least in bm25.
MAX_SCORED = 4_000
# bm25 column weights for (name, description, tags): a word in the name or a tag says more
# about what a skill is for than the same word somewhere in its description.
COLUMN_WEIGHTS = (4.0, 1.0, 2.0)
SERVED_CONFIDENCES = ("tentative", "established", "proven")


@dataclass(frozen=True)
class KeywordHit:
    skill_id: str
    bm25: float  # FTS5's bm25 negated: higher is better, > 0


@dataclass(frozen=True)
class KeywordResult:
    hits: list[KeywordHit]
    terms: tuple[str, ...]  # the words actually matched on
    dropped: tuple[str, ...]  # words left out as too common
    weights: dict[str, float] = field(default_factory=dict)  # term -> inverse document frequency


def term_coverage(database: Database, ids: list[str], weights: dict[str, float]) -> dict[str, float]:
    """For each skill, the share of the query's terms (weighted by idf) that its name, description
    or tags contain as a word prefix, as FTS5 matches them: a skill that shares one of five
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
    """The words of a query, lower-cased, each once, in order; never FTS5 syntax."""
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
    with database.read() as session:
        connection = session.connection()
        # Word frequencies change only when someone commits: keep them until then (a user typing
        # a query asks for the same words again and again; fts5vocab counts are not free).
        known: dict[str, int] = database.cached("retrieval.word-frequencies", dict)
        total = database.cached(
            "retrieval.skill-count", lambda: int(connection.execute(text("SELECT COUNT(*) FROM skills")).scalar_one())
        )
        terms, dropped, frequencies = _telling_terms(connection, words, known, total, keep_common=tags_only)
        if not terms:
            return KeywordResult([], (), tuple(dropped))
        weights = {term: math.log(1 + total / frequencies[term]) for term in terms}
        alternatives = " OR ".join(f'"{term}"*' for term in terms)
        match = f"{{tags}}: ({alternatives})" if tags_only else alternatives
        column_weights = ", ".join(str(w) for w in COLUMN_WEIGHTS)
        # Rank inside FTS5 first, then join the few best to the skills for the filters: joining
        # every match costs five times the ranking. A filter may leave fewer than ``limit``.
        pool = limit * (5 if domain or game_module else 2)
        rows = connection.execute(
            text(
                "WITH best AS ("
                f" SELECT rowid AS r, -bm25(skills_fts, {column_weights}) AS score FROM skills_fts"
                " WHERE skills_fts MATCH :match ORDER BY score DESC LIMIT :pool)"
                " SELECT s.id, best.score FROM best JOIN skills s ON s.rowid = best.r"
                " LEFT JOIN studio_skill_meta m ON m.skill_id = s.id"
                " WHERE (:domain IS NULL OR s.domain = :domain)"
                " AND (:module IS NULL OR s.game_module = :module)"
                " AND (m.review_state IS NULL OR m.review_state <> 'rejected')"
                " AND (s.confidence IS NULL OR s.confidence IN ('tentative', 'established', 'proven'))"
                " ORDER BY best.score DESC, s.id LIMIT :limit"
            ),
            {"match": match, "domain": domain, "module": game_module, "limit": int(limit), "pool": int(pool)},
        ).all()
    hits = [KeywordHit(str(skill_id), float(score)) for skill_id, score in rows if score is not None]
    return KeywordResult(hits, tuple(terms), tuple(dropped), weights)


def _frequencies(connection: Connection, words: list[str]) -> dict[str, int]:
    """How many skills contain each word (as a prefix), in one statement; words in none are left out."""
    parts, params = [], {}
    for n, word in enumerate(words):
        parts.append(
            f"SELECT {n}, COALESCE(SUM(doc), 0) FROM temp.studio_fts_vocab WHERE term >= :l{n} AND term < :h{n}"
        )
        params[f"l{n}"], params[f"h{n}"] = word, word[:-1] + chr(min(ord(word[-1]) + 1, 0x10FFFF))
    rows = connection.execute(text(" UNION ALL ".join(parts)), params)
    return {words[int(n)]: int(count) for n, count in rows if count}


def _telling_terms(
    connection: Connection, words: list[str], known: dict[str, int], total: int, *, keep_common: bool = False
) -> tuple[list[str], list[str], dict[str, int]]:
    """The words worth matching on, rarest first, and the common ones dropped (unless
    ``keep_common``: a tag match counts whole tags, however common their words are)."""
    connection.exec_driver_sql(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.studio_fts_vocab USING fts5vocab(main, skills_fts, 'row')"
    )
    missing = [word for word in words if word not in known]
    if missing:
        counted = _frequencies(connection, missing)
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
