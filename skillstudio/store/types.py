"""The values the store hands out and takes in: plain frozen dataclasses, no database objects.

Every part of the repository (docs/storage.md) returns these, so a front end never holds a
session or a row. ``SkillQuery`` stays in :mod:`skillstudio.store.query`, beside the SQL it
becomes.
"""

from __future__ import annotations

import getpass
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from skillstudio.model import Issue, Quality, Skill, parse_skill
from skillstudio.model.evidence import VerificationRecord
from skillstudio.store.events import AuditAction
from skillstudio.store.query import SkillQuery

# What JSON text decodes to: the type of every JSON column's value handed out (snapshots,
# audit details, frontmatter, run options).
JsonValue: TypeAlias = "str | int | float | bool | list[JsonValue] | dict[str, JsonValue] | None"
JsonObject: TypeAlias = "dict[str, JsonValue]"
# What the store accepts to write as JSON: read-only containers, so a list[str] or a tuple fits.
JsonInput: TypeAlias = "str | int | float | bool | Sequence[JsonInput] | Mapping[str, JsonInput] | None"

ActorKind = Literal["human", "agent", "system"]


@dataclass(frozen=True)
class Actor:
    """Who makes a change: recorded as revision author and audit actor."""

    id: str
    kind: ActorKind = "human"

    @classmethod
    def current_user(cls) -> Actor:
        try:
            name = getpass.getuser()
        except (KeyError, OSError):  # no login name (containers, some CI)
            name = "user"
        return cls(name or "user", "human")


# --- skills ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SkillSummary:
    """One row of a skill list, read from columns only (no body parsing): cheap for 100k rows."""

    id: str
    name: str
    domain: str
    game_module: str
    confidence: str
    success_rate: float | None
    verification_count: int | None
    average_rating: float | None
    use_count: int | None
    source: str
    created_by: str
    created_at: str
    last_verified: str | None
    last_used: str | None
    tags: tuple[str, ...]
    review_state: str | None
    # What was wrong with the listed columns (an engine's text in success_rate, say): the
    # column is shown as unknown (None, or "?" for text) and each problem named here.
    issues: tuple[Issue, ...] = ()

    @property
    def invalid(self) -> tuple[str, ...]:
        """The paths of the columns that held a value of the wrong type or range."""
        return tuple(issue.path for issue in self.issues)


@dataclass(frozen=True)
class QueryResult:
    ids: list[str]
    total: int  # matches before offset/limit
    query: SkillQuery = field(default_factory=SkillQuery)


@dataclass(frozen=True)
class LibraryStats:
    total: int
    by_domain: dict[str, int]
    by_confidence: dict[str, int]
    by_game_module: dict[str, int]
    by_source: dict[str, int]
    in_trash: int


@dataclass(frozen=True)
class Composition:
    partner_id: str
    success_count: int
    first: bool  # this skill is skill_a of the pair (used first)


# --- history --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Revision:
    skill_id: str
    number: int
    version: int
    action: str
    author: str
    created_at: str
    message: str
    snapshot: JsonObject

    def skill(self) -> Skill:
        return parse_skill(self.snapshot, context=f"revision {self.number} of {self.skill_id}")


@dataclass(frozen=True)
class AuditEntry:
    id: int
    at: str
    actor: str
    actor_kind: str
    action: str
    skill_id: str | None
    revision: int | None
    details: JsonObject


@dataclass(frozen=True)
class TrashEntry:
    skill_id: str
    name: str
    deleted_at: str
    deleted_by: str
    message: str


