"""Differences between two versions of a skill, as text a person can read.

Both sides are rendered as the canonical YAML document, so a diff shows exactly the fields
that differ, in the same words the raw editor uses.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

from skillstudio.model.skill import Skill
from skillstudio.model.yaml_form import skill_to_yaml

DiffKind = Literal["equal", "delete", "insert", "replace"]


@dataclass(frozen=True)
class DiffRow:
    """One row of a side-by-side diff; a missing side is None."""

    kind: DiffKind
    old_number: int | None
    old: str | None
    new_number: int | None
    new: str | None


def skill_text(skill: Skill) -> str:
    return skill_to_yaml(skill, local=False)


def unified_diff(
    old: Skill, new: Skill, *, old_label: str = "before", new_label: str = "after", context: int = 3
) -> str:
    lines = difflib.unified_diff(
        skill_text(old).splitlines(), skill_text(new).splitlines(), old_label, new_label, n=context, lineterm=""
    )
    return "\n".join(lines)


def side_by_side(old: Skill, new: Skill) -> list[DiffRow]:
    """Every line of both versions, aligned; changed lines paired where they correspond."""
    left, right = skill_text(old).splitlines(), skill_text(new).splitlines()
    rows: list[DiffRow] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=left, b=right, autojunk=False).get_opcodes():
        if tag == "equal":
            rows += [
                DiffRow("equal", i + 1, left[i], j + 1, right[j])
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
            ]
        elif tag == "delete":
            rows += [DiffRow("delete", i + 1, left[i], None, None) for i in range(i1, i2)]
        elif tag == "insert":
            rows += [DiffRow("insert", None, None, j + 1, right[j]) for j in range(j1, j2)]
        else:
            for offset in range(max(i2 - i1, j2 - j1)):
                i, j = i1 + offset, j1 + offset
                rows.append(
                    DiffRow(
                        "replace",
                        i + 1 if i < i2 else None,
                        left[i] if i < i2 else None,
                        j + 1 if j < j2 else None,
                        right[j] if j < j2 else None,
                    )
                )
    return rows
