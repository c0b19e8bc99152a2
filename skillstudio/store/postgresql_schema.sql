-- A team library on PostgreSQL: the schema SQLite libraries reach through migrations 1-14
-- (skillstudio/store/migrations.py), in one piece. A new server library starts here at
-- POSTGRESQL_BASELINE; later migrations carry their PostgreSQL statements beside SQLite's.
--
-- Translation rules (docs/architecture.md, "One store, two backends"):
-- * D057's tables keep exactly their columns; TEXT compares bytewise (COLLATE "C"), as in SQLite.
-- * SQLite INTEGER is 64 bits: BIGINT; REAL: DOUBLE PRECISION; BLOB: BYTEA; an INTEGER PRIMARY
--   KEY (rowid) an identity column.
-- * FTS5's index is studio_skill_search: each skill's tsvector (studio_skill_document), kept by
--   triggers on skills as SQLite's keep skills_fts, with a GIN index; no column is added to skills.
-- * Each SQLite trigger is a PL/pgSQL trigger with the same event, column list and condition.
-- * Every committed change moves studio_changes.version and notifies 'skillstudio_changes':
--   the change token (SQLite's PRAGMA data_version) and the hook for live changes.
-- Statements are separated by lines holding only "-- ;;" (function bodies contain ';').

-- D057 ----------------------------------------------------------------------------------------

CREATE TABLE skills (
    id              TEXT COLLATE "C" PRIMARY KEY,
    domain          TEXT COLLATE "C" NOT NULL,
    name            TEXT COLLATE "C" NOT NULL,
    description     TEXT COLLATE "C" NOT NULL,
    body_json       TEXT COLLATE "C" NOT NULL,
    tags            TEXT COLLATE "C" NOT NULL,
    game_module     TEXT COLLATE "C" NOT NULL,
    source          TEXT COLLATE "C" NOT NULL,
    model_id        TEXT COLLATE "C",
    verification_count  BIGINT DEFAULT 0,
    success_rate    DOUBLE PRECISION DEFAULT 0.0,
    average_rating  DOUBLE PRECISION,
    confidence      TEXT COLLATE "C" DEFAULT 'tentative',
    use_count       BIGINT DEFAULT 0,
    created_at      TEXT COLLATE "C" NOT NULL,
    last_used       TEXT COLLATE "C",
    last_verified   TEXT COLLATE "C"
);
-- ;;
CREATE TABLE skill_embeddings (
    skill_id        TEXT COLLATE "C" PRIMARY KEY REFERENCES skills(id),
    embedding       BYTEA NOT NULL,
    model_id        TEXT COLLATE "C" NOT NULL
);
-- ;;
CREATE TABLE skill_compositions (
    skill_a         TEXT COLLATE "C" REFERENCES skills(id),
    skill_b         TEXT COLLATE "C" REFERENCES skills(id),
    success_count   BIGINT DEFAULT 0,
    PRIMARY KEY (skill_a, skill_b)
);
-- ;;

-- Keyword search: FTS5's unicode61 words (runs of letters and digits, case-folded) of the name,
-- tags and description, weighted A, B and C for ranking like bm25's column weights. Kept per
-- skill in studio_skill_search (by triggers on skills, as SQLite keeps skills_fts), so ranking
-- reads stored vectors instead of computing one per match. Beside each vector, the name as the
-- browser sorts it (lower(name), bytewise): ranks tie often (a common word in the same field),
-- and the best matches of a first page are then chosen in the browser's very order (rank, name,
-- id) in the one pass that ranks them, instead of reading every match again to order the ties.
CREATE FUNCTION studio_search_words(value TEXT) RETURNS TEXT
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT regexp_replace(lower(coalesce(value, '')), '[^[:alnum:]]+', ' ', 'g') $$;
-- ;;
CREATE FUNCTION studio_skill_document(name TEXT, description TEXT, tags TEXT) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT setweight(to_tsvector('simple'::regconfig, studio_search_words(name)), 'A')
        || setweight(to_tsvector('simple'::regconfig, studio_search_words(tags)), 'B')
        || setweight(to_tsvector('simple'::regconfig, studio_search_words(description)), 'C')
