"""A library in a SQLite file: D034's pragmas, WAL, ``BEGIN IMMEDIATE`` writes, FTS5 search.

SQLite's Python driver opens transactions lazily and never as ``IMMEDIATE``; two writers that
both read first then deadlock into ``database is locked``. We take transaction control
(SQLAlchemy's documented pysqlite recipe): reads run in ``BEGIN``, writes in ``BEGIN IMMEDIATE``,
which waits for the other writer instead of failing halfway.

Opening is read-only until a write is needed (docs/storage.md, "Opening, locks and waiting"):
an existing file is first inspected through a read-only connection; a file that is not a
library is refused untouched, and a library already in WAL mode at the latest schema is opened
without taking the write lock.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    SQLColumnExpression,
    Subquery,
    case,
    create_engine,
    event,
    exists,
    func,
    literal_column,
    select,
    text,
)
from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import InstrumentedAttribute, Session
from sqlalchemy.sql.elements import UnaryExpression
from sqlalchemy.sql.operators import custom_op

from skillstudio.store import migrations
from skillstudio.store.backends import Backend
from skillstudio.store.bulk import insert_rows
from skillstudio.store.errors import LibraryBusy, LibraryError, LibraryNotFound, NotALibrary, StorageError
from skillstudio.store.orm import Base, SkillRow

if TYPE_CHECKING:
    from skillstudio.store.database import Database

SQLITE_MAGIC = b"SQLite format 3\x00"
# The first four bytes of a SQLite write-ahead log (its checksums big- or little-endian).
WAL_MAGICS = (b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83")
SQLITE_BUSY = 5

# D034's busy_timeout: how long one statement lets SQLite wait for a lock (short waits).
BUSY_TIMEOUT_MS = 2000

# D034: every IC database, plus the gameplay.db settings (skill tables live in gameplay.db), but
# for two that cost a library browser its memory (docs/storage.md, "Pragmas"): no memory map (each
# pooled connection mapped its own 64 MiB of the file, a fraction of a large library, counted
# again per connection) and temporary storage in files (in memory, SQLite never spills a sort:
# ranking every match of a common word among a million skills took 91 MB instead of 37).
CONNECTION_PRAGMAS = (
    "PRAGMA foreign_keys = ON",
    f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}",
    "PRAGMA synchronous = NORMAL",
    "PRAGMA cache_size = -16384",
    "PRAGMA mmap_size = 0",
    "PRAGMA temp_store = FILE",
    "PRAGMA wal_autocheckpoint = 2000",
)
# D034 also asks for trusted_schema=OFF. Older SQLite builds (3.40, Debian 12's) then refuse the
# FTS5 virtual table inside our sync triggers ("unsafe use of virtual table"); newer ones mark
# FTS5 innocuous and accept it. We switch it off wherever the linked SQLite allows it.
TRUSTED_SCHEMA_OFF = "PRAGMA trusted_schema = OFF"
# Only meaningful before the first table exists.
NEW_FILE_PRAGMAS = (
    "PRAGMA page_size = 4096",
    "PRAGMA encoding = 'UTF-8'",
    "PRAGMA auto_vacuum = NONE",
)
_WORD = re.compile(r"\w+", re.UNICODE)
# bm25 column weights for (name, description, tags): a word in the name or a tag says more
# about what a skill is for than the same word somewhere in its description.
COLUMN_WEIGHTS = (4.0, 1.0, 2.0)
_log = logging.getLogger(__name__)
# A write adding at least this many skills to a library of at most REBUILD_RATIO times as many
# builds our indexes on skills, the FTS5 indexes and the filter counts again after its insert
# instead of updating each per skill (inserting_skills). Measured with the rows of
# benchmarks/synthetic.py, for the browse indexes alone: 10,000 skills into an empty library
# 2.2 s -> 1.5 s, 50,000 13.5 s -> 7.9 s, 10,000 into 20,000 2.7 -> 2.4 s, into 40,000
# 3.2 -> 3.3 s: worth it up to about three times as many; done up to twice. The FTS5 triggers
# cost 55 us a skill, an FTS5 'rebuild' 8 us a row (10,000 skills: 0.55 s against 0.08 s).
REBUILD_MIN_SKILLS = 1000
REBUILD_RATIO = 2
# While it rebuilds, a write's connection may keep this many KiB of pages per skill in its cache
# (a synthetic skill's row fills most of a 4 KiB page), up to REBUILD_CACHE_MAX_KIB: each of the
# 17 index builds and the FTS5 rebuild reads every row again, and with CONNECTION_PRAGMAS' 16 MiB
# each read of a 10,000-skill table (40 MB) came from the OS instead: 0.35 s -> 0.23 s for the
# index builds. The cache goes back to its size when the block ends.
REBUILD_CACHE_KIB_PER_SKILL = 5
REBUILD_CACHE_MAX_KIB = 128 * 1024
# From this many rows an insert into a table with insert triggers goes through a temporary
# table (insert_triggered_rows), at most STAGE_CHUNK rows at a time: the table then stays in
# SQLite's cache, and a large import never needs its own size again in temporary files
# (100,000 skills: 330 MB). Staged whole, they took 4.4 s at 100,000 skills; by 5,000, 2.9 s.
STAGE_FROM = 64
STAGE_CHUNK = 5000
STAGED_ROWS = "studio_staged_rows"
# What SkillStudio searches: migration 16's copy of D057's skills_fts with one-letter prefixes
# (same rows, matches and bm25; D057's table is the engine's and is never altered).
SEARCH_INDEX = "studio_search_fts"


def _schema_to_rebuild(connection: Connection, incoming: int) -> tuple[list[tuple[str, str, str]], int]:
    """(type, name, CREATE statement) of what a write inserting ``incoming`` new skills drops
    and makes again (REBUILD_RATIO), or none: SkillStudio's non-unique indexes on ``skills``
    and the insert triggers whose work :func:`migrations.rebuild_derived` redoes; and how many
    skills the library holds before the write (0, not counted, below REBUILD_MIN_SKILLS)."""
    if incoming < REBUILD_MIN_SKILLS:
        return [], 0
    existing = int(connection.exec_driver_sql("SELECT COUNT(*) FROM skills").scalar_one())
    if existing > incoming * REBUILD_RATIO:
        return [], existing
    # sqlite_schema keeps a CREATE INDEX statement's first keywords in upper case, one space
    # apart: a key's index has no statement, a UNIQUE one (which checks rows) another prefix.
    # D057's own indexes are the engine's to keep.
    triggers = ", ".join(f"'{name}'" for name in migrations.DERIVED_INSERT_TRIGGERS)
    schema = [
        (str(kind), str(name), str(sql))
        for kind, name, sql in connection.exec_driver_sql(
            "SELECT type, name, sql FROM sqlite_schema WHERE (type = 'index' AND tbl_name = 'skills'"
            " AND name LIKE 'studio!_%' ESCAPE '!' AND sql LIKE 'CREATE INDEX %')"
            f" OR (type = 'trigger' AND name IN ({triggers}))"
        )
    ]
    return schema, existing


def _writes_fts_per_row(connection: Connection) -> bool:
    """Whether an insert into ``skills`` runs a trigger that writes an FTS5 index."""
    names = ", ".join(f"'{name}'" for name in migrations.FTS_INSERT_TRIGGERS)
    found = connection.exec_driver_sql(
        f"SELECT 1 FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = 'skills' AND name IN ({names})"
    ).first()
    return found is not None


@contextmanager
def _larger_cache(connection: Connection, kib: int) -> Iterator[None]:
    """The connection's page cache holds at least ``kib`` KiB for the block, then its own size again."""
    before = int(connection.exec_driver_sql("PRAGMA cache_size").scalar_one())
    if before > 0:  # pages, not KiB: an engine's file may have pages of another size than ours
        held = before * int(connection.exec_driver_sql("PRAGMA page_size").scalar_one()) // 1024
    else:
        held = -before
    if held >= kib:
        yield
        return
    connection.exec_driver_sql(f"PRAGMA cache_size = -{int(kib)}")
    try:
        yield
    finally:
        connection.exec_driver_sql(f"PRAGMA cache_size = {before}")


