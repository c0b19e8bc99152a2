"""SkillStudio searches migration 16's one-letter prefix index, and it answers as D057's
``skills_fts`` does: the same matches with the same bm25, whoever wrote the rows.

The old path is the same SQL over ``skills_fts``; each test compares the two on one library.
"""

from __future__ import annotations

import sqlite3
import string
from dataclasses import replace
from pathlib import Path

import pytest

from benchmarks.synthetic import generate_skills
from skillstudio.store import Actor, Database, SkillQuery, SkillRepository
from skillstudio.store.backends import sqlite as sqlite_backend
from skillstudio.store.keyword_search import keyword_candidates
from skillstudio.store.migrations import LATEST_VERSION
from tests.factories import ai_skill

SEARCH_INDEX = sqlite_backend.SEARCH_INDEX
QUERIES = [
    *(f'"{c}"*' for c in string.ascii_lowercase + string.digits),
    '"ta"*',
    '"tank"*',
    '"tank"* "rush"*',
    '"anti"* "ar"*',
    '"t"* "a"*',
    '{tags}: "early"*',
    '{name}: "t"*',
    '"zzzz"*',
]


def ranked(connection: sqlite3.Connection, table: str, match: str) -> list[tuple[int, float]]:
    return connection.execute(
        f"SELECT rowid, rank FROM {table} WHERE {table} MATCH ? ORDER BY rank, rowid", (match,)
    ).fetchall()


def vocabulary(connection: sqlite3.Connection, table: str) -> list[tuple[str, int, int]]:
    connection.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.v_{table} USING fts5vocab(main, {table}, 'row')")
    return connection.execute(f"SELECT term, doc, cnt FROM temp.v_{table} ORDER BY term").fetchall()


def engine_writes(path: Path) -> None:
    """What an engine does to the file with plain SQL: the triggers keep both indexes current."""
    with sqlite3.connect(path) as engine:
        first, second = (row[0] for row in engine.execute("SELECT id FROM skills ORDER BY rowid LIMIT 2"))
        engine.execute(
            "INSERT INTO skills SELECT 'engine-' || id, domain, 'Tesla trap ' || name, description, body_json, tags,"
            " game_module, source, model_id, verification_count, success_rate, average_rating, confidence,"
            " use_count, created_at, last_used, last_verified FROM skills WHERE rowid % 7 = 0"
        )
        engine.execute("UPDATE skills SET name = 'Tiny tank trick', tags = '[\"t\"]' WHERE id = ?", (first,))
        engine.execute("UPDATE skills SET description = 'nothing but t' WHERE id = ?", (second,))
        engine.execute("DELETE FROM skills WHERE rowid % 11 = 0")


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("search-index") / "library.db"
    with Database(path, create=True) as database:
        repository = SkillRepository(database, Actor("test", "system"))
        repository.create_many(generate_skills(700, seed=23))
        skill = repository.create(ai_skill(name="Tank rush", description="t t t", tags=("t",)))
        repository.update(replace(repository.get(skill.id), name="Turret tank rush"))
        person = SkillRepository(database, Actor("designer", "human"))
        person.trash.delete(person.query(SkillQuery(text="tank")).ids[3])
    engine_writes(path)
    return path


def test_the_search_index_ranks_every_query_as_d057s_index_does(library: Path) -> None:
    with sqlite3.connect(library) as connection:
        for match in QUERIES:
            assert ranked(connection, SEARCH_INDEX, match) == ranked(connection, "skills_fts", match), match
        assert any(ranked(connection, SEARCH_INDEX, '"t"*'))
        assert vocabulary(connection, SEARCH_INDEX) == vocabulary(connection, "skills_fts")
        for table in (SEARCH_INDEX, "skills_fts"):  # each index holds exactly the rows of skills
            connection.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")


@pytest.mark.parametrize("typed", ["t", "ta", "tank", "tank rush", "r", "anti ar", "e 1", "zzzz"])
def test_the_repository_finds_and_orders_what_searching_d057s_index_would(
    library: Path, typed: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Database(library) as database:
        repository = SkillRepository(database, Actor("test", "system"))
        queries = [SkillQuery(text=typed), SkillQuery(text=typed, descending=True)]
        found = [repository.query(query).ids for query in queries]
        pages = [repository.first_page(query, 40) for query in queries]
        retrieved = [keyword_candidates(database, typed, tags_only=tags) for tags in (False, True)]
        monkeypatch.setattr(sqlite_backend, "SEARCH_INDEX", "skills_fts")  # the old path
        assert [repository.query(query).ids for query in queries] == found
        assert [repository.first_page(query, 40) for query in queries] == pages
        assert [keyword_candidates(database, typed, tags_only=tags) for tags in (False, True)] == retrieved
    assert typed == "zzzz" or found[0]


def test_a_library_from_before_the_index_gets_it_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "library.db"
    with Database(path, create=True) as database:
        repository = SkillRepository(database, Actor("test", "system"))
        repository.create_many(generate_skills(120, seed=5))
        expected = repository.query(SkillQuery(text="t")).ids
    with sqlite3.connect(path) as connection:  # the library as migration 15 left it
        connection.execute(f"DROP TABLE {SEARCH_INDEX}")
        for trigger in ("insert", "delete", "update"):
            connection.execute(f"DROP TRIGGER studio_search_fts_{trigger}")
        connection.execute("DELETE FROM studio_schema_migrations WHERE version >= 16")
    engine_writes(path)  # rows written while the file had no such index
    with Database(path) as database:
        repository = SkillRepository(database, Actor("test", "system"))
        found = repository.query(SkillQuery(text="t")).ids
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT MAX(version) FROM studio_schema_migrations").fetchone() == (LATEST_VERSION,)
        assert found and set(found) - set(expected)  # the engine's new rows are found
        assert ranked(connection, SEARCH_INDEX, '"t"*') == ranked(connection, "skills_fts", '"t"*')
        connection.execute(f"INSERT INTO {SEARCH_INDEX}({SEARCH_INDEX}) VALUES ('integrity-check')")