$$;
-- ;;
CREATE TABLE studio_skill_search (
    skill_id  TEXT COLLATE "C" PRIMARY KEY,
    name_key  TEXT COLLATE "C" NOT NULL,
    document  tsvector NOT NULL
);
-- ;;
CREATE INDEX studio_skill_search_document ON studio_skill_search USING gin (document);
-- ;;
CREATE FUNCTION studio_skill_search_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM studio_skill_search WHERE skill_id = OLD.id;
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.id IS DISTINCT FROM NEW.id THEN
        DELETE FROM studio_skill_search WHERE skill_id = OLD.id;
    END IF;
    INSERT INTO studio_skill_search(skill_id, name_key, document)
    VALUES (NEW.id, lower(NEW.name), studio_skill_document(NEW.name, NEW.description, NEW.tags))
    ON CONFLICT (skill_id) DO UPDATE SET name_key = excluded.name_key, document = excluded.document;
    RETURN NULL;
END
$$;
-- ;;
CREATE TRIGGER studio_skill_search_insert AFTER INSERT ON skills
FOR EACH ROW EXECUTE FUNCTION studio_skill_search_sync();
-- ;;
CREATE TRIGGER studio_skill_search_update AFTER UPDATE OF id, name, description, tags ON skills
FOR EACH ROW EXECUTE FUNCTION studio_skill_search_sync();
-- ;;
CREATE TRIGGER studio_skill_search_delete AFTER DELETE ON skills
FOR EACH ROW EXECUTE FUNCTION studio_skill_search_sync();
-- ;;

-- The values SQLite's json_each() gives for a skill's tags, as a JSON array: an array's
-- elements, an object's values, a lone value itself; text that is not JSON gives none (SQLite:
-- json_valid). The tag filter and the tag counts read it, as SQLite's read json_each().
-- Not PARALLEL SAFE, nor are the functions calling it: an EXCEPTION block starts a
-- subtransaction, which a parallel query refuses (the planner goes parallel on a big library).
CREATE FUNCTION studio_tags_json(tags TEXT) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
    parsed jsonb;
BEGIN
    parsed := tags::jsonb;
    IF jsonb_typeof(parsed) = 'array' THEN
        RETURN parsed;
    ELSIF jsonb_typeof(parsed) = 'object' THEN
        RETURN (SELECT COALESCE(jsonb_agg(value), '[]'::jsonb) FROM jsonb_each(parsed));
    END IF;
    RETURN jsonb_build_array(parsed);
EXCEPTION WHEN others THEN
    RETURN '[]'::jsonb;
END
$$;
-- ;;
-- SQLite's json_array_length(tags) = 0: no tags unless the tags are a non-empty JSON array.
CREATE FUNCTION studio_untagged(tags TEXT) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
    RETURN jsonb_typeof(tags::jsonb) IS DISTINCT FROM 'array' OR jsonb_array_length(tags::jsonb) = 0;
EXCEPTION WHEN others THEN
    RETURN true;
END
$$;
-- ;;
CREATE INDEX studio_skills_tags ON skills USING gin (studio_tags_json(tags));
-- ;;
CREATE FUNCTION studio_tag_texts(tags TEXT) RETURNS SETOF TEXT
LANGUAGE sql IMMUTABLE
AS $$ SELECT e #>> '{}' FROM jsonb_array_elements(studio_tags_json(tags)) AS e WHERE jsonb_typeof(e) = 'string' $$;
-- ;;

-- SkillStudio's tables (migrations 1-14) -------------------------------------------------------

