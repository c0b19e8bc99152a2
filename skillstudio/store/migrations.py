"""The library schema: D057's four tables, verbatim, plus SkillStudio's extension tables.

Rules that keep a file readable by the engine (docs/storage.md):

* D057's tables are created from ``d057_schema.sql`` exactly as the decision writes them and
  are never altered; what they lack lives in ``studio_*`` tables keyed by skill id.
* Our tables have no foreign keys to D057's: with ``foreign_keys=ON`` such a key would make the
  engine's own ``DELETE FROM skills`` fail, or cascade away our data on ``INSERT OR REPLACE``.
* Triggers on ``skills`` (fired by any writer, the engine included) keep the FTS5 index and the
  content version counter current; they only write to our tables and ``skills_fts``.
* Our schema version lives in ``studio_schema_migrations``, not in ``PRAGMA user_version`` or
  ``_schema_meta``: in IC's ``gameplay.db`` those belong to the engine's own migrations.
* Migrations only move forward; a file from a newer SkillStudio is refused, not downgraded.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from importlib.resources import files
from textwrap import dedent
from typing import TYPE_CHECKING

from sqlalchemy import Connection, text

from skillstudio.model.validation import utc_now
from skillstudio.store.errors import LibraryTooNew, LibraryTooOld, NotALibrary
from skillstudio.store.search_folding import unicode61_folding
from skillstudio.store.snapshots import compress_snapshot_text

if TYPE_CHECKING:
    from skillstudio.store.database import Database

D057_TABLES = ("skills", "skills_fts", "skill_embeddings", "skill_compositions")
D057_SKILL_COLUMNS = (
    "id",
    "domain",
    "name",
    "description",
    "body_json",
    "tags",
    "game_module",
    "source",
    "model_id",
    "verification_count",
    "success_rate",
    "average_rating",
    "confidence",
    "use_count",
    "created_at",
    "last_used",
    "last_verified",
)

# Columns whose change makes a stored skill a different skill for an editor holding a copy.
# Quality, use_count and last_used are left out: the engine bumps them during play, and
# SkillStudio's updates never overwrite them (they are owned by verification and play).
CONTENT_COLUMNS = (
    "domain",
    "name",
    "description",
    "body_json",
    "tags",
    "game_module",
    "source",
    "model_id",
    "created_at",
)


def d057_statements() -> dict[str, str]:
    """D057's DDL, one CREATE statement per table name, in the decision's order."""
    ddl = files("skillstudio.store").joinpath("d057_schema.sql").read_text(encoding="utf-8")
    statements = [part.strip() for part in ddl.split(";") if "CREATE" in part]
    out: dict[str, str] = {}
    for statement in statements:
        match = re.search(r"CREATE (?:VIRTUAL )?TABLE (\w+)", statement)
        assert match, statement
        out[match.group(1)] = statement
    return out


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    sql: str  # SQLite's statements
    # What SQL cannot do (compressing with zlib), run after ``sql`` in the same transaction.
    python: Callable[[Connection], None] | None = None
    # PostgreSQL's statements (``postgresql_schema.sql`` already holds every migration up to
    # POSTGRESQL_BASELINE; each later one must carry them, one statement per "-- ;;" line), or
    # what builds them from what the server has.
    postgresql: str | Callable[[Connection], str] = ""

    def postgresql_script(self, connection: Connection) -> str:
        return self.postgresql(connection) if callable(self.postgresql) else self.postgresql


# A migration a team library's schema does not need: recorded as applied, nothing else runs
# (an empty script is refused as forgotten).
POSTGRESQL_UNCHANGED = "SELECT 1"

_CONTENT = ", ".join(CONTENT_COLUMNS)


def _fts_triggers(index: str, prefix: str) -> str:
    """The triggers ``{prefix}_insert/_delete/_update`` that keep the external-content FTS5
    table ``index`` over ``skills`` in step with it (the sqlite-utils pattern). IF NOT EXISTS:
    a file SkillStudio published for an engine has D057's already (packages/gameplay_db.py)."""
    return f"""
        CREATE TRIGGER IF NOT EXISTS {prefix}_insert AFTER INSERT ON skills BEGIN
            INSERT INTO {index}(rowid, name, description, tags)
            VALUES (new.rowid, new.name, new.description, new.tags);
        END;
        CREATE TRIGGER IF NOT EXISTS {prefix}_delete AFTER DELETE ON skills BEGIN
            INSERT INTO {index}({index}, rowid, name, description, tags)
            VALUES ('delete', old.rowid, old.name, old.description, old.tags);
        END;
        CREATE TRIGGER IF NOT EXISTS {prefix}_update AFTER UPDATE OF name, description, tags ON skills
        BEGIN
            INSERT INTO {index}({index}, rowid, name, description, tags)
            VALUES ('delete', old.rowid, old.name, old.description, old.tags);
            INSERT INTO {index}(rowid, name, description, tags)
            VALUES (new.rowid, new.name, new.description, new.tags);
        END;
"""


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "SkillStudio extension tables, FTS5 sync triggers, content versions",
        f"""
        CREATE TABLE studio_skill_meta (
            skill_id        TEXT PRIMARY KEY,
            created_by      TEXT NOT NULL DEFAULT 'unknown',
            engine_version  TEXT NOT NULL DEFAULT '',
            source_id       TEXT,           -- workshop: publisher/name@version
            source_author   TEXT,           -- workshop
            original_id     TEXT,           -- human_refined
            review_state    TEXT CHECK (review_state IN
                                ('pending', 'approved', 'rejected', 'changes_requested'))
        );
        CREATE INDEX studio_skill_meta_original ON studio_skill_meta(original_id);
        CREATE INDEX studio_skill_meta_created_by ON studio_skill_meta(created_by);

        -- Bumped by the triggers below whenever any writer changes a skill's content.
        CREATE TABLE studio_skill_versions (
            skill_id        TEXT PRIMARY KEY,
            version         INTEGER NOT NULL
        );

        CREATE TABLE studio_revisions (
            id              INTEGER PRIMARY KEY,
            skill_id        TEXT NOT NULL,
            number          INTEGER NOT NULL,   -- 1, 2, ... per skill
            version         INTEGER NOT NULL,   -- the content version this snapshot shows
            action          TEXT NOT NULL,      -- create, update, delete, restore, quality, ...
            author          TEXT NOT NULL,
            created_at      TEXT NOT NULL,
            message         TEXT NOT NULL DEFAULT '',
            snapshot        TEXT NOT NULL,      -- the canonical skill document, as JSON
            UNIQUE (skill_id, number)
        );

        CREATE TABLE studio_audit_log (
            id              INTEGER PRIMARY KEY,
            at              TEXT NOT NULL,
            actor           TEXT NOT NULL,
            actor_kind      TEXT NOT NULL CHECK (actor_kind IN ('human', 'agent', 'system')),
            action          TEXT NOT NULL,      -- skill.create, skill.update, skill.delete, ...
            skill_id        TEXT,
            revision        INTEGER,            -- studio_revisions.number written with it
            details         TEXT NOT NULL DEFAULT '{{}}'
        );
        CREATE INDEX studio_audit_log_skill ON studio_audit_log(skill_id);
        CREATE INDEX studio_audit_log_at ON studio_audit_log(at);

        CREATE TABLE studio_trash (
            skill_id        TEXT PRIMARY KEY,
            deleted_at      TEXT NOT NULL,
            deleted_by      TEXT NOT NULL,
            message         TEXT NOT NULL DEFAULT '',
            snapshot        TEXT NOT NULL,      -- the canonical skill document, as JSON
            embedding       BLOB,
            embedding_model TEXT,
            compositions    TEXT NOT NULL DEFAULT '[]'  -- [[skill_a, skill_b, success_count]]
        );

        CREATE TABLE studio_verifications (
            id              INTEGER PRIMARY KEY,
            skill_id        TEXT NOT NULL,
            recorded_at     TEXT NOT NULL,
            kind            TEXT NOT NULL CHECK (kind IN ('headless', 'play')),
            opponent        TEXT,
            wins            INTEGER NOT NULL DEFAULT 0,
            losses          INTEGER NOT NULL DEFAULT 0,
            draws           INTEGER NOT NULL DEFAULT 0,
            errors          INTEGER NOT NULL DEFAULT 0,
            rating          REAL,
            rated           INTEGER NOT NULL DEFAULT 0,
            engine_version  TEXT NOT NULL DEFAULT '',
            body_hash       TEXT NOT NULL DEFAULT '',
            note            TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX studio_verifications_skill ON studio_verifications(skill_id, recorded_at);

        -- Indexes for the browser's filters and sorts (indexes do not change D057's tables).
        CREATE INDEX studio_skills_domain ON skills(domain);
        CREATE INDEX studio_skills_module ON skills(game_module);
        CREATE INDEX studio_skills_confidence ON skills(confidence);
        CREATE INDEX studio_skills_name ON skills(name COLLATE NOCASE);

        -- External-content FTS5 kept in sync (D057's DDL has no triggers).
        {_fts_triggers("skills_fts", "studio_skills_fts")}

        CREATE TRIGGER studio_skills_version_insert AFTER INSERT ON skills BEGIN
            INSERT OR IGNORE INTO studio_skill_versions(skill_id, version) VALUES (new.id, 0);
            UPDATE studio_skill_versions SET version = version + 1 WHERE skill_id = new.id;
        END;
        CREATE TRIGGER studio_skills_version_update AFTER UPDATE OF {_CONTENT} ON skills BEGIN
            INSERT OR IGNORE INTO studio_skill_versions(skill_id, version) VALUES (new.id, 0);
            UPDATE studio_skill_versions SET version = version + 1 WHERE skill_id = new.id;
        END;

        -- Rows an engine wrote before SkillStudio first opened the file.
        INSERT OR IGNORE INTO studio_skill_versions(skill_id, version) SELECT id, 1 FROM skills;
        INSERT INTO skills_fts(skills_fts) VALUES ('rebuild');
        """,
    ),
)

