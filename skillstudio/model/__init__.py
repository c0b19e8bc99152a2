"""The skill model: D057's types, their canonical serialization, and validation of untrusted data.

Qt-free and database-free; everything else in SkillStudio builds on it.
"""

from skillstudio.model.document import (
    body_to_json,
    body_to_serde,
    parse_body,
    parse_body_json,
    parse_skill,
    parse_situation,
    parse_skill_with_notes,
    situation_to_serde,
    skill_to_document,
)
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
from skillstudio.model.skill import (
    EconomicGuidance,
    EncounterPattern,
    Instructions,
    MissionStructureHints,
    Provenance,
    Quality,
    RiskAssessment,
    SceneInstance,
    SituationSignature,
    Skill,
    SkillBody,
    Source,
    StrategicPattern,
    StrategicPlan,
    StrategicTarget,
    VerifiedExample,
    WorldPos,
    new_skill_id,
)
from skillstudio.model.validation import Issue, ValidationError, normalize_timestamp, utc_now

__all__ = [
    "BodyKind", "BuildFocus", "Confidence", "Domain", "EconomicGuidance", "EconomyState",
    "EncounterPattern", "GamePhase", "Instructions", "Issue", "MissionStructureHints",
    "Provenance", "Quality", "ReviewState", "RiskAssessment", "SceneInstance",
    "SituationSignature", "Skill", "SkillBody", "Source", "SourceKind", "StrategicPattern",
    "StrategicPlan", "StrategicTarget", "TargetType", "ThreatLevel", "TimePressure",
    "ValidationError", "VerifiedExample", "WorldPos", "body_to_json", "body_to_serde",
    "new_skill_id", "normalize_timestamp", "parse_body", "parse_body_json", "parse_skill",
    "parse_skill_with_notes", "parse_situation", "situation_to_serde", "skill_to_document", "utc_now",
]  # fmt: skip
