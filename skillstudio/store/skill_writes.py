"""Writing skills inside a unit of work: new rows, guarded rewrites of stored ones, compositions.

The steps the front door's create/update/import and the agents' update share. Each runs in the
caller's :class:`UnitOfWork` and writes its revisions and audit entries there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from sqlalchemy import Connection, bindparam, insert, select, update
from sqlalchemy.orm import Session

from skillstudio.model import Issue, Skill, serde_body_to_json, skill_to_document
from skillstudio.model.evidence import VerificationRecord
from skillstudio.store.errors import ConflictError, InvalidSkillData, SkillExists
from skillstudio.store.events import AuditAction
from skillstudio.store.evidence import verification_columns
from skillstudio.store.migrations import CONTENT_COLUMNS
from skillstudio.store.orm import (
    AuditRow,
    Base,
    RevisionRow,
    SkillCompositionRow,
    SkillMetaRow,
    SkillRow,
    TrashRow,
    VerificationRow,
)
from skillstudio.store.query import chunks
from skillstudio.store.skill_rows import meta_columns, skill_columns, versions
from skillstudio.store.unit_of_work import UnitOfWork


def refuse_duplicate_ids(skills: Sequence[Skill]) -> None:
    seen: set[str] = set()
    for index, skill in enumerate(skills):
        if skill.id in seen:
            raise InvalidSkillData([Issue(f"[{index}].id", f"{skill.id!r} appears twice")])
        seen.add(skill.id)


def insert_new(
    work: UnitOfWork,
    pairs: Sequence[tuple[Skill, Sequence[VerificationRecord]]],
    message: str,
    revision_action: str,
    *,
    histories: Mapping[str, Sequence[Skill]] | None = None,
) -> None:
    """Insert new skills with their metadata, compositions, evidence, revisions and audit
    entries (``work.action``); SkillExists if an id is taken or in the trash."""
    session = work.session
    skills = [skill for skill, _ in pairs]
    ids = [skill.id for skill in skills]
    for chunk in chunks(ids):
        taken = session.scalars(select(SkillRow.id).where(SkillRow.id.in_(chunk))).first()
        if taken is not None:
            raise SkillExists(taken)
        trashed = session.scalars(select(TrashRow.skill_id).where(TrashRow.skill_id.in_(chunk))).first()
        if trashed is not None:
            raise SkillExists(trashed, in_trash=True)
    connection = session.connection()
    # Each skill is serialised once: its document gives the row's body_json and the revision.
    documents = [skill_to_document(skill) for skill in skills]
    _insert_rows(
        connection,
        SkillRow,
        [skill_columns(s, body_json=serde_body_to_json(d["body"])) for s, d in zip(skills, documents, strict=True)],
    )
    _insert_rows(connection, SkillMetaRow, [meta_columns(skill) for skill in skills])
    check_partners(session, skills)
    # New ids cannot be in a pair yet (D057's foreign keys), so no existing pair to skip.
    _insert_rows(connection, SkillCompositionRow, _new_compositions(session, skills, check_existing=False))
    records = [verification_columns(skill, record) for skill, records in pairs for record in records]
    _insert_rows(connection, VerificationRow, records)
    stored_versions = versions(session, ids)  # set by the insert trigger: 1 unless an id was used before
    revisions, audits = [], []
    for skill, document in zip(skills, documents, strict=True):
        earlier = (histories or {}).get(skill.id, ())
        for number, old in enumerate(earlier, start=1):  # content versions before this store
            note = f"earlier version {number} of {len(earlier) + 1}, from the import"
            revisions.append(work.revision_row(replace(old, version=0), number, revision_action, note))
        document["version"] = stored_versions[skill.id]  # the skill as stored
        number = len(earlier) + 1
        revisions.append(work.document_revision_row(document, number, revision_action, message))
        audits.append(work.audit_row(work.action, skill.id, number, {"name": skill.name}))
    _insert_rows(connection, RevisionRow, revisions)
    _insert_rows(connection, AuditRow, audits)


def update_one(work: UnitOfWork, skill: Skill, message: str) -> Skill:
    """Store an edited skill (``skill.update``): content only; quality, use count and review
    state stay as stored, so an edit never rolls them back."""
    meta = meta_columns(skill)
    meta.pop("review_state")
    return rewrite(work, skill, CONTENT_COLUMNS, meta, message, "update", AuditAction.UPDATE)


def rewrite(
    work: UnitOfWork,
    skill: Skill,
    columns: Sequence[str],
    meta: dict[str, object],
    message: str,
    revision_action: str,
    audit_action: AuditAction,
) -> Skill:
    """Overwrite a stored skill's ``columns`` and metadata if ``skill.version`` is current,
    with a revision and an audit entry; ConflictError otherwise."""
    session = work.session
    current = work.load_valid(skill.id)
    if current is None or skill.version != current.version:
        raise ConflictError(yours=skill, theirs=current or work.load(skill.id))
    work.record_untracked(skill.id, current)
    check_partners(session, [skill])
    values = skill_columns(skill)
    session.execute(update(SkillRow).where(SkillRow.id == skill.id).values({c: values[c] for c in columns}))
    existing = session.get(SkillMetaRow, skill.id)
    if existing is None:  # a skill an engine wrote has no metadata row yet
        session.add(SkillMetaRow(**meta))
    else:
        for column, value in meta.items():
            setattr(existing, column, value)
    session.flush()
    _sync_compositions(session, skill)
    stored = work.load(skill.id)
    number = work.revision(stored, revision_action, message)
    work.audit(audit_action, skill.id, number, {"changed": _changed_fields(current, stored)})
    return stored


def check_partners(session: Session, skills: Sequence[Skill]) -> None:
    """Every composable_with id must name a stored skill (D057's foreign key would refuse it)."""
    wanted = sorted({partner for skill in skills for partner in skill.composable_with})
    present: set[str] = set()
    for chunk in chunks(wanted):
        present.update(session.scalars(select(SkillRow.id).where(SkillRow.id.in_(chunk))))
    for skill in skills:
        issues = [
            Issue(f"composable_with[{index}]", f"no skill with id {partner!r} in this library")
            for index, partner in enumerate(skill.composable_with)
            if partner not in present
        ]
        if issues:
            raise InvalidSkillData(issues, context=f"skill {skill.id!r}")


def _new_compositions(
    session: Session, skills: Sequence[Skill], *, check_existing: bool = True
) -> list[dict[str, object]]:
    seen: set[frozenset[str]] = set()
    rows = []
    for skill in skills:
        for partner in skill.composable_with:
            pair = frozenset((skill.id, partner))
            if pair in seen:
                continue
            seen.add(pair)
            existing = check_existing and session.scalar(
                select(SkillCompositionRow.skill_a).where(
                    ((SkillCompositionRow.skill_a == skill.id) & (SkillCompositionRow.skill_b == partner))
                    | ((SkillCompositionRow.skill_a == partner) & (SkillCompositionRow.skill_b == skill.id))
                )
            )
            if not existing:
                rows.append({"skill_a": skill.id, "skill_b": partner, "success_count": 0})
    return rows


def _sync_compositions(session: Session, skill: Skill) -> None:
    wanted = set(skill.composable_with)
    for row in session.scalars(
        select(SkillCompositionRow).where(
            (SkillCompositionRow.skill_a == skill.id) | (SkillCompositionRow.skill_b == skill.id)
        )
    ).all():
        partner = row.skill_b if row.skill_a == skill.id else row.skill_a
        if partner not in wanted:
            session.delete(row)
    session.flush()
    rows = _new_compositions(session, [skill])
    if rows:
        session.execute(insert(SkillCompositionRow), rows)


def _changed_fields(before: Skill, after: Skill) -> list[str]:
    old, new = skill_to_document(before, local=False), skill_to_document(after, local=False)
    return sorted(key for key in new if old.get(key) != new[key])


def _insert_rows(connection: Connection, table: type[Base], rows: list[dict[str, object]]) -> None:
    """One driver executemany per table, of plain tuples: SQLAlchemy's executemany spends as long
    preparing 5,000 parameter sets as SQLite takes to insert them. Every row has the same keys."""
    if not rows:
        return
    compiled = (
        insert(table.__table__).values({key: bindparam(key) for key in rows[0]}).compile(dialect=connection.dialect)
    )
    if compiled.positiontup is None:  # a named paramstyle: the driver takes the dicts
        connection.exec_driver_sql(str(compiled), rows)
    else:
        order = compiled.positiontup
        connection.exec_driver_sql(str(compiled), [tuple(row[key] for key in order) for row in rows])


__all__ = ["check_partners", "insert_new", "refuse_duplicate_ids", "rewrite", "update_one"]
