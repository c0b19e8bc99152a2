"""Opening a library file: SQLite with D034's pragmas, our migrations, explicit transactions.

SQLite's Python driver opens transactions lazily and never as ``IMMEDIATE``; two writers that
both read first then deadlock into ``database is locked``. We take transaction control
(SQLAlchemy's documented pysqlite recipe): reads run in ``BEGIN``, writes in ``BEGIN IMMEDIATE``,
which waits for the other writer instead of failing halfway.

Opening is read-only until a write is needed (docs/storage.md, "Opening, locks and waiting"):
an existing file is first inspected through a read-only connection; a file that is not a
library is refused untouched, and a library already in WAL mode at the latest schema is opened
without taking the write lock. Waiting for the write lock is bounded (``lock_wait``); past the
bound the caller gets ``LibraryBusy``, never "not a usable SQLite database".
"""

from __future__ import annotations

import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any, Self, TypeVar, cast

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, SessionTransaction

from skillstudio.store import migrations
from skillstudio.store.errors import LibraryBusy, LibraryError, LibraryNotFound, NotALibrary, StorageError
from skillstudio.store.events import ChangeBus

SQLITE_MAGIC = b"SQLite format 3\x00"
T = TypeVar("T")

# D034's busy_timeout: how long one statement lets SQLite wait for a lock (short waits).
BUSY_TIMEOUT_MS = 2000
# How long a write waits for the write lock in all, by default; SKILLSTUDIO_LOCK_WAIT overrides.
DEFAULT_LOCK_WAIT = 30.0
LOCK_WAIT_VARIABLE = "SKILLSTUDIO_LOCK_WAIT"
# Each attempt at the write lock lets SQLite's busy handler wait this long (it takes the lock
# the moment it is free); between attempts we sleep with exponential backoff and jitter.
LOCK_ATTEMPT_S = 0.2
BACKOFF_FIRST_S = 0.05
BACKOFF_MAX_S = 1.0
SQLITE_BUSY = 5

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