MIGRATIONS += (
    Migration(
        2,
        "Indexes for 100k-skill libraries: a narrow covering index for listings, compositions by skill_b",
        """
        -- Listing, filtering and sorting read these columns only; skills rows carry ~3 KB of
        -- body_json each, so scanning this index instead of the table reads ~20x less.
        CREATE INDEX studio_skills_browse ON skills(
            domain, game_module, confidence, source, name COLLATE NOCASE, id, success_rate,
            verification_count, average_rating, use_count, created_at, last_verified, last_used, tags
        );
        DROP INDEX studio_skills_name;
        CREATE INDEX studio_skills_by_name ON skills(name COLLATE NOCASE, id);
        -- D057 keys compositions on (skill_a, skill_b); a skill's partners are also looked up
        -- by skill_b.
        CREATE INDEX studio_compositions_b ON skill_compositions(skill_b);
        """,
    ),
)

MIGRATIONS += (
    Migration(
        3,
        "Imported-skill extras: origin, SKILL.md frontmatter and files, import warnings",
        """
        -- What an import brings that D057's row has no place for (docs/storage.md): where the
        -- skill came from (a Workshop package or a folder), a SKILL.md skill's extra
        -- frontmatter and its scripts/references/assets files, and the warnings a lenient
        -- import attached for the reviewer. Keyed by skill id, no foreign key (see above).
        CREATE TABLE studio_skill_extras (
            skill_id    TEXT PRIMARY KEY,
            origin      TEXT NOT NULL DEFAULT '',
            frontmatter TEXT NOT NULL DEFAULT '{}',
            files       TEXT NOT NULL DEFAULT '{}',
            warnings    TEXT NOT NULL DEFAULT '[]'
        );
        CREATE INDEX studio_skill_extras_origin ON studio_skill_extras(origin);
        """,
    ),
)

MIGRATIONS += (
    Migration(
        4,
        "Verification runs, their games, current Wilson intervals, imported plays",
        """
        -- Verification batches (docs/verification.md). A run is written when it starts, each
        -- game as its chunk returns (small transactions), so a killed batch loses at most the
        -- games in flight and `verify --resume` plays only what is missing. No foreign keys to
        -- D057's tables (see above); skill rows are joined by id when read.
        CREATE TABLE studio_verification_runs (
            id             TEXT PRIMARY KEY,
            kind           TEXT NOT NULL DEFAULT 'verify',    -- verify | revalidate
            status         TEXT NOT NULL DEFAULT 'running',   -- running | finished | cancelled | failed
            opponent       TEXT NOT NULL,
            engine         TEXT NOT NULL DEFAULT '[]',        -- argv as JSON; [] = built-in engine
            engine_version TEXT NOT NULL DEFAULT '',
            executor       TEXT NOT NULL,
            seed           INTEGER NOT NULL,
            games          INTEGER NOT NULL,                  -- asked, per skill
            chunk_games    INTEGER NOT NULL,
            actor          TEXT NOT NULL,
            options        TEXT NOT NULL DEFAULT '{}',
            started_at     TEXT NOT NULL,
            finished_at    TEXT,
            message        TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX studio_verification_runs_started ON studio_verification_runs(started_at);
        -- One row per skill of a run: what it was verified as, and its result once applied.
        CREATE TABLE studio_run_skills (
            run_id            TEXT NOT NULL,
            skill_id          TEXT NOT NULL,
            position          INTEGER NOT NULL,
            game_module       TEXT NOT NULL,
            body_hash         TEXT NOT NULL,
            confidence_before TEXT NOT NULL,
            confidence_after  TEXT,
            wins              INTEGER NOT NULL DEFAULT 0,
            losses            INTEGER NOT NULL DEFAULT 0,
            draws             INTEGER NOT NULL DEFAULT 0,
            errors            INTEGER NOT NULL DEFAULT 0,
            success_rate      REAL,
            wilson_low        REAL,
            wilson_high       REAL,
            applied_at        TEXT,                           -- NULL until its games are applied
            note              TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (run_id, skill_id)
        );
        CREATE INDEX studio_run_skills_skill ON studio_run_skills(skill_id);
        -- One row per game played (error games included, with the reason).
        CREATE TABLE studio_run_games (
            run_id           TEXT NOT NULL,
            skill_id         TEXT NOT NULL,
            game             INTEGER NOT NULL,
            seed             INTEGER,
            outcome          TEXT NOT NULL,                   -- win | loss | draw | error
            duration_s       REAL,
            resource_delta   REAL,
            army_value_delta REAL,
            map_control      REAL,
            error            TEXT,
            engine_version   TEXT NOT NULL DEFAULT '',
            recorded_at      TEXT NOT NULL,
            PRIMARY KEY (run_id, skill_id, game)
        ) WITHOUT ROWID;
        -- The Wilson 95% interval of each skill's current success_rate (D057's row has no place
        -- for it).
        CREATE TABLE studio_skill_intervals (
            skill_id    TEXT PRIMARY KEY,
            successes   INTEGER NOT NULL,
            trials      INTEGER NOT NULL,
            wilson_low  REAL NOT NULL,
            wilson_high REAL NOT NULL,
            updated_at  TEXT NOT NULL
        );
        -- Plays imported by `record`, by idempotency key: importing a file twice adds nothing.
        CREATE TABLE studio_play_imports (
            key         TEXT PRIMARY KEY,
            skill_id    TEXT NOT NULL,
            source      TEXT NOT NULL DEFAULT '',
            imported_at TEXT NOT NULL,
            play        TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX studio_play_imports_skill ON studio_play_imports(skill_id);
        """,
    ),
)