CREATE TABLE studio_schema_migrations (
    version      BIGINT PRIMARY KEY,
    applied_at   TEXT COLLATE "C" NOT NULL,
    description  TEXT COLLATE "C" NOT NULL
);
-- ;;
CREATE TABLE studio_skill_meta (
    skill_id        TEXT COLLATE "C" PRIMARY KEY,
    created_by      TEXT COLLATE "C" NOT NULL DEFAULT 'unknown',
    engine_version  TEXT COLLATE "C" NOT NULL DEFAULT '',
    source_id       TEXT COLLATE "C",
    source_author   TEXT COLLATE "C",
    original_id     TEXT COLLATE "C",
    review_state    TEXT COLLATE "C" CHECK (review_state IN ('pending', 'approved', 'rejected', 'changes_requested'))
);
-- ;;
CREATE INDEX studio_skill_meta_original ON studio_skill_meta(original_id);
-- ;;
CREATE INDEX studio_skill_meta_created_by ON studio_skill_meta(created_by);
-- ;;
CREATE TABLE studio_skill_versions (
    skill_id        TEXT COLLATE "C" PRIMARY KEY,
    version         BIGINT NOT NULL
);
-- ;;
CREATE TABLE studio_revisions (
    id              BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    skill_id        TEXT COLLATE "C" NOT NULL,
    number          BIGINT NOT NULL,
    version         BIGINT NOT NULL,
    action          TEXT COLLATE "C" NOT NULL,
    author          TEXT COLLATE "C" NOT NULL,
    created_at      TEXT COLLATE "C" NOT NULL,
    message         TEXT COLLATE "C" NOT NULL DEFAULT '',
    snapshot        BYTEA NOT NULL,
    UNIQUE (skill_id, number)
);
-- ;;
CREATE TABLE studio_audit_log (
    id              BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    at              TEXT COLLATE "C" NOT NULL,
    actor           TEXT COLLATE "C" NOT NULL,
    actor_kind      TEXT COLLATE "C" NOT NULL CHECK (actor_kind IN ('human', 'agent', 'system')),
    action          TEXT COLLATE "C" NOT NULL,
    skill_id        TEXT COLLATE "C",
    revision        BIGINT,
    details         TEXT COLLATE "C" NOT NULL DEFAULT '{}'
);
-- ;;
CREATE INDEX studio_audit_log_skill ON studio_audit_log(skill_id);
-- ;;
CREATE INDEX studio_audit_log_at ON studio_audit_log(at);
-- ;;
CREATE TABLE studio_trash (
    skill_id        TEXT COLLATE "C" PRIMARY KEY,
    deleted_at      TEXT COLLATE "C" NOT NULL,
    deleted_by      TEXT COLLATE "C" NOT NULL,
    message         TEXT COLLATE "C" NOT NULL DEFAULT '',
    snapshot        TEXT COLLATE "C" NOT NULL,
    embedding       BYTEA,
    embedding_model TEXT COLLATE "C",
    compositions    TEXT COLLATE "C" NOT NULL DEFAULT '[]'
);
-- ;;
CREATE TABLE studio_verifications (
    id              BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    skill_id        TEXT COLLATE "C" NOT NULL,
    recorded_at     TEXT COLLATE "C" NOT NULL,
    kind            TEXT COLLATE "C" NOT NULL CHECK (kind IN ('headless', 'play', 'gameplay')),
    opponent        TEXT COLLATE "C",
    wins            BIGINT NOT NULL DEFAULT 0,
    losses          BIGINT NOT NULL DEFAULT 0,
    draws           BIGINT NOT NULL DEFAULT 0,
    errors          BIGINT NOT NULL DEFAULT 0,
    rating          DOUBLE PRECISION,
    rated           BIGINT NOT NULL DEFAULT 0,
    engine_version  TEXT COLLATE "C" NOT NULL DEFAULT '',
    body_hash       TEXT COLLATE "C" NOT NULL DEFAULT '',
    note            TEXT COLLATE "C" NOT NULL DEFAULT '',
    run_id          TEXT COLLATE "C"
);
-- ;;
CREATE INDEX studio_verifications_skill ON studio_verifications(skill_id, recorded_at);
-- ;;
CREATE UNIQUE INDEX studio_verifications_run_skill ON studio_verifications(run_id, skill_id) WHERE run_id IS NOT NULL;
-- ;;
CREATE INDEX studio_compositions_b ON skill_compositions(skill_b);
-- ;;
CREATE INDEX studio_skills_confidence ON skills(confidence);
-- ;;
CREATE TABLE studio_skill_extras (
    skill_id    TEXT COLLATE "C" PRIMARY KEY,
    origin      TEXT COLLATE "C" NOT NULL DEFAULT '',
    frontmatter TEXT COLLATE "C" NOT NULL DEFAULT '{}',
    files       TEXT COLLATE "C" NOT NULL DEFAULT '{}',
    warnings    TEXT COLLATE "C" NOT NULL DEFAULT '[]'
);
-- ;;
CREATE INDEX studio_skill_extras_origin ON studio_skill_extras(origin);
-- ;;
CREATE TABLE studio_verification_runs (
    id             TEXT COLLATE "C" PRIMARY KEY,
    kind           TEXT COLLATE "C" NOT NULL DEFAULT 'verify',
    status         TEXT COLLATE "C" NOT NULL DEFAULT 'running',
    opponent       TEXT COLLATE "C" NOT NULL,
    engine         TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    engine_version TEXT COLLATE "C" NOT NULL DEFAULT '',
    executor       TEXT COLLATE "C" NOT NULL,
    seed           BIGINT NOT NULL,
    games          BIGINT NOT NULL,
    chunk_games    BIGINT NOT NULL,
    actor          TEXT COLLATE "C" NOT NULL,
    options        TEXT COLLATE "C" NOT NULL DEFAULT '{}',
    started_at     TEXT COLLATE "C" NOT NULL,
    finished_at    TEXT COLLATE "C",
    message        TEXT COLLATE "C" NOT NULL DEFAULT '',
    claimed_by     TEXT COLLATE "C",
    claimed_pid    BIGINT,
    claimed_host   TEXT COLLATE "C",
    claimed_at     TEXT COLLATE "C",
    heartbeat_at   TEXT COLLATE "C",
    policy         TEXT COLLATE "C" NOT NULL DEFAULT '{}'
);
-- ;;
CREATE INDEX studio_verification_runs_started ON studio_verification_runs(started_at);
-- ;;
CREATE TABLE studio_run_skills (
    run_id            TEXT COLLATE "C" NOT NULL,
    skill_id          TEXT COLLATE "C" NOT NULL,
    position          BIGINT NOT NULL,
    game_module       TEXT COLLATE "C" NOT NULL,
    body_hash         TEXT COLLATE "C" NOT NULL,
    confidence_before TEXT COLLATE "C" NOT NULL,
    confidence_after  TEXT COLLATE "C",
    wins              BIGINT NOT NULL DEFAULT 0,
    losses            BIGINT NOT NULL DEFAULT 0,
    draws             BIGINT NOT NULL DEFAULT 0,
    errors            BIGINT NOT NULL DEFAULT 0,
    success_rate      DOUBLE PRECISION,
    wilson_low        DOUBLE PRECISION,
    wilson_high       DOUBLE PRECISION,
    applied_at        TEXT COLLATE "C",
    note              TEXT COLLATE "C" NOT NULL DEFAULT '',
    duplicates        BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, skill_id)
);
-- ;;
CREATE INDEX studio_run_skills_skill ON studio_run_skills(skill_id);
-- ;;
CREATE TABLE studio_run_games (
    run_id           TEXT COLLATE "C" NOT NULL,
    skill_id         TEXT COLLATE "C" NOT NULL,
    game             BIGINT NOT NULL,
    seed             BIGINT,
    outcome          TEXT COLLATE "C" NOT NULL,
    duration_s       DOUBLE PRECISION,
    resource_delta   DOUBLE PRECISION,
    army_value_delta DOUBLE PRECISION,
    map_control      DOUBLE PRECISION,
    error            TEXT COLLATE "C",
    engine_version   TEXT COLLATE "C" NOT NULL DEFAULT '',
    recorded_at      TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (run_id, skill_id, game)
);
-- ;;
CREATE INDEX studio_run_games_skill_seed ON studio_run_games(skill_id, seed);
-- ;;
CREATE TABLE studio_skill_intervals (
    skill_id    TEXT COLLATE "C" PRIMARY KEY,
    successes   BIGINT NOT NULL,
    trials      BIGINT NOT NULL,
    wilson_low  DOUBLE PRECISION NOT NULL,
    wilson_high DOUBLE PRECISION NOT NULL,
    updated_at  TEXT COLLATE "C" NOT NULL
);
-- ;;
CREATE TABLE studio_play_imports (
    key         TEXT COLLATE "C" PRIMARY KEY,
    skill_id    TEXT COLLATE "C" NOT NULL,
    source      TEXT COLLATE "C" NOT NULL DEFAULT '',
    imported_at TEXT COLLATE "C" NOT NULL,
    play        TEXT COLLATE "C" NOT NULL DEFAULT '{}'
);
-- ;;
CREATE INDEX studio_play_imports_skill ON studio_play_imports(skill_id);
-- ;;
CREATE TABLE studio_review_decisions (
    id        BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    skill_id  TEXT COLLATE "C" NOT NULL,
    state     TEXT COLLATE "C" NOT NULL,
    reviewer  TEXT COLLATE "C" NOT NULL,
    reviewer_kind TEXT COLLATE "C" NOT NULL DEFAULT 'human',
    at        TEXT COLLATE "C" NOT NULL,
    comment   TEXT COLLATE "C" NOT NULL DEFAULT '',
    revision  BIGINT
);
-- ;;
CREATE INDEX studio_review_decisions_skill ON studio_review_decisions(skill_id, id);
-- ;;
CREATE TABLE studio_risk_findings (
    skill_id  TEXT COLLATE "C" NOT NULL,
    position  BIGINT NOT NULL,
    rule      TEXT COLLATE "C" NOT NULL,
    severity  TEXT COLLATE "C" NOT NULL,
    reason    TEXT COLLATE "C" NOT NULL,
    field     TEXT COLLATE "C" NOT NULL DEFAULT '',
    start     BIGINT NOT NULL DEFAULT 0,
    "end"     BIGINT NOT NULL DEFAULT 0,
    excerpt   TEXT COLLATE "C" NOT NULL DEFAULT '',
    version   BIGINT NOT NULL DEFAULT 0,
    linted_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (skill_id, position)
);
-- ;;
CREATE TABLE studio_embedding_meta (
    skill_id           TEXT COLLATE "C" PRIMARY KEY,
    model_id           TEXT COLLATE "C" NOT NULL,
    description_sha256 TEXT COLLATE "C" NOT NULL,
    embedded_at        TEXT COLLATE "C" NOT NULL
);
-- ;;
CREATE TABLE studio_label_embeddings (
    skill_id     TEXT COLLATE "C" PRIMARY KEY,
    model_id     TEXT COLLATE "C" NOT NULL,
    embedding    BYTEA NOT NULL,
    text_sha256  TEXT COLLATE "C" NOT NULL,
    embedded_at  TEXT COLLATE "C" NOT NULL
);
-- ;;
CREATE TABLE studio_retrieval_changes (
    seq      BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    skill_id TEXT COLLATE "C" NOT NULL
);
-- ;;
CREATE TABLE studio_agent_writes (
    id        BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    agent_id  TEXT COLLATE "C" NOT NULL,
    at        DOUBLE PRECISION NOT NULL
);
-- ;;
CREATE INDEX studio_agent_writes_agent ON studio_agent_writes(agent_id, at);
-- ;;
CREATE TABLE studio_package_keys (
    identity     TEXT COLLATE "C" PRIMARY KEY,
    fingerprint  TEXT COLLATE "C" NOT NULL,
    public_key   TEXT COLLATE "C" NOT NULL,
    first_seen   TEXT COLLATE "C" NOT NULL
);
-- ;;
CREATE TABLE studio_privacy_marks (
    skill_id     TEXT COLLATE "C" NOT NULL,
    field        TEXT COLLATE "C" NOT NULL,
    kind         TEXT COLLATE "C" NOT NULL,
    text_sha256  TEXT COLLATE "C" NOT NULL,
    marked_by    TEXT COLLATE "C" NOT NULL,
    marked_at    TEXT COLLATE "C" NOT NULL,
    note         TEXT COLLATE "C" NOT NULL DEFAULT '',
    PRIMARY KEY (skill_id, field, kind, text_sha256)
);
-- ;;
CREATE TABLE studio_settings (
    key         TEXT COLLATE "C" PRIMARY KEY,
    value       TEXT COLLATE "C" NOT NULL,
    updated_by  TEXT COLLATE "C" NOT NULL,
    updated_at  TEXT COLLATE "C" NOT NULL
);
-- ;;
CREATE TABLE studio_run_baseline_games (
    run_id           TEXT COLLATE "C" NOT NULL,
    skill_id         TEXT COLLATE "C" NOT NULL,
    game             BIGINT NOT NULL,
    seed             BIGINT,
    outcome          TEXT COLLATE "C" NOT NULL,
    duration_s       DOUBLE PRECISION,
    resource_delta   DOUBLE PRECISION,
    army_value_delta DOUBLE PRECISION,
    map_control      DOUBLE PRECISION,
    error            TEXT COLLATE "C",
    engine_version   TEXT COLLATE "C" NOT NULL DEFAULT '',
    recorded_at      TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (run_id, skill_id, game)
);
-- ;;
CREATE TABLE studio_run_lifts (
    run_id         TEXT COLLATE "C" NOT NULL,
    skill_id       TEXT COLLATE "C" NOT NULL,
    body_hash      TEXT COLLATE "C" NOT NULL,
    opponent       TEXT COLLATE "C" NOT NULL,
    engine_version TEXT COLLATE "C" NOT NULL DEFAULT '',
    pairs          BIGINT NOT NULL,
    both_won       BIGINT NOT NULL,
    skill_only     BIGINT NOT NULL,
    baseline_only  BIGINT NOT NULL,
    neither        BIGINT NOT NULL,
    excluded       BIGINT NOT NULL DEFAULT 0,
    skill_rate     DOUBLE PRECISION,
    baseline_rate  DOUBLE PRECISION,
    lift           DOUBLE PRECISION,
    low            DOUBLE PRECISION NOT NULL,
    high           DOUBLE PRECISION NOT NULL,
    worse          BIGINT NOT NULL DEFAULT 0,
    computed_at    TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (run_id, skill_id)
);
-- ;;
CREATE INDEX studio_run_lifts_skill ON studio_run_lifts(skill_id, computed_at);
-- ;;
CREATE TABLE studio_run_decisions (
    run_id      TEXT COLLATE "C" NOT NULL,
    skill_id    TEXT COLLATE "C" NOT NULL,
    bar_name    TEXT COLLATE "C" NOT NULL,
    bar         DOUBLE PRECISION NOT NULL,
    delta       DOUBLE PRECISION NOT NULL,
    alpha       DOUBLE PRECISION NOT NULL,
    beta        DOUBLE PRECISION NOT NULL,
    min_games   BIGINT NOT NULL DEFAULT 0,
    decision    TEXT COLLATE "C" NOT NULL,
    wins        BIGINT NOT NULL,
    decided     BIGINT NOT NULL,
    llr         DOUBLE PRECISION NOT NULL,
    decided_at  TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (run_id, skill_id)
);
-- ;;
CREATE TABLE studio_run_pairs (
    run_id      TEXT COLLATE "C" NOT NULL,
    position    BIGINT NOT NULL,
    skill_a     TEXT COLLATE "C" NOT NULL,
    skill_b     TEXT COLLATE "C" NOT NULL,
    switch_at   TEXT COLLATE "C" NOT NULL,
    wins        BIGINT NOT NULL DEFAULT 0,
    losses      BIGINT NOT NULL DEFAULT 0,
    draws       BIGINT NOT NULL DEFAULT 0,
    errors      BIGINT NOT NULL DEFAULT 0,
    credited    BIGINT NOT NULL DEFAULT 0,
    successes   BIGINT NOT NULL DEFAULT 0,
    note        TEXT COLLATE "C" NOT NULL DEFAULT '',
    applied_at  TEXT COLLATE "C",
    PRIMARY KEY (run_id, position)
);
-- ;;
CREATE INDEX studio_run_pairs_a ON studio_run_pairs(skill_a);
-- ;;
CREATE INDEX studio_run_pairs_b ON studio_run_pairs(skill_b);
-- ;;
CREATE TABLE studio_tag_counts (
    tag     TEXT COLLATE "C" PRIMARY KEY,
    skills  BIGINT NOT NULL
);
-- ;;
CREATE TABLE studio_creator_counts (
    created_by  TEXT COLLATE "C" PRIMARY KEY,
    skills      BIGINT NOT NULL
);
-- ;;

