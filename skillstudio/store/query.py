"""Browsing state in, ordered ids and a total out (as TagStudio's BrowsingState does).

A :class:`SkillQuery` is a plain value the CLI builds from flags and the GUI from its filter
panel; :func:`build_select` turns it into one SQL query over D057's ``skills`` table, our
metadata and the keyword index (the library's backend writes the parts that differ: FTS5 or
PostgreSQL's text search, the tag filter, the name order).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Select,
    SQLColumnExpression,
    Subquery,
    and_,
    case,
    func,
    literal_column,
    or_,
    select,
    true,
)

from skillstudio.model import Confidence, Domain, ReviewState, SourceKind
from skillstudio.store.backends import Backend
from skillstudio.store.orm import SkillMetaRow, SkillRow, TagCountRow

_WORD = re.compile(r"\w+", re.UNICODE)


class SortKey(StrEnum):
    RELEVANCE = "relevance"  # FTS rank when there is a text query, else name
    NAME = "name"
    DOMAIN = "domain"
    GAME_MODULE = "game_module"
    CONFIDENCE = "confidence"
    SUCCESS_RATE = "success_rate"
    VERIFICATION_COUNT = "verification_count"
    AVERAGE_RATING = "average_rating"
    USE_COUNT = "use_count"
    SOURCE = "source"
    CREATED_BY = "created_by"
    CREATED_AT = "created_at"
    LAST_VERIFIED = "last_verified"
    LAST_USED = "last_used"


@dataclass(frozen=True)
class SkillQuery:
    """Which skills, in what order. Empty tuples mean "any"; filters combine with AND."""

    domains: tuple[Domain, ...] = ()
    confidences: tuple[Confidence, ...] = ()
    game_modules: tuple[str, ...] = ()
    sources: tuple[SourceKind, ...] = ()
    tags: tuple[str, ...] = ()  # a skill must carry all of them
    untagged: bool = False  # only skills without tags
    created_by: tuple[str, ...] = ()
    review_states: tuple[ReviewState | None, ...] = ()  # None matches "never reviewed"
    text: str = ""  # keyword search over name, description and tags; every word is a prefix, all required
    sort: SortKey = SortKey.RELEVANCE
    descending: bool = False
    offset: int = 0
    limit: int | None = None


def search_words(user_text: str) -> list[str]:
    """The words of what a user typed; each is searched for as a prefix, all required.

    User text never reaches the search syntax (FTS5's quotes, ``-``, ``NEAR``, ``:``, or
    tsquery's operators): only word characters are kept, so no input can be a syntax error.
    """
    return _WORD.findall(user_text)


def fts_expression(user_text: str) -> str | None:
    """FTS5 MATCH text for what a user typed (a SQLite library's search): every word as a
    prefix, all required; None without words."""
    from skillstudio.store.backends.sqlite import fts_match

    words = search_words(user_text)
    return fts_match(words) if words else None


# Literal values, not bound parameters: migration 13's index on this very expression serves the
# order only if the query spells it the same way.
_CONFIDENCE_ORDER = case(
    (SkillRow.confidence == literal_column(f"'{Confidence.TENTATIVE.value}'"), literal_column("0")),
    (SkillRow.confidence == literal_column(f"'{Confidence.ESTABLISHED.value}'"), literal_column("1")),
    (SkillRow.confidence == literal_column(f"'{Confidence.PROVEN.value}'"), literal_column("2")),
    else_=literal_column("-1"),
)

_SORT_COLUMNS: dict[SortKey, SQLColumnExpression[Any]] = {
    SortKey.DOMAIN: SkillRow.domain,
    SortKey.GAME_MODULE: SkillRow.game_module,
    SortKey.CONFIDENCE: _CONFIDENCE_ORDER,
    SortKey.SUCCESS_RATE: SkillRow.success_rate,
    SortKey.VERIFICATION_COUNT: SkillRow.verification_count,
    SortKey.AVERAGE_RATING: SkillRow.average_rating,
    SortKey.USE_COUNT: SkillRow.use_count,
    SortKey.SOURCE: SkillRow.source,
    SortKey.CREATED_BY: SkillMetaRow.created_by,
    SortKey.CREATED_AT: SkillRow.created_at,
    SortKey.LAST_VERIFIED: SkillRow.last_verified,
    SortKey.LAST_USED: SkillRow.last_used,
}


def _filtered(
    statement: Select[Any], query: SkillQuery, backend: Backend, *, walk: bool = False, tags_by_fts: bool = True
) -> tuple[Select[Any], list[ColumnElement[bool]]]:
    """``statement`` joined to what the query's filters read, and the filters' conditions.

    ``walk``: no filter may lead the planner to another index than the order's: a first page is
    then read by walking that index (which covers the filtered columns) until it is full,
    instead of finding every match first and sorting them. ``tags_by_fts``: narrow a tag filter
    through the text index first (SQLite then reads only the tagged rows, and sorts them);
    without it, each row the walk meets is checked, which finds a first page of a common tag
    sooner."""
    domain, confidence, module, source = (
        backend.walked(column) if walk else column
        for column in (SkillRow.domain, SkillRow.confidence, SkillRow.game_module, SkillRow.source)
    )
    # Our metadata is joined only when the query needs it: at 100k rows the join costs more
    # than every other part of a plain filtered listing.
    if query.created_by or query.review_states or query.sort is SortKey.CREATED_BY:
        statement = statement.outerjoin(SkillMetaRow, SkillMetaRow.skill_id == SkillRow.id)
    conditions: list[ColumnElement[bool]] = []
    if query.domains:
        conditions.append(domain.in_([d.value for d in query.domains]))
    if query.confidences:
        values = [c.value for c in query.confidences]
        if Confidence.TENTATIVE in query.confidences:  # D057's column default
            conditions.append(or_(confidence.in_(values), confidence.is_(None)))
        else:
            conditions.append(confidence.in_(values))
    if query.game_modules:
        conditions.append(module.in_(query.game_modules))
    if query.sources:
        conditions.append(source.in_([s.value for s in query.sources]))
    for number, tag in enumerate(query.tags):
        conditions.extend(backend.tag_conditions(SkillRow.tags, tag, number, narrow=tags_by_fts))
    if query.untagged:
        conditions.append(backend.untagged(SkillRow.tags))
    if query.created_by:
        conditions.append(func.coalesce(SkillMetaRow.created_by, "unknown").in_(query.created_by))
    if query.review_states:
        states = [s.value for s in query.review_states if s is not None]
        options = [SkillMetaRow.review_state.in_(states)] if states else []
        if None in query.review_states:
            options.append(SkillMetaRow.review_state.is_(None))
        conditions.append(or_(*options))
    return statement, conditions


def build_select(query: SkillQuery, backend: Backend) -> Select[str]:
    """SELECT skills.id ... for the query's filters and order, without offset/limit."""
    statement, conditions = _filtered(select(SkillRow.id), query, backend)
    words = search_words(query.text)
    rank = None
    if words:
        # Ranking every match is the costly part of a common word; only when the order asks.
        matches = backend.text_matches(words, ranked=query.sort is SortKey.RELEVANCE)
        statement = statement.join(matches, matches.c.key == backend.skill_key())
        rank = matches.c.rank if query.sort is SortKey.RELEVANCE else None
    if conditions:
        statement = statement.where(and_(*conditions))
    return statement.order_by(*_ordering(query, rank, backend))


def first_ids(
    connection: Connection, query: SkillQuery, count: int, backend: Backend, *, pool: int | None = None
) -> list[str]:
    """The first ``count`` ids of ``build_select(query)``, exactly, without ranking every match.

    Ordered by relevance, the full query ranks every match of a common word and joins each to
    its row; here the text index keeps only the ``pool`` best-ranked matches (a top-N sort), and
    only those are joined and filtered. That is the full order's beginning when the pool's worst
    rank is strictly worse than the last row kept (every match outside the pool ranks at least as
    badly, and a tie there would need the name to decide), or when the pool holds every match;
    else a larger pool is tried. A backend whose pool is chosen in the full order itself
    (``pool_in_full_order``: rank, name, id) needs no strict rank: ``count`` kept rows suffice.
    Without a search, the database walks the order's index (migration 13) until ``count`` rows
    pass the filters. A search in another order walks that index too when the words are common
    (each row checked against the set of matches), and otherwise reads ``LIMIT count`` of the
    matches joined and sorted."""
    words = search_words(query.text)
    if not words:
        return _walked(connection, query, count, backend, [])
    if query.sort is not SortKey.RELEVANCE:
        walkable = query.sort in _ORDERS_INDEXED_ON_SKILLS and not backend.plans_searches_from_statistics
        matches = backend.text_matches(words, ranked=False)
        if walkable and _common_search(connection, matches, count, backend):
            return _walked(
                connection, query, count, backend, [backend.walked(backend.skill_key()).in_(select(matches.c.key))]
            )
        return list(connection.execute(build_select(query, backend).limit(count)).scalars())
    pool = pool or 2 * count
    while True:
        ranked = backend.text_matches(words, ranked=True, pool=pool, descending=query.descending)
        # Every pooled match is read (an outer join), so the pool's size and worst rank are known;
        # the filters say which of them are kept.
        pooled = select(ranked.c.rank, SkillRow.id).select_from(ranked)
        pooled = pooled.outerjoin(SkillRow, backend.skill_key() == ranked.c.key)
        statement, conditions = _filtered(pooled, query, backend)
        statement = statement.add_columns(case((and_(true(), *conditions), 1), else_=0).label("kept"))
        rows = connection.execute(statement.order_by(*_ordering(query, ranked.c.rank, backend))).all()
        kept = [(rank, skill_id) for rank, skill_id, keep in rows if keep == 1 and skill_id is not None]
        enough = len(kept) >= count and (backend.pool_in_full_order or kept[count - 1][0] != rows[-1][0])
        if len(rows) < pool or enough:
            return [skill_id for _rank, skill_id in kept[:count]]
        # A pool big enough at the share the filters kept, or, when they keep few, the full
        # ranking: it costs about as much as a pool that large.
        pool = max(4 * pool, 2 * count * len(rows) // max(len(kept), 1))
        if pool > _MAX_POOL:
            return list(connection.execute(build_select(query, backend).limit(count)).scalars())


_MAX_POOL = 20_000  # matches read for a first page before the full ranking is cheaper
# The orders migration 13 indexes on ``skills``. The creator is in our metadata: walking skills
# in that order would read every row's metadata (a common word's first page: 491 ms, not 239).
_ORDERS_INDEXED_ON_SKILLS = frozenset(SortKey) - {SortKey.RELEVANCE, SortKey.CREATED_BY}


def _walked(
    connection: Connection, query: SkillQuery, count: int, backend: Backend, searched: list[ColumnElement[bool]]
) -> list[str]:
    """The first ``count`` ids read by walking the order's index (migration 13) until that many
    rows pass the filters and the ``searched`` conditions."""
    tags_by_fts = bool(query.tags) and not _common_tags(connection, query.tags, count, backend)
    statement, conditions = _filtered(select(SkillRow.id), query, backend, walk=True, tags_by_fts=tags_by_fts)
    statement = statement.where(and_(true(), *conditions, *searched)).order_by(*_ordering(query, None, backend))
    return list(connection.execute(statement.limit(count)).scalars())


def _common_search(connection: Connection, matches: Subquery, count: int, backend: Backend) -> bool:
    """Whether walking the library in order meets ``count`` of these ``matches`` within
    _MAX_POOL rows, if the matches were spread evenly (a guess that only picks the plan). The
    matches are counted only up to the number that says so. At 100k skills, the first 64 of
    a common word's 73,000 matches by name: 14 ms walked, 120 ms joined and sorted."""
    enough = max(1, -(-count * backend.approximate_skill_count(connection) // _MAX_POOL))
    counted = select(func.count()).select_from(select(matches.c.key).limit(enough).subquery())
    return int(connection.execute(counted).scalar_one()) >= enough


def _common_tags(connection: Connection, tags: Sequence[str], count: int, backend: Backend) -> bool:
    """Whether walking the library in order meets ``count`` skills with all these tags within
    _MAX_POOL rows, going by the rarest one's count (a guess that only picks the plan)."""
    wanted = set(tags)
    known: int
    rarest: int | None
    known, rarest = connection.execute(
        select(func.count(), func.min(TagCountRow.skills)).where(TagCountRow.tag.in_(sorted(wanted)))
    ).one()
    library = backend.approximate_skill_count(connection)
    return rarest is not None and known == len(wanted) and count * library <= _MAX_POOL * rarest


_NOT_NULL = {SortKey.NAME, SortKey.DOMAIN, SortKey.GAME_MODULE, SortKey.SOURCE, SortKey.CREATED_AT, SortKey.CONFIDENCE}


def _ordering(query: SkillQuery, rank: ColumnElement[float] | None, backend: Backend) -> list[SQLColumnExpression[Any]]:
    sort = query.sort
    name = backend.name_order(SkillRow.name)
    if sort is SortKey.RELEVANCE:
        if rank is not None:
            ranked = rank.desc() if query.descending else rank.asc()  # rank: lower is better
            return [ranked, name, SkillRow.id]
        sort = SortKey.NAME
    key = name if sort is SortKey.NAME else _SORT_COLUMNS[sort]
    primary = key.desc() if query.descending else key.asc()
    # Ties broken by name then id, so the order is stable.
    tail = [SkillRow.id] if sort is SortKey.NAME else [name, SkillRow.id]
    if sort in _NOT_NULL or backend.nulls_last_by_default(query.descending):
        return [primary, *tail]
    # NULLs (missing figures) last, written so that an index on the column serves the order.
    return [primary.nulls_last(), *tail]


_CHUNK = 500  # ids per IN (...) list, well under SQLite's variable limit


def chunks(items: Sequence[str], size: int = _CHUNK) -> Iterator[list[str]]:
    """``items`` in lists short enough for one ``IN (...)`` each."""
    items = list(items)
    for start in range(0, len(items), size):
        yield items[start : start + size]


def id_lists(ids: Sequence[str], size: int = _CHUNK) -> Iterator[tuple[str, dict[str, str]]]:
    """``:i0, :i1, ...`` placeholders and their values for each chunk of ``ids``, for text SQL's
    ``IN (...)``: chunks keep each statement under SQLite's variable limit."""
    for start in range(0, len(ids), size):
        chunk = ids[start : start + size]
        yield ", ".join(f":i{n}" for n in range(len(chunk))), {f"i{n}": value for n, value in enumerate(chunk)}


__all__ = ["SkillQuery", "SortKey", "build_select", "chunks", "first_ids", "fts_expression", "id_lists", "search_words"]
