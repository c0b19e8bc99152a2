"""Where a skill's tier and figures come from, and what would change them, in words.

A tier or a figure shown without its source misleads: "Verifications 256" beside "no sessions
recorded" reads as evidence when it is an engine's row. Every figure has one of three sources,
and :func:`explain` names it:

* **this library's evidence**: sessions recorded here, credited under the policy (current
  body, reference opponent), each kind kept apart: headless games, gameplay matches, plays;
* **a package's claim**: figures that came with an import (:mod:`skillstudio.model.claims`),
  never evidence here;
* **the library's row alone**: figures an engine (D057's ``skills`` row) or another program
  wrote, with no sessions here behind them.

It also says what would change the tier: the next tier's bar under the library's effective
policy (including ``headless_max_tier``), and what may lower it (``demote_on_verify``, decay).
The words are the core's, so the detail pane and the CLI say the same; they only render them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from skillstudio.model import Confidence, Domain, Skill
from skillstudio.model.claims import claimed_quality_text
from skillstudio.model.evidence import EvidenceKind, VerificationRecord, summarize
from skillstudio.verification.policy import Contradiction, KindFigures, VerificationPolicy
from skillstudio.verification.standing import Standing

_KIND_LABELS = {
    EvidenceKind.HEADLESS: "Headless games",
    EvidenceKind.GAMEPLAY: "Gameplay matches",
    EvidenceKind.PLAY: "Content plays",
}


def evidence_text(standing: Standing) -> str:
    """The credited evidence, each kind apart: ``headless 12/20 (60%) [0.387, 0.781] · gameplay none``."""
    parts = []
    for figures in (standing.headless, standing.gameplay, standing.plays):
        if figures.kind is EvidenceKind.PLAY and not figures.decided:
            continue  # plays are for content skills: no need to say an AI skill has none
        if not figures.decided:
            parts.append(f"{figures.kind.value} none")
            continue
        shown = f"{figures.kind.value} {figures.wins}/{figures.decided} ({figures.wins / figures.decided:.0%}) {figures.interval}"
        if figures.rating is not None:
            shown += f" rating {figures.rating:.2f}"
        parts.append(f"{shown} supports {figures.tier.value}")
    return " · ".join(parts) + " (credited only)"


def contradiction_text(contradiction: Contradiction) -> str:
    """A contradicted tier as a flag says it: why, then what would settle it."""
    return f"Contradicted by this library's evidence: {contradiction.reason}. To settle: {contradiction.advice}."


@dataclass(frozen=True)
class EvidenceLine:
    """One kind of credited evidence: what it adds up to, or "none"."""

    label: str  # "Headless games vs IC Default Hard"
    text: str  # "12 of 20 won (60%, 95% 39-78%) in 2 sessions: supports established"


@dataclass(frozen=True)
class Explanation:
    """What the detail pane says beside a tier and its figures. Sentences, not yet HTML."""

    tier: Confidence
    tier_source: str  # where the stored tier comes from
    figures: str  # the row's figures, "75% over 40 games"
    figures_source: str  # where they come from ("from this library's credited evidence (3 sessions)")
    evidence: tuple[EvidenceLine, ...]  # this library's credited evidence, kind by kind
    contradiction: Contradiction | None = None
    claim: str | None = None  # a package's claimed figures, said as a claim
    raise_by: str | None = None  # the next tier's bar
    lower_by: str | None = None  # what may lower the tier
    problem: str | None = None  # why the tier could not be checked (settings not valid)


def explain(
    skill: Skill,
    records: Sequence[VerificationRecord],
    standing: Standing | None,
    policy: VerificationPolicy | None,
    *,
    claim: Mapping[str, Any] | None = None,
    problem: str | None = None,
) -> Explanation:
    """Explain ``skill``'s tier and figures from its sessions here (``records``, all of them),
    its ``standing`` under ``policy`` (None with ``problem`` when the settings are not valid)
    and the package's ``claim`` an import kept, if any."""
    unit = "plays" if skill.domain is Domain.CONTENT_GENERATION else "games"
    claimed = None if claim is None else claimed_quality_text(claim)
    figures = _figures(skill, unit)
    if standing is None or policy is None:
        return Explanation(
            skill.quality.confidence,
            "stored in the library; not checked against the evidence",
            figures,
            _figures_source(skill, records, None, unit),
            (),
            claim=claimed,
            problem=problem,
        )
    return Explanation(
        skill.quality.confidence,
        _tier_source(skill, records, standing, policy),
        figures,
        _figures_source(skill, records, standing, unit),
        _evidence(skill, standing, policy),
        contradiction=standing.contradiction,
        claim=claimed,
        raise_by=_raise_by(skill, standing, policy),
        lower_by=_lower_by(skill, policy),
    )


