"""The bulk write paths (issue 17) write exactly what the simple paths write.

``create_many`` inserts with one executemany per table and serialises each skill once;
``update_many`` updates distinct skills with a few statements per 500. Each is compared, row by
row, with the simple path on the same synthetic skills: per-row ORM inserts with a revision
number looked up per skill, and ``update_one`` called skill by skill. Revision snapshots are
compared decoded; times (``at``, ``created_at`` of revisions) are left out, as two runs differ.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Sequence
from contextlib import closing
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, select

from benchmarks.synthetic import COMMON_TAG, COMMON_TERM, PREFIX_QUERY, generate_skills
from skillstudio.curation.edits import revert_to_revision
from skillstudio.model import ReviewState, Skill, skill_to_document
from skillstudio.model.diff import unified_diff
from skillstudio.model.document import serde_body_to_json
from skillstudio.model.evidence import EvidenceKind, VerificationRecord
from skillstudio.store import (
    Actor,
    ConflictError,
    Database,
    InvalidSkillData,
    LibraryError,
    SkillQuery,
    SkillRepository,
    SortKey,
    migrations,
    snapshots,
)
from skillstudio.store.backends import is_server_url
from skillstudio.store.backends import sqlite as sqlite_backend
from skillstudio.store.events import AuditAction
from skillstudio.store.evidence import verification_columns
from skillstudio.store.orm import SkillCompositionRow, SkillMetaRow, SkillRow, SkillVersionRow, VerificationRow
from skillstudio.store.skill_rows import meta_columns, skill_columns
from skillstudio.store.skill_writes import update_one
from skillstudio.store.snapshots import decode_snapshot, encode_snapshot, encode_snapshots
from skillstudio.store.unit_of_work import unit_of_work
from tests.factories import ai_skill
from tests.outside import engine_writes

ACTOR = Actor("ana", "human")
SKILLS = 240


@pytest.fixture(scope="module")
def synthetic() -> list[Skill]:
    return generate_skills(SKILLS, seed=57)


def with_evidence(skills: Sequence[Skill]) -> list[tuple[Skill, Sequence[VerificationRecord]]]:
    """Every seventh skill brings a verification record, as an import's would."""
    record = VerificationRecord("2026-01-02T03:04:05.000Z", EvidenceKind.HEADLESS, 3, 1, opponent="IC Default Hard")
    return [(skill, (record,) if index % 7 == 0 else ()) for index, skill in enumerate(skills)]


def create_one_by_one(repository: SkillRepository, pairs: Sequence[tuple[Skill, Sequence[VerificationRecord]]]) -> None:
    """The simple path: ORM objects row by row, each revision numbered by asking the library."""
    with unit_of_work(repository.database, repository.actor, AuditAction.CREATE) as work:
        session = work.session
        work.touch(skill.id for skill, _ in pairs)
        for skill, _ in pairs:
            session.add(SkillRow(**skill_columns(skill)))
            session.flush()
        for skill, _ in pairs:
            session.add(SkillMetaRow(**meta_columns(skill)))
        seen: set[frozenset[str]] = set()
        for skill, _ in pairs:
            for partner in skill.composable_with:
                if frozenset((skill.id, partner)) not in seen:
                    seen.add(frozenset((skill.id, partner)))
                    session.add(SkillCompositionRow(skill_a=skill.id, skill_b=partner, success_count=0))
        for skill, records in pairs:
            session.add_all(VerificationRow(**verification_columns(skill, record)) for record in records)
        session.flush()
        for skill, _ in pairs:
            stored = replace(skill, version=session.get(SkillVersionRow, skill.id).version)
            number = work.revision(stored, "create", "bulk")
            work.audit(work.action, skill.id, number, {"name": skill.name})


def update_one_by_one(repository: SkillRepository, skills: Sequence[Skill], message: str) -> list[Skill]:
    with unit_of_work(repository.database, repository.actor, AuditAction.UPDATE) as work:
        work.touch(skill.id for skill in skills)
        return [update_one(work, skill, message) for skill in skills]


