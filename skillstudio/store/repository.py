"""The one API every front end (CLI, GUI, agents, importers) uses to read and change a library.

Every mutation runs in one transaction that also writes a revision (a full snapshot, author,
time, message) and an audit-log entry, so history and audit can never disagree with the data.
Updates are optimistic: they carry the content version they were based on and are refused
with :class:`ConflictError` if another writer (an engine, another window) got there first.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from sqlalchemy import delete, func, insert, select, text, update
from sqlalchemy.orm import Session

from skillstudio.model import (
    Confidence,
    Issue,
    ReviewState,
    Skill,
    ValidationError,
    body_to_json,
    parse_skill,
    skill_to_document,
    utc_now,
)
from skillstudio.model.evidence import EvidenceKind, VerificationRecord, record_to_document
from skillstudio.model.validation import Checker, describe
from skillstudio.store.database import Database
from skillstudio.store.embeddings import EmbeddingStore, description_hash
from skillstudio.store.errors import (
    ConflictError,
    InvalidSkillData,
    InvalidStoredSkill,
    LibraryError,
    ReviewNotAllowed,
    SkillExists,
    SkillNotFound,
)
from skillstudio.store.events import AuditAction, change
from skillstudio.store.migrations import CONTENT_COLUMNS, D057_SKILL_COLUMNS
from skillstudio.store.orm import (
    AuditRow,
    ReviewDecisionRow,
    RevisionRow,
    RiskFindingRow,
    SkillCompositionRow,
    SkillEmbeddingRow,
    SkillExtrasRow,
    SkillMetaRow,
    SkillRow,
    SkillVersionRow,
    TrashRow,
    VerificationRow,
)
from skillstudio.store.privacy_marks import PrivacyMarks
from skillstudio.store.query import SkillQuery, build_select
from skillstudio.store.types import (
    Actor,
    AuditEntry,
    Composition,
    ImportItem,
    LibraryStats,
    QueryResult,
    ReviewDecision,
    Revision,
    RiskFinding,
    SkillExtras,
    SkillSummary,
    TrashEntry,
)

_CHUNK = 500  # ids per IN (...) list, well under SQLite's variable limit
_META_COLUMNS = ("created_by", "engine_version", "source_id", "source_author", "original_id", "review_state")
EXTERNAL = Actor("external", "system")


def body_hash(skill: Skill) -> str:
    """Identifies the body evidence was gathered with; a changed body earns no old credit."""
    return hashlib.sha256(body_to_json(skill.body).encode("utf-8")).hexdigest()


class SkillRepository:
    def __init__(self, database: Database, actor: Actor | None = None) -> None:
        self.database = database
        self.actor = actor or Actor.current_user()
        self.embeddings = EmbeddingStore(database, self.actor.id, self.actor.kind)
        self.privacy_marks = PrivacyMarks(database, self.actor.id, self.actor.kind)

    def as_actor(self, actor: Actor) -> SkillRepository:
        return SkillRepository(self.database, actor)

    # ============================================================================================
    # Reading
    # ============================================================================================

    def get(self, skill_id: str) -> Skill:
        with self.database.read() as session:
            return self._load(session, skill_id)

    def get_many(self, skill_ids: Sequence[str]) -> list[Skill]:
        """Several skills in one read transaction, a few queries per 500 (exports), in the given
        order; SkillNotFound or InvalidStoredSkill as ``get`` would raise for the first bad one."""
        out: list[Skill] = []
        for skill_id, skill, error in self._read_many(skill_ids):
            if error is not None:
                raise error
            out.append(skill)  # type: ignore[arg-type]
        return out

    def get_many_valid(self, skill_ids: Sequence[str]) -> tuple[list[Skill], list[tuple[str, str]]]:
        """Like :meth:`get_many`, but tolerant: the skills that could be read, in the given order,
        and ``(id, reason)`` for each id that is gone or whose row does not hold a valid skill
        (rows other programs write are untrusted; one bad row must not stop an export)."""
        skills: list[Skill] = []
        skipped: list[tuple[str, str]] = []
        for skill_id, skill, error in self._read_many(skill_ids):
            if error is None:
                skills.append(skill)  # type: ignore[arg-type]
            elif isinstance(error, InvalidStoredSkill):
                skipped.append((skill_id, error.reason))
            else:
                skipped.append((skill_id, str(error)))  # gone: "no skill with id ... in the trash"
        return skills, skipped

    def _read_many(
        self, skill_ids: Sequence[str]
    ) -> list[tuple[str, Skill | None, SkillNotFound | InvalidStoredSkill | None]]:
        """Each id with its skill, or the error ``get`` would raise for it; one read transaction."""
        out: list[tuple[str, Skill | None, SkillNotFound | InvalidStoredSkill | None]] = []
        with self.database.read() as session:
            for chunk in _chunks(skill_ids):
                rows = {row.id: row for row in session.scalars(select(SkillRow).where(SkillRow.id.in_(chunk)))}
                metas = {
                    m.skill_id: m for m in session.scalars(select(SkillMetaRow).where(SkillMetaRow.skill_id.in_(chunk)))
                }
                versions = dict(_versions(session, chunk))
                pairs: dict[str, list[SkillCompositionRow]] = {}
                for pair in session.scalars(
                    select(SkillCompositionRow).where(
                        SkillCompositionRow.skill_a.in_(chunk) | SkillCompositionRow.skill_b.in_(chunk)
                    )
                ):
                    pairs.setdefault(pair.skill_a, []).append(pair)
                    if pair.skill_b != pair.skill_a:
                        pairs.setdefault(pair.skill_b, []).append(pair)
                for skill_id in chunk:
                    row = rows.get(skill_id)
                    if row is None:
                        in_trash = session.get(TrashRow, skill_id) is not None
                        out.append((skill_id, None, SkillNotFound(skill_id, in_trash=in_trash)))
                        continue
                    partners = [c.partner_id for c in _compositions_of(skill_id, pairs.get(skill_id, []))]
                    document = _row_document(row, metas.get(skill_id), versions.get(skill_id, 0), partners)
                    try:
                        out.append((skill_id, _parse_row(skill_id, document), None))
                    except InvalidStoredSkill as error:
                        out.append((skill_id, None, error))
        return out

    def exists(self, skill_id: str) -> bool:
        with self.database.read() as session:
            return session.get(SkillRow, skill_id) is not None

    def resolve_id(self, prefix: str) -> str:
        """The full id for a unique prefix (at least 4 characters), as ``git`` resolves hashes."""
        with self.database.read() as session:
            if session.get(SkillRow, prefix) is not None:
                return prefix
            if len(prefix) >= 4:
                escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
                matches = session.scalars(
                    select(SkillRow.id).where(SkillRow.id.like(f"{escaped}%", escape="\\")).limit(2)
                ).all()
                if len(matches) == 1:
                    return matches[0]
                if matches:
                    raise SkillNotFound(f"{prefix}…", ambiguous=True)
        raise SkillNotFound(prefix)

    def query(self, query: SkillQuery = SkillQuery()) -> QueryResult:
        statement = build_select(query)
        with self.database.read() as session:
            # Core execution: ids need no ORM identity map, which costs more than SQLite here.
            connection = session.connection()
            if query.offset or query.limit is not None:
                counted = select(func.count()).select_from(statement.order_by(None).subquery())
                total = connection.execute(counted).scalar_one()
                paged = statement.offset(query.offset)
                if query.limit is not None:
                    paged = paged.limit(query.limit)
                ids = connection.execute(paged).scalars().all()
            else:
                ids = connection.execute(statement).scalars().all()
                total = len(ids)
        return QueryResult(list(ids), total, query)

    def summaries(self, ids: Sequence[str]) -> list[SkillSummary]:
        """Rows for these ids, in the given order; ids no longer present are skipped.

        Reads only the listed columns (never body_json), so a page of a table costs little.
        """
        found: dict[str, SkillSummary] = {}
        with self.database.read() as session:
            connection = session.connection()
            for chunk in _chunks(ids):
                rows = connection.execute(
                    select(*_SUMMARY_COLUMNS)
                    .outerjoin(SkillMetaRow, SkillMetaRow.skill_id == SkillRow.id)
                    .where(SkillRow.id.in_(chunk))
                )
                for row in rows.all():
                    found[row.id] = _summary(row)
        return [found[skill_id] for skill_id in ids if skill_id in found]

    def count(self) -> int:
        with self.database.read() as session:
            return session.scalar(select(func.count()).select_from(SkillRow)) or 0

    def stats(self) -> LibraryStats:
        with self.database.read() as session:

            def grouped(column: Any) -> dict[str, int]:
                rows = session.execute(select(column, func.count()).group_by(column))
                return {str(key if key is not None else "(none)"): count for key, count in rows}

            return LibraryStats(
                total=session.scalar(select(func.count()).select_from(SkillRow)) or 0,
                by_domain=grouped(SkillRow.domain),
                by_confidence=grouped(func.coalesce(SkillRow.confidence, "tentative")),
                by_game_module=grouped(SkillRow.game_module),
                by_source=grouped(SkillRow.source),
                in_trash=session.scalar(select(func.count()).select_from(TrashRow)) or 0,
            )

    def tag_counts(self) -> dict[str, int]:
        """Every tag in the library with how many skills carry it, by name.

        Reading every row's tags takes seconds at 100k skills, so the answer is kept until the
        next commit to the file (by anyone).
        """

        def count() -> dict[str, int]:
            with self.database.read() as session:
                rows = session.execute(
                    text(
                        "SELECT tag.value, COUNT(*) FROM skills, json_each("
                        "CASE WHEN json_valid(skills.tags) THEN skills.tags ELSE '[]' END) AS tag "
                        "WHERE tag.type = 'text' GROUP BY tag.value ORDER BY tag.value"
                    )
                )
                return {str(tag): number for tag, number in rows}

        return dict(self.database.cached("tag_counts", count))

    def creators(self) -> list[str]:
        with self.database.read() as session:
            rows = session.scalars(
                select(func.coalesce(SkillMetaRow.created_by, "unknown"))
                .select_from(SkillRow)
                .outerjoin(SkillMetaRow, SkillMetaRow.skill_id == SkillRow.id)
                .distinct()
            )
            return sorted(rows)

    def game_modules(self) -> list[str]:
        with self.database.read() as session:
            return sorted(session.scalars(select(SkillRow.game_module).distinct()))

    def refinements_of(self, skill_id: str) -> list[str]:
        """Skills whose HumanRefined provenance points at this one (it is superseded by them)."""
        with self.database.read() as session:
            return list(
                session.scalars(
                    select(SkillMetaRow.skill_id)
                    .join(SkillRow, SkillRow.id == SkillMetaRow.skill_id)
                    .where(SkillMetaRow.original_id == skill_id)
                    .order_by(SkillRow.created_at)
                )
            )

    def compositions(self, skill_id: str) -> list[Composition]:
        with self.database.read() as session:
            return _compositions(session, skill_id)

    def verifications(self, skill_id: str) -> list[VerificationRecord]:
        with self.database.read() as session:
            rows = session.scalars(
                select(VerificationRow)
                .where(VerificationRow.skill_id == skill_id)
                .order_by(VerificationRow.recorded_at, VerificationRow.id)
            )
            return [_record(row) for row in rows]

    def extras(self, skill_id: str) -> SkillExtras | None:
        return self.extras_many([skill_id]).get(skill_id)

    def extras_many(self, ids: Sequence[str]) -> dict[str, SkillExtras]:
        """Import extras of these skills, by id; skills without any are left out."""
        out: dict[str, SkillExtras] = {}
        with self.database.read() as session:
            for chunk in _chunks(ids):
                for row in session.scalars(select(SkillExtrasRow).where(SkillExtrasRow.skill_id.in_(chunk))):
                    out[row.skill_id] = _extras(row)
        return out

    def body_json_many(self, ids: Sequence[str]) -> dict[str, str]:
        """The raw ``body_json`` text of these skills, by id, unparsed (the caller parses it
        defensively: an engine may have written anything there)."""
        out: dict[str, str] = {}
        with self.database.read() as session:
            connection = session.connection()
            for chunk in _chunks(ids):
                for skill_id, body in connection.execute(
                    select(SkillRow.id, SkillRow.body_json).where(SkillRow.id.in_(chunk))
                ):
                    if isinstance(body, str):
                        out[skill_id] = body
        return out

    def ids_with_origin(self, prefix: str) -> list[str]:
        """Ids of stored skills whose import origin starts with ``prefix`` (e.g. one package)."""
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        with self.database.read() as session:
            return list(
                session.scalars(
                    select(SkillExtrasRow.skill_id)
                    .join(SkillRow, SkillRow.id == SkillExtrasRow.skill_id)
                    .where(SkillExtrasRow.origin.like(f"{escaped}%", escape="\\"))
                    .order_by(SkillExtrasRow.skill_id)
                )
            )

    def revisions(self, skill_id: str) -> list[Revision]:
        """The skill's history, oldest first (also for skills now in the trash)."""
        with self.database.read() as session:
            rows = session.scalars(
                select(RevisionRow).where(RevisionRow.skill_id == skill_id).order_by(RevisionRow.number)
            )
            return [_revision(row) for row in rows]

    def revision(self, skill_id: str, number: int) -> Revision:
        with self.database.read() as session:
            row = session.scalar(
                select(RevisionRow).where(RevisionRow.skill_id == skill_id, RevisionRow.number == number)
            )
            if row is None:
                raise SkillNotFound(f"{skill_id} (revision {number})")
            return _revision(row)

    def audit(
        self,
        *,
        actor: str | None = None,
        action: str | None = None,
        skill_id: str | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int | None = None,
    ) -> list[AuditEntry]:
        """Audit entries, newest first."""
        statement = select(AuditRow).order_by(AuditRow.id.desc())
        if actor is not None:
            statement = statement.where(AuditRow.actor == actor)
        if action is not None:
            statement = statement.where(AuditRow.action == action)
        if skill_id is not None:
            statement = statement.where(AuditRow.skill_id == skill_id)
        if since is not None:
            statement = statement.where(AuditRow.at >= since)
        if until is not None:
            statement = statement.where(AuditRow.at <= until)
        if limit is not None:
            statement = statement.limit(limit)
        with self.database.read() as session:
            return [_audit_entry(row) for row in session.scalars(statement)]

    def trash(self) -> list[TrashEntry]:
        with self.database.read() as session:
            rows = session.scalars(select(TrashRow).order_by(TrashRow.deleted_at.desc()))
            return [
                TrashEntry(
                    row.skill_id,
                    str(json.loads(row.snapshot)["row"].get("name", "")),
                    row.deleted_at,
                    row.deleted_by,
                    row.message,
                )
                for row in rows
            ]

    def embedding(self, skill_id: str) -> tuple[bytes, str] | None:
        with self.database.read() as session:
            row = session.get(SkillEmbeddingRow, skill_id)
            return None if row is None else (row.embedding, row.model_id)

    # ============================================================================================
    # Writing
    # ============================================================================================

    def create(
        self,
        skill: Skill,
        *,
        message: str = "",
        verifications: Sequence[VerificationRecord] = (),
        based_on: Skill | None = None,
    ) -> Skill:
        """Add one skill. With ``based_on`` (the copy a refinement was made from), refuse with
        ConflictError if that skill changed since it was read, in the same transaction."""
        self.create_many([(skill, verifications)], message=message, based_on=based_on)
        return self.get(skill.id)

    def create_many(
        self,
        items: Iterable[Skill | tuple[Skill, Sequence[VerificationRecord]]],
        *,
        message: str = "",
        action: str = "skill.create",
        based_on: Skill | None = None,
    ) -> int:
        """Add many skills in one transaction (imports, the sample library): all or nothing."""
        pairs = [item if isinstance(item, tuple) else (item, ()) for item in items]
        if not pairs:
            return 0
        skills = [skill for skill, _ in pairs]
        _refuse_duplicate_ids(skills)
        # An agent's skill starts pending: a decided state would be a review, which only people make.
        # (SkillStudio itself, as "system", writes the bundled sample's recorded decisions.)
        if self.actor.kind == "agent" and any(s.review_state not in (None, ReviewState.PENDING) for s in skills):
            self._require_human("create a skill with a review decision")
        now = utc_now()
        with self._write(action) as (session, touched):
            if based_on is not None:
                current = self._load(session, based_on.id)
                if current.version != based_on.version:
                    raise ConflictError(yours=skills[0], theirs=current, read_version=based_on.version)
            touched.extend(skill.id for skill in skills)
            self._insert_new(session, pairs, now, message, action, "create")
        return len(skills)

    def _insert_new(
        self,
        session: Session,
        pairs: Sequence[tuple[Skill, Sequence[VerificationRecord]]],
        now: str,
        message: str,
        action: str,
        revision_action: str,
        *,
        histories: Mapping[str, Sequence[Skill]] | None = None,
    ) -> None:
        """Insert new skills with their metadata, compositions, evidence, revisions and audit."""
        skills = [skill for skill, _ in pairs]
        ids = [skill.id for skill in skills]
        for chunk in _chunks(ids):
            taken = session.scalars(select(SkillRow.id).where(SkillRow.id.in_(chunk))).first()
            if taken is not None:
                raise SkillExists(taken)
            trashed = session.scalars(select(TrashRow.skill_id).where(TrashRow.skill_id.in_(chunk))).first()
            if trashed is not None:
                raise SkillExists(trashed, in_trash=True)
        _bulk_insert(session, SkillRow, [_skill_columns(skill) for skill in skills])
        _bulk_insert(session, SkillMetaRow, [_meta_columns(skill) for skill in skills])
        _check_partners(session, skills)
        # New ids cannot be in a pair yet (D057's foreign keys), so no existing pair to skip.
        composition_rows = _new_compositions(session, skills, check_existing=False)
        if composition_rows:
            _bulk_insert(session, SkillCompositionRow, composition_rows)
        records = [_verification_columns(skill, record) for skill, records in pairs for record in records]
        if records:
            _bulk_insert(session, VerificationRow, records)
        versions = _versions(session, ids)
        revisions, audits = [], []
        for skill in skills:
            earlier = (histories or {}).get(skill.id, ())
            for number, old in enumerate(earlier, start=1):  # content versions before this store
                note = f"earlier version {number} of {len(earlier) + 1}, from the import"
                revisions.append(
                    _revision_columns(replace(old, version=0), number, revision_action, self.actor, now, note)
                )
            stored = replace(skill, version=versions[skill.id])
            number = len(earlier) + 1
            revisions.append(_revision_columns(stored, number, revision_action, self.actor, now, message))
            audits.append(self._audit_columns(action, skill.id, number, now, {"name": skill.name}))
        _bulk_insert(session, RevisionRow, revisions)
        _bulk_insert(session, AuditRow, audits)

    def update(self, skill: Skill, *, message: str = "") -> Skill:
        """Store an edited skill. ``skill.version`` must be the version it was read at.

        Quality figures, use count and review state are not taken from ``skill``: they belong
        to verification, play and review, and an edit must never roll them back.
        """
        return self.update_many([skill], message=message)[0]

    def update_many(self, skills: Sequence[Skill], *, message: str = "") -> list[Skill]:
        """Several updates (a bulk retag) in one transaction: all are stored, or none."""
        now = utc_now()
        with self._write("skill.update") as (session, touched):
            touched.extend(skill.id for skill in skills)
            stored = [self._update_one(session, skill, now, message) for skill in skills]
        return stored

    def _update_one(self, session: Session, skill: Skill, now: str, message: str) -> Skill:
        # Quality, use count and review state stay as stored: an edit never rolls them back.
        meta = _meta_columns(skill)
        meta.pop("review_state")
        return self._rewrite(session, skill, CONTENT_COLUMNS, meta, now, message, "update", "skill.update")

    def _rewrite(
        self,
        session: Session,
        skill: Skill,
        columns: Sequence[str],
        meta: dict[str, Any],
        now: str,
        message: str,
        revision_action: str,
        audit_action: str,
    ) -> Skill:
        """Overwrite a stored skill's ``columns`` and metadata if ``skill.version`` is current,
        with a revision and an audit entry; ConflictError otherwise."""
        current = self._load(session, skill.id, tolerate_invalid=True)
        if current is None or skill.version != current.version:
            theirs = current or self._load(session, skill.id)
            raise ConflictError(yours=skill, theirs=theirs)
        self._record_untracked(session, skill.id, current, now)
        _check_partners(session, [skill])
        values = _skill_columns(skill)
        session.execute(update(SkillRow).where(SkillRow.id == skill.id).values({c: values[c] for c in columns}))
        existing = session.get(SkillMetaRow, skill.id)
        if existing is None:  # a skill an engine wrote has no metadata row yet
            session.add(SkillMetaRow(**meta))
        else:
            for column, value in meta.items():
                setattr(existing, column, value)
        session.flush()
        _sync_compositions(session, skill)
        stored = self._load(session, skill.id)
        number = self._write_revision(session, stored, revision_action, now, message)
        self._audit(session, audit_action, skill.id, number, now, {"changed": _changed_fields(current, stored)})
        return stored

    def import_skills(
        self,
        added: Sequence[ImportItem],
        replaced: Sequence[ImportItem] = (),
        trashed: Sequence[str] = (),
        *,
        message: str = "",
        action: str = "skill.import",
        package_key: tuple[str, str, str, bool] | None = None,
    ) -> None:
        """Apply an import in one transaction: all of it, or nothing.

        ``added`` are new skills (with their evidence); ``replaced`` overwrite stored skills
        entirely, quality included (the import decided so), and each must carry the version it
        was read at, else ConflictError; ``trashed`` go to the trash (``--replace`` drops what
        an older version of the same package had). Extras are written for both. Revisions say
        ``import``; the audit log says ``action``. A replaced skill keeps its review state when
        its content is unchanged, else goes back to ``pending`` (with a decision row).

        ``package_key`` = (identity, fingerprint, public key, trusted) remembers the key of a
        signed package (``studio_package_keys``, docs/packages.md): recorded if the identity has
        none; if it has another, the import is refused (LibraryError) unless
        ``trusted`` (the user trusted the new key), which replaces it.
        """
        _refuse_duplicate_ids([item.skill for item in (*added, *replaced)])
        now = utc_now()
        with self._write(action) as (session, touched):
            if package_key is not None:
                # checked again inside the transaction: two imports racing for a new identity
                # cannot both win
                identity, fingerprint, public_key, trusted = package_key
                stored = session.execute(
                    text("SELECT fingerprint FROM studio_package_keys WHERE identity = :i"), {"i": identity}
                ).scalar()
                if stored is not None and stored != fingerprint and not trusted:
                    raise LibraryError(
                        f"package {identity}: key {fingerprint} is not the key {stored} that first brought it"
                    )
                if stored != fingerprint:
                    session.execute(
                        text("INSERT OR REPLACE INTO studio_package_keys VALUES (:i, :f, :k, :t)"),
                        {"i": identity, "f": fingerprint, "k": public_key, "t": now},
                    )
            touched.extend(item.skill.id for item in (*added, *replaced))
            touched.extend(trashed)
            touched.removed.extend(trashed)
            for skill_id in dict.fromkeys(trashed):
                self._trash(session, skill_id, now, message, action)
            if added:
                pairs = [(item.skill, item.verifications) for item in added]
                histories = {item.skill.id: item.history for item in added if item.history}
                self._insert_new(session, pairs, now, message, action, "import", histories=histories)
            for item in replaced:
                self._replace_one(session, item.skill, now, message, action)
            extras_rows = [
                _extras_row(item.skill.id, item.extras) for item in (*added, *replaced) if item.extras is not None
            ]
            if extras_rows:  # one executemany; an orphan row (its skill deleted by an engine) is replaced
                session.execute(insert(SkillExtrasRow).prefix_with("OR REPLACE"), extras_rows)

    def _replace_one(self, session: Session, skill: Skill, now: str, message: str, action: str) -> None:
        # An import overwrites everything, quality included. Changed content is reviewed again
        # (pending, with a decision row); unchanged content keeps its review decision.
        def content(of: Skill) -> dict[str, Any]:  # not quality, use, creation, library-local fields
            document = skill_to_document(of, local=False)
            for key in ("quality", "use_count", "last_used", "created_at"):
                document.pop(key, None)
            document["composable_with"] = sorted(set(of.composable_with))
            return document

        current = self._load(session, skill.id, tolerate_invalid=True)
        changed = current is None or content(current) != content(skill)
        meta = _meta_columns(skill)
        if changed:
            meta["review_state"] = "pending"
        else:
            meta.pop("review_state")
        columns = [c for c in D057_SKILL_COLUMNS if c != "id"]
        self._rewrite(session, skill, columns, meta, now, message, "import", action)
        if changed:
            latest = session.scalar(select(func.max(RevisionRow.number)).where(RevisionRow.skill_id == skill.id))
            self._add_decision(session, skill.id, "pending", now, message or "content changed by an import", latest)

    # --- review (migration 5, docs/review.md) ------------------------------------------------------
    # One review path: ``review``. Agents get "back to pending" only through ``update_pending``.

    def review(self, skill_id: str, state: Any, *, comment: str = "", version: int) -> Skill:
        """Record a review decision (a ``ReviewState``) on the content ``version`` the reviewer saw,
        with its comment, in one transaction with the review state, a revision and the audit entry.

        Every review change is a person's: any other actor (agent, system) gets ReviewNotAllowed.
        A ``version`` that is no longer the stored one raises ConflictError naming both versions:
        the reviewer decided on content the library no longer holds."""
        value = state.value
        self._require_human(f"set a skill {value}")
        if not isinstance(version, int) or isinstance(version, bool):
            raise TypeError(f"version: the content version the reviewer saw (an int), not {version!r}")
        now = utc_now()
        with self._write("skill.review") as (session, touched):
            touched.append(skill_id)
            current = self._load(session, skill_id)
            if current.version != version:
                raise ConflictError(yours=current, theirs=current, read_version=version)
            self._record_untracked(session, skill_id, current, now)
            self._set_review_state(session, skill_id, value)
            stored = self._load(session, skill_id)
            number = self._write_revision(session, stored, "review", now, comment)
            self._add_decision(session, skill_id, value, now, comment, number)
            details = {"state": value, "comment": comment, "version": version}
            self._audit(session, "skill.review", skill_id, number, now, details)
        return stored

    def update_pending(self, skill: Skill, *, message: str = "") -> Skill:
        """Like :meth:`update`, but the skill goes back to ``pending`` in the same transaction
        (an agent's update: a reviewer must look at it again), with a decision row saying so.

        The one review change a non-human actor makes, and only as part of its own content
        change (``skill.version`` must be current, else ConflictError)."""
        now = utc_now()
        with self._write("skill.update") as (session, touched):
            touched.append(skill.id)
            self._set_review_state(session, skill.id, "pending")  # first, so the revision shows it
            stored = self._update_one(session, skill, now, message)
            latest = session.scalar(select(func.max(RevisionRow.number)).where(RevisionRow.skill_id == skill.id))
            self._add_decision(session, skill.id, "pending", now, message or "updated by an agent", latest)
        return stored

    def _require_human(self, what: str) -> None:
        """Guard rail for review, trash and purge: only a person (``Actor.kind == "human"``)."""
        if self.actor.kind != "human":
            raise ReviewNotAllowed(f"{self.actor.kind} {self.actor.id!r} may not {what}; only a person may")

    # --- agent write budget (migration 7, docs/review.md) ------------------------------------------

    def take_agent_write_slot(self, agent_id: str, now: float, *, limit: int, window: float) -> int | float:
        """Check and take one of ``agent_id``'s ``limit`` writes per ``window`` seconds, in one
        BEGIN IMMEDIATE transaction on the library (so every process of that agent shares it).

        Returns the slot's id (give it to :meth:`release_agent_write_slot` if the write then
        fails), or, when the budget is spent, the seconds to wait as a float."""
        with self.database.write() as session:
            connection = session.connection()
            connection.execute(
                text("DELETE FROM studio_agent_writes WHERE agent_id = :a AND at <= :old"),
                {"a": agent_id, "old": now - window},
            )
            recent = (
                connection.execute(
                    text(
                        "SELECT at FROM studio_agent_writes WHERE agent_id = :a AND at > :old AND at <= :now ORDER BY at"
                    ),
                    {"a": agent_id, "old": now - window, "now": now},
                )
                .scalars()
                .all()
            )
            if len(recent) >= limit:
                return float(window - (now - recent[0]))
            return int(
                connection.execute(
                    text("INSERT INTO studio_agent_writes(agent_id, at) VALUES (:a, :now) RETURNING id"),
                    {"a": agent_id, "now": now},
                ).scalar_one()
            )

    def release_agent_write_slot(self, slot: int) -> None:
        """Give back a slot whose write failed (nothing was stored: it must not count)."""
        with self.database.write() as session:
            session.connection().execute(text("DELETE FROM studio_agent_writes WHERE id = :id"), {"id": slot})

    def review_decisions(self, skill_id: str) -> list[ReviewDecision]:
        """The skill's review decisions, oldest first."""
        with self.database.read() as session:
            rows = session.scalars(
                select(ReviewDecisionRow).where(ReviewDecisionRow.skill_id == skill_id).order_by(ReviewDecisionRow.id)
            )
            return [
                ReviewDecision(r.skill_id, r.state, r.reviewer, r.reviewer_kind, r.at, r.comment, r.revision)
                for r in rows
            ]

    def last_approved_revision(self, skill_id: str) -> Revision | None:
        """The newest revision whose snapshot was approved (what a reviewer last accepted)."""
        with self.database.read() as session:
            number = session.scalar(
                select(func.max(RevisionRow.number)).where(
                    RevisionRow.skill_id == skill_id,
                    func.json_extract(RevisionRow.snapshot, "$.review_state") == "approved",
                )
            )
        return None if number is None else self.revision(skill_id, number)

    def set_risk_findings(self, skill_id: str, findings: Sequence[RiskFinding], *, version: int = 0) -> None:
        """Replace the stored risk findings of a skill (computed data: no revision, no audit)."""
        now = utc_now()
        with self.database.write() as session:
            session.execute(delete(RiskFindingRow).where(RiskFindingRow.skill_id == skill_id))
            rows = [
                {
                    "skill_id": skill_id,
                    "position": position,
                    "rule": f.rule,
                    "severity": f.severity,
                    "reason": f.reason,
                    "field": f.field,
                    "start": f.start,
                    "end": f.end,
                    "excerpt": f.excerpt,
                    "version": version,
                    "linted_at": now,
                }
                for position, f in enumerate(findings)
            ]
            if rows:
                session.execute(insert(RiskFindingRow), rows)

    def risk_findings_version(self, skill_id: str) -> int | None:
        """The content version the stored findings were computed for (None: none stored)."""
        with self.database.read() as session:
            return session.scalar(select(RiskFindingRow.version).where(RiskFindingRow.skill_id == skill_id).limit(1))

    def risk_findings(self, skill_id: str) -> list[RiskFinding]:
        return self.risk_findings_many([skill_id]).get(skill_id, [])

    def risk_findings_many(self, ids: Sequence[str]) -> dict[str, list[RiskFinding]]:
        out: dict[str, list[RiskFinding]] = {}
        with self.database.read() as session:
            for chunk in _chunks(list(ids)):
                rows = session.scalars(
                    select(RiskFindingRow)
                    .where(RiskFindingRow.skill_id.in_(chunk))
                    .order_by(RiskFindingRow.skill_id, RiskFindingRow.position)
                )
                for r in rows:
                    out.setdefault(r.skill_id, []).append(
                        RiskFinding(r.rule, r.severity, r.reason, r.field, r.start, r.end, r.excerpt)
                    )
        return out

    def _set_review_state(self, session: Session, skill_id: str, value: str | None) -> None:
        if session.get(SkillMetaRow, skill_id) is None:  # a skill an engine wrote
            session.add(SkillMetaRow(skill_id=skill_id, created_by="unknown", engine_version="", review_state=value))
            session.flush()
        else:
            session.execute(update(SkillMetaRow).where(SkillMetaRow.skill_id == skill_id).values(review_state=value))

    def _add_decision(
        self, session: Session, skill_id: str, state: str, now: str, comment: str, revision: int | None
    ) -> None:
        session.add(
            ReviewDecisionRow(
                skill_id=skill_id,
                state=state,
                reviewer=self.actor.id,
                reviewer_kind=self.actor.kind,
                at=now,
                comment=comment,
                revision=revision,
            )
        )
        session.flush()

    def delete(self, skill_id: str, *, message: str = "") -> None:
        """Move a skill to the trash, with its embedding and compositions, restorably."""
        self.delete_many([skill_id], message=message)

    def delete_many(self, skill_ids: Sequence[str], *, message: str = "", action: str = "skill.delete") -> int:
        """Move skills to the trash in one transaction; a person's action (ReviewNotAllowed else)."""
        self._require_human("move skills to the trash")
        now = utc_now()
        with self._write(action) as (session, touched):
            touched.extend(skill_ids)
            touched.removed.extend(skill_ids)
            for skill_id in dict.fromkeys(skill_ids):
                self._trash(session, skill_id, now, message, action)
        return len(skill_ids)

    def _trash(self, session: Session, skill_id: str, now: str, message: str, action: str) -> None:
        """Move one skill to the trash (see delete_many), inside the caller's transaction."""
        row = session.get(SkillRow, skill_id)
        if row is None:
            raise SkillNotFound(skill_id)
        current = self._load(session, skill_id, tolerate_invalid=True)
        if current is not None:
            self._record_untracked(session, skill_id, current, now)
        meta = session.get(SkillMetaRow, skill_id)
        embedding = session.get(SkillEmbeddingRow, skill_id)
        pairs = session.scalars(
            select(SkillCompositionRow).where(
                (SkillCompositionRow.skill_a == skill_id) | (SkillCompositionRow.skill_b == skill_id)
            )
        ).all()
        # The trash keeps the exact stored values, so a restore gives back the same row
        # even when it was not a valid skill (e.g. written by a buggy engine).
        snapshot = {
            "row": {column: getattr(row, column) for column in D057_SKILL_COLUMNS},
            "meta": None if meta is None else {c: getattr(meta, c) for c in _META_COLUMNS},
        }
        session.add(
            TrashRow(
                skill_id=skill_id,
                deleted_at=now,
                deleted_by=self.actor.id,
                message=message,
                snapshot=json.dumps(snapshot, ensure_ascii=False),
                embedding=None if embedding is None else embedding.embedding,
                embedding_model=None if embedding is None else embedding.model_id,
                compositions=json.dumps([[p.skill_a, p.skill_b, p.success_count] for p in pairs]),
            )
        )
        number = self._write_revision(session, current, "delete", now, message, raw=None if current else snapshot)
        for pair in pairs:
            session.delete(pair)
        if embedding is not None:
            session.delete(embedding)
        if meta is not None:
            session.delete(meta)
        session.flush()
        session.delete(row)
        session.flush()
        self._audit(session, action, skill_id, number, now, {"name": row.name})

    def restore(self, skill_id: str, *, message: str = "") -> Skill | None:
        """Bring a skill back from the trash, exactly as it was stored. Returns it, or None if
        the restored row is not a valid skill (it was trashed that way)."""
        self._require_human("restore skills from the trash")
        now = utc_now()
        with self._write("skill.restore") as (session, touched):
            touched.append(skill_id)
            entry = session.get(TrashRow, skill_id)
            if entry is None:
                raise SkillNotFound(skill_id, in_trash=True)
            if session.get(SkillRow, skill_id) is not None:
                raise SkillExists(skill_id)
            snapshot = json.loads(entry.snapshot)
            session.execute(insert(SkillRow).values(snapshot["row"]))
            if snapshot["meta"] is not None:
                session.execute(insert(SkillMetaRow).values(skill_id=skill_id, **snapshot["meta"]))
            if entry.embedding is not None:
                session.add(
                    SkillEmbeddingRow(skill_id=skill_id, embedding=entry.embedding, model_id=entry.embedding_model)
                )
            for skill_a, skill_b, count in json.loads(entry.compositions):
                partner = skill_b if skill_a == skill_id else skill_a
                if session.get(SkillRow, partner) is not None:  # partners may be gone meanwhile
                    session.add(SkillCompositionRow(skill_a=skill_a, skill_b=skill_b, success_count=count))
            session.delete(entry)
            session.flush()
            restored = self._load(session, skill_id, tolerate_invalid=True)
            raw = None if restored else snapshot
            number = self._write_revision(session, restored, "restore", now, message, raw=raw)
            self._audit(session, "skill.restore", skill_id, number, now, {})
        return restored

    def empty_trash(self, skill_ids: Sequence[str] | None = None) -> int:
        """Delete trashed skills for good, with their history; the audit log keeps the fact.
        A person's action: other actors get ReviewNotAllowed."""
        self._require_human("empty the trash")
        now = utc_now()
        with self._write("skill.purge") as (session, touched):
            statement = select(TrashRow.skill_id)
            if skill_ids is not None:
                statement = statement.where(TrashRow.skill_id.in_(list(skill_ids)))
            doomed = list(session.scalars(statement))
            touched.extend(doomed)
            touched.removed.extend(doomed)
            for chunk in _chunks(doomed):
                for table, column in (
                    (TrashRow, TrashRow.skill_id),
                    (RevisionRow, RevisionRow.skill_id),
                    (VerificationRow, VerificationRow.skill_id),
                    (SkillVersionRow, SkillVersionRow.skill_id),
                    (SkillExtrasRow, SkillExtrasRow.skill_id),
                    (ReviewDecisionRow, ReviewDecisionRow.skill_id),
                    (RiskFindingRow, RiskFindingRow.skill_id),
                ):
                    session.execute(delete(table).where(column.in_(chunk)))
            for skill_id in doomed:
                self._audit(session, "skill.purge", skill_id, None, now, {})
        return len(doomed)

    def record_composition(self, skill_a: str, skill_b: str, *, successes: int = 1) -> None:
        """Count a successful use of ``skill_a`` followed by ``skill_b`` (D057 compositions)."""
        now = utc_now()
        with self._write("skill.compose") as (session, touched):
            touched.extend((skill_a, skill_b))
            for skill_id in (skill_a, skill_b):
                if session.get(SkillRow, skill_id) is None:
                    raise SkillNotFound(skill_id)
            if skill_a == skill_b:
                raise InvalidSkillData([Issue("skill_b", "a skill cannot be composed with itself")])
            for skill_id in (skill_a, skill_b):
                self._record_untracked(session, skill_id, self._load(session, skill_id, tolerate_invalid=True), now)
            pair = session.get(SkillCompositionRow, (skill_a, skill_b))
            if pair is None:
                session.add(SkillCompositionRow(skill_a=skill_a, skill_b=skill_b, success_count=successes))
            else:
                pair.success_count = (pair.success_count or 0) + successes
            session.flush()
            details = {"first": skill_a, "then": skill_b, "successes": successes}
            for skill_id in (skill_a, skill_b):
                number = self._write_revision(session, self._load(session, skill_id), "compose", now, "")
                self._audit(session, "skill.compose", skill_id, number, now, details)

    def set_quality(
        self,
        skill_id: str,
        quality: Any,  # skillstudio.model.Quality
        *,
        action: str = "skill.verify",
        message: str = "",
        details: dict[str, Any] | None = None,
        record: VerificationRecord | None = None,
        within: Any = None,  # Callable[[Session], None]: more writes in the same transaction
        run_id: str | None = None,
        recompute: Any = None,  # Callable[[Skill, list[VerificationRecord]], tuple[Quality, str, str, dict]]
    ) -> Skill | None:
        """Store verification's outcome: D057's quality columns, the session's evidence record
        (with the body hash it was gathered with), a revision and an audit entry (``skill.verify``,
        ``skill.promote`` or ``skill.demote``), all in one transaction. Not a content change.

        ``recompute(current, evidence)``, if given, is called inside the transaction (BEGIN
        IMMEDIATE, so writers are serialized) with the skill as stored now and all its evidence
        rows, ``record`` included; the ``(quality, action, message, details)`` it returns are
        stored instead of the arguments. Concurrent batches of one skill thus add up: no figure
        computed before the lock is trusted. ``within`` runs after it.

        ``run_id``: the run ``record`` comes from. A run's session is stored at most once per
        skill (a unique key on the evidence rows, checked in this transaction): if it is
        already stored, nothing is written and None is returned."""
        now = utc_now()
        with self.database.write() as session:  # not _write(): the action is known only after recompute
            if record is not None and run_id is not None and self._run_evidence_stored(session, run_id, skill_id):
                return None
            current = self._load(session, skill_id)
            self._record_untracked(session, skill_id, current, now)
            if record is not None:
                inserted = session.execute(insert(VerificationRow).values(_verification_columns(current, record)))
                if run_id is not None:
                    session.execute(
                        text("UPDATE studio_verifications SET run_id = :run WHERE id = :id"),
                        {"run": run_id, "id": inserted.inserted_primary_key[0]},  # type: ignore[attr-defined]
                    )
            if recompute is not None:
                evidence = [
                    _record(row)
                    for row in session.scalars(
                        select(VerificationRow)
                        .where(VerificationRow.skill_id == skill_id)
                        .order_by(VerificationRow.recorded_at, VerificationRow.id)
                    )
                ]
                quality, action, message, details = recompute(current, evidence)
            session.execute(
                update(SkillRow)
                .where(SkillRow.id == skill_id)
                .values(
                    verification_count=quality.verification_count,
                    success_rate=quality.success_rate,
                    average_rating=quality.average_rating,
                    confidence=quality.confidence.value,
                    last_verified=quality.last_verified,
                )
            )
            if within is not None:
                within(session)
            stored = replace(current, quality=quality)  # quality columns do not bump the version
            number = self._write_revision(session, stored, action.removeprefix("skill."), now, message)
            self._audit(session, action, skill_id, number, now, dict(details or {}))
        self.database.changes.emit(change(AuditAction(action), (skill_id,), self.actor.id))
        return stored

    @staticmethod
    def _run_evidence_stored(session: Session, run_id: str, skill_id: str) -> bool:
        """Whether run ``run_id``'s session for the skill is stored already (migration 7's key)."""
        return (
            session.execute(
                text("SELECT 1 FROM studio_verifications WHERE run_id = :run AND skill_id = :skill LIMIT 1"),
                {"run": run_id, "skill": skill_id},
            ).first()
            is not None
        )

    def set_embedding(self, skill_id: str, embedding: bytes, model_id: str) -> None:
        """Store the description's embedding (f32 array) as D057's skill_embeddings holds it.

        A vector is derived data: it writes an audit entry but no revision (docs/retrieval.md).
        Batches go through :attr:`embeddings` directly."""
        skill = self.get(skill_id)
        self.embeddings.put_many(model_id, [(skill_id, embedding, description_hash(skill.description))])

    # ============================================================================================
    # Internals
    # ============================================================================================

    @contextmanager
    def _write(self, action: str) -> Iterator[tuple[Session, _Touched]]:
        """A write transaction; the skills it touched are announced once it commits."""
        touched = _Touched()
        with self.database.write() as session:
            yield session, touched
        if touched:
            self.database.changes.emit(change(AuditAction(action), touched, self.actor.id, removed=touched.removed))

    def _load(self, session: Session, skill_id: str, *, tolerate_invalid: bool = False) -> Skill | None:
        row = session.get(SkillRow, skill_id)
        if row is None:
            if tolerate_invalid:
                return None
            raise SkillNotFound(skill_id, in_trash=session.get(TrashRow, skill_id) is not None)
        meta = session.get(SkillMetaRow, skill_id)
        version = session.get(SkillVersionRow, skill_id)
        partners = [c.partner_id for c in _compositions(session, skill_id)]
        document = _row_document(row, meta, version.version if version else 0, partners)
        try:
            return _parse_row(skill_id, document)
        except InvalidStoredSkill:
            if tolerate_invalid:
                return None
            raise

    def _record_untracked(self, session: Session, skill_id: str, current: Skill | None, now: str) -> None:
        """Snapshot changes made outside SkillStudio before ours, so history shows them."""
        if current is None:
            return
        latest = session.scalar(
            select(RevisionRow).where(RevisionRow.skill_id == skill_id).order_by(RevisionRow.number.desc()).limit(1)
        )
        if latest is None:
            self._write_revision(
                session,
                current,
                "baseline",
                now,
                "state found in the library (written outside SkillStudio)",
                actor=EXTERNAL,
            )
        elif latest.version != current.version:
            self._write_revision(session, current, "external", now, "changed outside SkillStudio", actor=EXTERNAL)

    def _write_revision(
        self,
        session: Session,
        skill: Skill | None,
        action: str,
        now: str,
        message: str,
        *,
        actor: Actor | None = None,
        raw: dict[str, Any] | None = None,
    ) -> int:
        skill_id = skill.id if skill is not None else raw["row"]["id"]  # type: ignore[index]
        number = (session.scalar(select(func.max(RevisionRow.number)).where(RevisionRow.skill_id == skill_id)) or 0) + 1
        if skill is not None:
            columns = _revision_columns(skill, number, action, actor or self.actor, now, message)
        else:  # an invalid stored row: keep its raw values
            version = session.get(SkillVersionRow, skill_id)
            columns = {
                "skill_id": skill_id,
                "number": number,
                "version": version.version if version else 0,
                "action": action,
                "author": (actor or self.actor).id,
                "created_at": now,
                "message": message,
                "snapshot": json.dumps(raw, ensure_ascii=False),
            }
        session.execute(insert(RevisionRow).values(columns))
        return number

    def _audit_columns(
        self, action: str, skill_id: str | None, revision: int | None, now: str, details: dict[str, Any]
    ) -> dict[str, Any]:
        return {
            "at": now,
            "actor": self.actor.id,
            "actor_kind": self.actor.kind,
            "action": action,
            "skill_id": skill_id,
            "revision": revision,
            "details": json.dumps(details, ensure_ascii=False, sort_keys=True),
        }

    def _audit(
        self,
        session: Session,
        action: str,
        skill_id: str | None,
        revision: int | None,
        now: str,
        details: dict[str, Any],
    ) -> None:
        session.execute(insert(AuditRow).values(self._audit_columns(action, skill_id, revision, now, details)))