# --- the parts ------------------------------------------------------------------------------------


def _credited(standing: Standing) -> int:
    return standing.headless.decided + standing.gameplay.decided + standing.plays.decided


def _figures(skill: Skill, unit: str) -> str:
    quality = skill.quality
    if not quality.verification_count:
        shown = f"no decided {unit}"
    else:
        shown = f"{quality.success_rate:.0%} over {quality.verification_count} {unit}"
    if quality.average_rating is not None:
        shown += f", rating {quality.average_rating:.2f} / 5"
    if quality.last_verified:
        shown += f", last verified {quality.last_verified[:10]}"
    return shown


def _figures_source(skill: Skill, records: Sequence[VerificationRecord], standing: Standing | None, unit: str) -> str:
    stored = skill.quality.verification_count
    recorded = summarize(records).verification_count
    sessions = f"{len(records)} session{'s' if len(records) != 1 else ''}"
    if not records:
        if not stored:
            return "nothing measured here yet"
        return (
            "from the library's row only: no verification sessions here back them (an engine's D057 row"
            " or another program wrote them); verify the skill to measure it here"
        )
    credited = None if standing is None else _credited(standing)
    if stored == credited and stored:
        return f"from this library's credited evidence ({sessions})"
    if stored == recorded and stored:
        if credited is None:
            return f"from this library's {sessions}"
        return (
            f"from this library's {sessions}, all of them; {credited} of the {recorded} {unit} are credited"
            " toward a tier (the rest: another opponent than the reference, or an earlier body)"
        )
    if not stored:
        return f"{sessions} here, none decided (error games count for nothing)"
    return (
        f"not this library's evidence alone: the row says {stored} {unit}, the {sessions} here hold {recorded}"
        " (the rest came with the row: an engine or an earlier tool)"
    )


def _evidence(skill: Skill, standing: Standing, policy: VerificationPolicy) -> tuple[EvidenceLine, ...]:
    if skill.domain is Domain.CONTENT_GENERATION:
        kinds = [standing.plays] + [k for k in (standing.headless, standing.gameplay) if k.sessions]
    else:
        kinds = [standing.headless, standing.gameplay] + ([standing.plays] if standing.plays.sessions else [])
    lines = []
    for figures in kinds:
        label = _KIND_LABELS[figures.kind]
        if figures.kind is EvidenceKind.HEADLESS:
            label += f" vs {policy.reference_opponent}"
        lines.append(EvidenceLine(label, _kind_text(figures)))
    return tuple(lines)


def _kind_text(figures: KindFigures) -> str:
    if not figures.sessions:
        return "none"
    sessions = f"{figures.sessions} session{'s' if figures.sessions != 1 else ''}"
    if figures.kind is EvidenceKind.PLAY:
        rating = "unrated" if figures.rating is None else f"rated {figures.rating:.2f} / 5 by {figures.rated}"
        shown = f"{figures.decided} plays, {figures.wins} completed, {rating}"
    elif not figures.decided:
        return f"no decided games ({sessions})"
    else:
        interval = figures.interval
        shown = (
            f"{figures.wins} of {figures.decided} won ({figures.wins / figures.decided:.0%},"
            f" 95% {interval.low:.0%}–{interval.high:.0%})"
        )
    return f"{shown} in {sessions}: supports {figures.tier.value}"


