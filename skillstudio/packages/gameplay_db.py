"""``skillstudio publish`` and ``skillstudio pull``: a library and the engine's D057 SQLite file.

**Publish** (docs/team-library.md) writes the skills a query selects from any library (read
only through the repository, so a file or a team server alike) to a new SQLite file with
exactly D057's DDL (``store/d057_schema.sql``) and the store's FTS5 sync triggers, so an
engine's own INSERT is searchable at once. Only D057's tables go out: no ``studio_*`` table,
no review state, creator or history. The privacy check of a Workshop package applies
(``privacy.refuses_export("d057")``): findings refuse the publish unless redacted; rejected
skills and rows that hold no valid skill are left out. The file is built under a temporary
name beside the target in one transaction, flushed and renamed over it
(:func:`files.replace_atomically`): an engine opening the target sees the old file or the new
one, never half of one, and a failure leaves the old file as it was. A target that holds
anything publishing would lose is refused: a file that is not SQLite, other tables (a whole
``gameplay.db`` with match history), skills the library does not know (an engine learned them:
pull first), or a ``-wal`` beside it (a program has it open in WAL mode).

**Pull** reads an engine's file as any untrusted input: opened read-only, its ``skills`` (and
``skill_compositions``) checked to have D057's columns, every row parsed by the store's row
parser; one bad row refuses the pull, naming the row and what is wrong, with nothing written.
The rows then go through the package importer's merge rules (``importer.plan_import``, origin
``engine:<file name>``): new ``llm_discovered`` skills are added as ``pending``, with the
engine's figures kept as a claim (never this library's quality); content that differs from a
skill the library holds from elsewhere is a conflict, kept. A skill whose content is unchanged
but whose figures the engine moved on (at least as many verifications as the library's, and
not already claimed) has its new figures kept as the claim and goes back to ``pending`` for a
person to look at. Pulling the same file again, or a file just published, changes nothing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

from skillstudio.files import replace_atomically
from skillstudio.model import Issue, ReviewState, Skill, SourceKind
from skillstudio.model.claims import CLAIMED_QUALITY, claim_in
from skillstudio.packages.errors import PackageError, refuse
from skillstudio.packages.export import ExportPreview, PrivacyError, Progress, SkipReporter, load_selection
from skillstudio.packages.importer import ImportPlan, Incoming, PlannedSkill, claim_quality, plan_import
from skillstudio.packages.privacy import refuses_export
from skillstudio.store import ImportItem, SkillExtras, SkillRepository
from skillstudio.store.backends.sqlite import NEW_FILE_PRAGMAS, read_only_uri, sqlite_file_kind
from skillstudio.store.errors import InvalidStoredSkill
from skillstudio.store.imports import present_ids
from skillstudio.store.migrations import D057_SKILL_COLUMNS, d057_statements, fts_sync_triggers
from skillstudio.store.orm import SkillMetaRow, SkillRow
from skillstudio.store.pulls import import_with_claims
from skillstudio.store.skill_rows import meta_columns, parse_row, row_document, skill_columns

PUBLISH_FORMAT = "d057"  # the privacy rule's name for a published library
ENGINE_ORIGIN = "engine:"
# What pull reads of one text column: far above any valid skill's (a body's long texts are
# capped at 500,000 characters each); a longer value is reported, never loaded whole.
MAX_COLUMN_TEXT = 4_000_000
MAX_PULL_ROWS = 1_000_000
# FTS5's shadow tables of D057's skills_fts: part of D057's DDL, not other data.
_FTS_SHADOWS = frozenset(f"skills_fts_{part}" for part in ("data", "idx", "content", "docsize", "config"))
_D057_TABLES = frozenset(d057_statements())


# --- publish --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Published:
    target: Path
    skills: list[Skill]  # as written (redacted ones changed)
    compositions: int
    preview: ExportPreview  # what was selected, left out and found


def publish(
    repository: SkillRepository,
    ids: Sequence[str],
    target: str | Path,
    *,
    redact: bool = False,
    progress: Progress | None = None,
    on_skip: SkipReporter | None = None,
) -> Published:
    """Write the skills ``ids`` names to ``target`` as a D057 library, replacing it atomically.

    Refused, with ``target`` untouched: privacy findings without ``redact`` (PrivacyError), no
    skill left to publish, a target publishing would lose data from (PackageError)."""
    target = Path(target).expanduser().absolute()
    preview = load_selection(repository, ids, progress, on_skip=on_skip)
    if preview.findings and not redact and refuses_export(PUBLISH_FORMAT):
        raise PrivacyError(preview.findings)
    if not preview.skills:
        raise refuse(target.name, "no skills match; nothing was published and the file was left as it was")
    check_target(repository, target)
    skills = preview.as_written(redact=redact)
    pairs = _pairs(repository, skills)
    replace_atomically(target, partial(_write_library, skills=skills, pairs=pairs))
    return Published(target, skills, len(pairs), preview)


def check_target(repository: SkillRepository, target: Path) -> None:
    """Refuse a target whose replacement would lose data (see the module's docstring)."""
    if target.is_dir():
        raise refuse(str(target), "is a folder; publish writes a file")
    if not target.parent.is_dir():
        raise refuse(str(target), f"its folder {target.parent} does not exist")
    if not target.exists() or target.stat().st_size == 0:
        return
    wal = target.with_name(target.name + "-wal")
    if wal.exists():
        raise refuse(
            str(target),
            f"{wal.name} is beside it: a program (an engine) has it open in WAL mode, or left changes there; "
            "replacing it now could lose or corrupt them. Stop that program (and pull what it learned), "
            "or publish to a new file",
        )
    if sqlite_file_kind(target) != "database":
        raise refuse(str(target), "is not a SQLite database; publish only replaces a D057 library")
    tables, engine_ids = _target_contents(target)
    other = sorted(tables - _D057_TABLES - _FTS_SHADOWS)
    if other:
        shown = ", ".join(other[:6]) + (f" and {len(other) - 6} more" if len(other) > 6 else "")
        what = "is a SkillStudio library" if any(t.startswith("studio_") for t in other) else "is not a published file"
        raise refuse(
            str(target),
            f"{what}: it holds tables {shown} besides D057's, which replacing it would lose; publish to a new file",
        )
    known = present_ids(repository.database, engine_ids)
    if len(known) < len(engine_ids):
        trashed = {entry.skill_id for entry in repository.trash.entries()}
        unknown = sorted(set(engine_ids) - known - trashed)
        if unknown:
            raise refuse(
                str(target),
                f"holds {len(unknown)} skills this library does not have (an engine learned them?), such as "
                f"{unknown[0]!r}; replacing it would lose them: pull them first (skillstudio pull), "
                "or publish to a new file",
            )


def _target_contents(target: Path) -> tuple[set[str], list[str]]:
    """The tables of an existing target and the ids its ``skills`` holds, read read-only."""
    uri, _wal = read_only_uri(target)
    try:
        connection = sqlite3.connect(uri, uri=True)
        try:
            tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            tables = {t for t in tables if not t.startswith("sqlite_")}
            ids = (
                [row[0] for row in connection.execute("SELECT id FROM skills") if isinstance(row[0], str)]
                if "skills" in tables
                else []
            )
            return tables, ids
        finally:
            connection.close()
    except sqlite3.DatabaseError as error:
        raise refuse(str(target), f"is not a usable SQLite database ({error}); left as it was") from None


def _pairs(repository: SkillRepository, skills: Sequence[Skill]) -> list[tuple[str, str, int]]:
    """D057's composition rows between published skills (a link to a skill left out would
    break D057's foreign key), each pair once, in the order the library holds it."""
    published = {skill.id for skill in skills}
    pairs: dict[tuple[str, str], int] = {}
    for skill in skills:
        if not any(partner in published for partner in skill.composable_with):
            continue
        for composition in repository.evidence.compositions(skill.id):
            if composition.partner_id in published:
                pair = (skill.id, composition.partner_id) if composition.first else (composition.partner_id, skill.id)
                pairs[pair] = composition.success_count
    return [(a, b, count) for (a, b), count in pairs.items()]


def _write_library(path: Path, *, skills: Sequence[Skill], pairs: Sequence[tuple[str, str, int]]) -> None:
    """Fill the empty file ``path``: D057's DDL, the FTS5 triggers and the rows, one transaction."""
    columns = ", ".join(D057_SKILL_COLUMNS)
    marks = ", ".join("?" * len(D057_SKILL_COLUMNS))
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        for pragma in (*NEW_FILE_PRAGMAS, "PRAGMA foreign_keys = ON"):
            connection.execute(pragma)
        connection.execute("BEGIN IMMEDIATE")
        for statement in (*d057_statements().values(), *fts_sync_triggers()):
            connection.execute(statement)
        connection.executemany(
            f"INSERT INTO skills ({columns}) VALUES ({marks})",
            (tuple(skill_columns(skill)[column] for column in D057_SKILL_COLUMNS) for skill in skills),
        )
        connection.executemany("INSERT INTO skill_compositions VALUES (?, ?, ?)", pairs)
        connection.execute("COMMIT")
    finally:
        connection.close()


# --- pull -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EngineRow:
    """One row of an engine's ``skills`` as read: not yet parsed (its id may be anything)."""

    rowid: int
    row: SkillRow
    partners: tuple[str, ...]

    @property
    def label(self) -> str:
        skill_id = self.row.id
        return f"row {skill_id!r}" if isinstance(skill_id, str) and skill_id else f"row at rowid {self.rowid}"


def read_engine_rows(path: str | Path) -> list[EngineRow]:
    """Every row of an engine's D057 file, read-only; PackageError when the file is not SQLite,
    its tables are not D057's, or it is too large. Rows are checked later (:func:`plan_pull`)."""
    path = Path(path).expanduser().absolute()
    if not path.is_file():
        raise refuse(str(path), "does not exist" if not path.exists() else "is not a file")
    if sqlite_file_kind(path) != "database":
        raise refuse(path.name, "is not a SQLite database; nothing was pulled")
    uri, _wal = read_only_uri(path)
    try:
        connection = sqlite3.connect(uri, uri=True, isolation_level=None)
        try:
            connection.execute("PRAGMA query_only = ON")
            connection.execute("PRAGMA trusted_schema = OFF")  # its views and triggers never run our way
            connection.execute("BEGIN")  # one snapshot, even while the engine writes
            has_pairs = _check_schema(path.name, connection)
            return _engine_rows(path.name, connection, has_pairs)
        finally:
            connection.close()
    except sqlite3.DatabaseError as error:
        raise refuse(path.name, f"is not a usable SQLite database ({error}); nothing was pulled") from None


def _columns(connection: sqlite3.Connection, table: str) -> list[tuple[object, ...]]:
    return [tuple(row) for row in connection.execute(f"PRAGMA table_info({table})")]


def _check_schema(name: str, connection: sqlite3.Connection) -> bool:
    """Refuse a file whose ``skills`` (and ``skill_compositions``, when present) are not D057's
    tables, column for column; whether it has ``skill_compositions``."""
    kinds = dict(
        connection.execute("SELECT name, type FROM sqlite_master WHERE name IN ('skills', 'skill_compositions')")
    )
    if kinds.get("skills") != "table":
        raise refuse(name, "has no D057 'skills' table; it is not an engine's skill library")
    reference = sqlite3.connect(":memory:")
    try:
        statements = d057_statements()
        for table in ("skills", "skill_compositions"):
            reference.execute(statements[table])
        issues = [
            Issue(table, f"its columns are not D057's: {_column_difference(_columns(reference, table), found)}")
            for table in ("skills", "skill_compositions")
            if kinds.get(table) is not None and (found := _columns(connection, table)) != _columns(reference, table)
        ]
    finally:
        reference.close()
    if kinds.get("skill_compositions") not in (None, "table"):
        issues.append(Issue("skill_compositions", "is not a table"))
    if issues:
        raise PackageError(issues, context=f"{name} refused (wrong schema); nothing was pulled")
    return "skill_compositions" in kinds


def _column_difference(wanted: list[tuple[object, ...]], found: list[tuple[object, ...]]) -> str:
    """The first difference, as a person reads it: a column missing, extra or declared otherwise."""
    wanted_by_name = {row[1]: row for row in wanted}
    found_by_name = {row[1]: row for row in found}
    missing = [str(n) for n in wanted_by_name if n not in found_by_name]
    if missing:
        return f"missing {', '.join(missing)}"
    extra = [str(n) for n in found_by_name if n not in wanted_by_name]
    if extra:
        return f"extra {', '.join(extra)}"
    for name, row in wanted_by_name.items():
        if found_by_name[name] != row:
            return f"{name} is declared {found_by_name[name][2]!s} (not null {found_by_name[name][3]}, default {found_by_name[name][4]}), D057 says {row[2]!s} (not null {row[3]}, default {row[4]})"
    return "in another order"


def _engine_rows(name: str, connection: sqlite3.Connection, has_pairs: bool) -> list[EngineRow]:
    count = connection.execute("SELECT COUNT(*) FROM skills").fetchone()[0]
    if count > MAX_PULL_ROWS:
        raise refuse(name, f"holds {count} skills, at most {MAX_PULL_ROWS} are pulled at once")
    partners: dict[object, list[str]] = {}
    if has_pairs:
        for skill_a, skill_b in connection.execute("SELECT skill_a, skill_b FROM skill_compositions"):
            if isinstance(skill_a, str) and isinstance(skill_b, str) and skill_a != skill_b:
                partners.setdefault(skill_a, []).append(skill_b)
                partners.setdefault(skill_b, []).append(skill_a)
    # Long values are cut at the limit when read (and reported below), never loaded whole.
    selected = ", ".join(
        f"CASE WHEN typeof({c}) IN ('text', 'blob') THEN substr({c}, 1, {MAX_COLUMN_TEXT + 1}) ELSE {c} END"
        for c in D057_SKILL_COLUMNS
    )
    out = []
    for rowid, *values in connection.execute(f"SELECT rowid, {selected} FROM skills ORDER BY rowid"):
        row = SkillRow(**dict(zip(D057_SKILL_COLUMNS, values, strict=True)))
        out.append(EngineRow(rowid, row, tuple(dict.fromkeys(partners.get(row.id, ())))))
    return out


@dataclass
class PullPlan:
    """What a pull would do: the import's plan, and the skills whose new figures go to review."""

    imports: ImportPlan
    claimed: list[ImportItem] = field(default_factory=list)

    @property
    def changes(self) -> int:
        return self.imports.changes + len(self.claimed)

    def summary(self) -> str:
        return f"{self.imports.summary()}; {len(self.claimed)} with new figures for review"


def plan_pull(repository: SkillRepository, path: str | Path) -> PullPlan:
    """Read and check every row of an engine's file, then decide, without writing, what a pull
    would do (``--dry-run`` prints this). PackageError names every bad row; nothing is written."""
    path = Path(path).expanduser().absolute()
    origin = f"{ENGINE_ORIGIN}{path.name}"
    rows = read_engine_rows(path)
    ids = [r.row.id for r in rows if isinstance(r.row.id, str)]
    present = present_ids(repository.database, ids)
    stored, _invalid = repository.get_many_valid(sorted(present))
    stored_by_id = {skill.id: skill for skill in stored}
    extras = repository.extras.many(list(stored_by_id))
    figures: dict[str, Skill] = {}  # each row's skill as the engine holds it, figures included
    incoming: list[Incoming] = []
    skipped: list[PlannedSkill] = []
    issues: list[Issue] = []
    for engine_row in rows:
        skill = _parse(engine_row, stored_by_id, issues)
        if skill is None:
            continue
        entry = f"{path.name}:{skill.id}"
        known = stored_by_id.get(skill.id)
        if skill.id not in present and skill.source_kind is not SourceKind.LLM_DISCOVERED:
            skipped.append(
                PlannedSkill(
                    "skip",
                    skill.id,
                    skill.name,
                    entry,
                    f"{skill.source_kind.value}: a pull brings only skills the engine learned (llm_discovered)",
                )
            )
            continue
        figures[skill.id] = skill
        # A skill the library holds keeps its origin (the engine only played it); a new one is the engine's.
        base = extras.get(skill.id) or SkillExtras(origin="" if skill.id in present else origin)
        unclaimed = replace(skill, review_state=ReviewState.PENDING if known is None else None, version=0)
        skill, kept = claim_quality(unclaimed, base, origin)
        incoming.append(Incoming(entry, skill, kept, attributed=known is not None))
    if issues:
        raise PackageError(issues, context=f"{path.name} refused (rows that hold no valid skill); nothing was pulled")
    plan = PullPlan(plan_import(repository, incoming, origin=origin, source=path.name, mode="merge"))
    plan.imports.steps.extend(skipped)
    _send_new_figures_to_review(plan, incoming, figures, stored_by_id, extras)
    return plan


def _send_new_figures_to_review(
    plan: PullPlan,
    incoming: Sequence[Incoming],
    figures: dict[str, Skill],
    stored: dict[str, Skill],
    extras: dict[str, SkillExtras],
) -> None:
    """Turn each skip of a stored skill (its content unchanged) whose engine figures are news
    into an update that records them as the skill's claim and sends it to review: figures that
    differ from the library's, count at least as many verifications (fewer: the library's own
    are newer), and are not the claim already recorded (so a second pull finds nothing)."""
    by_id = {item.skill.id: item for item in incoming}
    for index, step in enumerate(plan.imports.steps):
        known = stored.get(step.skill_id)
        if step.action != "skip" or known is None:  # a stored skill is only ever skipped as unchanged
            continue
        engine, mine = figures[step.skill_id].quality, known.quality
        item = by_id[step.skill_id]
        new_claim = (item.extras or SkillExtras()).frontmatter.get(CLAIMED_QUALITY)
        old_claim = claim_in((extras.get(known.id) or SkillExtras()).frontmatter)
        if engine == mine or engine.verification_count < mine.verification_count or new_claim == old_claim:
            continue
        plan.claimed.append(ImportItem(known, item.extras))
        plan.imports.steps[index] = replace(
            step,
            action="update",
            reason=f"new figures from the engine ({engine.verification_count} verifications at "
            f"{engine.success_rate:.0%}, {engine.confidence.value}): pending review",
        )


def _parse(engine_row: EngineRow, stored: dict[str, Skill], issues: list[Issue]) -> Skill | None:
    """The row's skill, by the store's row parser, or None with its problems added to ``issues``.

    A row the library holds is read with the library's metadata (creator, engine version,
    Workshop source), which D057's table has no columns for: the engine's row is the same skill."""
    row = engine_row.row
    too_long = [c for c in D057_SKILL_COLUMNS if _length(getattr(row, c)) > MAX_COLUMN_TEXT]
    if too_long:
        issues.extend(
            Issue(f"{engine_row.label}: {column}", f"is longer than {MAX_COLUMN_TEXT} characters; not read")
            for column in too_long
        )
        return None
    known = stored.get(row.id) if isinstance(row.id, str) else None
    meta = None if known is None else SkillMetaRow(**{**meta_columns(known), "review_state": None})
    try:
        return parse_row(str(row.id), row_document(row, meta, 0, list(engine_row.partners)))
    except InvalidStoredSkill as error:
        issues.extend(
            Issue(f"{engine_row.label}: {issue.path}" if issue.path else engine_row.label, issue.message)
            for issue in error.issues
        )
        return None


def _length(value: object) -> int:
    return len(value) if isinstance(value, str | bytes) else 0


def apply_pull(repository: SkillRepository, plan: PullPlan) -> PullPlan:
    """Write the plan in one transaction; on any error the library is left as it was."""
    imports = plan.imports
    if plan.changes:
        import_with_claims(
            repository.database,
            repository.actor,
            imports.added,
            imports.replaced,
            plan.claimed,
            message=f"pull from {imports.origin}",
            why=f"new quality figures from {imports.origin}, for review",
        )
    return plan


def pulled_ids(plan: PullPlan) -> list[str]:
    """The skills a pull added or changed in content (whose vectors retrieval must compute)."""
    return [step.skill_id for step in plan.imports.steps if step.action == "add"] + [
        item.skill.id for item in plan.imports.replaced
    ]


__all__ = [
    "ENGINE_ORIGIN",
    "MAX_COLUMN_TEXT",
    "MAX_PULL_ROWS",
    "PUBLISH_FORMAT",
    "EngineRow",
    "Published",
    "PullPlan",
    "apply_pull",
    "check_target",
    "plan_pull",
    "publish",
    "pulled_ids",
    "read_engine_rows",
]
