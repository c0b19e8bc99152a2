"""``skillstudio record FILE.jsonl``: real outcomes, imported once: plays of content skills and
AI match outcomes from real games (gameplay evidence).

One JSON object per line. A **play** of a content skill::

    {"skill_id": "5f0c...", "completed": true, "time": "2026-05-02T18:30:00Z", "rating": 4, "player_count": 2}

``skill_id`` (or ``skill``), ``completed`` (bool) and ``time`` (when the play ended, ISO 8601; a
number is read as the play's length in seconds) are required; ``rating`` (1..5, or null when the
player gave none), ``player_count`` (1..64) and ``play_id`` (a stable id) are optional.

A **match** of an AI skill, as an engine reports it::

    {"skill_id": "8a1d...", "outcome": "win", "opponent": "kessler", "engine_version": "0.5.0",
     "time": "2026-05-02T18:30:00Z", "situation": {...}, "match_id": "m-1842"}

``skill_id``, ``outcome`` (win, loss or draw), ``opponent``, ``engine_version`` and ``time`` are
required; ``situation`` (a SituationSignature, checked) and ``match_id`` (a stable id) are
optional. Matches are *gameplay* evidence: what D057 promotes an AI skill beyond Tentative with.

The input is untrusted. Every line is checked first and every problem listed by line
(``line 3.outcome: ...``); a file with any bad line is refused whole and changes nothing.
Importing is idempotent: each line gets a key (its ``play_id``/``match_id``, else a hash of its
fields and its occurrence number among identical lines of the file), stored in the same
transaction as the skill's new evidence; importing the same lines again credits nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from skillstudio.model import Domain, Issue, ValidationError, parse_situation, situation_to_serde, utc_now
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
from skillstudio.verification.policy import Contradiction, VerificationPolicy, audit_action, policy_for
from skillstudio.verification.stats import Interval

MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_ID = 200
_PLAY_KEYS = {"skill_id", "skill", "completed", "time", "rating", "player_count", "play_id"}
_MATCH_KEYS = {"skill_id", "skill", "outcome", "opponent", "engine_version", "time", "situation", "match_id"}
OUTCOMES = ("win", "loss", "draw")


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
class Match:
    """One AI match outcome from a real game."""

    line: int
    key: str
    skill_id: str
    outcome: str  # win | loss | draw
    opponent: str
    engine_version: str
    time: str | float
    situation: dict[str, Any] | None = None  # canonical SituationSignature, if the engine gave one

    def document(self) -> dict[str, Any]:
        return {
            "skill_id": self.skill_id,
            "outcome": self.outcome,
            "opponent": self.opponent,
            "engine_version": self.engine_version,
            "time": self.time,
            "situation": self.situation,
        }


@dataclass(frozen=True)
class RecordResult:
    skill_id: str
    name: str
    new_plays: int  # new lines credited to the skill: plays, or matches for an AI skill
    completed: int  # completed plays; wins for matches
    rated: int
    rating: float | None
    before: str
    after: str
    action: str
    reason: str
    completion_rate: float  # over all evidence that counts (the skill's success_rate)
    interval: Interval  # Wilson 95% of completion_rate
    verification_count: int
    average_rating: float | None
    validation: tuple[str, ...] = ()  # content checks of the skill's EncounterPattern (errors, warnings)
    kind: str = EvidenceKind.PLAY.value  # play | gameplay
    losses: int = 0  # matches lost (gameplay)
    draws: int = 0  # matches drawn (gameplay)
    opponent: str | None = None  # gameplay: one result per opponent and engine version
    engine_version: str = ""
    contradiction: Contradiction | None = None  # the tier after, if its credited evidence contradicts it


@dataclass(frozen=True)
class RecordSummary:
    path: str
    lines: int
    plays: int
    already_imported: int  # lines (plays and matches) imported before
    results: tuple[RecordResult, ...]
    matches: int = 0


@dataclass(frozen=True)
class RecordFile:
    plays: tuple[Play, ...]
    matches: tuple[Match, ...]


def read_plays(path: str | Path, repository: SkillRepository) -> list[Play]:
    """Every play of the file, validated; ValidationError lists every problem by line."""
    return list(read_record_file(path, repository).plays)


def read_record_file(path: str | Path, repository: SkillRepository) -> RecordFile:
    """Every play and match of the file, validated; ValidationError lists every problem by line."""
    path = Path(path)
    try:
        with path.open("rb") as stream:
            raw = stream.read(MAX_FILE_BYTES + 1)  # never read more than is allowed
    except OSError as error:
        raise ValidationError([Issue("", f"cannot read: {error.strerror}")], context=str(path)) from None
    if len(raw) > MAX_FILE_BYTES:
        raise ValidationError([Issue("", f"larger than {MAX_FILE_BYTES} bytes")], context=str(path))
    reader = _Reader(repository)
    for number, text in enumerate(raw.decode("utf-8", "replace").splitlines(), start=1):
        if text.strip():
            reader.line(number, text)
    reader.check.raise_if_failed(str(path))
    return RecordFile(tuple(reader.plays), tuple(reader.matches))


class _Reader:
    """Reads a record file line by line, collecting every problem."""

    def __init__(self, repository: SkillRepository) -> None:
        self.repository = repository
        self.check = Checker()
        self.plays: list[Play] = []
        self.matches: list[Match] = []
        self.seen: Counter[str] = Counter()
        self.domains: dict[str, tuple[str, Domain]] = {}  # reference -> (id, domain)

    def line(self, number: int, text: str) -> None:
        check, where = self.check, f"line {number}"
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as error:
            check.fail(where, f"not JSON ({error})")
            return
        if not isinstance(data, dict):
            check.fail(where, "expected a JSON object")
            return
        is_match = "outcome" in data
        if is_match and "completed" in data:
            check.fail(where, "a line is a play (completed) or a match (outcome), not both")
            return
        allowed = _MATCH_KEYS if is_match else _PLAY_KEYS
        for key in data:
            if key not in allowed:
                check.fail(f"{where}.{key}", f"unknown field (expected {', '.join(sorted(allowed))})")
        found = self._skill(where, data.get("skill_id", data.get("skill")))
        if found is None:
            return
        skill_id, domain = found
        if is_match and domain is not Domain.AI_STRATEGY:
            check.fail(f"{where}.skill_id", f"{skill_id} is a content skill; match outcomes are evidence for AI skills")
        elif not is_match and domain is not Domain.CONTENT_GENERATION:
            check.fail(
                f"{where}.skill_id",
                f"{skill_id} is an AI skill; plays are evidence for content skills (an AI skill's line gives its outcome)",
            )
        elif is_match:
            self._match(number, where, skill_id, data)
        else:
            self._play(number, where, skill_id, data)

    def _skill(self, where: str, reference: object) -> tuple[str, Domain] | None:
        if not isinstance(reference, str) or not reference.strip():
            self.check.fail(f"{where}.skill_id", "missing")
            return None
        if reference not in self.domains:
            try:
                skill_id = self.repository.resolve_id(reference.strip())
                skill = self.repository.get(skill_id)
            except SkillNotFound:
                self.check.fail(f"{where}.skill_id", f"no skill {reference!r} in the library")
                return None
            except Exception as error:  # noqa: BLE001 - untrusted text: an invalid row, or one the driver cannot encode
                self.check.fail(f"{where}.skill_id", str(error))
                return None
            self.domains[reference] = (skill_id, skill.domain)
        return self.domains[reference]

    def _time(self, where: str, value: object) -> str | float | None:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            self.check.fail(f"{where}.time", "must be an ISO 8601 time or a length in seconds")
            return None
        if isinstance(value, str):
            return self.check.timestamp(value, f"{where}.time")
        if not 0 <= value <= 10**7:
            self.check.fail(f"{where}.time", "a length must be 0..10,000,000 seconds")
            return None
        return value

    def _stable_id(self, where: str, data: dict[str, Any], name: str) -> str | bool | None:
        """The line's own id, None if it has none, False if the one it has is not valid."""
        value = data.get(name)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_ID:
            self.check.fail(f"{where}.{name}", f"must be a non-empty text of up to {MAX_ID} characters")
            return False
        return value.strip()

    def _key(self, prefix: str, own: str | None, document: dict[str, Any]) -> str:
        if own is not None:
            return f"{prefix}id:{own}"
        fingerprint = json.dumps(document, sort_keys=True)
        self.seen[fingerprint] += 1  # identical lines are distinct outcomes, told apart by position
        return f"{prefix}sha256:" + hashlib.sha256(f"{fingerprint}#{self.seen[fingerprint]}".encode()).hexdigest()

    def _play(self, number: int, where: str, skill_id: str, data: dict[str, Any]) -> None:
        check = self.check
        issues = len(check.issues)
        completed = data.get("completed")
        if not isinstance(completed, bool):
            check.fail(f"{where}.completed", "must be true or false")
        when = self._time(where, data.get("time"))
        rating = data.get("rating")
        if rating is not None:
            rating = check.number(rating, f"{where}.rating", 1.0, 5.0)
        players = data.get("player_count")
        if players is not None:
            players = check.integer(players, f"{where}.player_count", 1, 64)
        own = self._stable_id(where, data, "play_id")
        if len(check.issues) != issues or not isinstance(completed, bool) or when is None or own is False:
            return
        play = Play(number, "", skill_id, completed, when, rating, players)
        key = self._key("", own if isinstance(own, str) else None, play.document())
        self.plays.append(Play(number, key, skill_id, completed, when, rating, players))

    def _match(self, number: int, where: str, skill_id: str, data: dict[str, Any]) -> None:
        check = self.check
        issues = len(check.issues)
        outcome = data.get("outcome")
        if outcome not in OUTCOMES:
            check.fail(f"{where}.outcome", f"must be one of {', '.join(OUTCOMES)}")
        opponent = check.text(data.get("opponent"), f"{where}.opponent", max_len=MAX_ID, allow_empty=False, strip=True)
        version = check.text(data.get("engine_version"), f"{where}.engine_version", max_len=64, allow_empty=False)
        when = self._time(where, data.get("time"))
        situation: dict[str, Any] | None = None
        if data.get("situation") is not None:
            try:
                situation = situation_to_serde(parse_situation(data["situation"], path=f"{where}.situation"))
            except ValidationError as error:
                check.issues.extend(error.issues)
        own = self._stable_id(where, data, "match_id")
        if len(check.issues) != issues or opponent is None or version is None or when is None or own is False:
            return
        match = Match(number, "", skill_id, str(outcome), opponent, version, when, situation)
        key = self._key("match:", own if isinstance(own, str) else None, match.document())
        self.matches.append(Match(number, key, skill_id, str(outcome), opponent, version, when, situation))


