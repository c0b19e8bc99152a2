"""Browsing state in, ordered ids and a total out (as TagStudio's BrowsingState does).

A :class:`SkillQuery` is a plain value the CLI builds from flags and the GUI from its filter
panel; :func:`build_select` turns it into one SQL query over D057's ``skills`` table, our
metadata and the FTS5 index.
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
    and_,
    case,
    exists,
    func,
    literal_column,
    or_,
    select,
    text,
    true,
)
from sqlalchemy.orm import InstrumentedAttribute
from sqlalchemy.sql.elements import UnaryExpression
from sqlalchemy.sql.operators import custom_op

from skillstudio.model import Confidence, Domain, ReviewState, SourceKind
from skillstudio.store.orm import SkillMetaRow, SkillRow

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
    text: str = ""  # FTS5 over name, description and tags; every word is a prefix
    sort: SortKey = SortKey.RELEVANCE
    descending: bool = False
    offset: int = 0
    limit: int | None = None


def fts_expression(user_text: str) -> str | None:
    """FTS5 MATCH text for what a user typed: every word as a prefix, all required.

    User text never reaches FTS5's query syntax (quotes, ``-``, ``NEAR``, ``:``...): only the
    word characters are kept, each quoted, so no input can be a syntax error.
    """
    words = _WORD.findall(user_text)
    if not words:
        return None
    return " ".join(f'"{word}"*' for word in words)


# Literal values, not bound parameters: migration 13's index on this very expression serves the
# order only if the query spells it the same way.
_CONFIDENCE_ORDER = case(
    (SkillRow.confidence == literal_column(f"'{Confidence.TENTATIVE.value}'"), literal_column("0")),
    (SkillRow.confidence == literal_column(f"'{Confidence.ESTABLISHED.value}'"), literal_column("1")),
    (SkillRow.confidence == literal_column(f"'{Confidence.PROVEN.value}'"), literal_column("2")),
    else_=literal_column("-1"),
)

_SORT_COLUMNS = {
    SortKey.NAME: SkillRow.name.collate("NOCASE"),
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
    statement: Select[Any], query: SkillQuery, *, walk: bool = False, tags_by_fts: bool = True
) -> tuple[Select[Any], list[ColumnElement[bool]]]:
    """``statement`` joined to what the query's filters read, and the filters' conditions.

    ``walk``: no filter may lead SQLite to another index than the order's: a first page is then
    read by walking that index (which covers the filtered columns) until it is full, instead of
    finding every match first and sorting them. ``tags_by_fts``: narrow a tag filter through the
    FTS index first (SQLite then reads only the tagged rows, and sorts them); without it, each
    row the walk meets is checked, which finds a first page of a common tag sooner."""
    domain, confidence, module, source = (
        _walked(column) if walk else column
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
    # An engine may have written tags that are not JSON; json_each() would abort the whole
    # query on such a row, so invalid tag text reads as "no tags".
    valid_tags = case((func.json_valid(SkillRow.tags), SkillRow.tags), else_="[]")
    for number, tag in enumerate(query.tags):
        # The FTS index over the tags column narrows the candidates cheaply (a 100k library
        # would otherwise run json_each on every row); json_each then checks the exact tag.
        words = _WORD.findall(tag)
        if words and tags_by_fts:
            phrase = '{tags}: "' + " ".join(words) + '"'
            conditions.append(
                literal_column("skills.rowid").in_(
                    text(f"SELECT rowid FROM skills_fts WHERE skills_fts MATCH :tag_{number}").bindparams(
                        **{f"tag_{number}": phrase}
                    )
                )
            )
        conditions.append(
            exists(
                select(literal_column("1"))
                .select_from(func.json_each(valid_tags).table_valued("value"))
                .where(literal_column("value") == tag)
            )
        )
    if query.untagged:
        conditions.append(func.json_array_length(valid_tags) == 0)
    if query.created_by:
        conditions.append(func.coalesce(SkillMetaRow.created_by, "unknown").in_(query.created_by))
    if query.review_states:
        states = [s.value for s in query.review_states if s is not None]
        options = [SkillMetaRow.review_state.in_(states)] if states else []
        if None in query.review_states:
            options.append(SkillMetaRow.review_state.is_(None))
        conditions.append(or_(*options))
    return statement, conditions


def build_select(query: SkillQuery) -> Select[str]:
    """SELECT skills.id ... for the query's filters and order, without offset/limit."""
    statement, conditions = _filtered(select(SkillRow.id), query)
    match = fts_expression(query.text)
    rank = None
    if match is not None:
        # Ranking every match (bm25) is the costly part of a common word; only do it when the
        # order asks for relevance.
        columns: tuple[str, ...]
        if query.sort is SortKey.RELEVANCE:
            sql, columns = "SELECT rowid, rank FROM skills_fts WHERE skills_fts MATCH :match", ("rowid", "rank")
        else:
            sql, columns = "SELECT rowid FROM skills_fts WHERE skills_fts MATCH :match", ("rowid",)
        matches = text(sql).bindparams(match=match).columns(*(literal_column(c) for c in columns)).subquery("fts")
        statement = statement.join(matches, matches.c.rowid == literal_column("skills.rowid"))
        rank = matches.c.rank if query.sort is SortKey.RELEVANCE else None
    if conditions:
        statement = statement.where(and_(*conditions))
    return statement.order_by(*_ordering(query, rank))


