"""Voyager-style skill libraries (``skills.json`` + ``code/*.js`` + ``description/*.txt``), in.

``skills.json`` maps a name to ``{"code": ..., "description": ...}``; ``code/<name>.js`` and
``description/<name>.txt`` hold the same (the files win when both exist). Each skill becomes an
``Instructions`` skill whose instructions keep the description and the code in a fenced block.
Voyager appends ``V2``, ``V3``... when it rewrites a skill: such a pile-up is one skill, the
highest version its body and the older versions its first revisions (history and diffs show how
it grew); the older versions' code is also kept as files (``versions/<name>.js``) in
the import extras with a warning naming them.
"""

from __future__ import annotations

import re
import uuid
from functools import partial
from pathlib import Path

from skillstudio.model import Domain, Issue, Skill, ValidationError, parse_skill, utc_now
from skillstudio.model.validation import MAX_LONG_TEXT
from skillstudio.packages.errors import PackageError, path_name, refuse
from skillstudio.packages.icpkg import load_json
from skillstudio.packages.importer import Incoming
from skillstudio.packages.safe_yaml import decode_utf8
from skillstudio.store import SkillExtras

NAMESPACE = uuid.UUID("a4b2c7e1-1f5d-4c8e-9b3a-7e6d5c4b3a21")
MAX_FILE = 2 * 1024 * 1024
MAX_SKILLS = 20_000
_VERSIONED = re.compile(r"^(?P<base>.+?)V(?P<n>[2-9]|[1-9]\d+)$")
_SAFE = re.compile(r"^[A-Za-z0-9_\-]{1,128}$")
# The first and inner lines of the function stub Voyager writes as a skill's description.
_STUB_OPENING = re.compile(r"^\s*(?:async\s+)?function\s*[\w$]*\s*\([^)]*\)\s*\{\s*$")
_COMMENT_LINE = re.compile(r"^(?://+|/\*+|\*+/?)(?P<text>.*?)(?:\*+/)?$")


def split_version(name: str) -> tuple[str, int]:
    match = _VERSIONED.match(name)
    return (match.group("base"), int(match.group("n"))) if match else (name, 1)


def _read_text(path: Path, where: str) -> str | None:
    if path.is_symlink():
        raise refuse(where, "is a symbolic link; refused")
    if not path.is_file():
        return None
    size = path.stat().st_size
    if size > MAX_FILE:
        raise refuse(where, f"is {size} bytes, at most {MAX_FILE}")
    return decode_utf8(path.read_bytes(), where)


def description_prose(description: str) -> str:
    """What a Voyager description says. Voyager writes each one as a stub of the function it
    describes, the prose in its comment (``async function mineWoodLog(bot) {``, ``// The
    function is about mining...``, ``}``): that prose, its lines joined. Any other text (a
    stub with code in it, plain text) is returned as it is, stripped."""
    text = description.strip()
    lines = text.splitlines()
    if len(lines) < 3 or not _STUB_OPENING.match(lines[0]) or lines[-1].strip() != "}":
        return text
    prose = []
    for line in lines[1:-1]:
        said = _comment_text(line)
        if said is None:  # code: not the stub Voyager writes
            return text
        if said:
            prose.append(said)
    return " ".join(prose) or text


def _comment_text(line: str) -> str | None:
    """The text of a comment line (``// ...``, ``/* ... */``, `` * ...``); "" for a blank line;
    None for any other line."""
    stripped = line.strip()
    if not stripped:
        return ""
    comment = _COMMENT_LINE.match(stripped)
    return None if comment is None else comment.group("text").strip()


def _instructions(code: str, prose: str) -> str:
    """An Instructions body's text: the description's prose, then the code in a fenced block."""
    return f"{prose}\n\n```javascript\n{code.rstrip()}\n```\n".lstrip()


