"""Typed SQLAlchemy mappings of the tables :mod:`skillstudio.store.migrations` creates.

The DDL in the migrations is the schema's single source of truth; these classes only map onto
it (``tests/test_store_schema.py`` checks that every mapped column exists). They are never
used to create tables. Integers map as BigInteger: SQLite's INTEGER holds 64 bits, and a server
library's columns are BIGINT (a game's seed needs them).
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Float, LargeBinary, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


# --- D057 -----------------------------------------------------------------------------------


class SkillRow(Base):
    """D057's ``skills``. Columns with a DEFAULT but no NOT NULL may be NULL in engine rows."""

    __tablename__ = "skills"

    id: Mapped[str] = mapped_column(Text, primary_key=True)
    domain: Mapped[str] = mapped_column(Text)
    name: Mapped[str] = mapped_column(Text)
    description: Mapped[str] = mapped_column(Text)
    body_json: Mapped[str] = mapped_column(Text)
    tags: Mapped[str] = mapped_column(Text)
    game_module: Mapped[str] = mapped_column(Text)
    source: Mapped[str] = mapped_column(Text)
    model_id: Mapped[str | None] = mapped_column(Text)
    verification_count: Mapped[int | None] = mapped_column(BigInteger)
    success_rate: Mapped[float | None] = mapped_column(Float)
    average_rating: Mapped[float | None] = mapped_column(Float)
    confidence: Mapped[str | None] = mapped_column(Text)
    use_count: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[str] = mapped_column(Text)
    last_used: Mapped[str | None] = mapped_column(Text)
    last_verified: Mapped[str | None] = mapped_column(Text)


class SkillEmbeddingRow(Base):
    __tablename__ = "skill_embeddings"

    skill_id: Mapped[str] = mapped_column(Text, primary_key=True)
    embedding: Mapped[bytes] = mapped_column(LargeBinary)
    model_id: Mapped[str] = mapped_column(Text)


class SkillCompositionRow(Base):
    __tablename__ = "skill_compositions"

    skill_a: Mapped[str] = mapped_column(Text, primary_key=True)
    skill_b: Mapped[str] = mapped_column(Text, primary_key=True)
    success_count: Mapped[int | None] = mapped_column(BigInteger)


# --- SkillStudio's extension tables ---------------------------------------------------------


class SkillMetaRow(Base):
    __tablename__ = "studio_skill_meta"

    skill_id: Mapped[str] = mapped_column(Text, primary_key=True)
    created_by: Mapped[str] = mapped_column(Text, default="unknown")
    engine_version: Mapped[str] = mapped_column(Text, default="")
    source_id: Mapped[str | None] = mapped_column(Text)
    source_author: Mapped[str | None] = mapped_column(Text)
    original_id: Mapped[str | None] = mapped_column(Text)
    review_state: Mapped[str | None] = mapped_column(Text)


class SkillVersionRow(Base):
    __tablename__ = "studio_skill_versions"

    skill_id: Mapped[str] = mapped_column(Text, primary_key=True)
    version: Mapped[int] = mapped_column(BigInteger)


class RevisionRow(Base):
    __tablename__ = "studio_revisions"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    skill_id: Mapped[str] = mapped_column(Text)
    number: Mapped[int] = mapped_column(BigInteger)
    version: Mapped[int] = mapped_column(BigInteger)
    action: Mapped[str] = mapped_column(Text)
    author: Mapped[str] = mapped_column(Text)
    created_at: Mapped[str] = mapped_column(Text)
    message: Mapped[str] = mapped_column(Text, default="")
    snapshot: Mapped[bytes] = mapped_column(LargeBinary)  # migration 14: snapshots.encode_snapshot


class AuditRow(Base):
    __tablename__ = "studio_audit_log"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    at: Mapped[str] = mapped_column(Text)
    actor: Mapped[str] = mapped_column(Text)
    actor_kind: Mapped[str] = mapped_column(Text)
    action: Mapped[str] = mapped_column(Text)
    skill_id: Mapped[str | None] = mapped_column(Text)
    revision: Mapped[int | None] = mapped_column(BigInteger)
    details: Mapped[str] = mapped_column(Text, default="{}")