def library_rows(path: Path | str) -> dict[str, Any]:
    """Everything a write leaves in the library, times left out, snapshots decoded (in SQLite,
    skills in the order they were inserted; a server's rows have no such order)."""
    sqlite = not is_server_url(str(path))
    with engine_writes(path) as connection:
        skills = "SELECT rowid, * FROM skills ORDER BY rowid" if sqlite else "SELECT * FROM skills ORDER BY id"
        rows = {
            "skills": connection.execute(skills).all(),
            "meta": connection.execute("SELECT * FROM studio_skill_meta ORDER BY skill_id").all(),
            "versions": connection.execute("SELECT * FROM studio_skill_versions ORDER BY skill_id").all(),
            "compositions": connection.execute("SELECT * FROM skill_compositions ORDER BY 1, 2").all(),
            "verifications": connection.execute(
                "SELECT skill_id, recorded_at, kind, opponent, wins, losses, body_hash FROM studio_verifications"
                " ORDER BY id"
            ).all(),
            "revisions": [
                (*row[:-1], decode_snapshot(row[-1]))
                for row in connection.execute(
                    "SELECT id, skill_id, number, version, action, author, message, snapshot"
                    " FROM studio_revisions ORDER BY id"
                )
            ],
            "audit": [
                (*row[:-1], json.loads(row[-1]))
                for row in connection.execute(
                    "SELECT id, actor, actor_kind, action, skill_id, revision, details FROM studio_audit_log ORDER BY id"
                )
            ],
            "retrieval_changes": sorted(connection.execute("SELECT skill_id FROM studio_retrieval_changes")),
            "embedding_meta": connection.execute("SELECT * FROM studio_embedding_meta ORDER BY 1").all(),
        }
        if sqlite:
            rows["tag_counts"] = connection.execute("SELECT * FROM studio_tag_counts ORDER BY tag").all()
            rows["creator_counts"] = connection.execute("SELECT * FROM studio_creator_counts ORDER BY 1").all()
            for index in ("skills_fts", "studio_search_fts"):  # each index = its rows
                connection.execute(f"INSERT INTO {index}({index}) VALUES ('integrity-check')")
    return rows


def searches(repository: SkillRepository, words: Sequence[str]) -> dict[str, list[str]]:
    return {text: repository.query(SkillQuery(text=text)).ids for text in words}


def test_create_many_writes_what_the_row_by_row_path_writes(
    more_libraries, synthetic: list[Skill], monkeypatch
) -> None:
    monkeypatch.setattr(snapshots, "PARALLEL_FROM", 8)  # the bulk path compresses its snapshots on threads
    monkeypatch.setattr(sqlite_backend, "STAGE_CHUNK", 64)  # and stages its skills 64 at a time (SQLite)
    pairs = with_evidence(synthetic)
    assert sum(bool(skill.composable_with) for skill in synthetic) > 5  # compositions are exercised
    words = [COMMON_TERM, PREFIX_QUERY, COMMON_TAG, synthetic[5].name.split()[0], "zzzz"]
    with Database(more_libraries("bulk")) as bulk, Database(more_libraries("simple")) as simple:
        SkillRepository(bulk, ACTOR).create_many(pairs[:100], message="bulk")
        SkillRepository(bulk, ACTOR).create_many(pairs[100:], message="bulk")
        create_one_by_one(SkillRepository(simple, ACTOR), pairs[:100])
        create_one_by_one(SkillRepository(simple, ACTOR), pairs[100:])
        assert library_rows(bulk.location) == library_rows(simple.location)
        found = searches(SkillRepository(bulk, ACTOR), words)
        assert found == searches(SkillRepository(simple, ACTOR), words)
        assert all(found[word] for word in words[:4])
        read_back = SkillRepository(bulk, ACTOR).get_many([s.id for s in synthetic])
        # (partners read back both ways: a later skill's pair shows on the earlier one too)
        assert [replace(skill, composable_with=()) for skill in read_back] == [
            replace(skill, version=1, composable_with=()) for skill in synthetic
        ]


def schema_statements(path: Path) -> dict[str, str]:
    """The library's indexes and triggers, by name."""
    with closing(sqlite3.connect(path)) as connection:
        return dict(
            connection.execute(
                "SELECT name, sql FROM sqlite_schema WHERE type IN ('index', 'trigger') AND sql IS NOT NULL"
            )
        )


def ranked_matches(path: Path, index: str, words: Sequence[str]) -> dict[str, list[tuple[int, float]]]:
    """Each word's matches in the FTS5 ``index`` with their bm25."""
    with closing(sqlite3.connect(path)) as connection:
        return {
            word: connection.execute(
                f"SELECT rowid, bm25({index}) FROM {index} WHERE {index} MATCH ? ORDER BY rowid", (word,)
            ).fetchall()
            for word in words
        }


def schema_version(path: Path) -> int:
    with closing(sqlite3.connect(path)) as connection:
        return int(connection.execute("PRAGMA schema_version").fetchone()[0])


# The page cache CONNECTION_PRAGMAS give every connection (in KiB when negative, as SQLite reports it).
CONNECTION_CACHE_SIZE = next(
    int(pragma.split("=")[1]) for pragma in sqlite_backend.CONNECTION_PRAGMAS if "cache_size" in pragma
)


def cache_sizes_while_rebuilding(monkeypatch) -> list[tuple[sqlite3.Connection, int]]:
    """(driver connection, its cache_size) each time a write rebuilds the FTS5 indexes and counts."""
    seen: list[tuple[sqlite3.Connection, int]] = []
    real_rebuild = sqlite_backend.migrations.rebuild_derived

    def rebuild(connection, *args, **kwargs):
        raw = connection.connection.driver_connection
        seen.append((raw, raw.execute("PRAGMA cache_size").fetchone()[0]))
        return real_rebuild(connection, *args, **kwargs)

    monkeypatch.setattr(sqlite_backend.migrations, "rebuild_derived", rebuild)
    return seen