# --- imports --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SkillExtras:
    """What an import carries beyond D057's row (migration 3, docs/storage.md).

    ``origin`` names where the skill came from (``workshop:publisher/name@version``,
    ``skill-md:<name>``, ``json:<file>``, ``voyager:<folder>``); ``frontmatter`` keeps a SKILL.md
    skill's fields the Instructions body has no place for (license, compatibility, metadata,
    unknown keys); ``files`` maps a relative path (``scripts/run.py``) to ``{"text": ...}`` or
    ``{"base64": ...}``; ``warnings`` are what a lenient import found wrong, for the reviewer.
    """

    origin: str = ""
    frontmatter: JsonObject = field(default_factory=dict)
    files: dict[str, dict[str, str]] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class ImportItem:
    """One skill an import writes: the skill, its extras, and evidence (new skills only)."""

    skill: Skill
    extras: SkillExtras | None = None
    verifications: tuple[VerificationRecord, ...] = ()
    # Earlier versions of a new skill, oldest first (a Voyager fooV1, fooV2 pile-up): they
    # become its first revisions, so history and diffs show how it grew.
    history: tuple[Skill, ...] = ()


# --- review ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReviewDecision:
    """One review decision (migration 5): the state set, by whom, when, why, at which revision."""

    skill_id: str
    state: str
    reviewer: str
    reviewer_kind: str
    at: str
    comment: str
    revision: int | None


@dataclass(frozen=True)
class RiskFinding:
    """What the risk linter found: a rule, its severity, a one-line reason and the span
    (``field`` with ``start``/``end`` character offsets into that field's text)."""

    rule: str
    severity: str
    reason: str
    field: str = ""
    start: int = 0
    end: int = 0
    excerpt: str = ""


MarkKey = tuple[str, str, str]  # a privacy mark: (field, kind, text sha256)


# --- verification ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Counts:
    wins: int = 0
    losses: int = 0
    draws: int = 0
    errors: int = 0

    @property
    def decided(self) -> int:
        return self.wins + self.losses + self.draws

    @property
    def played(self) -> int:
        return self.decided + self.errors

    @classmethod
    def of(cls, games: Mapping[str, int]) -> Counts:
        """From games per outcome (``win``, ``loss``, ``draw``, ``error``; others ignored)."""
        return cls(games.get("win", 0), games.get("loss", 0), games.get("draw", 0), games.get("error", 0))

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.wins + other.wins, self.losses + other.losses, self.draws + other.draws, self.errors + other.errors
        )

    def adding(self, outcome: str) -> Counts:
        """These counts and one more game that ended ``outcome``."""
        return self + Counts.of({outcome: 1})


@dataclass(frozen=True)
class SuccessInterval:
    """A skill's overall success rate as a Wilson interval over the evidence that counts."""

    successes: int
    trials: int
    low: float
    high: float


@dataclass(frozen=True)
class SessionApplied:
    """What :meth:`Evidence.apply_session` did with a run's session of one skill."""

    status: str  # applied | already (the run's session was stored before) | unchanged (nothing to credit)
    skill: Skill | None = None  # as stored after, when applied
    record: VerificationRecord | None = None  # the evidence stored: the session without its duplicate games
    duplicates: Counts = field(default_factory=Counts)  # games identical to games already credited


@dataclass(frozen=True)
class RunSkillResult:
    """A run's result for one skill, written to its row of the run when the session is applied."""

    run_id: str
    counts: Counts
    confidence_after: str
    success_rate: float | None  # of this session; None when no game was decided
    low: float  # the session's Wilson interval
    high: float
    note: str = ""
    duplicates: int = 0  # games identical to games already credited: played, not counted


@dataclass(frozen=True)
class PlayClaim:
    """Plays a file reported, claimed by key so that importing the file again counts none twice."""

    source: str
    plays: tuple[tuple[str, Mapping[str, JsonInput]], ...]  # (key, the play as read)


@dataclass(frozen=True)
class QualityOutcome:
    """What verification decided for one skill, stored in one transaction with its evidence:
    D057's quality columns, a revision and an audit entry saying ``action`` (``skill.verify``,
    ``skill.promote`` or ``skill.demote``), and the verification records beside them."""

    quality: Quality
    action: AuditAction = AuditAction.VERIFY
    message: str = ""
    details: Mapping[str, JsonInput] = field(default_factory=dict)
    interval: SuccessInterval | None = None  # studio_skill_intervals, if verification computed it
    run_result: RunSkillResult | None = None  # the run's row for this skill, marked applied
    plays: PlayClaim | None = None  # the plays this outcome counted


