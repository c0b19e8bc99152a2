"""The risk linter: finds what a reviewer should look at in text bound for an LLM prompt.

Qt-free. The rules are data (``resources/lint_rules.yaml``, docs/review.md): each has an id, a
severity, a one-line reason and a *kind* that this module knows how to apply. A finding points
at a span (field, start, end) of the text the rule looked at.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import select

from skillstudio.model import Instructions, Skill, SourceKind, body_to_json
from skillstudio.paths import resource
from skillstudio.store import RiskFinding, SkillRepository
from skillstudio.store.orm import SkillRow

try:  # the parser of ``re``, to arrange rule patterns for speed (``_combine``); optional
    from re import _constants as _sre  # type: ignore[attr-defined]  # private: typeshed has no stub
    from re import _parser as _sre_parse  # type: ignore[attr-defined]  # private: typeshed has no stub

    _CATEGORIES = {
        _sre.CATEGORY_SPACE: r"\s",
        _sre.CATEGORY_NOT_SPACE: r"\S",
        _sre.CATEGORY_WORD: r"\w",
        _sre.CATEGORY_NOT_WORD: r"\W",
        _sre.CATEGORY_DIGIT: r"\d",
        _sre.CATEGORY_NOT_DIGIT: r"\D",
    }
except ImportError:  # pragma: no cover
    _sre_parse = None

SEVERITIES = ("info", "low", "medium", "high")
KINDS = ("regex", "chars", "mixed_script", "max_length", "required", "duplicate", "encoded")
FIELDS = ("name", "description", "tags", "body")
_EXCERPT = 60


class RuleError(ValueError):
    """The rules file is not valid; names the rule and what is wrong."""


@dataclass(frozen=True)
class Rule:
    id: str
    severity: str
    reason: str
    kind: str
    fields: tuple[str, ...] = FIELDS
    params: Mapping[str, Any] = field(default_factory=dict)
    compiled: re.Pattern[str] | None = None
    ranges: tuple[tuple[int, int], ...] = ()
    targets: tuple[Rule, ...] = ()  # ``encoded``: the regex rules applied to decoded text

    @property
    def pattern(self) -> re.Pattern[str]:
        """The compiled pattern, which load_rules sets for regex, chars and encoded rules."""
        if self.compiled is None:
            raise ValueError(f"rule {self.id} ({self.kind}) has no pattern")
        return self.compiled


def default_rules_path() -> Path:
    return resource("lint_rules.yaml")


def load_rules(path: str | Path | None = None, *, data: Mapping[str, Any] | None = None) -> list[Rule]:
    """Parse the rules file (or already-loaded ``data``); RuleError on anything invalid."""
    if data is None:
        with open(path or default_rules_path(), encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    if not isinstance(data, Mapping) or not isinstance(data.get("rules"), list):
        raise RuleError("a rules file is a mapping with a `rules` list")
    rules, seen = [], set()
    for number, raw in enumerate(data["rules"], start=1):
        if not isinstance(raw, Mapping):
            raise RuleError(f"rule {number} is not a mapping")
        rule_id = str(raw.get("id") or "")
        where = f"rule {rule_id or number}"
        if not rule_id or rule_id in seen:
            raise RuleError(f"{where}: a unique `id` is required")
        seen.add(rule_id)
        severity, kind = raw.get("severity"), raw.get("kind")
        if severity not in SEVERITIES:
            raise RuleError(f"{where}: severity must be one of {', '.join(SEVERITIES)}")
        if kind not in KINDS:
            raise RuleError(f"{where}: kind must be one of {', '.join(KINDS)}")
        reason = str(raw.get("reason") or "").strip()
        if not reason or "\n" in reason:
            raise RuleError(f"{where}: `reason` must be one line")
        fields = tuple(raw.get("fields") or ("any",))
        if "any" in fields:
            fields = FIELDS
        elif not set(fields) <= {*FIELDS, "all"}:
            raise RuleError(f"{where}: fields must be among {', '.join((*FIELDS, 'all', 'any'))}")
        params = {k: v for k, v in raw.items() if k not in ("id", "severity", "reason", "kind", "fields")}
        compiled: re.Pattern[str] | None = None
        ranges: tuple[tuple[int, int], ...] = ()
        if "max_findings" in params and not isinstance(params["max_findings"], int):
            raise RuleError(f"{where}: `max_findings` must be an integer")
        if kind == "regex":
            flags = re.MULTILINE
            if not params.get("case_sensitive"):
                flags |= re.IGNORECASE
            if not isinstance(params.get("normalise", False), bool):
                raise RuleError(f"{where}: `normalise` is true or false")
            parts = params.get("patterns") or [params.get("pattern")]
            if not all(isinstance(part, str) and part for part in parts):
                raise RuleError(f"{where}: `pattern` or `patterns` (strings) is required")
            macros = params.get("macros") or {}
            if not isinstance(macros, Mapping) or not all(isinstance(v, str) for v in macros.values()):
                raise RuleError(f"{where}: `macros` maps names to patterns")
            try:
                expanded = [_expand(part, macros, where) for part in parts]
                for part in expanded:
                    re.compile(part, flags)
                compiled = re.compile(_combine(expanded, flags), flags)
            except re.error as error:
                raise RuleError(f"{where}: bad pattern: {error}") from None
        elif kind == "chars":
            ranges = tuple(_codepoint_range(item, where) for item in params.get("codepoints", ()))
            if not ranges:
                raise RuleError(f"{where}: `codepoints` is required")
            compiled = re.compile("[" + "".join(f"\\U{low:08x}-\\U{high:08x}" for low, high in ranges) + "]+")
        elif kind == "max_length" and not isinstance(params.get("max"), int):
            raise RuleError(f"{where}: `max` must be an integer")
        elif kind == "mixed_script" and not isinstance(params.get("min_letters", 1), int):
            raise RuleError(f"{where}: `min_letters` must be an integer")
        elif kind == "encoded":
            apply = params.get("apply")
            apply = [apply] if isinstance(apply, str) else apply
            if not apply or not isinstance(apply, list) or not all(isinstance(a, str) for a in apply):
                raise RuleError(f"{where}: `apply` names the regex rules to run on decoded text")
            for key in ("min_length", "max_runs", "max_decoded"):
                if not isinstance(params.get(key, 1), int) or params.get(key, 1) < 1:
                    raise RuleError(f"{where}: `{key}` must be a positive integer")
            if not isinstance(params.get("min_printable", 0.9), (int, float)):
                raise RuleError(f"{where}: `min_printable` must be a number")
            run = r"A-Za-z0-9+/_\-"
            compiled = re.compile(f"(?<![{run}])[{run}]{{{int(params.get('min_length', 24))},}}={{0,2}}(?![{run}=])")
        rules.append(Rule(rule_id, severity, reason, kind, fields, params, compiled, ranges))
    by_id = {rule.id: rule for rule in rules}
    for number, rule in enumerate(rules):
        if rule.kind == "encoded":
            apply = rule.params["apply"]
            names = [apply] if isinstance(apply, str) else apply
            missing = [name for name in names if by_id.get(name) is None or by_id[name].kind != "regex"]
            if missing:
                raise RuleError(f"rule {rule.id}: `apply` names no regex rule {', '.join(missing)}")
            rules[number] = replace(rule, targets=tuple(by_id[name] for name in names))
    return rules


def _expand(pattern: str, macros: Mapping[str, str], where: str) -> str:
    """Replace each ``{{name}}`` of ``pattern`` with the rule's macro of that name, as a group;
    macros may use other macros (not themselves)."""

    def one(match: re.Match[str]) -> str:
        if match.group(1) not in macros:
            raise RuleError(f"{where}: no macro named {match.group(1)!r}")
        return f"(?:{macros[match.group(1)]})"

    for _ in range(8):
        expanded = _MACRO.sub(one, pattern)
        if expanded == pattern:
            return expanded
        pattern = expanded
    raise RuleError(f"{where}: macros nest too deep (one uses itself?)")


_MACRO = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def _combine(parts: Sequence[str], flags: int) -> str:
    """One pattern for "any of ``parts``", arranged for Python's engine, which tries every
    alternative at every position: consecutive parts starting with ``\\b`` share one ``\\b``,
    and each of those gets a look-ahead for the characters its match can start with, a cheap
    rejection. The alternatives keep their order, so the matches are those of the plain
    alternation."""
    alternatives: list[str] = []
    bounded: list[str] = []
    for part in parts:
        rest = _after_boundary(part, flags)
        if rest is None:
            if bounded:
                alternatives.append("\\b(?:" + "|".join(bounded) + ")")
                bounded = []
            alternatives.append(f"(?:{part})")
        else:
            starts = _first_chars(rest, flags)
            bounded.append(f"(?=[{starts}])(?:{rest})" if starts else f"(?:{rest})")
    if bounded:
        alternatives.append("\\b(?:" + "|".join(bounded) + ")")
    return "|".join(alternatives)


def _after_boundary(part: str, flags: int) -> str | None:
    """``part`` without its leading ``\\b`` when it is one (not the first of alternatives)."""
    if not part.startswith("\\b") or _sre_parse is None:
        return None
    try:
        data = _sre_parse.parse(part, flags).data
        re.compile(part[2:], flags)
    except re.error:
        return None
    if not data or data[0] != (_sre.AT, _sre.AT_BOUNDARY):
        return None
    return part[2:]


class _Unknown(Exception):
    pass


def _first_chars(part: str, flags: int) -> str:
    """A character class body (``a-z\\s``...) holding every character a match of ``part`` can
    start with, or "" when that is not known (then no look-ahead is added)."""
    try:
        fragments, nullable = _first(_sre_parse.parse(part, flags).data)
    except (_Unknown, re.error, AttributeError, TypeError, ValueError):
        return ""
    return "" if nullable or not fragments else "".join(dict.fromkeys(fragments))


def _first(items: Any) -> tuple[list[str], bool]:
    """(class fragments for the first character, whether the sequence can match nothing)."""
    fragments: list[str] = []
    for op, av in items:
        if op in (_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT):
            continue
        if op is _sre.LITERAL:
            return [*fragments, f"\\U{av:08x}"], False
        if op is _sre.IN:
            for item, value in av:
                if item is _sre.LITERAL:
                    fragments.append(f"\\U{value:08x}")
                elif item is _sre.RANGE:
                    fragments.append(f"\\U{value[0]:08x}-\\U{value[1]:08x}")
                elif item is _sre.CATEGORY and value in _CATEGORIES:
                    fragments.append(_CATEGORIES[value])
                else:
                    raise _Unknown
            return fragments, False
        if op is _sre.BRANCH:
            nullable = False
            for alternative in av[1]:
                more, empty = _first(alternative)
                fragments += more
                nullable |= empty
        elif op is _sre.SUBPATTERN:
            if av[1] or av[2]:  # (?i:...) and friends: the flags would differ
                raise _Unknown
            more, nullable = _first(av[3])
            fragments += more
        elif op is _sre.ATOMIC_GROUP:
            more, nullable = _first(av)
            fragments += more
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT):
            more, empty = _first(av[2])
            fragments += more
            nullable = empty or av[0] == 0
        else:
            raise _Unknown
        if not nullable:
            return fragments, False
    return fragments, True


def _codepoint_range(item: Any, where: str) -> tuple[int, int]:
    match = re.fullmatch(r"U\+([0-9A-Fa-f]{4,6})(?:-U\+([0-9A-Fa-f]{4,6}))?", str(item))
    if match is None:
        raise RuleError(f"{where}: {item!r} is not U+XXXX or U+XXXX-U+YYYY")
    low = int(match.group(1), 16)
    return low, int(match.group(2) or match.group(1), 16)


# --- the texts a rule looks at ------------------------------------------------------------------


def skill_fields(skill: Skill) -> dict[str, str]:
    """The text of each lintable field: name, description, tags, and the body (an Instructions
    body's text; other bodies as their canonical JSON, which is what a prompt would carry)."""
    body = skill.body.instructions if isinstance(skill.body, Instructions) else body_to_json(skill.body)
    return {"name": skill.name, "description": skill.description, "tags": ", ".join(skill.tags), "body": body}


def normalised_text(skill: Skill) -> str:
    """Case-folded words of name, description and body, single-spaced: equal for skills that
    say the same thing in different case, spacing or punctuation."""
    fields = skill_fields(skill)
    joined = " ".join((fields["name"], fields["description"], fields["body"]))
    return " ".join(re.findall(r"\w+", unicodedata.normalize("NFKC", joined).casefold()))


def shingles(normalised: str, size: int = 5) -> set[str]:
    if len(normalised) <= size:
        return {normalised} if normalised else set()
    return {normalised[i : i + size] for i in range(len(normalised) - size + 1)}


def jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def lineage(skill: Skill) -> str:
    """The skill a refinement refines, else the skill itself: a human refinement, its original
    and the original's other refinements share one lineage."""
    original = skill.provenance.source.original_id
    return original if skill.source_kind is SourceKind.HUMAN_REFINED and original else skill.id


# --- linting ------------------------------------------------------------------------------------


class Linter:
    """Applies rules to skills. With a repository, the ``duplicate`` rule compares against the
    library (a bounded candidate set from the FTS index, never the whole library)."""

    def __init__(self, rules: Sequence[Rule] | None = None, repository: SkillRepository | None = None) -> None:
        self.rules = list(rules) if rules is not None else load_rules()
        self.repository = repository

    def lint(self, skill: Skill) -> list[RiskFinding]:
        fields = skill_fields(skill)
        findings: list[RiskFinding] = []
        for rule in self.rules:
            findings.extend(self._apply(rule, skill, fields))
        order = {severity: rank for rank, severity in enumerate(reversed(SEVERITIES))}
        return sorted(
            findings, key=lambda f: (order[f.severity], FIELDS.index(f.field) if f.field in FIELDS else 9, f.start)
        )

    def lint_and_store(self, skill: Skill) -> list[RiskFinding]:
        """Lint ``skill`` and store the findings with it (the repository is required)."""
        assert self.repository is not None
        findings = self.lint(skill)
        self.repository.findings.set(skill.id, findings, version=skill.version)
        return findings

    def _apply(self, rule: Rule, skill: Skill, fields: dict[str, str]) -> Iterable[RiskFinding]:
        kind = rule.kind
        names = [name for name in rule.fields if name != "all"]
        if kind == "regex":
            for name in names:
                for start, end in _regex_spans(rule, fields[name]):
                    yield _finding(rule, name, fields[name], start, end)
        elif kind == "chars":
            limit = int(rule.params.get("max_findings", 10))
            for name in names:
                for match in islice(rule.pattern.finditer(fields[name]), limit):
                    codes = " ".join(f"U+{ord(c):04X}" for c in match.group()[:4])
                    start, end = match.span()
                    yield RiskFinding(
                        rule.id,
                        rule.severity,
                        f"{rule.reason} ({codes})",
                        name,
                        start,
                        end,
                        _excerpt(fields[name], start, end),
                    )
        elif kind == "mixed_script":
            limit = int(rule.params.get("max_findings", 5))
            for name in names:
                for start, end in islice(
                    _mixed_script_words(fields[name], int(rule.params.get("min_letters", 1))), limit
                ):
                    yield _finding(rule, name, fields[name], start, end)
        elif kind == "encoded":
            for name in names:
                yield from _encoded_findings(rule, name, fields[name])
        elif kind == "max_length":
            limit = int(rule.params["max"])
            for name in rule.fields:
                if name == "all":
                    size = sum(len(fields[f].encode("utf-8")) for f in FIELDS)
                    if size > limit:
                        yield RiskFinding(
                            rule.id,
                            rule.severity,
                            f"{rule.reason} ({size} bytes > {limit})",
                            "body",
                            0,
                            len(fields["body"]),
                            "",
                        )
                elif len(fields[name]) > limit:
                    yield RiskFinding(
                        rule.id,
                        rule.severity,
                        f"{rule.reason} ({len(fields[name])} characters > {limit})",
                        name,
                        limit,
                        len(fields[name]),
                        _excerpt(fields[name], limit, limit + 20),
                    )
        elif kind == "required":
            for name in rule.fields:
                if name in fields and not fields[name].strip():
                    yield RiskFinding(rule.id, rule.severity, rule.reason, name, 0, 0, "")
        elif kind == "duplicate" and self.repository is not None:
            yield from self._duplicates(rule, skill)

    def _duplicates(self, rule: Rule, skill: Skill) -> Iterable[RiskFinding]:
        threshold = float(rule.params.get("threshold", 0.85))
        size = int(rule.params.get("shingle", 5))
        mine = normalised_text(skill)
        my_shingles = shingles(mine, size)
        best: tuple[float, Skill] | None = None
        for other in self._candidates(skill, int(rule.params.get("candidates", 50))):
            if lineage(other) == lineage(skill):  # a refinement and its original are alike by design
                continue
            theirs = normalised_text(other)
            score = 1.0 if theirs == mine else jaccard(my_shingles, shingles(theirs, size))
            if score >= threshold and (best is None or score > best[0]):
                best = (score, other)
        if best is not None:
            score, other = best
            how = "same normalised text as" if score == 1.0 else f"{score:.0%} similar to"
            named = f"“{other.name}”" + (f" ({other.id})" if other.name == skill.name else "")
            yield RiskFinding(rule.id, rule.severity, f"{how} {named}", "body", 0, 0, other.id)

    def _candidates(self, skill: Skill, limit: int) -> list[Skill]:
        """Up to ``limit`` other skills sharing the most distinctive words (the keyword index, best first)."""
        assert self.repository is not None
        words = re.findall(r"\w{4,}", f"{skill.name} {skill.description}".casefold())
        distinct = sorted(dict.fromkeys(words), key=len, reverse=True)[:12]
        if not distinct:
            return []
        database = self.repository.database
        with database.read() as session:
            connection = session.connection()
            best = database.backend.any_word_ranking(
                connection, distinct, prefix=False, tags_only=False, pool=limit + 1
            )
            rows = connection.execute(
                select(SkillRow.id)
                .select_from(best)
                .join(SkillRow, database.backend.skill_key() == best.c.key)
                .where(SkillRow.id != skill.id)
                .order_by(best.c.score.desc(), SkillRow.id)
                .limit(limit)
            )
            ids = list(rows.scalars())
        return self.repository.get_many(ids)


# --- what a regex rule matches: the text, and its normalised view ---------------------------------


def _regex_spans(rule: Rule, value: str) -> list[tuple[int, int]]:
    """The spans of ``value`` the rule's pattern matches (at most ``max_findings``). A rule with
    ``normalise: true`` matches the normalised view of the text instead (``_View``; the text
    itself when there is nothing to normalise), its matches mapped back to offsets of ``value``."""
    limit = int(rule.params.get("max_findings", 3))
    pattern = rule.pattern
    if not rule.params.get("normalise"):
        return [match.span() for match in islice(pattern.finditer(value), limit)]
    view = _View(value)
    return [view.span(*match.span()) for match in islice(pattern.finditer(view.text), limit)]


class _Layer:
    """One rewrite of a text (sorted, non-overlapping spans replaced by new strings) and the way
    back: positions in the new text map to positions in the old one. Inside a replacement of the
    same length positions map one to one; inside any other, a start maps to the replacement's
    start and an end to its end, so a span never loses characters it covers."""

    __slots__ = ("_edits", "_starts", "text")

    def __init__(self, source: str, edits: Sequence[tuple[int, int, str]]) -> None:
        out: list[str] = []
        pos = delta = 0
        self._starts: list[int] = []
        self._edits: list[tuple[int, int, int, int]] = []  # new start, new end, old start, old end
        for start, end, new in edits:
            out += (source[pos:start], new)
            self._starts.append(start + delta)
            self._edits.append((start + delta, start + delta + len(new), start, end))
            delta += len(new) - (end - start)
            pos = end
        out.append(source[pos:])
        self.text = "".join(out)

    def _back(self, index: int, position: int, inside_end: bool) -> int:
        if index < 0:
            return position
        new_start, new_end, start, end = self._edits[index]
        if position >= new_end:
            return end + position - new_end
        if new_end - new_start == end - start:
            return start + position - new_start
        return end if inside_end else start

    def start(self, position: int) -> int:
        return self._back(bisect_right(self._starts, position) - 1, position, False)

    def end(self, position: int) -> int:
        return self._back(bisect_left(self._starts, position) - 1, position, True)


# Hidden characters a view drops, and look-alike letters it reads as Latin inside Latin words.
_HIDDEN = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]")
_NON_ASCII_RUN = re.compile(r"[\x00-\x7f]?[^\x00-\x7f]+")
_LOOKALIKES = dict(
    zip(
        "аеорсухіјѕһԁԛԝАВЕКМНОРСТХУІЈЅαονρικυτΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
        "aeopcyxijshdqwABEKMHOPCTXYIJSaovpikutABEZHIKMNOPTYX",
        strict=True,
    )
)
_LOOKALIKE = re.compile(f"(?<=[A-Za-z])[{''.join(_LOOKALIKES)}]+|[{''.join(_LOOKALIKES)}]+(?=[A-Za-z])")
_AS_LATIN = str.maketrans(_LOOKALIKES)
_SPACED = re.compile(r"(?<!\S)[^\W\d_](?:[ \t]+[^\W\d_](?!\S)){3,}")
_GAP = re.compile(r"[ \t]+")
_LINE_BREAK = re.compile(r"(?<=[\w,])[ \t]*\r?\n[ \t]*(?=\w)(?!\w+[ \t]*:)")
_DANGLING = re.compile(
    r"\b(?:all|any|the|your|my|of|to|and|or|previous|prior|earlier|above|ignore|disregard|forget|these|those|every|what|system)$",
    re.IGNORECASE,
)
_MAX_EDITS = 50_000  # per layer: beyond it the rest of the text is left as it is
_MAX_PRECISE_RUN = 4096  # a longer non-ASCII run that NFKC resizes maps as one block