def test_a_large_insert_into_a_small_library_builds_its_indexes_again_to_the_same_library(
    tmp_path: Path, synthetic: list[Skill], monkeypatch
) -> None:
    """A write adding many skills to a library of few drops our indexes on skills and builds
    them again after its insert (SqliteBackend.inserting_skills): the library it leaves, and
    every order read from it, are those of the same writes inserting into each index."""
    pairs = with_evidence(synthetic)  # 240 skills: 40, then 200 (at most REBUILD_RATIO x 40 already there)
    monkeypatch.setattr(sqlite_backend, "REBUILD_MIN_SKILLS", 100)
    monkeypatch.setattr(sqlite_backend, "REBUILD_CACHE_KIB_PER_SKILL", 100)  # 240 skills: 24,000 KiB
    caches = cache_sizes_while_rebuilding(monkeypatch)
    unstaged: list[str] = []  # tables rows reached by one executemany, in the SQLite backend
    real_insert_rows = sqlite_backend.insert_rows
    monkeypatch.setattr(
        sqlite_backend,
        "insert_rows",
        lambda connection, table, rows: (
            unstaged.append(table.__tablename__) or real_insert_rows(connection, table, rows)
        ),
    )
    rebuilt, inserted = tmp_path / "rebuilt.db", tmp_path / "inserted.db"
    for path, rebuilds in ((rebuilt, True), (inserted, False)):
        with Database(path, create=True) as database:
            SkillRepository(database, ACTOR).create_many(pairs[:40], message="first")  # below the minimum
            before = schema_version(path)
            if not rebuilds:
                monkeypatch.setattr(sqlite_backend, "REBUILD_MIN_SKILLS", 10_000)
            SkillRepository(database, ACTOR).create_many(pairs[40:], message="most")
            # Only dropping and making indexes moves the schema's version: the path taken.
            assert (schema_version(path) != before) is rebuilds
            # With the FTS5 triggers dropped, the skills went in by one executemany; else staged.
            assert unstaged.count("skills") == (1 if rebuilds else 0)
            unstaged.clear()
            if rebuilds:  # it read its rows through a larger cache, and gave the connection back with its own
                [(raw, during)] = caches
                assert during == -24_000
                assert raw.execute("PRAGMA cache_size").fetchone()[0] == CONNECTION_CACHE_SIZE
    assert len(caches) == 1
    assert schema_statements(rebuilt) == schema_statements(inserted)
    assert sum(name.startswith("studio_order_") for name in schema_statements(rebuilt)) >= 12
    assert set(migrations.DERIVED_INSERT_TRIGGERS) <= set(schema_statements(rebuilt))
    # FTS5 strings and prefixes: a tag holds ':' (a column filter, unquoted)
    words = [f'"{COMMON_TERM}"', f'"{PREFIX_QUERY}"*', f'"{COMMON_TAG}"', f'"{synthetic[7].name.split()[0]}"', '"t"*']
    for index in ("skills_fts", "studio_search_fts"):
        found = ranked_matches(rebuilt, index, words)
        assert found == ranked_matches(inserted, index, words), index
        assert all(found[word] for word in words)
    with closing(sqlite3.connect(rebuilt)) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]  # each index = its rows
    assert library_rows(rebuilt) == library_rows(inserted)
    with Database(rebuilt) as one, Database(inserted) as other:
        for key in SortKey:
            for descending in (False, True):
                query = SkillQuery(sort=key, descending=descending)
                ids = SkillRepository(one, ACTOR).query(query).ids
                assert ids == SkillRepository(other, ACTOR).query(query).ids, (key, descending)
                assert len(ids) == len(synthetic)


def test_a_large_insert_into_a_larger_library_inserts_into_its_indexes(
    tmp_path: Path, synthetic: list[Skill], monkeypatch
) -> None:
    monkeypatch.setattr(sqlite_backend, "REBUILD_MIN_SKILLS", 50)
    path = tmp_path / "library.db"
    with Database(path, create=True) as database:
        SkillRepository(database, ACTOR).create_many(synthetic[:120])
        before = schema_version(path)
        SkillRepository(database, ACTOR).create_many(synthetic[120:179])  # 59 new: 120 > 2 x 59
        assert schema_version(path) == before
        SkillRepository(database, ACTOR).create_many(synthetic[179:])  # 61 new, 179 there: 179 > 122
        assert schema_version(path) == before


def library_refusing_poison(path: Path, skills: Sequence[Skill]) -> Path:
    """A library of ``skills`` whose file brings a trigger refusing any skill named 'poison'
    ("poisoned row"): a write that fails inside SQLite, after our statements began."""
    with Database(path, create=True) as database:
        SkillRepository(database, ACTOR).create_many(skills)
    with closing(sqlite3.connect(path)) as connection:
        connection.execute(
            "CREATE TRIGGER refuse_poison BEFORE INSERT ON skills WHEN new.name = 'poison'"
            " BEGIN SELECT RAISE(ABORT, 'poisoned row'); END"
        )
        connection.commit()
    return path


