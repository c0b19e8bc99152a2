"""Writing to a library as another program would (the engine, a psql session): its own
connection, none of SkillStudio's setup, on either backend."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, create_engine

from skillstudio.store import Database


@contextmanager
def another_program(database: Database) -> Iterator[Connection]:
    """A connection of another program to ``database``'s library, committed at the end."""
    engine = create_engine(database.engine.url)
    try:
        with engine.begin() as connection:
            yield connection
    finally:
        engine.dispose()