MIGRATIONS += (
    Migration(
        5,
        "Review decisions (reviewer, time, comment) and stored risk findings",
        """
        -- Every review decision on a skill (docs/review.md): the state it set, who, when, why,
        -- and the revision it produced. studio_skill_meta.review_state stays the current state.
        CREATE TABLE studio_review_decisions (
            id        INTEGER PRIMARY KEY,
            skill_id  TEXT NOT NULL,
            state     TEXT NOT NULL,     -- pending | approved | rejected | changes_requested
            reviewer  TEXT NOT NULL,
            reviewer_kind TEXT NOT NULL DEFAULT 'human',
            at        TEXT NOT NULL,
            comment   TEXT NOT NULL DEFAULT '',
            revision  INTEGER
        );
        CREATE INDEX studio_review_decisions_skill ON studio_review_decisions(skill_id, id);
        -- What the risk linter (skillstudio/review/linter.py) found in a skill's current content,
        -- replaced whenever the skill is linted again. field/start/end point at the span.
        CREATE TABLE studio_risk_findings (
            skill_id  TEXT NOT NULL,
            position  INTEGER NOT NULL,
            rule      TEXT NOT NULL,
            severity  TEXT NOT NULL,     -- info | low | medium | high
            reason    TEXT NOT NULL,
            field     TEXT NOT NULL DEFAULT '',
            start     INTEGER NOT NULL DEFAULT 0,
            "end"     INTEGER NOT NULL DEFAULT 0,
            excerpt   TEXT NOT NULL DEFAULT '',
            version   INTEGER NOT NULL DEFAULT 0,  -- the content version that was linted
            linted_at TEXT NOT NULL,
            PRIMARY KEY (skill_id, position)
        );
        """,
    ),
)

MIGRATIONS += (
    Migration(
        6,
        "Embedding freshness and a change log for in-memory vector indexes",
        """
        -- What each vector in D057's skill_embeddings was computed from (docs/retrieval.md): a
        -- vector is stale when the description's hash no longer matches. A vector without a row
        -- here was written by someone else (an engine) and is taken as current.
        CREATE TABLE studio_embedding_meta (
            skill_id           TEXT PRIMARY KEY,
            model_id           TEXT NOT NULL,
            description_sha256 TEXT NOT NULL,   -- '' once the description changed
            embedded_at        TEXT NOT NULL
        );
        -- A description changed by any writer makes its vector stale, ours or an engine's.
        CREATE TRIGGER studio_embedding_stale AFTER UPDATE OF description ON skills
        WHEN old.description IS NOT new.description BEGIN
            INSERT OR REPLACE INTO studio_embedding_meta(skill_id, model_id, description_sha256, embedded_at)
            SELECT new.id, e.model_id, '', COALESCE(
                (SELECT embedded_at FROM studio_embedding_meta WHERE skill_id = new.id), '')
            FROM skill_embeddings e WHERE e.skill_id = new.id;
        END;
        CREATE TRIGGER studio_embedding_meta_gone AFTER DELETE ON skill_embeddings BEGIN
            DELETE FROM studio_embedding_meta WHERE skill_id = old.skill_id;
        END;
        -- A second vector per skill, of its label (name and tags), in the same model's space:
        -- descriptions alone leave out the words a skill is best known by. Retrieval combines
        -- both; D057's skill_embeddings keeps the description's vector, as the engine expects.
        CREATE TABLE studio_label_embeddings (
            skill_id     TEXT PRIMARY KEY,
            model_id     TEXT NOT NULL,
            embedding    BLOB NOT NULL,     -- f32 little-endian, like skill_embeddings
            text_sha256  TEXT NOT NULL,     -- of the label text it was computed from
            embedded_at  TEXT NOT NULL
        );
        CREATE TRIGGER studio_label_embedding_gone AFTER DELETE ON skills BEGIN
            DELETE FROM studio_label_embeddings WHERE skill_id = old.id;
        END;

        -- Skills whose vector or retrieval filters changed, by any writer: an in-memory vector
        -- index replays this log instead of reloading 100k vectors after every write.
        CREATE TABLE studio_retrieval_changes (
            seq      INTEGER PRIMARY KEY AUTOINCREMENT,
            skill_id TEXT NOT NULL
        );
        CREATE TRIGGER studio_retrieval_embedding_insert AFTER INSERT ON skill_embeddings BEGIN
            INSERT INTO studio_retrieval_changes(skill_id) VALUES (new.skill_id);
        END;
        CREATE TRIGGER studio_retrieval_embedding_update AFTER UPDATE ON skill_embeddings BEGIN
            INSERT INTO studio_retrieval_changes(skill_id) VALUES (new.skill_id);
        END;
        CREATE TRIGGER studio_retrieval_embedding_delete AFTER DELETE ON skill_embeddings BEGIN
            INSERT INTO studio_retrieval_changes(skill_id) VALUES (old.skill_id);
        END;
        CREATE TRIGGER studio_retrieval_label_insert AFTER INSERT ON studio_label_embeddings BEGIN
            INSERT INTO studio_retrieval_changes(skill_id) VALUES (new.skill_id);
        END;
        CREATE TRIGGER studio_retrieval_label_update AFTER UPDATE ON studio_label_embeddings BEGIN
            INSERT INTO studio_retrieval_changes(skill_id) VALUES (new.skill_id);
        END;
        CREATE TRIGGER studio_retrieval_skill_update AFTER UPDATE OF domain, game_module, confidence ON skills
        BEGIN
            INSERT INTO studio_retrieval_changes(skill_id) VALUES (new.id);
        END;
        CREATE TRIGGER studio_retrieval_skill_delete AFTER DELETE ON skills BEGIN
            INSERT INTO studio_retrieval_changes(skill_id) VALUES (old.id);
        END;
        CREATE TRIGGER studio_retrieval_review_insert AFTER INSERT ON studio_skill_meta BEGIN
            INSERT INTO studio_retrieval_changes(skill_id) VALUES (new.skill_id);
        END;
        CREATE TRIGGER studio_retrieval_review_update AFTER UPDATE OF review_state ON studio_skill_meta BEGIN
            INSERT INTO studio_retrieval_changes(skill_id) VALUES (new.skill_id);
        END;
        """,
    ),
)