def first_ids(connection: Connection, query: SkillQuery, count: int, *, pool: int | None = None) -> list[str]:
    """The first ``count`` ids of ``build_select(query)``, exactly, without ranking every match.

    Ordered by relevance, the full query bm25-ranks every match of a common word and joins each
    to its row; here FTS5 keeps only the ``pool`` best-ranked matches (a top-N sort), and only
    those are joined and filtered. That is the full order's beginning when the pool's worst rank
    is strictly worse than the last row kept (every match outside the pool ranks at least as
    badly, and a tie there would need the name to decide), or when the pool holds every match;
    else a larger pool is tried. Without a search, SQLite walks the order's index (migration 13)
    until ``count`` rows pass the filters; a search in another order reads ``LIMIT count``."""
    match = fts_expression(query.text)
    if match is None:
        tags_by_fts = bool(query.tags) and not _common_tags(connection, query.tags, count)
        statement, conditions = _filtered(select(SkillRow.id), query, walk=True, tags_by_fts=tags_by_fts)
        statement = statement.where(and_(true(), *conditions)).order_by(*_ordering(query, None))
        return list(connection.execute(statement.limit(count)).scalars())
    if query.sort is not SortKey.RELEVANCE:
        return list(connection.execute(build_select(query).limit(count)).scalars())
    pool = pool or 2 * count
    direction = "DESC" if query.descending else "ASC"
    while True:
        # +rank: SQLite's own top-N sorter; FTS5's "ORDER BY rank" would sort every match.
        ranked = (
            text(
                f"SELECT rowid, rank FROM skills_fts WHERE skills_fts MATCH :match ORDER BY +rank {direction} LIMIT :pool"
            )
            .bindparams(match=match, pool=pool)
            .columns(literal_column("rowid"), literal_column("rank"))
            .subquery("fts")
        )
        # Every pooled match is read (an outer join), so the pool's size and worst rank are known;
        # the filters say which of them are kept.
        pooled = select(ranked.c.rank, SkillRow.id).select_from(ranked)
        pooled = pooled.outerjoin(SkillRow, literal_column("skills.rowid") == ranked.c.rowid)
        statement, conditions = _filtered(pooled, query)
        statement = statement.add_columns(case((and_(true(), *conditions), 1), else_=0).label("kept"))
        rows = connection.execute(statement.order_by(*_ordering(query, ranked.c.rank))).all()
        kept = [(rank, skill_id) for rank, skill_id, keep in rows if keep == 1 and skill_id is not None]
        if len(rows) < pool or (len(kept) >= count and kept[count - 1][0] != rows[-1][0]):
            return [skill_id for _rank, skill_id in kept[:count]]
        # A pool big enough at the share the filters kept, or, when they keep few, the full
        # ranking: it costs about as much as a pool that large.
        pool = max(4 * pool, 2 * count * len(rows) // max(len(kept), 1))
        if pool > _MAX_POOL:
            return list(connection.execute(build_select(query).limit(count)).scalars())


_MAX_POOL = 20_000  # matches read for a first page before the full ranking is cheaper


def _walked(column: InstrumentedAttribute[Any]) -> ColumnElement[Any]:
    """``+column``: the same value, but SQLite will not pick an index on it."""
    return UnaryExpression(column.expression, operator=custom_op("+"), type_=column.type)


def _common_tags(connection: Connection, tags: Sequence[str], count: int) -> bool:
    """Whether walking the library in order meets ``count`` skills with all these tags within
    _MAX_POOL rows, going by the rarest one's count (a guess that only picks the plan)."""
    wanted = set(tags)
    known: int
    rarest: int | None
    known, rarest = connection.execute(
        select(func.count(), func.min(literal_column("skills")))
        .select_from(text("studio_tag_counts"))
        .where(literal_column("tag").in_(sorted(wanted)))
    ).one()
    library = connection.execute(text("SELECT MAX(rowid) FROM skills")).scalar() or 0  # about the count, at once
    return rarest is not None and known == len(wanted) and count * int(library) <= _MAX_POOL * rarest


_NAME = _SORT_COLUMNS[SortKey.NAME]
_NOT_NULL = {SortKey.NAME, SortKey.DOMAIN, SortKey.GAME_MODULE, SortKey.SOURCE, SortKey.CREATED_AT, SortKey.CONFIDENCE}


def _ordering(query: SkillQuery, rank: ColumnElement[float] | None) -> list[SQLColumnExpression[Any]]:
    sort = query.sort
    if sort is SortKey.RELEVANCE:
        if rank is not None:
            primary = rank.desc() if query.descending else rank.asc()  # FTS5 rank: lower is better
            return [primary, _NAME, SkillRow.id]
        sort = SortKey.NAME
    key = _SORT_COLUMNS[sort]
    primary = key.desc() if query.descending else key.asc()
    # Ties broken by name then id, so the order is stable.
    tail = [SkillRow.id] if sort is SortKey.NAME else [_NAME, SkillRow.id]
    if sort in _NOT_NULL or query.descending:  # SQLite puts NULLs last in a descending order
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


__all__ = ["SkillQuery", "SortKey", "build_select", "chunks", "first_ids", "fts_expression", "id_lists"]
