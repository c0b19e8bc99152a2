"""D057's ``SkillRetriever.retrieve``: which skills a situation pulls into a prompt, and why.

Steps, as D057 has them: candidates by embedding similarity when a provider is configured, by
FTS5 otherwise (and whenever the provider fails); served skills only (tentative or better,
never rejected by review, never trashed); ranked; the top K. The ranking is
:mod:`skillstudio.retrieval.ranking`'s, and every hit carries its score breakdown.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from skillstudio.model import Domain, SituationSignature, Skill, StrategicPattern, ValidationError, parse_body_json
from skillstudio.retrieval import ranking
from skillstudio.retrieval.providers import EmbeddingProvider, ProviderError
from skillstudio.retrieval.vectors import VectorIndex
from skillstudio.review.serving import serve
from skillstudio.store import SkillRepository, SkillSummary, body_hash
from skillstudio.store.embeddings import EmbeddingStatus
from skillstudio.store.keyword_search import keyword_candidates, query_words, term_coverage
from skillstudio.store.paired_runs import PairedRuns

MAX_K = 100
# From each of keyword and semantic search, before ranking: this many per skill asked for, within
# bounds. Every candidate's figures are read and scored, so a larger pool costs time for hits
# that would rank far below the k returned.
CANDIDATES_PER_HIT, MIN_CANDIDATES, CANDIDATES = 5, 50, 200


class Mode(StrEnum):
    HYBRID = "hybrid"  # keyword + semantic + situation, tilted by evidence (the default)
    FTS = "fts"  # FTS5 keyword relevance, tilted by evidence
    SEMANTIC = "semantic"  # embedding cosine, tilted by evidence
    TAGS = "tags"  # seed 004: tag overlap with the query's words, tilted by evidence
    RRF = "rrf"  # the baseline: reciprocal-rank fusion of FTS and cosine, no evidence

    @classmethod
    def parse(cls, raw: str) -> Mode:
        try:
            return cls(raw.strip().lower())
        except ValueError:
            raise ValueError(f"unknown mode {raw!r}; choose one of {', '.join(m.value for m in cls)}") from None


@dataclass(frozen=True)
class ScoreBreakdown:
    """Every number that went into a hit's place; None where a signal did not apply."""

    fts: float | None  # keyword relevance, bm25 / best bm25
    bm25: float | None  # FTS5's bm25, negated (higher is better)
    semantic: float | None  # semantic relevance, cosine placed between typical and best
    cosine: float | None
    situation: float | None  # similarity of the skill's SituationSignature to the query's
    tags: float | None  # matched tags / best match count (tags mode)
    relevance: float
    quality: float  # posterior mean success (Beta(2, 2) prior)
    evidence: float  # the factor quality applies to relevance
    lift: float | None  # the latest current-body lift's conservative bound; None without one
    lift_factor: float  # the factor that lift applies (1.0 without one)
    final: float

    def as_dict(self) -> dict[str, float | None]:
        return {key: (None if value is None else round(value, 6)) for key, value in self.__dict__.items()}


@dataclass(frozen=True)
class Hit:
    skill_id: str
    name: str
    domain: str
    game_module: str
    confidence: str
    verification_count: int
    success_rate: float
    score: ScoreBreakdown


@dataclass(frozen=True)
class RetrievalResult:
    query: str
    mode: Mode  # what was asked for
    used: Mode  # what ran: FTS when embeddings were unavailable (D057's fallback)
    model_id: str | None  # the embedding model compared against, if any
    hits: list[Hit]  # each one a skill that serves content (a prompt would hold it)
    notes: tuple[str, ...] = ()  # fallbacks, dropped words, skipped vectors: for the user
    invalid_vectors: dict[str, str] = field(default_factory=dict)  # skill id -> why skipped
    served: tuple[Skill, ...] = ()  # what each hit serves, in the hits' order (docs/review.md)
    # Skills that ranked among the hits but serve nothing, skill id -> why: a row that is not a
    # valid skill (another program wrote it), or withheld by review. The next ones took their place.
    unserved: dict[str, str] = field(default_factory=dict)

    @property
    def ids(self) -> list[str]:
        return [hit.skill_id for hit in self.hits]