MIGRATIONS += (
    Migration(
        7,
        "Verification run claims and at-most-once evidence per (run, skill)",
        """
        -- One runner owns a run at a time (docs/verification.md, "Concurrent runners"): the claim
        -- is taken with a conditional UPDATE inside BEGIN IMMEDIATE and released on exit; a
        -- claim whose process is gone (this host) or whose heartbeat is too old is stale.
        ALTER TABLE studio_verification_runs ADD COLUMN claimed_by TEXT;
        ALTER TABLE studio_verification_runs ADD COLUMN claimed_pid INTEGER;
        ALTER TABLE studio_verification_runs ADD COLUMN claimed_host TEXT;
        ALTER TABLE studio_verification_runs ADD COLUMN claimed_at TEXT;
        ALTER TABLE studio_verification_runs ADD COLUMN heartbeat_at TEXT;
        -- The run a headless evidence row came from: a skill's session of a run is stored at
        -- most once. Rows written before this migration keep NULL (no key, no constraint).
        ALTER TABLE studio_verifications ADD COLUMN run_id TEXT;
        CREATE UNIQUE INDEX studio_verifications_run_skill
            ON studio_verifications(run_id, skill_id) WHERE run_id IS NOT NULL;
        """,
    ),
)

MIGRATIONS += (
    Migration(
        8,
        "Agent write times, for a rate limit that holds across MCP server processes",
        """
        -- When each agent last created or updated a skill (docs/review.md): every MCP server
        -- process of one agent id checks and appends here in one BEGIN IMMEDIATE transaction.
        CREATE TABLE studio_agent_writes (
            id        INTEGER PRIMARY KEY AUTOINCREMENT,
            agent_id  TEXT NOT NULL,
            at        REAL NOT NULL      -- the tool's clock, seconds (wall clock by default)
        );
        CREATE INDEX studio_agent_writes_agent ON studio_agent_writes(agent_id, at);
        """,
    ),
)

MIGRATIONS += (
    Migration(
        9,
        "Package signing keys: the key that first brought each package identity",
        """
        -- Trust on first use (docs/packages.md, "Package identity and trust"): per package
        -- identity (publisher/name), the ed25519 key of the first signed package of it that was
        -- imported. Another key, or an unsigned package, is refused for that identity unless the
        -- user trusts the new key (import --trust-key), which then replaces this row.
        CREATE TABLE studio_package_keys (
            identity     TEXT PRIMARY KEY,  -- publisher/name
            fingerprint  TEXT NOT NULL,     -- sha256 of the raw public key, first 16 hex digits
            public_key   TEXT NOT NULL,     -- base64 of the raw 32-byte public key
            first_seen   TEXT NOT NULL      -- UTC, when this key was first accepted
        );
        """,
    ),
)

MIGRATIONS += (
    Migration(
        10,
        "Privacy false positives: a reviewer's mark on one export privacy finding",
        """
        -- A person marked this privacy finding a false positive (docs/packages.md, "Privacy"):
        -- it then blocks no export and is not redacted. The mark holds for that exact text
        -- (its sha256), so editing the flagged text makes the mark lapse.
        CREATE TABLE studio_privacy_marks (
            skill_id     TEXT NOT NULL,
            field        TEXT NOT NULL,     -- field path, e.g. body.Instructions.text
            kind         TEXT NOT NULL,     -- api_key | email | replay | ...
            text_sha256  TEXT NOT NULL,     -- sha256 of the flagged text
            marked_by    TEXT NOT NULL,
            marked_at    TEXT NOT NULL,     -- UTC
            note         TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (skill_id, field, kind, text_sha256)
        );
        """,
    ),
)

MIGRATIONS += (
    Migration(
        11,
        "Library settings, gameplay evidence, the policy of each run, duplicate games",
        """
        -- Settings this library overrides (docs/verification.md, "Settings"): the policy's
        -- thresholds, the reference opponent, headless_max_tier, demote_on_verify, prune limits.
        -- One row per key that differs from the user's settings; the value is JSON.
        CREATE TABLE studio_settings (
            key         TEXT PRIMARY KEY,   -- e.g. thresholds.proven
            value       TEXT NOT NULL,      -- JSON
            updated_by  TEXT NOT NULL,
            updated_at  TEXT NOT NULL
        );
        -- The policy a run applied (its settings, as JSON), so its tiers can be explained later.
        ALTER TABLE studio_verification_runs ADD COLUMN policy TEXT NOT NULL DEFAULT '{}';
        -- Games of a run identical to games already credited (same skill, body, engine version,
        -- opponent and game seed): played and shown, never counted twice.
        ALTER TABLE studio_run_skills ADD COLUMN duplicates INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX studio_run_games_skill_seed ON studio_run_games(skill_id, seed);
        -- A third kind of evidence: AI match outcomes from real games (`record`). SQLite cannot
        -- change a CHECK constraint, so the table is rebuilt with its rows, ids and indexes.
        CREATE TABLE studio_verifications_new (
            id              INTEGER PRIMARY KEY,
            skill_id        TEXT NOT NULL,
            recorded_at     TEXT NOT NULL,
            kind            TEXT NOT NULL CHECK (kind IN ('headless', 'play', 'gameplay')),
            opponent        TEXT,
            wins            INTEGER NOT NULL DEFAULT 0,
            losses          INTEGER NOT NULL DEFAULT 0,
            draws           INTEGER NOT NULL DEFAULT 0,
            errors          INTEGER NOT NULL DEFAULT 0,
            rating          REAL,
            rated           INTEGER NOT NULL DEFAULT 0,
            engine_version  TEXT NOT NULL DEFAULT '',
            body_hash       TEXT NOT NULL DEFAULT '',
            note            TEXT NOT NULL DEFAULT '',
            run_id          TEXT
        );
        INSERT INTO studio_verifications_new
            SELECT id, skill_id, recorded_at, kind, opponent, wins, losses, draws, errors, rating, rated,
                   engine_version, body_hash, note, run_id
            FROM studio_verifications;
        DROP TABLE studio_verifications;
        ALTER TABLE studio_verifications_new RENAME TO studio_verifications;
        CREATE INDEX studio_verifications_skill ON studio_verifications(skill_id, recorded_at);
        CREATE UNIQUE INDEX studio_verifications_run_skill
            ON studio_verifications(run_id, skill_id) WHERE run_id IS NOT NULL;
        """,
    ),
    Migration(
        12,
        "Lift over the default plan, sequential decisions, verified compositions",
        """
        -- verify --baseline (docs/verification.md, "Lift"): the module's default plan played in
        -- the skill's place with the same seeds, situation and opponent; game i pairs with the
        -- skill's game i of the run (studio_run_games). Error games are kept, with the reason.
        CREATE TABLE studio_run_baseline_games (
            run_id           TEXT NOT NULL,
            skill_id         TEXT NOT NULL,
            game             INTEGER NOT NULL,
            seed             INTEGER,
            outcome          TEXT NOT NULL,                   -- win | loss | draw | error
            duration_s       REAL,
            resource_delta   REAL,
            army_value_delta REAL,
            map_control      REAL,
            error            TEXT,
            engine_version   TEXT NOT NULL DEFAULT '',
            recorded_at      TEXT NOT NULL,
            PRIMARY KEY (run_id, skill_id, game)
        ) WITHOUT ROWID;
        -- A skill's lift in a run: its win rate minus the default plan's over the pairs where
        -- both games were decided, with Newcombe's paired 95% interval; worse = 1 when the whole
        -- interval lies below zero ("worse than the default plan").
        CREATE TABLE studio_run_lifts (
            run_id         TEXT NOT NULL,
            skill_id       TEXT NOT NULL,
            body_hash      TEXT NOT NULL,
            opponent       TEXT NOT NULL,
            engine_version TEXT NOT NULL DEFAULT '',
            pairs          INTEGER NOT NULL,                  -- both games decided
            both_won       INTEGER NOT NULL,
            skill_only     INTEGER NOT NULL,
            baseline_only  INTEGER NOT NULL,
            neither        INTEGER NOT NULL,
            excluded       INTEGER NOT NULL DEFAULT 0,        -- pairs with an error game on either side
            skill_rate     REAL,
            baseline_rate  REAL,
            lift           REAL,
            low            REAL NOT NULL,
            high           REAL NOT NULL,
            worse          INTEGER NOT NULL DEFAULT 0,
            computed_at    TEXT NOT NULL,
            PRIMARY KEY (run_id, skill_id)
        );
        CREATE INDEX studio_run_lifts_skill ON studio_run_lifts(skill_id, computed_at);
        -- verify --until-decided: where the sequential test left each skill of the run.
        CREATE TABLE studio_run_decisions (
            run_id      TEXT NOT NULL,
            skill_id    TEXT NOT NULL,
            bar_name    TEXT NOT NULL,                        -- candidate | established | proven
            bar         REAL NOT NULL,
            delta       REAL NOT NULL,
            alpha       REAL NOT NULL,
            beta        REAL NOT NULL,
            min_games   INTEGER NOT NULL DEFAULT 0,
            decision    TEXT NOT NULL,                        -- above | below | undecided
            wins        INTEGER NOT NULL,
            decided     INTEGER NOT NULL,
            llr         REAL NOT NULL,
            decided_at  TEXT NOT NULL,
            PRIMARY KEY (run_id, skill_id)
        );
        -- verify --sequence A,B[,C]: each switch of a run of kind 'sequence', with the run's
        -- outcome and what it added to D057's skill_compositions.success_count.
        CREATE TABLE studio_run_pairs (
            run_id      TEXT NOT NULL,
            position    INTEGER NOT NULL,                     -- 0: A then B, 1: B then C
            skill_a     TEXT NOT NULL,
            skill_b     TEXT NOT NULL,
            switch_at   TEXT NOT NULL,                        -- seconds, or a game phase
            wins        INTEGER NOT NULL DEFAULT 0,
            losses      INTEGER NOT NULL DEFAULT 0,
            draws       INTEGER NOT NULL DEFAULT 0,
            errors      INTEGER NOT NULL DEFAULT 0,
            credited    INTEGER NOT NULL DEFAULT 0,           -- passed the candidate bar vs the reference
            successes   INTEGER NOT NULL DEFAULT 0,           -- added to success_count
            note        TEXT NOT NULL DEFAULT '',
            applied_at  TEXT,
            PRIMARY KEY (run_id, position)
        );
        CREATE INDEX studio_run_pairs_a ON studio_run_pairs(skill_a);
        CREATE INDEX studio_run_pairs_b ON studio_run_pairs(skill_b);
        """,
    ),
)


