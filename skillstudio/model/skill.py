"""The skill, as D057 defines it, plus ``created_by`` (seed 001) and an ``Instructions`` body.

Values are immutable; edit with :func:`dataclasses.replace`. Parsing untrusted data into these
types is :mod:`skillstudio.model.document`'s job; the constructors trust their arguments.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from skillstudio.model.enums import (
    BodyKind,
    BuildFocus,
    Confidence,
    Domain,
    EconomyState,
    GamePhase,
    ReviewState,
    SourceKind,
    TargetType,
    ThreatLevel,
    TimePressure,
)

# --- StrategicPattern (D057 + D044) -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SituationSignature:
    game_phase: GamePhase
    economy_state: EconomyState
    # (unit type, share of the army in percent 0..100), most common first; see docs/formats.md.
    army_composition: tuple[tuple[str, int], ...] = ()
    enemy_composition_estimate: tuple[tuple[str, int], ...] = ()
    map_control: float = 0.5  # 0.0..1.0
    threat_level: ThreatLevel = ThreatLevel.LOW
    active_tech: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class WorldPos:
    x: int
    y: int
    z: int = 0


@dataclass(frozen=True, slots=True)
class StrategicTarget:
    target_type: TargetType
    priority: int  # 1..10
    description: str = ""
    position: WorldPos | None = None


@dataclass(frozen=True, slots=True)
class EconomicGuidance:
    expand: bool = False
    harvester_target: int = 4  # u8
    sell_structures: tuple[str, ...] = ()
    priority_builds: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RiskAssessment:
    threat_level: ThreatLevel = ThreatLevel.LOW
    time_pressure: TimePressure = TimePressure.NONE
    expected_attack_direction: str | None = None
    recommended_defense: str | None = None


@dataclass(frozen=True, slots=True)
class StrategicPlan:
    build_focus: BuildFocus
    priority_targets: tuple[StrategicTarget, ...] = ()
    economic_guidance: EconomicGuidance = EconomicGuidance()
    risk_assessment: RiskAssessment = RiskAssessment()
    confidence: int = 500  # D044 fixed point, 0..1000
    reasoning: str = ""


@dataclass(frozen=True, slots=True)
class StrategicPattern:
    situation: SituationSignature
    plan: StrategicPlan
    # D041 set_parameter() calls, in order; names are free (each AI publishes its own).
    parameter_bindings: tuple[tuple[str, int], ...] = ()

    kind = BodyKind.STRATEGIC_PATTERN


# --- EncounterPattern (D057 + D016; SceneInstance and MissionStructureHints are ours) -----------


@dataclass(frozen=True, slots=True)
class SceneInstance:
    template: str  # a scene template id, e.g. "ambush"
    values: dict[str, Any] = field(default_factory=dict)  # parameter name -> JSON value


@dataclass(frozen=True, slots=True)
class MissionStructureHints:
    mission_type: str | None = None  # e.g. "defend", "escort", "assault"
    player_faction: str | None = None
    difficulty: str | None = None  # sandbox|easy|normal|hard|brutal or a Workshop difficulty id
    estimated_minutes: int | None = None
    objectives: tuple[str, ...] = ()
    outcomes: tuple[str, ...] = ()  # named outcomes, e.g. ("victory", "defeat")
    notes: str = ""


@dataclass(frozen=True, slots=True)
class EncounterPattern:
    scene_composition: tuple[SceneInstance, ...]
    mission_structure: MissionStructureHints = MissionStructureHints()

    kind = BodyKind.ENCOUNTER_PATTERN


# --- VerifiedExample (D057) and Instructions (seeds 001 and 004) --------------------------------


@dataclass(frozen=True, slots=True)
class VerifiedExample:
    prompt_context: str
    response: str

    kind = BodyKind.VERIFIED_EXAMPLE


@dataclass(frozen=True, slots=True)
class Instructions:
    instructions: str  # markdown, injected into an agent's system prompt
    tools: tuple[str, ...] = ()  # empty means every tool
    model: str | None = None
    references: tuple[str, ...] = ()  # skill ids this builds on

    kind = BodyKind.INSTRUCTIONS


SkillBody = StrategicPattern | EncounterPattern | VerifiedExample | Instructions

# Which bodies each domain may carry; a StrategicPattern is meaningless to mission generation.
BODIES_BY_DOMAIN: dict[Domain, frozenset[BodyKind]] = {
    Domain.AI_STRATEGY: frozenset({BodyKind.STRATEGIC_PATTERN, BodyKind.VERIFIED_EXAMPLE, BodyKind.INSTRUCTIONS}),
    Domain.CONTENT_GENERATION: frozenset(
        {BodyKind.ENCOUNTER_PATTERN, BodyKind.VERIFIED_EXAMPLE, BodyKind.INSTRUCTIONS}
    ),
}

# --- provenance and quality ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Source:
    """D057's SkillSource: a kind plus the details two of the kinds carry."""

    kind: SourceKind
    source_id: str | None = None  # workshop: publisher/name@version
    author: str | None = None  # workshop
    original_id: str | None = None  # human_refined: the skill this refines

    @classmethod
    def llm_discovered(cls) -> Source:
        return cls(SourceKind.LLM_DISCOVERED)

    @classmethod
    def hand_authored(cls) -> Source:
        return cls(SourceKind.HAND_AUTHORED)

    @classmethod
    def workshop(cls, source_id: str, author: str) -> Source:
        return cls(SourceKind.WORKSHOP, source_id=source_id, author=author)

    @classmethod
    def human_refined(cls, original_id: str) -> Source:
        return cls(SourceKind.HUMAN_REFINED, original_id=original_id)


@dataclass(frozen=True, slots=True)
class Provenance:
    source: Source
    game_module: str  # "ra1", "td", ...
    engine_version: str = ""
    model_id: str | None = None  # which LLM produced it


@dataclass(frozen=True, slots=True)
class Quality:
    verification_count: int = 0
    success_rate: float = 0.0  # wins / uses for AI skills, completion rate for missions
    average_rating: float | None = None  # 1..5, content skills
    confidence: Confidence = Confidence.TENTATIVE
    last_verified: str | None = None


# --- the skill ----------------------------------------------------------------------------------


def new_skill_id() -> str:
    return str(uuid.uuid4())


@dataclass(frozen=True, slots=True)
class Skill:
    id: str
    domain: Domain
    name: str
    description: str
    body: SkillBody
    provenance: Provenance
    created_at: str
    quality: Quality = Quality()
    tags: tuple[str, ...] = ()
    composable_with: tuple[str, ...] = ()
    last_used: str | None = None
    use_count: int = 0
    created_by: str = "unknown"  # user or agent id (seed 001's CreatedBy)
    # Library-local annotations: not part of what a skill means, so exports leave them out.
    review_state: ReviewState | None = None
    # The store's content version when this copy was read (0: never stored); an update based on an
    # older version is refused as a conflict.
    version: int = 0

    @property
    def body_kind(self) -> BodyKind:
        return self.body.kind

    @property
    def game_module(self) -> str:
        return self.provenance.game_module

    @property
    def source_kind(self) -> SourceKind:
        return self.provenance.source.kind

    @property
    def confidence(self) -> Confidence:
        return self.quality.confidence
