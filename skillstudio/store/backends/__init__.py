"""The two places a library lives: a SQLite file, or a database on a PostgreSQL server.

A :class:`Backend` holds only what differs between them: how a connection is made and set up,
how a write takes the library's write lock, which driver errors mean "busy", the change token
another process's commit moves, how a running statement is interrupted, and the SQL of keyword
search, tag filters and the name order (upserts: :func:`upsert_insert`). Everything above (``store.database`` and the repository's
parts) is written once, in SQLAlchemy, for both (docs/architecture.md, "One store, two backends").

:func:`backend_for` picks one: a SQLAlchemy URL with a ``postgresql`` scheme is a server
library, anything else a file path.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from sqlalchemy import ColumnElement, Connection, Engine, SQLColumnExpression, Subquery
from sqlalchemy.orm import InstrumentedAttribute, Session

from skillstudio.store.bulk import insert_rows, update_rows
from skillstudio.store.errors import LibraryError
from skillstudio.store.orm import Base, SkillRow

if TYPE_CHECKING:
    from skillstudio.store.database import Database
    from skillstudio.store.live_changes import ChangeListener

# Channel a PostgreSQL library's change trigger notifies on (the payload: the writer's origin,
# store/live_changes.py); a listener for live changes across machines subscribes to it.
CHANGE_CHANNEL = "skillstudio_changes"


class Backend(ABC):
    """One library's storage: its engine, locking, change token, and dialect-specific SQL.

    ``location`` names the library in every message: the file's path, or the server URL with
    any password masked.
    """

    name: str  # "sqlite" | "postgresql"
    location: str

    # --- opening, locking, errors ----------------------------------------------------------------

    @abstractmethod
    def create_engine(self) -> Engine:
        """Check what is at the location (refusing what is not a library, changing nothing),
        and return an engine set up for it."""

    @abstractmethod
    def prepare(self, database: Database, *, create: bool) -> None:
        """Whatever opening must write (SQLite: WAL mode) and the migrations, if any are due."""

    @abstractmethod
    def begin_write(self, session: Session, wait_ms: int) -> None:
        """Begin ``session``'s transaction holding the library's write lock, waiting at most
        ``wait_ms`` for it; a driver error that :meth:`is_busy` recognises if it stays taken."""

    def begin_read(self, session: Session) -> None:
        """Begin ``session``'s transaction on one consistent snapshot of the library."""
        session.connection()

    @abstractmethod
    def is_busy(self, error: BaseException) -> bool:
        """Whether a driver error means another writer held a lock we waited for."""

    @abstractmethod
    def opening_error(self, error: BaseException) -> LibraryError:
        """A driver error while opening, said for a person."""

    @abstractmethod
    def storage_error(self, error: BaseException) -> LibraryError:
        """A driver error during a read or write, said for a person (naming the library)."""

    @abstractmethod
    def change_token(self) -> int:
        """A number that changes whenever anyone (another process or machine, too) commits."""

    @abstractmethod
    def interrupt(self, raw: object) -> None:
        """Stop the statement running on ``raw``, one of this backend's driver connections,
        from another thread (a Cancellation): the statement ends with an error."""

    def close(self, engine: Engine) -> None:
        engine.dispose()

    def insert_skill_rows(self, connection: Connection, rows: Sequence[Mapping[str, object]]) -> None:
        """Insert these rows of D057's ``skills`` (every row has the same keys), in order, in
        the caller's transaction."""
        self.insert_triggered_rows(connection, SkillRow, rows)

    def insert_triggered_rows(
        self, connection: Connection, table: type[Base], rows: Sequence[Mapping[str, object]]
    ) -> None:
        """Insert rows into a table whose insert triggers run for each row (``skills``,
        ``studio_skill_meta``), in order, in the caller's transaction (every row has the same
        keys)."""
        insert_rows(connection, table, rows)

    def update_skill_rows(self, connection: Connection, rows: Sequence[Mapping[str, object]]) -> None:
        """Update rows of D057's ``skills``: each names its row by ``id`` and holds the new
        values of the other columns (every row has the same keys; distinct ids)."""
        update_rows(connection, SkillRow, ("id",), rows)

    @contextmanager
    def inserting_skills(self, connection: Connection, incoming: int) -> Iterator[None]:
        """Around the inserts of one write's ``incoming`` new skills and their metadata rows,
        in its transaction: a backend may make a large insert cheaper here, provided the library is
        as it would otherwise be once the block has run. If the block raises, the transaction
        must be rolled back (the unit of work always does)."""
        yield

    def listen(
        self, on_change: Callable[[], None], on_connection: Callable[[bool, str], None] | None
    ) -> ChangeListener | None:
        """Start hearing other writers' commits as the server pushes them; None where the
        server cannot push (SQLite: compare :meth:`change_token` instead)."""
        return None

    # --- dialect-specific SQL ----------------------------------------------------------------------

    # Whether text_matches' pool is the beginning of the relevance order itself (ties of a rank
    # ordered by name and id), so that a tie at the pool's end needs no larger pool.
    pool_in_full_order: bool = False
    # Whether the planner knows from its statistics how many skills a search matches, and so
    # walks an order's index by itself for a common word; else ``first_ids`` counts the matches
    # (up to what a walk needs) to choose the plan.
    plans_searches_from_statistics: bool = False

    @abstractmethod
    def skill_key(self) -> ColumnElement[Any]:
        """The column of ``skills`` that :meth:`text_matches`' ``key`` joins to."""

    @abstractmethod
    def text_matches(
        self,
        words: Sequence[str],
        *,
        ranked: bool,
        pool: int | None = None,
        descending: bool = False,
    ) -> Subquery:
        """The skills whose name, description or tags contain every word as a word prefix
        (FTS5's ``"word"*`` for each, all required): a subquery of ``key`` (see :meth:`skill_key`)
        and, if ``ranked``, ``rank`` (lower is more relevant). With ``pool``, only the ``pool``
        best (worst with ``descending``); chosen by rank alone, or, where
        :attr:`pool_in_full_order`, in the relevance order itself (rank, name, id)."""

    @abstractmethod
    def any_word_ranking(
        self, connection: Connection, terms: Sequence[str], *, prefix: bool, tags_only: bool, pool: int
    ) -> Subquery:
        """The ``pool`` skills sharing most with any of ``terms`` (each a prefix if ``prefix``;
        in tags only if ``tags_only``): ``key`` and ``score`` (higher is better, > 0), weighted
        by where the word is (name, tags, description)."""

    @abstractmethod
    def word_frequencies(self, connection: Connection, words: Sequence[str]) -> dict[str, int]:
        """How many skills contain each word as a prefix; words in none are left out."""

    @abstractmethod
    def tag_conditions(
        self, tags_column: SQLColumnExpression[str], tag: str, number: int, *, narrow: bool
    ) -> list[ColumnElement[bool]]:
        """Conditions for "the skill carries exactly this tag" (tags not a JSON array: none).
        ``narrow``: first narrow by the text index (cheap when the tag is rare)."""

    @abstractmethod
    def untagged(self, tags_column: SQLColumnExpression[str]) -> ColumnElement[bool]:
        """The skill carries no tag (tags that are not a JSON array count as none)."""

    @abstractmethod
    def name_order(self, column: InstrumentedAttribute[str]) -> ColumnElement[str]:
        """The name as the browser sorts it: case-insensitively, as migration 13's index holds it."""

    @abstractmethod
    def walked(self, column: InstrumentedAttribute[Any] | ColumnElement[Any]) -> ColumnElement[Any]:
        """``column`` written so the planner keeps walking the order's index (SQLite: ``+column``)."""

    @abstractmethod
    def nulls_last_by_default(self, descending: bool) -> bool:
        """Whether an order in this direction already puts NULLs last."""

    @abstractmethod
    def approximate_skill_count(self, connection: Connection) -> int:
        """About how many skills there are, at once (never a full count)."""