# The browser's orders, one index each, so that its first screen reads LIMIT rows along an index
# instead of sorting the whole library (docs/storage.md). Each holds the order's whole key (the
# column, then name and id, which break ties) and the columns the filter panel filters on, so a
# filtered first page is read from the index alone. A descending order of a column with few
# values (domain, module, source, tier) needs its own index: reading an ascending one backwards
# would sort a whole value's rows by name first.
_BROWSE_ORDERS = {
    "name": None,
    "success_rate": "success_rate",
    "verification_count": "verification_count",
    "average_rating": "average_rating",
    "use_count": "use_count",
    "created_at": "created_at",
    "last_verified": "last_verified",
    "last_used": "last_used",
    "domain": "domain",
    "module": "game_module",
    "source": "source",
    # store/query.py's _CONFIDENCE_ORDER, written the same way (an expression index is used only
    # for the very same expression)
    "confidence": "CASE WHEN confidence = 'tentative' THEN 0 WHEN confidence = 'established' THEN 1"
    " WHEN confidence = 'proven' THEN 2 ELSE -1 END",
}
_DESCENDING_TWINS = ("domain", "module", "source", "confidence")
_FILTERED = ("domain", "game_module", "confidence", "source")


def _order_index(name: str, key: str | None) -> str:
    leading = f"{key}, " if key else ""
    covered = ", ".join(column for column in _FILTERED if not (key or "").startswith(column))
    return f"CREATE INDEX studio_order_{name} ON skills({leading}name COLLATE NOCASE, id, {covered});"


_ORDER_INDEXES = "\n".join(
    [_order_index(name, key) for name, key in _BROWSE_ORDERS.items()]
    + [_order_index(f"{name}_desc", f"{_BROWSE_ORDERS[name]} DESC") for name in _DESCENDING_TWINS]
)


# D057's nullable columns among the orders: their figures may be missing (NULL), and missing ones
# come last in both directions (store/query.py). SQLite walks the ascending index backwards and
# sorts each value's few rows by name; PostgreSQL's backward walk gives NULLs first, so that an
# index that does not end the descending order exactly as asked would be no help and the whole
# library would be sorted: each needs a descending twin, NULLs last.
_NULLABLE_ORDERS = ("success_rate", "verification_count", "average_rating", "use_count", "last_verified", "last_used")


def postgresql_order_indexes() -> list[str]:
    """The same order indexes on PostgreSQL: the name as ``lower(name)`` (bytewise, the column
    being COLLATE "C", as SQLite's NOCASE), the filtered columns carried as INCLUDE columns; and
    a descending twin, NULLs last, for each nullable column (_NULLABLE_ORDERS)."""
    keys: list[tuple[str, str | None, str]] = [(name, key, "") for name, key in _BROWSE_ORDERS.items()]
    keys += [(f"{name}_desc", _BROWSE_ORDERS[name], " DESC") for name in _DESCENDING_TWINS]
    keys += [(f"{name}_desc", _BROWSE_ORDERS[name], " DESC NULLS LAST") for name in _NULLABLE_ORDERS]
    out = []
    for name, key, direction in keys:
        leading = f"({key}){direction}, " if key else ""
        covered = ", ".join(column for column in _FILTERED if not (key or "").startswith(column))
        out.append(f"CREATE INDEX studio_order_{name} ON skills({leading}lower(name), id) INCLUDE ({covered})")
    return out


_TAGS = "json_each(CASE WHEN json_valid({row}.tags) THEN {row}.tags ELSE '[]' END)"
_ADD_TAGS = (
    "INSERT INTO studio_tag_counts(tag, skills) SELECT value, COUNT(*) FROM " + _TAGS + " WHERE type = 'text'"
    " GROUP BY value ON CONFLICT(tag) DO UPDATE SET skills = skills + excluded.skills;"
)
_REMOVE_TAGS = (
    "UPDATE studio_tag_counts SET skills = skills - (SELECT COUNT(*) FROM " + _TAGS + " AS t"
    " WHERE t.type = 'text' AND t.value = studio_tag_counts.tag)"
    " WHERE tag IN (SELECT value FROM " + _TAGS + " WHERE type = 'text');"
    " DELETE FROM studio_tag_counts WHERE skills <= 0;"
)

# Each creator with how many skills it made (the filter panel's "Created by"): a skill's creator
# is its studio_skill_meta row's, or 'unknown' without one (a skill an engine wrote). A skill
# counts while it is in ``skills``, whichever of its two rows is written or deleted first.
_CREATOR_OF = "COALESCE((SELECT created_by FROM studio_skill_meta WHERE skill_id = {row}.id), 'unknown')"
_LIVE = "EXISTS (SELECT 1 FROM skills WHERE id = {row}.skill_id)"