class _View:
    """The text a ``normalise: true`` rule reads, built in layers (each skipped when it
    changes nothing): NFKC with hidden characters dropped (fullwidth letters, ligatures), Cyrillic
    and Greek look-alikes read as Latin next to Latin letters, s p a c e d letters joined (one
    space between letters, two or more between words), and a single line break inside a
    sentence read as a space (the next line goes on in lower case, or this one ends with a comma
    or a word like "all" or "ignore"; never before a list item, a blank line or a ``label:``
    line, so that line-anchored patterns still see those).
    ``span`` maps a match back to offsets of the original text."""

    def __init__(self, value: str) -> None:
        self.layers: list[_Layer] = []
        self.text = value
        for edits in (_fold_edits, _lookalike_edits, _spacing_edits, _line_edits):
            found = edits(self.text)
            if found:
                self.layers.append(_Layer(self.text, found))
                self.text = self.layers[-1].text

    def span(self, start: int, end: int) -> tuple[int, int]:
        for layer in reversed(self.layers):
            start, end = layer.start(start), layer.end(end)
        return start, max(start, end)


def _fold_edits(value: str) -> list[tuple[int, int, str]]:
    if value.isascii():
        return []
    edits: list[tuple[int, int, str]] = []
    for match in _NON_ASCII_RUN.finditer(value):
        run = match.group()
        if unicodedata.is_normalized("NFKC", run) and not _HIDDEN.search(run):
            continue
        folded = _HIDDEN.sub("", unicodedata.normalize("NFKC", run))
        if len(folded) == len(run) or len(run) > _MAX_PRECISE_RUN:
            edits.append((match.start(), match.end(), folded))
        else:  # one cluster (a character and its combining marks) at a time: precise spans
            i = 0
            while i < len(run):
                j = i + 1
                while j < len(run) and unicodedata.combining(run[j]):
                    j += 1
                new = _HIDDEN.sub("", unicodedata.normalize("NFKC", run[i:j]))
                if new != run[i:j]:
                    edits.append((match.start() + i, match.start() + j, new))
                i = j
        if len(edits) > _MAX_EDITS:
            break
    return edits