def test_a_large_insert_that_fails_leaves_the_library_and_its_indexes_as_they_were(
    tmp_path: Path, synthetic: list[Skill], monkeypatch
) -> None:
    """The insert fails after the indexes were dropped (a trigger the file brings refuses one
    row): the drop is rolled back with the rest."""
    monkeypatch.setattr(sqlite_backend, "REBUILD_MIN_SKILLS", 100)
    dropped: list[list[tuple[str, str, str]]] = []  # (type, name, statement)
    choose = sqlite_backend._schema_to_rebuild

    def chosen(*args):
        schema, existing = choose(*args)
        dropped.append(schema)
        return schema, existing

    monkeypatch.setattr(sqlite_backend, "_schema_to_rebuild", chosen)
    path = library_refusing_poison(tmp_path / "library.db", synthetic[:40])
    rows, indexes = library_rows(path), schema_statements(path)
    poisoned = [*synthetic[40:239], replace(synthetic[239], name="poison")]
    monkeypatch.setattr(sqlite_backend, "REBUILD_CACHE_KIB_PER_SKILL", 100)  # above the connection's cache
    raws: list[sqlite3.Connection] = []
    real_cache = sqlite_backend._larger_cache
    monkeypatch.setattr(
        sqlite_backend,
        "_larger_cache",
        lambda connection, kib: raws.append(connection.connection.driver_connection) or real_cache(connection, kib),
    )
    with Database(path) as database:
        with pytest.raises(LibraryError, match="poisoned row"):
            SkillRepository(database, ACTOR).create_many(poisoned)
        # a failed write, too, gives its connection back with the cache it had
        [raw] = raws
        assert raw.execute("PRAGMA cache_size").fetchone()[0] == CONNECTION_CACHE_SIZE
    # the write had dropped them when the row was refused
    assert sum(kind == "index" for kind, _, _ in dropped[-1]) >= 12
    assert {name for kind, name, _ in dropped[-1] if kind == "trigger"} == set(migrations.DERIVED_INSERT_TRIGGERS)
    assert schema_statements(path) == indexes
    assert library_rows(path) == rows
    with closing(sqlite3.connect(path)) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


def test_a_staged_insert_that_fails_leaves_the_library_as_it_was_and_the_next_one_works(
    tmp_path: Path, synthetic: list[Skill], monkeypatch
) -> None:
    """Many rows reach skills through a temporary table and one INSERT ... SELECT
    (SqliteBackend.insert_skill_rows), every trigger firing (no rebuild here): a row refused
    there refuses the whole write, and the same connection stages the next write."""
    monkeypatch.setattr(sqlite_backend, "REBUILD_MIN_SKILLS", 10_000)
    monkeypatch.setattr(sqlite_backend, "STAGE_CHUNK", 64)  # the refused row is in the second part
    staged: list[int] = []
    real_insert = sqlite_backend.SqliteBackend.insert_skill_rows
    monkeypatch.setattr(
        sqlite_backend.SqliteBackend,
        "insert_skill_rows",
        lambda backend, connection, rows: staged.append(len(rows)) or real_insert(backend, connection, rows),
    )
    path = library_refusing_poison(tmp_path / "library.db", synthetic[:100])
    rows = library_rows(path)
    poisoned = [*synthetic[100:199], replace(synthetic[199], name="poison")]
    assert len(poisoned) >= sqlite_backend.STAGE_FROM
    with Database(path) as database:
        repository = SkillRepository(database, ACTOR)
        with pytest.raises(LibraryError, match="poisoned row"):
            repository.create_many(poisoned)
        assert library_rows(path) == rows
        repository.create_many(synthetic[100:])
        assert len(repository.query(SkillQuery()).ids) == len(synthetic)
        assert repository.query(SkillQuery(text=synthetic[150].name)).ids[:1] == [synthetic[150].id]
    assert staged == [100, 100, 140]
    with closing(sqlite3.connect(path)) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    library_rows(path)  # both FTS5 indexes pass their integrity-check


def test_staged_rows_are_read_by_column_name_whatever_order_each_lists_them(
    tmp_path: Path, synthetic: list[Skill]
) -> None:
    """The staged insert and update take each row's values by name, as the executemany they
    replace does: a row whose keys come in another order still fills the right columns."""

    def every_other_reversed(rows: list[dict[str, object]]) -> list[dict[str, object]]:
        return [dict(reversed(list(row.items()))) if index % 2 else row for index, row in enumerate(rows)]

    rows = [skill_columns(skill) for skill in synthetic[:80]]
    shuffled = every_other_reversed(rows)
    assert len(shuffled) >= sqlite_backend.STAGE_FROM
    with Database(tmp_path / "library.db", create=True) as database:
        with database.write() as session:
            database.backend.insert_skill_rows(session.connection(), shuffled)
        renamed = every_other_reversed([{"id": row["id"], "name": f"{row['name']} v2"} for row in rows])
        with database.write() as session:
            database.backend.update_skill_rows(session.connection(), renamed)
        with database.read() as session:
            stored = {row.id: row for row in session.execute(select(SkillRow.__table__))}
    assert len(stored) == len(rows)
    for row in rows:
        assert {**row, "name": f"{row['name']} v2"} == {name: getattr(stored[row["id"]], name) for name in row}


