"""A library the engine wrote (nothing but D057's DDL and rows from plain SQL) opens here, and
stays readable by the engine after SkillStudio has opened and edited it."""

from __future__ import annotations

import json
import re
import sqlite3
import struct
from dataclasses import replace
from pathlib import Path

import pytest

from skillstudio.cli.main import main as cli
from skillstudio.model import BuildFocus, ThreatLevel
from skillstudio.store import Database, SkillQuery, SkillRepository
from skillstudio.store.backends.sqlite import fts5_triggers_work_untrusted

SEED = Path(__file__).resolve().parents[2] / "shared" / "seeds" / "000_3021df4a98b836ec.txt"
D057_TABLES = ("skills", "skills_fts", "skill_embeddings", "skill_compositions")


def seed_ddl() -> str:
    if not SEED.exists():
        pytest.skip(f"the D057 seed is not beside this checkout ({SEED})")
    text = SEED.read_text(encoding="utf-8")
    start = text.index("CREATE TABLE skills (")
    return text[start : text.index("```", start)]


# serde's default JSON of D057's Rust SkillBody, as an engine would write it.
ENGINE_BODY = {
    "StrategicPattern": {
        "situation": {
            "game_phase": "Mid",
            "economy_state": "Behind",
            "army_composition": [["medium_tank", 55], ["rocket_infantry", 45]],
            "enemy_composition_estimate": [["mig", 40], ["heavy_tank", 60]],
            "map_control": 0.31,
            "threat_level": "None",
            "active_tech": ["tier2", "radar_dome"],
        },
        "plan": {
            "priority_targets": [
                {
                    "target_type": "Harass",
                    "position": {"x": 4096, "y": 1024, "z": 0},
                    "priority": 7,
                    "description": "ore trucks at the eastern field",
                },
            ],
            "build_focus": "AntiAir",
            "economic_guidance": {
                "expand": False,
                "harvester_target": 3,
                "sell_structures": ["tech_center"],
                "priority_builds": ["sam_site"],
            },
            "risk_assessment": {
                "threat_level": "High",
                "expected_attack_direction": None,
                "recommended_defense": "sam sites near the refinery",
                "time_pressure": "Immediate",
            },
            "confidence": 640,
            "reasoning": "MiGs are punishing the refinery.",
        },
        "parameter_bindings": [["tech_priority_aa", 80], ["aggression", 20]],
    }
}
ENCOUNTER_BODY = {
    "EncounterPattern": {
        "scene_composition": [
            {"template": "convoy_escort", "values": {"route": "river_road", "convoy_units": ["apc", "apc"]}}
        ],
        "mission_structure": {
            "mission_type": "escort",
            "player_faction": "allies",
            "difficulty": "hard",
            "estimated_minutes": 20,
            "objectives": ["convoy reaches the depot"],
            "outcomes": ["victory", "defeat"],
            "notes": "",
        },
    }
}


def engine_rows() -> list[tuple]:
    return [
        (
            "8a1d7a52-9b7e-4c3e-9f0e-1d2c3b4a5f60",
            "ai_strategy",
            "SAM wall against MiG raids",
            "Answer MiG raids on the refinery with SAM sites and fewer trucks.",
            json.dumps(ENGINE_BODY),
            json.dumps(["anti-air", "mid-game"]),
            "ra1",
            "llm_discovered",
            "some-llm",
            14,
            0.71,
            None,
            "proven",
            31,
            "2026-02-11T08:00:00.000Z",
            "2026-05-01T20:00:00.000Z",
            "2026-04-30T20:00:00.000Z",
        ),
        (
            "8a1d7a52-9b7e-4c3e-9f0e-1d2c3b4a5f61",
            "content_generation",
            "River convoy",
            "An escort along a river road with two ambush points.",
            json.dumps(ENCOUNTER_BODY),
            json.dumps(["escort"]),
            "td",
            "hand_authored",
            None,
            4,
            0.75,
            3.9,
            "established",
            2,
            "2026-01-05T08:00:00Z",
            None,
            None,
        ),
    ]