# --- row <-> model --------------------------------------------------------------------------------


class _Touched(list[str]):
    """The skill ids a write touched, in order; ``removed``: those that left the library."""

    def __init__(self) -> None:
        super().__init__()
        self.removed: list[str] = []


def _skill_columns(skill: Skill) -> dict[str, Any]:
    quality = skill.quality
    return {
        "id": skill.id,
        "domain": skill.domain.value,
        "name": skill.name,
        "description": skill.description,
        "body_json": body_to_json(skill.body),
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


def _meta_columns(skill: Skill) -> dict[str, Any]:
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


def _row_document(row: SkillRow, meta: SkillMetaRow | None, version: int, partners: list[str]) -> dict[str, Any]:
    """The flat document :func:`parse_skill` reads, from a row as any writer left it."""
    document: dict[str, Any] = {column: getattr(row, column) for column in D057_SKILL_COLUMNS}
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


# D057's JSON text columns. Another program may have written anything there; json.loads
# recurses per nesting level, so text nested deeper than this is refused before it is parsed.
# A valid body nests far less (scene values are capped at MAX_JSON_DEPTH inside a ~5-deep body).
MAX_ROW_JSON_DEPTH = 64
# Each column with a stand-in that parses without recursion and is always reported at its path.
_JSON_COLUMNS = {"body_json": "{}", "tags": "[]"}
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_JSON_BRACKET = re.compile(r"[\[\]{}]")


def _too_deep(text: object, limit: int = MAX_ROW_JSON_DEPTH) -> bool:
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


def _deep_issue(column: str) -> Issue:
    return Issue(column, f"is nested deeper than {MAX_ROW_JSON_DEPTH} levels; not read")


def _parse_row(skill_id: str, document: dict[str, Any]) -> Skill:
    """The skill a row holds, or InvalidStoredSkill naming every problem with its field path.

    JSON columns nested too deeply are never handed to ``json.loads``: they are reported, and
    the rest of the row is still checked so the user sees every problem at once.
    """
    deep = [column for column in _JSON_COLUMNS if _too_deep(document.get(column))]
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
        raise InvalidStoredSkill(skill_id, ValidationError([*map(_deep_issue, deep), *issues])) from None
    except RecursionError:  # belt and braces: nothing above should recurse this far
        issue = Issue("", f"nested deeper than {MAX_ROW_JSON_DEPTH} levels somewhere; not read")
        raise InvalidStoredSkill(skill_id, ValidationError([issue])) from None
    if deep:  # deep tags alone: the stand-in parsed, the row is still not valid
        raise InvalidStoredSkill(skill_id, ValidationError(map(_deep_issue, deep)))
    return skill


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


def _summary(row: Any) -> SkillSummary:
    """A list row from columns as any writer left them: a value of the wrong type or range is
    shown as unknown (None; "?" for text) and named in ``issues``, never raised on."""
    tags, tags_problem = _tags_column(row.tags)
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

    def text(column: str, *, missing: str | None = None, bad: str | None = None) -> str | None:
        """The column's text; ``missing`` for NULL; ``bad`` (reported) for a number or blob."""
        value = getattr(row, column)
        if isinstance(value, str):
            return value
        if value is None:
            return missing
        check.fail(column, f"expected text, got {_described(value)}")
        return bad

    def number(column: str, lo: float, hi: float, *, whole: bool = False) -> Any:
        value = getattr(row, column)
        if value is None:
            return None
        if whole:
            return check.integer(value, column, lo, hi)  # type: ignore[arg-type]
        return check.number(value, column, lo, hi)

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
        name=text("name", missing="?", bad="?"),  # type: ignore[arg-type]
        domain=text("domain", missing="?", bad="?"),  # type: ignore[arg-type]
        game_module=text("game_module", missing="?", bad="?"),  # type: ignore[arg-type]
        confidence=confidence,  # type: ignore[arg-type]
        success_rate=number("success_rate", 0.0, 1.0),
        verification_count=number("verification_count", 0, _U32_MAX, whole=True),
        average_rating=number("average_rating", 1.0, 5.0),
        use_count=number("use_count", 0, _U32_MAX, whole=True),
        source=text("source", missing="?", bad="?"),  # type: ignore[arg-type]
        created_by=text("created_by", missing="unknown", bad="unknown"),  # type: ignore[arg-type]
        created_at=text("created_at", missing="?", bad="?"),  # type: ignore[arg-type]
        last_verified=text("last_verified"),
        last_used=text("last_used"),
        tags=tags,
        review_state=text("review_state"),
        issues=tuple(check.issues),
    )


