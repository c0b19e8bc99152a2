"""The export privacy check (D057 "Privacy"): no player data leaves the library.

Scans every text field of a skill's exported document (body included) for what looks like a
player name, a match id, a replay, a local user name or home path, an e-mail address or an API
key. Each finding names the field path and the kind. What a finding does depends on the export
format (``refuses_export``): a Workshop package (``icpkg``, published for anyone to download)
and a D057 library published for engines (``d057``) are refused unless asked to redact;
SKILL.md and JSON exports (files the user keeps or hands over themselves, whose text is often
code where ``password=...`` is an example) only warn and are written unchanged unless asked to
redact. Redacting replaces each matched span by
``[redacted]`` and re-validates.
Names cannot be recognised in general, so player names are found by the patterns engines and
logs use (``player: Name``, ``Player 2 "Name"``, ``opponent_name=...``).
"""

from __future__ import annotations

import getpass
import hashlib
import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache, partial
from itertools import accumulate
from typing import Any

from skillstudio.model import Skill, parse_skill, skill_to_document

REDACTED = "[redacted]"

# Fields that hold ids or enum values, never free text a person could be named in.
_SKIPPED = {"id", "composable_with", "provenance.source_id", "provenance.original_id", "body.Instructions.references"}

# (kind, pattern, markers, starts). Markers: lowercase substrings one of which any match holds once
# folded (_folded); a text is only searched with the patterns whose markers it holds, since most
# text holds none.
# Starts: lowercase words one of which every match begins with, or () if none does. Such a rule
# is tried only where a start begins, not at every character: "game" and "player" are in most
# prose, and running their patterns along it took half of the scan (issue 17). No letter of a
# start has another spelling under (?i) than its lowercase, so str.lower finds every start (a
# test checks this).
_RULES: tuple[tuple[str, re.Pattern[str], tuple[str, ...], tuple[str, ...]], ...] = (
    ("api_key", re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}"), ("sk-",), ()),
    ("api_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), ("akia", "asia"), ()),
    ("api_key", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), ()),
    ("api_key", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), ("xox",), ()),
    ("api_key", re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"), ("aiza",), ()),
    (
        "api_key",
        re.compile(
            r"(?i)\b(?:api[_-]?key|secret[_-]?key|access[_-]?token|auth[_-]?token|password)\s*[:=]\s*[\"']?[^\s\"',;]{4,}"
        ),
        ("key", "token", "password"),
        (),
    ),
    ("email", re.compile(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b"), ("@",), ()),
    # Anchored at a token start: a leading [^\s]* would rescan every token from each position.
    (
        "replay",
        re.compile(r"(?i)(?<![^\s\"'(`])[^\s\"'`]*\.(?:orarep|icrep|rep|replay)\b"),
        (".orarep", ".icrep", ".rep", ".replay"),
        (),
    ),
    (
        "replay",
        re.compile(r"(?i)(?:^|[\s\"'(/\\])replays?[/\\][^\s\"']+"),
        ("replay/", "replays/", "replay\\", "replays\\"),
        (),
    ),
    ("match_id", re.compile(r"(?i)\bmatch[_\- ]?id\s*[:=#]?\s*[\"']?[A-Za-z0-9\-]{4,}"), ("match",), ("match",)),
    ("match_id", re.compile(r"(?i)\bmatch-[A-Za-z0-9]{2,}[A-Za-z0-9\-]*"), ("match-",), ("match-",)),
    (
        "match_id",
        re.compile(r"(?i)\b(?:match|game|lobby)\s+[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"),
        ("match", "game", "lobby"),
        ("match", "game", "lobby"),
    ),
    (
        "player_name",
        re.compile(r"(?i)\b(?:player|opponent|enemy)[_ ]?name\s*[:=]\s*[\"']?[^\s\"',;]+"),
        ("name",),
        ("player", "opponent", "enemy"),
    ),
    ("player_name", re.compile(r"(?i)\bplayer\s*\d*\s*:\s*[\"']?[^\s\"',;]+"), ("player",), ("player",)),
    ("player_name", re.compile(r"(?i)\bplayer\s*\d+\s*[\"“'][^\"”'\n]{1,64}[\"”']"), ("player",), ("player",)),
    ("home_path", re.compile(r"(?:/home|/Users)/[^/\s\"']+"), ("/home/", "/users/"), ()),
    ("home_path", re.compile(r"(?i)\b[A-Z]:\\(?:Users|Documents and Settings)\\[^\\\s\"']+"), (":\\",), ()),
)
KIND_LABELS = {"api_key": "API key", "match_id": "Match ID", "email": "E-mail address"}

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((kind, pattern) for kind, pattern, _, _ in _RULES)
_COMMON_LOGINS = {"root", "user", "admin", "guest", "runner", "ubuntu", "nobody", "test", "tester"}
# Export formats whose privacy findings refuse the export (others print them as warnings):
# Workshop packages, and D057 libraries published to engines (``skillstudio publish``).
REFUSING_FORMATS = frozenset({"icpkg", "d057"})


def refuses_export(fmt: str) -> bool:
    """Whether privacy findings refuse an export in format ``fmt`` (without ``--redact``), rather
    than being shown as warnings: Workshop packages, which D057 shares with everyone, and the
    D057 libraries ``publish`` writes for engines (every player's prompt may quote them)."""
    return fmt in REFUSING_FORMATS


@dataclass(frozen=True)
class Finding:
    skill_id: str
    path: str  # field path in the skill document, e.g. body.StrategicPattern.plan.reasoning
    kind: str  # api_key | email | replay | match_id | player_name | home_path | user_name
    text: str  # the matched text (shown to the user before export, never exported)

    def __str__(self) -> str:
        return f"{self.skill_id}: {self.path}: {self.kind} {self.text!r}"

    @property
    def kind_label(self) -> str:
        """The kind as a person reads it: "Player name", "API key"."""
        return KIND_LABELS.get(self.kind, self.kind.replace("_", " ").capitalize())

    @property
    def text_sha256(self) -> str:
        """What a reviewer's false-positive mark holds for this finding's text (migration 10)."""
        return hashlib.sha256(self.text.encode("utf-8", "surrogatepass")).hexdigest()

    @property
    def mark_key(self) -> tuple[str, str, str]:
        """(field path, kind, text sha256): how a false-positive mark names this finding."""
        return (self.path, self.kind, self.text_sha256)


def split_marked(
    findings: Iterable[Finding], marks: dict[str, set[tuple[str, str, str]]]
) -> tuple[list[Finding], list[Finding]]:
    """(findings still standing, findings a reviewer marked a false positive), given the marks
    per skill as ``PrivacyMarks.marked_many`` returns them."""
    standing: list[Finding] = []
    dismissed: list[Finding] = []
    for finding in findings:
        (dismissed if finding.mark_key in marks.get(finding.skill_id, ()) else standing).append(finding)
    return standing, dismissed


@lru_cache(maxsize=1)
def local_user_names() -> tuple[str, ...]:
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        return ()
    return (name,) if name and len(name) >= 3 and name.lower() not in _COMMON_LOGINS else ()


@lru_cache(maxsize=16)
def _patterns(user_names: tuple[str, ...]) -> list[tuple[str, re.Pattern[str]]]:
    return [
        *_PATTERNS,
        *(("user_name", re.compile(rf"(?i)(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])")) for name in user_names),
    ]


# Under (?i) a letter also matches spellings whose lowercase is not that letter: "ſ" is an "s",
# "ı" and "İ" (which lowercases to "i" and a combining dot) are an "i", "ς" is a "σ". Markers are
# found in text folded so that each such spelling becomes its letter (casefold, then the two
# below), or a pattern would match "paſſword=..." in a text the scan never searched with it.
# Folding more than (?i) does (casefold turns "ß" into "ss") only searches more texts.
_MARKER_FOLDS = str.maketrans({"ı": "i", "\u0307": None})


def _folded(text: str) -> str:
    """``text`` as markers are looked for in it: see _MARKER_FOLDS."""
    folded = text.casefold()
    return folded if folded.isascii() else folded.translate(_MARKER_FOLDS)


@lru_cache(maxsize=16)
def marker_rules(user_names: tuple[str, ...]) -> tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...]:
    """Every rule as (kind, pattern, markers): the rule can only match a text whose folded form
    (:func:`_folded`) holds one of its markers."""
    return tuple((kind, pattern, markers) for kind, pattern, markers, _ in _RULES) + tuple(
        (kind, pattern, (_folded(name),))
        for (kind, pattern), name in zip(_patterns(user_names)[len(_RULES) :], user_names, strict=True)
    )


@dataclass(frozen=True)
class _RuleSet:
    """The rules, and every marker any of them needs (a text holding none is never searched)."""

    markers: tuple[str, ...]
    rules: tuple[tuple[str, re.Pattern[str], frozenset[str], tuple[str, ...]], ...]


@lru_cache(maxsize=16)
def _rule_set(user_names: tuple[str, ...]) -> _RuleSet:
    rules = marker_rules(user_names)
    starts = {pattern: words for _, pattern, _, words in _RULES}
    return _RuleSet(
        tuple(sorted({marker for _, _, wanted in rules for marker in wanted})),
        tuple((kind, pattern, frozenset(wanted), starts.get(pattern, ())) for kind, pattern, wanted in rules),
    )


def _texts(value: Any, path: str, out: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Append (field path, text) for every text in ``value`` except the skipped fields."""
    if path in _SKIPPED:
        return out
    if isinstance(value, str):
        out.append((path, value))
    elif isinstance(value, dict):
        for key, item in value.items():
            _texts(item, f"{path}.{key}" if path else str(key), out)
    elif isinstance(value, list):
        for item in value:
            _texts(item, path, out)  # list items share their list's path for skipping
    return out


def _markers_present(rule_set: _RuleSet, texts: list[str]) -> dict[int, set[str]]:
    """For each text (by index) that holds a marker, every marker its folded form holds.

    The texts are joined by NUL, which no marker holds, so no marker spans two texts, and each
    marker is looked for with ``str.find`` (a C substring search; one regex alternation of all
    the markers took half of an export's privacy scan, issue 17), once per text that holds it.
    """
    joined = "\x00".join(texts)
    if joined.isascii():  # folding is lowercasing, one character for one
        lengths = [len(text) for text in texts]
        joined = joined.lower()
    else:  # a character may fold to more or fewer ("ß" to "ss"): each text's own folded length
        folded = [_folded(text) for text in texts]
        lengths = [len(text) for text in folded]
        joined = "\x00".join(folded)
    starts = list(accumulate((length + 1 for length in lengths[:-1]), initial=0))
    present: dict[int, set[str]] = {}
    for marker in rule_set.markers:
        position = joined.find(marker)
        while position >= 0:
            index = bisect_right(starts, position) - 1
            present.setdefault(index, set()).add(marker)
            if index + 1 == len(starts):
                break
            position = joined.find(marker, starts[index + 1])  # the next text that holds it
    return present


def scan_document(document: dict[str, Any], skill_id: str, user_names: tuple[str, ...] | None = None) -> list[Finding]:
    names = local_user_names() if user_names is None else user_names
    findings: list[Finding] = []
    rule_set = _rule_set(tuple(names))
    texts = _texts(document, "", [])
    present = _markers_present(rule_set, [text for _, text in texts])
    for index in sorted(present):
        path, text = texts[index]
        lowered = None
        for kind, pattern, markers, starts in rule_set.rules:
            if markers.isdisjoint(present[index]):
                continue
            if starts:
                lowered = text.lower() if lowered is None else lowered
            matches = _matches_at(pattern, text, lowered, starts) if starts else pattern.finditer(text)
            findings.extend(Finding(skill_id, path, kind, match.group(0).strip()) for match in matches)
    return findings


def _matches_at(
    pattern: re.Pattern[str], text: str, lowered: str | None, starts: tuple[str, ...]
) -> Iterable[re.Match[str]]:
    """What ``pattern.finditer(text)`` finds, for a pattern whose every match begins with one of
    ``starts``: the pattern is tried only where one begins in ``lowered`` (``text.lower()``).
    ``match`` at a position still sees the character before it, so ``\\b`` holds as in a search."""
    if lowered is None or len(lowered) != len(text):  # a lowercase of another length: no positions
        return pattern.finditer(text)
    positions = sorted(_occurrences(lowered, starts))
    found: list[re.Match[str]] = []
    end = 0
    for position in positions:
        if position < end:  # inside the last match: finditer goes on after it
            continue
        match = pattern.match(text, position)
        if match is not None:
            found.append(match)
            end = match.end()
    return found


def _occurrences(text: str, words: tuple[str, ...]) -> Iterable[int]:
    for word in words:
        position = text.find(word)
        while position >= 0:
            yield position
            position = text.find(word, position + 1)


def scan_skill(skill: Skill, user_names: tuple[str, ...] | None = None) -> list[Finding]:
    """What the privacy check finds in the skill as it would be exported."""
    return scan_document(skill_to_document(skill, local=False), skill.id, user_names)


def _kept_or_redacted(path: str, kind: str, keep: frozenset[tuple[str, str, str]], match: re.Match[str]) -> str:
    return match.group(0) if (path, kind, match.group(0).strip()) in keep else REDACTED


def _redact(
    value: Any,
    path: str,
    patterns: list[tuple[str, re.Pattern[str]]],
    keep: frozenset[tuple[str, str, str]] = frozenset(),
) -> Any:
    if path in _SKIPPED:
        return value
    if isinstance(value, str):
        for kind, pattern in patterns:
            if keep:
                value = pattern.sub(partial(_kept_or_redacted, path, kind, keep), value)
            else:
                value = pattern.sub(REDACTED, value)
        return value
    if isinstance(value, dict):
        return {
            key: _redact(item, f"{path}.{key}" if path else str(key), patterns, keep) for key, item in value.items()
        }
    if isinstance(value, list):
        return [_redact(item, path, patterns, keep) for item in value]
    return value


def redact_skill(skill: Skill, user_names: tuple[str, ...] | None = None, keep: Iterable[Finding] = ()) -> Skill:
    """The skill with every finding replaced by ``[redacted]`` (validated again), except those in
    ``keep`` (findings a reviewer marked false positives, ``ExportPreview.dismissed``)."""
    names = local_user_names() if user_names is None else user_names
    kept = frozenset((f.path, f.kind, f.text) for f in keep if f.skill_id == skill.id)
    document = _redact(skill_to_document(skill, local=False), "", _patterns(tuple(names)), kept)
    return parse_skill(document, context=f"skill {skill.id!r} after redaction")


__all__ = [
    "REDACTED",
    "REFUSING_FORMATS",
    "Finding",
    "local_user_names",
    "redact_skill",
    "refuses_export",
    "scan_document",
    "scan_skill",
    "split_marked",
]