@pytest.fixture
def engine_library(tmp_path: Path) -> Path:
    path = tmp_path / "gameplay.db"
    with sqlite3.connect(path) as connection:
        connection.executescript(seed_ddl())
        connection.executemany(f"INSERT INTO skills VALUES ({', '.join('?' * 17)})", engine_rows())
        # A row leaning on D057's defaults (verification_count, confidence ... left out).
        connection.execute(
            "INSERT INTO skills (id, domain, name, description, body_json, tags, game_module, source, created_at)"
            " VALUES ('8a1d7a52-9b7e-4c3e-9f0e-1d2c3b4a5f62', 'ai_strategy', 'Few-shot rush reply', 'A reply.',"
            " ?, '[]', 'ra1', 'llm_discovered', '2026-03-03T03:03:03.000Z')",
            (json.dumps({"VerifiedExample": {"prompt_context": "Enemy rushes.", "response": "{}"}}),),
        )
        connection.execute(
            "INSERT INTO skill_embeddings VALUES (?, ?, 'embed-small')",
            ("8a1d7a52-9b7e-4c3e-9f0e-1d2c3b4a5f60", struct.pack("<4f", 0.1, 0.2, 0.3, 0.4)),
        )
        connection.execute(
            "INSERT INTO skill_compositions VALUES (?, ?, 3)",
            ("8a1d7a52-9b7e-4c3e-9f0e-1d2c3b4a5f60", "8a1d7a52-9b7e-4c3e-9f0e-1d2c3b4a5f62"),
        )
    return path


def d057_schema(path: Path) -> dict[str, object]:
    """What sqlite3 shows of D057's tables: their SQL and their columns."""
    with sqlite3.connect(path) as connection:
        shown: dict[str, object] = {}
        for table in D057_TABLES:
            sql = connection.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()
            columns = connection.execute(f"PRAGMA table_info({table})").fetchall()
            shown[table] = (sql, columns)
        return shown


def all_rows(path: Path, table: str) -> list[tuple]:
    with sqlite3.connect(path) as connection:
        return connection.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()


def test_our_copy_of_the_ddl_is_the_seeds() -> None:
    ours = (Path(__file__).resolve().parents[1] / "skillstudio" / "store" / "d057_schema.sql").read_text()
    assert seed_ddl().strip() in ours