-- Triggers: the same events, column lists and conditions as SQLite's --------------------------

CREATE FUNCTION studio_skills_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO studio_skill_versions(skill_id, version) VALUES (NEW.id, 1)
    ON CONFLICT (skill_id) DO UPDATE SET version = studio_skill_versions.version + 1;
    RETURN NULL;
END
$$;
-- ;;
CREATE TRIGGER studio_skills_version_insert AFTER INSERT ON skills
FOR EACH ROW EXECUTE FUNCTION studio_skills_version();
-- ;;
CREATE TRIGGER studio_skills_version_update
AFTER UPDATE OF domain, name, description, body_json, tags, game_module, source, model_id, created_at ON skills
FOR EACH ROW EXECUTE FUNCTION studio_skills_version();
-- ;;
CREATE FUNCTION studio_embedding_stale() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO studio_embedding_meta(skill_id, model_id, description_sha256, embedded_at)
    SELECT NEW.id, e.model_id, '', COALESCE((SELECT embedded_at FROM studio_embedding_meta WHERE skill_id = NEW.id), '')
    FROM skill_embeddings e WHERE e.skill_id = NEW.id
    ON CONFLICT (skill_id) DO UPDATE SET model_id = excluded.model_id, description_sha256 = excluded.description_sha256,
        embedded_at = excluded.embedded_at;
    RETURN NULL;
