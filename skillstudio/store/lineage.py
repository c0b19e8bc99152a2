"""Who refines whom among a page of skills, read in a few queries (the browser's name marks).

A person's refinement of an agent's or engine's skill is a new skill with the same name and
source ``human_refined`` whose ``studio_skill_meta.original_id`` names the original; the original
stays, superseded. An engine's ``human_refined`` row may carry no original (D057 has no column
for it): such a refinement's original is unknown, never guessed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import or_, select

from skillstudio.model import SourceKind
from skillstudio.store.database import Database
from skillstudio.store.orm import SkillMetaRow, SkillRow
from skillstudio.store.query import chunks


@dataclass(frozen=True)
class Lineage:
    """The refinement links of some skills, with the names of the skills they link to."""

    originals: dict[str, str | None] = field(default_factory=dict)  # refinement -> its original (None: unknown)
    refinements: dict[str, tuple[str, ...]] = field(default_factory=dict)  # original -> its refinements, oldest first
    names: dict[str, str] = field(default_factory=dict)  # every linked skill still in the library


def read_lineage(database: Database, ids: Sequence[str]) -> Lineage:
    """The refinement links of these skills: which of them refine another, which were refined
    (by skills still in the library; a refinement in the trash supersedes nothing)."""
    originals: dict[str, str | None] = {}
    refinements: dict[str, list[str]] = {}
    with database.read() as session:
        connection = session.connection()
        for chunk in chunks(ids):
            refining = connection.execute(
                select(SkillRow.id, SkillMetaRow.original_id)
                .outerjoin(SkillMetaRow, SkillMetaRow.skill_id == SkillRow.id)
                .where(SkillRow.id.in_(chunk))
                .where(or_(SkillRow.source == SourceKind.HUMAN_REFINED.value, SkillMetaRow.original_id.is_not(None)))
            )
            originals.update(
                (skill_id, original if isinstance(original, str) else None) for skill_id, original in refining
            )
            refined = connection.execute(
                select(SkillMetaRow.original_id, SkillMetaRow.skill_id)
                .join(SkillRow, SkillRow.id == SkillMetaRow.skill_id)
                .where(SkillMetaRow.original_id.in_(chunk))
                .order_by(SkillRow.created_at, SkillRow.id)
            )
            for original, refinement in refined:
                if original is not None:  # never NULL here (IN matches no NULL); the column type allows it
                    refinements.setdefault(original, []).append(refinement)
        linked = sorted({o for o in originals.values() if o} | {r for rs in refinements.values() for r in rs})
        names: dict[str, str] = {}
        for chunk in chunks(linked):
            rows = connection.execute(select(SkillRow.id, SkillRow.name).where(SkillRow.id.in_(chunk)))
            names.update((skill_id, name) for skill_id, name in rows if isinstance(name, str))
    return Lineage(originals, {o: tuple(rs) for o, rs in refinements.items()}, names)


__all__ = ["Lineage", "read_lineage"]