class Retriever:
    """Retrieval over one library with one (optional) embedding provider.

    Holds the in-memory vector index of the provider's model, loaded at the first semantic
    search and kept current from the library's change log; keep one Retriever per open
    library (the GUI and the MCP server do) so the vectors load once.
    """

    def __init__(
        self,
        repository: SkillRepository,
        provider: EmbeddingProvider | None,
        *,
        candidates: int = CANDIDATES,
        serve_unapproved: bool = True,
    ):
        self.repository, self.provider, self.candidates = repository, provider, candidates
        # A skill awaiting review that was never approved: served (True, an agent's fresh
        # candidate stays findable) or withheld. See skillstudio.review.serving, docs/review.md.
        self.serve_unapproved = serve_unapproved
        self._index: VectorIndex | None = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str | None:
        return self.provider.model_id if self.provider is not None else None

    def embedding_status(self) -> EmbeddingStatus | None:
        """How many skills lack a current vector for this provider's model."""
        if self.provider is None:
            return None
        return self.repository.embeddings.status(self.provider.model_id)

    def index(self) -> VectorIndex | None:
        if self.provider is None:
            return None
        with self._lock:
            if self._index is None or self._index.model_id != self.provider.model_id:
                self._index = VectorIndex(self.repository.embeddings, self.provider.model_id, self.provider.dimensions)
            return self._index

    # --- retrieve ------------------------------------------------------------------------------

    def retrieve(
        self,
        query: str,
        *,
        domain: Domain | str | None = None,
        game_module: str | None = None,
        k: int = 5,
        mode: Mode | str = Mode.HYBRID,
        role: str | None = None,
        situation: SituationSignature | None = None,
    ) -> RetrievalResult:
        mode = mode if isinstance(mode, Mode) else Mode.parse(mode)
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K:
            raise ValueError(f"k must be an integer in 1..{MAX_K}")
        domain_value = _domain_value(domain)
        pool = min(self.candidates, max(MIN_CANDIDATES, CANDIDATES_PER_HIT * k))
        query = query if isinstance(query, str) else ""
        notes: list[str] = []
        if not query_words(query):
            notes.append("the query has no words to match")
            return RetrievalResult(query, mode, mode, self.model_id, [], tuple(notes))

        keyword: dict[str, float] = {}
        term_weights: dict[str, float] = {}
        if mode in (Mode.HYBRID, Mode.FTS, Mode.RRF):
            found = keyword_candidates(
                self.repository.database, query, domain=domain_value, game_module=game_module, limit=pool
            )
            keyword = {hit.skill_id: hit.bm25 for hit in found.hits}
            term_weights = found.weights
            if found.dropped:
                notes.append(f"words in most skills were not matched on: {', '.join(found.dropped)}")

        cosines: dict[str, float] = {}
        typical = best = 0.0
        used = mode
        invalid: dict[str, str] = {}
        if mode in (Mode.HYBRID, Mode.SEMANTIC, Mode.RRF):
            semantic = self._semantic(query, domain_value, game_module, notes, pool, also=keyword)
            if semantic is None:
                if mode is Mode.SEMANTIC:  # D057: fall back to FTS5 keyword search
                    found = keyword_candidates(
                        self.repository.database,
                        query,
                        domain=domain_value,
                        game_module=game_module,
                        limit=pool,
                    )
                    keyword = {hit.skill_id: hit.bm25 for hit in found.hits}
                    term_weights = found.weights
                used = Mode.FTS
            else:
                cosines, typical, best, invalid = semantic

        tag_matches: dict[str, int] = {}
        if mode is Mode.TAGS:
            found = keyword_candidates(
                self.repository.database,
                query,
                domain=domain_value,
                game_module=game_module,
                limit=pool * 5,
                tags_only=True,
            )
            tag_matches = {hit.skill_id: 0 for hit in found.hits}

        candidate_ids = list(dict.fromkeys([*keyword, *cosines, *tag_matches]))
        summaries = {s.id: s for s in self.repository.summaries(candidate_ids)}
        if role:
            summaries = self._with_role(summaries, role)
        if mode is Mode.TAGS:
            words = set(query_words(query))
            tag_matches = {sid: _tag_overlap(summaries[sid].tags, words) for sid in tag_matches if sid in summaries}
            tag_matches = {sid: count for sid, count in tag_matches.items() if count > 0}
        situations = self._situations(list(summaries)) if situation is not None else {}
        lifts = self._lifts(list(summaries)) if mode is not Mode.RRF else {}
        coverage = (
            term_coverage(self.repository.database, [i for i in summaries if i in keyword], term_weights)
            if keyword and term_weights
            else {}
        )

        hits = self._rank(
            mode if used is mode else Mode.FTS,
            summaries,
            keyword,
            coverage,
            cosines,
            typical,
            best,
            tag_matches,
            situation,
            situations,
            lifts,
        )
        if invalid:
            notes.append(f"{len(invalid)} stored vectors were malformed and skipped")
        hits, served, unserved = self._served(hits, k)
        if unserved:
            notes.append(
                f"{len(unserved)} skills that ranked higher serve nothing and were passed over"
                f" ({'; '.join(f'{skill_id[:8]}: {why}' for skill_id, why in unserved.items())})"
            )
        return RetrievalResult(
            query,
            mode,
            used,
            self.model_id if used is not Mode.FTS else None,
            hits,
            tuple(notes),
            invalid,
            tuple(served),
            unserved,
        )

    def load(self, result: RetrievalResult) -> list[Skill]:
        """The hits' served skills, in rank order (docs/review.md, "What is served")."""
        return list(result.served)

    def _served(self, ranked: list[Hit], k: int) -> tuple[list[Hit], list[Skill], dict[str, str]]:
        """The best ``k`` of ``ranked`` that serve content, with that content, and why each one
        ranked above them serves nothing. A skill awaiting review serves its last approved
        revision, a never-approved one only with ``serve_unapproved``; a row that does not hold
        a valid skill serves nothing. Read ``k`` at a time: most rows serve."""
        hits: list[Hit] = []
        served: list[Skill] = []
        unserved: dict[str, str] = {}
        start = 0
        while len(hits) < k and start < len(ranked):
            batch = ranked[start : start + k - len(hits)]
            start += len(batch)
            skills, unreadable = self.repository.get_many_valid([hit.skill_id for hit in batch])
            unserved.update(unreadable)  # each reason says what the row lacks, or that it is gone
            by_id = {skill.id: skill for skill in skills}
            for hit in batch:
                skill = by_id.get(hit.skill_id)
                if skill is None:
                    continue
                content = serve(self.repository, skill, serve_unapproved=self.serve_unapproved)
                if isinstance(content, str):
                    unserved[hit.skill_id] = content
                    continue
                hits.append(hit)
                served.append(content)
        return hits, served, unserved

    # --- the parts -----------------------------------------------------------------------------

    def _semantic(
        self,
        query: str,
        domain: str | None,
        game_module: str | None,
        notes: list[str],
        pool: int,
        *,
        also: Iterable[str] = (),
    ) -> tuple[dict[str, float], float, float, dict[str, str]] | None:
        """(cosines by id: the ``pool`` best and those of ``also``, the skills found by their words;
        typical cosine, best cosine, malformed vectors), or None to fall back."""
        if self.provider is None:
            notes.append("no embedding provider is configured; ranked by FTS5 keyword search (D057's fallback)")
            return None
        try:
            answer = self.provider.embed([query])
        except ProviderError as error:
            notes.append(f"the embedding provider failed ({error}); ranked by FTS5 keyword search (D057's fallback)")
            return None
        if answer.ndim != 2 or answer.shape[0] != 1:
            notes.append(
                f"the embedding provider answered {answer.shape[0] if answer.ndim else 0} vectors for one query;"
                " ranked by FTS5 keyword search (D057's fallback)"
            )
            return None
        vector = answer[0]
        index = self.index()
        assert index is not None
        if vector.shape != (index.dimensions,) or not np.all(np.isfinite(vector)):
            notes.append(
                f"the embedding provider answered a vector of shape {vector.shape}, not ({index.dimensions},);"
                " ranked by FTS5 keyword search (D057's fallback)"
            )
            return None
        similarities = index.similarities(vector, domain=domain, game_module=game_module)
        if not len(similarities):
            notes.append(f"no skill in this filter has a vector for {index.model_id}; ranked by FTS5 keyword search")
            return None
        typical = float(similarities.cosines.mean())
        best = float(similarities.cosines.max())
        cosines = dict(similarities.top(pool))
        # a skill that entered the ranking by its words is scored by its own cosine too
        cosines.update(similarities.of(skill_id for skill_id in also if skill_id not in cosines))
        return cosines, typical, best, dict(index.invalid)

    def _rank(
        self,
        mode: Mode,
        summaries: dict[str, SkillSummary],
        keyword: dict[str, float],
        coverage: dict[str, float],
        cosines: dict[str, float],
        typical: float,
        best_cosine: float,
        tag_matches: dict[str, int],
        situation: SituationSignature | None,
        situations: dict[str, SituationSignature],
        lifts: dict[str, float],
    ) -> list[Hit]:
        best_bm25 = max(keyword.values(), default=0.0)
        best_tags = max(tag_matches.values(), default=0)
        rrf = (
            ranking.reciprocal_rank_fusion(
                sorted(keyword, key=lambda i: -keyword[i]), sorted(cosines, key=lambda i: -cosines[i])
            )
            if mode is Mode.RRF
            else {}
        )
        hits = []
        for skill_id, summary in summaries.items():
            if mode is Mode.TAGS and skill_id not in tag_matches:
                continue
            bm25 = keyword.get(skill_id)
            cosine = cosines.get(skill_id)
            fts = (
                ranking.keyword_relevance(bm25, best_bm25, coverage.get(skill_id, 1.0 if bm25 else 0.0))
                if mode in (Mode.HYBRID, Mode.FTS, Mode.RRF)
                else None
            )
            # A skill without a vector for the model (not embedded yet) has no semantic relevance
            # (0), as one matched by meaning alone has no keyword relevance.
            semantic = (
                ranking.semantic_relevance(cosine, typical, best_cosine)
                if mode in (Mode.HYBRID, Mode.SEMANTIC, Mode.RRF)
                else None
            )
            tags = tag_matches[skill_id] / best_tags if mode is Mode.TAGS and best_tags else None
            fit = None
            if situation is not None:
                own = situations.get(skill_id)
                fit = ranking.situation_similarity(situation, own) if own is not None else ranking.NEUTRAL_SITUATION
            if mode is Mode.HYBRID:
                relevance = ranking.with_situation(ranking.fuse(fts, semantic), fit)
            elif mode is Mode.FTS:
                relevance = ranking.with_situation(fts or 0.0, fit)
            elif mode is Mode.SEMANTIC:
                relevance = ranking.with_situation(semantic or 0.0, fit)
            elif mode is Mode.TAGS:
                relevance = ranking.with_situation(tags or 0.0, fit)
            else:
                relevance = rrf.get(skill_id, 0.0)
            evidence = _evidence(summary)
            quality = ranking.evidence_quality(evidence)
            factor = ranking.evidence_factor(quality) if mode is not Mode.RRF else 1.0
            lift = lifts.get(skill_id)
            by_lift = ranking.lift_factor(lift) if lift is not None else 1.0
            final = relevance * factor * by_lift
            if relevance <= 0.0:
                continue  # matched nothing that counts in this mode
            hits.append(
                Hit(
                    skill_id,
                    summary.name,
                    summary.domain,
                    summary.game_module,
                    summary.confidence,
                    evidence.games,
                    evidence.success_rate,
                    ScoreBreakdown(
                        fts, bm25, semantic, cosine, fit, tags, relevance, quality, factor, lift, by_lift, final
                    ),
                )
            )
        hits.sort(key=lambda h: (-h.score.final, h.name.casefold(), h.skill_id))
        return hits

    def _lifts(self, ids: list[str]) -> dict[str, float]:
        """Each skill's latest lift's conservative bound, if it was measured with the current body
        (a lift earned by another body says nothing about this one). Few skills have one, so only
        those are loaded."""
        records = PairedRuns(self.repository.database).latest_lifts(ids)
        if not records:
            return {}
        skills, _unreadable = self.repository.get_many_valid(list(records))
        return {
            skill.id: ranking.conservative_lift(records[skill.id].low, records[skill.id].high)
            for skill in skills
            if records[skill.id].pairs and records[skill.id].body_hash == body_hash(skill)
        }

    def _with_role(self, summaries: dict[str, SkillSummary], role: str) -> dict[str, SkillSummary]:
        """Seed 004's role filter: keep skills whose SKILL.md ``roles`` include the role; a skill that
        declares no roles serves every role."""
        wanted = role.strip().casefold()
        extras = self.repository.extras.many(list(summaries))
        kept = {}
        for skill_id, summary in summaries.items():
            roles = skill_roles(extras[skill_id].frontmatter if skill_id in extras else {})
            if not roles or wanted in roles:
                kept[skill_id] = summary
        return kept

    def _situations(self, ids: list[str]) -> dict[str, SituationSignature]:
        out = {}
        for skill_id, body_json in self.repository.body_json_many(ids).items():
            try:
                body = parse_body_json(body_json)
            except (ValidationError, RecursionError):
                continue  # a malformed engine row: no situation signal, not a failure
            if isinstance(body, StrategicPattern):
                out[skill_id] = body.situation
        return out