def _lookalike_edits(value: str) -> list[tuple[int, int, str]]:
    if value.isascii():
        return []
    return [
        (m.start(), m.end(), m.group().translate(_AS_LATIN)) for m in islice(_LOOKALIKE.finditer(value), _MAX_EDITS)
    ]


def _spacing_edits(value: str) -> list[tuple[int, int, str]]:
    edits: list[tuple[int, int, str]] = []
    for run in _SPACED.finditer(value):
        for gap in _GAP.finditer(value, run.start(), run.end()):
            start, end = gap.span()
            if end - start == 1:
                edits.append((start, end, ""))
            elif value[start:end] != " ":
                edits.append((start, end, " "))
            if len(edits) >= _MAX_EDITS:
                return edits
    return edits


def _line_edits(value: str) -> list[tuple[int, int, str]]:
    """Line breaks inside a sentence: the next line starts in lower case, or this one ends with
    a comma or a word that cannot end a sentence (``ignore``, ``all``, ``previous``...)."""
    if "\n" not in value:
        return []
    edits = []
    for match in _LINE_BREAK.finditer(value):
        start, end = match.span()
        if value[end].islower() or value[start - 1] == "," or _DANGLING.search(value, max(0, start - 12), start):
            edits.append((start, end, " "))
            if len(edits) >= _MAX_EDITS:
                break
    return edits