def _version_skill(
    code: str, prose: str, *, skill_id: str, base: str, created_at: str, domain: Domain, game_module: str
) -> Skill:
    """One version as a skill: ``prose`` is its description's (:func:`description_prose`)."""
    return parse_skill(
        {
            "id": skill_id,
            "domain": domain.value,
            "name": base,
            "description": prose.splitlines()[0][:2000] if prose else f"Voyager skill {base}",
            "created_at": created_at,
            "tags": ["voyager"],
            "provenance": {"source": "llm_discovered", "game_module": game_module},
            "body": {"Instructions": {"instructions": _instructions(code, prose)}},
        }
    )


def read_voyager(
    root: str | Path, *, domain: Domain = Domain.AI_STRATEGY, game_module: str = "ra1"
) -> tuple[list[Incoming], str]:
    root = Path(root)
    index_path = root / "skills.json"
    if not index_path.is_file():
        raise refuse(path_name(root), "has no skills.json")
    if index_path.stat().st_size > 64 * 1024 * 1024:
        raise refuse("skills.json", "is larger than 64 MiB")
    index = load_json(index_path.read_bytes(), "skills.json")
    if not isinstance(index, dict) or len(index) > MAX_SKILLS:
        raise refuse("skills.json", f"expected a mapping of at most {MAX_SKILLS} skill names")
    issues: list[Issue] = []
    versions: dict[str, dict[int, tuple[str, str, str]]] = {}
    for name, entry in index.items():
        where = f"skills.json[{name!r}]"
        if not _SAFE.match(name):
            issues.append(Issue(where, "skill name must be 1-128 of A-Z a-z 0-9 _ -"))
            continue
        if not isinstance(entry, dict):
            issues.append(Issue(where, "expected a mapping with code and description"))
            continue
        try:
            code = _read_text(root / "code" / f"{name}.js", f"code/{name}.js")
            description = _read_text(root / "description" / f"{name}.txt", f"description/{name}.txt")
        except PackageError as error:
            issues.extend(error.issues)
            continue
        code = code if code is not None else entry.get("code")
        description = description if description is not None else entry.get("description", "")
        if not isinstance(code, str) or not code.strip():
            issues.append(Issue(f"{where}.code", "missing or not text"))
            continue
        if not isinstance(description, str):
            issues.append(Issue(f"{where}.description", "expected text"))
            continue
        base, number = split_version(name)
        versions.setdefault(base, {})[number] = (name, code, description)
    origin = f"voyager:{root.resolve().name}"
    incoming: list[Incoming] = []
    for base, by_number in sorted(versions.items()):
        latest = max(by_number)
        name, code, description = by_number[latest]
        prose = description_prose(description)
        if len(_instructions(code, prose)) > MAX_LONG_TEXT:
            issues.append(Issue(f"code/{name}.js", f"longer than {MAX_LONG_TEXT} characters"))
            continue
        older = sorted(n for n in by_number if n != latest)
        files = {f"versions/{by_number[n][0]}.js": {"text": by_number[n][1]} for n in older}
        warnings = (f"{base}: folded {', '.join(by_number[n][0] for n in older)} into {name}",) if older else ()
        # every version is a revision of the same skill: one id and one creation time
        version_skill = partial(
            _version_skill,
            skill_id=str(uuid.uuid5(NAMESPACE, f"voyager:{base}")),
            base=base,
            created_at=utc_now(),
            domain=domain,
            game_module=game_module,
        )
        try:
            skill = version_skill(code, prose)
            history = tuple(
                version_skill(old_code, description_prose(old_text))
                for _, old_code, old_text in (by_number[n] for n in older)
            )
        except ValidationError as error:
            issues.extend(Issue(f"skills.json[{name!r}].{i.path}", i.message) for i in error.issues)
            continue
        extras = SkillExtras(
            origin=origin,
            frontmatter={"voyager_name": name, "versions": [*sorted(by_number)]},
            files=files,
            warnings=warnings,
        )
        incoming.append(Incoming(f"skills.json[{name!r}]", skill, extras, warnings, history, attributed=False))
    if issues:
        raise PackageError(issues, context=f"{path_name(root)} refused")
    return incoming, origin


__all__ = ["read_voyager", "split_version"]
