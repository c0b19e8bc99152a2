"""A team library on a PostgreSQL server, through psycopg 3.

* Credentials are libpq's: the URL's user, then ``PGPASSWORD``, ``~/.pgpass`` or a service file
  (``PGSERVICE``); SkillStudio stores none, and every message masks a password in the URL.
* Writes take one transaction-scoped advisory lock (``pg_advisory_xact_lock``), the server's
  counterpart of SQLite's ``BEGIN IMMEDIATE``: writers on every machine take turns, and each
  runs at READ COMMITTED, so the version a write checks is the newest committed one (a stale
  save is a conflict, never a lost update). Waiting is bounded by ``lock_timeout``.
* Reads run in a REPEATABLE READ snapshot, as SQLite's WAL readers do.
* Keyword search reads ``studio_skill_search`` (each skill's tsvector, kept by triggers, GIN
  indexed) with the prefix semantics of FTS5 (``to_tsquery('simple', 'tank:* & ar:*')``) and its
  accent folding (migration 15, ``search_folding``),
  ranked by ts_rank; a first page's pool is chosen in the full order (rank, the name key kept
  beside the vector, id), so tied ranks never make it read the matches again.
* The change token is ``studio_changes.version``, moved once by every transaction that writes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    Boolean,
    ColumnElement,
    Connection,
    Engine,
    SQLColumnExpression,
    Subquery,
    Text,
    bindparam,
    column,
    create_engine,
    event,
    func,
    literal_column,
    select,
    table,
    text,
)
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError
from sqlalchemy.orm import InstrumentedAttribute, Session

from skillstudio.store import live_changes, migrations
from skillstudio.store.backends import Backend
from skillstudio.store.errors import LibraryBusy, LibraryError, LibraryNotFound, NotALibrary, StorageError
from skillstudio.store.orm import SkillRow
from skillstudio.store.search_folding import fold

if TYPE_CHECKING:
    from skillstudio.store.database import Database

# The advisory lock every write holds (any 64-bit key; the same for every SkillStudio).
WRITE_LOCK_KEY = 0x5C111_57D10
# How long one statement may wait for a row or table lock once the write lock is held.
STATEMENT_LOCK_TIMEOUT_MS = 2000
CONNECT_TIMEOUT_S = 10
LOCK_NOT_AVAILABLE = "55P03"
QUERY_CANCELED = "57014"
# ts_rank's weights for D, C, B, A (each at most 1): description C, tags B, name A, as bm25's 1, 2, 4.
RANK_WEIGHTS = "{0.025, 0.25, 0.5, 1.0}"
_WORD = re.compile(r"\w+", re.UNICODE)
_PART = re.compile(r"[^\W_]+", re.UNICODE)


def server_url(target: str) -> URL:
    """The SQLAlchemy URL of a ``postgresql://`` target, with the psycopg 3 driver."""
    try:
        url = make_url(target)
    except ArgumentError as error:
        raise LibraryError(f"not a valid library URL: {mask(target)} ({error})") from None
    if url.get_backend_name() not in {"postgresql", "postgres"} or url.get_driver_name() not in {"", "psycopg"}:
        raise LibraryError(f"{mask(target)}: a team library URL starts postgresql+psycopg://")
    return url.set(drivername="postgresql+psycopg")


def mask(target: str) -> str:
    """``target`` with any password replaced by ***, for messages and logs."""
    try:
        return make_url(target).render_as_string(hide_password=True)
    except ArgumentError:
        return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", target)