class TrashRow(Base):
    __tablename__ = "studio_trash"

    skill_id: Mapped[str] = mapped_column(Text, primary_key=True)
    deleted_at: Mapped[str] = mapped_column(Text)
    deleted_by: Mapped[str] = mapped_column(Text)
    message: Mapped[str] = mapped_column(Text, default="")
    snapshot: Mapped[str] = mapped_column(Text)
    embedding: Mapped[bytes | None] = mapped_column(LargeBinary)
    embedding_model: Mapped[str | None] = mapped_column(Text)
    compositions: Mapped[str] = mapped_column(Text, default="[]")


class VerificationRow(Base):
    __tablename__ = "studio_verifications"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    skill_id: Mapped[str] = mapped_column(Text)
    recorded_at: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(Text)
    opponent: Mapped[str | None] = mapped_column(Text)
    wins: Mapped[int] = mapped_column(BigInteger, default=0)
    losses: Mapped[int] = mapped_column(BigInteger, default=0)
    draws: Mapped[int] = mapped_column(BigInteger, default=0)
    errors: Mapped[int] = mapped_column(BigInteger, default=0)
    rating: Mapped[float | None] = mapped_column(Float)
    rated: Mapped[int] = mapped_column(BigInteger, default=0)
    engine_version: Mapped[str] = mapped_column(Text, default="")
    body_hash: Mapped[str] = mapped_column(Text, default="")
    note: Mapped[str] = mapped_column(Text, default="")


class SkillExtrasRow(Base):
    """Migration 3: what an import carries beyond D057's row (docs/storage.md)."""

    __tablename__ = "studio_skill_extras"

    skill_id: Mapped[str] = mapped_column(Text, primary_key=True)
    origin: Mapped[str] = mapped_column(Text, default="")
    frontmatter: Mapped[str] = mapped_column(Text, default="{}")
    files: Mapped[str] = mapped_column(Text, default="{}")
    warnings: Mapped[str] = mapped_column(Text, default="[]")


# --- migration 4: verification runs (docs/verification.md) ---------------------------------------


class VerificationRunRow(Base):
    __tablename__ = "studio_verification_runs"

    id: Mapped[str] = mapped_column(Text, primary_key=True)
    kind: Mapped[str] = mapped_column(Text, default="verify")
    status: Mapped[str] = mapped_column(Text, default="running")
    opponent: Mapped[str] = mapped_column(Text)
    engine: Mapped[str] = mapped_column(Text, default="[]")
    engine_version: Mapped[str] = mapped_column(Text, default="")
    executor: Mapped[str] = mapped_column(Text)
    seed: Mapped[int] = mapped_column(BigInteger)
    games: Mapped[int] = mapped_column(BigInteger)
    chunk_games: Mapped[int] = mapped_column(BigInteger)
    actor: Mapped[str] = mapped_column(Text)
    options: Mapped[str] = mapped_column(Text, default="{}")
    started_at: Mapped[str] = mapped_column(Text)
    finished_at: Mapped[str | None] = mapped_column(Text)
    message: Mapped[str] = mapped_column(Text, default="")
    policy: Mapped[str] = mapped_column(Text, default="{}")  # migration 11: the settings it applied


class RunSkillRow(Base):
    __tablename__ = "studio_run_skills"

    run_id: Mapped[str] = mapped_column(Text, primary_key=True)
    skill_id: Mapped[str] = mapped_column(Text, primary_key=True)
    position: Mapped[int] = mapped_column(BigInteger)
    game_module: Mapped[str] = mapped_column(Text)
    body_hash: Mapped[str] = mapped_column(Text)
    confidence_before: Mapped[str] = mapped_column(Text)
    confidence_after: Mapped[str | None] = mapped_column(Text)
    wins: Mapped[int] = mapped_column(BigInteger, default=0)
    losses: Mapped[int] = mapped_column(BigInteger, default=0)
    draws: Mapped[int] = mapped_column(BigInteger, default=0)
    errors: Mapped[int] = mapped_column(BigInteger, default=0)
    success_rate: Mapped[float | None] = mapped_column(Float)
    wilson_low: Mapped[float | None] = mapped_column(Float)
    wilson_high: Mapped[float | None] = mapped_column(Float)
    applied_at: Mapped[str | None] = mapped_column(Text)
    note: Mapped[str] = mapped_column(Text, default="")
    duplicates: Mapped[int] = mapped_column(BigInteger, default=0)  # migration 11: games already credited


