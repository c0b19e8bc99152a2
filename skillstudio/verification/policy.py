"""The one promotion and decay policy (D057 "Verification Pipeline", "Skill decay").

Everything that decides a skill's confidence tier goes through :class:`VerificationPolicy`. Its
numbers come from the studio settings (:mod:`skillstudio.store.settings`, the only place that
holds them; :func:`policy_for` reads a library's). docs/verification.md explains each rule and
the choices made where D057 is silent.

* AI skills have two kinds of evidence, kept apart. **Headless** games against the reference
  opponent ("IC Default Hard" by default) are D057's automated pre-verification: above 40%
  makes a *candidate* (tier Tentative), and by default no more (``headless_max_tier``).
  **Gameplay**, match outcomes from real games (``record``), is what "human play promotes
  further": 3+ decided games above 60%: Established; 10+ above 70%: Proven. A studio that trusts
  its headless engine raises ``headless_max_tier``. "Above" is strict: 60% is not above 60%.
* Content skills (human plays): a completed play with an average rating >= 3 makes a
  candidate; 3+ rated plays averaging >= 3.5: Established. D057 has no automatic Proven rule
  for content, so a Proven content skill keeps its tier.
* Only evidence gathered with the skill's current body counts (``body_hash``); headless
  evidence counts only if it was played against the reference opponent. Error games count
  for nothing: neither wins nor losses.
* A stored tier above what the credited evidence supports on its figures is *contradicted*
  (:class:`Contradiction`): flagged with what would settle it, never silently kept.
* Decay: after an engine update, Proven skills are re-verified with the new engine; a skill
  whose new evidence no longer earns Proven drops to ``decay_tier`` (Tentative).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction

from skillstudio.model.enums import Confidence, Domain
from skillstudio.model.evidence import EvidenceKind, VerificationRecord, summarize
from skillstudio.model.skill import Quality
from skillstudio.store.database import Database
from skillstudio.store.settings import DEFAULTS, StudioSettings, Thresholds, effective_settings, resolve, to_values
from skillstudio.store.types import JsonValue
from skillstudio.verification.stats import Interval, wilson

REFERENCE_OPPONENT = DEFAULTS.reference_opponent
_T = DEFAULTS.thresholds


def _fold(text: str | None) -> str:
    return re.sub(r"[\s_\-:]+", "", text or "").lower()


def _above(value: Fraction, threshold: float) -> bool:
    return value > Fraction(str(threshold))


def _lower(a: Confidence, b: Confidence) -> Confidence:
    return a if a.rank <= b.rank else b


def _higher(a: Confidence, b: Confidence) -> Confidence:
    return a if a.rank >= b.rank else b


@dataclass(frozen=True)
class KindFigures:
    """What one kind of credited evidence adds up to, and the tier it supports on its own."""

    kind: EvidenceKind
    wins: int = 0
    decided: int = 0
    sessions: int = 0
    tier: Confidence = Confidence.TENTATIVE  # by its figures alone (no headless_max_tier cap)
    candidate: bool = False
    reason: str = ""
    rating: float | None = None  # plays: mean rating over the rated ones
    rated: int = 0

    @property
    def rate(self) -> float | None:
        return self.wins / self.decided if self.decided else None

    @property
    def interval(self) -> Interval:
        return wilson(self.wins, self.decided)


@dataclass(frozen=True)
class Contradiction:
    """A stored tier the credited evidence does not support, and what would settle it."""

    tier: Confidence  # the stored tier
    supported: Confidence  # the best tier the credited evidence supports on its figures
    reason: str  # "proven needs 10+ decided games above 70%; the credited evidence: ..."
    conclusive: bool  # the evidence's Wilson 95% interval lies wholly below the tier's bar
    settle: tuple[str, ...] = ("revalidate", "demote")  # the ways out, in the order advised
    advice: str = ""  # the same, in words

    def as_document(self) -> dict[str, object]:
        return {
            "tier": self.tier.value,
            "supported": self.supported.value,
            "reason": self.reason,
            "conclusive": self.conclusive,
            "settle": list(self.settle),
            "advice": self.advice,
        }


@dataclass(frozen=True)
class Assessment:
    """What the evidence that counts says about a skill."""

    confidence: Confidence  # the tier to store
    evidence_tier: Confidence  # the tier the evidence supports under the rules (headless cap included)
    candidate: bool  # passes the candidate bar (>40% vs the reference, or completed + rated >= 3)
    quality: Quality  # D057's quality columns, recomputed from the counted evidence (all kinds pooled)
    interval: Interval  # Wilson 95% interval of quality.success_rate
    wins: int
    decided: int
    counted: int  # records credited
    ignored: int  # records not credited (other body, other opponent, other kind)
    reason: str
    headless: KindFigures = field(default_factory=lambda: KindFigures(EvidenceKind.HEADLESS))
    gameplay: KindFigures = field(default_factory=lambda: KindFigures(EvidenceKind.GAMEPLAY))
    plays: KindFigures = field(default_factory=lambda: KindFigures(EvidenceKind.PLAY))
    contradiction: Contradiction | None = None  # of the current tier (the one assess() was given)


@dataclass(frozen=True)
class VerificationPolicy:
    """Built from the studio settings (:meth:`from_settings`); the field defaults are the
    settings' defaults, D057's numbers."""

    reference_opponent: str = DEFAULTS.reference_opponent
    candidate_rate: float = _T.candidate
    established_games: int = _T.established_games
    established_rate: float = _T.established
    proven_games: int = _T.proven_games
    proven_rate: float = _T.proven
    content_candidate_rating: float = _T.content_candidate_rating
    content_established_plays: int = _T.content_established_plays
    content_established_rating: float = _T.content_established_rating
    decay_tier: Confidence = DEFAULTS.decay_tier
    # Off (D057): only decay (revalidate) lowers a tier; a verify batch only promotes. On: verify
    # follows the credited evidence down as well as up.
    demote_on_verify: bool = DEFAULTS.demote_on_verify
    aliases: tuple[str, ...] = DEFAULTS.reference_aliases
    # D057: headless pre-verification promotes to Tentative; "human play promotes them further".
    headless_max_tier: Confidence = DEFAULTS.headless_max_tier

    # --- settings ---------------------------------------------------------------------------------

    @classmethod
    def from_settings(cls, settings: StudioSettings) -> VerificationPolicy:
        t = settings.thresholds
        return cls(
            reference_opponent=settings.reference_opponent,
            candidate_rate=t.candidate,
            established_games=t.established_games,
            established_rate=t.established,
            proven_games=t.proven_games,
            proven_rate=t.proven,
            content_candidate_rating=t.content_candidate_rating,
            content_established_plays=t.content_established_plays,
            content_established_rating=t.content_established_rating,
            decay_tier=settings.decay_tier,
            demote_on_verify=settings.demote_on_verify,
            aliases=settings.reference_aliases,
            headless_max_tier=settings.headless_max_tier,
        )

    def settings(self) -> StudioSettings:
        """The policy as settings (prune limits left at their defaults)."""
        return StudioSettings(
            reference_opponent=self.reference_opponent,
            reference_aliases=self.aliases,
            headless_max_tier=self.headless_max_tier,
            demote_on_verify=self.demote_on_verify,
            decay_tier=self.decay_tier,
            thresholds=Thresholds(
                candidate=self.candidate_rate,
                established=self.established_rate,
                established_games=self.established_games,
                proven=self.proven_rate,
                proven_games=self.proven_games,
                content_candidate_rating=self.content_candidate_rating,
                content_established_rating=self.content_established_rating,
                content_established_plays=self.content_established_plays,
            ),
        )

    def values(self) -> dict[str, JsonValue]:
        """The settings keys this policy decides with, as stored with each run."""
        return {key: value for key, value in to_values(self.settings()).items() if not key.startswith("prune.")}

    @classmethod
    def from_values(cls, values: Mapping[str, object]) -> VerificationPolicy:
        """The policy a run recorded; ValidationError (by key) if the record is not valid."""
        return cls.from_settings(resolve(values, context="the run's recorded policy"))

    # --- which evidence counts ------------------------------------------------------------------

    def is_reference(self, opponent: str | None) -> bool:
        folded = _fold(opponent)
        return folded == _fold(self.reference_opponent) or folded in {_fold(a) for a in self.aliases}

    def credits(
        self, record: VerificationRecord, domain: Domain, body_hash: str, engine_version: str | None = None
    ) -> bool:
        """Whether ``record`` counts for a skill of ``domain`` whose body hashes to ``body_hash``;
        with ``engine_version`` (set once a skill was revalidated), headless evidence from other
        engine versions no longer counts. Gameplay is real matches, whoever the opponent and
        whatever the reference engine's version: it always counts for an AI skill."""
        if not record.body_hash or record.body_hash != body_hash:
            return False  # gathered with another body: no credit
        if domain is Domain.AI_STRATEGY:
            if record.kind is EvidenceKind.GAMEPLAY:
                return True
            if engine_version is not None and record.engine_version != engine_version:
                return False
            return record.kind is EvidenceKind.HEADLESS and self.is_reference(record.opponent)
        return record.kind is EvidenceKind.PLAY

    # --- tiers ----------------------------------------------------------------------------------

    def headless_tier(self, wins: int, decided: int, *, label: str = "") -> tuple[Confidence, bool, str]:
        """The AI rules on ``wins`` of ``decided`` games, whatever their kind (``label`` names it)."""
        rate = Fraction(wins, decided) if decided else Fraction(0)
        shown = f"{label}{wins}/{decided} games won"
        if decided >= self.proven_games and _above(rate, self.proven_rate):
            return Confidence.PROVEN, True, f"{shown}: {self.proven_games}+ above {self.proven_rate:.0%}"
        if decided >= self.established_games and _above(rate, self.established_rate):
            return (
                Confidence.ESTABLISHED,
                True,
                f"{shown}: {self.established_games}+ above {self.established_rate:.0%}",
            )
        if decided and _above(rate, self.candidate_rate):
            return Confidence.TENTATIVE, True, f"{shown}: above {self.candidate_rate:.0%}, a candidate"
        if not decided:
            return Confidence.TENTATIVE, False, f"{label}no decided games"
        return Confidence.TENTATIVE, False, f"{shown}: not above {self.candidate_rate:.0%}"

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

    def _figures(self, kind: EvidenceKind, records: Sequence[VerificationRecord]) -> KindFigures:
        mine = [r for r in records if r.kind is kind]
        summary = summarize(mine)
        wins = sum(r.wins for r in mine)
        decided = summary.verification_count
        rated = sum(r.rated for r in mine)
        if kind is EvidenceKind.PLAY:
            tier, candidate, reason = self.content_tier(wins, summary.average_rating, rated)
        elif kind is EvidenceKind.HEADLESS:
            tier, candidate, reason = self.headless_tier(
                wins, decided, label=f"headless vs {self.reference_opponent}: "
            )
        else:
            tier, candidate, reason = self.headless_tier(wins, decided, label="gameplay: ")
        return KindFigures(kind, wins, decided, len(mine), tier, candidate, reason, summary.average_rating, rated)

    def assess(
        self,
        domain: Domain,
        records: Iterable[VerificationRecord],
        body_hash: str,
        current: Confidence = Confidence.TENTATIVE,
        *,
        engine_version: str | None = None,
    ) -> Assessment:
        """The tier and quality figures the credited evidence supports, and whether it
        contradicts ``current`` (the stored tier).

        The returned tier follows the evidence up and down (the runner decides whether a batch
        may lower a tier), except for a tier this policy has no rule for (Proven content
        skills): new plays never take it away.
        """
        records = list(records)
        counted = [r for r in records if self.credits(r, domain, body_hash, engine_version)]
        summary = summarize(counted)
        headless = self._figures(EvidenceKind.HEADLESS, counted)
        gameplay = self._figures(EvidenceKind.GAMEPLAY, counted)
        plays = self._figures(EvidenceKind.PLAY, counted)
        if domain is Domain.AI_STRATEGY:
            capped = _lower(headless.tier, self.headless_max_tier)
            tier = _higher(capped, gameplay.tier)
            candidate = headless.candidate or gameplay.candidate
            supported = _higher(headless.tier, gameplay.tier)  # on the figures, whatever the kind
            reason = self._ai_reason(headless, gameplay, capped)
        else:
            tier, candidate, reason = plays.tier, plays.candidate, plays.reason
            supported = plays.tier
        confidence = tier
        if domain is Domain.CONTENT_GENERATION and current is Confidence.PROVEN:
            confidence, reason = current, reason + "; Proven kept (no content rule grants or removes it)"
            supported = current
        wins = sum(r.wins for r in counted)
        decided = summary.verification_count
        quality = Quality(
            verification_count=decided,
            success_rate=summary.success_rate,
            average_rating=summary.average_rating,
            confidence=confidence,
            last_verified=summary.last_verified,
        )
        return Assessment(
            confidence=confidence,
            evidence_tier=tier,
            candidate=candidate,
            quality=quality,
            interval=wilson(wins, decided),
            wins=wins,
            decided=decided,
            counted=len(counted),
            ignored=len(records) - len(counted),
            reason=reason,
            headless=headless,
            gameplay=gameplay,
            plays=plays,
            contradiction=self._contradiction(domain, current, supported, headless, gameplay, plays),
        )

    def _ai_reason(self, headless: KindFigures, gameplay: KindFigures, capped: Confidence) -> str:
        parts = []
        if headless.decided or not gameplay.decided:
            part = headless.reason
            if capped.rank < headless.tier.rank:
                part += (
                    f"; headless evidence gives at most {capped.value} (headless_max_tier):"
                    f" {headless.tier.value} needs gameplay evidence"
                )
            parts.append(part)
        if gameplay.decided:
            parts.append(gameplay.reason)
        return "; ".join(parts)

    def bar(self, domain: Domain, tier: Confidence) -> str:
        """What a skill of ``domain`` needs for ``tier`` (Established or Proven), in words."""
        if domain is Domain.CONTENT_GENERATION:
            return f"{self.content_established_plays}+ rated plays averaging >= {self.content_established_rating}"
        if tier is Confidence.PROVEN:
            return f"{self.proven_games}+ decided games above {self.proven_rate:.0%}"
        return f"{self.established_games}+ decided games above {self.established_rate:.0%}"

    def _contradiction(
        self,
        domain: Domain,
        current: Confidence,
        supported: Confidence,
        headless: KindFigures,
        gameplay: KindFigures,
        plays: KindFigures,
    ) -> Contradiction | None:
        """Flag a stored tier whose bar the credited evidence's figures fall short of: no kind
        of AI evidence has a success rate above the tier's rate, or the plays' mean rating is
        below the tier's. Too few games with a good rate is thin evidence, not a contradiction;
        figures an engine wrote are not evidence here; and the headless cap is a promotion
        rule, not evidence against a tier."""
        if current is Confidence.TENTATIVE or current.rank <= supported.rank:
            return None
        if domain is Domain.AI_STRATEGY:
            present = [k for k in (headless, gameplay) if k.decided]
            bar = self.proven_rate if current is Confidence.PROVEN else self.established_rate
            if not present or any(_above(Fraction(k.wins, k.decided), bar) for k in present):
                return None
            # Conclusive: even the top of each kind's 95% interval is not above the bar.
            conclusive = all(k.interval.high <= bar for k in present)
            shortfall = f"{current.value} needs {self.bar(domain, current)}"
        else:
            present = [plays] if plays.rating is not None else []
            if not present or Fraction(str(round(plays.rating or 0, 6))) >= Fraction(
                str(self.content_established_rating)
            ):
                return None
            conclusive = False
            shortfall = f"{current.value} needs {self.bar(domain, current)}"
        figures = "; ".join(_described(k) for k in present)
        reason = f"{shortfall}; the credited evidence supports {supported.value}: {figures}"
        settle: tuple[str, ...]
        if conclusive:
            advice = (
                f"demote to {supported.value}: the 95% interval of the credited evidence lies below"
                f" {bar:.0%}; or revalidate, if those games were not representative"
            )
            settle = ("demote", "revalidate")
        else:
            more = (
                "more games against the reference opponent, or recorded gameplay,"
                if domain is Domain.AI_STRATEGY
                else "more rated plays"
            )
            advice = f"revalidate ({more} with the current body may support it), or demote to {supported.value}"
            settle = ("revalidate", "demote")
        return Contradiction(current, supported, reason, conclusive, settle, advice)

    def decayed(
        self, records: Sequence[VerificationRecord], domain: Domain, body_hash: str, engine_version: str
    ) -> Assessment:
        """Skill decay: a Proven skill re-verified with the engine ``engine_version``.

        Only evidence gathered with that engine version counts. The returned assessment keeps
        Proven if that evidence earns Proven on its figures (decay re-checks a tier already
        given, so the headless cap on promotion does not apply), and otherwise carries
        ``decay_tier``; the quality figures are those of the new evidence.
        """
        fresh = self.assess(domain, records, body_hash, engine_version=engine_version)
        kept = _higher(fresh.headless.tier, fresh.gameplay.tier) if domain is Domain.AI_STRATEGY else fresh.plays.tier
        if kept is Confidence.PROVEN:
            return _replace(fresh, Confidence.PROVEN, fresh.reason + "; Proven kept")
        reason = f"decay: {fresh.reason} with the new engine; below Proven, so {self.decay_tier.value}"
        return _replace(fresh, self.decay_tier, reason)