def record_plays(
    path: str | Path,
    repository: SkillRepository,
    *,
    policy: VerificationPolicy | None = None,
) -> RecordSummary:
    """Import a record file's new plays and matches and apply the policy to each skill
    (``policy`` default: the library's settings)."""
    policy = policy or policy_for(repository.database)
    found = read_record_file(path, repository)
    store = RunStore(repository.database)
    keys = [p.key for p in found.plays] + [m.key for m in found.matches]
    known = store.known_play_keys(keys)
    claimed: set[str] = set()
    fresh_plays: dict[str, list[Play]] = {}
    for play in found.plays:
        if play.key not in known and play.key not in claimed:
            claimed.add(play.key)
            fresh_plays.setdefault(play.skill_id, []).append(play)
    # One gameplay record per skill, opponent and engine version: what a record holds one of.
    fresh_matches: dict[tuple[str, str, str], list[Match]] = {}
    for match in found.matches:
        if match.key not in known and match.key not in claimed:
            claimed.add(match.key)
            fresh_matches.setdefault((match.skill_id, match.opponent, match.engine_version), []).append(match)
    source = str(path)
    results = [_apply_plays(repository, policy, source, skill_id, group) for skill_id, group in fresh_plays.items()]
    results += [_apply_matches(repository, policy, source, group) for group in fresh_matches.values()]
    lines = len({p.line for p in found.plays} | {m.line for m in found.matches})
    return RecordSummary(
        source, lines, len(found.plays), len(keys) - len(claimed), tuple(results), matches=len(found.matches)
    )


