"""Store benchmark: insert, open, list, FTS and get against synthetic libraries of given sizes.

Run it alone with ``python -m benchmarks.bench_store [--quick] [--sizes 10000 100000]`` or with
every other benchmark through ``python -m benchmarks.run``. See benchmarks/README.md for what
each figure means. Nothing here asserts a time: it measures and reports.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy

from benchmarks.synthetic import COMMON_TAG, COMMON_TERM, DEFAULT_SEED, PREFIX_QUERY, generate_skills
from skillstudio.curation.edits import retag
from skillstudio.model import Confidence, Domain
from skillstudio.store import Actor, Database, SkillQuery, SkillRepository, SortKey
from skillstudio.store.backends.sqlite import CONNECTION_PRAGMAS
from skillstudio.store.migrations import d057_statements

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = Path(__file__).resolve().parent / "out"
DEFAULT_SIZES = (10_000, 100_000)
QUICK_SIZES = (1_000,)
DEFAULT_BATCH = 5_000
DEFAULT_REPEATS = 15
DEFAULT_WARMUPS = 2
SUMMARY_ROWS = 200  # what a skill table shows at once
RETAG_SKILLS = 10_000  # a large bulk retag (issue 17: ~50 s before update_many was batched)
RETAG_TAG = "bench-retag"
ACTOR = Actor("benchmark", "system")

FILTERED = SkillQuery(
    domains=(Domain.AI_STRATEGY,),
    confidences=(Confidence.ESTABLISHED, Confidence.PROVEN),
    game_modules=("ra1",),
    sort=SortKey.SUCCESS_RATE,
    descending=True,
)
FILTERED_TAGGED = SkillQuery(
    domains=FILTERED.domains,
    confidences=FILTERED.confidences,
    game_modules=FILTERED.game_modules,
    tags=(COMMON_TAG,),
    sort=FILTERED.sort,
    descending=FILTERED.descending,
)
FILTERED_PAGE = SkillQuery(
    domains=FILTERED.domains,
    confidences=FILTERED.confidences,
    game_modules=FILTERED.game_modules,
    sort=FILTERED.sort,
    descending=FILTERED.descending,
    limit=SUMMARY_ROWS,
)
ALL_BY_NAME = SkillQuery(sort=SortKey.NAME)

# Runs in a fresh interpreter: imports first (not timed), then Database(path) + count().
_COLD_OPEN_CHILD = r"""
import json, sys, time
import sqlite3
import sqlalchemy.dialects.sqlite.pysqlite  # the dialect create_engine would import lazily
from skillstudio.store import Actor, Database, SkillRepository
path = sys.argv[1]
start = time.perf_counter()
database = Database(path)
opened = time.perf_counter()
count = SkillRepository(database, Actor("benchmark", "system")).count()
counted = time.perf_counter()
database.close()
print(json.dumps({"open_s": opened - start, "count_s": counted - opened, "total_s": counted - start, "count": count}))
"""


# --- measuring ------------------------------------------------------------------------------------


@dataclass
class Timing:
    name: str
    description: str
    samples: list[float]  # seconds
    result: dict[str, int] = field(default_factory=dict)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def p95(self) -> float:
        return percentile(self.samples, 95)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "median_ms": self.median * 1000,
            "p95_ms": self.p95 * 1000,
            "min_ms": min(self.samples) * 1000,
            "max_ms": max(self.samples) * 1000,
            "repeats": len(self.samples),
            "samples_ms": [sample * 1000 for sample in self.samples],
            "result": self.result,
        }


def percentile(samples: Sequence[float], pct: float) -> float:
    """Linear-interpolated percentile (``statistics.quantiles``' inclusive method)."""
    if len(samples) == 1:
        return samples[0]
    return statistics.quantiles(samples, n=100, method="inclusive")[int(pct) - 1]


def measure(fn: Callable[[], Any], *, repeats: int, warmups: int) -> tuple[list[float], Any]:
    """Seconds per call over ``repeats`` calls after ``warmups`` untimed ones; the last result."""
    result = None
    for _ in range(warmups):
        result = fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        samples.append(time.perf_counter() - start)
    return samples, result


# --- one library size -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    repeats: int = DEFAULT_REPEATS
    warmups: int = DEFAULT_WARMUPS
    batch: int = DEFAULT_BATCH
    seed: int = DEFAULT_SEED
    keep: bool = False


def run_size(size: int, config: Config, *, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Every measurement for a library of ``size`` skills, as a JSON-ready mapping."""
    report: dict[str, Any] = {
        "benchmark": "store",
        "size": size,
        "config": {
            "repeats": config.repeats,
            "warmups": config.warmups,
            "batch": config.batch,
            "seed": config.seed,
        },
        "environment": environment(),
    }

    log(f"[store {size:,}] generating skills (seed {config.seed}) ...")
    start = time.perf_counter()
    skills = generate_skills(size, config.seed)
    generate_s = time.perf_counter() - start
    report["generate"] = {"seconds": generate_s, "skills_per_s": size / generate_s if generate_s else None}
    ids = [skill.id for skill in skills]

    workdir = Path(tempfile.mkdtemp(prefix=f"skillstudio-bench-{size}-"))
    path = workdir / "library.db"
    try:
        log(f"[store {size:,}] inserting in batches of {config.batch:,} ...")
        report["insert"] = _insert(path, skills, config.batch)
        del skills
        report["file"] = _file_report(path)
        log(f"[store {size:,}] plain-SQLite limits: the same rows, one executemany per table and batch ...")
        report["insert_limits"] = _insert_limits(path, workdir, config.batch)

        log(f"[store {size:,}] open, list, FTS and get ({config.repeats} repeats after {config.warmups} warmups) ...")
        operations = _open_timings(path, config)
        database = Database(path)
        try:
            repository = SkillRepository(database, ACTOR)
            operations += _read_timings(repository, ids, config)
        finally:
            database.close()
        report["operations"] = [timing.to_json() for timing in operations]
        log(f"[store {size:,}] retag of {min(size, RETAG_SKILLS):,} skills (update_many) and its limit ...")
        report["retag"] = _retag(path, ids[:RETAG_SKILLS])
    finally:
        if config.keep:
            log(f"[store {size:,}] kept {path}")
        else:
            for leftover in sorted(workdir.iterdir()):
                leftover.unlink()
            workdir.rmdir()
    return report


def _insert(path: Path, skills: list, batch: int) -> dict[str, Any]:
    start = time.perf_counter()
    database = Database(path, create=True)
    created_s = time.perf_counter() - start
    repository = SkillRepository(database, ACTOR)
    batch_s: list[float] = []
    try:
        for offset in range(0, len(skills), batch):
            chunk = skills[offset : offset + batch]
            start = time.perf_counter()
            repository.create_many(chunk, message="benchmark import")
            batch_s.append(time.perf_counter() - start)
        with database.engine.connect() as connection:
            rows = {
                table: connection.exec_driver_sql(f"SELECT COUNT(*) FROM {table}").scalar_one()
                for table in (
                    "skills",
                    "studio_skill_meta",
                    "studio_revisions",
                    "studio_audit_log",
                    "skill_compositions",
                    "studio_skill_versions",
                )
            }
    finally:
        database.close()  # the last connection checkpoints the WAL into the file
    total = sum(batch_s)
    sizes = [min(batch, len(skills) - offset) for offset in range(0, len(skills), batch)]
    return {
        "create_library_s": created_s,
        "seconds": total,
        "skills_per_s": len(skills) / total if total else None,
        "batches": len(batch_s),
        "batch_seconds": batch_s,
        "first_batch_skills_per_s": sizes[0] / batch_s[0] if batch_s else None,
        "last_batch_skills_per_s": sizes[-1] / batch_s[-1] if batch_s else None,
        "rows": rows,
    }


# What create_many wrote besides D057's skills row; the full-rows limit replays them.
_WRITTEN_TABLES = ("studio_skill_meta", "skill_compositions", "studio_revisions", "studio_audit_log")


def _insert_limits(path: Path, workdir: Path, batch: int) -> dict[str, Any]:
    """Plain sqlite3 inserting the rows create_many wrote (read back from ``path``, not timed),
    in the same batches, one transaction each, one ``executemany`` per table:

    * *skills + FTS*: D057's bare ``skills`` and ``skills_fts`` (no studio indexes or triggers),
      the FTS rows given explicitly: the least any library must do for these skills;
    * *all rows*: a new library of our schema (its indexes, and the triggers that keep FTS and
      content versions), every row create_many wrote (skills, metadata, compositions, revisions
      with their compressed snapshots, audit entries): what create_many does, minus Python.
      The skills go in by one INSERT ... SELECT from a temporary table, as create_many's do.
    """
    source = sqlite3.connect(path)
    try:
        columns = [row[1] for row in source.execute("PRAGMA table_info(skills)")]
        skills = source.execute(f"SELECT {', '.join(columns)} FROM skills ORDER BY rowid").fetchall()
        written = {}
        for table in _WRITTEN_TABLES:
            names = [row[1] for row in source.execute(f"PRAGMA table_info({table})") if row[1] != "id"]
            written[table] = (names, source.execute(f"SELECT {', '.join(names)} FROM {table}").fetchall())
    finally:
        source.close()
    name_at, description_at, tags_at = (columns.index(c) for c in ("name", "description", "tags"))

    bare = workdir / "limit-bare.db"
    connection = _plain_connection(bare)
    for statement in d057_statements().values():
        connection.execute(statement)
    bare_s = 0.0
    for offset in range(0, len(skills), batch):
        rows = skills[offset : offset + batch]
        start = time.perf_counter()
        connection.execute("BEGIN IMMEDIATE")
        first = connection.execute("SELECT COALESCE(MAX(rowid), 0) + 1 FROM skills").fetchone()[0]
        connection.executemany(f"INSERT INTO skills VALUES ({', '.join('?' * len(columns))})", rows)
        connection.executemany(
            "INSERT INTO skills_fts(rowid, name, description, tags) VALUES (?, ?, ?, ?)",
            [(first + i, row[name_at], row[description_at], row[tags_at]) for i, row in enumerate(rows)],
        )
        connection.execute("COMMIT")
        bare_s += time.perf_counter() - start
    connection.close()

    full = workdir / "limit-full.db"
    Database(full, create=True).close()
    connection = _plain_connection(full)
    full_s = 0.0
    by_skill = {table: _rows_by_skill(names, rows) for table, (names, rows) in written.items()}
    id_at = columns.index("id")
    for offset in range(0, len(skills), batch):
        rows = skills[offset : offset + batch]
        ids = {row[id_at] for row in rows}
        start = time.perf_counter()
        connection.execute("BEGIN IMMEDIATE")
        # One statement into skills, as create_many does: run once per row, our triggers' FTS5
        # inserts cost seven times as much (each row's statement savepoint flushes FTS5).
        connection.execute(f"CREATE TEMP TABLE staged ({', '.join(columns)})")
        connection.executemany(f"INSERT INTO staged VALUES ({', '.join('?' * len(columns))})", rows)
        connection.execute(f"INSERT INTO skills({', '.join(columns)}) SELECT * FROM staged ORDER BY rowid")
        connection.execute("DROP TABLE staged")
        for table, (names, _) in written.items():
            connection.executemany(
                f"INSERT INTO {table}({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                [row for skill_id in ids for row in by_skill[table].get(skill_id, ())],
            )
        connection.execute("COMMIT")
        full_s += time.perf_counter() - start
    connection.close()
    for leftover in (bare, full):
        for file in leftover.parent.glob(leftover.name + "*"):
            file.unlink()
    count = len(skills)
    return {
        "skills_fts_seconds": bare_s,
        "skills_fts_per_s": count / bare_s if bare_s else None,
        "all_rows_seconds": full_s,
        "all_rows_per_s": count / full_s if full_s else None,
    }


def _retag(path: Path, ids: list[str]) -> dict[str, Any]:
    """``curation.retag`` (get_many + update_many, one transaction) adding one tag to ``ids``, run
    last, as it adds revisions. Its limit: plain sqlite3 writing the same rows to a copy of the
    library taken before (the tags by one UPDATE ... FROM staged rows, so the triggers fire,
    then the revisions and audit entries retag wrote, read back), one transaction."""
    copy = path.with_name("limit-retag.db")
    shutil.copyfile(path, copy)
    database = Database(path)
    try:
        with database.engine.connect() as connection:
            last_revision, last_audit = connection.exec_driver_sql(
                "SELECT (SELECT MAX(id) FROM studio_revisions), (SELECT MAX(id) FROM studio_audit_log)"
            ).one()
        start = time.perf_counter()
        changed = retag(SkillRepository(database, ACTOR), ids, add=[RETAG_TAG])
        seconds = time.perf_counter() - start
    finally:
        database.close()
    source = sqlite3.connect(path)
    try:
        tags = source.execute(f"SELECT tags, id FROM skills WHERE id IN ({', '.join('?' * len(ids))})", ids).fetchall()
        revisions = source.execute(
            "SELECT skill_id, number, version, action, author, created_at, message, snapshot"
            " FROM studio_revisions WHERE id > ? ORDER BY id",
            (last_revision,),
        ).fetchall()
        audits = source.execute(
            "SELECT at, actor, actor_kind, action, skill_id, revision, details FROM studio_audit_log"
            " WHERE id > ? ORDER BY id",
            (last_audit,),
        ).fetchall()
    finally:
        source.close()
    connection = _plain_connection(copy)
    start = time.perf_counter()
    connection.execute("BEGIN IMMEDIATE")
    # One statement, as update_many's: run once per row, the FTS5 update triggers flush each time.
    connection.execute("CREATE TEMP TABLE staged (tags, id)")
    connection.executemany("INSERT INTO staged VALUES (?, ?)", tags)
    connection.execute("UPDATE skills SET tags = staged.tags FROM staged WHERE skills.id = staged.id")
    connection.execute("DROP TABLE staged")
    connection.executemany(
        f"INSERT INTO studio_revisions({_REVISION_COLUMNS}) VALUES ({', '.join('?' * 8)})", revisions
    )
    connection.executemany(f"INSERT INTO studio_audit_log({_AUDIT_COLUMNS}) VALUES ({', '.join('?' * 7)})", audits)
    connection.execute("COMMIT")
    limit_s = time.perf_counter() - start
    connection.close()
    for file in copy.parent.glob(copy.name + "*"):
        file.unlink()
    return {
        "skills": len(changed),
        "seconds": seconds,
        "skills_per_s": len(changed) / seconds if seconds else None,
        "limit_seconds": limit_s,
        "limit_skills_per_s": len(changed) / limit_s if limit_s else None,
        "revisions": len(revisions),
        "audit_entries": len(audits),
    }


_REVISION_COLUMNS = "skill_id, number, version, action, author, created_at, message, snapshot"
_AUDIT_COLUMNS = "at, actor, actor_kind, action, skill_id, revision, details"


def _plain_connection(path: Path) -> sqlite3.Connection:
    """sqlite3 in autocommit mode with the library's pragmas, in WAL mode."""
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    for pragma in CONNECTION_PRAGMAS:
        connection.execute(pragma)
    return connection


def _rows_by_skill(names: list[str], rows: list[tuple[Any, ...]]) -> dict[str, list[tuple[Any, ...]]]:
    """Rows keyed by the skill they belong to (a composition by its skill_a, written with it)."""
    key = names.index("skill_id") if "skill_id" in names else names.index("skill_a")
    out: dict[str, list[tuple[Any, ...]]] = {}
    for row in rows:
        out.setdefault(row[key], []).append(row)
    return out


def _file_report(path: Path) -> dict[str, Any]:
    wal = path.with_name(path.name + "-wal")
    out: dict[str, Any] = {
        "bytes": path.stat().st_size,
        "wal_bytes": wal.stat().st_size if wal.exists() else 0,
        "tables": {},
    }
    try:  # dbstat is compiled into most SQLite builds, not all
        connection = sqlite3.connect(path)
        try:
            rows = connection.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
        finally:
            connection.close()
        grouped: dict[str, int] = {}
        for name, size in rows:
            grouped[_table_group(name)] = grouped.get(_table_group(name), 0) + size
        out["tables"] = dict(sorted(grouped.items(), key=lambda item: -item[1]))
    except sqlite3.DatabaseError:
        pass
    return out


def _table_group(name: str) -> str:
    """Fold FTS5 shadow tables and indexes into what a reader thinks of as one table."""
    if name.startswith("skills_fts"):
        return "skills_fts (FTS5 index)"
    if name.startswith("sqlite_autoindex_"):
        return name.removeprefix("sqlite_autoindex_").rsplit("_", 1)[0] + " (key index)"
    if name.startswith("studio_skills_"):
        return "skills (studio indexes)"
    return name


def _open_timings(path: Path, config: Config) -> list[Timing]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    cold: list[dict[str, Any]] = []
    for _ in range(config.repeats):
        done = subprocess.run(
            [sys.executable, "-c", _COLD_OPEN_CHILD, str(path)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        cold.append(json.loads(done.stdout.strip().splitlines()[-1]))
    count = cold[-1]["count"]

    def warm_open() -> int:
        database = Database(path)
        try:
            return SkillRepository(database, ACTOR).count()
        finally:
            database.close()

    warm, warm_count = measure(warm_open, repeats=config.repeats, warmups=config.warmups)
    return [
        Timing(
            "open_cold",
            "fresh process (imports done first): Database(path) + SkillRepository.count()",
            [sample["total_s"] for sample in cold],
            {"count": count},
        ),
        Timing(
            "open_cold_database_only",
            "the Database(path) part of open_cold (connect, pragmas, WAL, migration check)",
            [sample["open_s"] for sample in cold],
        ),
        Timing(
            "open_warm",
            "same process, file already opened before: Database(path) + count() + close()",
            warm,
            {"count": warm_count},
        ),
    ]


def _read_timings(repository: SkillRepository, ids: list[str], config: Config) -> list[Timing]:
    timings: list[Timing] = []

    def run(name: str, description: str, fn: Callable[[], Any], result: Callable[[Any], dict[str, int]]) -> Any:
        samples, value = measure(fn, repeats=config.repeats, warmups=config.warmups)
        timings.append(Timing(name, description, samples, result(value)))
        return value

    def ids_total(value: Any) -> dict[str, int]:
        return {"ids": len(value.ids), "total": value.total}

    filtered = run(
        "list_filtered",
        "query(): ai_strategy, established|proven, ra1, by success_rate desc; all ids + total",
        lambda: repository.query(FILTERED),
        ids_total,
    )
    run(
        "list_filtered_tag",
        f"the same plus tags=({COMMON_TAG!r},)",
        lambda: repository.query(FILTERED_TAGGED),
        ids_total,
    )
    run(
        "list_filtered_page",
        f"the same filter with limit={SUMMARY_ROWS}: COUNT over a subquery + one page of ids",
        lambda: repository.query(FILTERED_PAGE),
        ids_total,
    )
    run(
        "list_all_by_name",
        "query() with no filter, sorted by name: the browser's unfiltered view",
        lambda: repository.query(ALL_BY_NAME),
        ids_total,
    )
    first_rows = filtered.ids[:SUMMARY_ROWS]
    run(
        "summaries",
        f"summaries() of the first {SUMMARY_ROWS} ids of list_filtered (one table screen)",
        lambda: repository.summaries(first_rows),
        lambda value: {"rows": len(value)},
    )
    run(
        "fts_prefix",
        f"query(text={PREFIX_QUERY!r}): two prefix words, ranked; all ids + total",
        lambda: repository.query(SkillQuery(text=PREFIX_QUERY)),
        ids_total,
    )
    run(
        "fts_common_term",
        f"query(text={COMMON_TERM!r}): one common word (as a prefix), ranked; all ids + total",
        lambda: repository.query(SkillQuery(text=COMMON_TERM)),
        ids_total,
    )
    picks = random.Random(config.seed).sample(ids, k=min(len(ids), config.repeats + config.warmups))
    cursor = iter(picks * 2)
    run(
        "get",
        "get(id): one skill read and fully parsed (a different id each run)",
        lambda: repository.get(next(cursor)),
        lambda value: {"skills": 1},
    )
    return timings


# --- environment and output -----------------------------------------------------------------------


def environment() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "sqlalchemy": sqlalchemy.__version__,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "commit": _git("rev-parse", "--short", "HEAD"),
        "store_modified": bool(_git("status", "--porcelain", "--", "skillstudio")),
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _ms(seconds: float) -> str:
    ms = seconds * 1000
    if ms < 10:
        return f"{ms:.2f} ms"
    if ms < 1000:
        return f"{ms:.1f} ms"
    return f"{ms / 1000:.2f} s"


def _bytes(count: int) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} B"


def _result_text(result: dict[str, int]) -> str:
    if "ids" in result:
        if result["ids"] == result["total"]:
            return f"{result['ids']:,} ids"
        return f"{result['ids']:,} ids of {result['total']:,}"
    if "rows" in result:
        return f"{result['rows']:,} rows"
    if "count" in result:
        return f"count {result['count']:,}"
    if "skills" in result:
        return f"{result['skills']} skill"
    return ""


_LABELS = {
    "open_cold": "open, cold (fresh process)",
    "open_cold_database_only": "  of which Database(path)",
    "open_warm": "open, warm (in-process)",
    "list_filtered": "list: ai+est|proven+ra1 by rate",
    "list_filtered_tag": "  + tag filter",
    "list_filtered_page": "  paged (limit 200, +COUNT)",
    "list_all_by_name": "list: everything by name",
    "summaries": f"summaries({SUMMARY_ROWS})",
    "fts_prefix": f"FTS {PREFIX_QUERY!r}",
    "fts_common_term": f"FTS {COMMON_TERM!r}",
    "get": "get(id), full parse",
}


def render(reports: Sequence[dict[str, Any]]) -> str:
    """One table, a column per library size."""
    first = reports[0]
    config, env = first["config"], first["environment"]
    sizes = ", ".join(f"{r['size']:,}" for r in reports)
    lines = [
        (
            f"SkillStudio store benchmark: sizes {sizes} skills; "
            f"{config['repeats']} repeats after {config['warmups']} warmups; seed {config['seed']}"
        ),
        f"Python {env['python']}, SQLite {env['sqlite']}, SQLAlchemy {env['sqlalchemy']}, "
        f"{env['platform']}, {env['cpus']} CPUs, commit {env['commit']}"
        + (" (skillstudio/ modified)" if env["store_modified"] else ""),
        "",
    ]
    rows: list[tuple[str, list[str]]] = []
    rows.append(("", [f"{r['size']:,} skills" for r in reports]))
    rows.append(("WRITE", ["" for _ in reports]))
    rows.append(
        (
            "generate (not in insert time)",
            [f"{r['generate']['seconds']:.1f} s ({r['generate']['skills_per_s']:,.0f}/s)" for r in reports],
        )
    )
    rows.append(
        (
            f"insert, create_many x{config['batch']:,}",
            [f"{r['insert']['seconds']:.1f} s = {r['insert']['skills_per_s']:,.0f} skills/s" for r in reports],
        )
    )
    rows.append(
        (
            "  limit: skills + FTS, plain sqlite3",
            [_limit_cell(r, "skills_fts") for r in reports],
        )
    )
    rows.append(
        (
            "  limit: all its rows, our schema",
            [_limit_cell(r, "all_rows") for r in reports],
        )
    )
    rows.append(
        (
            "  first / last batch",
            [
                f"{r['insert']['first_batch_skills_per_s']:,.0f} / {r['insert']['last_batch_skills_per_s']:,.0f} skills/s"
                for r in reports
            ],
        )
    )
    rows.append(
        (
            "  rows written",
            [
                f"{r['insert']['rows']['skills']:,} skills, {r['insert']['rows']['studio_revisions']:,} rev, "
                f"{r['insert']['rows']['studio_audit_log']:,} audit"
                for r in reports
            ],
        )
    )
    rows.append(
        (
            "retag, update_many (1 tag)",
            [
                f"{r['retag']['skills']:,} in {r['retag']['seconds']:.1f} s = {r['retag']['skills_per_s']:,.0f} skills/s"
                for r in reports
            ],
        )
    )
    rows.append(
        (
            "  limit: same rows, plain sqlite3",
            [
                f"{r['retag']['limit_seconds']:.2f} s = {r['retag']['limit_skills_per_s']:,.0f} skills/s"
                for r in reports
            ],
        )
    )
    rows.append(
        (
            "file size",
            [f"{_bytes(r['file']['bytes'])} ({r['file']['bytes'] / r['size'] / 1024:.1f} KB/skill)" for r in reports],
        )
    )
    rows.append(("  revisions (studio_revisions)", [_table_per_skill(r, "studio_revisions") for r in reports]))
    for rank in range(3):
        rows.append((f"  largest #{rank + 1}", [_table_share(r, rank) for r in reports]))
    rows.append(("", ["" for _ in reports]))
    rows.append(("OPEN / READ", ["median / p95 -> result" for _ in reports]))
    by_name = [{op["name"]: op for op in r["operations"]} for r in reports]
    for name, label in _LABELS.items():
        cells = []
        for ops in by_name:
            op = ops.get(name)
            if op is None:
                cells.append("-")
                continue
            text = f"{_ms(op['median_ms'] / 1000):>9} / {_ms(op['p95_ms'] / 1000):>9}"
            result = _result_text(op["result"])
            cells.append(f"{text}  {result}" if result else text)
        rows.append((label, cells))
    label_width = max(len(label) for label, _ in rows)
    widths = [max(len(cells[i]) for _, cells in rows) for i in range(len(reports))]
    for label, cells in rows:
        line = (
            label.ljust(label_width) + "  " + " | ".join(cell.ljust(w) for cell, w in zip(cells, widths, strict=True))
        )
        lines.append(line.rstrip())
    return "\n".join(lines)


def _limit_cell(report: dict[str, Any], name: str) -> str:
    limits = report["insert_limits"]
    return f"{limits[name + '_seconds']:.1f} s = {limits[name + '_per_s']:,.0f} skills/s"


def _table_per_skill(report: dict[str, Any], table: str) -> str:
    size = report["file"]["tables"].get(table)
    return "-" if size is None else f"{_bytes(size)} ({size / report['size']:,.0f} B/skill)"


def _table_share(report: dict[str, Any], rank: int) -> str:
    tables = list(report["file"]["tables"].items())
    if rank >= len(tables):
        return "-"
    name, size = tables[rank]
    total = sum(report["file"]["tables"].values()) or 1
    return f"{name} {_bytes(size)} ({100 * size / total:.0f}%)"


# --- command line ---------------------------------------------------------------------------------


def _size(text: str) -> int:
    folded = text.strip().lower().replace(",", "").replace("_", "")
    scale = 1
    if folded.endswith("k"):
        folded, scale = folded[:-1], 1_000
    elif folded.endswith("m"):
        folded, scale = folded[:-1], 1_000_000
    try:
        value = int(float(folded) * scale)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of skills") from None
    if value < 1:
        raise argparse.ArgumentTypeError("a size must be at least 1")
    return value


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_store", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=_size, help="library sizes (default 10000 100000; 10k works)")
    parser.add_argument("--quick", action="store_true", help="1,000 skills only (unless --sizes says otherwise)")
    parser.add_argument("--repeats", type=int, default=DEFAULT_REPEATS, help="timed runs per operation")
    parser.add_argument("--warmups", type=int, default=DEFAULT_WARMUPS, help="untimed runs before them")
    parser.add_argument("--batch", type=int, default=DEFAULT_BATCH, help="skills per create_many call")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="generator seed")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where store-<size>.json goes")
    parser.add_argument("--keep", action="store_true", help="keep the library files (prints their paths)")
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.warmups < 0 or args.batch < 1:
        parser.error("--repeats and --batch must be at least 1, --warmups at least 0")
    if args.sizes is None:
        args.sizes = list(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    config = Config(args.repeats, args.warmups, args.batch, args.seed, args.keep)
    args.out.mkdir(parents=True, exist_ok=True)
    reports = []
    for size in args.sizes:
        report = run_size(size, config)
        target = args.out / f"store-{size}.json"
        target.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"[store {size:,}] wrote {target}", flush=True)
        reports.append(report)
    print()
    print(render(reports))
    return 0


if __name__ == "__main__":
    sys.exit(main())