def test_while_a_large_insert_has_dropped_the_indexes_readers_still_see_them(
    tmp_path: Path, synthetic: list[Skill], monkeypatch
) -> None:
    """The drop is part of the write's transaction: another connection, meanwhile, reads the
    library as it was, its indexes and triggers included, and its sorted reads go along them."""
    import threading

    monkeypatch.setattr(sqlite_backend, "REBUILD_MIN_SKILLS", 100)
    path = tmp_path / "library.db"
    with Database(path, create=True) as database:
        SkillRepository(database, ACTOR).create_many(synthetic[:40])
    indexes, before = schema_statements(path), schema_version(path)
    inside, go_on = threading.Event(), threading.Event()
    real_insert = sqlite_backend.SqliteBackend.insert_skill_rows

    def insert_then_wait(backend, connection, rows):  # type: ignore[no-untyped-def]
        real_insert(backend, connection, rows)
        inside.set()  # the indexes are dropped and the rows in, not yet committed
        assert go_on.wait(10)

    monkeypatch.setattr(sqlite_backend.SqliteBackend, "insert_skill_rows", insert_then_wait)
    failed: list[BaseException] = []

    def write() -> None:
        try:
            with Database(path) as database:
                SkillRepository(database, ACTOR).create_many(synthetic[40:])
        except BaseException as error:  # reported below, on the test's thread
            failed.append(error)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert inside.wait(10)
        with closing(sqlite3.connect(path)) as reader:
            seen = {row[0] for row in reader.execute("SELECT name FROM sqlite_schema WHERE sql IS NOT NULL")}
            assert set(indexes) <= seen  # the reader's snapshot still has every index and trigger
            plan = " ".join(
                str(row)
                for row in reader.execute(
                    "EXPLAIN QUERY PLAN SELECT id FROM skills ORDER BY name COLLATE NOCASE, id LIMIT 5"
                )
            )
            assert "studio_order_name" in plan
            assert reader.execute("SELECT COUNT(*) FROM skills").fetchone()[0] == 40
    finally:
        go_on.set()
        writer.join(20)
    assert not failed
    assert schema_version(path) != before  # the write did drop and make them again
    assert schema_statements(path) == indexes
    with closing(sqlite3.connect(path)) as connection:
        assert connection.execute("SELECT COUNT(*) FROM skills").fetchone()[0] == len(synthetic)


def test_snapshots_encoded_together_are_the_bytes_each_encodes_alone(synthetic: list[Skill]) -> None:
    """A bulk write compresses its snapshots on threads (past snapshots.PARALLEL_FROM): the same
    bytes, in the same order, as one at a time."""
    documents = [skill_to_document(skill) for skill in synthetic] * 3
    assert len(documents) > snapshots.PARALLEL_FROM
    for count in (0, 1, snapshots.PARALLEL_FROM - 1, len(documents)):
        assert encode_snapshots(documents[:count]) == [encode_snapshot(d) for d in documents[:count]]
        ran: list[int] = []
        together = encode_snapshots(documents[:count], meanwhile=partial(ran.append, count))
        assert together == [encode_snapshot(d) for d in documents[:count]]
        assert ran == [count]  # what runs meanwhile runs once, either way


def test_a_snapshot_given_its_body_json_is_the_snapshot_made_without_it(synthetic: list[Skill]) -> None:
    """A bulk write hands each snapshot the body text it made for the row (body_json) instead of
    serialising the body again: the same bytes, and the document decodes back whole."""
    documents = [skill_to_document(skill) for skill in synthetic]
    bodies = [serde_body_to_json(document["body"]) for document in documents]
    for document, body in zip(documents, bodies, strict=True):
        assert encode_snapshot(document, body_json=body) == encode_snapshot(document)
        assert decode_snapshot(encode_snapshot(document, body_json=body)) == document
    assert encode_snapshots(documents, body_jsons=bodies) == [encode_snapshot(d) for d in documents]
    mixed = [None if index % 3 else body for index, body in enumerate(bodies)]  # a history's older versions
    assert encode_snapshots(documents, body_jsons=mixed) == [encode_snapshot(d) for d in documents]
    # The text given is what is stored: a caller must give the body's own.
    assert decode_snapshot(encode_snapshot(documents[0], body_json='{"x":1}'))["body"] == {"x": 1}


