"""An import's one transaction: the package's key, skills trashed, added and replaced, extras.

Run by :meth:`SkillRepository.import_skills` inside its unit of work (docs/packages.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select, text

from skillstudio.model import ReviewState, Skill, skill_to_document
from skillstudio.store.database import Database
from skillstudio.store.errors import LibraryError
from skillstudio.store.extras import write_extras
from skillstudio.store.migrations import D057_SKILL_COLUMNS
from skillstudio.store.orm import SkillCompositionRow, SkillMetaRow, SkillRow
from skillstudio.store.query import chunks
from skillstudio.store.reviews import back_to_pending
from skillstudio.store.skill_rows import meta_columns, skill_columns, stored_ids
from skillstudio.store.skill_writes import insert_new, rewrite
from skillstudio.store.trash import move_to_trash
from skillstudio.store.types import ImportItem
from skillstudio.store.unit_of_work import UnitOfWork

# (identity, fingerprint, public key, trusted): the key a signed package was signed with.
PackageKey = tuple[str, str, str, bool]


def apply_import(
    work: UnitOfWork,
    added: Sequence[ImportItem],
    replaced: Sequence[ImportItem],
    trashed: Sequence[str],
    message: str,
    package_key: PackageKey | None,
) -> None:
    if package_key is not None:
        _remember_key(work, package_key)
    work.touch(item.skill.id for item in (*added, *replaced))
    work.remove(trashed)
    for skill_id in dict.fromkeys(trashed):
        move_to_trash(work, skill_id, message)
    if added:
        pairs = [(item.skill, item.verifications) for item in added]
        histories = {item.skill.id: item.history for item in added if item.history}
        insert_new(work, pairs, message, "import", histories=histories)
    for item in replaced:
        _replace(work, item.skill, message)
    write_extras(work, [*added, *replaced])


def _remember_key(work: UnitOfWork, package_key: PackageKey) -> None:
    """Record the identity's key if it has none; refuse another key unless the user trusted it.

    Checked inside the transaction, so two imports racing for a new identity cannot both win."""
    identity, fingerprint, public_key, trusted = package_key
    stored = work.session.execute(
        text("SELECT fingerprint FROM studio_package_keys WHERE identity = :i"), {"i": identity}
    ).scalar()
    if stored is not None and stored != fingerprint and not trusted:
        raise LibraryError(f"package {identity}: key {fingerprint} is not the key {stored} that first brought it")
    if stored != fingerprint:
        work.session.execute(
            text(
                "INSERT INTO studio_package_keys(identity, fingerprint, public_key, first_seen) VALUES (:i, :f, :k, :t)"
                " ON CONFLICT (identity) DO UPDATE SET fingerprint = excluded.fingerprint,"
                " public_key = excluded.public_key, first_seen = excluded.first_seen"
            ),
            {"i": identity, "f": fingerprint, "k": public_key, "t": work.now},
        )


def _replace(work: UnitOfWork, skill: Skill, message: str) -> None:
    """Overwrite a stored skill with the imported one, quality included (the import decided so).

    Changed content is reviewed again (pending, with a decision row); unchanged content keeps
    its review decision."""
    current = work.load_valid(skill.id)
    changed = current is None or _content(current) != _content(skill)
    meta = meta_columns(skill)
    if changed:
        meta["review_state"] = ReviewState.PENDING.value
    else:
        meta.pop("review_state")
    columns = [c for c in D057_SKILL_COLUMNS if c != "id"]
    rewrite(work, skill, columns, meta, message, "import", work.action)
    if changed:
        back_to_pending(work, skill.id, message or "content changed by an import")


def _content(skill: Skill) -> dict[str, object]:
    """What a reviewer reviewed: not quality, use, creation or library-local fields."""
    document: dict[str, object] = skill_to_document(skill, local=False)
    for key in ("quality", "use_count", "last_used", "created_at"):
        document.pop(key, None)
    document["composable_with"] = sorted(set(skill.composable_with))
    return document


# What an import compares of a skill (``importer._content``: not quality, use, creation time or
# library-local fields), as the store writes it: D057's columns and our metadata row.
_COMPARED_COLUMNS = ("domain", "name", "description", "body_json", "tags", "game_module", "source", "model_id")
_COMPARED_META = ("created_by", "engine_version", "source_id", "source_author", "original_id")
ContentKey = tuple[object, ...]


def content_key(skill: Skill) -> ContentKey:
    """The compared columns of ``skill`` as the store would write them; the package version is
    left out of ``source_id`` (a new version re-stating a skill does not change it)."""
    columns, meta = skill_columns(skill), meta_columns(skill)
    return _key([columns[name] for name in _COMPARED_COLUMNS], [meta[name] for name in _COMPARED_META])


def _key(columns: Sequence[object], meta: Sequence[object]) -> ContentKey:
    values = [*columns, *meta]
    at = len(columns) + _COMPARED_META.index("source_id")
    source_id = values[at]
    if isinstance(source_id, str) and source_id:
        values[at] = source_id.rsplit("@", 1)[0]
    return tuple(values)


def present_ids(database: Database, skill_ids: Sequence[str]) -> set[str]:
    """Which of these ids the library holds (not the trash)."""
    with database.read() as session:
        return stored_ids(session, skill_ids)


def stored_content_keys(database: Database, skill_ids: Sequence[str]) -> dict[str, tuple[ContentKey, set[str]]]:
    """For each of these stored skills that has a metadata row: its :func:`content_key` as
    stored, and its composition partners. Read from the rows, nothing parsed: when a stored key
    equals an incoming skill's, the stored skill is the one storing that skill wrote, so an
    import need not read it to know it is unchanged."""
    out: dict[str, tuple[ContentKey, set[str]]] = {}
    with database.read() as session:
        for chunk in chunks(skill_ids):
            rows = session.execute(
                select(SkillRow.id, *(getattr(SkillRow, name) for name in _COMPARED_COLUMNS)).where(
                    SkillRow.id.in_(chunk)
                )
            )
            columns = {row[0]: row[1:] for row in rows}
            metas = session.execute(
                select(SkillMetaRow.skill_id, *(getattr(SkillMetaRow, name) for name in _COMPARED_META)).where(
                    SkillMetaRow.skill_id.in_(chunk)
                )
            )
            for skill_id, *meta in metas:
                if skill_id in columns:
                    out[skill_id] = (_key(columns[skill_id], meta), set())
            pairs = session.execute(
                select(SkillCompositionRow.skill_a, SkillCompositionRow.skill_b).where(
                    SkillCompositionRow.skill_a.in_(chunk) | SkillCompositionRow.skill_b.in_(chunk)
                )
            )
            for skill_a, skill_b in pairs:
                if skill_a in out:
                    out[skill_a][1].add(skill_b)
                if skill_b in out:
                    out[skill_b][1].add(skill_a)
    return out


__all__ = ["ContentKey", "PackageKey", "apply_import", "content_key", "present_ids", "stored_content_keys"]