@dataclass(frozen=True)
class Claim:
    """A runner's hold on a run: ``token`` is unique per claim (two threads of one process differ)."""

    run_id: str
    token: str
    pid: int
    host: str
    claimed_at: str


@dataclass(frozen=True)
class GameRow:
    """One game as stored: the skill's side; ``outcome`` win | loss | draw | error."""

    skill_id: str
    game: int
    outcome: str
    seed: int | None = None
    duration_s: float | None = None
    resource_delta: float | None = None
    army_value_delta: float | None = None
    map_control: float | None = None
    error: str | None = None
    engine_version: str = ""


@dataclass(frozen=True)
class RunSkillEntry:
    """A skill of a run, as created (``game_module``, ``body_hash``, ``confidence_before``)."""

    skill_id: str
    game_module: str
    body_hash: str
    confidence_before: str


@dataclass(frozen=True)
class RunSkill:
    skill_id: str
    position: int
    game_module: str
    body_hash: str
    confidence_before: str
    confidence_after: str | None
    wins: int
    losses: int
    draws: int
    errors: int
    success_rate: float | None
    wilson_low: float | None
    wilson_high: float | None
    applied_at: str | None
    note: str
    duplicates: int = 0  # games identical to games already credited (migration 11)

    @property
    def played(self) -> int:
        return self.wins + self.losses + self.draws + self.errors


@dataclass(frozen=True)
class RunInfo:
    id: str
    kind: str
    status: str
    opponent: str
    engine: tuple[str, ...]
    engine_version: str
    executor: str
    seed: int
    games: int
    chunk_games: int
    actor: str
    options: JsonObject
    started_at: str
    finished_at: str | None
    message: str
    skills: int = 0
    games_recorded: int = 0
    policy: JsonObject = field(default_factory=dict)  # the settings the run applied (migration 11)

    @property
    def games_asked(self) -> int:
        return self.games * self.skills


# --- retrieval vectors ----------------------------------------------------------------------------


@dataclass(frozen=True)
class EmbeddingInfo:
    """What is known of one skill's vector."""

    model_id: str
    dimensions: int | None  # None when the blob is not a whole number of f32 values
    current: bool  # False when the description changed since the vector was computed
    embedded_at: str | None  # None for a vector another program wrote
    label_current: bool = False  # a label vector of the same model exists, for the current name and tags


@dataclass(frozen=True)
class EmbeddingStatus:
    """How much of the library has a current vector for one model."""

    model_id: str
    total: int
    current: int
    stale: int  # a description vector for this model, but from an older text (or no current label vector)
    missing: int  # no description vector for this model (none at all, or another model's)
    other_models: dict[str, int] = field(default_factory=dict)

    @property
    def lacking(self) -> int:
        return self.stale + self.missing


@dataclass(frozen=True)
class VectorColumns:
    """Stored vectors of one model with the fields retrieval filters on, one list per field."""

    skill_ids: list[str]
    blobs: list[bytes]
    domains: list[str]
    game_modules: list[str]
    confidences: list[str | None]
    review_states: list[str | None]
    label_blobs: list[bytes | None]  # the label vector of the same model, if any


@dataclass(frozen=True)
class PendingText:
    """A skill that needs one or both of its vectors computed."""

    skill_id: str
    description: str
    label: str = ""
    needs_description: bool = True
    needs_label: bool = True


__all__ = [
    "Actor",
    "ActorKind",
    "AuditEntry",
    "Claim",
    "Composition",
    "Counts",
    "EmbeddingInfo",
    "EmbeddingStatus",
    "GameRow",
    "ImportItem",
    "JsonInput",
    "JsonObject",
    "JsonValue",
    "LibraryStats",
    "MarkKey",
    "PendingText",
    "PlayClaim",
    "QualityOutcome",
    "QueryResult",
    "ReviewDecision",
    "Revision",
    "RiskFinding",
    "RunInfo",
    "RunSkill",
    "RunSkillEntry",
    "RunSkillResult",
    "SkillExtras",
    "SkillSummary",
    "SuccessInterval",
    "TrashEntry",
    "VectorColumns",
]