def _described(value: object) -> str:
    if isinstance(value, bytes):
        return f"a blob of {len(value)} bytes"
    return {int: "a whole number", float: "a number"}.get(type(value), type(value).__name__)


def _tags_of(text: object) -> tuple[str, ...]:
    """The text tags of D057's ``tags`` column (a JSON array); () for anything unreadable."""
    return _tags_column(text)[0]


def _tags_column(text: object) -> tuple[tuple[str, ...], str | None]:
    """The text tags of D057's ``tags`` column, and what was wrong with it (None if nothing)."""
    if text is not None and not isinstance(text, str):
        return (), f"expected a JSON array, got {_described(text)}"
    if _too_deep(text):
        return (), _deep_issue("tags").message
    try:
        tags = json.loads(text or "[]")
    except (ValueError, RecursionError):
        return (), "is not valid JSON"
    if not isinstance(tags, list):
        return (), f"expected a JSON array, got {describe(tags)}"
    return tuple(tag for tag in tags if isinstance(tag, str)), None


def _extras(row: SkillExtrasRow) -> SkillExtras:
    return SkillExtras(
        origin=row.origin or "",
        frontmatter=json.loads(row.frontmatter or "{}"),
        files=json.loads(row.files or "{}"),
        warnings=tuple(json.loads(row.warnings or "[]")),
    )


