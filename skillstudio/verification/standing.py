"""Where a skill's stored tier stands against its credited evidence, for anything that shows a
tier (``list``, ``show``, the dashboard data, and the GUI's badge and detail pane).

:func:`standings` reads the evidence of many skills in a few queries and asks the policy
(:meth:`VerificationPolicy.assess`) for each: the credited evidence per kind, kept apart
(headless games, gameplay matches, plays), and a :class:`Contradiction` when the stored tier is
above what that evidence supports. Skills without evidence need no body parse and get an empty
standing, so a page of a 100k-skill list stays cheap.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from skillstudio.model import Confidence, Domain, Skill
from skillstudio.model.evidence import EvidenceKind
from skillstudio.store import SkillRepository, SkillSummary, body_hash
from skillstudio.verification.policy import Contradiction, KindFigures, VerificationPolicy, policy_for


@dataclass(frozen=True)
class Standing:
    skill_id: str
    tier: Confidence  # as stored
    headless: KindFigures
    gameplay: KindFigures
    plays: KindFigures
    contradiction: Contradiction | None = None
    # The tier the credited evidence earns under the policy (headless_max_tier applied): below
    # the stored tier without a contradiction when the tier came from elsewhere (an engine, an
    # older policy) or the evidence is still thin.
    earned: Confidence = Confidence.TENTATIVE

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
    summaries: Sequence[SkillSummary] | None = None,
) -> dict[str, Standing]:
    """The standing of each of these skills that exists and holds a valid skill, by id.

    ``policy`` default: the library's settings. Rows that hold no valid skill are left out
    (they have no body to credit evidence against). ``summaries``: these skills' rows, when the
    caller has read them already (a table's page). Bodies are parsed only when needed: the
    hash of the stored ``body_json`` text is the body's own hash whenever it matches a record's
    (SkillStudio stores the canonical text), so most skills are judged from their rows alone."""
    policy = policy or policy_for(repository.database)
    ids = list(dict.fromkeys(skill_ids))
    evidence = repository.evidence.verifications_many(ids)
    rows = repository.summaries(ids) if summaries is None else summaries
    summaries_by_id = {s.id: s for s in rows if not s.issues}
    out: dict[str, Standing] = {}
    for skill_id in ids:
        summary = summaries_by_id.get(skill_id)
        if summary is not None and skill_id not in evidence:
            out[skill_id] = _empty(skill_id, Confidence.parse(summary.confidence))
    with_evidence = [i for i in ids if i in evidence and i in summaries_by_id]
    hashes = {i: body_hash(skill) for i, skill in (skills or {}).items() if i in evidence}
    raw = repository.body_json_many([i for i in with_evidence if i not in hashes])
    for skill_id, text in raw.items():
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if any(record.body_hash == digest for record in evidence[skill_id]):
            hashes[skill_id] = digest
    unparsed = [i for i in with_evidence if i not in hashes]
    if unparsed:  # text another program wrote, or evidence of other bodies only: parse to be sure
        valid, _invalid = repository.get_many_valid(unparsed)
        hashes.update((skill.id, body_hash(skill)) for skill in valid)
    revalidated = repository.runs.revalidated_engines(with_evidence)
    for skill_id in with_evidence:
        if skill_id not in hashes:
            continue
        summary = summaries_by_id[skill_id]
        try:
            domain, tier = Domain.parse(summary.domain), Confidence.parse(summary.confidence)
        except ValueError:
            continue  # a domain another program misspelt: `show` names the problem
        assessment = policy.assess(
            domain,
            evidence[skill_id],
            hashes[skill_id],
            tier,
            engine_version=revalidated.get(skill_id) if domain is Domain.AI_STRATEGY else None,
        )
        out[skill_id] = Standing(
            skill_id,
            tier,
            assessment.headless,
            assessment.gameplay,
            assessment.plays,
            assessment.contradiction,
            assessment.evidence_tier,
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
