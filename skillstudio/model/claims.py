"""A package's (or an engine's) claimed quality figures: kept with an imported skill, always
said as a claim.

An import stores a new skill ``tentative`` with no verifications and keeps the figures its
package stated in the skill's import extras, under :data:`CLAIMED_QUALITY` (docs/packages.md).
They never count as this library's evidence; the CLI's ``show`` and the detail pane say so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CLAIMED_QUALITY = "claimed_quality"


def claim_in(frontmatter: Mapping[str, Any]) -> dict[str, Any] | None:
    """The claim an import kept in a skill's extras, if it holds one."""
    claim = frontmatter.get(CLAIMED_QUALITY)
    return claim if isinstance(claim, dict) else None


def claimed_quality_text(claim: Mapping[str, Any]) -> str:
    """A package's claimed figures, said as a claim (they never count as this library's evidence)."""
    rate = claim.get("success_rate")
    figures = (
        f"{claim.get('verification_count')} games at {rate:.0%}"
        if isinstance(rate, int | float) and not isinstance(rate, bool)
        else "no figures"
    )
    by = str(claim.get("by", "?"))
    # ``skillstudio pull`` keeps an engine's figures the same way, by "engine:<file>"
    who = f"the engine's {by.removeprefix('engine:')}" if by.startswith("engine:") else f"package {by}"
    return (
        f"claimed by {who}: {claim.get('confidence', '?')}, {figures}"
        " (a claim; only this library's own evidence promotes or demotes)"
    )


__all__ = ["CLAIMED_QUALITY", "claim_in", "claimed_quality_text"]