class RunGameRow(Base):
    __tablename__ = "studio_run_games"

    run_id: Mapped[str] = mapped_column(Text, primary_key=True)
    skill_id: Mapped[str] = mapped_column(Text, primary_key=True)
    game: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    seed: Mapped[int | None] = mapped_column(BigInteger)
    outcome: Mapped[str] = mapped_column(Text)
    duration_s: Mapped[float | None] = mapped_column(Float)
    resource_delta: Mapped[float | None] = mapped_column(Float)
    army_value_delta: Mapped[float | None] = mapped_column(Float)
    map_control: Mapped[float | None] = mapped_column(Float)
    error: Mapped[str | None] = mapped_column(Text)
    engine_version: Mapped[str] = mapped_column(Text, default="")
    recorded_at: Mapped[str] = mapped_column(Text)


class SkillIntervalRow(Base):
    __tablename__ = "studio_skill_intervals"

    skill_id: Mapped[str] = mapped_column(Text, primary_key=True)
    successes: Mapped[int] = mapped_column(BigInteger)
    trials: Mapped[int] = mapped_column(BigInteger)
    wilson_low: Mapped[float] = mapped_column(Float)
    wilson_high: Mapped[float] = mapped_column(Float)
    updated_at: Mapped[str] = mapped_column(Text)


class PlayImportRow(Base):
    __tablename__ = "studio_play_imports"

    key: Mapped[str] = mapped_column(Text, primary_key=True)
    skill_id: Mapped[str] = mapped_column(Text)
    source: Mapped[str] = mapped_column(Text, default="")
    imported_at: Mapped[str] = mapped_column(Text)
    play: Mapped[str] = mapped_column(Text, default="{}")


# --- migration 5: review decisions and risk findings (docs/review.md) ----------------------------


class ReviewDecisionRow(Base):
    __tablename__ = "studio_review_decisions"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    skill_id: Mapped[str] = mapped_column(Text)
    state: Mapped[str] = mapped_column(Text)
    reviewer: Mapped[str] = mapped_column(Text)
    reviewer_kind: Mapped[str] = mapped_column(Text, default="human")
    at: Mapped[str] = mapped_column(Text)
    comment: Mapped[str] = mapped_column(Text, default="")
    revision: Mapped[int | None] = mapped_column(BigInteger)


class RiskFindingRow(Base):
    __tablename__ = "studio_risk_findings"

    skill_id: Mapped[str] = mapped_column(Text, primary_key=True)
    position: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    rule: Mapped[str] = mapped_column(Text)
    severity: Mapped[str] = mapped_column(Text)
    reason: Mapped[str] = mapped_column(Text)
    field: Mapped[str] = mapped_column(Text, default="")
    start: Mapped[int] = mapped_column(BigInteger, default=0)
    end: Mapped[int] = mapped_column(BigInteger, default=0)
    excerpt: Mapped[str] = mapped_column(Text, default="")
    version: Mapped[int] = mapped_column(BigInteger, default=0)
    linted_at: Mapped[str] = mapped_column(Text)


# --- migration 11: the library's settings (docs/verification.md, "Settings") ---------------------


class SettingRow(Base):
    __tablename__ = "studio_settings"

    key: Mapped[str] = mapped_column(Text, primary_key=True)
    value: Mapped[str] = mapped_column(Text)  # JSON
    updated_by: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[str] = mapped_column(Text)


# --- migration 13: counts kept by triggers -------------------------------------------------------


class TagCountRow(Base):
    __tablename__ = "studio_tag_counts"

    tag: Mapped[str] = mapped_column(Text, primary_key=True)
    skills: Mapped[int] = mapped_column(BigInteger)


class CreatorCountRow(Base):
    __tablename__ = "studio_creator_counts"

    created_by: Mapped[str] = mapped_column(Text, primary_key=True)
    skills: Mapped[int] = mapped_column(BigInteger)
