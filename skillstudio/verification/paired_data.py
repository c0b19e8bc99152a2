"""What the dashboard's lift and composition plots show (Qt-free; read on a worker thread).

:func:`paired_snapshot`: the latest lift over the default plan of each selected skill, and the
compositions of the first selected skill that has any (D057's ``success_count`` and the
composition runs behind it). The detail pane can read the same: :func:`~.lift.latest_lifts` and
:func:`~.compositions.compositions_of`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from skillstudio.store import InvalidStoredSkill, SkillNotFound, SkillRepository
from skillstudio.verification.compositions import PartnerComposition, compositions_of
from skillstudio.verification.lift import SkillLift, latest_lifts

MAX_LIFTS = 12  # rows a lift plot stays readable with


@dataclass(frozen=True)
class PairedSnapshot:
    lifts: tuple[SkillLift, ...] = ()
    more_lifts: int = 0  # selected skills with a lift beyond the first ``max_lifts``
    composition_skill: str = ""  # the skill whose compositions are shown ("" if none)
    composition_name: str = ""
    compositions: tuple[PartnerComposition, ...] = ()


def paired_snapshot(
    repository: SkillRepository, selected: Sequence[str], *, max_lifts: int = MAX_LIFTS
) -> PairedSnapshot:
    """Lifts of the selected skills (the first ``max_lifts`` that have one), and the compositions
    of the first selected skill that has a partner or a composition run."""
    measured = latest_lifts(repository, list(selected))
    lifts, more = tuple(measured[:max_lifts]), max(0, len(measured) - max_lifts)
    for skill_id in selected[:max_lifts]:
        found = compositions_of(repository, skill_id)
        if found:
            try:
                name = repository.get(skill_id).name
            except (SkillNotFound, InvalidStoredSkill):
                continue
            return PairedSnapshot(lifts, more, skill_id, name, tuple(found))
    return PairedSnapshot(lifts, more)


__all__ = ["MAX_LIFTS", "PairedSnapshot", "paired_snapshot"]
