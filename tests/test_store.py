"""The repository: CRUD, queries, FTS, trash, revisions, audit and optimistic concurrency."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace

import pytest
from sqlalchemy import text

from skillstudio.model import BuildFocus, Confidence, Domain, Quality, ReviewState, SourceKind
from skillstudio.model.evidence import EvidenceKind, VerificationRecord
from skillstudio.store import (
    Actor,
    ConflictError,
    Database,
    InvalidSkillData,
    InvalidStoredSkill,
    LibraryBusy,
    LibraryError,
    LibraryNotFound,
    LibraryTooNew,
    NotALibrary,
    SkillExists,
    SkillNotFound,
    SkillQuery,
    SkillRepository,
    SortKey,
    StorageError,
    body_hash,
    fts_expression,
)
from tests.factories import ai_skill, content_skill, example_skill, instructions_skill, strategic_body
from tests.outside import another_program


def ids(repository: SkillRepository, **query) -> list[str]:
    return repository.query(SkillQuery(**query)).ids


# --- create / get -------------------------------------------------------------------------------


def test_created_skill_reads_back_equal(repository: SkillRepository) -> None:
    for make in (ai_skill, content_skill, example_skill, instructions_skill):
        skill = make()
        stored = repository.create(skill)
        assert stored == replace(skill, version=1)
        assert repository.get(skill.id) == stored


def test_create_refuses_an_existing_id(repository: SkillRepository) -> None:
    skill = repository.create(ai_skill())
    with pytest.raises(SkillExists):
        repository.create(replace(skill, name="again"))
    assert repository.get(skill.id).name == skill.name


def test_create_many_is_all_or_nothing(repository: SkillRepository) -> None:
    existing = repository.create(ai_skill())
    batch = [content_skill(), example_skill(), replace(ai_skill(), id=existing.id)]
    with pytest.raises(SkillExists):
        repository.create_many(batch)
    assert repository.count() == 1
    assert len(repository.history.audit()) == 1


def test_dangling_composition_is_refused(repository: SkillRepository) -> None:
    with pytest.raises(InvalidSkillData, match=r"composable_with\[0\]: no skill with id 'nope'"):
        repository.create(ai_skill(composable_with=("nope",)))
    assert repository.count() == 0


def test_get_unknown_and_prefix_resolution(repository: SkillRepository) -> None:
    skill = repository.create(ai_skill())
    with pytest.raises(SkillNotFound):
        repository.get("missing")
    assert repository.resolve_id(skill.id[:30]) == skill.id
    with pytest.raises(SkillNotFound):
        repository.resolve_id("000")  # too short to be a prefix


def test_a_prefix_is_matched_literally_not_as_a_like_pattern(repository: SkillRepository) -> None:
    skill = repository.create(ai_skill(id="ab_cdef-1"))
    repository.create(ai_skill(id="abXcdef-2"))
    assert repository.resolve_id("ab_c") == skill.id  # '_' would match the X too, making it ambiguous
    with pytest.raises(SkillNotFound):
        repository.resolve_id("ab%d")  # '%' would match skill's "_c" (ids cannot hold '%')


# --- queries ------------------------------------------------------------------------------------


@pytest.fixture
def library(repository: SkillRepository) -> dict[str, str]:
    skills = {
        "rockets": ai_skill(name="Rocket screen", tags=("anti-armor", "early-game")),
        "flak": ai_skill(
            name="Flak nest",
            description="Anti-air flak trucks guard the refinery against Yak raids.",
            body=strategic_body(BuildFocus.ANTI_AIR),
            tags=("anti-air", "early-game"),
            quality=Quality(12, 0.75, None, Confidence.PROVEN, "2026-04-01T00:00:00.000Z"),
            provenance=replace(ai_skill().provenance, game_module="td"),
            created_by="mira",
        ),
        "bridge": content_skill(quality=Quality(4, 0.5, 4.0, Confidence.ESTABLISHED)),
        "naval": example_skill(quality=Quality(3, 0.66, None, Confidence.ESTABLISHED)),
        "waves": instructions_skill(review_state=ReviewState.PENDING),
    }
    repository.create_many(list(skills.values()))
    return {key: skill.id for key, skill in skills.items()}


def test_filters(repository: SkillRepository, library: dict[str, str]) -> None:
    assert set(ids(repository, domains=(Domain.CONTENT_GENERATION,))) == {library["bridge"], library["waves"]}
    assert ids(repository, confidences=(Confidence.PROVEN,)) == [library["flak"]]
    assert set(ids(repository, confidences=Confidence.parse_range("established+"))) == {
        library["flak"],
        library["bridge"],
        library["naval"],
    }
    assert set(ids(repository, game_modules=("td",))) == {library["flak"], library["bridge"]}
    assert ids(repository, sources=(SourceKind.WORKSHOP,)) == [library["naval"]]
    assert set(ids(repository, tags=("early-game",))) == {library["rockets"], library["flak"]}
    assert ids(repository, tags=("early-game", "anti-air")) == [library["flak"]]
    assert ids(repository, untagged=True) == [library["waves"]]
    assert ids(repository, created_by=("mira",)) == [library["flak"]]
    assert ids(repository, review_states=(ReviewState.PENDING,)) == [library["waves"]]
    assert len(ids(repository, review_states=(None,))) == 4
    assert ids(repository, domains=(Domain.AI_STRATEGY,), game_modules=("td",), tags=("anti-air",)) == [library["flak"]]


def test_fts_prefix_search_over_name_description_and_tags(repository: SkillRepository, library: dict[str, str]) -> None:
    assert ids(repository, text="fla") == [library["flak"]]
    assert ids(repository, text="Yak raid") == [library["flak"]]  # description, prefix of "raids"
    assert ids(repository, text="ambu") == [library["bridge"]]  # a tag
    assert set(ids(repository, text="early")) == {library["rockets"], library["flak"]}
    assert ids(repository, text="rocket flak") == []  # all words must match
    assert ids(repository, text="zebra") == []


@pytest.mark.parametrize("hostile", ['"', "a OR", "NEAR(", "-x", "name:", "*", "((", "'; DROP TABLE skills; --"])
def test_any_typed_text_is_a_valid_search(repository: SkillRepository, library: dict[str, str], hostile: str) -> None:
    repository.query(SkillQuery(text=hostile))  # never an FTS5 syntax error
    assert repository.count() == 5


def test_fts_expression_quotes_every_word() -> None:
    assert fts_expression('anti-air "early"') == '"anti"* "air"* "early"*'
    assert fts_expression("  ") is None


def test_sorting_and_paging(repository: SkillRepository, library: dict[str, str]) -> None:
    by_rate = ids(repository, sort=SortKey.SUCCESS_RATE, descending=True)
    assert by_rate[0] == library["flak"]
    by_confidence = ids(repository, sort=SortKey.CONFIDENCE, descending=True)
    assert by_confidence[0] == library["flak"]
    names = [s.name for s in repository.summaries(ids(repository, sort=SortKey.NAME))]
    assert names == sorted(names, key=str.lower)
    page = repository.query(SkillQuery(sort=SortKey.NAME, offset=1, limit=2))
    assert page.total == 5 and page.ids == ids(repository, sort=SortKey.NAME)[1:3]


def test_summaries_keep_order_and_skip_missing(repository: SkillRepository, library: dict[str, str]) -> None:
    wanted = [library["waves"], "gone", library["flak"]]
    rows = repository.summaries(wanted)
    assert [row.id for row in rows] == [library["waves"], library["flak"]]
    assert rows[1].created_by == "mira" and rows[1].tags == ("anti-air", "early-game")


def test_stats_tags_creators(repository: SkillRepository, library: dict[str, str]) -> None:
    stats = repository.facets.stats()
    assert stats.total == 5
    assert stats.by_domain == {"ai_strategy": 3, "content_generation": 2}
    assert stats.by_confidence == {"tentative": 2, "established": 2, "proven": 1}
    assert stats.by_source["hand_authored"] == 2
    assert repository.facets.tag_counts()["early-game"] == 2
    assert "mira" in repository.facets.creators()
    assert repository.facets.game_modules() == ["ra1", "td"]


# --- update and concurrency -----------------------------------------------------------------------


def test_update_writes_a_new_version_revision_and_audit(repository: SkillRepository) -> None:
    skill = repository.create(ai_skill())
    edited = repository.update(replace(skill, name="Rocket wall", tags=("anti-armor",)), message="tighter")
    assert edited.version == 2 and edited.name == "Rocket wall"
    history = repository.history.revisions(skill.id)
    assert [(r.number, r.action, r.version, r.author, r.message) for r in history] == [
        (1, "create", 1, "tester", ""),
        (2, "update", 2, "tester", "tighter"),
    ]
    assert history[0].skill().name == skill.name and history[1].skill() == edited
    entry = repository.history.audit(skill_id=skill.id, action="skill.update")[0]
    assert entry.actor == "tester" and entry.revision == 2 and entry.details["changed"] == ["name", "tags"]


def test_update_keeps_quality_and_review_that_belong_to_verification(repository: SkillRepository) -> None:
    skill = repository.create(ai_skill(review_state=ReviewState.APPROVED))
    edited = repository.update(replace(skill, quality=Quality(), use_count=99, review_state=None, name="n"))
    assert edited.quality == skill.quality and edited.use_count == 0
    assert edited.review_state is ReviewState.APPROVED


def test_stale_update_is_refused_and_changes_nothing(repository: SkillRepository) -> None:
    original = repository.create(ai_skill())
    repository.update(replace(original, name="first writer"))
    with pytest.raises(ConflictError) as caught:
        repository.update(replace(original, name="second writer"))
    assert caught.value.theirs.name == "first writer"
    assert caught.value.yours.name == "second writer"
    assert repository.get(original.id).name == "first writer"
    assert len(repository.history.revisions(original.id)) == 2


def test_a_change_by_another_process_is_a_conflict_and_enters_history(
    repository: SkillRepository, database: Database
) -> None:
    skill = repository.create(ai_skill())
    with another_program(database) as other:  # e.g. the engine, with none of our code
        other.execute(text("UPDATE skills SET description = 'engine tuned this' WHERE id = :id"), {"id": skill.id})
    with pytest.raises(ConflictError):
        repository.update(replace(skill, name="mine"))
    fresh = repository.get(skill.id)
    assert fresh.description == "engine tuned this" and fresh.version == 2
    repository.update(replace(fresh, name="mine"))
    assert [r.action for r in repository.history.revisions(skill.id)] == ["create", "external", "update"]
    assert repository.history.revisions(skill.id)[1].author == "external"


def test_engine_bumping_use_count_is_not_a_conflict(repository: SkillRepository, database: Database) -> None:
    skill = repository.create(ai_skill())
    with another_program(database) as other:
        other.execute(
            text("UPDATE skills SET use_count = use_count + 1, last_used = '2026-06-01T00:00:00.000Z' WHERE id = :id"),
            {"id": skill.id},
        )
    updated = repository.update(replace(skill, name="still fine"))
    assert updated.use_count == 1


def test_review_state_change_is_recorded(repository: SkillRepository) -> None:
    skill = repository.create(ai_skill(review_state=ReviewState.PENDING))
    reviewed = repository.as_actor(Actor("rhea")).reviews.review(
        skill.id, ReviewState.APPROVED, comment="ok", version=skill.version
    )
    assert reviewed.review_state is ReviewState.APPROVED and reviewed.version == skill.version
    entry = repository.history.audit(action="skill.review")[0]
    assert entry.actor == "rhea" and entry.details["comment"] == "ok" and entry.details["state"] == "approved"


# --- compositions ---------------------------------------------------------------------------------


def test_compositions_are_symmetric_and_follow_updates(repository: SkillRepository) -> None:
    a, b, c = repository.create(ai_skill()), repository.create(ai_skill()), repository.create(ai_skill())
    a = repository.update(replace(a, composable_with=(b.id, c.id)))
    assert set(a.composable_with) == {b.id, c.id}
    assert repository.get(b.id).composable_with == (a.id,)
    repository.evidence.record_composition(b.id, a.id, successes=3)
    assert repository.get(a.id).composable_with[0] == b.id  # most successful first
    a = repository.update(replace(a, composable_with=(c.id,)))
    assert repository.get(b.id).composable_with == ()
    with pytest.raises(InvalidSkillData):
        repository.evidence.record_composition(a.id, a.id)


# --- trash ----------------------------------------------------------------------------------------


def test_delete_moves_to_trash_and_restore_brings_everything_back(repository: SkillRepository) -> None:
    partner = repository.create(ai_skill())
    skill = repository.create(ai_skill(composable_with=(partner.id,)))
    repository.embeddings.put(skill.id, b"\x00\x00\x80\x3f" * 4, "embed-1")
    repository.trash.delete(skill.id, message="prune")
    assert not repository.exists(skill.id)
    assert ids(repository, text="rocket") == [partner.id]
    assert repository.get(partner.id).composable_with == ()
    assert [entry.skill_id for entry in repository.trash.entries()] == [skill.id]
    with pytest.raises(SkillNotFound, match="in the trash"):
        repository.get(skill.id)
    with pytest.raises(SkillExists, match="trash"):
        repository.create(skill)

    restored = repository.trash.restore(skill.id)
    assert replace(restored, version=0) == replace(skill, version=0)
    assert repository.embeddings.get(skill.id) == (b"\x00\x00\x80\x3f" * 4, "embed-1")
    assert repository.get(partner.id).composable_with == (skill.id,)
    assert set(ids(repository, text="rocket")) == {partner.id, skill.id}
    assert repository.trash.entries() == []
    # A vector is derived data: it is audited but writes no revision of the skill.
    assert [r.action for r in repository.history.revisions(skill.id)] == ["create", "delete", "restore"]


def test_empty_trash_deletes_for_good_but_audit_remembers(repository: SkillRepository) -> None:
    skill = repository.create(ai_skill())
    repository.trash.delete(skill.id)
    assert repository.trash.empty() == 1
    assert repository.trash.entries() == [] and repository.history.revisions(skill.id) == []
    with pytest.raises(SkillNotFound):
        repository.trash.restore(skill.id)
    assert [e.action for e in repository.history.audit(skill_id=skill.id)] == [
        "skill.purge",
        "skill.delete",
        "skill.create",
    ]
    repository.create(skill)  # the id is free again
    assert repository.get(skill.id).version == 1


def test_delete_unknown_changes_nothing(repository: SkillRepository) -> None:
    keep = repository.create(ai_skill())
    with pytest.raises(SkillNotFound):
        repository.trash.delete_many([keep.id, "missing"])
    assert repository.exists(keep.id) and repository.trash.entries() == []


# --- evidence -------------------------------------------------------------------------------------


def test_verification_records_are_stored_with_the_body_hash(repository: SkillRepository) -> None:
    skill = ai_skill()
    record = VerificationRecord("2026-03-02T10:00:00.000Z", EvidenceKind.HEADLESS, 3, 2, opponent="IC Default Hard")
    repository.create(skill, verifications=[record])
    stored = repository.evidence.verifications(skill.id)
    assert stored == [replace(record, body_hash=body_hash(skill))]


# --- bad data from other writers -----------------------------------------------------------------


def test_an_invalid_row_written_by_another_program_is_reported_not_crashed_on(
    repository: SkillRepository, database: Database
) -> None:
    good = repository.create(ai_skill())
    with another_program(database) as other:
        other.execute(
            text(
                "INSERT INTO skills (id, domain, name, description, body_json, tags, game_module, source, created_at)"
                " VALUES ('bad', 'ai_strategy', 'Broken', 'x', '{not json', 'oops', 'ra1', 'llm_discovered', 'now')"
            )
        )
    assert set(ids(repository)) == {good.id, "bad"}
    assert ids(repository, tags=("anti-armor",)) == [good.id]  # the bad tags do not break the query
    assert ids(repository, untagged=True) == ["bad"]
    assert repository.summaries(["bad"])[0].tags == ()
    with pytest.raises(InvalidStoredSkill) as caught:
        repository.get("bad")
    assert {issue.path for issue in caught.value.issues} == {"tags", "created_at", "body_json"}
    repository.trash.delete("bad")  # it can still be moved out of the way...
    repository.trash.restore("bad")  # ...and back, exactly as it was
    with another_program(database) as other:
        assert tuple(other.execute(text("SELECT body_json, tags FROM skills WHERE id = 'bad'")).one()) == (
            "{not json",
            "oops",
        )


# --- opening files --------------------------------------------------------------------------------


def test_opening_refuses_what_is_not_a_library(tmp_path) -> None:
    with pytest.raises(LibraryNotFound, match="no library at"):
        Database(tmp_path / "missing.db")
    text_file = tmp_path / "notes.db"
    text_file.write_text("hello")
    with pytest.raises(NotALibrary, match="is not a SQLite database"):
        Database(text_file)
    with pytest.raises(NotALibrary, match="is a folder"):
        Database(tmp_path)
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE replays (id INTEGER)")
    with pytest.raises(NotALibrary, match="no D057 'skills' table"):
        Database(other)
    wrong = tmp_path / "wrong.db"
    with sqlite3.connect(wrong) as connection:
        connection.execute("CREATE TABLE skills (id TEXT, name TEXT)")
    with pytest.raises(NotALibrary, match="lacks D057's column"):
        Database(wrong)
    with pytest.raises(LibraryNotFound, match="does not exist"):
        Database(tmp_path / "no" / "such" / "folder.db", create=True)
    with pytest.raises(LibraryError, match="already exists"):
        Database(other, create=True)


def test_a_file_from_a_newer_skillstudio_is_refused(tmp_path) -> None:
    path = tmp_path / "future.db"
    Database(path, create=True).close()
    with sqlite3.connect(path) as connection:
        connection.execute("INSERT INTO studio_schema_migrations VALUES (99, 'x', 'from the future')")
    with pytest.raises(LibraryTooNew, match="schema 99"):
        Database(path)


@pytest.mark.sqlite_only("D034's PRAGMAs are SQLite's")
def test_pragmas_follow_d034(database: Database) -> None:
    with database.engine.connect() as connection:

        def pragma(name: str):
            return connection.exec_driver_sql(f"PRAGMA {name}").scalar()

        assert pragma("journal_mode") == "wal"
        assert pragma("foreign_keys") == 1
        assert pragma("busy_timeout") == 2000
        assert pragma("synchronous") == 1  # NORMAL
        assert pragma("page_size") == 4096
        assert pragma("cache_size") == -16384


@pytest.mark.sqlite_only("SQLite's PRAGMAs")
def test_connections_neither_map_the_file_nor_keep_sorts_in_memory(database: Database) -> None:
    """Unlike D034 (docs/storage.md): each pooled connection's 64 MiB map of a large library,
    and every large sort held in memory, took a browser on 1M skills hundreds of MB."""
    with database.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA mmap_size").scalar() == 0
        assert connection.exec_driver_sql("PRAGMA temp_store").scalar() == 1  # FILE


def test_data_version_moves_when_another_connection_commits(repository: SkillRepository, database: Database) -> None:
    before = database.data_version()
    with another_program(database) as other:
        other.execute(text("UPDATE skills SET use_count = 1"))
        other.execute(
            text("INSERT INTO studio_audit_log (at, actor, actor_kind, action) VALUES ('t', 'x', 'system', 'poke')")
        )
    assert database.data_version() != before


def test_json_columns_hold_what_d057_says(repository: SkillRepository, database: Database) -> None:
    skill = repository.create(ai_skill())
    with another_program(database) as other:
        tags, body = other.execute(text("SELECT tags, body_json FROM skills WHERE id = :id"), {"id": skill.id}).one()
    assert json.loads(tags) == ["anti-armor", "early-game"]
    assert list(json.loads(body)) == ["StrategicPattern"]


def test_every_mutation_writes_a_revision_and_an_audit_entry(repository: SkillRepository) -> None:
    a, b = repository.create(ai_skill()), repository.create(ai_skill())

    def counts() -> tuple[int, int]:
        return len(repository.history.revisions(a.id)), len(repository.history.audit(skill_id=a.id))

    mutations = [
        lambda: repository.update(replace(repository.get(a.id), name="edited")),
        lambda: repository.reviews.review(a.id, ReviewState.APPROVED, version=repository.get(a.id).version),
        lambda: repository.evidence.record_composition(a.id, b.id),
        lambda: repository.trash.delete(a.id),
        lambda: repository.trash.restore(a.id),
    ]
    for mutate in mutations:
        before = counts()
        mutate()
        after = counts()
        assert after[0] == before[0] + 1 and after[1] == before[1] + 1
    # A vector is derived from the description, not content: audited, with no revision.
    before = counts()
    repository.embeddings.put(a.id, b"\x00" * 8, "embed-1")
    assert counts() == (before[0], before[1] + 1)
    assert repository.history.audit(skill_id=b.id, action="skill.compose")[0].revision == 2


@pytest.mark.sqlite_only("a SQLite file lock (BEGIN EXCLUSIVE); the server's write lock: test_store_postgresql.py")
def test_a_locked_library_is_a_clear_error_not_a_traceback(repository: SkillRepository, database: Database) -> None:
    skill = repository.create(ai_skill())
    other = sqlite3.connect(database.path, isolation_level=None)
    try:
        other.execute("BEGIN EXCLUSIVE")  # another writer holds the file past our bounded wait
        database.lock_wait = 0.2
        with pytest.raises(LibraryBusy, match="is busy: another program is writing") as busy:
            repository.update(replace(skill, name="blocked"))
        assert isinstance(busy.value, StorageError) and "database is locked" in str(busy.value)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert repository.get(skill.id).name == skill.name


def test_committed_writes_are_announced_and_failed_ones_are_not(
    repository: SkillRepository, database: Database
) -> None:
    heard = []
    unsubscribe = database.changes.subscribe(heard.append)
    skill = repository.create(ai_skill())
    repository.update(replace(skill, name="renamed"))
    with pytest.raises(ConflictError):
        repository.update(replace(skill, name="stale"))
    repository.trash.delete(skill.id)
    assert [(c.action, c.skill_ids, c.actor) for c in heard] == [
        ("skill.create", (skill.id,), "tester"),
        ("skill.update", (skill.id,), "tester"),
        ("skill.delete", (skill.id,), "tester"),
    ]
    unsubscribe()
    repository.trash.restore(skill.id)
    assert len(heard) == 3


def test_update_many_is_all_or_nothing(repository: SkillRepository) -> None:
    a, b = repository.create(ai_skill()), repository.create(ai_skill())
    stale_b = replace(b, name="stale")
    repository.update(replace(b, name="fresh"))
    with pytest.raises(ConflictError):
        repository.update_many([replace(a, name="would be lost"), stale_b])
    assert repository.get(a.id).name == a.name


def test_updating_an_engine_written_skill_adds_its_metadata(repository: SkillRepository, database: Database) -> None:
    skill = repository.create(ai_skill())
    with another_program(database) as other:  # as if the engine wrote the row: no metadata
        other.execute(text("DELETE FROM studio_skill_meta"))
    engine_skill = repository.get(skill.id)
    assert engine_skill.created_by == "unknown"
    updated = repository.update(replace(engine_skill, created_by="agent:7", tags=("x",)))
    assert repository.get(skill.id) == updated and updated.created_by == "agent:7"


def test_each_tag_filter_keeps_its_own_parameters() -> None:
    from skillstudio.store.backends.sqlite import SqliteBackend
    from skillstudio.store.query import build_select

    params = build_select(SkillQuery(tags=("early-game", "anti-air")), SqliteBackend("unused.db", create=False))
    params = params.compile().params
    assert '{tags}: "early game"' in params.values() and '{tags}: "anti air"' in params.values()


def test_tags_without_word_characters_still_filter_exactly(repository: SkillRepository) -> None:
    odd = repository.create(ai_skill(tags=("++", "early-game")))
    repository.create(ai_skill(tags=("early-game",)))
    assert ids(repository, tags=("++",)) == [odd.id]
    assert ids(repository, tags=("early",)) == []  # a tag is matched whole, not as a word


def test_tag_counts_are_cached_until_anyone_commits(repository: SkillRepository, database: Database) -> None:
    skill = repository.create(ai_skill(tags=("early-game",)))
    assert repository.facets.tag_counts() == {"early-game": 1}
    with another_program(database) as other:  # another process adds a tag
        other.execute(text('UPDATE skills SET tags = \'["early-game", "naval"]\' WHERE id = :id'), {"id": skill.id})
    assert repository.facets.tag_counts() == {"early-game": 1, "naval": 1}


def test_a_run_id_prefix_is_matched_literally(repository: SkillRepository) -> None:
    from skillstudio.store import RunNotFound, RunSkillEntry

    skill = repository.create(ai_skill())
    runs = repository.runs
    run_id = runs.create_run(
        skills=[RunSkillEntry(skill.id, "ra1", "hash", "tentative")],
        opponent="ic-default-hard",
        games=1,
        seed=1,
        executor="serial",
        chunk_games=1,
        actor="tester",
    )
    assert runs.resolve(run_id[:4]) == run_id
    with pytest.raises(RunNotFound):
        runs.resolve(run_id[:2] + "_" + run_id[3:6])  # '_' is a character here, not a wildcard


def test_the_audit_logs_actors_are_everyone_its_entries_name(database: Database) -> None:
    """Read by SQLite: the audit log dialog read every entry of the log for them (a million
    entries for a million created skills)."""
    for name in ("bob", "Alice", "zoë", "agent:x", "Émile", "bob"):
        SkillRepository(database, Actor(name)).create(ai_skill())
    history = SkillRepository(database, Actor("tester")).history
    assert history.actors() == sorted({entry.actor for entry in history.audit()})
    assert history.actors() == ["Alice", "agent:x", "bob", "zoë", "Émile"]


def test_import_extras_are_stored_and_replaced_by_a_later_import(repository: SkillRepository) -> None:
    """write_extras' one upsert per import, on each backend: empty extras are stored as empty
    JSON, and a later import of the same skill replaces its extras."""
    from skillstudio.store.types import ImportItem, SkillExtras

    plain, rich = ai_skill(), replace(ai_skill(), id="rich-skill", name="rich")
    full = SkillExtras("skill-md:rich", {"license": "MIT", "ünïcode": ["a", 1]}, {"run.py": {"text": "x"}}, ("w1",))
    repository.import_skills([ImportItem(plain, SkillExtras("json:a.json")), ImportItem(rich, full)])
    assert repository.extras.many([plain.id, rich.id]) == {plain.id: SkillExtras("json:a.json"), rich.id: full}
    stored = repository.get(rich.id)
    later = SkillExtras("skill-md:rich-2", warnings=("fixed",))
    repository.import_skills([], [ImportItem(stored, later), ImportItem(repository.get(plain.id), full)])
    assert repository.extras.many([plain.id, rich.id]) == {plain.id: full, rich.id: later}