def _extras_row(skill_id: str, extras: SkillExtras) -> dict[str, Any]:
    return {
        "skill_id": skill_id,
        "origin": extras.origin,
        "frontmatter": json.dumps(extras.frontmatter, ensure_ascii=False, sort_keys=True),
        "files": json.dumps(extras.files, ensure_ascii=False, sort_keys=True),
        "warnings": json.dumps(list(extras.warnings), ensure_ascii=False),
    }


def _revision_columns(skill: Skill, number: int, action: str, actor: Actor, now: str, message: str) -> dict[str, Any]:
    return {
        "skill_id": skill.id,
        "number": number,
        "version": skill.version,
        "action": action,
        "author": actor.id,
        "created_at": now,
        "message": message,
        "snapshot": json.dumps(skill_to_document(skill), ensure_ascii=False, sort_keys=True),
    }


def _revision(row: RevisionRow) -> Revision:
    return Revision(
        row.skill_id,
        row.number,
        row.version,
        row.action,
        row.author,
        row.created_at,
        row.message,
        json.loads(row.snapshot),
    )


def _audit_entry(row: AuditRow) -> AuditEntry:
    return AuditEntry(
        row.id,
        row.at,
        row.actor,
        row.actor_kind,
        row.action,
        row.skill_id,
        row.revision,
        json.loads(row.details or "{}"),
    )


