"""``skillstudio publish`` and ``pull``: a library to an engine's D057 file and back
(docs/team-library.md, "Publish and pull")."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from skillstudio.cli.main import main as cli
from skillstudio.model import Confidence, Quality, ReviewState, Source
from skillstudio.model.claims import claim_in
from skillstudio.packages import gameplay_db
from skillstudio.packages.errors import PackageError
from skillstudio.packages.export import PrivacyError
from skillstudio.packages.gameplay_db import apply_pull, plan_pull, publish
from skillstudio.store import Database, QualityOutcome, SkillRepository
from skillstudio.store.backends.sqlite import fts5_triggers_work_untrusted
from skillstudio.store.migrations import D057_SKILL_COLUMNS, d057_statements, fts_sync_triggers
from tests.factories import ai_skill, content_skill, example_skill
from tests.test_seed_ddl import engine_library  # noqa: F401  (a fixture: a file only an engine wrote)

FTS_SHADOWS = {f"skills_fts_{part}" for part in ("data", "idx", "docsize", "config")}  # external content: no _content
NEW_ID = "9b2c4e1a-7d3f-4a5b-8c6d-0e1f2a3b4c5d"


@pytest.fixture
def skills(repository: SkillRepository) -> dict[str, str]:
    """A small library: two approved AI skills linked to each other, a pending content skill, a
    rejected and a tentative approved one."""
    proven = ai_skill(
        name="Naval doctrine",
        tags=("naval",),
        quality=Quality(12, 0.8, None, Confidence.PROVEN, "2026-04-01T10:00:00.000Z"),
        review_state=ReviewState.APPROVED,
    )
    established = ai_skill(
        quality=Quality(5, 0.7, None, Confidence.ESTABLISHED, "2026-04-02T10:00:00.000Z"),
        review_state=ReviewState.APPROVED,
        composable_with=(proven.id,),
    )
    pending = content_skill(quality=Quality(4, 0.75, 3.9, Confidence.ESTABLISHED), review_state=ReviewState.PENDING)
    rejected = ai_skill(
        name="Rejected rush", quality=Quality(6, 0.7, None, Confidence.ESTABLISHED), review_state=ReviewState.REJECTED
    )
    tentative = example_skill(review_state=ReviewState.APPROVED)
    created = {
        "proven": proven,
        "established": established,
        "pending": pending,
        "rejected": rejected,
        "tentative": tentative,
    }
    repository.create_many(list(created.values()))
    return {key: skill.id for key, skill in created.items()}


def published_ids(path: Path) -> set[str]:
    with sqlite3.connect(path) as connection:
        return {row[0] for row in connection.execute("SELECT id FROM skills")}


def schema_of(path: Path) -> list[tuple[str, str, str | None]]:
    with sqlite3.connect(path) as connection:
        return connection.execute("SELECT type, name, sql FROM sqlite_master ORDER BY type, name").fetchall()


def library_state(repository: SkillRepository) -> tuple[object, ...]:
    """What a refused pull must leave as it was: every skill (content, figures, review state,
    version), the extras and the audit log."""
    ids = repository.query().ids
    return (
        sorted(repository.get_many(ids), key=lambda skill: skill.id),
        repository.extras.many(ids),
        repository.history.audit(),
    )


def engine_insert(path: Path, *rows: tuple[object, ...]) -> None:
    """What an engine does: plain SQL on D057's table, D034's pragmas."""
    with sqlite3.connect(path) as engine:
        engine.execute("PRAGMA foreign_keys = ON")
        if fts5_triggers_work_untrusted():
            engine.execute("PRAGMA trusted_schema = OFF")
        engine.executemany(f"INSERT INTO skills VALUES ({', '.join('?' * 17)})", rows)


def engine_row(template: Path, *, skill_id: str = NEW_ID, **values: object) -> tuple[object, ...]:
    """A row like the first one published in ``template``, with these columns changed."""
    with sqlite3.connect(template) as connection:
        row = dict(
            zip(
                D057_SKILL_COLUMNS,
                connection.execute("SELECT * FROM skills ORDER BY rowid LIMIT 1").fetchone(),
                strict=True,
            )
        )
    row.update(
        id=skill_id,
        name="Tesla perimeter at the choke",
        description="Tesla coils at the bridge hold off the first armour push.",
        source="llm_discovered",
        verification_count=3,
        success_rate=0.67,
        confidence="established",
        created_at="2026-06-01T12:00:00.000Z",
    )
    row.update(values)
    return tuple(row[column] for column in D057_SKILL_COLUMNS)


# --- publish --------------------------------------------------------------------------------------


def test_published_file_has_exactly_d057s_ddl_and_an_engine_insert_is_searchable(
    repository: SkillRepository, skills: dict[str, str], tmp_path: Path
) -> None:
    target = tmp_path / "gameplay.db"
    done = publish(repository, repository.query().ids, target)
    assert published_ids(target) == set(skills.values()) - {skills["rejected"]}  # rejected: never served
    assert done.preview.rejected == [skills["rejected"]]

    objects = schema_of(target)
    tables = {name: sql for kind, name, sql in objects if kind == "table"}
    assert set(tables) == set(d057_statements()) | FTS_SHADOWS  # no studio_* table, nothing else
    for table, statement in d057_statements().items():
        assert tables[table] == statement[statement.index("CREATE") :]  # verbatim, as sqlite3 .schema shows it
    triggers = {sql for kind, _name, sql in objects if kind == "trigger"}
    # as SQLite keeps them: without IF NOT EXISTS and the final ';'
    assert triggers == {sql.replace(" IF NOT EXISTS", "", 1).removesuffix(";") for sql in fts_sync_triggers()}
    assert len(triggers) == 3
    assert {kind for kind, _name, _sql in objects} == {"table", "index", "trigger"}
    assert all(name.startswith("sqlite_autoindex_") for kind, name, _ in objects if kind == "index")

    # the rows are D057's columns of the library's skills, exactly
    with sqlite3.connect(target) as connection:
        connection.row_factory = sqlite3.Row
        row = dict(connection.execute("SELECT * FROM skills WHERE id = ?", (skills["proven"],)).fetchone())
        pairs = connection.execute("SELECT skill_a, skill_b FROM skill_compositions").fetchall()
    proven = repository.get(skills["proven"])
    assert (row["name"], json.loads(row["tags"]), row["verification_count"], row["confidence"]) == (
        "Naval doctrine",
        ["naval"],
        12,
        "proven",
    )
    assert row["success_rate"] == proven.quality.success_rate
    assert {frozenset(pair) for pair in pairs} == {frozenset((skills["proven"], skills["established"]))}

    engine_insert(target, engine_row(target))
    with sqlite3.connect(target) as engine:
        found = engine.execute("SELECT rowid FROM skills_fts WHERE skills_fts MATCH 'tesla'").fetchall()
        assert len(found) == 1
        assert engine.execute("SELECT id FROM skills WHERE rowid = ?", found[0]).fetchone() == (NEW_ID,)
        # the index agrees with its content table
        engine.execute("INSERT INTO skills_fts(skills_fts) VALUES ('integrity-check')")
        # our rows are searchable too (indexed as they were written)
        assert engine.execute("SELECT count(*) FROM skills_fts WHERE skills_fts MATCH 'doctrine'").fetchone() == (1,)


def test_filters_select_what_is_published(
    repository: SkillRepository, skills: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "gameplay.db"
    library = repository.database.location
    code = cli(["publish", library, "--to", str(target), "--review", "approved", "--confidence", "established+"])
    assert code == 0, capsys.readouterr().err
    assert published_ids(target) == {skills["proven"], skills["established"]}
    assert "published 2 skills" in capsys.readouterr().out

    assert cli(["publish", library, "--to", str(target), "--domain", "content"]) == 0
    assert published_ids(target) == {skills["pending"]}
    assert cli(["publish", library, "--to", str(target), "--tag", "naval", "--confidence", "proven"]) == 0
    assert published_ids(target) == {skills["proven"]}


def test_nothing_private_goes_out(repository: SkillRepository, skills: dict[str, str], tmp_path: Path) -> None:
    """The package exporter's privacy rule: findings refuse the publish, --redact removes them;
    none of the library's own data (creators, review states, history) is in the file."""
    leaky = repository.get(skills["proven"])
    repository.update(replace(leaky, description="Learned against player: Kessler on the river map."))
    target = tmp_path / "gameplay.db"
    with pytest.raises(PrivacyError, match="player_name"):
        publish(repository, repository.query().ids, target)
    assert not target.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left

    publish(repository, repository.query().ids, target, redact=True)
    with sqlite3.connect(target) as connection:
        text = "\n".join(str(value) for row in connection.execute("SELECT * FROM skills") for value in row)
    assert "Kessler" not in text and "[redacted]" in text
    assert "tester" not in text and "agent:orchestrator" not in text  # creators stay in the library
    assert "approved" not in text and "pending" not in text  # so do review states


