"""What an import carries beyond D057's row (migration 3, docs/storage.md): origin, frontmatter,
files and the warnings a lenient import found. Written by imports only, inside their transaction.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from sqlalchemy import select

from skillstudio.store.backends import upsert_insert
from skillstudio.store.bulk import binds, execute_many
from skillstudio.store.database import Database
from skillstudio.store.orm import SkillExtrasRow, SkillRow
from skillstudio.store.query import chunks
from skillstudio.store.types import ImportItem, SkillExtras
from skillstudio.store.unit_of_work import UnitOfWork


class Extras:
    """``repository.extras``: the import extras of stored skills."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def get(self, skill_id: str) -> SkillExtras | None:
        return self.many([skill_id]).get(skill_id)

    def many(self, ids: Sequence[str]) -> dict[str, SkillExtras]:
        """Import extras of these skills, by id; skills without any are left out."""
        out: dict[str, SkillExtras] = {}
        with self.database.read() as session:
            for chunk in chunks(ids):
                for row in session.scalars(select(SkillExtrasRow).where(SkillExtrasRow.skill_id.in_(chunk))):
                    out[row.skill_id] = _extras(row)
        return out

    def ids_with_origin(self, prefix: str) -> list[str]:
        """Ids of stored skills whose import origin starts with ``prefix`` (e.g. one package)."""
        with self.database.read() as session:
            return list(
                session.scalars(
                    select(SkillExtrasRow.skill_id)
                    .join(SkillRow, SkillRow.id == SkillExtrasRow.skill_id)
                    .where(SkillExtrasRow.origin.startswith(prefix, autoescape=True))
                    .order_by(SkillExtrasRow.skill_id)
                )
            )


def write_extras(work: UnitOfWork, items: Sequence[ImportItem]) -> None:
    """Store the extras of imported skills (those that carry any), in one executemany; an orphan
    row (its skill deleted by an engine) is replaced."""
    rows = [_extras_row(item.skill.id, item.extras) for item in items if item.extras is not None]
    if rows:
        statement = upsert_insert(work.session, SkillExtrasRow).values(binds(rows[0]))
        replaced = {key: statement.excluded[key] for key in rows[0] if key != "skill_id"}
        upsert = statement.on_conflict_do_update(index_elements=["skill_id"], set_=replaced)
        execute_many(work.session.connection(), upsert, rows)


def _extras(row: SkillExtrasRow) -> SkillExtras:
    return SkillExtras(
        origin=row.origin or "",
        frontmatter=json.loads(row.frontmatter or "{}"),
        files=json.loads(row.files or "{}"),
        warnings=tuple(json.loads(row.warnings or "[]")),
    )


def _extras_row(skill_id: str, extras: SkillExtras) -> dict[str, object]:
    # Most imported skills have none of these: their text is known without the encoder.
    return {
        "skill_id": skill_id,
        "origin": extras.origin,
        "frontmatter": json.dumps(extras.frontmatter, ensure_ascii=False, sort_keys=True)
        if extras.frontmatter
        else "{}",
        "files": json.dumps(extras.files, ensure_ascii=False, sort_keys=True) if extras.files else "{}",
        "warnings": json.dumps(list(extras.warnings), ensure_ascii=False) if extras.warnings else "[]",
    }


__all__ = ["Extras", "write_extras"]
