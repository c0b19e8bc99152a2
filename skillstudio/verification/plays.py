"""``skillstudio record PLAYS.jsonl``: real play outcomes of content skills, imported once.

One JSON object per line::

    {"skill_id": "5f0c...", "completed": true, "time": "2026-05-02T18:30:00Z", "rating": 4, "player_count": 2}

``skill_id`` (or ``skill``), ``completed`` (bool) and ``time`` (when the play ended, ISO 8601; a
number is read as the play's length in seconds) are required; ``rating`` (1..5, or null when the
player gave none), ``player_count`` (1..64) and ``play_id`` (a stable id) are optional.

Importing is idempotent: each play gets a key (its ``play_id``, else a hash of its fields and
its occurrence number among identical lines of the file), stored in the same transaction as the
skill's new evidence; re-importing the same file adds nothing. A file with any invalid line is
refused as a whole, with every problem listed by line.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillstudio.model import Domain, Issue, ValidationError, utc_now
from skillstudio.model.evidence import EvidenceKind, VerificationRecord
from skillstudio.model.validation import Checker
from skillstudio.store import (
    AuditAction,
    PlayClaim,
    QualityOutcome,
    SkillNotFound,
    SkillRepository,
    SuccessInterval,
    body_hash,
)
from skillstudio.store.runs import RunStore
from skillstudio.verification.policy import DEFAULT_POLICY, VerificationPolicy, audit_action
from skillstudio.verification.stats import Interval

MAX_FILE_BYTES = 64 * 1024 * 1024
_KEYS = {"skill_id", "skill", "completed", "time", "rating", "player_count", "play_id"}


@dataclass(frozen=True)
class Play:
    line: int
    key: str
    skill_id: str
    completed: bool
    time: str | float
    rating: float | None
    player_count: int | None

    def document(self) -> dict[str, Any]:
        return {
            "skill_id": self.skill_id,
            "completed": self.completed,
            "time": self.time,
            "rating": self.rating,
            "player_count": self.player_count,
        }


@dataclass(frozen=True)
class RecordResult:
    skill_id: str
    name: str
    new_plays: int
    completed: int
    rated: int
    rating: float | None
    before: str
    after: str
    action: str
    reason: str
    completion_rate: float  # over all plays that count
    interval: Interval  # Wilson 95% of completion_rate
    verification_count: int
    average_rating: float | None
    validation: tuple[str, ...] = ()  # content checks of the skill's EncounterPattern (errors, warnings)


@dataclass(frozen=True)
class RecordSummary:
    path: str
    lines: int
    plays: int
    already_imported: int
    results: tuple[RecordResult, ...]


def read_plays(path: str | Path, repository: SkillRepository) -> list[Play]:
    """Every play of the file, validated; ValidationError lists every problem by line."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise ValidationError([Issue("", f"cannot read: {error.strerror}")], context=str(path)) from None
    if len(raw) > MAX_FILE_BYTES:
        raise ValidationError([Issue("", f"larger than {MAX_FILE_BYTES} bytes")], context=str(path))
    check = Checker()
    plays: list[Play] = []
    seen: Counter[str] = Counter()
    known: dict[str, str] = {}
    for number, text in enumerate(raw.decode("utf-8", "replace").splitlines(), start=1):
        if not text.strip():
            continue
        where = f"line {number}"
        try:
            data = json.loads(text)
        except ValueError as error:
            check.fail(where, f"not JSON ({error})")
            continue
        if not isinstance(data, dict):
            check.fail(where, "expected a JSON object")
            continue
        for key in data:
            if key not in _KEYS:
                check.fail(f"{where}.{key}", f"unknown field (expected {', '.join(sorted(_KEYS))})")
        skill_ref = data.get("skill_id", data.get("skill"))
        if not isinstance(skill_ref, str) or not skill_ref.strip():
            check.fail(f"{where}.skill_id", "missing")
            continue
        if skill_ref not in known:
            try:
                skill_id = repository.resolve_id(skill_ref.strip())
                skill = repository.get(skill_id)
            except SkillNotFound:
                check.fail(f"{where}.skill_id", f"no skill {skill_ref!r} in the library")
                continue
            except Exception as error:  # noqa: BLE001 - untrusted text: an invalid row, or one the driver cannot encode
                check.fail(f"{where}.skill_id", str(error))
                continue
            if skill.domain is not Domain.CONTENT_GENERATION:
                check.fail(f"{where}.skill_id", f"{skill_id} is an AI skill; plays are evidence for content skills")
                continue
            known[skill_ref] = skill_id
        completed = data.get("completed")
        if not isinstance(completed, bool):
            check.fail(f"{where}.completed", "must be true or false")
        when = data.get("time")
        if isinstance(when, bool) or not isinstance(when, str | int | float):
            check.fail(f"{where}.time", "must be an ISO 8601 time or a length in seconds")
            when = None
        elif isinstance(when, str):
            when = check.timestamp(when, f"{where}.time")
        elif not 0 <= when <= 10**7:
            check.fail(f"{where}.time", "a play length must be 0..10,000,000 seconds")
            when = None
        rating = data.get("rating")
        if rating is not None:
            rating = check.number(rating, f"{where}.rating", 1.0, 5.0)
        players = data.get("player_count")
        if players is not None:
            players = check.integer(players, f"{where}.player_count", 1, 64)
        play_id = data.get("play_id")
        if play_id is not None and (not isinstance(play_id, str) or not play_id.strip() or len(play_id) > 200):
            check.fail(f"{where}.play_id", "must be a non-empty text of up to 200 characters")
            continue
        if not isinstance(completed, bool) or when is None or (data.get("rating") is not None and rating is None):
            continue
        if data.get("player_count") is not None and players is None:
            continue
        play = Play(number, "", known[skill_ref], completed, when, rating, players)
        if play_id is not None:
            key = "id:" + play_id.strip()
        else:
            fingerprint = json.dumps(play.document(), sort_keys=True)
            seen[fingerprint] += 1
            key = "sha256:" + hashlib.sha256(f"{fingerprint}#{seen[fingerprint]}".encode()).hexdigest()
        plays.append(Play(number, key, play.skill_id, completed, when, rating, players))
    check.raise_if_failed(str(path))
    return plays


