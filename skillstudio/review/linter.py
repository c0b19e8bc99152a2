"""The risk linter: finds what a reviewer should look at in text bound for an LLM prompt.

Qt-free. The rules are data (``resources/lint_rules.yaml``, docs/review.md): each has an id, a
severity, a one-line reason and a *kind* that this module knows how to apply. A finding points
at a span (field, start, end) of the text the rule looked at.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import text

from skillstudio.model import Instructions, Skill, body_to_json
from skillstudio.paths import resource
from skillstudio.store import RiskFinding, SkillRepository

SEVERITIES = ("info", "low", "medium", "high")
KINDS = ("regex", "chars", "mixed_script", "max_length", "required", "duplicate")
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
        compiled, ranges = None, ()
        if kind == "regex":
            flags = re.MULTILINE
            if not params.get("case_sensitive"):
                flags |= re.IGNORECASE
            parts = params.get("patterns") or [params.get("pattern")]
            if not all(isinstance(part, str) and part for part in parts):
                raise RuleError(f"{where}: `pattern` or `patterns` (strings) is required")
            pattern = "|".join(f"(?:{part})" for part in parts)
            try:
                compiled = re.compile(pattern, flags)
            except re.error as error:
                raise RuleError(f"{where}: bad pattern: {error}") from None
        elif kind == "chars":
            ranges = tuple(_codepoint_range(item, where) for item in params.get("codepoints", ()))
            if not ranges:
                raise RuleError(f"{where}: `codepoints` is required")
        elif kind == "max_length" and not isinstance(params.get("max"), int):
            raise RuleError(f"{where}: `max` must be an integer")
        rules.append(Rule(rule_id, severity, reason, kind, fields, params, compiled, ranges))
    return rules


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
        return sorted(findings, key=lambda f: (order[f.severity], FIELDS.index(f.field) if f.field in FIELDS else 9, f.start))

    def lint_and_store(self, skill: Skill) -> list[RiskFinding]:
        """Lint ``skill`` and store the findings with it (the repository is required)."""
        assert self.repository is not None
        findings = self.lint(skill)
        self.repository.set_risk_findings(skill.id, findings, version=skill.version)
        return findings

    def _apply(self, rule: Rule, skill: Skill, fields: dict[str, str]) -> Iterable[RiskFinding]:
        kind = rule.kind
        if kind == "regex":
            limit = int(rule.params.get("max_findings", 3))
            for name in rule.fields:
                if name == "all":
                    continue
                for count, match in enumerate(rule.compiled.finditer(fields[name])):  # type: ignore[union-attr]
                    if count >= limit:
                        break
                    yield _finding(rule, name, fields[name], match.start(), match.end())
        elif kind == "chars":
            for name in rule.fields:
                if name == "all":
                    continue
                value, i = fields[name], 0
                while i < len(value):
                    if _in_ranges(ord(value[i]), rule.ranges):
                        j = i
                        while j < len(value) and _in_ranges(ord(value[j]), rule.ranges):
                            j += 1
                        codes = " ".join(f"U+{ord(c):04X}" for c in value[i:j][:4])
                        yield RiskFinding(rule.id, rule.severity, f"{rule.reason} ({codes})", name, i, j, _excerpt(value, i, j))
                        i = j
                    else:
                        i += 1
        elif kind == "mixed_script":
            for name in rule.fields:
                if name == "all":
                    continue
                for match in re.finditer(r"\w+", fields[name]):
                    scripts = {_script(c) for c in match.group() if c.isalpha()} - {None}
                    if "LATIN" in scripts and scripts & {"CYRILLIC", "GREEK"}:
                        yield _finding(rule, name, fields[name], match.start(), match.end())
        elif kind == "max_length":
            limit = int(rule.params["max"])
            for name in rule.fields:
                if name == "all":
                    size = sum(len(fields[f].encode("utf-8")) for f in FIELDS)
                    if size > limit:
                        yield RiskFinding(rule.id, rule.severity, f"{rule.reason} ({size} bytes > {limit})", "body", 0, len(fields["body"]), "")
                elif len(fields[name]) > limit:
                    yield RiskFinding(
                        rule.id, rule.severity, f"{rule.reason} ({len(fields[name])} characters > {limit})",
                        name, limit, len(fields[name]), _excerpt(fields[name], limit, limit + 20),
                    )  # fmt: skip
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
            theirs = normalised_text(other)
            score = 1.0 if theirs == mine else jaccard(my_shingles, shingles(theirs, size))
            if score >= threshold and (best is None or score > best[0]):
                best = (score, other)
        if best is not None:
            score, other = best
            how = "same normalised text as" if score == 1.0 else f"{score:.0%} similar to"
            yield RiskFinding(rule.id, rule.severity, f"{how} {other.name!r} ({other.id})", "body", 0, 0, other.id)

    def _candidates(self, skill: Skill, limit: int) -> list[Skill]:
        """Up to ``limit`` other skills sharing the most distinctive words (FTS5, best rank first)."""
        assert self.repository is not None
        words = re.findall(r"\w{4,}", f"{skill.name} {skill.description}".casefold())
        distinct = sorted(dict.fromkeys(words), key=len, reverse=True)[:12]
        if not distinct:
            return []
        match = " OR ".join(f'"{word}"' for word in distinct)
        sql = text(
            "SELECT s.id FROM skills_fts JOIN skills s ON s.rowid = skills_fts.rowid "
            "WHERE skills_fts MATCH :match AND s.id != :id ORDER BY rank LIMIT :limit"
        )
        with self.repository.database.read() as session:
            ids = list(session.scalars(sql.bindparams(match=match, id=skill.id, limit=limit)))
        out = []
        for other in self.repository.get_many(ids):
            out.append(other)
        return out


def _finding(rule: Rule, name: str, value: str, start: int, end: int) -> RiskFinding:
    return RiskFinding(rule.id, rule.severity, rule.reason, name, start, end, _excerpt(value, start, end))


def _excerpt(value: str, start: int, end: int) -> str:
    shown = value[start:end] if end > start else value[start : start + 20]
    shown = shown if len(shown) <= _EXCERPT else shown[: _EXCERPT - 1] + "…"
    # make invisible characters visible in the excerpt
    return "".join(f"<U+{ord(c):04X}>" if unicodedata.category(c) in ("Cf", "Cc") and c not in "\n\t" else c for c in shown)


def _in_ranges(code: int, ranges: Sequence[tuple[int, int]]) -> bool:
    return any(low <= code <= high for low, high in ranges)


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
        {"rule": f.rule, "severity": f.severity, "reason": f.reason, "field": f.field, "start": f.start, "end": f.end, "excerpt": f.excerpt}
        for f in findings
    ]


__all__ = [
    "Linter", "Rule", "RuleError", "default_rules_path", "findings_document", "jaccard", "lint_skill",
    "load_rules", "normalised_text", "shingles", "skill_fields",
]  # fmt: skip