def _count_creator(creator: str, delta: int, when: str = "true") -> str:
    return (
        f"INSERT INTO studio_creator_counts(created_by, skills) SELECT {creator}, {delta} WHERE {when}"
        " ON CONFLICT(created_by) DO UPDATE SET skills = skills + excluded.skills;"
    )


_FORGET_NO_ONES = "DELETE FROM studio_creator_counts WHERE skills = 0;"
# Counting every row, as the triggers below count one row at a time (used when the tables are
# made, and by rebuild_derived).
_COUNT_TAGS = (
    "INSERT INTO studio_tag_counts(tag, skills)\n"
    f"            SELECT tag.value, COUNT(*) FROM skills, {_TAGS.format(row='skills')}"
    " AS tag WHERE tag.type = 'text' GROUP BY tag.value;"
)
_COUNT_CREATORS = (
    "INSERT INTO studio_creator_counts(created_by, skills)\n"
    "            SELECT COALESCE(m.created_by, 'unknown'), COUNT(*) FROM skills\n"
    "            LEFT JOIN studio_skill_meta AS m ON m.skill_id = skills.id GROUP BY 1;"
)

MIGRATIONS += (
    Migration(
        13,
        "Instant browsing at 1M skills: an index per sort order, tag and creator counts kept by triggers",
        _ORDER_INDEXES
        + """
        -- The new indexes do their work: studio_skills_domain and _module are the first column
        -- of two of them, and each covers what studio_skills_browse (migration 2) covered for a
        -- listing, in its own order; studio_order_name is studio_skills_by_name, covering.
        DROP INDEX studio_skills_domain;
        DROP INDEX studio_skills_module;
        DROP INDEX studio_skills_browse;
        DROP INDEX studio_skills_by_name;
        -- Every tag with how many skills carry it (the filter panel's list), kept by any writer
        -- through these triggers: counting at 100k skills reads every row's tags (0.2 s; 2 s at
        -- 1M). Counted per occurrence, as facets.tag_counts always has.
        CREATE TABLE studio_tag_counts (
            tag     TEXT PRIMARY KEY,
            skills  INTEGER NOT NULL
        ) WITHOUT ROWID;
        """
        + _COUNT_TAGS
        + """
        CREATE TRIGGER studio_tag_counts_insert AFTER INSERT ON skills BEGIN
            """
        + _ADD_TAGS.format(row="new")
        + """
        END;
        CREATE TRIGGER studio_tag_counts_delete AFTER DELETE ON skills BEGIN
            """
        + _REMOVE_TAGS.format(row="old")
        + """
        END;
        CREATE TRIGGER studio_tag_counts_update AFTER UPDATE OF tags ON skills
        WHEN old.tags IS NOT new.tags BEGIN
            """
        + _REMOVE_TAGS.format(row="old")
        + "\n            "
        + _ADD_TAGS.format(row="new")
        + """
        END;
        CREATE TABLE studio_creator_counts (
            created_by  TEXT PRIMARY KEY,
            skills      INTEGER NOT NULL
        ) WITHOUT ROWID;
        """
        + _COUNT_CREATORS
        + """
        CREATE TRIGGER studio_creator_counts_skill_insert AFTER INSERT ON skills BEGIN
            """
        + _count_creator(_CREATOR_OF.format(row="new"), 1)
        + """
        END;
        CREATE TRIGGER studio_creator_counts_skill_delete AFTER DELETE ON skills BEGIN
            """
        + _count_creator(_CREATOR_OF.format(row="old"), -1)
        + _FORGET_NO_ONES
        + """
        END;
        CREATE TRIGGER studio_creator_counts_meta_insert AFTER INSERT ON studio_skill_meta
        WHEN """
        + _LIVE.format(row="new")
        + """ BEGIN
            """
        + _count_creator("'unknown'", -1)
        + _count_creator("COALESCE(new.created_by, 'unknown')", 1)
        + _FORGET_NO_ONES
        + """
        END;
        CREATE TRIGGER studio_creator_counts_meta_delete AFTER DELETE ON studio_skill_meta
        WHEN """
        + _LIVE.format(row="old")
        + """ BEGIN
            """
        + _count_creator("COALESCE(old.created_by, 'unknown')", -1)
        + _count_creator("'unknown'", 1)
        + _FORGET_NO_ONES
        + """
        END;
        CREATE TRIGGER studio_creator_counts_meta_update AFTER UPDATE OF skill_id, created_by ON studio_skill_meta
        BEGIN
            """
        + _count_creator("COALESCE(old.created_by, 'unknown')", -1, _LIVE.format(row="old"))
        + _count_creator("'unknown'", 1, _LIVE.format(row="old"))
        + _count_creator("'unknown'", -1, _LIVE.format(row="new"))
        + _count_creator("COALESCE(new.created_by, 'unknown')", 1, _LIVE.format(row="new"))
        + _FORGET_NO_ONES
        + """
        END;
        """,
    ),
)

# Rows copied per statement by migration 14 (bounded memory on libraries with many revisions).
_REVISION_COPY_BATCH = 2000
_REVISION_COLUMNS = "id, skill_id, number, version, action, author, created_at, message, snapshot"


def _compress_revision_snapshots(connection: Connection) -> None:
    """Copy every revision of the text table into the new one, its snapshot compressed
    (the same JSON text, so it decodes to the same document), then drop the text table."""
    insert = text(
        f"INSERT INTO studio_revisions ({_REVISION_COLUMNS}) VALUES "
        "(:id, :skill_id, :number, :version, :action, :author, :created_at, :message, :snapshot)"
    )
    after = -1
    while True:
        rows = (
            connection.execute(
                text(f"SELECT {_REVISION_COLUMNS} FROM studio_revisions_text WHERE id > :after ORDER BY id LIMIT :n"),
                {"after": after, "n": _REVISION_COPY_BATCH},
            )
            .mappings()
            .all()
        )
        if not rows:
            break
        connection.execute(insert, [{**row, "snapshot": compress_snapshot_text(row["snapshot"])} for row in rows])
        after = rows[-1]["id"]
    connection.exec_driver_sql("DROP TABLE studio_revisions_text")


MIGRATIONS += (
    Migration(
        14,
        "Revision snapshots stored zlib-compressed",
        """
        -- Full JSON snapshots were about half of a library's file (issue 17). The snapshot is
        -- now the same JSON, zlib-compressed (skillstudio/store/snapshots.py), in a BLOB: about
        -- half the size, and portable (zlib is in every Python; PostgreSQL stores bytea).
        -- SQLite cannot change a column's type, and compressing needs Python: the table is
        -- rebuilt, its rows copied with their ids by _compress_revision_snapshots.
        ALTER TABLE studio_revisions RENAME TO studio_revisions_text;
        CREATE TABLE studio_revisions (
            id              INTEGER PRIMARY KEY,
            skill_id        TEXT NOT NULL,
            number          INTEGER NOT NULL,   -- 1, 2, ... per skill
            version         INTEGER NOT NULL,   -- the content version this snapshot shows
            action          TEXT NOT NULL,      -- create, update, delete, restore, quality, ...
            author          TEXT NOT NULL,
            created_at      TEXT NOT NULL,
            message         TEXT NOT NULL DEFAULT '',
            snapshot        BLOB NOT NULL,      -- the canonical skill document, JSON, zlib-compressed
            UNIQUE (skill_id, number)
        );
        """,
        _compress_revision_snapshots,
    ),
)