@contextmanager
def _staged(connection: Connection, rows: Sequence[Mapping[str, object]]) -> Iterator[str]:
    """``rows`` (every row has the same keys) in the temporary table STAGED_ROWS for the
    block, which gets its quoted column list. Its columns are untyped, so that the table they
    go to alone converts the values, once, as an INSERT of them would. Values are taken by name, as
    :func:`~skillstudio.store.bulk.execute_many` takes them: rows need not list keys in one order."""
    names = list(rows[0])
    columns = ", ".join(f'"{name}"' for name in names)
    marks = ", ".join("?" for _ in names)
    connection.exec_driver_sql(f"DROP TABLE IF EXISTS temp.{STAGED_ROWS}")
    connection.exec_driver_sql(f"CREATE TEMP TABLE {STAGED_ROWS} ({columns})")
    try:
        connection.exec_driver_sql(
            f"INSERT INTO temp.{STAGED_ROWS} ({columns}) VALUES ({marks})",
            [tuple(row[name] for name in names) for row in rows],
        )
        yield columns
    finally:
        connection.exec_driver_sql(f"DROP TABLE IF EXISTS temp.{STAGED_ROWS}")


class SqliteBackend(Backend):
    name = "sqlite"

    def __init__(self, path: str | os.PathLike[str], *, create: bool) -> None:
        self.path = Path(path).expanduser().absolute()
        self.location = str(self.path)
        self._create = create
        self._found: tuple[migrations.FileSchema, bool] | None = None
        self._watch: sqlite3.Connection | None = None
        self._watch_lock = threading.Lock()

    # --- opening ---------------------------------------------------------------------------------

    def create_engine(self) -> Engine:
        is_new = _check_file(self.path, create=self._create)
        # Read-only first: refuses what is not a library (leaving it untouched), finds what to do.
        self._found = None if is_new else _inspect(self.path)
        engine = create_engine(
            URL.create("sqlite", database=str(self.path)),
            connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000},
        )
        event.listen(engine, "connect", _on_connect)
        event.listen(engine, "begin", _on_begin)
        return engine

    def prepare(self, database: Database, *, create: bool) -> None:
        found = self._found
        if found is None or not found[1]:  # a new file, or one not yet in WAL mode
            database._with_write_lock(
                lambda wait_ms: self._switch_to_wal(database.engine, wait_ms, is_new=found is None)
            )
        if found is None or not found[0].current:
            migrations.upgrade(database, create=create)
        self._repair_untracked_writes(database)

    def _repair_untracked_writes(self, database: Database) -> None:
        """Rebuild the indexes and counts an engine's write left stale (migrations.untracked_writes);
        a file that needs nothing is only read."""
        with database.read() as session:
            if not migrations.untracked_writes(session.connection()):
                return
        try:
            with database._write_session() as session:
                connection = session.connection()
                if migrations.untracked_writes(connection):  # again, under the write lock
                    migrations.rebuild_derived(connection)
        except LibraryError as error:  # busy, or a read-only file: it opens as it is, as before
            _log.warning("%s: stale search index and counts left as they are: %s", self.path, error)

    def _switch_to_wal(self, engine: Engine, wait_ms: int, *, is_new: bool) -> None:
        """Needs the file to itself (SQLite fails at once, without a busy wait, if it is not)."""
        with engine.connect() as connection:
            raw = connection.connection.driver_connection
            assert raw is not None
            if is_new:
                for pragma in NEW_FILE_PRAGMAS:
                    raw.execute(pragma)
            raw.execute(f"PRAGMA busy_timeout = {wait_ms}")
            try:
                mode = raw.execute("PRAGMA journal_mode = WAL").fetchone()
            finally:
                raw.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if mode is None or str(mode[0]).lower() != "wal":
            raise NotALibrary(f"{self.path}: cannot switch the database to WAL mode")

    def begin_write(self, session: Session, wait_ms: int) -> None:
        # SQLAlchemy begins lazily; asking for the connection emits BEGIN IMMEDIATE (_on_begin).
        session.connection(execution_options={"begin": "IMMEDIATE", "lock_wait_ms": wait_ms})

    def is_busy(self, error: BaseException) -> bool:
        return _is_busy(error)

    def opening_error(self, error: BaseException) -> LibraryError:
        return _unusable(self.path, error)

    def storage_error(self, error: BaseException) -> LibraryError:
        """A damaged file, a full disk: a StorageError naming the file; a lock held past SQLite's
        busy_timeout (a read of a file another program is committing to, outside WAL): LibraryBusy."""
        cause = error.orig if isinstance(error, DBAPIError) else error
        if self.is_busy(error):
            return LibraryBusy(self.path, BUSY_TIMEOUT_MS / 1000, detail=str(cause))
        return StorageError(f"{self.path}: {cause}")

    def change_token(self) -> int:
        """``PRAGMA data_version`` of a connection of its own: moves when any other commits."""
        with self._watch_lock:
            if self._watch is None:
                self._watch = sqlite3.connect(self.path, check_same_thread=False)
            return int(self._watch.execute("PRAGMA data_version").fetchone()[0])

    def interrupt(self, raw: object) -> None:
        assert isinstance(raw, sqlite3.Connection)
        raw.interrupt()  # sqlite3_interrupt; a no-op on a connection with no statement running

    def insert_skill_rows(self, connection: Connection, rows: Sequence[Mapping[str, object]]) -> None:
        """Staged (:meth:`insert_triggered_rows`) while the FTS5 insert triggers fire for each row;
        while :meth:`inserting_skills` has dropped them, by one executemany: the staging's
        temporary table then costs more than the statement journal of the triggers left (10,000
        skills into an empty library: 0.17 s less)."""
        if len(rows) >= STAGE_FROM and not _writes_fts_per_row(connection):
            insert_rows(connection, SkillRow, rows)
            return
        super().insert_skill_rows(connection, rows)

    def insert_triggered_rows(
        self, connection: Connection, table: type[Base], rows: Sequence[Mapping[str, object]]
    ) -> None:
        """Many rows reach ``table`` by one statement: SQLite runs an executemany's INSERT once
        per row, and each run opens a statement journal for the row's triggers; for ``skills``
        its savepoint also makes FTS5 write out the terms our insert triggers just gave it
        (SQLite 3.40: 55 us a skill, most of a large insert). The rows go into a temporary
        table first (:func:`_staged`), then into ``table`` by one INSERT ... SELECT in their
        order, STAGE_CHUNK at a time: 10,000 skills, every trigger firing, 0.74 s -> 0.23 s;
        their 10,000 metadata rows (a trigger each), 0.19 s -> 0.07 s."""
        if len(rows) < STAGE_FROM:
            super().insert_triggered_rows(connection, table, rows)
            return
        name = table.__tablename__
        for start in range(0, len(rows), STAGE_CHUNK):
            with _staged(connection, rows[start : start + STAGE_CHUNK]) as columns:
                connection.exec_driver_sql(
                    f'INSERT INTO main."{name}" ({columns}) SELECT {columns} FROM temp.{STAGED_ROWS} ORDER BY rowid'
                )

    def update_skill_rows(self, connection: Connection, rows: Sequence[Mapping[str, object]]) -> None:
        """Many rows of ``skills`` updated by one statement, for the reason
        :meth:`insert_triggered_rows` gives (the update triggers' FTS5 deletes and inserts):
        ``UPDATE ... FROM`` the staged rows, joined by id."""
        if len(rows) < STAGE_FROM:
            super().update_skill_rows(connection, rows)
            return
        changed = [f'"{name}"' for name in rows[0] if name != "id"]
        for start in range(0, len(rows), STAGE_CHUNK):
            with _staged(connection, rows[start : start + STAGE_CHUNK]):
                connection.exec_driver_sql(
                    f"UPDATE main.skills SET ({', '.join(changed)}) = ({', '.join(f'staged.{c}' for c in changed)})"
                    f" FROM temp.{STAGED_ROWS} AS staged WHERE skills.id = staged.id"
                )

    @contextmanager
    def inserting_skills(self, connection: Connection, incoming: int) -> Iterator[None]:
        """Many skills into a library of few: our indexes on ``skills`` (the browse orders) and
        the triggers that keep the FTS5 indexes and filter counts are dropped for the block;
        after it the indexes are made again, each by one sorted build, and the FTS5 indexes and
        counts are rebuilt from the rows, instead of one B-tree insertion per skill and index
        and one FTS5 insert per skill and table. It all happens in the write's transaction, so
        a failed write rolls the drop back with the rest, and readers never see the library
        without them. The primary key's index stays, checking every new id."""
        schema, existing = _schema_to_rebuild(connection, incoming)
        if not schema:
            yield
            return
        cache_kib = min(REBUILD_CACHE_MAX_KIB, (existing + incoming) * REBUILD_CACHE_KIB_PER_SKILL)
        with _larger_cache(connection, cache_kib):
            for kind, name, _ in schema:
                connection.exec_driver_sql(f'DROP {kind.upper()} "{name}"')
            yield
            if any(kind == "trigger" for kind, _, _ in schema):
                migrations.rebuild_derived(connection)
            for _, _, sql in schema:
                connection.exec_driver_sql(sql)

    def close(self, engine: Engine) -> None:
        try:  # keep the planner's statistics current (SQLite's advice for long-lived files)...
            with engine.connect() as connection:
                connection.exec_driver_sql("PRAGMA busy_timeout = 0")  # ...if nobody is writing
                try:
                    connection.exec_driver_sql("PRAGMA optimize")
                finally:
                    connection.exec_driver_sql(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        except DBAPIError:
            pass
        with self._watch_lock:
            if self._watch is not None:
                self._watch.close()
                self._watch = None
        engine.dispose()

    # --- SQL -----------------------------------------------------------------------------------------

    def skill_key(self) -> ColumnElement[Any]:
        return literal_column("skills.rowid")

    def text_matches(
        self, words: Sequence[str], *, ranked: bool, pool: int | None = None, descending: bool = False
    ) -> Subquery:
        match = fts_match(words)
        if pool is not None:
            # +rank: SQLite's own top-N sorter; FTS5's "ORDER BY rank" would sort every match.
            direction = "DESC" if descending else "ASC"
            sql = f"SELECT rowid AS key, rank FROM {SEARCH_INDEX} WHERE {SEARCH_INDEX} MATCH :match ORDER BY +rank {direction} LIMIT :pool"
            return (
                text(sql)
                .bindparams(match=match, pool=pool)
                .columns(literal_column("key"), literal_column("rank"))
                .subquery("fts")
            )
        # Ranking every match (bm25) is the costly part of a common word; only when asked.
        columns = ("key", "rank") if ranked else ("key",)
        sql = f"SELECT rowid AS key{', rank' if ranked else ''} FROM {SEARCH_INDEX} WHERE {SEARCH_INDEX} MATCH :match"
        return text(sql).bindparams(match=match).columns(*(literal_column(c) for c in columns)).subquery("fts")

    def any_word_ranking(
        self, connection: Connection, terms: Sequence[str], *, prefix: bool, tags_only: bool, pool: int
    ) -> Subquery:
        alternatives = " OR ".join(f'"{term}"' + ("*" if prefix else "") for term in terms)
        match = f"{{tags}}: ({alternatives})" if tags_only else alternatives
        weights = ", ".join(str(w) for w in COLUMN_WEIGHTS)
        sql = (
            f"SELECT rowid AS key, -bm25({SEARCH_INDEX}, {weights}) AS score FROM {SEARCH_INDEX}"
            f" WHERE {SEARCH_INDEX} MATCH :match ORDER BY score DESC LIMIT :pool"
        )
        return (
            text(sql)
            .bindparams(match=match, pool=int(pool))
            .columns(literal_column("key"), literal_column("score"))
            .subquery("best")
        )

    def word_frequencies(self, connection: Connection, words: Sequence[str]) -> dict[str, int]:
        # Document frequencies from an fts5vocab table in the connection's TEMP schema, so the
        # library file is not changed; one statement for all the words.
        connection.exec_driver_sql(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.studio_search_vocab USING fts5vocab(main, {SEARCH_INDEX}, 'row')"
        )
        parts, params = [], {}
        for n, word in enumerate(words):
            parts.append(
                f"SELECT {n}, COALESCE(SUM(doc), 0) FROM temp.studio_search_vocab WHERE term >= :l{n} AND term < :h{n}"
            )
            params[f"l{n}"], params[f"h{n}"] = word, word[:-1] + chr(min(ord(word[-1]) + 1, 0x10FFFF))
        rows = connection.execute(text(" UNION ALL ".join(parts)), params)
        return {words[int(n)]: int(count) for n, count in rows if count}

    def tag_conditions(
        self, tags_column: SQLColumnExpression[str], tag: str, number: int, *, narrow: bool
    ) -> list[ColumnElement[bool]]:
        conditions: list[ColumnElement[bool]] = []
        words = fts_words(tag)
        if words and narrow:
            # The FTS index over the tags column narrows the candidates cheaply (a 100k library
            # would otherwise run json_each on every row); json_each then checks the exact tag.
            phrase = '{tags}: "' + " ".join(words) + '"'
            conditions.append(
                literal_column("skills.rowid").in_(
                    text(f"SELECT rowid FROM {SEARCH_INDEX} WHERE {SEARCH_INDEX} MATCH :tag_{number}").bindparams(
                        **{f"tag_{number}": phrase}
                    )
                )
            )
        conditions.append(
            exists(
                select(literal_column("1"))
                .select_from(func.json_each(_valid_tags(tags_column)).table_valued("value"))
                .where(literal_column("value") == tag)
            )
        )
        return conditions

    def untagged(self, tags_column: SQLColumnExpression[str]) -> ColumnElement[bool]:
        return func.json_array_length(_valid_tags(tags_column)) == 0

    def name_order(self, column: InstrumentedAttribute[str]) -> ColumnElement[str]:
        return column.collate("NOCASE")

    def walked(self, column: InstrumentedAttribute[Any] | ColumnElement[Any]) -> ColumnElement[Any]:
        return UnaryExpression(column.expression, operator=custom_op("+"), type_=column.type)

    def nulls_last_by_default(self, descending: bool) -> bool:
        return descending  # SQLite sorts NULL lowest

    def approximate_skill_count(self, connection: Connection) -> int:
        return int(connection.execute(text("SELECT MAX(rowid) FROM skills")).scalar() or 0)


def fts_words(user_text: str) -> list[str]:
    """The words of what a user typed (quoted one by one, ``_`` inside one makes a phrase)."""
    return _WORD.findall(user_text)


def fts_match(words: Sequence[str]) -> str:
    """FTS5 MATCH text: every word as a prefix, all required; never FTS5 syntax."""
    return " ".join(f'"{word}"*' for word in words)


def _valid_tags(tags_column: SQLColumnExpression[str]) -> ColumnElement[str]:
    # An engine may have written tags that are not JSON; json_each() would abort the whole
    # query on such a row, so invalid tag text reads as "no tags".
    return case((func.json_valid(tags_column), tags_column), else_="[]")


def sqlite_file_kind(path: Path) -> str | None:
    """What a file holds by its first bytes: "database" (a SQLite database), "write-ahead log"
    (a database's -wal file), or None. OSError if it cannot be read."""
    with path.open("rb") as handle:
        head = handle.read(len(SQLITE_MAGIC))
    if head == SQLITE_MAGIC:
        return "database"
    return "write-ahead log" if head[:4] in WAL_MAGICS else None


def _check_file(path: Path, *, create: bool) -> bool:
    """Refuse paths that cannot hold a library, with a message naming what is wrong; True if new."""
    if path.is_dir():
        raise NotALibrary(f"{path} is a folder, not a library file")
    if not path.exists():
        if not create:
            raise LibraryNotFound(f"no library at {path}")
        if not path.parent.is_dir():
            raise LibraryNotFound(f"cannot create {path}: the folder {path.parent} does not exist")
        return True
    if create:
        raise LibraryError(f"{path} already exists; choose a new file name")
    try:
        kind = sqlite_file_kind(path)
    except OSError as error:
        raise NotALibrary(f"cannot read {path}: {error.strerror}") from None
    if kind != "database":
        raise NotALibrary(f"{path} is not a SQLite database")
    if not os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK):
        # WAL needs to write beside the file even to read it.
        raise NotALibrary(f"{path} (or its folder) is read-only; SkillStudio needs write access")
    return False


