"""Writing to a library as another program would (the engine, a psql session): its own
connection, none of SkillStudio's setup, on either backend."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from sqlalchemy import Connection, CursorResult, create_engine, make_url, text

from skillstudio.store import Database
from skillstudio.store.backends import is_server_url
from skillstudio.store.backends.postgresql import WRITE_LOCK_KEY


@contextmanager
def another_program(library: Database | str | Path) -> Iterator[Connection]:
    """A connection of another program to a library (an open one, a path or a URL), committed
    at the end."""
    if isinstance(library, Database):
        url = library.engine.url
    else:
        url = make_url(str(library) if is_server_url(str(library)) else f"sqlite:///{library}")
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            yield connection
    finally:
        engine.dispose()


class QmarkConnection:
    """``execute(sql, params)`` with sqlite3's ``?`` placeholders, on another program's
    connection to either backend (tests written against sqlite3 keep their SQL)."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection

    def execute(self, sql: str, params: Sequence[object] = ()) -> CursorResult[Any]:
        parts = sql.split("?")
        named = parts[0] + "".join(f":p{n}{part}" for n, part in enumerate(parts[1:]))
        return self.connection.execute(text(named), {f"p{n}": value for n, value in enumerate(params)})


@contextmanager
def engine_writes(library: Database | str | Path) -> Iterator[QmarkConnection]:
    """``another_program`` taking ``?`` placeholders, as an engine's sqlite3 code writes."""
    with another_program(library) as connection:
        yield QmarkConnection(connection)


@contextmanager
def holding_the_write_lock(library: str | Path) -> Iterator[None]:
    """Another program holds the library's write lock while the block runs (SQLite: an open
    ``BEGIN IMMEDIATE``; a server library: its advisory write lock)."""
    if is_server_url(str(library)):
        url = make_url(str(library))
        with psycopg.connect(
            host=url.host, port=url.port, user=url.username, password=url.password, dbname=url.database
        ) as holder:
            holder.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK_KEY,))
            yield
            holder.rollback()
        return
    holder = sqlite3.connect(library, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        yield
        holder.execute("ROLLBACK")
    finally:
        holder.close()