def _apply_plays(
    repository: SkillRepository,
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
        contradiction=assessment.contradiction if after is before else None,
    )


def _apply_matches(
    repository: SkillRepository, policy: VerificationPolicy, source: str, matches: Sequence[Match]
) -> RecordResult:
    """One skill's new matches against one opponent with one engine version: a gameplay record,
    credited to the skill's current body, and the AI rules applied. As for a verify batch, a
    tier goes down only if the policy's demote_on_verify says so."""
    first = matches[0]
    skill = repository.get(first.skill_id)
    wins = sum(m.outcome == "win" for m in matches)
    losses = sum(m.outcome == "loss" for m in matches)
    draws = len(matches) - wins - losses
    times = [m.time for m in matches if isinstance(m.time, str)]
    record = VerificationRecord(
        recorded_at=max(times) if times else utc_now(),
        kind=EvidenceKind.GAMEPLAY,
        wins=wins,
        losses=losses,
        draws=draws,
        opponent=first.opponent,
        engine_version=first.engine_version,
        body_hash=body_hash(skill),
        note=f"{len(matches)} matches from {Path(source).name}",
    )
    before = skill.quality.confidence
    assessment = policy.assess(
        skill.domain, [*repository.evidence.verifications(skill.id), record], body_hash(skill), before
    )
    after, reason = assessment.confidence, assessment.reason
    quality = assessment.quality
    if after.rank < before.rank and not policy.demote_on_verify:
        after, reason = before, reason + f"; {before.value} kept (demote_on_verify is off)"
        quality = replace(quality, confidence=before)
    action = audit_action(before, after)
    interval = assessment.interval
    details: dict[str, Any] = {
        "matches": len(matches),
        "wins": wins,
        "losses": losses,
        "draws": draws,
        "opponent": first.opponent,
        "engine_version": first.engine_version,
        "source": source,
        "before": before.value,
        "after": after.value,
        "reason": reason,
        "success_rate": round(quality.success_rate, 4),
        "wilson_95": interval.as_list(),
    }
    outcome = QualityOutcome(
        quality,
        AuditAction(action),
        f"gameplay recorded: {reason}",
        details,
        interval=SuccessInterval(assessment.wins, assessment.decided, interval.low, interval.high),
        plays=PlayClaim(source, tuple((m.key, m.document()) for m in matches)),
    )
    repository.evidence.set_quality(skill.id, outcome, record=record)
    return RecordResult(
        skill.id,
        skill.name,
        len(matches),
        wins,
        0,
        None,
        before.value,
        after.value,
        action,
        reason,
        quality.success_rate,
        interval,
        assessment.decided,
        None,
        kind=EvidenceKind.GAMEPLAY.value,
        losses=losses,
        draws=draws,
        opponent=first.opponent,
        engine_version=first.engine_version,
        contradiction=assessment.contradiction if after is before else None,
    )


__all__ = [
    "Match",
    "Play",
    "RecordFile",
    "RecordResult",
    "RecordSummary",
    "read_plays",
    "read_record_file",
    "record_plays",
]