def _inspect(path: Path) -> tuple[migrations.FileSchema, bool]:
    """Look at an existing file through a read-only connection: what it holds, whether it is in
    WAL mode. Refuses what is not a library (NotALibrary, LibraryTooNew) having written nothing."""
    uri, wal = read_only_uri(path)
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            return migrations.inspect_file(path, connection), wal
        finally:
            connection.close()
    except sqlite3.DatabaseError as error:
        raise _unusable(path, error) from None


def read_only_uri(path: Path) -> tuple[str, bool]:
    """The URI that opens an existing SQLite file read-only without creating anything beside it,
    and whether the file is in WAL mode (also used to read an engine's gameplay.db, ``pull``)."""
    with path.open("rb") as handle:
        header = handle.read(100)
    wal = len(header) >= 20 and header[18] == 2 and header[19] == 2  # read/write versions 2: WAL
    # A WAL file without its -wal beside it has no open connection and all its data in the main
    # file. A read-only connection would still create -wal and -shm (and could not remove them);
    # reading it as immutable creates nothing.
    immutable = wal and not path.with_name(path.name + "-wal").exists()
    return f"{path.as_uri()}?{'immutable=1' if immutable else 'mode=ro'}", wal


def _is_busy(error: BaseException) -> bool:
    """SQLITE_BUSY (any extended code): another connection holds a lock we need."""
    cause = error.orig if isinstance(error, DBAPIError) else error
    if not isinstance(cause, sqlite3.OperationalError):
        return False
    code = getattr(cause, "sqlite_errorcode", None)
    if code is not None:
        return bool(code & 0xFF == SQLITE_BUSY)
    return "database is locked" in str(cause)