def test_snapshots_of_documents_without_a_body_or_with_only_one(synthetic: list[Skill]) -> None:
    """A raw row's snapshot (no skill body), a body that is not an object, and a document that
    is only a body all decode to what was encoded."""
    body = skill_to_document(synthetic[0])["body"]
    for document in (
        {"row": {"id": "x", "body_json": "{not json"}, "issues": ["body_json: not JSON"]},
        {"row": {"id": "x"}, "body": "[1, 2]"},
        {"body": body},
        {},
    ):
        assert decode_snapshot(encode_snapshot(document)) == document


def test_what_runs_while_snapshots_compress_may_fail(synthetic: list[Skill]) -> None:
    """A failure of the work done meanwhile (the index builds after a large insert) reaches the
    writer, which rolls back; the compressing threads are waited for, not left behind."""
    import threading

    documents = [skill_to_document(skill) for skill in synthetic] * 3
    before = threading.active_count()

    def fail() -> None:
        raise sqlite3.OperationalError("disk I/O error")

    for count in (1, len(documents)):
        with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
            encode_snapshots(documents[:count], meanwhile=fail)
        assert threading.active_count() == before


def twin_libraries(tmp_path: Path, skills: Sequence[Skill]) -> tuple[Path, Path]:
    """Two identical libraries, with what update_many must handle besides plain rows: a change
    an engine made outside SkillStudio, a skill without revisions, one without metadata, and a
    composition that was played (success_count 4)."""
    first = tmp_path / "batched.db"
    with Database(first, create=True) as database:
        SkillRepository(database, ACTOR).create_many(skills, message="setup")
    with closing(sqlite3.connect(first)) as connection, connection:  # closed: the WAL is checkpointed
        connection.execute("UPDATE skills SET name = name || ' (engine)' WHERE id = ?", (skills[1].id,))
        connection.execute("DELETE FROM studio_revisions WHERE skill_id = ?", (skills[2].id,))
        connection.execute("DELETE FROM studio_skill_meta WHERE skill_id = ?", (skills[3].id,))
        connection.execute("UPDATE skill_compositions SET success_count = 4")
    second = tmp_path / "one-by-one.db"
    shutil.copy(first, second)
    return first, second


def edits(stored: list[Skill]) -> tuple[list[Skill], tuple[str, str]]:
    """A retag of every skill, plus edits whose compositions interact inside the batch; and the
    played pair that is dropped and added again (as the pair the later skill adds)."""
    out = [replace(skill, tags=(*skill.tags, "bulk-retag")) for skill in stored]
    index = {skill.id: position for position, skill in enumerate(stored)}
    # A played pair of two later skills: the earlier one's turn drops it, the later one's adds it again.
    first, partner = next(
        (i, index[p]) for i, skill in enumerate(stored) for p in skill.composable_with if 9 < index[p] < i
    )
    out[partner] = replace(
        out[partner], composable_with=tuple(p for p in out[partner].composable_with if p != stored[first].id)
    )
    second = next(i for i, skill in enumerate(stored) if skill.composable_with and i > 9 and i not in (first, partner))
    out[second] = replace(out[second], composable_with=())  # drops played pairs
    out[4] = replace(out[4], composable_with=(stored[5].id, stored[6].id), description="now with partners")
    out[5] = replace(out[5], composable_with=())  # drops the pair skill 4 just added
    out[6] = replace(out[6], composable_with=(stored[4].id,))  # the pair exists already (4, 6)
    out[7] = replace(out[7], composable_with=(stored[8].id, stored[9].id))
    return out, (stored[first].id, stored[partner].id)


@pytest.mark.parametrize("chunk", [5000, 50])
def test_update_many_writes_what_updating_one_by_one_writes(
    tmp_path: Path, synthetic: list[Skill], monkeypatch, chunk: int
) -> None:
    monkeypatch.setattr(sqlite_backend, "STAGE_CHUNK", chunk)  # the staged update, whole or in parts
    skills = synthetic[:120]
    batched_path, simple_path = twin_libraries(tmp_path, skills)
    with Database(batched_path) as batched, Database(simple_path) as simple:
        batched_repository, simple_repository = SkillRepository(batched, ACTOR), SkillRepository(simple, ACTOR)
        stored = batched_repository.get_many([skill.id for skill in skills])
        assert stored == simple_repository.get_many([skill.id for skill in skills])
        changed, readded = edits(stored)
        result = batched_repository.update_many(changed, message="tags +bulk-retag")
        assert result == update_one_by_one(simple_repository, changed, "tags +bulk-retag")
        rows = library_rows(batched_path)
        assert rows == library_rows(simple_path)
        actions = {(row[1], row[4]) for row in rows["revisions"]}
        assert {(skills[1].id, "external"), (skills[2].id, "baseline")} <= actions
        assert {row[2] for row in rows["compositions"]} == {0, 4}  # played pairs kept, new ones at 0
        assert (*readded, 0) in rows["compositions"]
        assert (
            result[5].composable_with == () and stored[5].id not in batched_repository.get(stored[4].id).composable_with
        )
        words = ["bulk", "now with partners", COMMON_TERM]
        assert searches(batched_repository, words) == searches(simple_repository, words)


