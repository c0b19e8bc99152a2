"""Plans and skills for the engine tests."""

from __future__ import annotations

from skillstudio.model import (
    BuildFocus,
    Domain,
    EconomicGuidance,
    EconomyState,
    GamePhase,
    Provenance,
    RiskAssessment,
    SituationSignature,
    Skill,
    Source,
    StrategicPattern,
    StrategicPlan,
    StrategicTarget,
    TargetType,
    ThreatLevel,
    TimePressure,
)


def pattern(
    focus: BuildFocus = BuildFocus.MIXED,
    *,
    expand: bool = True,
    harvesters: int = 5,
    threat: ThreatLevel = ThreatLevel.MEDIUM,
    pressure: TimePressure = TimePressure.NONE,
    targets: tuple[StrategicTarget, ...] = (),
    bindings: tuple[tuple[str, int], ...] = (),
    priority_builds: tuple[str, ...] = (),
) -> StrategicPattern:
    return StrategicPattern(
        situation=SituationSignature(GamePhase.EARLY, EconomyState.EVEN),
        plan=StrategicPlan(
            build_focus=focus,
            priority_targets=targets,
            economic_guidance=EconomicGuidance(
                expand=expand, harvester_target=harvesters, priority_builds=priority_builds
            ),
            risk_assessment=RiskAssessment(threat_level=threat, time_pressure=pressure),
        ),
        parameter_bindings=bindings,
    )


SENSIBLE = pattern()  # Mixed, expand, 5 harvesters, medium threat: a plain, reasonable plan


def skill(body: StrategicPattern = SENSIBLE, *, skill_id: str = "engine-test-skill", module: str = "ra1") -> Skill:
    return Skill(
        id=skill_id,
        domain=Domain.AI_STRATEGY,
        name="Engine test plan",
        description="A plan used by the engine tests",
        body=body,
        provenance=Provenance(Source.hand_authored(), module, engine_version=""),
        created_at="2025-01-01T00:00:00.000Z",
    )


def attack(priority: int) -> StrategicTarget:
    return StrategicTarget(TargetType.ATTACK, priority, "enemy base")