END
$$;
-- ;;
CREATE TRIGGER studio_embedding_stale AFTER UPDATE OF description ON skills
FOR EACH ROW WHEN (OLD.description IS DISTINCT FROM NEW.description) EXECUTE FUNCTION studio_embedding_stale();
-- ;;
CREATE FUNCTION studio_embedding_meta_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM studio_embedding_meta WHERE skill_id = OLD.skill_id;
    RETURN NULL;
END
$$;
-- ;;
CREATE TRIGGER studio_embedding_meta_gone AFTER DELETE ON skill_embeddings
FOR EACH ROW EXECUTE FUNCTION studio_embedding_meta_gone();
-- ;;
CREATE FUNCTION studio_label_embedding_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM studio_label_embeddings WHERE skill_id = OLD.id;
    RETURN NULL;
END
$$;
-- ;;
CREATE TRIGGER studio_label_embedding_gone AFTER DELETE ON skills
FOR EACH ROW EXECUTE FUNCTION studio_label_embedding_gone();
-- ;;

-- The change log in-memory vector indexes replay (TG_ARGV[0]: the column naming the skill).
CREATE FUNCTION studio_retrieval_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO studio_retrieval_changes(skill_id) VALUES (to_jsonb(OLD) ->> TG_ARGV[0]);
    ELSE
        INSERT INTO studio_retrieval_changes(skill_id) VALUES (to_jsonb(NEW) ->> TG_ARGV[0]);
    END IF;
    RETURN NULL;