@pytest.mark.parametrize("first_problem", ["conflict", "unknown partner"])
def test_update_many_refuses_as_one_by_one_does_and_writes_nothing(
    tmp_path: Path, synthetic: list[Skill], first_problem: str
) -> None:
    batched_path, simple_path = twin_libraries(tmp_path, synthetic[:20])
    with Database(batched_path) as batched, Database(simple_path) as simple:
        stored = SkillRepository(batched, ACTOR).get_many([skill.id for skill in synthetic[:20]])
        stale = replace(stored[3], version=stored[3].version - 1, name="stale")
        unknown = replace(stored[9], composable_with=("no-such-skill",))
        changed = [stale, unknown] if first_problem == "conflict" else [unknown, stale]
        before = library_rows(batched_path)
        errors = []
        for repository, update in (
            (SkillRepository(batched, ACTOR), lambda r, s: r.update_many(s)),
            (SkillRepository(simple, ACTOR), lambda r, s: update_one_by_one(r, s, "")),
        ):
            with pytest.raises((ConflictError, InvalidSkillData)) as raised:
                update(repository, [*stored[:3], *changed])
            errors.append((type(raised.value), str(raised.value)))
        assert errors[0] == errors[1]
        assert errors[0][0] is (ConflictError if first_problem == "conflict" else InvalidSkillData)
        assert library_rows(batched_path) == before


def test_update_many_with_one_skill_twice_checks_the_second_against_the_first(repository: SkillRepository) -> None:
    stored = repository.create(ai_skill())
    with pytest.raises(ConflictError):
        repository.update_many([replace(stored, name="one"), replace(stored, name="two")])
    assert repository.get(stored.id).name == stored.name


# --- migration 14: revisions written as JSON text before it -------------------------------------


def to_text_snapshots(path: Path) -> None:
    """Put the library back in the format before migration 14, as that SkillStudio wrote it:
    the JSON text of each snapshot (key-sorted, as its revision writer did) in a TEXT column."""
    with closing(sqlite3.connect(path)) as connection, connection:
        rows = connection.execute(
            "SELECT id, skill_id, number, version, action, author, created_at, message, snapshot FROM studio_revisions"
        ).fetchall()
        connection.execute("DROP TABLE studio_revisions")
        connection.execute(
            "CREATE TABLE studio_revisions (id INTEGER PRIMARY KEY, skill_id TEXT NOT NULL, number INTEGER NOT NULL,"
            " version INTEGER NOT NULL, action TEXT NOT NULL, author TEXT NOT NULL, created_at TEXT NOT NULL,"
            " message TEXT NOT NULL DEFAULT '', snapshot TEXT NOT NULL, UNIQUE (skill_id, number))"
        )
        connection.executemany(
            "INSERT INTO studio_revisions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(*row[:-1], json.dumps(decode_snapshot(row[-1]), ensure_ascii=False, sort_keys=True)) for row in rows],
        )
        connection.execute("DELETE FROM studio_schema_migrations WHERE version >= 14")  # as before migration 14


def history_answers(repository: SkillRepository, ids: Sequence[str]) -> dict[str, Any]:
    answers: dict[str, Any] = {}
    for skill_id in ids:
        revisions = repository.history.revisions(skill_id)
        approved = repository.reviews.last_approved_revision(skill_id)
        answers[skill_id] = {
            "revisions": revisions,
            "approved": None if approved is None else approved.number,
            "diff": unified_diff(revisions[0].skill(), revisions[-1].skill()),
        }
    return answers


