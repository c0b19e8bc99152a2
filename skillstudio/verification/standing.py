"""Where a skill's stored tier stands against its credited evidence, for anything that shows a
tier (``list``, ``show``, the dashboard data, and the GUI's badge and detail pane).

:func:`standings` reads the evidence of many skills in a few queries and asks the policy
(:meth:`VerificationPolicy.assess`) for each: the credited evidence per kind, kept apart
(headless games, gameplay matches, plays), and a :class:`Contradiction` when the stored tier is
above what that evidence supports. Skills without evidence need no body parse and get an empty
standing, so a page of a 100k-skill list stays cheap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from skillstudio.model import Confidence, Domain, Skill
from skillstudio.model.evidence import EvidenceKind
from skillstudio.store import SkillRepository, body_hash
from skillstudio.verification.policy import Contradiction, KindFigures, VerificationPolicy, policy_for


@dataclass(frozen=True)
class Standing:
    skill_id: str
    tier: Confidence  # as stored
    headless: KindFigures
    gameplay: KindFigures
    plays: KindFigures
    contradiction: Contradiction | None = None

    @property
    def contradicted(self) -> bool:
        return self.contradiction is not None

    def evidence_document(self) -> dict[str, object]:
        """The credited evidence per kind, as ``show --json`` and the dashboard data give it."""
        return {kind.kind.value: _figures_document(kind) for kind in (self.headless, self.gameplay, self.plays)}


def _figures_document(figures: KindFigures) -> dict[str, object]:
    interval = figures.interval
    return {
        "sessions": figures.sessions,
        "wins": figures.wins,
        "decided": figures.decided,
        "success_rate": None if figures.rate is None else round(figures.rate, 4),
        "wilson_95": interval.as_list() if figures.decided else None,
        "supports": figures.tier.value,
        "rating": figures.rating,
        "rated": figures.rated,
    }


def _empty(skill_id: str, tier: Confidence) -> Standing:
    return Standing(
        skill_id,
        tier,
        KindFigures(EvidenceKind.HEADLESS),
        KindFigures(EvidenceKind.GAMEPLAY),
        KindFigures(EvidenceKind.PLAY),
    )


def standing_of(repository: SkillRepository, skill: Skill, policy: VerificationPolicy | None = None) -> Standing:
    """One skill's standing (``show``, the detail pane)."""
    return standings(repository, [skill.id], policy, skills={skill.id: skill})[skill.id]


def standings(
    repository: SkillRepository,
    skill_ids: Sequence[str],
    policy: VerificationPolicy | None = None,
    *,
    skills: dict[str, Skill] | None = None,
) -> dict[str, Standing]:
    """The standing of each of these skills that exists and holds a valid skill, by id.

    ``policy`` default: the library's settings. Rows that hold no valid skill are left out
    (they have no body to credit evidence against)."""
    policy = policy or policy_for(repository.database)
    ids = list(dict.fromkeys(skill_ids))
    evidence = repository.evidence.verifications_many(ids)
    out: dict[str, Standing] = {}
    for summary in repository.summaries([i for i in ids if i not in evidence]):
        try:
            tier = Confidence.parse(summary.confidence)
        except ValueError:
            continue  # a tier another program misspelt: `show` names the problem
        out[summary.id] = _empty(summary.id, tier)
    with_evidence = [i for i in ids if i in evidence]
    known = dict(skills or {})
    missing = [i for i in with_evidence if i not in known]
    if missing:
        valid, _invalid = repository.get_many_valid(missing)
        known.update((skill.id, skill) for skill in valid)
    revalidated = repository.runs.revalidated_engines(with_evidence)
    for skill_id in with_evidence:
        skill = known.get(skill_id)
        if skill is None:
            continue
        assessment = policy.assess(
            skill.domain,
            evidence[skill_id],
            body_hash(skill),
            skill.quality.confidence,
            engine_version=revalidated.get(skill_id) if skill.domain is Domain.AI_STRATEGY else None,
        )
        out[skill_id] = Standing(
            skill_id,
            skill.quality.confidence,
            assessment.headless,
            assessment.gameplay,
            assessment.plays,
            assessment.contradiction,
        )
    return out


def contradictions(
    repository: SkillRepository, skill_ids: Sequence[str], policy: VerificationPolicy | None = None
) -> dict[str, Contradiction]:
    """The contradicted tiers among these skills, by id (a badge's data for a page of a list)."""
    return {
        skill_id: found.contradiction
        for skill_id, found in standings(repository, skill_ids, policy).items()
        if found.contradiction is not None
    }


__all__ = ["Standing", "contradictions", "standing_of", "standings"]
