"""Writing skills inside a unit of work: new rows, guarded rewrites of stored ones, compositions.

The steps the front door's create/update/import and the agents' update share. Each runs in the
caller's :class:`UnitOfWork` and writes its revisions and audit entries there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import replace

from sqlalchemy import bindparam, delete, insert, select, update
from sqlalchemy.orm import Session

from skillstudio.model import Issue, Skill, serde_body_to_json, skill_to_document
from skillstudio.model.evidence import VerificationRecord
from skillstudio.store.bulk import execute_many, insert_rows, update_rows
from skillstudio.store.errors import ConflictError, InvalidSkillData, SkillExists
from skillstudio.store.events import AuditAction
from skillstudio.store.evidence import verification_columns
from skillstudio.store.migrations import CONTENT_COLUMNS
from skillstudio.store.orm import (
    AuditRow,
    RevisionRow,
    SkillCompositionRow,
    SkillMetaRow,
    SkillRow,
    TrashRow,
    VerificationRow,
)
from skillstudio.store.query import chunks
from skillstudio.store.skill_rows import (
    compositions_of,
    load_many,
    meta_columns,
    skill_columns,
    stored_ids,
    versions,
)
from skillstudio.store.snapshots import encode_snapshots
from skillstudio.store.types import JsonInput
from skillstudio.store.unit_of_work import EXTERNAL, UnitOfWork, latest_revisions, untracked_revision


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
    bodies = [serde_body_to_json(document["body"]) for document in documents]
    with ExitStack() as inserting:
        inserting.enter_context(work.backend.inserting_skills(connection, len(skills)))
        work.backend.insert_skill_rows(
            connection, [skill_columns(s, body_json=body) for s, body in zip(skills, bodies, strict=True)]
        )
        work.backend.insert_triggered_rows(connection, SkillMetaRow, [meta_columns(skill) for skill in skills])
        stored_versions = versions(session, ids)  # set by the insert trigger: 1 unless an id was used before
        # (document, number, message, its body_json where the row has it)
        revised: list[tuple[dict[str, JsonInput], int, str, str | None]] = []
        audits = []
        for skill, document, body in zip(skills, documents, bodies, strict=True):
            earlier = (histories or {}).get(skill.id, ())
            for number, old in enumerate(earlier, start=1):  # content versions before this store
                note = f"earlier version {number} of {len(earlier) + 1}, from the import"
                revised.append((skill_to_document(replace(old, version=0)), number, note, None))
            document["version"] = stored_versions[skill.id]  # the skill as stored
            number = len(earlier) + 1
            revised.append((document, number, message, body))
            audits.append(work.audit_row(work.action, skill.id, number, {"name": skill.name}))
        # What the backend does once the rows are in (SQLite builds its indexes again) runs
        # while the snapshots compress: both leave the GIL, so they share the cores.
        snapshots = encode_snapshots(
            [document for document, *_ in revised], body_jsons=[body for *_, body in revised], meanwhile=inserting.close
        )
    check_partners(session, skills)
    # New ids cannot be in a pair yet (D057's foreign keys), so no existing pair to skip.
    insert_rows(connection, SkillCompositionRow, _new_compositions(session, skills, check_existing=False))
    records = [verification_columns(skill, record) for skill, records in pairs for record in records]
    insert_rows(connection, VerificationRow, records)
    revisions = [
        work.document_revision_row(document, number, revision_action, note, snapshot=snapshot)
        for (document, number, note, _), snapshot in zip(revised, snapshots, strict=True)
    ]
    insert_rows(connection, RevisionRow, revisions)
    insert_rows(connection, AuditRow, audits)


def update_one(work: UnitOfWork, skill: Skill, message: str) -> Skill:
    """Store an edited skill (``skill.update``): content only; quality, use count and review
    state stay as stored, so an edit never rolls them back."""
    meta = meta_columns(skill)
    meta.pop("review_state")
    return rewrite(work, skill, CONTENT_COLUMNS, meta, message, "update", AuditAction.UPDATE, only_changed=True)


def update_distinct(work: UnitOfWork, skills: Sequence[Skill], message: str) -> list[Skill]:
    """:func:`update_one` for each of these skills (distinct ids), in order, with a few
    statements per 500 skills instead of a dozen per skill (a bulk retag of 10,000): the same
    rows, revisions, audit entries and errors as updating them one by one."""
    session = work.session
    ids = [skill.id for skill in skills]
    found = dict(load_many(session, ids))
    present = _stored_partners(session, skills)
    currents: dict[str, Skill] = {}
    for skill in skills:  # update_one's checks, in its order
        current = found[skill.id]
        if not isinstance(current, Skill) or skill.version != current.version:
            raise ConflictError(yours=skill, theirs=current if isinstance(current, Skill) else work.load(skill.id))
        _check_partners_of(skill, present)
        currents[skill.id] = current
    connection = session.connection()
    rows = [skill_columns(skill) for skill in skills]
    written = changed_columns(session, rows, CONTENT_COLUMNS)
    work.backend.update_skill_rows(connection, [{"id": row["id"], **{c: row[c] for c in written}} for row in rows])
    _write_meta(session, skills)
    partners_before, partners_after = _sync_many_compositions(session, skills)
    reread = dict(load_many(session, ids))  # what update_one's work.load read back
    latest = latest_revisions(session, ids)
    revisions, audits, stored = [], [], []
    for skill in skills:
        # As update_one loaded it at its turn: earlier skills of the batch may have changed its pairs.
        current = replace(currents[skill.id], composable_with=partners_before[skill.id])
        number, snapshot_version = latest.get(skill.id, (0, None))
        untracked = untracked_revision(snapshot_version, current.version)
        if untracked is not None:  # what work.record_untracked writes
            number += 1
            revisions.append(work.revision_row(current, number, *untracked, actor=EXTERNAL))
        after = reread[skill.id]
        if not isinstance(after, Skill):
            raise after
        after = replace(after, composable_with=partners_after[skill.id])
        number += 1
        revisions.append(work.revision_row(after, number, "update", message))
        audits.append(
            work.audit_row(AuditAction.UPDATE, skill.id, number, {"changed": _changed_fields(current, after)})
        )
        stored.append(after)
    insert_rows(connection, RevisionRow, revisions)
    insert_rows(connection, AuditRow, audits)
    return stored


def _write_meta(session: Session, skills: Sequence[Skill]) -> None:
    """update_one's metadata: every column but review_state; a row for a skill that had none."""
    have: set[str] = set()
    for chunk in chunks([skill.id for skill in skills]):
        have.update(session.scalars(select(SkillMetaRow.skill_id).where(SkillMetaRow.skill_id.in_(chunk))))
    metas = [meta_columns(skill) for skill in skills]
    for meta in metas:
        meta.pop("review_state")
    connection = session.connection()
    insert_rows(connection, SkillMetaRow, [meta for meta in metas if meta["skill_id"] not in have])
    update_rows(connection, SkillMetaRow, ("skill_id",), [meta for meta in metas if meta["skill_id"] in have])