class Database:
    """One open library file. Thread-safe: each thread checks a connection out of the pool.

    ``lock_wait``: seconds a write (or an opening that must migrate) waits in all for another
    program to release the write lock before raising LibraryBusy; default the environment's
    ``SKILLSTUDIO_LOCK_WAIT``, else 30. ``on_wait``: called with the seconds waited so far, each
    time a write finds the lock still taken (so a CLI can say "waiting for the library").
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        create: bool = False,
        lock_wait: float | None = None,
        on_wait: Callable[[float], None] | None = None,
    ) -> None:
        self.path = Path(path).expanduser().absolute()
        self.lock_wait = _lock_wait_setting(lock_wait)
        self.on_wait = on_wait
        is_new = _check_file(self.path, create=create)
        # Read-only first: refuses what is not a library (leaving it untouched), finds what to do.
        found = None if is_new else _inspect(self.path)
        self.engine: Engine = create_engine(
            URL.create("sqlite", database=str(self.path)),
            connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000},
        )
        event.listen(self.engine, "connect", _on_connect)
        event.listen(self.engine, "begin", _on_begin)
        self._watch: sqlite3.Connection | None = None
        self.changes = ChangeBus()  # every repository on this file announces its writes here
        self._watch_lock = threading.Lock()
        self._cache: dict[str, tuple[int, Any]] = {}
        try:
            if found is None or not found[1]:  # a new file, or one not yet in WAL mode
                self._with_write_lock(lambda wait_ms: self._switch_to_wal(wait_ms, is_new=is_new))
            if found is None or not found[0].current:
                migrations.upgrade(self, create=create)
        except (sqlite3.DatabaseError, DBAPIError) as error:
            self.engine.dispose()
            raise _unusable(self.path, error) from None
        except BaseException:
            self.engine.dispose()
            raise

    def _switch_to_wal(self, wait_ms: int, *, is_new: bool) -> None:
        """Needs the file to itself (SQLite fails at once, without a busy wait, if it is not)."""
        with self.engine.connect() as connection:
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

    # --- sessions ------------------------------------------------------------------------------

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A session seeing one consistent snapshot of the library."""
        with self._translated_errors(), Session(self.engine) as session, session.begin():
            yield session

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A session whose changes commit together, or not at all if the block raises.

        The write lock is taken before the block runs, waiting for another writer up to
        ``lock_wait`` seconds in all (``LibraryBusy`` after that, with nothing done).
        """
        with self._translated_errors(), self._write_session() as session:
            yield session

    @contextmanager
    def _write_session(self) -> Iterator[Session]:
        """``write()`` without the error translation (migrations run in it at open).

        Only taking the lock is retried, before the caller's block runs: the block itself runs
        exactly once. SQLAlchemy begins lazily, on the session's first statement; asking for the
        session's connection here emits ``BEGIN IMMEDIATE`` (the ``begin`` event) up front.
        """
        session, transaction = self._with_write_lock(self._begin_write)
        with session, transaction:
            yield session

    def _begin_write(self, wait_ms: int) -> tuple[Session, SessionTransaction]:
        session = Session(self.engine)
        try:
            transaction = session.begin()
            session.connection(execution_options={"begin": "IMMEDIATE", "lock_wait_ms": wait_ms})
        except BaseException:
            session.close()  # the failed BEGIN left no transaction open; the connection goes back
            raise
        return session, transaction

    def _with_write_lock(self, attempt: Callable[[int], T]) -> T:
        """``attempt(wait_ms)`` until it is not refused with SQLITE_BUSY, for ``lock_wait`` s in all.

        Each attempt lets SQLite wait up to ``wait_ms`` for the lock; between attempts we sleep
        with exponential backoff and jitter (so waiting writers do not retry in lockstep) and
        report the wait through ``on_wait``.
        """
        start = time.monotonic()
        delay = BACKOFF_FIRST_S
        while True:
            remaining = self.lock_wait - (time.monotonic() - start)
            try:
                return attempt(round(max(0.0, min(LOCK_ATTEMPT_S, remaining)) * 1000))
            except (sqlite3.OperationalError, DBAPIError) as error:
                if not _is_busy(error):
                    raise
                waited = time.monotonic() - start
                if waited >= self.lock_wait:
                    raise LibraryBusy(self.path, waited, adjustable=True) from error
            if self.on_wait is not None:
                self.on_wait(waited)
            time.sleep(max(0.0, min(delay * random.uniform(0.5, 1.0), self.lock_wait - (time.monotonic() - start))))
            delay = min(delay * 2, BACKOFF_MAX_S)

    @contextmanager
    def _translated_errors(self) -> Iterator[None]:
        """SQLite failures (a damaged file, a full disk) reach callers as a StorageError naming
        the file, never as a driver traceback; a lock held past SQLite's busy_timeout (a read of
        a file another program is committing to, outside WAL) as LibraryBusy."""
        try:
            yield
        except DBAPIError as error:
            if _is_busy(error):
                raise LibraryBusy(self.path, BUSY_TIMEOUT_MS / 1000, detail=str(error.orig)) from error
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
            return cast(T, hit[1])  # stored by this method under this key, from a compute() of type T
        value = compute()
        self._cache[key] = (version, value)  # a write racing compute() only makes the next call recompute
        return value

    def close(self) -> None:
        self._cache.clear()
        try:  # keep the planner's statistics current (SQLite's advice for long-lived files)...
            with self.engine.connect() as connection:
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
        self.engine.dispose()

    def __enter__(self) -> Self:
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


def _lock_wait_setting(explicit: float | None) -> float:
    if explicit is not None:
        value: object = explicit
    else:
        value = os.environ.get(LOCK_WAIT_VARIABLE, "").strip() or DEFAULT_LOCK_WAIT
    try:
        seconds = float(value)  # type: ignore[arg-type]
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:  # also refuses NaN
        source = "lock_wait" if explicit is not None else LOCK_WAIT_VARIABLE
        raise LibraryError(f"{source} must be a number of seconds (0 or more), not {value!r}")
    return seconds


def _inspect(path: Path) -> tuple[migrations.FileSchema, bool]:
    """Look at an existing file through a read-only connection: what it holds, whether it is in
    WAL mode. Refuses what is not a library (NotALibrary, LibraryTooNew) having written nothing."""
    with path.open("rb") as handle:
        header = handle.read(100)
    wal = len(header) >= 20 and header[18] == 2 and header[19] == 2  # read/write versions 2: WAL
    # A WAL file without its -wal beside it has no open connection and all its data in the main
    # file. A read-only connection would still create -wal and -shm (and could not remove them);
    # reading it as immutable creates nothing.
    immutable = wal and not path.with_name(path.name + "-wal").exists()
    uri = f"{path.as_uri()}?{'immutable=1' if immutable else 'mode=ro'}"
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            return migrations.inspect_file(path, connection), wal
        finally:
            connection.close()
    except sqlite3.DatabaseError as error:
        raise _unusable(path, error) from None


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


class Cancellation:
    """Lets another thread stop a long read whose answer nobody waits for any more.

    :meth:`cancel` interrupts the statements running on the connections :meth:`watching` covers
    (``sqlite3_interrupt``: nothing calls back into Python while SQLite works), and refuses to
    start any more: the read ends with a StorageError saying it was interrupted."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connections: set[sqlite3.Connection] = set()
        self.cancelled = False

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            for connection in self._connections:
                connection.interrupt()  # a no-op on a connection with no statement running

    @contextmanager
    def watching(self, connection: Connection) -> Iterator[None]:
        raw = connection.connection.driver_connection
        assert isinstance(raw, sqlite3.Connection)  # an open session's connection
        with self._lock:
            if self.cancelled:
                raise StorageError("the read was interrupted before it started")
            self._connections.add(raw)
        try:
            yield
        finally:
            with self._lock:
                self._connections.discard(raw)


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