def test_a_failed_publish_leaves_the_previous_file_byte_identical(
    repository: SkillRepository, skills: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "gameplay.db"
    publish(repository, [skills["proven"]], target)
    before = target.read_bytes()
    columns = gameplay_db.skill_columns
    written: list[str] = []

    def disk_full_on_the_third_row(skill, **kwargs):  # type: ignore[no-untyped-def]
        written.append(skill.id)
        if len(written) == 3:
            raise OSError(28, "No space left on device")
        return columns(skill, **kwargs)

    monkeypatch.setattr(gameplay_db, "skill_columns", disk_full_on_the_third_row)
    with pytest.raises(OSError, match="No space left"):
        publish(repository, repository.query().ids, target)
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temporary left


def test_a_reader_holding_the_old_file_keeps_reading_it(
    repository: SkillRepository, skills: dict[str, str], tmp_path: Path
) -> None:
    target = tmp_path / "gameplay.db"
    publish(repository, [skills["proven"]], target)
    reader = sqlite3.connect(target, isolation_level=None)
    try:
        reader.execute("BEGIN")
        assert reader.execute("SELECT id FROM skills").fetchall() == [(skills["proven"],)]
        publish(repository, [skills["established"], skills["pending"]], target)
        # the engine's open snapshot is the old file, whole
        assert reader.execute("SELECT id FROM skills").fetchall() == [(skills["proven"],)]
        reader.execute("COMMIT")
        assert reader.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        reader.close()
    assert published_ids(target) == {skills["established"], skills["pending"]}  # a new opening sees the new one


def test_publish_refuses_a_target_whose_replacement_would_lose_data(
    repository: SkillRepository, skills: dict[str, str], tmp_path: Path
) -> None:
    ids = repository.query().ids
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database")
    with pytest.raises(PackageError, match="not a SQLite database"):
        publish(repository, ids, notes)
    assert notes.read_text() == "not a database"

    if repository.database.dialect == "sqlite":  # a server library has no file to publish over
        with pytest.raises(PackageError, match="open in WAL mode"):  # the library itself, open here
            publish(repository, ids, repository.database.path)
    other = tmp_path / "other.db"
    Database(other, create=True).close()
    with pytest.raises(PackageError, match="is a SkillStudio library"):
        publish(repository, ids, other)

    whole = tmp_path / "whole-gameplay.db"  # an engine's gameplay.db with its match history
    with sqlite3.connect(whole) as connection:
        for statement in d057_statements().values():
            connection.execute(statement)
        connection.execute("CREATE TABLE match_history (id INTEGER PRIMARY KEY, outcome TEXT)")
    before = whole.read_bytes()
    with pytest.raises(PackageError, match="match_history"):
        publish(repository, ids, whole)
    assert whole.read_bytes() == before

    learned = tmp_path / "gameplay.db"  # an engine learned a skill the library has not pulled
    publish(repository, ids, learned)
    engine_insert(learned, engine_row(learned))
    before = learned.read_bytes()
    with pytest.raises(PackageError, match="pull them first"):
        publish(repository, ids, learned)
    assert learned.read_bytes() == before

    learned.with_name("gameplay.db-wal").write_bytes(b"")  # open in WAL mode by an engine
    with pytest.raises(PackageError, match="WAL mode"):
        publish(repository, ids, learned)


# --- pull -----------------------------------------------------------------------------------------


@pytest.fixture
def published(repository: SkillRepository, skills: dict[str, str], tmp_path: Path) -> Path:
    target = tmp_path / "gameplay.db"
    publish(repository, repository.query().ids, target)
    return target


def test_round_trip_publish_then_pull_changes_nothing(repository: SkillRepository, published: Path) -> None:
    before = library_state(repository)
    plan = plan_pull(repository, published)
    assert plan.changes == 0
    assert {step.action for step in plan.imports.steps} == {"skip"}
    assert plan.imports.count("conflict") == 0
    apply_pull(repository, plan)
    assert library_state(repository) == before


def test_new_llm_discovered_skills_arrive_pending_with_the_engines_figures_as_a_claim(
    repository: SkillRepository, skills: dict[str, str], published: Path
) -> None:
    hand_made = "9b2c4e1a-7d3f-4a5b-8c6d-0e1f2a3b4c5e"
    engine_insert(
        published,
        engine_row(published),
        engine_row(published, skill_id=hand_made, name="A built-in scene", source="hand_authored"),
    )
    plan = apply_pull(repository, plan_pull(repository, published))
    assert (plan.imports.count("add"), len(plan.claimed)) == (1, 0)
    learned = repository.get(NEW_ID)
    assert learned.review_state is ReviewState.PENDING
    assert learned.quality == Quality()  # the engine's figures are not this library's evidence
    assert learned.created_by == "tester"  # the person who pulled it brought it
    extras = repository.extras.get(NEW_ID)
    assert extras is not None and extras.origin == "engine:gameplay.db"
    claim = claim_in(extras.frontmatter)
    assert claim is not None
    assert (claim["by"], claim["verification_count"], claim["confidence"]) == ("engine:gameplay.db", 3, "established")
    assert not repository.exists(hand_made)  # only what the engine learned comes back
    skipped = next(step for step in plan.imports.steps if step.skill_id == hand_made)
    assert skipped.action == "skip" and "llm_discovered" in skipped.reason


def test_changed_figures_are_recorded_pending_review(
    repository: SkillRepository, skills: dict[str, str], published: Path
) -> None:
    before = repository.get(skills["proven"])
    with sqlite3.connect(published) as engine:  # the engine verified it more, and uses it
        engine.execute(
            "UPDATE skills SET verification_count = 20, success_rate = 0.85, use_count = 9,"
            " last_verified = '2026-06-02T10:00:00.000Z' WHERE id = ?",
            (skills["proven"],),
        )
    plan = apply_pull(repository, plan_pull(repository, published))
    assert [item.skill.id for item in plan.claimed] == [skills["proven"]]
    after = repository.get(skills["proven"])
    assert after.review_state is ReviewState.PENDING  # was approved
    assert after.quality == before.quality  # kept until this library's own evidence says otherwise
    assert after.version == before.version  # content unchanged
    extras = repository.extras.get(skills["proven"])
    assert extras is not None
    claim = claim_in(extras.frontmatter)
    assert claim is not None and (claim["verification_count"], claim["success_rate"]) == (20, 0.85)
    decision = repository.reviews.decisions(skills["proven"])[-1]
    assert (decision.state, decision.reviewer) == ("pending", "tester")
    assert "new quality figures from engine:gameplay.db" in decision.comment
    # a skill whose figures the engine did not change keeps its decision
    assert repository.get(skills["established"]).review_state is ReviewState.APPROVED


def test_pulling_twice_adds_nothing(repository: SkillRepository, skills: dict[str, str], published: Path) -> None:
    engine_insert(published, engine_row(published))
    with sqlite3.connect(published) as engine:
        engine.execute("UPDATE skills SET verification_count = 30 WHERE id = ?", (skills["established"],))
    first = apply_pull(repository, plan_pull(repository, published))
    assert first.changes == 2
    before = library_state(repository)
    again = apply_pull(repository, plan_pull(repository, published))
    assert again.changes == 0
    assert library_state(repository) == before


def test_stale_engine_figures_are_not_news(
    repository: SkillRepository, skills: dict[str, str], published: Path
) -> None:
    """The library verified a skill further since it published it: the engine's older figures
    (fewer verifications) are no claim to review."""
    skill = repository.get(skills["proven"])
    repository.evidence.set_quality(skill.id, QualityOutcome(replace(skill.quality, verification_count=40)))
    with sqlite3.connect(published) as engine:  # the engine's own, fewer, verifications since
        engine.execute("UPDATE skills SET verification_count = 15, success_rate = 0.5 WHERE id = ?", (skill.id,))
    assert plan_pull(repository, published).changes == 0


def test_engine_changed_content_is_a_conflict_and_kept(
    repository: SkillRepository, skills: dict[str, str], published: Path
) -> None:
    """The library's skill is not the engine's, even after the engine's figures were pulled."""
    with sqlite3.connect(published) as engine:
        engine.execute("UPDATE skills SET verification_count = 30 WHERE id = ?", (skills["proven"],))
    apply_pull(repository, plan_pull(repository, published))
    extras = repository.extras.get(skills["proven"])
    assert extras is not None and extras.origin == ""  # still this library's own
    with sqlite3.connect(published) as engine:
        engine.execute("UPDATE skills SET description = 'Rewritten by the engine.' WHERE id = ?", (skills["proven"],))
    plan = apply_pull(repository, plan_pull(repository, published))
    step = next(step for step in plan.imports.steps if step.skill_id == skills["proven"])
    assert step.action == "conflict"
    assert repository.get(skills["proven"]).description != "Rewritten by the engine."


# --- hostile engine files -------------------------------------------------------------------------


def refused(repository: SkillRepository, path: Path, match: str) -> PackageError:
    before = library_state(repository)
    with pytest.raises(PackageError, match=match) as raised:
        plan_pull(repository, path)
    assert library_state(repository) == before
    return raised.value


def test_a_file_that_is_not_sqlite_is_refused(repository: SkillRepository, skills: object, tmp_path: Path) -> None:
    junk = tmp_path / "gameplay.db"
    junk.write_bytes(b"PK\x03\x04 not a database at all")
    refused(repository, junk, "not a SQLite database")
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(b"SQLite format 3\x00" + b"\xff" * 400)
    refused(repository, damaged, "not a usable SQLite database")
    assert junk.read_bytes() == b"PK\x03\x04 not a database at all"


def test_a_file_without_d057s_schema_is_refused(repository: SkillRepository, skills: object, tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE replays (id TEXT)")
    refused(repository, other, "no D057 'skills' table")

    wrong = tmp_path / "wrong.db"
    statement = d057_statements()["skills"].replace(
        "    last_verified   TEXT\n", "    last_verified   TEXT,\n    cheat TEXT\n"
    )
    with sqlite3.connect(wrong) as connection:
        connection.execute(statement)
    error = refused(repository, wrong, "wrong schema")
    assert "extra cheat" in str(error)

    retyped = tmp_path / "retyped.db"
    with sqlite3.connect(retyped) as connection:
        connection.execute(d057_statements()["skills"].replace("success_rate    REAL", "success_rate    TEXT"))
    assert "success_rate is declared TEXT" in str(refused(repository, retyped, "wrong schema"))

    view = tmp_path / "view.db"
    with sqlite3.connect(view) as connection:
        connection.execute("CREATE VIEW skills AS SELECT 1 AS id")
    refused(repository, view, "no D057 'skills' table")


def test_bad_rows_are_refused_naming_each_row_and_nothing_is_written(
    repository: SkillRepository, skills: dict[str, str], published: Path
) -> None:
    engine_insert(
        published,
        engine_row(published),  # a good row: not added either, the file is refused whole
        engine_row(published, skill_id="bad-confidence-1", confidence="legendary"),
        engine_row(published, skill_id="bad-body-2", body_json='{"StrategicPattern": '),
        engine_row(published, skill_id="bad-rate-3", success_rate="lots"),
    )
    with sqlite3.connect(published) as engine:
        engine.execute(
            "INSERT INTO skills (id, domain, name, description, body_json, tags, game_module, source, created_at)"
            " VALUES (NULL, 'ai_strategy', 'no id', '', '{}', '[]', 'ra1', 'llm_discovered', '2026-01-01')"
        )
        engine.execute("UPDATE skills SET body_json = ? WHERE id = ?", ("[" * 5000 + "]" * 5000, skills["pending"]))
    message = str(refused(repository, published, "rows that hold no valid skill"))
    assert "row 'bad-confidence-1': confidence" in message and "legendary" in message
    assert "row 'bad-body-2': body_json" in message
    assert "row 'bad-rate-3': success_rate" in message
    assert "row at rowid" in message
    assert f"row '{skills['pending']}': body_json: is nested deeper" in message
    assert not repository.exists(NEW_ID)


def test_huge_text_is_refused_without_being_read_whole(
    repository: SkillRepository, skills: object, published: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gameplay_db, "MAX_COLUMN_TEXT", 100_000)  # the limit, lowered to keep the test small
    engine_insert(published, engine_row(published, description="flood " * 50_000))
    message = str(refused(repository, published, "rows that hold no valid skill"))
    assert f"row '{NEW_ID}': description: is longer than 100000 characters" in message


def test_pull_never_writes_to_the_engines_file(repository: SkillRepository, skills: object, published: Path) -> None:
    engine_insert(published, engine_row(published))
    before = published.read_bytes()
    apply_pull(repository, plan_pull(repository, published))
    assert published.read_bytes() == before
    assert sorted(p.name for p in published.parent.iterdir() if p.name.startswith("gameplay.db")) == ["gameplay.db"]


# --- the command line -----------------------------------------------------------------------------


def test_cli_pull_reports_and_is_idempotent(
    repository: SkillRepository, skills: dict[str, str], published: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    engine_insert(published, engine_row(published))
    library = repository.database.location
    assert cli(["pull", str(published), "--into", library, "--dry-run"]) == 0
    assert "would pull gameplay.db (engine:gameplay.db): 1 added" in capsys.readouterr().out
    assert not repository.exists(NEW_ID)

    assert cli(["pull", str(published), "--into", library]) == 0
    out = capsys.readouterr().out
    assert "pulled gameplay.db (engine:gameplay.db): 1 added" in out and "Tesla perimeter" in out
    assert cli(["pull", str(published), "--into", library, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["format"], document["counts"]["add"], document["counts"]["figures"]) == ("skillstudio.pull", 0, 0)


def test_cli_refusals_exit_1_with_the_reason(
    repository: SkillRepository, skills: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    library = repository.database.location
    junk = tmp_path / "gameplay.db"
    junk.write_text("hello")
    assert cli(["pull", str(junk), "--into", library]) == 1
    assert "gameplay.db: is not a SQLite database; nothing was pulled" in capsys.readouterr().err
    assert cli(["publish", library, "--to", str(junk)]) == 1
    assert "is not a SQLite database" in capsys.readouterr().err
    assert cli(["publish", library, "--to", str(tmp_path / "g.db"), "--tag", "no-such-tag"]) == 1
    assert "no skills match" in capsys.readouterr().err
    assert not (tmp_path / "g.db").exists()


def test_a_published_workshop_skill_comes_back_unchanged(repository: SkillRepository, tmp_path: Path) -> None:
    """D057's row has no column for a Workshop skill's package or author: pull reads the row
    with the library's own metadata, so the round trip finds no conflict."""
    shared = ai_skill(
        provenance=replace(ai_skill().provenance, source=Source.workshop("kessler/naval@1.0.0", "kessler"))
    )
    repository.create(shared)
    target = tmp_path / "gameplay.db"
    publish(repository, [shared.id], target)
    assert plan_pull(repository, target).changes == 0


def test_the_library_still_opens_the_published_file(
    repository: SkillRepository, skills: object, published: Path
) -> None:
    """A published file is a D057 library SkillStudio itself can open (as it opens an engine's)."""
    with Database(published) as database:
        assert SkillRepository(database).count() == 4


def test_pull_from_a_file_only_an_engine_wrote(repository: SkillRepository, engine_library: Path) -> None:  # noqa: F811
    """Seed 000's DDL and plain SQL rows (tests/test_seed_ddl.py): the two skills the engine
    learned arrive pending, linked as the engine linked them; its hand-authored one does not."""
    plan = apply_pull(repository, plan_pull(repository, engine_library))
    assert plan.imports.count("add") == 2
    learned = repository.get("8a1d7a52-9b7e-4c3e-9f0e-1d2c3b4a5f60")
    assert learned.review_state is ReviewState.PENDING
    assert learned.composable_with == ("8a1d7a52-9b7e-4c3e-9f0e-1d2c3b4a5f62",)
    extras = repository.extras.get(learned.id)
    assert extras is not None
    claim = claim_in(extras.frontmatter)
    assert claim is not None and (claim["verification_count"], claim["confidence"]) == (14, "proven")
    assert not repository.exists("8a1d7a52-9b7e-4c3e-9f0e-1d2c3b4a5f61")  # hand_authored
    assert plan_pull(repository, engine_library).changes == 0