def skill_roles(frontmatter: object) -> set[str]:
    """The roles a SKILL.md frontmatter declares (seed 004), case-folded. The importer keeps keys
    the SKILL.md spec lacks under ``metadata``, as text (a JSON list, or words); a ``roles`` key
    at the top is read too."""
    if not isinstance(frontmatter, dict):
        return set()
    raw = frontmatter.get("roles")
    metadata = frontmatter.get("metadata")
    if raw is None and isinstance(metadata, dict):
        raw = metadata.get("roles")
    if isinstance(raw, str):
        try:
            decoded = json.loads(raw)
        except ValueError:
            decoded = None
        raw = decoded if isinstance(decoded, list) else re.split(r"[,\s]+", raw)
    if not isinstance(raw, list):
        return set()
    return {item.strip().casefold() for item in raw if isinstance(item, str) and item.strip()}


def _tag_overlap(tags: Sequence[str], words: set[str]) -> int:
    """How many of a skill's tags the query names: a tag counts when all its words are in the
    query (``anti-air`` needs "anti" and "air"), a plural matching its singular."""
    stems = {_stem(word) for word in words}
    count = 0
    for tag in tags:
        parts = [_stem(part) for part in re.findall(r"\w+", tag.lower())]
        if parts and all(part in stems for part in parts):
            count += 1
    return count


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _evidence(summary: SkillSummary) -> ranking.Evidence:
    """Quality figures from a row an engine may have written badly: unusable values count as no
    evidence at all (a rate that cannot be read says nothing about the games it claims)."""
    games = summary.verification_count
    rate = summary.success_rate
    if isinstance(games, bool) or not isinstance(games, int) or games <= 0:
        return ranking.Evidence(0, 0.0)
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not math.isfinite(rate) or not 0 <= rate <= 1:
        return ranking.Evidence(0, 0.0)
    rating = summary.average_rating
    if isinstance(rating, bool) or not isinstance(rating, int | float) or not math.isfinite(rating):
        rating = None  # unusable: no rating
    return ranking.Evidence(games, float(rate), None if rating is None else float(rating))