def _sync_many_compositions(
    session: Session, skills: Sequence[Skill]
) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """:func:`_sync_compositions` of each skill in turn, played out in memory over the pairs
    they touch, then written as one delete and one insert. Returns each skill's partners just
    before and just after its own turn (what update_one read, before and after its write)."""
    ids = [skill.id for skill in skills]
    pairs: dict[tuple[str, str], int] = {}
    touching: dict[str, set[tuple[str, str]]] = {}  # each skill's pairs, so a turn costs its own pairs

    def add(pair: tuple[str, str], count: int) -> None:
        pairs[pair] = count
        for skill_id in pair:
            touching.setdefault(skill_id, set()).add(pair)

    for chunk in chunks(ids):
        for row in session.scalars(
            select(SkillCompositionRow).where(
                SkillCompositionRow.skill_a.in_(chunk) | SkillCompositionRow.skill_b.in_(chunk)
            )
        ):
            add((row.skill_a, row.skill_b), row.success_count or 0)
    original = dict(pairs)
    deleted: set[tuple[str, str]] = set()
    before: dict[str, tuple[str, ...]] = {}
    after: dict[str, tuple[str, ...]] = {}

    def partners_of(skill_id: str) -> tuple[str, ...]:
        rows = [
            SkillCompositionRow(skill_a=a, skill_b=b, success_count=pairs[(a, b)])
            for a, b in touching.get(skill_id, ())
        ]
        return tuple(c.partner_id for c in compositions_of(skill_id, rows))

    for skill in skills:
        before[skill.id] = partners_of(skill.id)
        wanted = set(skill.composable_with)
        for pair in list(touching.get(skill.id, ())):
            if (pair[1] if pair[0] == skill.id else pair[0]) not in wanted:
                del pairs[pair]
                for skill_id in pair:
                    touching[skill_id].discard(pair)
                if pair in original:
                    deleted.add(pair)
        for partner in skill.composable_with:
            if (skill.id, partner) not in pairs and (partner, skill.id) not in pairs:
                add((skill.id, partner), 0)
        after[skill.id] = partners_of(skill.id)
    connection = session.connection()
    execute_many(
        connection,
        delete(SkillCompositionRow).where(
            (SkillCompositionRow.skill_a == bindparam("a")) & (SkillCompositionRow.skill_b == bindparam("b"))
        ),
        [{"a": a, "b": b} for a, b in deleted],
    )
    added = [pair for pair in pairs if pair not in original or pair in deleted]
    insert_rows(connection, SkillCompositionRow, [{"skill_a": a, "skill_b": b, "success_count": 0} for a, b in added])
    return before, after


