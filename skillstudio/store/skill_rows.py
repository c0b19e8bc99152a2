"""A skill as D057's row (plus our metadata row) holds it, both ways, read defensively.

Rows are untrusted: another program (an engine, a buggy writer) may have stored anything. A row
that is not a valid skill raises :class:`InvalidStoredSkill` naming every problem by its field
path; JSON nested too deeply is reported without ever being handed to ``json.loads``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from sqlalchemy import Row, select
from sqlalchemy.orm import Session

from skillstudio.model import Issue, Skill, ValidationError, body_to_json, parse_skill
from skillstudio.store.errors import InvalidStoredSkill, SkillNotFound
from skillstudio.store.migrations import D057_SKILL_COLUMNS
from skillstudio.store.orm import SkillCompositionRow, SkillMetaRow, SkillRow, SkillVersionRow, TrashRow
from skillstudio.store.query import chunks
from skillstudio.store.types import Composition

# A stored row as a mapped object or as a Core row of its table (the same attribute names).
StoredSkill = SkillRow | Row[Any]
StoredMeta = SkillMetaRow | Row[Any]
StoredPair = SkillCompositionRow | Row[Any]
_SKILLS = SkillRow.__table__
_METAS = SkillMetaRow.__table__
_PAIRS = SkillCompositionRow.__table__

# studio_skill_meta's columns besides skill_id, as the trash keeps them.
META_COLUMNS = ("created_by", "engine_version", "source_id", "source_author", "original_id", "review_state")


def body_hash(skill: Skill) -> str:
    """Identifies the body evidence was gathered with; a changed body earns no old credit."""
    return hashlib.sha256(body_to_json(skill.body).encode("utf-8")).hexdigest()


# --- model -> row ---------------------------------------------------------------------------------


def skill_columns(skill: Skill, *, body_json: str | None = None) -> dict[str, object]:
    """D057's row; ``body_json``: the body's :func:`body_to_json` when the caller has it already."""
    quality = skill.quality
    return {
        "id": skill.id,
        "domain": skill.domain.value,
        "name": skill.name,
        "description": skill.description,
        "body_json": body_to_json(skill.body) if body_json is None else body_json,
        "tags": json.dumps(list(skill.tags), ensure_ascii=False),
        "game_module": skill.provenance.game_module,
        "source": skill.provenance.source.kind.value,
        "model_id": skill.provenance.model_id,
        "verification_count": quality.verification_count,
        "success_rate": quality.success_rate,
        "average_rating": quality.average_rating,
        "confidence": quality.confidence.value,
        "use_count": skill.use_count,
        "created_at": skill.created_at,
        "last_used": skill.last_used,
        "last_verified": quality.last_verified,
    }


def meta_columns(skill: Skill) -> dict[str, object]:
    source = skill.provenance.source
    return {
        "skill_id": skill.id,
        "created_by": skill.created_by,
        "engine_version": skill.provenance.engine_version,
        "source_id": source.source_id,
        "source_author": source.author,
        "original_id": source.original_id,
        "review_state": skill.review_state.value if skill.review_state else None,
    }


# --- row -> model ---------------------------------------------------------------------------------


def load_skill(session: Session, skill_id: str) -> Skill:
    """The stored skill; SkillNotFound (saying whether it is in the trash) or InvalidStoredSkill."""
    row = session.get(SkillRow, skill_id)
    if row is None:
        raise SkillNotFound(skill_id, in_trash=session.get(TrashRow, skill_id) is not None)
    return parse_row(skill_id, _stored_document(session, row))


def load_valid_skill(session: Session, skill_id: str) -> Skill | None:
    """The stored skill, or None when there is no row or the row is not a valid skill."""
    row = session.get(SkillRow, skill_id)
    if row is None:
        return None
    try:
        return parse_row(skill_id, _stored_document(session, row))
    except InvalidStoredSkill:
        return None


def _stored_document(session: Session, row: SkillRow) -> dict[str, object]:
    meta = session.get(SkillMetaRow, row.id)
    version = session.get(SkillVersionRow, row.id)
    partners = [c.partner_id for c in read_compositions(session, row.id)]
    return row_document(row, meta, version.version if version else 0, partners)


def row_document(row: StoredSkill, meta: StoredMeta | None, version: int, partners: list[str]) -> dict[str, object]:
    """The flat document :func:`parse_skill` reads, from a row as any writer left it."""
    document: dict[str, object] = {column: getattr(row, column) for column in D057_SKILL_COLUMNS}
    # D057's columns with defaults but no NOT NULL: NULL means the default.
    for column, default in (
        ("verification_count", 0),
        ("success_rate", 0.0),
        ("use_count", 0),
        ("confidence", "tentative"),
    ):
        if document[column] is None:
            document[column] = default
    document["version"] = version
    document["composable_with"] = partners
    if meta is not None:
        document["created_by"] = meta.created_by
        document["engine_version"] = meta.engine_version
        document["source_id"] = meta.source_id
        document["author"] = meta.source_author
        document["original_id"] = meta.original_id
        document["review_state"] = meta.review_state
    return document


class RowParser:
    """:func:`parse_row` with a memory: a row read again as it was (the same document) gives the
    skill parsed before, unparsed. A run reads its skills at the start and again inside each
    write; parsing (validation included) costs more than all the queries."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[dict[str, object], Skill]] = {}

    def __call__(self, skill_id: str, document: dict[str, object]) -> Skill:
        seen = self._seen.get(skill_id)
        if seen is not None and seen[0] == document:
            return seen[1]
        skill = parse_row(skill_id, document)
        self._seen[skill_id] = (document, skill)
        return skill

    def forget(self, skill_ids: Iterable[str]) -> None:
        for skill_id in skill_ids:
            self._seen.pop(skill_id, None)


