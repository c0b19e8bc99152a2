"""Skills as messages name them: by name, with the start of the id only where names collide.

People know skills by their names, so a warning or a reason names them; two skills may share a
name (a human refinement keeps its original's), and only then does the id tell them apart.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

SHORT_ID = 8  # the start of an id a message shows; the CLI takes any unique prefix


def skill_labels(names: Mapping[str, str]) -> dict[str, str]:
    """Each skill of ``names`` (id -> name) as a message names it: “Name”, or “Name” (1dd5061c)
    when another skill of ``names`` has the same name (or it has none)."""
    counts = Counter(names.values())
    return {skill_id: _label(skill_id, name, counts[name] > 1) for skill_id, name in names.items()}


def _label(skill_id: str, name: str, shared: bool) -> str:
    if not name:
        return f"skill {skill_id[:SHORT_ID]}"
    return f"“{name}” ({skill_id[:SHORT_ID]})" if shared else f"“{name}”"


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """ "1 skill", "3 skills", "2 matches": the number with its noun in the right form."""
    many = plural or (noun + "es" if noun.endswith(("s", "ch", "sh", "x")) else noun + "s")
    return f"{number:,} {noun if number == 1 else many}"


def listed(items: list[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


__all__ = ["SHORT_ID", "counted", "listed", "skill_labels"]