def _verification_columns(skill: Skill, record: VerificationRecord) -> dict[str, Any]:
    columns = record_to_document(record)
    columns["skill_id"] = skill.id
    columns["body_hash"] = record.body_hash or body_hash(skill)
    return columns


def _record(row: VerificationRow) -> VerificationRecord:
    return VerificationRecord(
        row.recorded_at,
        EvidenceKind(row.kind),
        row.wins,
        row.losses,
        row.draws,
        row.errors,
        row.opponent,
        row.rating,
        row.rated,
        row.engine_version,
        row.body_hash,
        row.note,
    )


def _changed_fields(before: Skill, after: Skill) -> list[str]:
    old, new = skill_to_document(before, local=False), skill_to_document(after, local=False)
    return sorted(key for key in new if old.get(key) != new[key])


# --- compositions ---------------------------------------------------------------------------------


def _compositions(session: Session, skill_id: str) -> list[Composition]:
    rows = session.scalars(
        select(SkillCompositionRow).where(
            (SkillCompositionRow.skill_a == skill_id) | (SkillCompositionRow.skill_b == skill_id)
        )
    )
    return _compositions_of(skill_id, rows)


def _compositions_of(skill_id: str, rows: Iterable[SkillCompositionRow]) -> list[Composition]:
    by_partner: dict[str, Composition] = {}
    for row in rows:
        first = row.skill_a == skill_id
        partner = row.skill_b if first else row.skill_a
        count = row.success_count or 0
        known = by_partner.get(partner)
        if known is None or count > known.success_count:
            by_partner[partner] = Composition(partner, count, first)
    return sorted(by_partner.values(), key=lambda c: (-c.success_count, c.partner_id))


