"""The one API every front end (CLI, GUI, agents, importers) uses to read and change a library.

:class:`SkillRepository` is the front door: it reads and writes skills themselves, and hands out
the parts that own the rest, each bound to the same library and actor:

* ``reviews``: review decisions, and an agent's update that goes back to pending
* ``findings``: the risk linter's stored findings
* ``trash``: delete to the trash, restore, empty, list
* ``evidence``: verification records, quality, composition counts
* ``extras``: what imports carry beyond D057's row
* ``history``: revisions and the audit log
* ``facets``: statistics and the values a filter panel offers
* ``embeddings``: retrieval vectors
* ``privacy_marks``: false-positive marks on export privacy findings
* ``runs``: verification runs and their games
* ``agent_writes``: each agent's write budget
* ``settings``: the settings this library overrides (policy thresholds, prune limits)

Every mutation runs in one transaction (:mod:`skillstudio.store.unit_of_work`) that also writes
a revision (a full snapshot, author, time, message) and an audit-log entry, so history and audit
can never disagree with the data. Updates are optimistic: they carry the content version they
were based on and are refused with :class:`ConflictError` if another writer (an engine, another
window) got there first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import nullcontext

from sqlalchemy import Select, func, select

from skillstudio.gc_pause import gc_paused
from skillstudio.model import ReviewState, Skill
from skillstudio.model.evidence import VerificationRecord
from skillstudio.store.agent_writes import AgentWriteBudget
from skillstudio.store.database import Cancellation, Database
from skillstudio.store.embeddings import EmbeddingStore
from skillstudio.store.errors import ConflictError, InvalidStoredSkill, SkillNotFound
from skillstudio.store.events import AuditAction
from skillstudio.store.evidence import Evidence
from skillstudio.store.extras import Extras
from skillstudio.store.facets import Facets
from skillstudio.store.findings import Findings
from skillstudio.store.history import History
from skillstudio.store.imports import PackageKey, apply_import
from skillstudio.store.orm import SkillMetaRow, SkillRow
from skillstudio.store.packed_ids import PackedIds
from skillstudio.store.privacy_marks import PrivacyMarks
from skillstudio.store.query import SkillQuery, build_select, chunks, first_ids
from skillstudio.store.reviews import Reviews
from skillstudio.store.runs import RunStore
from skillstudio.store.settings import LibrarySettings
from skillstudio.store.skill_rows import load_many, load_skill
from skillstudio.store.skill_writes import insert_new, refuse_duplicate_ids, update_distinct, update_one
from skillstudio.store.summaries import read_summaries
from skillstudio.store.trash import Trash
from skillstudio.store.types import Actor, ImportItem, QueryResult, SkillSummary
from skillstudio.store.unit_of_work import StorePart

_ALL = SkillQuery()
_ID_CHUNK = 10_000  # ids read from the cursor at a time while packing them


def _paged(statement: Select[str], query: SkillQuery) -> Select[str]:
    """``statement`` with the query's offset and limit, if it has any."""
    if query.offset:
        statement = statement.offset(query.offset)
    return statement if query.limit is None else statement.limit(query.limit)