END
$$;
-- ;;
CREATE TRIGGER studio_retrieval_embedding_insert AFTER INSERT ON skill_embeddings
FOR EACH ROW EXECUTE FUNCTION studio_retrieval_change('skill_id');
-- ;;
CREATE TRIGGER studio_retrieval_embedding_update AFTER UPDATE ON skill_embeddings
FOR EACH ROW EXECUTE FUNCTION studio_retrieval_change('skill_id');
-- ;;
CREATE TRIGGER studio_retrieval_embedding_delete AFTER DELETE ON skill_embeddings
FOR EACH ROW EXECUTE FUNCTION studio_retrieval_change('skill_id');
-- ;;
CREATE TRIGGER studio_retrieval_label_insert AFTER INSERT ON studio_label_embeddings
FOR EACH ROW EXECUTE FUNCTION studio_retrieval_change('skill_id');
-- ;;
CREATE TRIGGER studio_retrieval_label_update AFTER UPDATE ON studio_label_embeddings
FOR EACH ROW EXECUTE FUNCTION studio_retrieval_change('skill_id');
-- ;;
CREATE TRIGGER studio_retrieval_skill_update AFTER UPDATE OF domain, game_module, confidence ON skills
FOR EACH ROW EXECUTE FUNCTION studio_retrieval_change('id');
-- ;;
CREATE TRIGGER studio_retrieval_skill_delete AFTER DELETE ON skills
FOR EACH ROW EXECUTE FUNCTION studio_retrieval_change('id');
-- ;;
CREATE TRIGGER studio_retrieval_review_insert AFTER INSERT ON studio_skill_meta
FOR EACH ROW EXECUTE FUNCTION studio_retrieval_change('skill_id');
-- ;;
CREATE TRIGGER studio_retrieval_review_update AFTER UPDATE OF review_state ON studio_skill_meta
FOR EACH ROW EXECUTE FUNCTION studio_retrieval_change('skill_id');
-- ;;

