"""The browser's fast paths give what the plain queries give: first pages, orders, tag counts.

Each test compares a fast path with the simple query it replaces, on the same synthetic library
(benchmarks/synthetic.py: Zipf-distributed words and tags, NULL figures, repeated names) plus
rows written to tie, and rows an engine wrote badly.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import replace
from itertools import product
from pathlib import Path

import pytest
from sqlalchemy import event, func

from benchmarks.synthetic import COMMON_TAG, generate_skills
from skillstudio.model import Confidence, Domain, ReviewState, SourceKind
from skillstudio.store import Actor, Cancellation, Database, LibraryError, SkillQuery, SkillRepository, SortKey
from skillstudio.store import repository as repository_module
from skillstudio.store.migrations import d057_statements
from skillstudio.store.query import build_select, first_ids
from tests.factories import ai_skill

LIBRARY_SIZE = 600
TIES = 12  # skills that rank, and sort by most columns, exactly alike


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("browsing") / "library.db"
    with Database(path, create=True) as database:
        repository = SkillRepository(database, Actor("test", "system"))
        repository.create_many(generate_skills(LIBRARY_SIZE, seed=17))
        twin = ai_skill(name="Tank rush twin", description="tank tank rush", tags=("twin",))
        # Inserted in descending id order: FTS5 meets them in the opposite order to the full query's.
        repository.create_many([replace(twin, id=f"00000000-0000-4000-8000-{n:012d}") for n in reversed(range(TIES))])
        yield repository


def full_ids(repository: SkillRepository, query: SkillQuery) -> list[str]:
    """The plain path: every id of the full query, in its order."""
    with repository.database.read() as session:
        return list(session.connection().execute(build_select(query)).scalars())


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
]


@pytest.mark.parametrize("query", QUERIES, ids=repr)
def test_a_first_page_is_the_full_orders_beginning(library: SkillRepository, query: SkillQuery) -> None:
    expected = full_ids(library, query)
    with library.database.read() as session:
        connection = session.connection()
        for count, pool in ((1, None), (5, 5), (7, None), (50, 50), (200, None), (LIBRARY_SIZE + 50, None)):
            assert first_ids(connection, query, count, pool=pool) == expected[:count], (count, pool)
    assert library.first_page(query, 200) == expected[:200]


def test_ties_at_a_pages_end_are_ordered_as_the_full_query_orders_them(library: SkillRepository) -> None:
    """The twins rank alike: a pool that ends among them must not decide which come first."""
    query = SkillQuery(text="tank rush twin")
    expected = full_ids(library, query)
    assert expected[:TIES] == sorted(expected[:TIES]) and all(i.startswith("00000000-") for i in expected[:TIES])
    with library.database.read() as session:
        for count in range(1, TIES):
            assert first_ids(session.connection(), query, count, pool=count) == expected[:count]


ORDER_COLUMNS = {
    SortKey.SUCCESS_RATE: "success_rate",
    SortKey.VERIFICATION_COUNT: "verification_count",
    SortKey.AVERAGE_RATING: "average_rating",
    SortKey.USE_COUNT: "use_count",
    SortKey.LAST_VERIFIED: "last_verified",
    SortKey.LAST_USED: "last_used",
}


def test_orders_put_missing_and_odd_figures_where_they_always_were(tmp_path: Path) -> None:
    """The sorts are written for the indexes (NULLS LAST rather than ``x IS NULL``); the order is
    the one the plain SQL gives, NULLs last, ties by name then id, values of another type too."""
    path = tmp_path / "odd.db"
    with Database(path, create=True) as database:
        SkillRepository(database, Actor("test", "system")).create_many(generate_skills(200, seed=5))
    with sqlite3.connect(path) as connection:  # an engine's rows: text in number columns, NULLs
        connection.execute("UPDATE skills SET success_rate = 'n/a', use_count = NULL WHERE rowid % 17 = 0")
        connection.execute("UPDATE skills SET verification_count = NULL, last_used = 3 WHERE rowid % 13 = 0")
        connection.execute("UPDATE skills SET name = 'same' WHERE rowid % 5 = 0")
    with Database(path) as database:
        repository = SkillRepository(database)
        for sort, column in ORDER_COLUMNS.items():
            for descending in (False, True):
                direction = "DESC" if descending else "ASC"
                plain = (
                    f"SELECT id FROM skills ORDER BY {column} IS NULL, {column} {direction}, name COLLATE NOCASE, id"
                )
                with sqlite3.connect(path) as connection:
                    expected = [row[0] for row in connection.execute(plain)]
                query = SkillQuery(sort=sort, descending=descending)
                assert repository.query(query).ids == expected, (sort, descending)
                assert repository.first_page(query, 30) == expected[:30], (sort, descending)


PLAIN_TAG_COUNTS = (
    "SELECT tag.value, COUNT(*) FROM skills, json_each("
    "CASE WHEN json_valid(skills.tags) THEN skills.tags ELSE '[]' END) AS tag "
    "WHERE tag.type = 'text' GROUP BY tag.value ORDER BY tag.value"
)


def plain_tag_counts(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as connection:
        return dict(connection.execute(PLAIN_TAG_COUNTS).fetchall())


def test_tag_counts_follow_every_write_as_counting_every_row_would(tmp_path: Path) -> None:
    path = tmp_path / "tags.db"
    with Database(path, create=True) as database:
        repository = SkillRepository(database, Actor("test", "human"))
        skills = generate_skills(150, seed=3)
        repository.create_many(skills)
        assert repository.facets.tag_counts() == plain_tag_counts(path)
        first, second = repository.get(skills[0].id), repository.get(skills[1].id)
        repository.update(replace(first, tags=(*first.tags, "fresh-tag")))
        repository.update(replace(second, tags=()))
        repository.trash.delete_many([skills[2].id, skills[3].id])
        assert repository.facets.tag_counts() == plain_tag_counts(path)
        repository.trash.restore(skills[2].id)
        assert repository.facets.tag_counts() == plain_tag_counts(path)
    with sqlite3.connect(path) as connection:  # an engine writes: bad JSON, duplicates, objects
        connection.execute("UPDATE skills SET tags = 'not json' WHERE rowid % 7 = 0")
        connection.execute("""UPDATE skills SET tags = '["dup", "dup", 5, "solo"]' WHERE rowid % 11 = 0""")
        connection.execute("""UPDATE skills SET tags = '{"a": "object-tag"}' WHERE rowid % 19 = 0""")
        connection.execute("DELETE FROM skills WHERE rowid % 23 = 0")
    with Database(path) as database:
        assert SkillRepository(database).facets.tag_counts() == plain_tag_counts(path)
        assert "dup" in plain_tag_counts(path) and "fresh-tag" in plain_tag_counts(path)


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
        assert SkillRepository(database).facets.tag_counts() == {"a": 2, "b": 3} == plain_tag_counts(path)


PLAIN_CREATORS = (
    "SELECT DISTINCT COALESCE(m.created_by, 'unknown') FROM skills"
    " LEFT JOIN studio_skill_meta AS m ON m.skill_id = skills.id"
)


def plain_creators(path: Path) -> list[str]:
    with sqlite3.connect(path) as connection:
        return sorted(row[0] for row in connection.execute(PLAIN_CREATORS))


def test_creators_follow_every_write_as_joining_every_skill_would(tmp_path: Path) -> None:
    path = tmp_path / "creators.db"
    skills = generate_skills(120, seed=9)
    with Database(path, create=True) as database:
        repository = SkillRepository(database, Actor("test", "human"))
        repository.create_many(skills)
        assert repository.facets.creators() == plain_creators(path)
        one_each = list({skill.created_by: skill.id for skill in skills}.values())
        repository.trash.delete_many(one_each[:3])  # some creators' only skill, maybe
        assert repository.facets.creators() == plain_creators(path)
        repository.trash.restore(one_each[0])
        assert repository.facets.creators() == plain_creators(path)
    with sqlite3.connect(path) as connection:  # an engine's writes know nothing of our metadata
        connection.execute(
            "INSERT INTO skills (id, domain, name, description, body_json, tags, game_module, source, created_at)"
            " VALUES ('engine-1', 'ai_strategy', 'engine skill', '', '{}', '[]', 'ra1', 'hand_authored', '2025')"
        )
        connection.execute("DELETE FROM skills WHERE rowid % 9 = 0")  # leaves their metadata behind
        connection.execute("UPDATE studio_skill_meta SET created_by = 'renamed' WHERE rowid % 4 = 0")
        connection.execute("UPDATE studio_skill_meta SET skill_id = 'engine-1' WHERE rowid = 2")
        connection.execute("DELETE FROM studio_skill_meta WHERE rowid % 5 = 0")
    with Database(path) as database:
        assert SkillRepository(database).facets.creators() == plain_creators(path)
        assert "unknown" in plain_creators(path)
    with sqlite3.connect(path) as connection:
        counted = dict(connection.execute("SELECT created_by, skills FROM studio_creator_counts"))
        plain = "SELECT COALESCE(m.created_by, 'unknown'), COUNT(*) FROM skills LEFT JOIN studio_skill_meta AS m"
        assert counted == dict(connection.execute(plain + " ON m.skill_id = skills.id GROUP BY 1"))


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
    monkeypatch.setattr(repository_module, "build_select", lambda q: plain_select(q).where(func.gate(1) == 1))
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
