"""The browser's fast paths give what the plain queries give: first pages, orders, tag counts.

Each test compares a fast path with the simple query it replaces, on the same synthetic library
(benchmarks/synthetic.py: Zipf-distributed words and tags, NULL figures, repeated names) plus
rows written to tie, and rows an engine wrote badly.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from itertools import product
from pathlib import Path

import pytest
from sqlalchemy import Connection, TextClause, bindparam, event, func, text

from benchmarks.synthetic import COMMON_TAG, generate_skills
from skillstudio.model import Confidence, Domain, ReviewState, SourceKind
from skillstudio.store import Actor, Cancellation, Database, LibraryError, SkillQuery, SkillRepository, SortKey
from skillstudio.store import repository as repository_module
from skillstudio.store.migrations import d057_statements
from skillstudio.store.query import build_select, first_ids
from tests.factories import ai_skill
from tests.libraries import BACKENDS, new_library
from tests.outside import another_program

LIBRARY_SIZE = 600
TIES = 12  # skills that rank, and sort by most columns, exactly alike


@pytest.fixture(scope="module", params=BACKENDS)
def library(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    with (
        new_library(request, request.param, tmp_path_factory.mktemp("browsing")) as target,
        Database(target) as database,
    ):
        repository = SkillRepository(database, Actor("test", "system"))
        repository.create_many(generate_skills(LIBRARY_SIZE, seed=17))
        twin = ai_skill(name="Tank rush twin", description="tank tank rush", tags=("twin",))
        # Inserted in descending id order: the index meets them in the opposite order to the full query's.
        repository.create_many([replace(twin, id=f"00000000-0000-4000-8000-{n:012d}") for n in reversed(range(TIES))])
        yield repository


def full_ids(repository: SkillRepository, query: SkillQuery) -> list[str]:
    """The plain path: every id of the full query, in its order."""
    with repository.database.read() as session:
        return list(session.connection().execute(build_select(query, repository.database.backend)).scalars())


QUERIES = [
    SkillQuery(),
    *(SkillQuery(text=text) for text in ("t", "ta", "tank", "tank rush", "the", "anti ar", "a", "zzzz", '-:"')),
    SkillQuery(text="tank", descending=True),
    SkillQuery(text="t", domains=(Domain.AI_STRATEGY,), confidences=(Confidence.PROVEN,)),
    SkillQuery(text="tank", tags=(COMMON_TAG,)),
    SkillQuery(text="the", review_states=(None, ReviewState.APPROVED)),
    SkillQuery(text="rush", created_by=("unknown",)),
    SkillQuery(text="tank", sort=SortKey.SUCCESS_RATE),
    SkillQuery(tags=(COMMON_TAG,)),
    SkillQuery(tags=("twin",)),
    SkillQuery(tags=("twin", "no-such-tag")),
    SkillQuery(tags=(COMMON_TAG,), sort=SortKey.USE_COUNT, descending=True),
    SkillQuery(untagged=True),
    SkillQuery(sources=(SourceKind.WORKSHOP,), game_modules=("ra1", "td")),
    *(SkillQuery(sort=sort, descending=descending) for sort, descending in product(SortKey, (False, True))),
    *(  # filters on the columns the order indexes cover, in every order
        SkillQuery(confidences=(Confidence.TENTATIVE,), game_modules=("td", "ra2"), sort=sort, descending=descending)
        for sort, descending in product(SortKey, (False, True))
    ),
    *(  # searches in a column's order: a common word walks the order's index, a rare one does not
        SkillQuery(text=text, sort=sort, descending=descending)
        for text, sort, descending in product(("t", "tank rush", "twin", "zzzz"), SortKey, (False, True))
        if sort is not SortKey.RELEVANCE
    ),
    *(  # ... with filters, a common tag and a rare one
        SkillQuery(text="t", confidences=(Confidence.TENTATIVE,), game_modules=("td",), sort=sort, descending=True)
        for sort in SortKey
    ),
    SkillQuery(text="ta", tags=(COMMON_TAG,), sort=SortKey.USE_COUNT),
    SkillQuery(text="tank", tags=("twin",), sort=SortKey.NAME, descending=True),
    SkillQuery(text="the", review_states=(ReviewState.APPROVED,), sort=SortKey.CREATED_BY),
]


@pytest.mark.parametrize("query", QUERIES, ids=repr)
def test_a_first_page_is_the_full_orders_beginning(library: SkillRepository, query: SkillQuery) -> None:
    expected = full_ids(library, query)
    with library.database.read() as session:
        connection = session.connection()
        for count, pool in ((1, None), (5, 5), (7, None), (50, 50), (200, None), (LIBRARY_SIZE + 50, None)):
            assert first_ids(connection, query, count, library.database.backend, pool=pool) == expected[:count], (
                count,
                pool,
            )
    assert library.first_page(query, 200) == expected[:200]


def test_ties_at_a_pages_end_are_ordered_as_the_full_query_orders_them(library: SkillRepository) -> None:
    """The twins rank alike: a pool that ends among them must not decide which come first."""
    query = SkillQuery(text="tank rush twin")
    expected = full_ids(library, query)
    assert expected[:TIES] == sorted(expected[:TIES]) and all(i.startswith("00000000-") for i in expected[:TIES])
    with library.database.read() as session:
        for count in range(1, TIES):
            assert (
                first_ids(session.connection(), query, count, library.database.backend, pool=count) == expected[:count]
            )


@pytest.mark.parametrize(("text", "walked"), [("t", True), ("twin", True), ("tank rush twin", False), ("zzzz", False)])
def test_a_common_words_search_in_a_columns_order_walks_that_orders_index(
    library: SkillRepository, text: str, walked: bool
) -> None:
    """Sorting every match of a common word to show its first rows took 120-150 ms at 100k
    skills; walking the order's index until the page is full, 14 ms. A rare word's few matches
    are still joined and sorted: a walk would read the whole index to find them. (A page of 500
    of this library's 612 skills: a walk is worth it from 16 matches on; ``twin`` has 21,
    ``tank rush twin`` 13.)"""
    if library.database.dialect != "sqlite":
        pytest.skip("SQLite only: a server's planner chooses the walk itself, from its statistics")
    query = SkillQuery(text=text, sort=SortKey.SUCCESS_RATE, descending=True)
    statements: list[tuple[str, object]] = []

    def record(_conn, _cursor, statement, parameters, _context, _many) -> None:
        statements.append((statement, parameters))

    engine = library.database.engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        assert library.first_page(query, 500) == full_ids(library, query)[:500]
    finally:
        event.remove(engine, "before_cursor_execute", record)
    page_statement, parameters = next((s, p) for s, p in reversed(statements) if "LIMIT" in s)
    with library.database.read() as session:
        plan = " ".join(
            row[-1] for row in session.connection().exec_driver_sql("EXPLAIN QUERY PLAN " + page_statement, parameters)
        )
    # Walked: the index is scanned, and only each value's few tied rows are sorted (RIGHT PART).
    walk = "SCAN skills USING COVERING INDEX studio_order_success_rate" in plan
    assert (walk and "TEMP B-TREE FOR ORDER BY" not in plan) is walked, plan


ORDER_COLUMNS = {
    SortKey.SUCCESS_RATE: "success_rate",
    SortKey.VERIFICATION_COUNT: "verification_count",
    SortKey.AVERAGE_RATING: "average_rating",
    SortKey.USE_COUNT: "use_count",
    SortKey.LAST_VERIFIED: "last_verified",
    SortKey.LAST_USED: "last_used",
}


def test_orders_put_missing_and_odd_figures_where_they_always_were(library_target: str) -> None:
    """The sorts are written for the indexes (NULLS LAST rather than ``x IS NULL``); the order is
    the one the plain SQL gives, NULLs last, ties by name then id, values of another type too
    (SQLite keeps them; a server refuses them, so there its engine writes NULLs)."""
    with Database(library_target) as database:
        SkillRepository(database, Actor("test", "system")).create_many(generate_skills(200, seed=5))
        sqlite = database.dialect == "sqlite"
        odd_rate = "'n/a'" if sqlite else "NULL"
        name_order = "name COLLATE NOCASE" if sqlite else "lower(name)"
        with another_program(database) as other:  # an engine's rows: text in number columns, NULLs
            every = every_nth(other, "skills", "id")
            other.execute(in_ids(f"UPDATE skills SET success_rate = {odd_rate}, use_count = NULL"), every(17))
            other.execute(in_ids("UPDATE skills SET verification_count = NULL, last_used = '3'"), every(13))
            other.execute(in_ids("UPDATE skills SET name = 'same'"), every(5))
        repository = SkillRepository(database)
        for sort, column in ORDER_COLUMNS.items():
            for descending in (False, True):
                direction = "DESC" if descending else "ASC"
                plain = f"SELECT id FROM skills ORDER BY {column} IS NULL, {column} {direction}, {name_order}, id"
                with another_program(database) as other:
                    expected = list(other.execute(text(plain)).scalars())
                query = SkillQuery(sort=sort, descending=descending)
                assert repository.query(query).ids == expected, (sort, descending)
                assert repository.first_page(query, 30) == expected[:30], (sort, descending)


def every_nth(connection: Connection, table: str, key: str) -> Callable[[int], dict[str, list[str]]]:
    """``every(n)``: the parameters of ``in_ids`` naming every n-th row of ``table`` by ``key``
    (what SQLite's ``rowid % n = 0`` picked, on either backend)."""
    keys = sorted(connection.execute(text(f"SELECT {key} FROM {table}")).scalars())
    return lambda n: {"ids": keys[n - 1 :: n]}


def in_ids(statement: str, column: str = "id") -> TextClause:
    """``statement WHERE column IN :ids``, ids given as a list."""
    return text(f"{statement} WHERE {column} IN :ids").bindparams(bindparam("ids", expanding=True))


def delete_skills(connection: Connection, ids: dict[str, list[str]]) -> None:
    """Delete skills as an engine would, their D057 rows that refer to them first (a server
    enforces D057's foreign keys; SQLite, with them off, would not)."""
    connection.execute(in_ids("DELETE FROM skill_embeddings", "skill_id"), ids)
    connection.execute(in_ids("DELETE FROM skill_compositions", "skill_a"), ids)
    connection.execute(in_ids("DELETE FROM skill_compositions", "skill_b"), ids)
    connection.execute(in_ids("DELETE FROM skills"), ids)


def json_each_values(tags: str) -> list[str]:
    """The text values SQLite's json_each() gives for a tags column (invalid JSON: none)."""
    try:
        value = json.loads(tags)
    except ValueError:
        return []
    items = value if isinstance(value, list) else list(value.values()) if isinstance(value, dict) else [value]
    return [item for item in items if isinstance(item, str)]


def plain_tag_counts(database: Database) -> dict[str, int]:
    """Every tag with its count, by reading every row's tags."""
    with another_program(database) as other:
        rows = list(other.execute(text("SELECT tags FROM skills")).scalars())
    return dict(sorted(Counter(tag for tags in rows for tag in json_each_values(tags)).items()))


def test_tag_counts_follow_every_write_as_counting_every_row_would(library_target: str) -> None:
    with Database(library_target) as database:
        repository = SkillRepository(database, Actor("test", "human"))
        skills = generate_skills(150, seed=3)
        repository.create_many(skills)
        assert repository.facets.tag_counts() == plain_tag_counts(database)
        first, second = repository.get(skills[0].id), repository.get(skills[1].id)
        repository.update(replace(first, tags=(*first.tags, "fresh-tag")))
        repository.update(replace(second, tags=()))
        repository.trash.delete_many([skills[2].id, skills[3].id])
        assert repository.facets.tag_counts() == plain_tag_counts(database)
        repository.trash.restore(skills[2].id)
        assert repository.facets.tag_counts() == plain_tag_counts(database)
        with another_program(database) as other:  # an engine writes: bad JSON, duplicates, objects
            every = every_nth(other, "skills", "id")
            other.execute(in_ids("UPDATE skills SET tags = 'not json'"), every(7))
            other.execute(in_ids("""UPDATE skills SET tags = '["dup", "dup", 5, "solo"]'"""), every(11))
            other.execute(in_ids("""UPDATE skills SET tags = '{"a": "object-tag"}'"""), every(19))
            other.execute(in_ids("""UPDATE skills SET tags = '"lone"'"""), every(29))
            gone = every(23)
            delete_skills(other, gone)
        counts = SkillRepository(database).facets.tag_counts()
        assert counts == plain_tag_counts(database)
        assert {"dup", "fresh-tag", "object-tag", "lone"} <= set(counts)
        tagged = set(every(19)["ids"]) - set(gone["ids"])
        assert set(repository.query(SkillQuery(tags=("object-tag",))).ids) == tagged


def test_tag_counts_of_a_file_an_engine_made_are_counted_when_it_is_first_opened(tmp_path: Path) -> None:
    path = tmp_path / "gameplay.db"
    with sqlite3.connect(path) as connection:
        for statement in d057_statements().values():
            connection.execute(statement)
        for n, tags in enumerate((["a", "b"], ["a"], "oops", ["b", "b", 1], [])):
            connection.execute(
                "INSERT INTO skills (id, domain, name, description, body_json, tags, game_module, source,"
                " created_at) VALUES (?, 'ai_strategy', ?, '', '{}', ?, 'ra1', 'hand_authored', '2025-01-01')",
                (f"engine-{n}", f"skill {n}", tags if isinstance(tags, str) else json.dumps(tags)),
            )
    with Database(path) as database:
        assert SkillRepository(database).facets.tag_counts() == {"a": 2, "b": 3} == plain_tag_counts(database)


def test_an_engines_insert_or_replace_leaves_nothing_stale_once_the_library_is_opened(tmp_path: Path) -> None:
    """SQLite runs no delete trigger for the row REPLACE removes (unless recursive_triggers is on):
    the old row stayed in both FTS indexes and in the tag and creator counts."""
    path = tmp_path / "gameplay.db"
    with Database(path, create=True) as database:
        repository = SkillRepository(database, Actor("designer", "human"))
        repository.create_many(generate_skills(60, seed=3))
        old = repository.create(ai_skill(name="Quokka feint", tags=("old-tag",)))
    with sqlite3.connect(path) as engine:  # an engine's connection: recursive_triggers off, the default
        engine.execute(
            "INSERT OR REPLACE INTO skills SELECT id, domain, 'Zanzibar gambit', description, body_json,"
            " '[\"new-tag\"]', game_module, source, model_id, verification_count, success_rate, average_rating,"
            " confidence, use_count, created_at, last_used, last_verified FROM skills WHERE id = ?",
            (old.id,),
        )
        stale = engine.execute("SELECT COUNT(*) FROM skills_fts WHERE skills_fts MATCH 'quokka'").fetchone()
        assert stale == (1,)  # what opening the library repairs
    with Database(path) as database:
        repository = SkillRepository(database)
        assert repository.facets.tag_counts() == plain_tag_counts(database)
        assert "old-tag" not in repository.facets.tag_counts()
        assert repository.query(SkillQuery(text="zanzibar")).ids == [old.id]
        with another_program(database) as other:
            rows = other.execute(text("SELECT created_by, skills FROM studio_creator_counts"))
            counted = {str(creator): int(count) for creator, count in rows}
        assert counted == plain_creators(database)
    with sqlite3.connect(path) as connection:
        for index in ("skills_fts", "studio_search_fts"):
            assert connection.execute(f"SELECT COUNT(*) FROM {index} WHERE {index} MATCH 'quokka'").fetchone() == (0,)
            assert connection.execute(f"SELECT COUNT(*) FROM {index}_docsize").fetchone() == (61,)


PLAIN_CREATORS = (
    "SELECT COALESCE(m.created_by, 'unknown'), COUNT(*) FROM skills"
    " LEFT JOIN studio_skill_meta AS m ON m.skill_id = skills.id GROUP BY 1"
)


def plain_creators(database: Database) -> dict[str, int]:
    with another_program(database) as other:
        return {str(creator): int(count) for creator, count in other.execute(text(PLAIN_CREATORS))}


def test_creators_follow_every_write_as_joining_every_skill_would(library_target: str) -> None:
    skills = generate_skills(120, seed=9)
    with Database(library_target) as database:
        repository = SkillRepository(database, Actor("test", "human"))
        repository.create_many(skills)
        assert repository.facets.creators() == sorted(plain_creators(database))
        one_each = list({skill.created_by: skill.id for skill in skills}.values())
        repository.trash.delete_many(one_each[:3])  # some creators' only skill, maybe
        assert repository.facets.creators() == sorted(plain_creators(database))
        repository.trash.restore(one_each[0])
        assert repository.facets.creators() == sorted(plain_creators(database))
        with another_program(database) as other:  # an engine's writes know nothing of our metadata
            other.execute(
                text(
                    "INSERT INTO skills (id, domain, name, description, body_json, tags, game_module, source,"
                    " created_at) VALUES ('engine-1', 'ai_strategy', 'engine skill', '', '{}', '[]', 'ra1',"
                    " 'hand_authored', '2025')"
                )
            )
            skill_rows = every_nth(other, "skills", "id")
            meta_rows = every_nth(other, "studio_skill_meta", "skill_id")
            delete_skills(other, skill_rows(9))  # leaves their metadata behind
            other.execute(in_ids("UPDATE studio_skill_meta SET created_by = 'renamed'", "skill_id"), meta_rows(4))
            moved = {"ids": meta_rows(1)["ids"][1:2]}
            other.execute(in_ids("UPDATE studio_skill_meta SET skill_id = 'engine-1'", "skill_id"), moved)
            other.execute(in_ids("DELETE FROM studio_skill_meta", "skill_id"), meta_rows(5))
        assert SkillRepository(database).facets.creators() == sorted(plain_creators(database))
        assert "unknown" in plain_creators(database)
        with another_program(database) as other:
            counted = {
                str(c): int(n) for c, n in other.execute(text("SELECT created_by, skills FROM studio_creator_counts"))
            }
        assert counted == plain_creators(database)


def test_game_modules_are_the_distinct_modules(library: SkillRepository) -> None:
    with library.database.read() as session:
        plain = session.connection().exec_driver_sql("SELECT DISTINCT game_module FROM skills").scalars()
        assert library.facets.game_modules() == sorted(plain) == ["ra1", "ra2", "td"]


def test_a_cancelled_query_stops_and_leaves_the_library_usable(tmp_path: Path, monkeypatch) -> None:
    """The table cancels the rest of a query nobody waits for: SQLite stops where it is, and the
    pooled connection it ran on reads normally afterwards."""
    path = tmp_path / "cancel.db"
    with Database(path, create=True) as database:
        SkillRepository(database, Actor("test", "system")).create_many(generate_skills(50, seed=2))
    database = Database(path)
    cancellation = Cancellation()
    inside_sqlite, cancelled = threading.Event(), threading.Event()

    def gate(value: object) -> object:  # called by SQLite for each row: the first one waits
        inside_sqlite.set()
        cancelled.wait(timeout=10)
        return value

    event.listen(database.engine, "connect", lambda raw, _record: raw.create_function("gate", 1, gate))
    database.engine.dispose()  # every connection from now on knows gate()
    plain_select = repository_module.build_select
    monkeypatch.setattr(repository_module, "build_select", lambda q, b: plain_select(q, b).where(func.gate(1) == 1))
    repository = SkillRepository(database)
    failures: list[BaseException] = []

    def read() -> None:
        try:
            repository.query(SkillQuery(text="t"), cancellation=cancellation)
        except LibraryError as error:
            failures.append(error)

    reader = threading.Thread(target=read)
    reader.start()
    assert inside_sqlite.wait(timeout=10)
    cancellation.cancel()
    cancelled.set()
    reader.join(timeout=10)
    assert not reader.is_alive() and "interrupted" in str(failures[0])
    with pytest.raises(LibraryError, match="interrupted"):
        repository.query(SkillQuery(), cancellation=cancellation)  # cancelled before it starts: never runs
    monkeypatch.setattr(repository_module, "build_select", plain_select)
    for _ in range(3):  # every pooled connection reads normally again
        assert repository.query(SkillQuery(text="t")).ids == full_ids(repository, SkillQuery(text="t"))
    database.close()
