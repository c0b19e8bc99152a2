"""A benchmark's SQLite library, copied into a team library on a PostgreSQL server.

A million skills written through the repository would take hours; copying the rows takes
minutes. The server library is created by SkillStudio itself (its schema), then every table the
two backends share is read with sqlite3 and written with COPY, as it is: the same rows in D057's
tables and in SkillStudio's. Row triggers are off while copying (each would redo, one row at a
time, what the SQLite file already holds: versions, counts, the retrieval log); the one table
only the server has, the keyword index ``studio_skill_search``, is then filled in one statement
through the same function its trigger calls. Secondary indexes are dropped for the copy and made
again after it, and the library is vacuumed and analysed, as a server would be after a bulk load.
:func:`check_copy` then compares the two libraries.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from pathlib import Path
from typing import Any

import psycopg

# PostgreSQL's own rows: its schema's migration record and its change token.
_NOT_COPIED = {"studio_schema_migrations", "studio_changes", "studio_skill_search"}
_BATCH = 5_000


def _connect(url: str) -> psycopg.Connection[Any]:
    from sqlalchemy.engine import make_url

    parts = make_url(url)
    return psycopg.connect(
        host=parts.host,
        port=parts.port,
        user=parts.username,
        password=parts.password,
        dbname=parts.database,
        autocommit=True,
    )


def _shared_tables(server: psycopg.Connection[Any], source: sqlite3.Connection) -> dict[str, list[str]]:
    """Each table both libraries have, with the server's columns in order (SQLite's must match)."""
    columns: dict[str, list[str]] = {}
    for table, column in server.execute(
        "SELECT table_name, column_name FROM information_schema.columns"
        " WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position"
    ):
        columns.setdefault(table, []).append(column)
    sqlite_tables = {row[0] for row in source.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    shared = {}
    for table, names in columns.items():
        if table in _NOT_COPIED or table not in sqlite_tables:
            continue
        sqlite_columns = {row[1] for row in source.execute(f'PRAGMA table_info("{table}")')}
        if sqlite_columns != set(names):
            raise ValueError(f"{table}: the libraries' columns differ ({sorted(sqlite_columns ^ set(names))})")
        shared[table] = names
    return shared


def load(sqlite_path: Path, url: str, *, progress: bool = True) -> None:
    """Copy the library at ``sqlite_path`` into the empty database at ``url`` (a superuser's:
    triggers are switched off for the copy)."""
    from skillstudio.store import Database

    Database(url, create=True).close()  # SkillStudio's schema, made by SkillStudio
    source = sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True)
    with _connect(url) as server:
        tables = _shared_tables(server, source)
        indexes = list(
            server.execute(
                "SELECT i.indexname, i.indexdef FROM pg_indexes i WHERE i.schemaname = current_schema()"
                " AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)"
            )
        )
        for name, _definition in indexes:
            server.execute(f'DROP INDEX "{name}"')
        server.execute("SET session_replication_role = replica")  # no row triggers (nor foreign key checks)
        server.execute("SET maintenance_work_mem = '1GB'")
        for table, columns in tables.items():
            started, rows = time.perf_counter(), 0
            listed = ", ".join(f'"{c}"' for c in columns)
            cursor = source.execute(f'SELECT {listed} FROM "{table}"')
            with server.cursor().copy(f'COPY "{table}" ({listed}) FROM STDIN') as copy:
                while batch := cursor.fetchmany(_BATCH):
                    for row in batch:
                        copy.write_row(row)
                    rows += len(batch)
            if progress and rows:
                print(f"    {table}: {rows:,} rows in {time.perf_counter() - started:.0f} s", flush=True)
        server.execute(
            "INSERT INTO studio_skill_search(skill_id, name_key, document)"
            " SELECT id, lower(name), studio_skill_document(name, description, tags) FROM skills"
        )
        # Identity columns continue after the copied ids.
        for table, column in server.execute(
            "SELECT table_name, column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND is_identity = 'YES'"
        ).fetchall():
            server.execute(
                f'SELECT setval(pg_get_serial_sequence(%s, %s), COALESCE(MAX("{column}"), 0) + 1, false)'
                f' FROM "{table}"',
                (table, column),
            )
        server.execute("SET session_replication_role = origin")
        started = time.perf_counter()
        for _name, definition in indexes:
            server.execute(definition)
        if progress:
            print(f"    {len(indexes)} indexes made in {time.perf_counter() - started:.0f} s", flush=True)
        server.execute("VACUUM (ANALYZE)")  # the visibility map an index-only scan needs, and statistics
    source.close()


def check_copy(sqlite_path: Path, url: str, samples: int = 5) -> dict[str, int]:
    """The server library holds what the file does: every shared table's row count, the derived
    tables (keyword index, tag and creator counts) agree with the skills, and a few skills read
    through the repository are equal on both. Returns the row counts; raises on a difference."""
    from skillstudio.store import Actor, Database, SkillRepository

    source = sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True)
    counts: dict[str, int] = {}
    with _connect(url) as server:
        for table in _shared_tables(server, source):
            here = server.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()
            there = source.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()
            assert here is not None and there is not None
            if here[0] != there[0]:
                raise AssertionError(f"{table}: {here[0]:,} rows on the server, {there[0]:,} in the file")
            counts[table] = int(here[0])
        differences = server.execute(
            "SELECT"
            " (SELECT COUNT(*) FROM skills s FULL JOIN studio_skill_search f ON f.skill_id = s.id"
            "   WHERE s.id IS NULL OR f.skill_id IS NULL OR f.name_key IS DISTINCT FROM lower(s.name)"
            "   OR f.document IS DISTINCT FROM studio_skill_document(s.name, s.description, s.tags)),"
            " (SELECT COUNT(*) FROM studio_tag_counts t FULL JOIN ("
            "   SELECT tag, COUNT(*) AS skills FROM skills, studio_tag_texts(skills.tags) AS tag GROUP BY tag) r"
            "   ON r.tag = t.tag WHERE t.skills IS DISTINCT FROM r.skills),"
            " (SELECT COUNT(*) FROM studio_creator_counts c FULL JOIN ("
            "   SELECT COALESCE(m.created_by, 'unknown') AS created_by, COUNT(*) AS skills"
            "   FROM skills s LEFT JOIN studio_skill_meta m ON m.skill_id = s.id GROUP BY 1) r"
            "   ON r.created_by = c.created_by WHERE c.skills IS DISTINCT FROM r.skills)"
        ).fetchone()
        if differences != (0, 0, 0):
            raise AssertionError(f"derived tables differ from the skills (search, tags, creators): {differences}")
        ids = [row[0] for row in server.execute("SELECT id FROM skills TABLESAMPLE SYSTEM (1) LIMIT %s", (samples,))]
    source.close()
    with Database(sqlite_path) as file_library, Database(url) as server_library:
        in_file = SkillRepository(file_library, Actor("bench", "system"))
        on_server = SkillRepository(server_library, Actor("bench", "system"))
        for skill_id in ids:
            if in_file.get(skill_id) != on_server.get(skill_id):
                raise AssertionError(f"skill {skill_id} differs between the file and the server")
    return counts


def server_library(admin_url: str, url: str, sqlite_path: Path) -> str:
    """``url``'s database holding a checked copy of the library at ``sqlite_path``: kept from an
    earlier run when its stamp (the file's name, size and time, and the server schema's hash)
    still matches, else made again."""
    from psycopg import sql
    from sqlalchemy.engine import make_url

    from skillstudio.store.backends.postgresql import schema_statements

    name = make_url(url).database
    stat = sqlite_path.stat()
    schema = hashlib.sha256("\n".join(schema_statements()).encode()).hexdigest()[:16]
    stamp = f"copy of {sqlite_path.name}, {stat.st_size} bytes, modified {stat.st_mtime_ns}; schema {schema}"
    with _connect(admin_url) as admin:
        kept = admin.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", (name,)
        ).fetchone()
        if kept is not None and kept[0] == stamp:
            return url
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        admin.execute(sql.SQL("CREATE DATABASE {} TEMPLATE template0").format(sql.Identifier(name)))
    print(f"  copying {sqlite_path.name} into the server's database {name}…", flush=True)
    load(sqlite_path, url)
    counts = check_copy(sqlite_path, url)
    print(f"  checked: {counts['skills']:,} skills, every shared table's rows, the derived tables", flush=True)
    with _connect(admin_url) as admin:
        admin.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(sql.Identifier(name), sql.Literal(stamp)))
    return url


__all__ = ["check_copy", "load", "server_library"]
