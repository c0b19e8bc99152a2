"""Studio settings: defaults, the user's file, the library's overrides, refusal, `config`."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from skillstudio.cli.main import main as cli
from skillstudio.model import Confidence, ValidationError
from skillstudio.model.evidence import EvidenceKind, VerificationRecord
from skillstudio.store import Actor, AuditAction, ChangeKind, Database, QualityOutcome, SkillRepository
from skillstudio.store.migrations import D057_TABLES, MIGRATIONS, _split_statements, d057_statements
from skillstudio.store.settings import (
    DEFAULTS,
    effective_settings,
    load_user_values,
    resolve,
    save_user_values,
    to_values,
    user_settings_path,
)
from tests.factories import ai_skill
from tests.outside import engine_writes


def refusals(*layers: dict[str, object]) -> list[str]:
    with pytest.raises(ValidationError) as caught:
        resolve(*layers)
    return [str(issue) for issue in caught.value.issues]


def test_defaults_are_d057s_numbers() -> None:
    values = to_values(DEFAULTS)
    assert values["thresholds.candidate"] == 0.40
    assert (values["thresholds.established"], values["thresholds.established_games"]) == (0.60, 3)
    assert (values["thresholds.proven"], values["thresholds.proven_games"]) == (0.70, 10)
    assert values["reference_opponent"] == "IC Default Hard"
    assert (values["headless_max_tier"], values["demote_on_verify"]) == ("tentative", False)
    assert (values["prune.stale_days"], values["prune.unused_days"], values["prune.max_size"]) == (30, 90, None)
    assert resolve(values) == DEFAULTS  # every key round-trips


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("thresholds.proven", 1.4, "thresholds.proven: 1.4 is not a rate between 0 and 1"),
        ("thresholds.candidate", True, "thresholds.candidate: true is not a rate between 0 and 1"),
        ("thresholds.proven_games", 2.5, "thresholds.proven_games: 2.5 is not a whole number of games"),
        ("thresholds.content_established_rating", 6, "thresholds.content_established_rating: 6 is not a rating"),
        ("headless_max_tier", "legendary", "headless_max_tier: 'legendary' is not a tier"),
        ("demote_on_verify", "yes", "demote_on_verify: 'yes' is not true or false"),
        ("reference_opponent", "", "reference_opponent: "),
        ("prune.stale_days", 0, "prune.stale_days: 0 is not a whole number of days"),
        ("thresholds.provn", 0.8, "thresholds.provn: unknown setting"),
    ],
)
def test_a_bad_value_is_refused_with_its_key_and_why(key: str, value: object, message: str) -> None:
    assert refusals({key: value})[0].startswith(message)


def test_overlapping_tiers_are_refused_at_the_key_being_set() -> None:
    assert refusals({"thresholds.established": 0.8}) == [
        "thresholds.established: 0.8 is above thresholds.proven (0.7); a higher tier needs a higher bar"
    ]
    assert refusals({"thresholds.proven": 0.5}) == [
        "thresholds.proven: 0.5 is below thresholds.established (0.6); a higher tier needs a higher bar"
    ]
    assert resolve({"thresholds.established": 0.8, "thresholds.proven": 0.9}).thresholds.proven == 0.9


def test_user_file_round_trip_and_refusal_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "settings.yaml"
    assert load_user_values(path) == {}
    save_user_values({"thresholds.proven": 0.75, "headless_max_tier": "established"}, path)
    assert "thresholds:\n  proven: 0.75" in path.read_text()  # nested as a person writes it
    assert load_user_values(path) == {"thresholds.proven": 0.75, "headless_max_tier": "established"}
    before = path.read_bytes()
    with pytest.raises(ValidationError, match=r"thresholds.proven: 1.4 is not a rate"):
        save_user_values({"thresholds.proven": 1.4}, path)
    assert path.read_bytes() == before
    path.write_text("thresholds:\n  proven: [1]\nnope: 1\n")
    with pytest.raises(ValidationError) as caught:
        load_user_values(path)
    assert [issue.path for issue in caught.value.issues] == ["nope"]  # unknown keys first: nothing half-read
    path.write_text("thresholds: {proven: [1]}\n")
    with pytest.raises(ValidationError, match=r"thresholds.proven: a list is not a rate"):
        load_user_values(path)
    path.write_text("{{{ not yaml")
    with pytest.raises(ValidationError, match="cannot be read as YAML"):
        load_user_values(path)


def test_layers_default_user_library(tmp_path: Path, library_target: str) -> None:
    user = tmp_path / "settings.yaml"
    save_user_values({"thresholds.proven": 0.75, "prune.stale_days": 45}, user)
    with Database(library_target) as database:
        repository = SkillRepository(database, Actor("ana"))
        heard = []
        database.changes.subscribe(heard.append)
        repository.settings.set("thresholds.proven", 0.8, below=load_user_values(user))
        repository.settings.set("headless_max_tier", "proven", below=load_user_values(user))
        effective = effective_settings(database, user_path=user)
        assert effective.settings.thresholds.proven == 0.8
        assert effective.settings.headless_max_tier is Confidence.PROVEN
        assert effective.settings.prune.stale_days == 45
        sources = {key: effective.source(key) for key in ("thresholds.proven", "prune.stale_days", "decay_tier")}
        assert sources == {"thresholds.proven": "library", "prune.stale_days": "user", "decay_tier": "default"}
        # every change is audited (who, what from, what to) and announced
        entries = repository.history.audit()
        assert entries[0].action == AuditAction.SETTINGS.value and entries[0].actor == "ana"
        assert entries[0].details == {"changed": {"headless_max_tier": {"to": "proven"}}}
        assert heard and all(change.touches(ChangeKind.SETTINGS) for change in heard)
        with pytest.raises(ValidationError, match=r"thresholds.proven: 2 is not a rate"):
            repository.settings.set("thresholds.proven", 2, below={})
        assert repository.settings.values()["thresholds.proven"] == 0.8  # nothing written
        repository.settings.unset("thresholds.proven", below={})
        assert effective_settings(database, user_path=user).settings.thresholds.proven == 0.75


def test_a_value_another_program_stored_is_refused_by_key_and_can_be_removed(
    tmp_path: Path, library_target: str
) -> None:
    path = library_target
    with engine_writes(path) as connection:
        connection.execute("INSERT INTO studio_settings VALUES ('thresholds.proven', 'not json', 'x', 'y')")
    with Database(path) as database:
        with pytest.raises(ValidationError, match=r"thresholds.proven: 'not json' is not a rate"):
            effective_settings(database, user_path=tmp_path / "none.yaml")
        SkillRepository(database).settings.unset("thresholds.proven", below={})
        assert effective_settings(database, user_path=tmp_path / "none.yaml").settings == DEFAULTS


def test_config_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "lib.db"
    assert cli(["init", str(db)]) == 0
    assert cli(["config", "set", "thresholds.proven", "1.4"]) == 1
    assert "thresholds.proven: 1.4 is not a rate between 0 and 1" in capsys.readouterr().err
    assert not user_settings_path().exists()  # refused: nothing written
    assert cli(["config", "set", "thresholds.proven", "0.75"]) == 0
    assert cli(["config", "set", "headless_max_tier", "established", "--library", "--db", str(db)]) == 0
    capsys.readouterr()
    assert cli(["config", "get", "--db", str(db), "--json"]) == 0
    rows = {row["key"]: row for row in json.loads(capsys.readouterr().out)["settings"]}
    assert (rows["thresholds.proven"]["value"], rows["thresholds.proven"]["source"]) == (0.75, "user")
    assert (rows["headless_max_tier"]["value"], rows["headless_max_tier"]["source"]) == ("established", "library")
    assert (rows["thresholds.candidate"]["value"], rows["thresholds.candidate"]["source"]) == (0.4, "default")
    assert cli(["config", "get", "thresholds.proven", "--db", str(db)]) == 0
    assert capsys.readouterr().out.strip() == "0.75"
    assert cli(["config", "get", "--library", "--db", str(db)]) == 0
    assert capsys.readouterr().out.split() == ["headless_max_tier", "established", "(library)"]
    assert cli(["config", "unset", "headless_max_tier", "--library", "--db", str(db)]) == 0
    assert cli(["config", "unset", "thresholds.proven"]) == 0
    capsys.readouterr()
    assert cli(["config", "get", "thresholds.proven", "--db", str(db)]) == 0
    assert capsys.readouterr().out.strip() == "0.7"
    # a bad value written by hand stops what needs the settings, names itself, and can be removed
    user_settings_path().write_text("thresholds:\n  proven: 7\nprune:\n  stale_days: 45\n")
    assert cli(["config", "get", "--db", str(db)]) == 1
    assert "thresholds.proven: 7 is not a rate between 0 and 1" in capsys.readouterr().err
    assert cli(["config", "unset", "thresholds.proven"]) == 0
    assert load_user_values() == {"prune.stale_days": 45}


def test_migration_11_keeps_the_evidence_and_allows_gameplay(tmp_path: Path) -> None:
    """A library at schema 10 with evidence rows: the rebuilt table keeps every row, its id and
    run key, and takes the new kind."""
    path = tmp_path / "v10.db"
    with sqlite3.connect(path) as connection:
        for table in D057_TABLES:
            connection.execute(d057_statements()[table])
        connection.execute(
            "CREATE TABLE studio_schema_migrations (version INTEGER PRIMARY KEY, applied_at, description)"
        )
        for migration in MIGRATIONS:
            if migration.version <= 10:
                for statement in _split_statements(migration.sql):
                    connection.execute(statement)
                connection.execute("INSERT INTO studio_schema_migrations VALUES (?, 'then', '')", (migration.version,))
        connection.execute(
            "INSERT INTO studio_verifications (id, skill_id, recorded_at, kind, wins, losses, run_id)"
            " VALUES (7, 'a', '2026-01-01T00:00:00.000Z', 'headless', 3, 1, 'run1')"
        )
        with pytest.raises(sqlite3.IntegrityError):
            connection.execute(
                "INSERT INTO studio_verifications (skill_id, recorded_at, kind) VALUES ('a', 'x', 'gameplay')"
            )
    with Database(path) as database:
        repository = SkillRepository(database)
        skill = repository.create(ai_skill())
        [old] = repository.evidence.verifications("a")
        assert (old.kind, old.wins, old.losses) == (EvidenceKind.HEADLESS, 3, 1)
        record = VerificationRecord("2026-02-01T00:00:00.000Z", EvidenceKind.GAMEPLAY, 2, 1, opponent="a player")
        repository.evidence.set_quality(skill.id, QualityOutcome(skill.quality), record=record)
        assert repository.evidence.verifications(skill.id)[0].kind is EvidenceKind.GAMEPLAY
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT id, run_id FROM studio_verifications WHERE skill_id = 'a'").fetchall() == [
            (7, "run1")
        ]
        indexes = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert {"studio_verifications_skill", "studio_verifications_run_skill"} <= indexes


def test_prune_limits_come_from_the_settings(library_target: str) -> None:
    from datetime import UTC, datetime, timedelta

    from skillstudio.model import Quality
    from skillstudio.packages.prune import plan_prune

    now = datetime(2026, 9, 1, tzinfo=UTC)
    old = (now - timedelta(days=100)).isoformat().replace("+00:00", "Z")
    with Database(library_target) as database:
        repository = SkillRepository(database, Actor("ana"))
        stale = ai_skill(
            created_at=old, last_used=old, use_count=3, quality=Quality(0, 0.0, None, Confidence.TENTATIVE, old)
        )
        keep = ai_skill(  # proven, used recently, no better rate than stale: nothing to prune it for
            created_at=old,
            last_used=now.isoformat().replace("+00:00", "Z"),
            use_count=3,
            quality=Quality(0, 0.0, None, Confidence.PROVEN, old),
        )
        repository.create_many([stale, keep])
        assert [c.skill_id for c in plan_prune(repository, now=now)] == [stale.id]  # D057: 30 days
        repository.settings.save({"prune.stale_days": 120, "prune.unused_days": 365}, below={})
        assert plan_prune(repository, now=now) == []
        repository.settings.save({"prune.stale_days": 120, "prune.unused_days": 365, "prune.max_size": 1}, below={})
        [capped] = plan_prune(repository, now=now)
        assert capped.skill_id == stale.id and "above 1 skills" in capped.reason
        assert len(plan_prune(repository, now=now, max_size=0)) == 2  # `prune --max-size` overrides