def _check_partners(session: Session, skills: Sequence[Skill]) -> None:
    """Every composable_with id must name a stored skill (D057's foreign key would refuse it)."""
    wanted = sorted({partner for skill in skills for partner in skill.composable_with})
    present: set[str] = set()
    for chunk in _chunks(wanted):
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
) -> list[dict[str, Any]]:
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


# --- helpers --------------------------------------------------------------------------------------


def _bulk_insert(session: Session, table: type, rows: list[dict[str, Any]]) -> None:
    """One executemany per table: without render_nulls, rows whose None values differ would be
    split into many statements (the ORM leaves None columns out of each INSERT)."""
    session.execute(insert(table).execution_options(render_nulls=True), rows)


def _versions(session: Session, ids: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for chunk in _chunks(ids):
        rows = session.execute(
            select(SkillVersionRow.skill_id, SkillVersionRow.version).where(SkillVersionRow.skill_id.in_(chunk))
        )
        out.update((skill_id, version) for skill_id, version in rows)
    return out


def _refuse_duplicate_ids(skills: Sequence[Skill]) -> None:
    seen: set[str] = set()
    for index, skill in enumerate(skills):
        if skill.id in seen:
            raise InvalidSkillData([Issue(f"[{index}].id", f"{skill.id!r} appears twice")])
        seen.add(skill.id)


def _chunks(items: Sequence[str]) -> Iterator[list[str]]:
    items = list(items)
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


__all__ = [
    "Actor",
    "AuditEntry",
    "Composition",
    "ImportItem",
    "LibraryStats",
    "Revision",
    "SkillExtras",
    "SkillRepository",
    "SkillSummary",
    "TrashEntry",
    "body_hash",
]
