"""Opening a library, and the transactions every part of the store runs in.

A library is a SQLite file or a database on a PostgreSQL server (a SQLAlchemy URL); what
differs between the two sits in :mod:`skillstudio.store.backends`. Here, for both: reads see one
consistent snapshot; a write takes the library's write lock before its block runs (SQLite's
``BEGIN IMMEDIATE``, PostgreSQL's advisory lock), so writers never interleave and the
repository's version checks see every committed write (a stale save is a conflict, never a
lost update). Waiting for the write lock is bounded (``lock_wait``); past the bound the caller
gets ``LibraryBusy`` (docs/storage.md, "Opening, locks and waiting").
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self, TypeVar, cast

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, SessionTransaction

from skillstudio.store.backends import Backend, backend_for
from skillstudio.store.backends.sqlite import SqliteBackend
from skillstudio.store.errors import LibraryBusy, LibraryError, StorageError
from skillstudio.store.events import ChangeBus
from skillstudio.store.live_changes import ChangeListener

T = TypeVar("T")

# How long a write waits for the write lock in all, by default; SKILLSTUDIO_LOCK_WAIT overrides.
DEFAULT_LOCK_WAIT = 30.0
LOCK_WAIT_VARIABLE = "SKILLSTUDIO_LOCK_WAIT"
# Each attempt at the write lock lets the server wait this long (it takes the lock the moment
# it is free); between attempts we sleep with exponential backoff and jitter.
LOCK_ATTEMPT_S = 0.2
BACKOFF_FIRST_S = 0.05
BACKOFF_MAX_S = 1.0


class Database:
    """One open library. Thread-safe: each thread checks a connection out of the pool.

    ``target``: a file path, or a ``postgresql+psycopg://user@host:port/db`` URL (credentials
    come from libpq: PGPASSWORD, ~/.pgpass, a service file; SkillStudio stores none).
    ``lock_wait``: seconds a write (or an opening that must migrate) waits in all for another
    program to release the write lock before raising LibraryBusy; default the environment's
    ``SKILLSTUDIO_LOCK_WAIT``, else 30. ``on_wait``: called with the seconds waited so far, each
    time a write finds the lock still taken (so a CLI can say "waiting for the library").
    """

    def __init__(
        self,
        target: str | os.PathLike[str],
        *,
        create: bool = False,
        lock_wait: float | None = None,
        on_wait: Callable[[float], None] | None = None,
    ) -> None:
        self.lock_wait = _lock_wait_setting(lock_wait)
        self.on_wait = on_wait
        self.backend: Backend = backend_for(target, create=create)
        self.location = self.backend.location  # what messages name (a URL's password masked)
        self.engine: Engine = self.backend.create_engine()
        self.changes = ChangeBus()  # every repository on this library announces its writes here
        self._cache: dict[str, tuple[int, Any]] = {}
        self._listeners: list[ChangeListener] = []
        try:
            self.backend.prepare(self, create=create)
        except DBAPIError as error:
            self.backend.close(self.engine)
            raise self.backend.opening_error(error) from None
        except BaseException:
            self.backend.close(self.engine)
            raise

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.backend.name

    @property
    def path(self) -> Path:
        """The library's file (a SQLite library only: a server library has none)."""
        if isinstance(self.backend, SqliteBackend):
            return self.backend.path
        raise LibraryError(f"the library {self.location} is on a server, not in a file")

    # --- sessions ------------------------------------------------------------------------------

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A session seeing one consistent snapshot of the library."""
        with self._translated_errors(), Session(self.engine) as session, session.begin():
            self.backend.begin_read(session)
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
        exactly once.
        """
        session, transaction = self._with_write_lock(self._begin_write)
        with session, transaction:
            yield session

    def _begin_write(self, wait_ms: int) -> tuple[Session, SessionTransaction]:
        session = Session(self.engine)
        try:
            transaction = session.begin()
            self.backend.begin_write(session, wait_ms)
        except BaseException:
            session.close()  # the failed BEGIN left no transaction open; the connection goes back
            raise
        return session, transaction

    def _with_write_lock(self, attempt: Callable[[int], T]) -> T:
        """``attempt(wait_ms)`` until it is not refused as busy, for ``lock_wait`` s in all.

        Each attempt lets the database wait up to ``wait_ms`` for the lock; between attempts we
        sleep with exponential backoff and jitter (so waiting writers do not retry in lockstep)
        and report the wait through ``on_wait``.
        """
        start = time.monotonic()
        delay = BACKOFF_FIRST_S
        while True:
            remaining = self.lock_wait - (time.monotonic() - start)
            try:
                return attempt(round(max(0.0, min(LOCK_ATTEMPT_S, remaining)) * 1000))
            except Exception as error:
                if not self.backend.is_busy(error):
                    raise
                waited = time.monotonic() - start
                if waited >= self.lock_wait:
                    raise LibraryBusy(self.location, waited, adjustable=True) from error
            if self.on_wait is not None:
                self.on_wait(waited)
            time.sleep(max(0.0, min(delay * random.uniform(0.5, 1.0), self.lock_wait - (time.monotonic() - start))))
            delay = min(delay * 2, BACKOFF_MAX_S)

    @contextmanager
    def _translated_errors(self) -> Iterator[None]:
        """Driver failures (a damaged file, a full disk, a lost server) reach callers as a
        StorageError naming the library, never as a driver traceback; a lock held too long as
        LibraryBusy."""
        try:
            yield
        except DBAPIError as error:
            raise self.backend.storage_error(error) from error

    def data_version(self) -> int:
        """Changes whenever another connection (another process or machine, too) commits."""
        return self.backend.change_token()

    def cached(self, key: str, compute: Callable[[], T]) -> T:
        """``compute()``'s value, reused until anyone (any process) commits to the library.

        For whole-library aggregates (every tag with its count) that take seconds at 100k skills.
        """
        version = self.data_version()
        hit = self._cache.get(key)
        if hit is not None and hit[0] == version:
            return cast(T, hit[1])  # stored by this method under this key, from a compute() of type T
        value = compute()
        self._cache[key] = (version, value)  # a write racing compute() only makes the next call recompute
        return value

    def watch_changes(
        self, on_change: Callable[[], None], on_connection: Callable[[bool, str], None] | None = None
    ) -> bool:
        """Have the server push other writers' commits: ``on_change()`` (and ``on_connection(up,
        reason)`` when the connection drops and returns) run on a listening thread until
        :meth:`close`. False where the server cannot push (a file): watch :meth:`data_version`."""
        listener = self.backend.listen(on_change, on_connection)
        if listener is None:
            return False
        self._listeners.append(listener)
        return True

    def close(self) -> None:
        for listener in self._listeners:
            listener.stop()
        self._listeners.clear()
        self._cache.clear()
        self.backend.close(self.engine)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Database({self.location!r})"


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


class Cancellation:
    """Lets another thread stop a long read whose answer nobody waits for any more.

    :meth:`cancel` interrupts the statements running on the connections :meth:`watching` covers
    (SQLite: ``sqlite3_interrupt``, as nothing calls back into Python while SQLite works;
    PostgreSQL: the server is asked to cancel the statement), and refuses to start any more:
    the read ends with a StorageError saying it was interrupted."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connections: dict[int, tuple[object, Callable[[object], None]]] = {}
        self.cancelled = False

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            for raw, interrupt in self._connections.values():
                interrupt(raw)

    @contextmanager
    def watching(self, connection: Connection, backend: Backend) -> Iterator[None]:
        raw = connection.connection.driver_connection
        assert raw is not None  # an open session's connection
        interrupt = backend.interrupt
        with self._lock:
            if self.cancelled:
                raise StorageError("the read was interrupted before it started")
            self._connections[id(raw)] = (raw, interrupt)
        try:
            yield
        finally:
            with self._lock:
                self._connections.pop(id(raw), None)
