"""Many rows in one statement: the store's one way to hand a batch of rows to the driver.

SQLAlchemy's own executemany spends about as long preparing 5,000 parameter sets as SQLite takes
to insert them; here a statement is compiled once for the connection's dialect and the driver
gets plain tuples (or dicts, for a named paramstyle), so bulk writes stay backend-neutral.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import Connection, and_, bindparam, insert, update
from sqlalchemy.sql.dml import UpdateBase

from skillstudio.store.orm import Base


def insert_rows(connection: Connection, table: type[Base], rows: Sequence[Mapping[str, object]]) -> None:
    """One executemany of an INSERT into ``table`` (every row has the same keys)."""
    if rows:
        execute_many(connection, insert(table).values(binds(rows[0])), rows)


def update_rows(
    connection: Connection, table: type[Base], keys: Sequence[str], rows: Sequence[Mapping[str, object]]
) -> None:
    """One executemany of an UPDATE of ``table``: each row names the row it changes by the
    ``keys`` columns and holds the new values of the others (every row has the same keys).
    The ORM's bulk UPDATE by primary key spends longer preparing its parameters than SQLite
    takes to apply them."""
    if not rows:
        return
    columns = table.__table__.c
    changed = [name for name in rows[0] if name not in keys]
    statement = (
        update(table)
        .where(and_(*(columns[name] == bindparam(f"key_{name}") for name in keys)))
        .values({name: bindparam(name) for name in changed})
    )
    execute_many(
        connection,
        statement,
        [{**{f"key_{name}": row[name] for name in keys}, **{n: row[n] for n in changed}} for row in rows],
    )


def binds(row: Mapping[str, object]) -> dict[str, object]:
    """A statement's values bound by name to each row's keys: ``.values(binds(rows[0]))``."""
    return {key: bindparam(key) for key in row}


def execute_many(connection: Connection, statement: UpdateBase, rows: Sequence[Mapping[str, object]]) -> int:
    """One driver executemany of ``statement``, whose parameters are named by the rows' keys;
    the rows it changed (both drivers sum them over the batch)."""
    if not rows:
        return 0
    compiled = statement.compile(dialect=connection.dialect)
    if compiled.positiontup is None:  # a named paramstyle: the driver takes the dicts
        result = connection.exec_driver_sql(str(compiled), [dict(row) for row in rows])
    else:
        order = compiled.positiontup
        result = connection.exec_driver_sql(str(compiled), [tuple(row[key] for key in order) for row in rows])
    return int(result.rowcount)


__all__ = ["binds", "execute_many", "insert_rows", "update_rows"]