def rewrite(
    work: UnitOfWork,
    skill: Skill,
    columns: Sequence[str],
    meta: dict[str, object],
    message: str,
    revision_action: str,
    audit_action: AuditAction,
    *,
    only_changed: bool = False,
) -> Skill:
    """Overwrite a stored skill's ``columns`` (with ``only_changed``, those of them that
    :func:`changed_columns` finds) and metadata if ``skill.version`` is current, with a
    revision and an audit entry; ConflictError otherwise."""
    session = work.session
    current = work.load_valid(skill.id)
    if current is None or skill.version != current.version:
        raise ConflictError(yours=skill, theirs=current or work.load(skill.id))
    work.record_untracked(skill.id, current)
    check_partners(session, [skill])
    values = skill_columns(skill)
    if only_changed:
        columns = changed_columns(session, [values], columns)
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


def changed_columns(session: Session, rows: Sequence[Mapping[str, object]], columns: Sequence[str]) -> Sequence[str]:
    """Those of ``columns`` whose new value differs from the stored one in any of these rows of
    stored skills (by ``id``); all of them if none does. An UPDATE maintains only the indexes
    over the columns it sets: setting every content column, a retag rewrote each skill's entry
    in every browse index (each ends in the name). All rows of a batch get the same columns, and
    at least one content column, so each skill's content version still moves, as it did for an
    edit that changed nothing. Triggers on the columns left out do not fire: the FTS5 indexes
    are not rewritten with the same text, and the retrieval change log gets no entry for a
    domain or module that stayed."""
    wanted = list(columns)
    by_id = {str(row["id"]): row for row in rows}
    changed: set[str] = set()
    for chunk in chunks(list(by_id)):
        stored = select(SkillRow.id, *(getattr(SkillRow, c) for c in wanted)).where(SkillRow.id.in_(chunk))
        for skill_id, *old in session.execute(stored):
            new = by_id[skill_id]
            changed.update(
                c for c, before in zip(wanted, old, strict=True) if type(before) is not type(new[c]) or before != new[c]
            )
    return [c for c in wanted if c in changed] or wanted


def check_partners(session: Session, skills: Sequence[Skill]) -> None:
    """Every composable_with id must name a stored skill (D057's foreign key would refuse it)."""
    present = _stored_partners(session, skills)
    for skill in skills:
        _check_partners_of(skill, present)


def _stored_partners(session: Session, skills: Sequence[Skill]) -> set[str]:
    return stored_ids(session, (partner for skill in skills for partner in skill.composable_with))


def _check_partners_of(skill: Skill, present: set[str]) -> None:
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


__all__ = ["check_partners", "insert_new", "refuse_duplicate_ids", "rewrite", "update_distinct", "update_one"]