def _domain_value(domain: Domain | str | None) -> str | None:
    if domain is None or domain == "":
        return None
    if isinstance(domain, Domain):
        return domain.value
    return Domain.parse(domain).value


def result_to_json(result: RetrievalResult) -> dict[str, object]:
    """The stable JSON form (docs/cli.md), without the context (the CLI adds it)."""
    return {
        "query": result.query,
        "mode": result.mode.value,
        "used_mode": result.used.value,
        "model_id": result.model_id,
        "notes": list(result.notes),
        "results": [
            {
                "id": hit.skill_id,
                "name": hit.name,
                "rank": rank,
                "domain": hit.domain,
                "game_module": hit.game_module,
                "confidence": hit.confidence,
                "verification_count": hit.verification_count,
                "success_rate": round(hit.success_rate, 6),
                "score": round(hit.score.final, 6),
                **hit.score.as_dict(),
                "breakdown": hit.score.as_dict(),
            }
            for rank, hit in enumerate(result.hits, start=1)
        ],
        "invalid_vectors": [{"id": key, "reason": value} for key, value in sorted(result.invalid_vectors.items())],
        "unserved": [{"id": key, "reason": value} for key, value in result.unserved.items()],
    }


__all__ = [
    "CANDIDATES",
    "MAX_K",
    "Hit",
    "Mode",
    "RetrievalResult",
    "Retriever",
    "ScoreBreakdown",
    "result_to_json",
    "skill_roles",
]