# --- base64 runs whose decoded text a rule matches ----------------------------------------------

_URLSAFE = str.maketrans("-_", "+/")
_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]")


def _encoded_findings(rule: Rule, name: str, value: str) -> Iterator[RiskFinding]:
    """Decode base64 runs (standard or urlsafe, padded or not) of ``value`` and run the target
    rules on decoded text that is mostly printable UTF-8. Bounded: at most ``max_runs`` runs
    decode to text (and at most 8 times as many are tried), each read up to ``max_decoded`` bytes;
    at most ``max_findings`` findings, each at the span of the encoded run."""
    max_runs, limit = int(rule.params.get("max_runs", 32)), int(rule.params.get("max_findings", 3))
    max_bytes = int(rule.params.get("max_decoded", 8192))
    min_printable = float(rule.params.get("min_printable", 0.9))
    decoded_runs = found = 0
    for match in islice(rule.pattern.finditer(value), max_runs * 8):
        decoded = _decode_base64(match.group(), max_bytes, min_printable)
        if decoded is None:
            continue
        for target in rule.targets:
            spans = _regex_spans(target, decoded)
            if spans:
                start, end = spans[0]
                shown = " ".join(decoded[max(0, start - 10) : end + 10].split())
                shown = shown if len(shown) <= _EXCERPT else shown[: _EXCERPT - 1] + "…"
                shown = "".join(c if c.isprintable() else "?" for c in shown)
                reason = f"{rule.reason}: base64 that decodes to “{shown}” ({target.id})"
                yield RiskFinding(
                    rule.id, rule.severity, reason, name, match.start(), match.end(), _excerpt(value, *match.span())
                )
                found += 1
                break
        decoded_runs += 1
        if decoded_runs >= max_runs or found >= limit:
            return