def _folded_search_words(connection: Connection) -> str:
    """Migration 15 on PostgreSQL: ``studio_search_words`` folds accents as FTS5's unicode61 does
    (search_folding), and reads letters, digits and case by Unicode (the ICU root collation)
    whatever the database's locale: under LC_CTYPE "C", ``lower`` and ``[:alnum:]`` knew ASCII
    only, so "Über" was the word "ber". A server built without ICU keeps its own locale. Every
    stored vector is then made again."""
    has_icu = connection.exec_driver_sql("SELECT EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu')")
    unicode = '"und-x-icu"' if has_icu.scalar_one() else '"default"'
    folding = unicode61_folding()
    foldable = _sql_text(folding.letters + folding.dropped_marks)
    # translate reads its whole list for each character of its text (18 times the cost of the
    # rest for a description in French): it is given only the distinct accented letters found,
    # each then replaced throughout by the fast replace.
    return dedent(f"""
        CREATE OR REPLACE FUNCTION studio_search_words(value TEXT) RETURNS TEXT
        LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
        AS $$
        DECLARE
            -- (a variable takes the caller's collation unless given one: skills.name's is "C")
            given TEXT COLLATE {unicode} := lower(coalesce(value, '') COLLATE {unicode});
            accented TEXT COLLATE {unicode};
        BEGIN
            IF given ~ ('[' || {foldable} || ']') THEN
                FOR accented IN
                    SELECT DISTINCT hit[1] FROM regexp_matches(given, '([' || {foldable} || '])', 'g') AS hits(hit)
                LOOP
                    given := replace(given, accented, translate(accented, {foldable}, {_sql_text(folding.bases)}));
                END LOOP;
            END IF;
            RETURN regexp_replace(given, '[^[:alnum:]]+', ' ', 'g');
        END
        $$
        -- ;;
        UPDATE studio_skill_search AS search
        SET document = studio_skill_document(skills.name, skills.description, skills.tags)
        FROM skills WHERE skills.id = search.skill_id
    """)


def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


MIGRATIONS += (
    Migration(
        15,
        "Team libraries: search folds accents as SQLite's does, whatever the server's locale",
        "",  # SQLite's search is the reference (FTS5's unicode61): nothing changes
        postgresql=_folded_search_words,
    ),
)

MIGRATIONS += (
    Migration(
        16,
        "Search-as-you-type: an FTS5 index with one-letter prefixes, beside D057's skills_fts",
        """
        -- A one-letter word such as "t" matches almost every skill. Without a prefix index FTS5
        -- merges the postings of every word starting with it, twice per ranked query (matching,
        -- then bm25's document frequencies): 138 ms at 100k skills; with it, 66 ms (issue 17).
        -- D057's skills_fts is never altered, so SkillStudio searches this copy of it: the same
        -- columns, tokenizer and rows, hence the same matches and the same bm25. IF NOT EXISTS:
        -- a library an older test rewound to an earlier version may have it already.
        CREATE VIRTUAL TABLE IF NOT EXISTS studio_search_fts USING fts5(
            name, description, tags,
            content=skills, content_rowid=rowid, prefix='1'
        );
"""
        + _fts_triggers("studio_search_fts", "studio_search_fts")
        + """
        INSERT INTO studio_search_fts(studio_search_fts) VALUES ('rebuild');
        """,
        postgresql=POSTGRESQL_UNCHANGED,  # a team library's GIN index serves prefixes already
    ),
)


LATEST_VERSION = MIGRATIONS[-1].version
# The version a new PostgreSQL library starts at: postgresql_schema.sql is this schema.
POSTGRESQL_BASELINE = 14


@dataclass(frozen=True)
class FileSchema:
    """What a read-only look at an existing file found (see :func:`inspect_file`)."""

    tables: frozenset[str]
    version: int  # our schema version; 0 when SkillStudio never opened the file

    @property
    def current(self) -> bool:
        """Nothing for :func:`upgrade` to do: opening needs no write lock."""
        return self.version == LATEST_VERSION and all(table in self.tables for table in D057_TABLES)