def _best(skill: Skill, standing: Standing) -> KindFigures:
    """The kind of credited evidence that supports the highest tier."""
    if skill.domain is Domain.CONTENT_GENERATION:
        return standing.plays
    return standing.gameplay if standing.gameplay.tier.rank >= standing.headless.tier.rank else standing.headless


def _tier_source(
    skill: Skill, records: Sequence[VerificationRecord], standing: Standing, policy: VerificationPolicy
) -> str:
    tier = skill.quality.confidence
    best = _best(skill, standing)
    if standing.contradiction is not None:
        return f"not supported by this library's evidence, which supports {standing.contradiction.supported.value}"
    if tier is Confidence.TENTATIVE:
        candidates = [k for k in (standing.headless, standing.gameplay, standing.plays) if k.candidate]
        if candidates:
            return f"the starting tier; a candidate: {candidates[0].reason.removesuffix(', a candidate')}"
        return "the starting tier; not yet a candidate"
    if skill.domain is Domain.CONTENT_GENERATION and tier is Confidence.PROVEN:
        return (
            "set by a person, an engine or an import: no rule grants Proven to a content skill,"
            " and new plays never take it away"
        )
    if standing.earned.rank >= tier.rank:
        return f"earned by this library's evidence: {best.reason}"
    if not _credited(standing):
        if not records:
            return "not from this library's evidence: no sessions here (an engine's row, an import or a person set it)"
        return (
            f"not from this library's evidence: none of the {len(records)} sessions here is credited"
            " (another opponent than the reference, or an earlier body)"
        )
    if best.tier.rank >= tier.rank:
        return (
            f"its bar is met by headless games only ({best.reason}); under this library's policy headless"
            f" games raise a skill no further than {policy.headless_max_tier.value} (headless_max_tier),"
            " so the tier was set earlier and stands"
        )
    return f"not yet earned here, nor contradicted: {best.reason}"


def _raise_by(skill: Skill, standing: Standing, policy: VerificationPolicy) -> str | None:
    tier = skill.quality.confidence
    candidate = any(k.candidate for k in (standing.headless, standing.gameplay, standing.plays))
    if skill.domain is Domain.CONTENT_GENERATION:
        if tier is Confidence.TENTATIVE:
            first = (
                "" if candidate else f"A candidate needs a completed play rated >= {policy.content_candidate_rating}. "
            )
            return first + f"Established needs {policy.requirement(skill.domain, Confidence.ESTABLISHED)}."
        if tier is Confidence.ESTABLISHED:
            return "No rule raises a content skill to Proven (D057 has none)."
        return None
    if tier is Confidence.PROVEN:
        return None
    first = (
        ""
        if candidate or tier is not Confidence.TENTATIVE
        else (
            f"A candidate needs a win rate above {policy.candidate_rate:.0%}, in headless games against"
            f" {policy.reference_opponent} or in gameplay. "
        )
    )
    after = Confidence.ESTABLISHED if tier is Confidence.TENTATIVE else Confidence.PROVEN
    bar = policy.requirement(skill.domain, after)
    if after.rank > policy.headless_max_tier.rank:
        return (
            first + f"{after.value.capitalize()} needs gameplay evidence: {bar} in recorded matches;"
            f" headless games raise a skill no further than {policy.headless_max_tier.value} (headless_max_tier)."
        )
    return (
        first
        + f"{after.value.capitalize()} needs {bar}, in headless games against {policy.reference_opponent} or in gameplay."
    )


def _lower_by(skill: Skill, policy: VerificationPolicy) -> str | None:
    tier = skill.quality.confidence
    if tier is Confidence.TENTATIVE:
        return None
    if policy.demote_on_verify:
        lowered = "New evidence lowers it to what the credited evidence supports (demote_on_verify is on)"
    else:
        lowered = "New evidence never lowers it (demote_on_verify is off)"
    if skill.domain is Domain.AI_STRATEGY and tier is Confidence.PROVEN:
        lowered += (
            f"; after an engine update, revalidation drops it to {policy.decay_tier.value}"
            " unless the new engine's games earn Proven again"
        )
    return lowered + "."


__all__ = ["EvidenceLine", "Explanation", "contradiction_text", "evidence_text", "explain"]