class PostgresBackend(Backend):
    name = "postgresql"
    pool_in_full_order = True  # studio_skill_search keeps the name's sort key beside the vector
    # ANALYZE keeps each lexeme's frequency: a common word's search in a column's order walks
    # that order's index, checking each row's vector (3 ms at 1M skills).
    plans_searches_from_statistics = True

    def __init__(self, target: str, *, create: bool) -> None:
        self.url = server_url(target)
        self.location = self.url.render_as_string(hide_password=True)
        self._create = create
        self._current = False
        self._engine: Engine | None = None
        # Marks this process's connections, so its own commits are not heard as others' (live_changes).
        self.origin = live_changes.new_origin()

    # --- opening ---------------------------------------------------------------------------------

    def create_engine(self) -> Engine:
        engine = create_engine(
            self.url,
            pool_pre_ping=True,  # a server restarted since the last use: reconnect, not fail
            connect_args={"connect_timeout": CONNECT_TIMEOUT_S, "application_name": "skillstudio"},
        )
        self._engine = engine
        event.listen(engine, "connect", self._set_up_connection)
        try:
            with engine.connect() as connection:
                self._current = self._inspect(connection)
        except DBAPIError as error:
            engine.dispose()
            raise self.opening_error(error) from None
        except BaseException:
            engine.dispose()
            raise
        return engine

    def _set_up_connection(self, dbapi_connection: Any, _record: object) -> None:
        """Mark the connection as this process's (live_changes), and have every statement
        planned for its own values: psycopg prepares a statement run 5 times, and after 5 more
        the server may keep one generic plan for all values, blind to how many rows they
        match: a search for a word most skills contain then went through the GIN index (0.8 s
        at 1M skills, 0.26 s when planned for the word), and a rare word's plan differs again.

        And no JIT compiling: a statement the planner costs above ``jit_above_cost`` is compiled
        first, by the leader and by each parallel worker. On interactive reads that costs more
        than it saves: a search forced over the threshold at 100k skills took 86 ms instead of
        46. (At 1M a common word's search costs 85,000, just under the default 100,000, so a
        larger library or a filter more would cross it.)"""
        with dbapi_connection.cursor() as cursor:
            cursor.execute(
                "SELECT set_config(%s, %s, false), set_config('plan_cache_mode', 'force_custom_plan', false),"
                " set_config('jit', 'off', false)",
                (live_changes.ORIGIN_SETTING, self.origin),
            )
        dbapi_connection.commit()

    def listen(
        self, on_change: Callable[[], None], on_connection: Callable[[bool, str], None] | None
    ) -> live_changes.ChangeListener:
        import psycopg

        conninfo = self.url.set(drivername="postgresql").render_as_string(hide_password=False)

        def connect() -> psycopg.Connection[Any]:
            return psycopg.connect(
                conninfo, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S, application_name="skillstudio-listen"
            )

        return live_changes.ChangeListener(connect, self.origin, on_change, on_connection).start()

    def _inspect(self, connection: Connection) -> bool:
        """Refuse what is not a library (or, creating, one that is); True if nothing to migrate."""
        tables = set(
            connection.execute(
                text("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")
            ).scalars()
        )
        if "skills" not in tables:
            if not self._create:
                raise NotALibrary(
                    f"{self.location} holds no skill library (no D057 'skills' table); "
                    "create one there first (skillstudio init URL)"
                )
            return False
        if self._create:
            raise LibraryError(f"{self.location} already holds a skill library; open it instead")
        columns = connection.execute(
            text(
                "SELECT column_name FROM information_schema.columns"
                " WHERE table_schema = current_schema() AND table_name = 'skills'"
            )
        ).scalars()
        migrations.check_skill_columns(self.location, set(columns))
        if "studio_schema_migrations" not in tables:
            raise NotALibrary(f"{self.location} has a 'skills' table but not SkillStudio's; it cannot be opened")
        version = int(
            connection.execute(text("SELECT COALESCE(MAX(version), 0) FROM studio_schema_migrations")).scalar_one()
        )
        migrations.check_version(self.location, version)
        return version == migrations.LATEST_VERSION

    def prepare(self, database: Database, *, create: bool) -> None:
        if not self._current:
            migrations.upgrade(database, create=create)

    def begin_write(self, session: Session, wait_ms: int) -> None:
        connection = session.connection()
        # lock_timeout 0 would mean "wait forever": one millisecond is "do not wait".
        connection.exec_driver_sql(f"SET LOCAL lock_timeout = {max(int(wait_ms), 1)}")
        connection.execute(select(func.pg_advisory_xact_lock(WRITE_LOCK_KEY)))
        connection.exec_driver_sql(f"SET LOCAL lock_timeout = {STATEMENT_LOCK_TIMEOUT_MS}")

    def begin_read(self, session: Session) -> None:
        session.connection(execution_options={"isolation_level": "REPEATABLE READ"})

    def is_busy(self, error: BaseException) -> bool:
        cause = error.orig if isinstance(error, DBAPIError) else error
        return getattr(cause, "sqlstate", None) == LOCK_NOT_AVAILABLE

    def opening_error(self, error: BaseException) -> LibraryError:
        cause = error.orig if isinstance(error, DBAPIError) else error
        if self.is_busy(error):
            return LibraryBusy(self.location, STATEMENT_LOCK_TIMEOUT_MS / 1000, detail=_reason(cause))
        if getattr(cause, "sqlstate", None) is None:  # no answer from a server: where, and why
            host = f"{self.url.host or 'localhost'}:{self.url.port or 5432}"
            return LibraryNotFound(
                f"cannot connect to the PostgreSQL server at {host} for {self.location}: {_reason(cause)}"
            )
        return StorageError(f"{self.location}: {_reason(cause)}")

    def storage_error(self, error: BaseException) -> LibraryError:
        cause = error.orig if isinstance(error, DBAPIError) else error
        if self.is_busy(error):
            return LibraryBusy(self.location, STATEMENT_LOCK_TIMEOUT_MS / 1000, detail=_reason(cause))
        if getattr(cause, "sqlstate", None) == QUERY_CANCELED:
            return StorageError(f"{self.location}: the read was interrupted")
        if getattr(error, "connection_invalidated", False) or getattr(cause, "sqlstate", None) is None:
            return StorageError(f"lost the connection to the library {self.location}: {_reason(cause)}")
        return StorageError(f"{self.location}: {_reason(cause)}")

    def change_token(self) -> int:
        assert self._engine is not None
        try:
            with self._engine.connect() as connection:
                return int(connection.execute(text("SELECT version FROM studio_changes WHERE id = 1")).scalar_one())
        except DBAPIError as error:
            raise self.storage_error(error) from error

    def interrupt(self, raw: object) -> None:
        import psycopg

        assert isinstance(raw, psycopg.Connection)  # an open session's connection
        raw.cancel_safe()  # the server is asked to cancel the statement

    # --- SQL -----------------------------------------------------------------------------------------

    def skill_key(self) -> ColumnElement[Any]:
        return SkillRow.id.expression

    def text_matches(
        self, words: Sequence[str], *, ranked: bool, pool: int | None = None, descending: bool = False
    ) -> Subquery:
        query = _tsquery(tsquery(words, prefix=True))
        rank = (-func.ts_rank(literal_column(f"'{RANK_WEIGHTS}'"), SEARCH.c.document, query)).label("rank")
        statement = select(SEARCH.c.skill_id.label("key"), *([rank] if ranked or pool is not None else []))
        statement = statement.where(SEARCH.c.document.bool_op("@@")(query))
        if pool is not None:
            ranked_order = rank.desc() if descending else rank.asc()
            statement = statement.order_by(ranked_order, SEARCH.c.name_key, SEARCH.c.skill_id).limit(pool)
        return statement.subquery("fts")

    def any_word_ranking(
        self, connection: Connection, terms: Sequence[str], *, prefix: bool, tags_only: bool, pool: int
    ) -> Subquery:
        query = _tsquery(tsquery(terms, prefix=prefix, weight="B" if tags_only else "", any_word=True))
        score = func.ts_rank(literal_column(f"'{RANK_WEIGHTS}'"), SEARCH.c.document, query).label("score")
        return (
            select(SEARCH.c.skill_id.label("key"), score)
            .where(SEARCH.c.document.bool_op("@@")(query))
            .order_by(score.desc())
            .limit(pool)
            .subquery("best")
        )

    def word_frequencies(self, connection: Connection, words: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for word in words:  # each a GIN index lookup
            lexeme = tsquery([word], prefix=True)
            if not lexeme:
                continue
            count = connection.execute(
                select(func.count()).select_from(SEARCH).where(SEARCH.c.document.bool_op("@@")(_tsquery(lexeme)))
            ).scalar_one()
            if count:
                out[word] = int(count)
        return out

    def tag_conditions(
        self, tags_column: SQLColumnExpression[str], tag: str, number: int, *, narrow: bool
    ) -> list[ColumnElement[bool]]:
        # jsonb ? text: a string element equal to the tag, served by the GIN index studio_skills_tags.
        return [func.studio_tags_json(tags_column).bool_op("?")(bindparam(f"tag_{number}", tag))]

    def untagged(self, tags_column: SQLColumnExpression[str]) -> ColumnElement[bool]:
        return func.studio_untagged(tags_column, type_=Boolean)

    def name_order(self, column: InstrumentedAttribute[str]) -> ColumnElement[str]:
        return func.lower(column)  # the column's collation is "C": bytewise, as SQLite's NOCASE

    def walked(self, column: InstrumentedAttribute[Any] | ColumnElement[Any]) -> ColumnElement[Any]:
        return column.expression

    def nulls_last_by_default(self, descending: bool) -> bool:
        return not descending  # PostgreSQL sorts NULL highest

    def approximate_skill_count(self, connection: Connection) -> int:
        estimate = connection.execute(text("SELECT reltuples FROM pg_class WHERE oid = to_regclass('skills')")).scalar()
        if estimate is None or estimate < 0:  # never analysed: count (a new, small library)
            return int(connection.execute(select(func.count()).select_from(SkillRow)).scalar_one())
        return int(estimate)


# Each skill's words, kept by triggers on skills (postgresql_schema.sql).
SEARCH = table("studio_skill_search", column("skill_id", Text), column("name_key", Text), column("document"))


def _tsquery(text_query: str) -> ColumnElement[Any]:
    return func.to_tsquery(literal_column("'simple'"), bindparam("match", text_query))


def tsquery(words: Sequence[str], *, prefix: bool, weight: str = "", any_word: bool = False) -> str:
    """to_tsquery text for words as FTS5 reads ``"word"*``: a word of several parts (``a_b``) is
    a phrase, the last part a prefix; words joined by & (all required) or | (``any_word``).
    Only letters and digits reach the server, so no input is tsquery syntax."""
    terms = []
    for word in words:
        parts = _PART.findall(fold(word))  # the words as studio_search_words stored them
        if not parts:
            continue
        inner = f":{weight}" if weight else ""  # a phrase's first parts: whole words
        marks = [inner] * (len(parts) - 1) + [(":*" if prefix else ":" if weight else "") + weight]
        lexemes = [f"'{part}'{mark}" for part, mark in zip(parts, marks, strict=True)]
        terms.append(lexemes[0] if len(lexemes) == 1 else "(" + " <-> ".join(lexemes) + ")")
    return (" | " if any_word else " & ").join(terms)


def search_words(user_text: str) -> list[str]:
    return _WORD.findall(user_text)


def _reason(cause: BaseException | None) -> str:
    """The driver's message, its first line (libpq adds hints on the next ones)."""
    message = str(cause).strip()
    return message.splitlines()[0] if message else type(cause).__name__


def schema_statements() -> list[str]:
    """The PostgreSQL DDL of a new library (postgresql_schema.sql), one statement each."""
    ddl = files("skillstudio.store").joinpath("postgresql_schema.sql").read_text(encoding="utf-8")
    return split_statements(ddl) + migrations.postgresql_order_indexes()


def split_statements(script: str) -> list[str]:
    """A PostgreSQL script's statements: separated by lines holding only ``-- ;;``."""
    return [part.strip() for part in script.split("\n-- ;;\n") if _has_code(part)]


def _has_code(part: str) -> bool:
    return any(line.split("--", 1)[0].strip() for line in part.splitlines())


__all__ = [
    "PostgresBackend",
    "mask",
    "schema_statements",
    "search_words",
    "server_url",
    "split_statements",
    "tsquery",
]
