"""The one promotion and decay policy (D057 "Verification Pipeline", "Skill decay").

Everything that decides a skill's confidence tier goes through :class:`VerificationPolicy`;
its defaults are D057's numbers, and a studio may configure others. docs/verification.md
explains each rule and the choices made where D057 is silent.

* AI skills (headless batches against the reference opponent, "IC Default Hard" by default):
  success rate above 40% makes a *candidate* (tier Tentative); 3+ decided games above 60%:
  Established; 10+ above 70%: Proven. "Above" is strict: exactly 60% is not above 60%.
* Content skills (human plays): a completed play with an average rating >= 3 makes a
  candidate; 3+ rated plays averaging >= 3.5: Established. D057 has no automatic Proven rule
  for content, so a Proven content skill keeps its tier (a tier no rule grants is never taken
  away by new plays).
* Only evidence gathered with the skill's current body counts (``body_hash``); headless
  evidence counts only if it was played against the reference opponent. Error games count
  for nothing: neither wins nor losses.
* Decay: after an engine update, Proven skills are re-verified with the new engine; a skill
  whose new evidence no longer earns Proven drops to ``decay_tier`` (Tentative).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from skillstudio.model.enums import Confidence, Domain
from skillstudio.model.evidence import EvidenceKind, VerificationRecord, summarize
from skillstudio.model.skill import Quality
from skillstudio.verification.stats import Interval, wilson

REFERENCE_OPPONENT = "IC Default Hard"


def _fold(text: str | None) -> str:
    return re.sub(r"[\s_\-:]+", "", text or "").lower()


def _above(value: Fraction, threshold: float) -> bool:
    return value > Fraction(str(threshold))


@dataclass(frozen=True)
class Assessment:
    """What the evidence that counts says about a skill."""

    confidence: Confidence  # the tier to store
    evidence_tier: Confidence  # the tier the evidence alone supports
    candidate: bool  # passes the candidate bar (>40% vs the reference, or completed + rated >= 3)
    quality: Quality  # D057's quality columns, recomputed from the counted evidence
    interval: Interval  # Wilson 95% interval of quality.success_rate
    wins: int
    decided: int
    counted: int  # records credited
    ignored: int  # records not credited (other body, other opponent, other kind)
    reason: str


@dataclass(frozen=True)
class VerificationPolicy:
    """D057's numbers by default; every threshold is configurable."""

    reference_opponent: str = REFERENCE_OPPONENT
    candidate_rate: float = 0.40
    established_games: int = 3
    established_rate: float = 0.60
    proven_games: int = 10
    proven_rate: float = 0.70
    content_candidate_rating: float = 3.0
    content_established_plays: int = 3
    content_established_rating: float = 3.5
    decay_tier: Confidence = Confidence.TENTATIVE
    # Off (D057): only decay (revalidate) lowers a tier; a verify batch only promotes. On: verify
    # follows the credited evidence down as well as up.
    demote_on_verify: bool = False
    aliases: tuple[str, ...] = field(default=("ic-default:hard",))

    # --- which evidence counts ------------------------------------------------------------------

    def is_reference(self, opponent: str | None) -> bool:
        folded = _fold(opponent)
        return folded == _fold(self.reference_opponent) or folded in {_fold(a) for a in self.aliases}

    def credits(
        self, record: VerificationRecord, domain: Domain, body_hash: str, engine_version: str | None = None
    ) -> bool:
        """Whether ``record`` counts for a skill of ``domain`` whose body hashes to ``body_hash``;
        with ``engine_version`` (set once a skill was revalidated), headless evidence from other
        engine versions no longer counts."""
        if not record.body_hash or record.body_hash != body_hash:
            return False  # gathered with another body: no credit
        if domain is Domain.AI_STRATEGY:
            if engine_version is not None and record.engine_version != engine_version:
                return False
            return record.kind is EvidenceKind.HEADLESS and self.is_reference(record.opponent)
        return record.kind is EvidenceKind.PLAY

    # --- tiers ----------------------------------------------------------------------------------

    def headless_tier(self, wins: int, decided: int) -> tuple[Confidence, bool, str]:
        rate = Fraction(wins, decided) if decided else Fraction(0)
        shown = f"{wins}/{decided}"
        if decided >= self.proven_games and _above(rate, self.proven_rate):
            return Confidence.PROVEN, True, f"{shown} games won: {self.proven_games}+ above {self.proven_rate:.0%}"
        if decided >= self.established_games and _above(rate, self.established_rate):
            return (
                Confidence.ESTABLISHED,
                True,
                f"{shown} games won: {self.established_games}+ above {self.established_rate:.0%}",
            )
        if decided and _above(rate, self.candidate_rate):
            return Confidence.TENTATIVE, True, f"{shown} games won: above {self.candidate_rate:.0%}, a candidate"
        if not decided:
            return Confidence.TENTATIVE, False, "no decided games against the reference opponent"
        return Confidence.TENTATIVE, False, f"{shown} games won: not above {self.candidate_rate:.0%}"

    def content_tier(self, completed: int, rating: float | None, rated: int) -> tuple[Confidence, bool, str]:
        if rating is None or not completed:
            return Confidence.TENTATIVE, False, "no completed and rated play"
        mean = Fraction(str(round(rating, 6)))
        if rated >= self.content_established_plays and mean >= Fraction(str(self.content_established_rating)):
            return (
                Confidence.ESTABLISHED,
                True,
                f"{rated} rated plays averaging {rating:.2f} >= {self.content_established_rating}",
            )
        if mean >= Fraction(str(self.content_candidate_rating)):
            return (
                Confidence.TENTATIVE,
                True,
                f"completed and rated {rating:.2f} >= {self.content_candidate_rating}, a candidate",
            )
        return Confidence.TENTATIVE, False, f"average rating {rating:.2f} below {self.content_candidate_rating}"

    def assess(
        self,
        domain: Domain,
        records: Iterable[VerificationRecord],
        body_hash: str,
        current: Confidence = Confidence.TENTATIVE,
        *,
        engine_version: str | None = None,
    ) -> Assessment:
        """The tier and quality figures the credited evidence supports.

        The stored tier follows the evidence up and down, except for a tier this policy has no
        rule for (Proven content skills): new plays never take it away.
        """
        records = list(records)
        counted = [r for r in records if self.credits(r, domain, body_hash, engine_version)]
        summary = summarize(counted)
        wins = sum(r.wins for r in counted)
        decided = summary.verification_count
        if domain is Domain.AI_STRATEGY:
            tier, candidate, reason = self.headless_tier(wins, decided)
        else:
            rated = sum(r.rated for r in counted)
            tier, candidate, reason = self.content_tier(wins, summary.average_rating, rated)
        confidence = tier
        if domain is Domain.CONTENT_GENERATION and current is Confidence.PROVEN:
            confidence, reason = current, reason + "; Proven kept (no content rule grants or removes it)"
        quality = Quality(
            verification_count=decided,
            success_rate=summary.success_rate,
            average_rating=summary.average_rating,
            confidence=confidence,
            last_verified=summary.last_verified,
        )
        return Assessment(
            confidence,
            tier,
            candidate,
            quality,
            wilson(wins, decided),
            wins,
            decided,
            len(counted),
            len(records) - len(counted),
            reason,
        )

    def decayed(
        self, records: Sequence[VerificationRecord], domain: Domain, body_hash: str, engine_version: str
    ) -> Assessment:
        """Skill decay: a Proven skill re-verified with the engine ``engine_version``.

        Only evidence gathered with that engine version counts.

        The returned assessment keeps Proven if the new evidence alone earns it, and otherwise
        carries ``decay_tier``; the quality figures are those of the new evidence.
        """
        fresh = self.assess(domain, records, body_hash, engine_version=engine_version)
        if fresh.evidence_tier is Confidence.PROVEN:
            return fresh
        quality = Quality(
            fresh.quality.verification_count,
            fresh.quality.success_rate,
            fresh.quality.average_rating,
            self.decay_tier,
            fresh.quality.last_verified,
        )
        reason = f"decay: {fresh.reason} with the new engine; below Proven, so {self.decay_tier.value}"
        return Assessment(
            self.decay_tier,
            fresh.evidence_tier,
            fresh.candidate,
            quality,
            fresh.interval,
            fresh.wins,
            fresh.decided,
            fresh.counted,
            fresh.ignored,
            reason,
        )


DEFAULT_POLICY = VerificationPolicy()


def audit_action(before: Confidence, after: Confidence) -> str:
    """``skill.promote``, ``skill.demote`` or ``skill.verify`` (tier unchanged)."""
    if after.rank > before.rank:
        return "skill.promote"
    if after.rank < before.rank:
        return "skill.demote"
    return "skill.verify"
