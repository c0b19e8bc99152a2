"""Small, valid skills for tests, with any field overridable."""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

from skillstudio.model import (
    BuildFocus,
    Confidence,
    Domain,
    EconomicGuidance,
    EconomyState,
    EncounterPattern,
    GamePhase,
    Instructions,
    MissionStructureHints,
    Provenance,
    Quality,
    RiskAssessment,
    SceneInstance,
    SituationSignature,
    Skill,
    Source,
    StrategicPattern,
    StrategicPlan,
    StrategicTarget,
    TargetType,
    ThreatLevel,
    TimePressure,
    VerifiedExample,
)

_counter = itertools.count(1)


def _id() -> str:
    return f"00000000-0000-4000-8000-{next(_counter):012d}"


def strategic_body(focus: BuildFocus = BuildFocus.ANTI_ARMOR) -> StrategicPattern:
    return StrategicPattern(
        situation=SituationSignature(
            game_phase=GamePhase.EARLY,
            economy_state=EconomyState.EVEN,
            army_composition=(("rifle_infantry", 60), ("light_tank", 40)),
            enemy_composition_estimate=(("heavy_tank", 70), ("rifle_infantry", 30)),
            map_control=0.4,
            threat_level=ThreatLevel.MEDIUM,
            active_tech=("tier1",),
        ),
        plan=StrategicPlan(
            build_focus=focus,
            priority_targets=(StrategicTarget(TargetType.DEFEND, 8, "hold the ore field"),),
            economic_guidance=EconomicGuidance(expand=True, harvester_target=4, priority_builds=("war_factory",)),
            risk_assessment=RiskAssessment(ThreatLevel.HIGH, TimePressure.URGENT, "north", "pillboxes"),
            confidence=700,
            reasoning="Armour is coming early; rockets and mines stop it cheaply.",
        ),
        parameter_bindings=(("aggression", 40), ("tech_priority_armor", 70)),
    )


def ai_skill(**overrides: Any) -> Skill:
    skill = Skill(
        id=_id(),
        domain=Domain.AI_STRATEGY,
        name="Rocket screen against early armour",
        description="Mass rocket infantry behind pillboxes when the enemy opens with heavy tanks.",
        body=strategic_body(),
        provenance=Provenance(Source.llm_discovered(), "ra1", "0.5.0", "model-x"),
        created_at="2026-03-01T10:00:00.000Z",
        quality=Quality(5, 0.6, None, Confidence.TENTATIVE, "2026-03-02T10:00:00.000Z"),
        tags=("anti-armor", "early-game"),
        created_by="agent:orchestrator",
    )
    return replace(skill, **overrides)


def content_skill(**overrides: Any) -> Skill:
    skill = Skill(
        id=_id(),
        domain=Domain.CONTENT_GENERATION,
        name="Bridge ambush into extraction",
        description="An ambush at a bridge, then a timed extraction under pressure.",
        body=EncounterPattern(
            scene_composition=(
                SceneInstance("ambush", {"location": "bridge_north", "delay": 30}),
                SceneInstance("extraction", {"pickup_zone": "lz_alpha", "transport_type": "chinook"}),
            ),
            mission_structure=MissionStructureHints(
                mission_type="escort", difficulty="normal", outcomes=("victory", "defeat")
            ),
        ),
        provenance=Provenance(Source.hand_authored(), "td", "0.5.0"),
        created_at="2026-02-01T10:00:00.000Z",
        tags=("ambush", "bridge"),
        created_by="designer",
    )
    return replace(skill, **overrides)


def example_skill(**overrides: Any) -> Skill:
    skill = Skill(
        id=_id(),
        domain=Domain.AI_STRATEGY,
        name="Few-shot naval answer",
        description="A verified prompt and reply for naval harassment.",
        body=VerifiedExample("Enemy gunboats raid the shore.", '{"build_focus": "Naval"}'),
        provenance=Provenance(Source.workshop("kessler/naval@1.0.0", "kessler"), "ra1", "0.5.0"),
        created_at="2026-04-01T10:00:00.000Z",
        tags=("naval",),
    )
    return replace(skill, **overrides)


def instructions_skill(**overrides: Any) -> Skill:
    skill = Skill(
        id=_id(),
        domain=Domain.CONTENT_GENERATION,
        name="Wave balancing checklist",
        description="How a mission generator should size defend-position waves.",
        body=Instructions("# Waves\n\nKeep the first wave small.", ("validate_mission",), None, ()),
        provenance=Provenance(Source.hand_authored(), "ra1", "0.5.0"),
        created_at="2026-05-01T10:00:00.000Z",
        tags=(),
        created_by="designer",
    )
    return replace(skill, **overrides)
