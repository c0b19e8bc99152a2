"""Opening a library file: SQLite with D034's pragmas, our migrations, explicit transactions.

SQLite's Python driver opens transactions lazily and never as ``IMMEDIATE``; two writers that
both read first then deadlock into ``database is locked``. We take transaction control
(SQLAlchemy's documented pysqlite recipe): reads run in ``BEGIN``, writes in ``BEGIN IMMEDIATE``,
which waits for the other writer (``busy_timeout``) instead of failing halfway.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from skillstudio.store import migrations
from skillstudio.store.events import ChangeBus
from skillstudio.store.errors import LibraryError, LibraryNotFound, NotALibrary, StorageError

SQLITE_MAGIC = b"SQLite format 3\x00"
T = TypeVar("T")

# D034: every IC database, plus the gameplay.db settings (skill tables live in gameplay.db).
CONNECTION_PRAGMAS = (
    "PRAGMA foreign_keys = ON",
    "PRAGMA busy_timeout = 2000",
    "PRAGMA synchronous = NORMAL",
    "PRAGMA cache_size = -16384",
    "PRAGMA mmap_size = 67108864",
    "PRAGMA temp_store = MEMORY",
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


class Database:
    """One open library file. Thread-safe: each thread checks a connection out of the pool."""

    def __init__(self, path: str | os.PathLike[str], *, create: bool = False) -> None:
        self.path = Path(path).expanduser().absolute()
        is_new = _check_file(self.path, create=create)
        self.engine: Engine = create_engine(
            URL.create("sqlite", database=str(self.path)),
            connect_args={"check_same_thread": False, "timeout": 2.0},
        )
        event.listen(self.engine, "connect", _on_connect)
        event.listen(self.engine, "begin", _on_begin)
        self._watch: sqlite3.Connection | None = None
        self.changes = ChangeBus()  # every repository on this file announces its writes here
        self._watch_lock = threading.Lock()
        self._cache: dict[str, tuple[int, Any]] = {}
        try:
            with self.engine.connect() as connection:
                raw = connection.connection.driver_connection
                assert raw is not None
                if is_new:
                    for pragma in NEW_FILE_PRAGMAS:
                        raw.execute(pragma)
                mode = raw.execute("PRAGMA journal_mode = WAL").fetchone()
                if mode is None or str(mode[0]).lower() != "wal":
                    raise NotALibrary(f"{self.path}: cannot switch the database to WAL mode")
            migrations.upgrade(self, create=create)
        except sqlite3.DatabaseError as error:
            self.engine.dispose()
            raise NotALibrary(f"{self.path} is not a usable SQLite database ({error})") from None
        except DBAPIError as error:
            self.engine.dispose()
            raise NotALibrary(f"{self.path} is not a usable SQLite database ({error.orig})") from None
        except BaseException:
            self.engine.dispose()
            raise

    # --- sessions ------------------------------------------------------------------------------

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A session seeing one consistent snapshot of the library."""
        with self._translated_errors(), Session(self.engine) as session, session.begin():
            yield session

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A session whose changes commit together, or not at all if the block raises."""
        engine = self.engine.execution_options(begin="IMMEDIATE")
        with self._translated_errors(), Session(engine) as session, session.begin():
            yield session

    @contextmanager
    def _translated_errors(self) -> Iterator[None]:
        """SQLite failures (locked by another writer past the timeout, a damaged file, a full
        disk) reach callers as a StorageError naming the file, never as a driver traceback."""
        try:
            yield
        except DBAPIError as error:
            raise StorageError(f"{self.path}: {error.orig}") from error

    def data_version(self) -> int:
        """Changes whenever another connection (another process, too) commits to the file."""
        with self._watch_lock:
            if self._watch is None:
                self._watch = sqlite3.connect(self.path, check_same_thread=False)
            return int(self._watch.execute("PRAGMA data_version").fetchone()[0])

    def cached(self, key: str, compute: Callable[[], T]) -> T:
        """``compute()``'s value, reused until anyone (any process) commits to the file.

        For whole-library aggregates (every tag with its count) that take seconds at 100k skills.
        """
        version = self.data_version()
        hit = self._cache.get(key)
        if hit is not None and hit[0] == version:
            return hit[1]
        value = compute()
        self._cache[key] = (version, value)  # a write racing compute() only makes the next call recompute
        return value

    def close(self) -> None:
        self._cache.clear()
        try:  # keep the planner's statistics current (SQLite's advice for long-lived files)
            with self.engine.connect() as connection:
                connection.exec_driver_sql("PRAGMA optimize")
        except DBAPIError:
            pass
        with self._watch_lock:
            if self._watch is not None:
                self._watch.close()
                self._watch = None
        self.engine.dispose()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Database({str(self.path)!r})"


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
        with path.open("rb") as handle:
            head = handle.read(len(SQLITE_MAGIC))
    except OSError as error:
        raise NotALibrary(f"cannot read {path}: {error.strerror}") from None
    if head != SQLITE_MAGIC:
        raise NotALibrary(f"{path} is not a SQLite database")
    if not os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK):
        # WAL needs to write beside the file even to read it.
        raise NotALibrary(f"{path} (or its folder) is read-only; SkillStudio needs write access")
    return False


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


def _on_begin(connection) -> None:  # type: ignore[no-untyped-def]
    mode = connection.get_execution_options().get("begin", "DEFERRED")
    connection.exec_driver_sql(f"BEGIN {mode}")