def _decode_base64(run: str, max_bytes: int, min_printable: float) -> str | None:
    """The text ``run`` decodes to (its first ``max_bytes`` bytes), or None when it is not base64
    or not mostly printable UTF-8."""
    data = run.rstrip("=").translate(_URLSAFE)[: (max_bytes // 3) * 4]
    if len(data) % 4 == 1:
        data = data[:-1]
    try:
        decoded = base64.b64decode(data + "=" * (-len(data) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    as_text = decoded.decode("utf-8", errors="replace")
    if not as_text.strip() or len(_UNPRINTABLE.findall(as_text)) > len(as_text) * (1 - min_printable):
        return None
    return as_text


# --- words mixing scripts -----------------------------------------------------------------------

_NON_ASCII_WORD = re.compile(r"(?<!\w)\w*[^\W\x00-\x7f]\w*")
_LATIN = re.compile("[A-Za-z\u00c0-\u024f\u0250-\u02af\u1e00-\u1eff\u2c60-\u2c7f\ua720-\ua7ff\uab30-\uab6f]")
_CYRILLIC_GREEK = re.compile("[\u0370-\u03ff\u0400-\u052f\u1c80-\u1c8f\u1f00-\u1fff\u2de0-\u2dff\ua640-\ua69f]")


def _mixed_script_words(value: str, min_letters: int) -> Iterator[tuple[int, int]]:
    """Spans of words mixing Latin with Cyrillic or Greek letters (with at least ``min_letters``
    letters); only words with a non-ASCII letter are looked at."""
    if value.isascii():
        return
    for match in _NON_ASCII_WORD.finditer(value):
        word = match.group()
        if not (_CYRILLIC_GREEK.search(word) and _LATIN.search(word)):
            continue
        letters = [c for c in word if c.isalpha()]
        scripts = {_script(c) for c in letters} - {None}
        if len(letters) >= min_letters and "LATIN" in scripts and scripts & {"CYRILLIC", "GREEK"}:
            yield match.span()


def _finding(rule: Rule, name: str, value: str, start: int, end: int) -> RiskFinding:
    return RiskFinding(rule.id, rule.severity, rule.reason, name, start, end, _excerpt(value, start, end))


def _excerpt(value: str, start: int, end: int) -> str:
    shown = value[start:end] if end > start else value[start : start + 20]
    shown = shown if len(shown) <= _EXCERPT else shown[: _EXCERPT - 1] + "…"
    # make invisible characters visible in the excerpt
    return "".join(
        f"<U+{ord(c):04X}>" if unicodedata.category(c) in ("Cf", "Cc") and c not in "\n\t" else c for c in shown
    )


def _script(char: str) -> str | None:
    try:
        name = unicodedata.name(char)
    except ValueError:
        return None
    for script in ("LATIN", "CYRILLIC", "GREEK"):
        if name.startswith(script):
            return script
    return None


def lint_skill(skill: Skill, repository: SkillRepository | None = None) -> list[RiskFinding]:
    return Linter(repository=repository).lint(skill)


def findings_document(findings: Sequence[RiskFinding]) -> list[dict[str, Any]]:
    return [
        {
            "rule": f.rule,
            "severity": f.severity,
            "reason": f.reason,
            "field": f.field,
            "start": f.start,
            "end": f.end,
            "excerpt": f.excerpt,
        }
        for f in findings
    ]


__all__ = [
    "Linter",
    "Rule",
    "RuleError",
    "default_rules_path",
    "findings_document",
    "jaccard",
    "lint_skill",
    "load_rules",
    "normalised_text",
    "shingles",
    "skill_fields",
]
