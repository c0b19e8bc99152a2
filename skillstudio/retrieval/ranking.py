"""How retrieval scores a skill: relevance from words and meaning, tilted by evidence.

D057 ranks by ``relevance * success_rate``, which puts every never-verified skill at zero, so a
new, exactly relevant skill is never retrieved. SkillStudio instead (docs/retrieval.md):

1. **Keyword relevance** ``fts``: FTS5's bm25 divided by the best bm25 of the query, times the
   share of the query's terms (weighted by idf) the skill contains, in [0, 1].
2. **Semantic relevance** ``semantic``: the cosine between the query's embedding and the skill's
   (its description's direction plus its label's, name and tags), placed between the library's typical cosine for this query (the mean over every
   candidate in the filter, which is what "unrelated" looks like for this model and query) and
   the best one: ``(cos - mean) / (best - mean)``, clipped to [0, 1].
3. **Fusion**: ``relevance = W_SEMANTIC * semantic + (1 - W_SEMANTIC) * fts``, a convex
   combination of normalised scores (Bruch, Gai and Ingber, 2023, found it beats reciprocal-rank
   fusion when scores are normalised this way). With a situation in the query, a StrategicPattern
   skill's situation similarity enters the same way with weight W_SITUATION.
4. **Evidence**: quality is the posterior mean of the success rate under a Beta(2, 2) prior,
   ``(wins + 2) / (games + 4)``: 0.5 with no games, moving towards the measured rate as games
   accumulate. The final score is ``relevance * (1 + EVIDENCE_WEIGHT * (2 * quality - 1))``,
   a factor between 0.6 and 1.4: evidence breaks near ties and demotes skills that keep losing,
   but never hides a relevant skill that has simply not been played yet.
5. **Lift** (``verify --baseline``): when the skill's latest lift was measured with its current
   body, the final score is also multiplied by ``1 + LIFT_WEIGHT * lift``, where ``lift`` is the
   end of the 95% interval nearest zero, or 0 when the interval contains zero. Only a lift the
   evidence establishes moves a skill, by no more than it establishes: a plan that is clearly
   worse than the module's default plan sinks, one that is clearly better rises.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from skillstudio.model import EconomyState, GamePhase, SituationSignature, ThreatLevel

W_SEMANTIC = 0.65  # of relevance, when both keyword and semantic scores exist
W_SITUATION = 0.35  # of relevance, for a StrategicPattern when the query carries a situation
EVIDENCE_WEIGHT = 0.4  # the evidence factor spans 1 +/- this
PRIOR_WINS = PRIOR_LOSSES = 2.0  # Beta prior: as if every skill had won 2 of 4 games
LIFT_WEIGHT = 1.0  # per unit of the lift's conservative bound; the factor stays in [0.5, 1.5]
RRF_K = 60  # reciprocal-rank fusion's usual constant (Cormack et al., 2009), for the baseline
NEUTRAL_SITUATION = 0.5  # a skill without a signature, when the query has one


@dataclass(frozen=True)
class Evidence:
    """A skill's quality figures, as read (defensively) from its row."""

    games: int
    success_rate: float
    average_rating: float | None = None


def evidence_quality(evidence: Evidence) -> float:
    """Posterior mean success under the Beta prior; a content skill's rating counts as much."""
    games = max(0, evidence.games)
    if not math.isfinite(evidence.success_rate):  # an unreadable rate says nothing about its games
        games = 0
    rate = min(1.0, max(0.0, evidence.success_rate)) if games else 0.0
    wins = rate * games
    quality = (wins + PRIOR_WINS) / (games + PRIOR_WINS + PRIOR_LOSSES)
    rating = evidence.average_rating
    if rating is not None and math.isfinite(rating) and games > 0:
        # 1..5 stars as a 0..1 score, shrunk towards the middle by the same prior.
        stars = min(1.0, max(0.0, (rating - 1.0) / 4.0))
        rated = (stars * games + PRIOR_WINS) / (games + PRIOR_WINS + PRIOR_LOSSES)
        quality = (quality + rated) / 2
    return quality


def evidence_factor(quality: float) -> float:
    return 1.0 + EVIDENCE_WEIGHT * (2.0 * quality - 1.0)


def conservative_lift(low: float, high: float) -> float:
    """The lift the interval establishes: its bound nearest zero, or 0 when it straddles zero."""
    if not (math.isfinite(low) and math.isfinite(high)) or low > high:
        return 0.0  # an unreadable interval establishes nothing
    if low > 0.0:
        return min(low, 1.0)
    if high < 0.0:
        return max(high, -1.0)
    return 0.0


def lift_factor(lift: float) -> float:
    return min(1.5, max(0.5, 1.0 + LIFT_WEIGHT * lift))


def keyword_relevance(bm25: float | None, best: float, coverage: float = 1.0) -> float:
    """bm25 over the query's best, times the share of the query's terms (idf-weighted) matched."""
    if bm25 is None or best <= 0:
        return 0.0
    return max(0.0, min(1.0, bm25 / best)) * max(0.0, min(1.0, coverage))