def _replace(assessment: Assessment, tier: Confidence, reason: str) -> Assessment:
    quality = replace(assessment.quality, confidence=tier)
    return replace(assessment, confidence=tier, quality=quality, reason=reason, contradiction=None)


def _described(figures: KindFigures) -> str:
    if figures.kind is EvidenceKind.PLAY:
        rating = "no rating" if figures.rating is None else f"rating {figures.rating:.2f} over {figures.rated}"
        return f"{figures.decided} plays, {figures.wins} completed, {rating}"
    rate = f"{figures.wins / figures.decided:.0%}" if figures.decided else "-"
    return f"{figures.kind.value} {figures.wins}/{figures.decided} ({rate}, 95% {figures.interval})"


DEFAULT_POLICY = VerificationPolicy()


def policy_for(database: Database | None) -> VerificationPolicy:
    """The policy a library applies: the defaults, the user's settings file, the library's own
    settings (ValidationError, by key, if they are not valid)."""
    return VerificationPolicy.from_settings(effective_settings(database).settings)


def audit_action(before: Confidence, after: Confidence) -> str:
    """``skill.promote``, ``skill.demote`` or ``skill.verify`` (tier unchanged)."""
    if after.rank > before.rank:
        return "skill.promote"
    if after.rank < before.rank:
        return "skill.demote"
    return "skill.verify"