def test_engine_rows_open_list_and_search(engine_library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows_before = {
        table: all_rows(engine_library, table) for table in ("skills", "skill_embeddings", "skill_compositions")
    }
    with Database(engine_library) as database:
        repository = SkillRepository(database)
        assert repository.count() == 3
        # D057's DDL has no triggers: the engine's rows only become searchable once we rebuilt.
        assert repository.query(SkillQuery(text="refin")).ids == ["8a1d7a52-9b7e-4c3e-9f0e-1d2c3b4a5f60"]
        assert repository.query(SkillQuery(text="river")).ids == ["8a1d7a52-9b7e-4c3e-9f0e-1d2c3b4a5f61"]
        skill = repository.get("8a1d7a52-9b7e-4c3e-9f0e-1d2c3b4a5f60")
        assert skill.body.plan.build_focus is BuildFocus.ANTI_AIR
        assert skill.body.situation.threat_level is ThreatLevel.NONE
        assert skill.composable_with == ("8a1d7a52-9b7e-4c3e-9f0e-1d2c3b4a5f62",)
        defaults = repository.get("8a1d7a52-9b7e-4c3e-9f0e-1d2c3b4a5f62")
        assert defaults.quality.verification_count == 0 and defaults.created_by == "unknown"
    # Opening added our tables and triggers but changed no D057 row.
    for table, rows in rows_before.items():
        assert all_rows(engine_library, table) == rows

    assert cli(["list", "--db", str(engine_library), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["total"] == 3
    assert {s["name"] for s in listed["skills"]} == {
        "SAM wall against MiG raids",
        "River convoy",
        "Few-shot rush reply",
    }


def test_d057_tables_are_unchanged_after_opening_and_editing(engine_library: Path) -> None:
    schema_before = d057_schema(engine_library)
    untouched_before = [row for row in all_rows(engine_library, "skills") if row[0].endswith("61")]
    with Database(engine_library) as database:
        repository = SkillRepository(database)
        skill = repository.get("8a1d7a52-9b7e-4c3e-9f0e-1d2c3b4a5f60")
        repository.update(replace(skill, name="SAM wall against MiGs", tags=(*skill.tags, "refinery")))
        repository.trash.delete("8a1d7a52-9b7e-4c3e-9f0e-1d2c3b4a5f62")
        repository.trash.restore("8a1d7a52-9b7e-4c3e-9f0e-1d2c3b4a5f62")
    assert d057_schema(engine_library) == schema_before
    assert [row for row in all_rows(engine_library, "skills") if row[0].endswith("61")] == untouched_before
    with sqlite3.connect(engine_library) as connection:
        name, tags, rate, uses = connection.execute(
            "SELECT name, tags, success_rate, use_count FROM skills WHERE id LIKE '%60'"
        ).fetchone()
        assert (name, json.loads(tags), rate, uses) == (
            "SAM wall against MiGs",
            ["anti-air", "mid-game", "refinery"],
            0.71,
            31,
        )
        extension = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {table for table in extension if not table.startswith(("skill", "sqlite_"))} == {
            "studio_schema_migrations",
            "studio_skill_meta",
            "studio_skill_versions",
            "studio_revisions",
            "studio_audit_log",
            "studio_trash",
            "studio_verifications",
            "studio_skill_extras",
            "studio_verification_runs",
            "studio_run_skills",
            "studio_run_games",
            "studio_skill_intervals",
            "studio_play_imports",
            "studio_review_decisions",
            "studio_risk_findings",
            "studio_embedding_meta",
            "studio_label_embeddings",
            "studio_retrieval_changes",
            "studio_agent_writes",
            "studio_package_keys",
            "studio_privacy_marks",
            "studio_settings",
            "studio_run_baseline_games",
            "studio_run_lifts",
            "studio_run_decisions",
            "studio_run_pairs",
            "studio_tag_counts",
            "studio_creator_counts",
            # migration 16's search index and FTS5's shadow tables of it
            "studio_search_fts",
            *(f"studio_search_fts_{part}" for part in ("data", "idx", "config", "docsize")),
        }
        # No foreign keys from our tables, so they can never block or cascade an engine write.
        for table in extension:
            if table.startswith("studio_"):
                assert connection.execute(f"PRAGMA foreign_key_list({table})").fetchall() == []


def test_engine_can_still_write_after_skillstudio_opened_the_file(engine_library: Path) -> None:
    Database(engine_library).close()
    with sqlite3.connect(engine_library) as engine:
        engine.execute("PRAGMA foreign_keys = ON")
        if fts5_triggers_work_untrusted():
            engine.execute("PRAGMA trusted_schema = OFF")  # as D034 asks, where this SQLite allows it
        row = list(engine_rows()[0])
        row[0], row[2] = "8a1d7a52-9b7e-4c3e-9f0e-1d2c3b4a5f70", "Tesla perimeter"
        engine.execute(f"INSERT INTO skills VALUES ({', '.join('?' * 17)})", row)
        engine.execute("INSERT OR REPLACE INTO skills SELECT * FROM skills WHERE id LIKE '%61'")
        engine.execute("DELETE FROM skill_compositions")
        engine.execute("DELETE FROM skill_embeddings")
        engine.execute("DELETE FROM skills WHERE id LIKE '%62'")
    with Database(engine_library) as database:
        repository = SkillRepository(database)
        assert repository.query(SkillQuery(text="tesla")).ids == ["8a1d7a52-9b7e-4c3e-9f0e-1d2c3b4a5f70"]
        assert repository.query(SkillQuery(text="river")).ids == ["8a1d7a52-9b7e-4c3e-9f0e-1d2c3b4a5f61"]
        assert repository.count() == 3
        with database.engine.connect() as connection:  # the FTS index agrees with its content
            connection.exec_driver_sql("INSERT INTO skills_fts(skills_fts) VALUES ('integrity-check')")


def test_sqlite3_shell_shows_the_same_d057_schema(engine_library: Path) -> None:
    """The seed DDL's text survives verbatim in sqlite_master (what `sqlite3 .schema` prints)."""
    Database(engine_library).close()
    for table, (sql, _columns) in d057_schema(engine_library).items():
        statement = re.search(rf"CREATE (?:VIRTUAL )?TABLE {table}\b.*?\)\s*(?=;)", seed_ddl(), re.DOTALL)
        assert statement is not None
        assert sql[0] == statement.group(0).strip()