def inspect_file(path: object, connection: sqlite3.Connection) -> FileSchema:
    """Refuse a file that is not a library this SkillStudio can open, reading only.

    ``connection`` is a read-only connection to the file. A library is a file with D057's
    ``skills`` table (an engine's ``gameplay.db``, or one SkillStudio made); anything else, an
    empty SQLite file included, is refused with NotALibrary naming what it holds instead, and
    one from a newer SkillStudio with LibraryTooNew. Nothing is written, so a refused file is
    left exactly as it was.
    """
    tables = frozenset(row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
    if "skills" not in tables:
        own = sorted(table for table in tables if not table.startswith("sqlite_"))
        if not own:
            raise NotALibrary(
                f"{path} is an empty SQLite database (it has no tables), not a skill library; "
                "SkillStudio only sets up new files it creates itself"
            )
        if "studio_schema_migrations" in tables:
            raise NotALibrary(f"{path} has SkillStudio's tables but no D057 'skills' table; it cannot be opened")
        listed = ", ".join(own[:8]) + (f" and {len(own) - 8} more" if len(own) > 8 else "")
        raise NotALibrary(
            f"{path} is not a skill library: it has tables {listed} but no D057 'skills' table; "
            "SkillStudio left it unchanged"
        )
    check_skill_columns(path, {row[1] for row in connection.execute("PRAGMA table_info(skills)")})
    version = 0
    if "studio_schema_migrations" in tables:
        version = connection.execute("SELECT COALESCE(MAX(version), 0) FROM studio_schema_migrations").fetchone()[0]
    check_version(path, version)
    return FileSchema(tables, version)


def check_skill_columns(path: object, columns: set[str]) -> None:
    missing = [column for column in D057_SKILL_COLUMNS if column not in columns]
    if missing:
        raise NotALibrary(
            f"{path}: table 'skills' lacks D057's column(s) {', '.join(missing)}; it is not a D057 skill library"
        )


def check_version(path: object, current: int) -> None:
    if current > LATEST_VERSION:
        raise LibraryTooNew(
            f"{path} was written by a newer SkillStudio (schema {current}, this one knows "
            f"{LATEST_VERSION}); update SkillStudio to open it"
        )


def upgrade(database: Database, *, create: bool) -> None:
    """Bring the file to the latest schema, or refuse it with a reason; all in one transaction.

    The only place opening a file takes the write lock, and only when :func:`inspect_file` found work
    to do; the lock is waited for like any write's (bounded, ``LibraryBusy`` past the bound).
    The checks are repeated inside the transaction: the file may have changed since.
    """
    if database.dialect == "postgresql":
        _upgrade_postgresql(database, create=create)
        return
    path = database.path
    with database._write_session() as session:
        connection = session.connection()
        tables = _table_names(connection)
        statements = d057_statements()
        if "skills" not in tables:
            if not create:
                raise NotALibrary(f"{path} has no D057 'skills' table, so it is not a skill library")
            for statement in statements.values():
                _execute_script(connection, statement)
            tables = _table_names(connection)
        check_skill_columns(path, {row[1] for row in connection.exec_driver_sql("PRAGMA table_info(skills)")})
        for table, statement in statements.items():  # an engine may have created only some
            if table not in tables:
                _execute_script(connection, statement)
        connection.exec_driver_sql(
            "CREATE TABLE IF NOT EXISTS studio_schema_migrations ("
            " version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL, description TEXT NOT NULL)"
        )
        current = connection.exec_driver_sql(
            "SELECT COALESCE(MAX(version), 0) FROM studio_schema_migrations"
        ).scalar_one()
        check_version(path, current)
        for migration in MIGRATIONS:
            if migration.version > current:
                _execute_script(connection, migration.sql)
                if migration.python is not None:
                    migration.python(connection)
                connection.execute(
                    text("INSERT INTO studio_schema_migrations VALUES (:v, :at, :d)"),
                    {"v": migration.version, "at": utc_now(), "d": migration.description},
                )


def _upgrade_postgresql(database: Database, *, create: bool) -> None:
    """A server library: a new one gets postgresql_schema.sql (POSTGRESQL_BASELINE), then each
    later migration's PostgreSQL statements; all in one transaction, under the write lock."""
    from skillstudio.store.backends.postgresql import schema_statements, split_statements

    with database._write_session() as session:
        connection = session.connection()
        exists = connection.execute(text("SELECT to_regclass('skills') IS NOT NULL")).scalar_one()
        if not exists:
            if not create:
                raise NotALibrary(f"{database.location} has no D057 'skills' table, so it is not a skill library")
            for statement in schema_statements():
                connection.exec_driver_sql(statement)
            connection.execute(
                text("INSERT INTO studio_schema_migrations VALUES (:v, :at, :d)"),
                [
                    {"v": migration.version, "at": utc_now(), "d": migration.description}
                    for migration in MIGRATIONS
                    if migration.version <= POSTGRESQL_BASELINE
                ],
            )
        current = schema_version(connection)
        check_version(database.location, current)
        if current < LATEST_VERSION:
            _refuse_unless_owner(connection, database.location, current)
        for migration in MIGRATIONS:
            if migration.version > current:
                script = migration.postgresql_script(connection)
                if not script:
                    raise NotALibrary(f"migration {migration.version} has no PostgreSQL statements")
                for statement in split_statements(script):
                    connection.exec_driver_sql(statement)
                if migration.python is not None:
                    migration.python(connection)
                connection.execute(
                    text("INSERT INTO studio_schema_migrations VALUES (:v, :at, :d)"),
                    {"v": migration.version, "at": utc_now(), "d": migration.description},
                )
        _note_changes_everywhere(connection)


def _refuse_unless_owner(connection: Connection, location: object, current: int) -> None:
    """Only the library's owner changes its schema (docs/team-library.md): a member opening a
    library a newer SkillStudio must upgrade is told whom to ask, not the server's refusal."""
    owns = connection.exec_driver_sql(
        "SELECT pg_has_role(current_user, relowner, 'USAGE') FROM pg_class WHERE oid = 'skills'::regclass"
    ).scalar_one()
    if not owns:
        raise LibraryTooOld(
            f"{location} is at schema {current} and this SkillStudio needs {LATEST_VERSION}; only the"
            " library's owner can upgrade it: ask them to open it once, or run"
            " 'skillstudio team init URL', with this SkillStudio"
        )


def _note_changes_everywhere(connection: Connection) -> None:
    """Every table of a server library moves the change token (studio_note_change) when written,
    tables later migrations add included."""
    missing = connection.execute(
        text(
            "SELECT c.relname FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace"
            " AND c.relkind = 'r' AND c.relname <> 'studio_changes' AND NOT EXISTS ("
            " SELECT 1 FROM pg_trigger t WHERE t.tgrelid = c.oid AND t.tgname = 'studio_note_change')"
        )
    ).scalars()
    for table in list(missing):
        connection.exec_driver_sql(
            f'CREATE TRIGGER studio_note_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "{table}"'
            " FOR EACH STATEMENT EXECUTE FUNCTION studio_note_change()"
        )


def schema_version(connection: Connection) -> int:
    return int(
        connection.exec_driver_sql("SELECT COALESCE(MAX(version), 0) FROM studio_schema_migrations").scalar_one()
    )


def _table_names(connection: Connection) -> set[str]:
    rows = connection.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'table'")
    return {row[0] for row in rows}


def fts_sync_triggers() -> list[str]:
    """The store's triggers that keep D057's external-content ``skills_fts`` current
    (migration 1): in a published file they make an engine's own INSERT searchable."""
    return [statement.strip() for statement in _split_statements(_fts_triggers("skills_fts", "studio_skills_fts"))]


# What triggers derive from ``skills`` row by row (SQLite libraries): the two FTS5 indexes and
# the filter panel's counts.
_FTS_INDEXES = ("skills_fts", "studio_search_fts")
# The insert triggers on skills that write an FTS5 index (D057's skills_fts, our studio_search_fts).
FTS_INSERT_TRIGGERS = ("studio_skills_fts_insert", "studio_search_fts_insert")
# The insert triggers whose whole work rebuild_derived redoes from the rows: a large insert may
# drop them for the rows of its new skills and their metadata, and rebuild after it.
DERIVED_INSERT_TRIGGERS = (
    *FTS_INSERT_TRIGGERS,
    "studio_tag_counts_insert",
    "studio_creator_counts_skill_insert",
    "studio_creator_counts_meta_insert",
)


def untracked_writes(connection: Connection) -> bool:
    """Whether a write reached ``skills`` without its delete triggers: an engine's ``INSERT OR
    REPLACE`` of an existing skill id removes the old row without them unless its connection
    set ``PRAGMA recursive_triggers``, leaving the old row in the indexes and the counts. Such a
    row shows as an index holding more rows than ``skills`` (10 ms at 1M skills)."""
    counts = connection.exec_driver_sql(
        "SELECT (SELECT COUNT(*) FROM skills), "
        + ", ".join(f"(SELECT COUNT(*) FROM {index}_docsize)" for index in _FTS_INDEXES)
    ).one()
    return len(set(counts)) > 1


def rebuild_derived(connection: Connection) -> None:
    """Rebuild what the triggers derive from ``skills`` from the rows themselves, inside the
    caller's write transaction."""
    for index in _FTS_INDEXES:
        connection.exec_driver_sql(f"INSERT INTO {index}({index}) VALUES ('rebuild')")
    connection.exec_driver_sql("DELETE FROM studio_tag_counts")
    connection.exec_driver_sql(_COUNT_TAGS)
    connection.exec_driver_sql("DELETE FROM studio_creator_counts")
    connection.exec_driver_sql(_COUNT_CREATORS)


def _execute_script(connection: Connection, script: str) -> None:
    """Run statements one by one inside the caller's transaction (executescript would commit)."""
    for statement in _split_statements(script):
        connection.exec_driver_sql(statement)


def _split_statements(script: str) -> list[str]:
    """Split on ';' at statement level, keeping trigger bodies (BEGIN ... END;) whole."""
    out: list[str] = []
    current: list[str] = []
    depth = 0
    for line in script.splitlines():
        stripped = line.split("--", 1)[0].strip()
        current.append(line)
        upper = stripped.upper()
        if upper.startswith("CREATE TRIGGER") or upper == "BEGIN" or upper.endswith(" BEGIN"):
            depth = 1
        if stripped.endswith(";") and (depth == 0 or upper == "END;"):
            depth = 0
            if _has_code(current):
                out.append("\n".join(current).strip())
            current = []
    if _has_code(current):
        out.append("\n".join(current).strip())
    return out


def _has_code(lines: list[str]) -> bool:
    return any(line.split("--", 1)[0].strip(" ;\t") for line in lines)
