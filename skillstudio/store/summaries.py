"""Rows of a skill list, read from D057's columns only (never ``body_json``): cheap for 100k rows.

Columns are shown as any writer left them: a value of the wrong type or range becomes unknown
(None; "?" for text) and is named in :attr:`SkillSummary.issues`, never raised on.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from skillstudio.model import Confidence
from skillstudio.model.validation import Checker, describe
from skillstudio.store.orm import SkillMetaRow, SkillRow
from skillstudio.store.query import chunks
from skillstudio.store.skill_rows import deep_issue, too_deep
from skillstudio.store.types import SkillSummary

_SUMMARY_COLUMNS = (
    SkillRow.id,
    SkillRow.name,
    SkillRow.domain,
    SkillRow.game_module,
    SkillRow.confidence,
    SkillRow.success_rate,
    SkillRow.verification_count,
    SkillRow.average_rating,
    SkillRow.use_count,
    SkillRow.source,
    SkillMetaRow.created_by,
    SkillRow.created_at,
    SkillRow.last_verified,
    SkillRow.last_used,
    SkillRow.tags,
    SkillMetaRow.review_state,
)

_U32_MAX = 2**32 - 1
_CONFIDENCES = frozenset(member.value for member in Confidence)


def read_summaries(session: Session, ids: Sequence[str]) -> list[SkillSummary]:
    """Rows for these ids, in the given order; ids no longer present are skipped."""
    found: dict[str, SkillSummary] = {}
    connection = session.connection()
    for chunk in chunks(ids):
        rows = connection.execute(
            select(*_SUMMARY_COLUMNS)
            .outerjoin(SkillMetaRow, SkillMetaRow.skill_id == SkillRow.id)
            .where(SkillRow.id.in_(chunk))
        )
        for row in rows.all():
            found[row.id] = _summary(row)
    return [found[skill_id] for skill_id in ids if skill_id in found]


def _summary(row: Any) -> SkillSummary:  # a Row of _SUMMARY_COLUMNS
    tags, tags_problem = tags_column(row.tags)
    rate, count, rating, uses = row.success_rate, row.verification_count, row.average_rating, row.use_count
    if (  # the fast path, for rows as SkillStudio (or a well-behaved engine) writes them
        tags_problem is None
        and type(row.name) is str
        and type(row.domain) is str
        and type(row.game_module) is str
        and type(row.source) is str
        and type(row.created_at) is str
        and (row.confidence is None or row.confidence in _CONFIDENCES)
        and (rate is None or (type(rate) is float and 0.0 <= rate <= 1.0))
        and (rating is None or (type(rating) is float and 1.0 <= rating <= 5.0))
        and (count is None or (type(count) is int and 0 <= count <= _U32_MAX))
        and (uses is None or (type(uses) is int and 0 <= uses <= _U32_MAX))
        and all(
            value is None or type(value) is str
            for value in (row.created_by, row.last_verified, row.last_used, row.review_state)
        )
    ):
        return SkillSummary(
            id=row.id,
            name=row.name,
            domain=row.domain,
            game_module=row.game_module,
            confidence=row.confidence or "tentative",
            success_rate=rate,
            verification_count=count,
            average_rating=rating,
            use_count=uses,
            source=row.source,
            created_by=row.created_by or "unknown",
            created_at=row.created_at,
            last_verified=row.last_verified,
            last_used=row.last_used,
            tags=tags,
            review_state=row.review_state,
        )
    return _checked_summary(row, tags, tags_problem)


def _checked_summary(row: Any, tags: tuple[str, ...], tags_problem: str | None) -> SkillSummary:
    check = Checker()

    def text(column: str, *, missing: str, bad: str) -> str:
        """The column's text; ``missing`` for NULL; ``bad`` (reported) for a number or blob."""
        value = getattr(row, column)
        if isinstance(value, str):
            return value
        if value is None:
            return missing
        check.fail(column, f"expected text, got {_described(value)}")
        return bad

    def optional_text(column: str) -> str | None:
        value = getattr(row, column)
        if value is None or isinstance(value, str):
            return value
        check.fail(column, f"expected text, got {_described(value)}")
        return None

    def number(column: str, lo: float, hi: float) -> float | None:
        value = getattr(row, column)
        return None if value is None else check.number(value, column, lo, hi)

    def whole(column: str) -> int | None:
        value = getattr(row, column)
        return None if value is None else check.integer(value, column, 0, _U32_MAX)

    confidence = text("confidence", missing="tentative", bad="?")
    if isinstance(row.confidence, str):
        try:
            Confidence.parse(confidence)
        except ValueError:
            check.fail("confidence", f"{describe(confidence)} is not one of {Confidence.choices()}")
    if tags_problem is not None:
        check.fail("tags", tags_problem)
    return SkillSummary(
        id=row.id,
        name=text("name", missing="?", bad="?"),
        domain=text("domain", missing="?", bad="?"),
        game_module=text("game_module", missing="?", bad="?"),
        confidence=confidence,
        success_rate=number("success_rate", 0.0, 1.0),
        verification_count=whole("verification_count"),
        average_rating=number("average_rating", 1.0, 5.0),
        use_count=whole("use_count"),
        source=text("source", missing="?", bad="?"),
        created_by=text("created_by", missing="unknown", bad="unknown"),
        created_at=text("created_at", missing="?", bad="?"),
        last_verified=optional_text("last_verified"),
        last_used=optional_text("last_used"),
        tags=tags,
        review_state=optional_text("review_state"),
        issues=tuple(check.issues),
    )


def _described(value: object) -> str:
    if isinstance(value, bytes):
        return f"a blob of {len(value)} bytes"
    return {int: "a whole number", float: "a number"}.get(type(value), type(value).__name__)


def tags_column(text: object) -> tuple[tuple[str, ...], str | None]:
    """The text tags of D057's ``tags`` column (a JSON array), and what was wrong with it (None
    if nothing)."""
    if text is not None and not isinstance(text, str):
        return (), f"expected a JSON array, got {_described(text)}"
    if too_deep(text):
        return (), deep_issue("tags").message
    try:
        tags = json.loads(text or "[]")
    except (ValueError, RecursionError):
        return (), "is not valid JSON"
    if not isinstance(tags, list):
        return (), f"expected a JSON array, got {describe(tags)}"
    return tuple(tag for tag in tags if isinstance(tag, str)), None


__all__ = ["read_summaries", "tags_column"]