def dialect_insert(dialect: str, table: Any) -> Any:
    """``insert(table)`` of the dialect, with ``on_conflict_do_nothing`` / ``on_conflict_do_update``
    and ``excluded`` (the two dialects' Insert classes share them, but no common type)."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgresql_insert

        return postgresql_insert(table)
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(table)


def upsert_insert(session: Session | Connection, table: Any) -> Any:
    """``dialect_insert`` for the dialect ``session`` talks to: the store's one way to write an
    INSERT ... ON CONFLICT."""
    bind = session.get_bind() if isinstance(session, Session) else session
    return dialect_insert(bind.dialect.name, table)


def is_server_url(target: str | os.PathLike[str]) -> bool:
    """A ``postgresql://`` or ``postgresql+driver://`` URL (a team library on a server)."""
    return isinstance(target, str) and target.split("://", 1)[0].split("+", 1)[0] in {"postgresql", "postgres"}


def backend_for(target: str | os.PathLike[str], *, create: bool) -> Backend:
    """The backend of a library: a PostgreSQL URL, else a file path."""
    if is_server_url(target):
        from skillstudio.store.backends.postgresql import PostgresBackend

        return PostgresBackend(str(target), create=create)
    from skillstudio.store.backends.sqlite import SqliteBackend

    return SqliteBackend(target, create=create)


__all__ = ["CHANGE_CHANNEL", "Backend", "backend_for", "dialect_insert", "is_server_url", "upsert_insert"]