-- Tag counts (migration 13), per occurrence of a text tag.
CREATE FUNCTION studio_count_tags(tags TEXT, delta BIGINT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO studio_tag_counts(tag, skills)
    SELECT tag, COUNT(*) * delta FROM studio_tag_texts(tags) AS tag GROUP BY tag
    ON CONFLICT (tag) DO UPDATE SET skills = studio_tag_counts.skills + excluded.skills;
    IF delta < 0 THEN
        DELETE FROM studio_tag_counts WHERE skills <= 0;
    END IF;
END
$$;
-- ;;
CREATE FUNCTION studio_tag_counts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        PERFORM studio_count_tags(OLD.tags, -1);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM studio_count_tags(NEW.tags, 1);
    END IF;
    RETURN NULL;
END
$$;
-- ;;
CREATE TRIGGER studio_tag_counts_insert AFTER INSERT ON skills
FOR EACH ROW EXECUTE FUNCTION studio_tag_counts();
-- ;;
CREATE TRIGGER studio_tag_counts_delete AFTER DELETE ON skills
FOR EACH ROW EXECUTE FUNCTION studio_tag_counts();
-- ;;
CREATE TRIGGER studio_tag_counts_update AFTER UPDATE OF tags ON skills
FOR EACH ROW WHEN (OLD.tags IS DISTINCT FROM NEW.tags) EXECUTE FUNCTION studio_tag_counts();
-- ;;

-- Creator counts (migration 13): a skill counts for its meta row's creator, 'unknown' without one.
CREATE FUNCTION studio_count_creator(creator TEXT, delta BIGINT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO studio_creator_counts(created_by, skills) VALUES (COALESCE(creator, 'unknown'), delta)
    ON CONFLICT (created_by) DO UPDATE SET skills = studio_creator_counts.skills + excluded.skills;
    DELETE FROM studio_creator_counts WHERE skills = 0;
END
$$;
-- ;;
CREATE FUNCTION studio_creator_counts_skill() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM studio_count_creator((SELECT created_by FROM studio_skill_meta WHERE skill_id = NEW.id), 1);
    ELSE
        PERFORM studio_count_creator((SELECT created_by FROM studio_skill_meta WHERE skill_id = OLD.id), -1);
    END IF;
    RETURN NULL;
END
$$;
-- ;;
CREATE TRIGGER studio_creator_counts_skill_insert AFTER INSERT ON skills
FOR EACH ROW EXECUTE FUNCTION studio_creator_counts_skill();
-- ;;
CREATE TRIGGER studio_creator_counts_skill_delete AFTER DELETE ON skills
FOR EACH ROW EXECUTE FUNCTION studio_creator_counts_skill();
-- ;;
CREATE FUNCTION studio_creator_counts_meta() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') AND EXISTS (SELECT 1 FROM skills WHERE id = OLD.skill_id) THEN
        PERFORM studio_count_creator(OLD.created_by, -1);
        PERFORM studio_count_creator('unknown', 1);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND EXISTS (SELECT 1 FROM skills WHERE id = NEW.skill_id) THEN
        PERFORM studio_count_creator('unknown', -1);
        PERFORM studio_count_creator(NEW.created_by, 1);
    END IF;
    RETURN NULL;
END
$$;
-- ;;
CREATE TRIGGER studio_creator_counts_meta_insert AFTER INSERT ON studio_skill_meta
FOR EACH ROW EXECUTE FUNCTION studio_creator_counts_meta();
-- ;;
CREATE TRIGGER studio_creator_counts_meta_delete AFTER DELETE ON studio_skill_meta
FOR EACH ROW EXECUTE FUNCTION studio_creator_counts_meta();
-- ;;
CREATE TRIGGER studio_creator_counts_meta_update AFTER UPDATE OF skill_id, created_by ON studio_skill_meta
FOR EACH ROW EXECUTE FUNCTION studio_creator_counts_meta();
-- ;;

-- The change token: one row, moved by every transaction that writes any table, announced on
-- the 'skillstudio_changes' channel when it commits.
CREATE TABLE studio_changes (
    id       BIGINT PRIMARY KEY CHECK (id = 1),
    version  BIGINT NOT NULL
);
-- ;;
INSERT INTO studio_changes(id, version) VALUES (1, 0);
-- ;;
CREATE FUNCTION studio_note_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Once per transaction: a bulk write's thousand statements would otherwise each update the
    -- one row (a chain of versions that every later update walks).
    IF current_setting('skillstudio.change_noted', true) IS DISTINCT FROM 'yes' THEN
        UPDATE studio_changes SET version = version + 1 WHERE id = 1;
        PERFORM pg_notify('skillstudio_changes', coalesce(current_setting('skillstudio.origin', true), ''));
        PERFORM set_config('skillstudio.change_noted', 'yes', true);
    END IF;
    RETURN NULL;
END
$$;