def _unusable(path: Path, error: BaseException) -> LibraryError:
    """A driver error while opening: busy is LibraryBusy; anything else means a bad file."""
    cause = error.orig if isinstance(error, DBAPIError) else error
    if _is_busy(error):
        return LibraryBusy(path, BUSY_TIMEOUT_MS / 1000, detail=str(cause))
    return NotALibrary(f"{path} is not a usable SQLite database ({cause})")


def _on_connect(dbapi_connection: sqlite3.Connection, _record: object) -> None:
    dbapi_connection.isolation_level = None  # we emit BEGIN ourselves (see module docstring)
    for pragma in CONNECTION_PRAGMAS:
        dbapi_connection.execute(pragma)
    if fts5_triggers_work_untrusted():
        dbapi_connection.execute(TRUSTED_SCHEMA_OFF)


@cache
def fts5_triggers_work_untrusted() -> bool:
    """Whether this SQLite runs a trigger that writes FTS5 while trusted_schema is OFF."""
    probe = sqlite3.connect(":memory:")
    try:
        probe.executescript(
            "CREATE TABLE t(a TEXT); CREATE VIRTUAL TABLE f USING fts5(a, content=t, content_rowid=rowid);"
            "CREATE TRIGGER t_ai AFTER INSERT ON t BEGIN INSERT INTO f(rowid, a) VALUES (new.rowid, new.a); END;"
        )
        probe.execute(TRUSTED_SCHEMA_OFF)
        probe.execute("INSERT INTO t VALUES ('probe')")
        return True
    except sqlite3.DatabaseError:
        return False
    finally:
        probe.close()


def _on_begin(connection: Connection) -> None:
    options = connection.get_execution_options()
    mode = options.get("begin", "DEFERRED")
    wait_ms = options.get("lock_wait_ms")
    if wait_ms is None:
        connection.exec_driver_sql(f"BEGIN {mode}")
        return
    raw = connection.connection.driver_connection  # one attempt at the lock: wait_ms, not 2 s
    assert raw is not None  # a connection that is beginning a transaction is open
    raw.execute(f"PRAGMA busy_timeout = {int(wait_ms)}")
    try:
        connection.exec_driver_sql(f"BEGIN {mode}")
    finally:
        raw.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


__all__ = [
    "BUSY_TIMEOUT_MS",
    "COLUMN_WEIGHTS",
    "SEARCH_INDEX",
    "SqliteBackend",
    "fts5_triggers_work_untrusted",
    "fts_match",
]
