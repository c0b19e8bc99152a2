"""Seed 003's JSON skill library, in and out.

``{"<name>": {"name", "principle", "when_to_apply", "created_iteration", "last_used_iteration",
"usage_count"}}`` maps to an ``Instructions`` skill: ``principle`` -> instructions,
``when_to_apply`` -> description, ``usage_count`` -> use_count; the iteration counters are kept
in the import extras (``frontmatter``) and written back on export. Ids are derived from the
name (UUID v5), so importing the same file twice adds nothing.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from skillstudio.model import Domain, Instructions, Issue, Skill, ValidationError, parse_skill, utc_now
from skillstudio.model.validation import MAX_DESCRIPTION, MAX_LONG_TEXT, Checker
from skillstudio.packages.errors import PackageError, refuse
from skillstudio.packages.icpkg import load_json
from skillstudio.packages.importer import Incoming
from skillstudio.store import JsonValue, SkillExtras

NAMESPACE = uuid.UUID("0c3f9a55-3e0b-4a57-8b0e-4f2a6d1c9e03")
MAX_FILE = 64 * 1024 * 1024
MAX_SKILLS = 100_000
_KEYS = ("name", "principle", "when_to_apply", "created_iteration", "last_used_iteration", "usage_count")


def read_json_library(
    path: str | Path, *, domain: Domain = Domain.AI_STRATEGY, game_module: str = "ra1"
) -> tuple[list[Incoming], str]:
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE:
            raise refuse(path.name, f"is {size} bytes, at most {MAX_FILE}")
        data = load_json(path.read_bytes(), path.name)
    except OSError as error:
        raise refuse(path.name, f"cannot be read ({error.strerror or error})") from None
    check = Checker()
    root = check.mapping(data, "")
    if root is None:
        raise PackageError(check.issues, context=f"{path.name} refused")
    if len(root) > MAX_SKILLS:
        raise refuse(path.name, f"holds more than {MAX_SKILLS} skills")
    origin = f"json:{path.name}"
    incoming: list[Incoming] = []
    for key, value in root.items():
        where = f"[{json.dumps(key, ensure_ascii=False)}]"
        entry = check.mapping(value, where)
        if entry is None:
            continue
        name = entry.get("name", key)
        principle = check.text(entry.get("principle"), f"{where}.principle", max_len=MAX_LONG_TEXT, allow_empty=False)
        when = check.text(entry.get("when_to_apply", ""), f"{where}.when_to_apply", max_len=MAX_DESCRIPTION)
        counters = {k: check.integer(entry.get(k, 0), f"{where}.{k}", 0, 2**31 - 1) for k in _KEYS[3:]}
        warnings = tuple(f"{where}.{k}: unknown field, kept" for k in entry if k not in _KEYS)
        if principle is None or when is None or None in counters.values():
            continue
        try:
            skill = parse_skill(
                {
                    "id": str(uuid.uuid5(NAMESPACE, f"json:{name}")),
                    "domain": domain.value,
                    "name": name,
                    "description": when,
                    "created_at": utc_now(),
                    "use_count": counters["usage_count"],
                    "provenance": {"source": "llm_discovered", "game_module": game_module},
                    "body": {"Instructions": {"instructions": principle}},
                }
            )
        except ValidationError as error:
            check.issues.extend(Issue(f"{where}.{issue.path}", issue.message) for issue in error.issues)
            continue
        kept: dict[str, Any] = {k: counters[k] for k in ("created_iteration", "last_used_iteration")}
        kept.update({k: v for k, v in entry.items() if k not in _KEYS})
        extras = SkillExtras(origin=origin, frontmatter=check.json_value(kept, where) or {}, warnings=warnings)
        incoming.append(Incoming(f"{path.name}{where}", skill, extras, warnings, attributed=False))
    if check.issues:
        raise PackageError(check.issues, context=f"{path.name} refused")
    return incoming, origin


def _counter(value: JsonValue) -> int:
    """An iteration counter kept in the extras. They may come from a package or another program
    and hold anything: what is not a whole number (or its text) counts as 0."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return 0
    try:
        return int(value)
    except (ValueError, OverflowError):
        return 0


def export_json_library(skills: list[Skill], extras: dict[str, SkillExtras] | None = None) -> str:
    """Instructions skills as seed 003's JSON (other bodies have no such form and are left out)."""
    out: dict[str, Any] = {}
    for skill in sorted(skills, key=lambda s: (s.name, s.id)):
        if not isinstance(skill.body, Instructions):
            continue
        kept = ((extras or {}).get(skill.id) or SkillExtras()).frontmatter
        out[skill.name] = {
            "name": skill.name,
            "principle": skill.body.instructions,
            "when_to_apply": skill.description,
            "created_iteration": _counter(kept.get("created_iteration")),
            "last_used_iteration": _counter(kept.get("last_used_iteration")),
            "usage_count": skill.use_count,
        }
    return json.dumps(out, ensure_ascii=False, indent=2) + "\n"


__all__ = ["export_json_library", "read_json_library"]