def semantic_relevance(cosine: float | None, typical: float, best: float) -> float:
    if cosine is None:
        return 0.0
    if best - typical <= 1e-9:  # one candidate, or all alike: none stands out from the others
        return 1.0
    return max(0.0, min(1.0, (cosine - typical) / (best - typical)))


def fuse(fts: float | None, semantic: float | None) -> float:
    """The convex combination; a missing signal leaves the other one alone."""
    if semantic is None:
        return fts or 0.0
    if fts is None:
        return semantic
    return W_SEMANTIC * semantic + (1.0 - W_SEMANTIC) * fts


def with_situation(relevance: float, situation: float | None) -> float:
    if situation is None:
        return relevance
    return (1.0 - W_SITUATION) * relevance + W_SITUATION * situation


def reciprocal_rank_fusion(*rankings: list[str]) -> dict[str, float]:
    """Plain RRF over ranked id lists: the baseline the default ranking must beat."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, skill_id in enumerate(ranking, start=1):
            scores[skill_id] = scores.get(skill_id, 0.0) + 1.0 / (RRF_K + rank)
    return scores


# --- situations -------------------------------------------------------------------------------

_PHASES = {GamePhase.EARLY: 0, GamePhase.MID: 1, GamePhase.LATE: 2}
_ECONOMY = {EconomyState.BEHIND: 0, EconomyState.EVEN: 1, EconomyState.AHEAD: 2}
_THREATS = {
    ThreatLevel.NONE: 0,
    ThreatLevel.LOW: 1,
    ThreatLevel.MEDIUM: 2,
    ThreatLevel.HIGH: 3,
    ThreatLevel.CRITICAL: 4,
}
# What the enemy fields decides the plan more than anything else (an anti-air plan answers
# aircraft); the phase and the threat come next, then our own army, economy, territory, tech.
SITUATION_WEIGHTS = {
    "enemy_composition_estimate": 0.25,
    "game_phase": 0.15,
    "threat_level": 0.15,
    "army_composition": 0.15,
    "economy_state": 0.10,
    "map_control": 0.10,
    "active_tech": 0.10,
}


def situation_similarity(a: SituationSignature, b: SituationSignature) -> float:
    """1 for identical signatures, 0 for opposite ones; a weighted mean of per-field similarities."""
    parts = {
        "enemy_composition_estimate": _composition_similarity(
            a.enemy_composition_estimate, b.enemy_composition_estimate
        ),
        "game_phase": 1.0 - abs(_PHASES[a.game_phase] - _PHASES[b.game_phase]) / 2,
        "threat_level": 1.0 - abs(_THREATS[a.threat_level] - _THREATS[b.threat_level]) / 4,
        "army_composition": _composition_similarity(a.army_composition, b.army_composition),
        "economy_state": 1.0 - abs(_ECONOMY[a.economy_state] - _ECONOMY[b.economy_state]) / 2,
        "map_control": 1.0 - min(1.0, abs(a.map_control - b.map_control)),
        "active_tech": _jaccard(a.active_tech, b.active_tech),
    }
    return sum(SITUATION_WEIGHTS[key] * value for key, value in parts.items())


def _composition_similarity(a: tuple[tuple[str, int], ...], b: tuple[tuple[str, int], ...]) -> float:
    """Cosine of the unit-share vectors; two empty compositions agree (1), one empty says little (0.5)."""
    if not a and not b:
        return 1.0
    if not a or not b:
        return NEUTRAL_SITUATION
    shares_a, shares_b = _shares(a), _shares(b)
    dot = sum(share * shares_b.get(unit, 0.0) for unit, share in shares_a.items())
    norm = math.sqrt(sum(v * v for v in shares_a.values())) * math.sqrt(sum(v * v for v in shares_b.values()))
    return dot / norm if norm else 0.0


def _shares(pairs: tuple[tuple[str, int], ...]) -> dict[str, float]:
    out: dict[str, float] = {}
    for unit, share in pairs:
        key = unit.strip().lower()
        out[key] = out.get(key, 0.0) + max(0, share)
    return out


def _jaccard(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    left, right = {t.lower() for t in a}, {t.lower() for t in b}
    if not left and not right:
        return 1.0
    if not left or not right:
        return NEUTRAL_SITUATION
    return len(left & right) / len(left | right)


__all__ = [
    "EVIDENCE_WEIGHT",
    "LIFT_WEIGHT",
    "RRF_K",
    "SITUATION_WEIGHTS",
    "W_SEMANTIC",
    "W_SITUATION",
    "Evidence",
    "conservative_lift",
    "evidence_factor",
    "evidence_quality",
    "fuse",
    "keyword_relevance",
    "lift_factor",
    "reciprocal_rank_fusion",
    "semantic_relevance",
    "situation_similarity",
    "with_situation",
]
