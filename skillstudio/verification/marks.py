"""What a skill list marks beside a row: a contradicted tier, a refinement and its original.

Read for a page of rows at once (the browser builds its rows lazily, a page at a time): one
standings read for the page's tiers above Tentative (a Tentative tier is never contradicted)
and one lineage read, never a query per cell, so a page of a 100k-skill library stays cheap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from skillstudio.model import Confidence, ValidationError
from skillstudio.store import SkillRepository, SkillSummary
from skillstudio.store.lineage import read_lineage
from skillstudio.verification.explain import contradiction_text
from skillstudio.verification.policy import Contradiction, VerificationPolicy, policy_for
from skillstudio.verification.standing import standings

REFINEMENT = "refinement"
SUPERSEDED = "superseded"


@dataclass(frozen=True)
class RowMarks:
    contradiction: Contradiction | None = None
    refinement: bool = False  # a person's refinement of another skill
    original_id: str | None = None  # what it refines (None: unknown, or not a refinement)
    refined_by: tuple[str, ...] = ()  # the refinements that supersede it, oldest first
    names: Mapping[str, str] = field(default_factory=dict)  # the linked skills' names

    @property
    def linked(self) -> frozenset[str]:
        return frozenset(self.refined_by) | ({self.original_id} if self.original_id else frozenset())

    @property
    def lineage(self) -> str:
        """The name cell's mark: ``refinement``, ``superseded``, both, or nothing."""
        return ", ".join(m for m, on in ((REFINEMENT, self.refinement), (SUPERSEDED, bool(self.refined_by))) if on)

    def lineage_text(self) -> str:
        """The name cell's tooltip line: which skill it refines, which ones refine it."""
        lines = []
        if self.refinement:
            original = self._name(self.original_id) if self.original_id else "an original the row does not name"
            lines.append(f"A person's refinement of {original}")
        if self.refined_by:
            lines.append("Superseded: refined by " + ", ".join(self._name(r) for r in self.refined_by))
        return "\n".join(lines)

    def tier_text(self) -> str:
        return "" if self.contradiction is None else contradiction_text(self.contradiction)

    def _name(self, skill_id: str) -> str:
        name = self.names.get(skill_id)
        return f"“{name}”" if name is not None else "a skill no longer in this library"


def page_marks(
    repository: SkillRepository, summaries: Sequence[SkillSummary], policy: VerificationPolicy | None = None
) -> dict[str, RowMarks]:
    """The marks of these rows that have any, by id. ``policy``: the library's by default; with
    settings that are not valid, tiers go unchecked (the detail pane says why)."""
    ranked = [s for s in summaries if s.confidence != Confidence.TENTATIVE.value and not s.issues]
    found: dict[str, Contradiction] = {}
    if ranked:
        try:
            policy = policy or policy_for(repository.database)
        except ValidationError:
            policy = None
        if policy is not None:
            ids = [s.id for s in ranked]
            for skill_id, standing in standings(repository, ids, policy, summaries=ranked).items():
                if standing.contradiction is not None:
                    found[skill_id] = standing.contradiction
    lineage = read_lineage(repository.database, [s.id for s in summaries])
    out: dict[str, RowMarks] = {}
    for summary in summaries:
        skill_id = summary.id
        refinement = skill_id in lineage.originals
        refined_by = lineage.refinements.get(skill_id, ())
        contradiction = found.get(skill_id)
        if contradiction is None and not refinement and not refined_by:
            continue
        original = lineage.originals.get(skill_id)
        linked = set(refined_by) | ({original} if original else set())
        names = {i: lineage.names[i] for i in linked if i in lineage.names}
        out[skill_id] = RowMarks(contradiction, refinement, original, refined_by, names)
    return out


__all__ = ["REFINEMENT", "SUPERSEDED", "RowMarks", "page_marks"]