def test_migration_14_keeps_history_diff_and_revert_of_a_library_with_text_snapshots(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with Database(path, create=True) as database:
        repository = SkillRepository(database, ACTOR)
        first, second = ai_skill(name="Rockets early"), ai_skill(name="Mines late")
        repository.create_many([first, second])
        edited = repository.update(replace(repository.get(first.id), description="Rockets, then mines — ünïcode"))
        repository.reviews.review(first.id, ReviewState.APPROVED, version=edited.version)
        repository.update(replace(repository.get(first.id), name="Rockets early, revised"))
        repository.trash.delete(second.id)
        repository.trash.restore(second.id)
    copy = tmp_path / "reference.db"
    shutil.copy(path, copy)
    ids = [first.id, second.id]
    with Database(copy) as database:
        reference = SkillRepository(database, ACTOR)
        expected = history_answers(reference, ids)
        reverted = revert_to_revision(reference, first.id, 2)
        expected_revert = reference.history.revisions(first.id)[-1]
    assert expected[first.id]["approved"] == 4 and len(expected[first.id]["revisions"]) == 4

    to_text_snapshots(path)
    with sqlite3.connect(path) as connection:
        assert {row[0] for row in connection.execute("SELECT typeof(snapshot) FROM studio_revisions")} == {"text"}
        ids_before = connection.execute("SELECT id, skill_id, number FROM studio_revisions ORDER BY id").fetchall()
    with Database(path) as database:  # opening migrates
        repository = SkillRepository(database, ACTOR)
        assert history_answers(repository, ids) == expected
        assert revert_to_revision(repository, first.id, 2) == reverted
        revision = repository.history.revisions(first.id)[-1]
        assert replace(revision, created_at="") == replace(expected_revert, created_at="")
    with sqlite3.connect(path) as connection:
        assert {row[0] for row in connection.execute("SELECT typeof(snapshot) FROM studio_revisions")} == {"blob"}
        assert (
            connection.execute("SELECT id, skill_id, number FROM studio_revisions ORDER BY id").fetchall()[
                : len(ids_before)
            ]
            == ids_before
        )
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "studio_revisions_text" not in tables


def test_an_update_writes_the_columns_that_change_and_still_moves_every_version(
    library_target: str, synthetic: list[Skill], monkeypatch
) -> None:
    """Content updates set only the columns some skill of the batch changes (changed_columns):
    a retag sets the tags alone, and logs no retrieval change. Every skill's version still
    moves, an edit that changes nothing included (it sets every column)."""
    from skillstudio.store import skill_writes

    with Database(library_target) as database:
        repository = SkillRepository(database, ACTOR)
        repository.create_many(synthetic[:100])
        stored = repository.get_many([skill.id for skill in synthetic[:100]])
        logged = len(library_rows(library_target)["retrieval_changes"])
        asked: list[Sequence[str]] = []
        real = skill_writes.changed_columns
        monkeypatch.setattr(skill_writes, "changed_columns", lambda *args: asked.append(real(*args)) or asked[-1])
        retagged = repository.update_many([replace(s, tags=(*s.tags, "bulk-retag")) for s in stored])
        assert asked[-1] == ["tags"]
        assert [s.version for s in retagged] == [s.version + 1 for s in stored]
        assert len(library_rows(library_target)["retrieval_changes"]) == logged  # no filter moved
        module = "td" if retagged[0].game_module != "td" else "ra1"
        first = replace(retagged[0], provenance=replace(retagged[0].provenance, game_module=module))
        moved = repository.update_many([first, *retagged[1:]])
        assert asked[-1] == ["game_module"]
        assert [s.version for s in moved] == [s.version + 1 for s in retagged]
        assert len(library_rows(library_target)["retrieval_changes"]) == logged + 100  # each row set it
        same = repository.update(moved[5])
        assert asked[-1] == list(migrations.CONTENT_COLUMNS) and same.version == moved[5].version + 1
        assert repository.get(moved[0].id).game_module == module
        assert "bulk-retag" in repository.get(moved[99].id).tags


def test_updating_the_changed_columns_leaves_what_updating_every_column_leaves(
    tmp_path: Path, synthetic: list[Skill], monkeypatch
) -> None:
    """The same edits, once setting only the changed columns and once every content column,
    leave the same library, but for the retrieval change log's entries for a domain or module
    that stayed (fewer)."""
    from skillstudio.store import skill_writes

    skills = synthetic[:120]
    changed_path, every_path = twin_libraries(tmp_path, skills)
    with Database(every_path) as every:
        monkeypatch.setattr(skill_writes, "changed_columns", lambda session, rows, columns: list(columns))
        stored = SkillRepository(every, ACTOR).get_many([skill.id for skill in skills])
        SkillRepository(every, ACTOR).update_many(edits(stored)[0], message="m")
        SkillRepository(every, ACTOR).update(replace(stored[3], version=stored[3].version + 1, name="renamed"))
    monkeypatch.undo()
    with Database(changed_path) as changed:
        SkillRepository(changed, ACTOR).update_many(edits(stored)[0], message="m")
        SkillRepository(changed, ACTOR).update(replace(stored[3], version=stored[3].version + 1, name="renamed"))
    one, other = library_rows(changed_path), library_rows(every_path)
    assert len(one.pop("retrieval_changes")) < len(other.pop("retrieval_changes"))
    assert one == other


def test_the_rebuild_cache_counts_a_cache_in_pages_by_the_files_own_page_size(tmp_path: Path) -> None:
    """A positive cache_size is pages: 20,000 pages of 1 KiB hold less than 30,000 KiB (it was
    read as 4 KiB pages, 80,000 KiB, and the cache not raised). The size comes back after."""
    path = tmp_path / "small-pages.db"
    with closing(sqlite3.connect(path)) as plain:
        plain.execute("PRAGMA page_size = 1024")
        plain.execute("CREATE TABLE t (x)")
    engine = create_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as connection:
            connection.exec_driver_sql("PRAGMA cache_size = 20000")
            with sqlite_backend._larger_cache(connection, 30_000):
                assert connection.exec_driver_sql("PRAGMA cache_size").scalar_one() == -30_000
            assert connection.exec_driver_sql("PRAGMA cache_size").scalar_one() == 20_000
            with sqlite_backend._larger_cache(connection, 19_000):  # already held: left as it is
                assert connection.exec_driver_sql("PRAGMA cache_size").scalar_one() == 20_000
    finally:
        engine.dispose()