def record_plays(
    path: str | Path,
    repository: SkillRepository,
    *,
    policy: VerificationPolicy = DEFAULT_POLICY,
) -> RecordSummary:
    """Import a PLAYS.jsonl file's new plays and apply the content rules to each skill."""
    plays = read_plays(path, repository)
    store = RunStore(repository.database)
    known = store.known_play_keys(play.key for play in plays)
    fresh: dict[str, list[Play]] = {}
    claimed: set[str] = set()
    for play in plays:
        if play.key in known or play.key in claimed:
            continue
        claimed.add(play.key)
        fresh.setdefault(play.skill_id, []).append(play)
    results = [_apply(repository, store, policy, str(path), skill_id, group) for skill_id, group in fresh.items()]
    lines = len({play.line for play in plays})
    return RecordSummary(str(path), lines, len(plays), len(plays) - len(claimed), tuple(results))


def _apply(
    repository: SkillRepository,
    store: RunStore,
    policy: VerificationPolicy,
    source: str,
    skill_id: str,
    plays: Sequence[Play],
) -> RecordResult:
    skill = repository.get(skill_id)
    completed = sum(play.completed for play in plays)
    ratings = [play.rating for play in plays if play.rating is not None]
    rating = sum(ratings) / len(ratings) if ratings else None
    times = [play.time for play in plays if isinstance(play.time, str)]
    record = VerificationRecord(
        recorded_at=max(times) if times else utc_now(),
        kind=EvidenceKind.PLAY,
        wins=completed,
        losses=len(plays) - completed,
        rating=rating,
        rated=len(ratings),
        body_hash=body_hash(skill),
        engine_version=skill.provenance.engine_version,
        note=f"{len(plays)} plays from {Path(source).name}",
    )
    before = skill.quality.confidence
    assessment = policy.assess(
        skill.domain, [*repository.evidence.verifications(skill_id), record], body_hash(skill), before
    )
    after = assessment.confidence
    action = audit_action(before, after)
    interval = assessment.interval

    details = {
        "plays": len(plays),
        "completed": completed,
        "rated": len(ratings),
        "rating": rating,
        "source": source,
        "before": before.value,
        "after": after.value,
        "reason": assessment.reason,
        "completion_rate": round(assessment.quality.success_rate, 4),
        "wilson_95": interval.as_list(),
    }
    outcome = QualityOutcome(
        assessment.quality,
        AuditAction(action),
        f"plays recorded: {assessment.reason}",
        details,
        interval=SuccessInterval(assessment.wins, assessment.decided, interval.low, interval.high),
        plays=PlayClaim(source, tuple((play.key, play.document()) for play in plays)),
    )
    repository.evidence.set_quality(skill_id, outcome, record=record)
    from skillstudio.verification.content import validate_skill

    findings = (
        tuple(str(f) for f in validate_skill(skill).findings) if skill.body_kind.value == "encounter_pattern" else ()
    )
    return RecordResult(
        skill_id,
        skill.name,
        len(plays),
        completed,
        len(ratings),
        rating,
        before.value,
        after.value,
        action,
        assessment.reason,
        assessment.quality.success_rate,
        interval,
        assessment.decided,
        assessment.quality.average_rating,
        findings,
    )


__all__ = ["Play", "RecordResult", "RecordSummary", "read_plays", "record_plays"]