class SkillRepository(StorePart):
    """The front door: skills themselves (read, query, create, update, import) and the parts."""

    def __init__(self, database: Database, actor: Actor | None = None) -> None:
        super().__init__(database, actor or Actor.current_user())
        self.reviews = Reviews(database, self.actor)
        self.findings = Findings(database)
        self.trash = Trash(database, self.actor)
        self.evidence = Evidence(database, self.actor)
        self.extras = Extras(database)
        self.history = History(database)
        self.facets = Facets(database)
        self.embeddings = EmbeddingStore(database, self.actor)
        self.privacy_marks = PrivacyMarks(database, self.actor)
        self.runs = RunStore(database)
        self.agent_writes = AgentWriteBudget(database)
        self.settings = LibrarySettings(database, self.actor)

    def as_actor(self, actor: Actor) -> SkillRepository:
        """The same library, every part of it writing as ``actor``."""
        return SkillRepository(self.database, actor)

    # --- reading --------------------------------------------------------------------------------

    def get(self, skill_id: str) -> Skill:
        with self.database.read() as session:
            return load_skill(session, skill_id)

    def get_many(self, skill_ids: Sequence[str]) -> list[Skill]:
        """Several skills in one read transaction, a few queries per 500 (exports), in the given
        order; SkillNotFound or InvalidStoredSkill as ``get`` would raise for the first bad one."""
        out: list[Skill] = []
        for _skill_id, skill in self._read_many(skill_ids):
            if not isinstance(skill, Skill):
                raise skill
            out.append(skill)
        return out

    def get_many_valid(
        self, skill_ids: Sequence[str], *, progress: Callable[[int, int], None] | None = None
    ) -> tuple[list[Skill], list[tuple[str, str]]]:
        """Like :meth:`get_many`, but tolerant: the skills that could be read, in the given order,
        and ``(id, reason)`` for each id that is gone or whose row does not hold a valid skill
        (rows other programs write are untrusted; one bad row must not stop an export).
        ``progress(done, total)``: as :func:`~skillstudio.store.skill_rows.load_many` says."""
        skills: list[Skill] = []
        skipped: list[tuple[str, str]] = []
        for skill_id, skill in self._read_many(skill_ids, progress):
            if isinstance(skill, Skill):
                skills.append(skill)
            elif isinstance(skill, InvalidStoredSkill):
                skipped.append((skill_id, skill.reason))
            else:
                skipped.append((skill_id, str(skill)))  # gone: "no skill with id ... in the trash"
        return skills, skipped

    def _read_many(
        self, skill_ids: Sequence[str], progress: Callable[[int, int], None] | None = None
    ) -> list[tuple[str, Skill | SkillNotFound | InvalidStoredSkill]]:
        """Each id with its skill, or the error ``get`` would raise for it; one read transaction."""
        with self.database.read() as session:
            return load_many(session, skill_ids, progress=progress)

    def exists(self, skill_id: str) -> bool:
        with self.database.read() as session:
            return session.get(SkillRow, skill_id) is not None

    def resolve_id(self, prefix: str) -> str:
        """The full id for a unique prefix (at least 4 characters), as ``git`` resolves hashes."""
        with self.database.read() as session:
            if session.get(SkillRow, prefix) is not None:
                return prefix
            if len(prefix) >= 4:
                # autoescape: % and _ in a prefix are characters, not wildcards
                matches = session.scalars(
                    select(SkillRow.id).where(SkillRow.id.startswith(prefix, autoescape=True)).limit(2)
                ).all()
                if len(matches) == 1:
                    return matches[0]
                if matches:
                    raise SkillNotFound(f"{prefix}…", ambiguous=True)
        raise SkillNotFound(prefix)

    def query(self, query: SkillQuery = _ALL, *, cancellation: Cancellation | None = None) -> QueryResult:
        """The ids ``query`` selects, in its order, and how many match. ``cancellation`` may stop
        it from another thread (a StorageError): nobody waits for its answer any more."""
        statement = build_select(query, self.database.backend)
        with self.database.read() as session:
            # Core execution: ids need no ORM identity map, which costs more than SQLite here.
            connection = session.connection()
            with (
                cancellation.watching(connection, self.database.backend) if cancellation is not None else nullcontext()
            ):
                if query.offset or query.limit is not None:
                    counted = select(func.count()).select_from(statement.order_by(None).subquery())
                    total = connection.execute(counted).scalar_one()
                    ids = list(connection.execute(_paged(statement, query)).scalars())
                else:
                    ids = list(connection.execute(statement).scalars())
                    total = len(ids)
        return QueryResult(ids, total, query)

    def query_ids(self, query: SkillQuery = _ALL, *, cancellation: Cancellation | None = None) -> PackedIds:
        """``query(query).ids``, packed as they are read: a table of a million rows keeps them
        in tens of megabytes, never as a million strings at once (:class:`PackedIds`)."""
        with self.database.read() as session:
            connection = session.connection()
            with (
                cancellation.watching(connection, self.database.backend) if cancellation is not None else nullcontext()
            ):
                rows = connection.execute(_paged(build_select(query, self.database.backend), query)).scalars()
                return PackedIds.from_chunks(rows.partitions(_ID_CHUNK))

    def first_page(self, query: SkillQuery, count: int) -> list[str]:
        """The first ``count`` ids ``query(query)`` would list (offset and limit aside), read
        without ranking or sorting every match: what a table shows first, at once."""
        with self.database.read() as session:
            return first_ids(session.connection(), query, count, self.database.backend)

    def summaries(self, ids: Sequence[str]) -> list[SkillSummary]:
        """Rows for these ids, in the given order; ids no longer present are skipped.

        Reads only the listed columns (never body_json), so a page of a table costs little.
        """
        with self.database.read() as session:
            return read_summaries(session, ids)

    def count(self) -> int:
        with self.database.read() as session:
            return session.scalar(select(func.count()).select_from(SkillRow)) or 0

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

    def body_json_many(self, ids: Sequence[str]) -> dict[str, str]:
        """The raw ``body_json`` text of these skills, by id, unparsed (the caller parses it
        defensively: an engine may have written anything there)."""
        out: dict[str, str] = {}
        with self.database.read() as session:
            connection = session.connection()
            for chunk in chunks(ids):
                rows = connection.execute(select(SkillRow.id, SkillRow.body_json).where(SkillRow.id.in_(chunk)))
                out.update((skill_id, body) for skill_id, body in rows if isinstance(body, str))
        return out

    # --- writing --------------------------------------------------------------------------------

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

    @gc_paused()
    def create_many(
        self,
        items: Iterable[Skill | tuple[Skill, Sequence[VerificationRecord]]],
        *,
        message: str = "",
        action: AuditAction = AuditAction.CREATE,
        based_on: Skill | None = None,
    ) -> int:
        """Add many skills in one transaction (imports, the sample library): all or nothing."""
        pairs = [item if isinstance(item, tuple) else (item, ()) for item in items]
        if not pairs:
            return 0
        skills = [skill for skill, _ in pairs]
        refuse_duplicate_ids(skills)
        # An agent's skill starts pending: a decided state would be a review, which only people make.
        # (SkillStudio itself, as "system", writes the bundled sample's recorded decisions.)
        if self.actor.kind == "agent" and any(s.review_state not in (None, ReviewState.PENDING) for s in skills):
            self._require_human("create a skill with a review decision")
        with self._work(action) as work:
            if based_on is not None:
                current = work.load(based_on.id)
                if current.version != based_on.version:
                    raise ConflictError(yours=skills[0], theirs=current, read_version=based_on.version)
            work.touch(skill.id for skill in skills)
            insert_new(work, pairs, message, "create")
        return len(skills)

    def update(self, skill: Skill, *, message: str = "") -> Skill:
        """Store an edited skill. ``skill.version`` must be the version it was read at.

        Quality figures, use count and review state are not taken from ``skill``: they belong
        to verification, play and review, and an edit must never roll them back.
        """
        return self.update_many([skill], message=message)[0]

    @gc_paused()
    def update_many(self, skills: Sequence[Skill], *, message: str = "") -> list[Skill]:
        """Several updates (a bulk retag) in one transaction: all are stored, or none."""
        with self._work(AuditAction.UPDATE) as work:
            work.touch(skill.id for skill in skills)
            if len({skill.id for skill in skills}) == len(skills):
                return update_distinct(work, skills, message)
            # The same skill twice: the second update is checked against the first, one by one.
            return [update_one(work, skill, message) for skill in skills]

    @gc_paused()
    def import_skills(
        self,
        added: Sequence[ImportItem],
        replaced: Sequence[ImportItem] = (),
        trashed: Sequence[str] = (),
        *,
        message: str = "",
        action: AuditAction = AuditAction.IMPORT,
        package_key: PackageKey | None = None,
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
        refuse_duplicate_ids([item.skill for item in (*added, *replaced)])
        with self._work(action) as work:
            apply_import(work, added, replaced, trashed, message, package_key)


__all__ = ["SkillRepository"]