def load_many(
    session: Session,
    skill_ids: Sequence[str],
    parse: Callable[[str, dict[str, object]], Skill] | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> list[tuple[str, Skill | SkillNotFound | InvalidStoredSkill]]:
    """Each id with its skill, or the error :func:`load_skill` would raise for it, in the given
    order: a few queries per 500 ids instead of four per skill. ``parse``: :func:`parse_row`,
    or a :class:`RowParser` that remembers. ``progress(done, total)`` is told before each 500
    and at the end (an exception it raises stops the read)."""
    parse = parse or parse_row
    out: list[tuple[str, Skill | SkillNotFound | InvalidStoredSkill]] = []
    for chunk in chunks(skill_ids):
        if progress is not None:
            progress(len(out), len(skill_ids))
        # Core rows, not ORM objects: a read builds no identity map (a third of the queries' time),
        # and a Row names its columns as the mapped classes do, so both read the same way below.
        rows = {row.id: row for row in session.execute(select(_SKILLS).where(_SKILLS.c.id.in_(chunk)))}
        metas = {m.skill_id: m for m in session.execute(select(_METAS).where(_METAS.c.skill_id.in_(chunk)))}
        stored_versions = versions(session, chunk)
        pairs: dict[str, list[StoredPair]] = {}
        for pair in session.execute(select(_PAIRS).where(_PAIRS.c.skill_a.in_(chunk) | _PAIRS.c.skill_b.in_(chunk))):
            pairs.setdefault(pair.skill_a, []).append(pair)
            if pair.skill_b != pair.skill_a:
                pairs.setdefault(pair.skill_b, []).append(pair)
        for skill_id in chunk:
            row = rows.get(skill_id)
            if row is None:
                in_trash = session.get(TrashRow, skill_id) is not None
                out.append((skill_id, SkillNotFound(skill_id, in_trash=in_trash)))
                continue
            partners = [c.partner_id for c in compositions_of(skill_id, pairs.get(skill_id, []))]
            document = row_document(row, metas.get(skill_id), stored_versions.get(skill_id, 0), partners)
            try:
                out.append((skill_id, parse(skill_id, document)))
            except InvalidStoredSkill as error:
                out.append((skill_id, error))
    if progress is not None:
        progress(len(out), len(skill_ids))
    return out


def stored_ids(session: Session, skill_ids: Iterable[str]) -> set[str]:
    """Which of these ids the library holds (not the trash), from the primary key alone."""
    present: set[str] = set()
    for chunk in chunks(sorted(set(skill_ids))):
        present.update(session.scalars(select(SkillRow.id).where(SkillRow.id.in_(chunk))))
    return present


def versions(session: Session, ids: Sequence[str]) -> dict[str, int]:
    """The content version of each of these skills (D057's trigger-kept skill_versions)."""
    out: dict[str, int] = {}
    for chunk in chunks(ids):
        rows = session.execute(
            select(SkillVersionRow.skill_id, SkillVersionRow.version).where(SkillVersionRow.skill_id.in_(chunk))
        )
        out.update((skill_id, version) for skill_id, version in rows)
    return out


# --- compositions ---------------------------------------------------------------------------------


def read_compositions(session: Session, skill_id: str) -> list[Composition]:
    rows = session.scalars(
        select(SkillCompositionRow).where(
            (SkillCompositionRow.skill_a == skill_id) | (SkillCompositionRow.skill_b == skill_id)
        )
    )
    return compositions_of(skill_id, rows)


def compositions_of(skill_id: str, rows: Iterable[StoredPair]) -> list[Composition]:
    """The skill's partners, one per partner (the pair's higher count), most successful first."""
    by_partner: dict[str, Composition] = {}
    for row in rows:
        first = row.skill_a == skill_id
        partner = row.skill_b if first else row.skill_a
        count = row.success_count or 0
        known = by_partner.get(partner)
        if known is None or count > known.success_count:
            by_partner[partner] = Composition(partner, count, first)
    return sorted(by_partner.values(), key=lambda c: (-c.success_count, c.partner_id))


# --- untrusted JSON columns -----------------------------------------------------------------------

# D057's JSON text columns. Another program may have written anything there; json.loads
# recurses per nesting level, so text nested deeper than this is refused before it is parsed.
# A valid body nests far less (scene values are capped at MAX_JSON_DEPTH inside a ~5-deep body).
MAX_ROW_JSON_DEPTH = 64
# Each column with a stand-in that parses without recursion and is always reported at its path.
_JSON_COLUMNS = {"body_json": "{}", "tags": "[]"}
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_JSON_BRACKET = re.compile(r"[\[\]{}]")


def too_deep(text: object, limit: int = MAX_ROW_JSON_DEPTH) -> bool:
    """Whether JSON text nests arrays/objects deeper than ``limit`` (brackets in strings don't
    count). Linear and recursion-free; most rows are decided by two ``str.count`` calls."""
    if not isinstance(text, str) or text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for bracket in _JSON_BRACKET.findall(_JSON_STRING.sub("", text)):
        if bracket in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def deep_issue(column: str) -> Issue:
    return Issue(column, f"is nested deeper than {MAX_ROW_JSON_DEPTH} levels; not read")


def parse_row(skill_id: str, document: dict[str, object]) -> Skill:
    """The skill a row holds, or InvalidStoredSkill naming every problem with its field path.

    JSON columns nested too deeply are never handed to ``json.loads``: they are reported, and
    the rest of the row is still checked so the user sees every problem at once.
    """
    deep = [column for column in _JSON_COLUMNS if too_deep(document.get(column))]
    if deep:
        document = {**document, **{column: _JSON_COLUMNS[column] for column in deep}}
    try:
        skill = parse_skill(document)
    except ValidationError as error:
        issues = [
            issue
            for issue in error.issues
            if not any(issue.path == c or issue.path.startswith((f"{c}.", f"{c}[")) for c in deep)
        ]
        raise InvalidStoredSkill(skill_id, ValidationError([*map(deep_issue, deep), *issues])) from None
    except RecursionError:  # belt and braces: nothing above should recurse this far
        issue = Issue("", f"nested deeper than {MAX_ROW_JSON_DEPTH} levels somewhere; not read")
        raise InvalidStoredSkill(skill_id, ValidationError([issue])) from None
    if deep:  # deep tags alone: the stand-in parsed, the row is still not valid
        raise InvalidStoredSkill(skill_id, ValidationError(map(deep_issue, deep)))
    return skill


__all__ = [
    "MAX_ROW_JSON_DEPTH",
    "META_COLUMNS",
    "RowParser",
    "body_hash",
    "compositions_of",
    "deep_issue",
    "load_many",
    "load_skill",
    "load_valid_skill",
    "meta_columns",
    "parse_row",
    "read_compositions",
    "row_document",
    "skill_columns",
    "stored_ids",
    "too_deep",
    "versions",
]
