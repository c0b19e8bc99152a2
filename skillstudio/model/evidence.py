"""Verification evidence: one record per verification session of a skill.

A *session* is a headless batch against one opponent, or a set of human plays of a mission.
D057 counts evidence in games ("3+ games above 60%"), so a skill's ``verification_count`` is the
number of decided games or plays across its sessions, never the number of sessions. Error
games (the engine failed) are kept for the record but are neither wins nor losses.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from skillstudio.model.enums import SpelledEnum
from skillstudio.model.validation import MAX_DESCRIPTION, Checker, join_path

MAX_GAMES = 1_000_000
_RECORD_KEYS = (
    "recorded_at",
    "kind",
    "opponent",
    "wins",
    "losses",
    "draws",
    "errors",
    "rating",
    "rated",
    "engine_version",
    "body_hash",
    "note",
)


class EvidenceKind(SpelledEnum):
    HEADLESS = "headless"  # automated games against a reference opponent (AI skills)
    PLAY = "play"  # missions played by people (content skills); wins = completed plays
    GAMEPLAY = "gameplay"  # AI skills in real matches, reported by an engine (`record`)


@dataclass(frozen=True, slots=True)
class VerificationRecord:
    recorded_at: str
    kind: EvidenceKind
    wins: int
    losses: int
    draws: int = 0
    errors: int = 0
    opponent: str | None = None  # "IC Default Hard"; headless only
    rating: float | None = None  # mean player rating 1..5 over the plays that gave one
    rated: int = 0  # how many plays gave a rating
    engine_version: str = ""
    body_hash: str = ""  # sha256 of the body_json the evidence was gathered with
    note: str = ""

    @property
    def decided(self) -> int:
        """Games that count as evidence: wins, losses and draws, never errors."""
        return self.wins + self.losses + self.draws


@dataclass(frozen=True, slots=True)
class EvidenceSummary:
    """What a list of records adds up to, in D057's quality terms."""

    verification_count: int
    success_rate: float
    average_rating: float | None
    last_verified: str | None


def summarize(records: Iterable[VerificationRecord]) -> EvidenceSummary:
    records = list(records)
    decided = sum(record.decided for record in records)
    wins = sum(record.wins for record in records)
    rated = sum(record.rated for record in records)
    rating_sum = sum((record.rating or 0.0) * record.rated for record in records)
    return EvidenceSummary(
        verification_count=decided,
        success_rate=wins / decided if decided else 0.0,
        average_rating=rating_sum / rated if rated else None,
        last_verified=max((record.recorded_at for record in records), default=None),
    )


def record_to_document(record: VerificationRecord) -> dict[str, object]:
    """The record as plain data, in the field names ``read_verification_record`` reads."""
    return {
        "recorded_at": record.recorded_at,
        "kind": record.kind.value,
        "opponent": record.opponent,
        "wins": record.wins,
        "losses": record.losses,
        "draws": record.draws,
        "errors": record.errors,
        "rating": record.rating,
        "rated": record.rated,
        "engine_version": record.engine_version,
        "body_hash": record.body_hash,
        "note": record.note,
    }


def read_verification_record(check: Checker, value: object, path: str) -> VerificationRecord | None:
    data = check.mapping(value, path)
    if data is None:
        return None
    for key in data:
        if key not in _RECORD_KEYS:
            check.fail(join_path(path, key), f"unknown field (expected one of {', '.join(_RECORD_KEYS)})")

    def count(key: str) -> int | None:
        return check.integer(data.get(key, 0), join_path(path, key), 0, MAX_GAMES)

    recorded_at = check.timestamp(data.get("recorded_at"), join_path(path, "recorded_at"))
    kind = check.enum(EvidenceKind, data.get("kind", "headless"), join_path(path, "kind"))
    wins, losses, draws, errors = count("wins"), count("losses"), count("draws"), count("errors")
    opponent = check.optional_text(data.get("opponent"), join_path(path, "opponent"))
    raw_rating = data.get("rating")
    rating = None if raw_rating is None else check.number(raw_rating, join_path(path, "rating"), 1.0, 5.0)
    rated = count("rated") if "rated" in data else None
    engine_version = check.text(data.get("engine_version", ""), join_path(path, "engine_version"), max_len=64)
    body_hash = check.text(data.get("body_hash", ""), join_path(path, "body_hash"), max_len=64)
    note = check.text(data.get("note", ""), join_path(path, "note"), max_len=MAX_DESCRIPTION)
    if (
        recorded_at is None
        or kind is None
        or wins is None
        or losses is None
        or draws is None
        or errors is None
        or engine_version is None
        or body_hash is None
        or note is None
    ):
        return None
    if rated is None:  # a rating without a count stands for every decided play
        rated = (wins + losses + draws) if rating is not None else 0
    if rated and rating is None:
        check.fail(join_path(path, "rating"), f"missing although {rated} plays were rated")
        return None
    if rated > wins + losses + draws:
        check.fail(join_path(path, "rated"), f"{rated} rated plays but only {wins + losses + draws} plays")
        return None
    return VerificationRecord(
        recorded_at,
        kind,
        wins,
        losses,
        draws,
        errors,
        opponent,
        rating,
        rated,
        engine_version,
        body_hash,
        note,
    )
