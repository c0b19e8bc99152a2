"""The one serializer of a skill to plain data (dicts for JSON/YAML) and its untrusted parser.

Canonical forms (docs/formats.md):

* ``body`` is what D057's ``body_json`` column holds: serde's default JSON of the Rust
  ``SkillBody`` enum, externally tagged (``{"StrategicPattern": {...}}``) with PascalCase enum
  variants and ``(String, i32)`` tuples as two-element arrays;
* everything else is a *skill document*: snake_case strings as D057's SQL spells them.

The parser accepts more than it writes: internally tagged bodies (``{"type": ...}``), any
spelling of an enum, the flat row shape of D057's ``skills`` table, serde's own shape of
``Skill``, and the string-typed [R] LLM wire schema of StrategicPlan. What it converted is
reported as notes; what it cannot read is reported as issues naming the field path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

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
    BODIES_BY_DOMAIN,
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
from skillstudio.model.validation import (
    MAX_DESCRIPTION,
    MAX_ID,
    MAX_LONG_TEXT,
    MAX_NAME,
    MAX_SHORT_TEXT,
    MAX_TAG,
    MAX_TAGS,
    Checker,
    Issue,
    ValidationError,
    describe,
    join_path,
    utc_now,
)

I32 = (-(2**31), 2**31 - 1)
U8_MAX = 255
U32_MAX = 2**32 - 1
GAME_MODULE_ALIASES = {"red_alert": "ra1", "redalert": "ra1", "ra": "ra1", "tiberian_dawn": "td"}
_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@/+-]*$")
_MODULE_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")


# ================================================================================================
# Writing
# ================================================================================================


def body_to_serde(body: SkillBody) -> dict[str, Any]:
    """The body as D057's ``body_json`` holds it."""
    match body:
        case StrategicPattern(situation=situation, plan=plan, parameter_bindings=bindings):
            inner: dict[str, Any] = {
                "situation": _situation_to_serde(situation),
                "plan": _plan_to_serde(plan),
                "parameter_bindings": [[name, value] for name, value in bindings],
            }
        case EncounterPattern(scene_composition=scenes, mission_structure=hints):
            inner = {
                "scene_composition": [{"template": scene.template, "values": dict(scene.values)} for scene in scenes],
                "mission_structure": {
                    "mission_type": hints.mission_type,
                    "player_faction": hints.player_faction,
                    "difficulty": hints.difficulty,
                    "estimated_minutes": hints.estimated_minutes,
                    "objectives": list(hints.objectives),
                    "outcomes": list(hints.outcomes),
                    "notes": hints.notes,
                },
            }
        case VerifiedExample(prompt_context=prompt_context, response=response):
            inner = {"prompt_context": prompt_context, "response": response}
        case Instructions(instructions=text, tools=tools, model=model, references=references):
            inner = {
                "instructions": text,
                "tools": list(tools),
                "model": model,
                "references": list(references),
            }
        case _:  # pragma: no cover - the union is closed
            raise TypeError(f"not a skill body: {body!r}")
    return {body.kind.serde: inner}


def body_to_json(body: SkillBody) -> str:
    """Compact, key-ordered JSON: equal bodies give equal text (and equal hashes)."""
    return serde_body_to_json(body_to_serde(body))


def serde_body_to_json(serde: Mapping[str, Any]) -> str:
    """:func:`body_to_json` of a body already in serde form (a skill document's ``body``)."""
    return json.dumps(serde, ensure_ascii=False, separators=(",", ":"))


def _situation_to_serde(situation: SituationSignature) -> dict[str, Any]:
    return {
        "game_phase": situation.game_phase.serde,
        "economy_state": situation.economy_state.serde,
        "army_composition": [[unit, share] for unit, share in situation.army_composition],
        "enemy_composition_estimate": [[unit, share] for unit, share in situation.enemy_composition_estimate],
        "map_control": situation.map_control,
        "threat_level": situation.threat_level.serde,
        "active_tech": list(situation.active_tech),
    }


def _plan_to_serde(plan: StrategicPlan) -> dict[str, Any]:
    guidance = plan.economic_guidance
    risk = plan.risk_assessment
    return {
        "priority_targets": [
            {
                "target_type": target.target_type.serde,
                "position": None
                if target.position is None
                else {"x": target.position.x, "y": target.position.y, "z": target.position.z},
                "priority": target.priority,
                "description": target.description,
            }
            for target in plan.priority_targets
        ],
        "build_focus": plan.build_focus.serde,
        "economic_guidance": {
            "expand": guidance.expand,
            "harvester_target": guidance.harvester_target,
            "sell_structures": list(guidance.sell_structures),
            "priority_builds": list(guidance.priority_builds),
        },
        "risk_assessment": {
            "threat_level": risk.threat_level.serde,
            "expected_attack_direction": risk.expected_attack_direction,
            "recommended_defense": risk.recommended_defense,
            "time_pressure": risk.time_pressure.serde,
        },
        "confidence": plan.confidence,
        "reasoning": plan.reasoning,
    }


def source_to_document(source: Source) -> dict[str, Any]:
    out: dict[str, Any] = {"source": source.kind.value}
    if source.kind is SourceKind.WORKSHOP:
        out["source_id"] = source.source_id
        out["author"] = source.author
    elif source.kind is SourceKind.HUMAN_REFINED:
        out["original_id"] = source.original_id
    return out


def skill_to_document(skill: Skill, *, local: bool = True) -> dict[str, Any]:
    """The skill as a plain, JSON/YAML-ready mapping in canonical form.

    ``local=False`` leaves out what belongs to this library only (review state, version), as
    anything that leaves the library should.
    """
    provenance = skill.provenance
    quality = skill.quality
    document: dict[str, Any] = {
        "id": skill.id,
        "domain": skill.domain.value,
        "name": skill.name,
        "description": skill.description,
        "tags": list(skill.tags),
        "created_by": skill.created_by,
        "created_at": skill.created_at,
        "last_used": skill.last_used,
        "use_count": skill.use_count,
        "provenance": {
            **source_to_document(provenance.source),
            "game_module": provenance.game_module,
            "engine_version": provenance.engine_version,
            "model_id": provenance.model_id,
        },
        "quality": {
            "verification_count": quality.verification_count,
            "success_rate": quality.success_rate,
            "average_rating": quality.average_rating,
            "confidence": quality.confidence.value,
            "last_verified": quality.last_verified,
        },
        "composable_with": list(skill.composable_with),
        "body": body_to_serde(skill.body),
    }
    if local:
        document["review_state"] = skill.review_state.value if skill.review_state else None
        document["version"] = skill.version
    return document


# ================================================================================================
# Reading
# ================================================================================================


def parse_skill(data: object, *, context: str = "") -> Skill:
    """A :class:`Skill` from untrusted data, or :class:`ValidationError` naming every problem."""
    skill, _notes = parse_skill_with_notes(data, context=context)
    return skill


def parse_skill_with_notes(data: object, *, context: str = "") -> tuple[Skill, list[Issue]]:
    """Like :func:`parse_skill`, also returning what was read from a non-canonical spelling."""
    check = Checker()
    skill = _read_skill(check, data)
    check.raise_if_failed(context)
    assert skill is not None
    return skill, check.notes


def parse_body(data: object, *, path: str = "body") -> SkillBody:
    check = Checker()
    body = _read_body(check, data, path)
    check.raise_if_failed()
    assert body is not None
    return body


def parse_situation(data: object, *, path: str = "situation") -> SituationSignature:
    """A SituationSignature from untrusted data (a retrieval query's situation, say)."""
    check = Checker()
    situation = _read_situation(check, data, path)
    check.raise_if_failed()
    assert situation is not None
    return situation


def situation_to_serde(situation: SituationSignature) -> dict[str, Any]:
    """The situation as it is written inside a StrategicPattern body."""
    return _situation_to_serde(situation)


def parse_body_json(text: str, *, path: str = "body_json") -> SkillBody:
    try:
        data = json.loads(text)
    except (TypeError, ValueError) as error:
        raise ValidationError([Issue(path, f"is not valid JSON ({error})")]) from None
    return parse_body(data, path=path)


def _first(mapping: Mapping[str, Any], *keys: str, default: Any = None) -> Any:
    for key in keys:
        if key in mapping:
            return mapping[key]
    return default


_SKILL_KEYS = {
    "id",
    "domain",
    "name",
    "description",
    "tags",
    "created_by",
    "created_at",
    "last_used",
    "use_count",
    "provenance",
    "quality",
    "composable_with",
    "body",
    "body_json",
    "review_state",
    "version",
    "source",
    "source_id",
    "author",
    "original_id",
    "game_module",
    "engine_version",
    "model_id",
    "verification_count",
    "success_rate",
    "average_rating",
    "confidence",
    "last_verified",
    "description_embedding",
    "rowid",
}


def _read_skill(check: Checker, data: object) -> Skill | None:
    doc = check.mapping(data, "")
    if doc is None:
        return None
    for key in doc:
        if key not in _SKILL_KEYS:
            check.note(key, "unknown field, ignored")

    if "id" in doc:
        skill_id = _read_id(check, doc["id"], "id")
    else:
        skill_id = new_skill_id()
        check.note("id", f"missing, assigned {skill_id}")
    domain = check.enum(Domain, doc.get("domain"), "domain") if "domain" in doc else None
    if "domain" not in doc:
        check.fail("domain", f"missing (one of {Domain.choices()})")
    name = check.text(doc.get("name"), "name", max_len=MAX_NAME, allow_empty=False, strip=True)
    description = check.text(doc.get("description", ""), "description", max_len=MAX_DESCRIPTION)
    tags = _read_tags(check, doc.get("tags", []), "tags")
    created_by = check.text(doc.get("created_by", "unknown"), "created_by", max_len=MAX_SHORT_TEXT)
    if "created_at" in doc:
        created_at = check.timestamp(doc["created_at"], "created_at")
    else:
        created_at = utc_now()
        check.note("created_at", "missing, set to now")
    last_used = check.optional_timestamp(doc.get("last_used"), "last_used")
    use_count = check.integer(doc.get("use_count", 0), "use_count", 0, U32_MAX)

    provenance = _read_provenance(check, doc)
    quality = _read_quality(check, doc)
    composable = check.each(doc.get("composable_with", []), "composable_with", lambda v, p: _read_id(check, v, p))
    review_state = (
        None if doc.get("review_state") is None else check.enum(ReviewState, doc["review_state"], "review_state")
    )
    version = check.integer(doc.get("version", 0), "version", 0, 2**62)

    if "body" in doc:
        body = _read_body(check, doc["body"], "body")
    elif "body_json" in doc:
        decoded = _decode_json(check, doc["body_json"], "body_json")
        body = None if decoded is None else _read_body(check, decoded, "body_json")
    else:
        body = None
        check.fail("body", "missing")

    if domain is not None and body is not None and body.kind not in BODIES_BY_DOMAIN[domain]:
        check.fail("body", f"a {body.kind.serde} body does not belong to the {domain.value} domain")
    if skill_id is not None and skill_id in composable:
        check.fail("composable_with", "a skill cannot be composed with itself")
    # A reader answers None only after recording an issue; the None tests are for the type checker.
    if (
        check.issues
        or skill_id is None
        or domain is None
        or name is None
        or description is None
        or body is None
        or provenance is None
        or quality is None
        or created_at is None
        or use_count is None
        or created_by is None
        or version is None
    ):
        return None
    return Skill(
        id=skill_id,
        domain=domain,
        name=name,
        description=description,
        body=body,
        provenance=provenance,
        quality=quality,
        tags=tags,
        composable_with=tuple(dict.fromkeys(composable)),
        created_at=created_at,
        last_used=last_used,
        use_count=use_count,
        created_by=created_by,
        review_state=review_state,
        version=version,
    )


def _decode_json(check: Checker, value: object, path: str) -> object:
    if not isinstance(value, str):
        return value  # already decoded
    try:
        return json.loads(value)
    except ValueError as error:
        check.fail(path, f"is not valid JSON ({error})")
        return None


def _read_id(check: Checker, value: object, path: str) -> str | None:
    text = check.text(value, path, max_len=MAX_ID, allow_empty=False)
    if text is not None and not _ID_PATTERN.match(text):
        check.fail(path, f"{describe(text)} is not a valid skill id (letters, digits and ._:@/+-)")
        return None
    return text


def _read_tags(check: Checker, value: object, path: str) -> tuple[str, ...]:
    if isinstance(value, str):  # D057 stores tags as a JSON array in a TEXT column
        value = _decode_json(check, value, path)
        if value is None:
            return ()
    tags = check.each(
        value,
        path,
        lambda v, p: check.text(v, p, max_len=MAX_TAG, allow_empty=False, strip=True),
        max_items=MAX_TAGS,
    )
    return tuple(dict.fromkeys(tags))


def _read_module(check: Checker, value: object, path: str) -> str | None:
    text = check.text(value, path, max_len=32, allow_empty=False, strip=True)
    if text is None:
        return None
    folded = text.lower()
    if folded in GAME_MODULE_ALIASES:
        check.note(path, f"read {text!r} as {GAME_MODULE_ALIASES[folded]!r}")
        return GAME_MODULE_ALIASES[folded]
    if not _MODULE_PATTERN.match(folded):
        check.fail(path, f"{describe(text)} is not a game module id (like ra1, td)")
        return None
    return folded


def _read_source(check: Checker, holder: Mapping[str, Any], path: str) -> Source | None:
    raw = holder.get("source")
    details: Mapping[str, Any] = holder
    if isinstance(raw, Mapping):  # serde: {"Workshop": {"source_id": ..., "author": ...}}
        if len(raw) != 1:
            check.fail(join_path(path, "source"), "expected one source variant")
            return None
        ((raw, inner),) = raw.items()
        details = check.mapping(inner, join_path(path, f"source.{raw}")) or {}
    if raw is None:
        check.fail(join_path(path, "source"), f"missing (one of {SourceKind.choices()})")
        return None
    kind = check.enum(SourceKind, raw, join_path(path, "source"))
    # D057's skills table has no columns for these details, so a row an engine wrote has none:
    # absent or null means unknown (None), never invented. Given, they must be valid.
    if kind is SourceKind.WORKSHOP:
        issues = len(check.issues)
        source_id = _optional_detail(check, details.get("source_id"), join_path(path, "source_id"))
        author = _optional_detail(check, details.get("author"), join_path(path, "author"))
        return Source(kind, source_id=source_id, author=author) if len(check.issues) == issues else None
    if kind is SourceKind.HUMAN_REFINED:
        raw_original = details.get("original_id")
        if raw_original is None:
            return Source(kind)
        original = _read_id(check, raw_original, join_path(path, "original_id"))
        return Source.human_refined(original) if original else None
    return Source(kind) if kind else None


def _optional_detail(check: Checker, value: object, path: str) -> str | None:
    """Absent or null: unknown (None). Given: non-empty text, else an issue."""
    return None if value is None else check.text(value, path, allow_empty=False)


def _read_provenance(check: Checker, doc: Mapping[str, Any]) -> Provenance | None:
    path = "provenance" if "provenance" in doc else ""
    holder = check.mapping(doc["provenance"], "provenance") if "provenance" in doc else doc
    if holder is None:
        return None
    source = _read_source(check, holder, path)
    module_path = join_path(path, "game_module")
    if "game_module" not in holder:
        check.fail(module_path, "missing (like ra1 or td)")
        module = None
    else:
        module = _read_module(check, holder["game_module"], module_path)
    engine_version = check.text(holder.get("engine_version") or "", join_path(path, "engine_version"), max_len=64)
    model_id = check.optional_text(holder.get("model_id"), join_path(path, "model_id"))
    if source is None or module is None or engine_version is None:
        return None
    return Provenance(source, module, engine_version, model_id)


def _read_quality(check: Checker, doc: Mapping[str, Any]) -> Quality | None:
    path = "quality" if "quality" in doc else ""
    holder = check.mapping(doc["quality"], "quality") if "quality" in doc else doc
    if holder is None:
        return None
    count = check.integer(holder.get("verification_count", 0), join_path(path, "verification_count"), 0, U32_MAX)
    rate = check.number(holder.get("success_rate", 0.0), join_path(path, "success_rate"), 0.0, 1.0)
    rating = holder.get("average_rating")
    if rating is not None:
        rating = check.number(rating, join_path(path, "average_rating"), 1.0, 5.0)
    confidence = check.enum(Confidence, holder.get("confidence", "tentative"), join_path(path, "confidence"))
    last_verified = check.optional_timestamp(holder.get("last_verified"), join_path(path, "last_verified"))
    if count is None or rate is None or confidence is None:
        return None
    return Quality(count, rate, rating, confidence, last_verified)


# --- bodies -------------------------------------------------------------------------------------


def _read_body(check: Checker, value: object, path: str) -> SkillBody | None:
    data = check.mapping(value, path)
    if data is None:
        return None
    tag = _first(data, "type", "kind")
    if tag is not None:  # internally tagged: {"type": "strategic_pattern", ...fields}
        kind = check.enum(BodyKind, tag, join_path(path, "type"))
        fields: Mapping[str, Any] | None = {key: item for key, item in data.items() if key not in ("type", "kind")}
        inner_path = path
    elif len(data) == 1:  # serde's external tagging: {"StrategicPattern": {...}}
        ((tag, inner),) = data.items()
        kind = check.enum(BodyKind, tag, path)
        inner_path = path  # paths read body.plan..., as users think of the body, not its tag
        fields = check.mapping(inner, inner_path)
    else:
        check.fail(path, f"expected one body variant ({BodyKind.choices()}), got {len(data)} keys")
        return None
    if kind is None or fields is None:
        return None
    reader = {
        BodyKind.STRATEGIC_PATTERN: _read_strategic_pattern,
        BodyKind.ENCOUNTER_PATTERN: _read_encounter_pattern,
        BodyKind.VERIFIED_EXAMPLE: _read_verified_example,
        BodyKind.INSTRUCTIONS: _read_instructions,
    }[kind]
    return reader(check, fields, inner_path)


def _read_strategic_pattern(check: Checker, data: Mapping[str, Any], path: str) -> StrategicPattern | None:
    situation = _read_situation(check, data.get("situation"), join_path(path, "situation"))
    plan = _read_plan(check, data.get("plan"), join_path(path, "plan"))
    bindings = _read_pairs(check, data.get("parameter_bindings", []), join_path(path, "parameter_bindings"), I32)
    if situation is None or plan is None or bindings is None:
        return None
    return StrategicPattern(situation, plan, bindings)


def _read_pairs(
    check: Checker, value: object, path: str, bounds: tuple[int, int]
) -> tuple[tuple[str, int], ...] | None:
    """``Vec<(String, N)>``: [[name, n], ...]; also {name: n} and [{name|unit: , value|share: }]."""
    if isinstance(value, Mapping):
        value = [[key, item] for key, item in value.items()]
    items = check.sequence(value, path)
    if items is None:
        return None
    pairs: list[tuple[str, int]] = []
    for index, item in enumerate(items):
        where = join_path(path, index)
        if isinstance(item, Mapping):
            item = [
                _first(item, "name", "unit", "unit_type", "key"),
                _first(item, "value", "share", "proportion", "count"),
            ]
        if not isinstance(item, list | tuple) or len(item) != 2:
            check.fail(where, f"expected a [name, number] pair, got {describe(item)}")
            continue
        name = check.text(item[0], join_path(where, 0), max_len=64, allow_empty=False)
        number = check.integer(item[1], join_path(where, 1), *bounds)
        if name is not None and number is not None:
            pairs.append((name, number))
    return tuple(pairs)


def _read_situation(check: Checker, value: object, path: str) -> SituationSignature | None:
    data = check.mapping(value, path)
    if data is None:
        return None
    phase = check.enum(GamePhase, data.get("game_phase"), join_path(path, "game_phase"))
    economy = check.enum(EconomyState, data.get("economy_state"), join_path(path, "economy_state"))
    army = _read_pairs(check, data.get("army_composition", []), join_path(path, "army_composition"), (0, U8_MAX))
    enemy = _read_pairs(
        check,
        data.get("enemy_composition_estimate", []),
        join_path(path, "enemy_composition_estimate"),
        (0, U8_MAX),
    )
    control_path = join_path(path, "map_control")
    control = data.get("map_control", 0.5)
    if isinstance(control, int | float) and not isinstance(control, bool) and 1 < control <= 100:
        check.note(control_path, f"read {control} as a percentage ({control / 100:g})")
        control = control / 100
    map_control = check.number(control, control_path, 0.0, 1.0)
    threat = check.enum(ThreatLevel, data.get("threat_level", "low"), join_path(path, "threat_level"))
    tech = check.each(
        data.get("active_tech", []),
        join_path(path, "active_tech"),
        lambda v, p: check.text(v, p, max_len=64, allow_empty=False),
    )
    if phase is None or economy is None or army is None or enemy is None or map_control is None or threat is None:
        return None
    return SituationSignature(phase, economy, army, enemy, map_control, threat, tech)


# [R] wire schema spellings of StrategicPlan (research/llm-generation-schemas.md section 9).
_URGENCY_PRIORITY = {"immediate": 9, "soon": 6, "when_ready": 3, "whenready": 3}
_WIRE_TARGET_TYPES = {"unit_group": "attack", "structure": "attack", "zone": "defend"}
_INCOME_HARVESTERS = {"maximize": 6, "sufficient": 4, "minimal": 2}
_STRUCTURE_FOCUS = {"economy": BuildFocus.ECONOMY, "tech_up": BuildFocus.TECH}


def _read_plan(check: Checker, value: object, path: str) -> StrategicPlan | None:
    data = check.mapping(value, path)
    if data is None:
        return None
    targets = check.each(
        data.get("priority_targets", []),
        join_path(path, "priority_targets"),
        lambda v, p: _read_target(check, v, p),
    )
    extra_builds: tuple[str, ...] = ()
    focus_path = join_path(path, "build_focus")
    raw_focus = data.get("build_focus")
    if isinstance(raw_focus, Mapping):  # wire: {unit_priority, structure_priority, specific_units}
        focus, extra_builds = _read_wire_build_focus(check, raw_focus, focus_path)
    elif raw_focus is None:
        check.fail(focus_path, f"missing (one of {BuildFocus.choices()})")
        focus = None
    else:
        focus = check.enum(BuildFocus, raw_focus, focus_path)
    guidance = _read_guidance(
        check, data.get("economic_guidance", {}), join_path(path, "economic_guidance"), extra_builds
    )
    risk = _read_risk(check, data.get("risk_assessment", {}), join_path(path, "risk_assessment"))
    confidence_path = join_path(path, "confidence")
    raw_confidence = data.get("confidence")
    if raw_confidence is None:
        check.note(confidence_path, "missing, set to 500 (of 1000)")
        raw_confidence = 500
    elif isinstance(raw_confidence, float) and 0 <= raw_confidence <= 1 and raw_confidence != 1:
        check.note(confidence_path, f"read {raw_confidence} as {round(raw_confidence * 1000)}/1000")
        raw_confidence = round(raw_confidence * 1000)
    confidence = check.integer(raw_confidence, confidence_path, 0, 1000)
    reasoning = check.text(data.get("reasoning", ""), join_path(path, "reasoning"), max_len=MAX_LONG_TEXT)
    notes = data.get("tactical_notes")
    if notes and reasoning is not None:
        notes = check.text(notes, join_path(path, "tactical_notes"), max_len=MAX_DESCRIPTION)
        if notes:
            check.note(join_path(path, "tactical_notes"), "appended to reasoning")
            reasoning = f"{reasoning}\n\nTactical notes: {notes}".strip()
    if focus is None or guidance is None or risk is None or confidence is None or reasoning is None:
        return None
    return StrategicPlan(focus, targets, guidance, risk, confidence, reasoning)


def _read_wire_build_focus(
    check: Checker, data: Mapping[str, Any], path: str
) -> tuple[BuildFocus | None, tuple[str, ...]]:
    unit = data.get("unit_priority", "balanced")
    focus = check.enum(BuildFocus, unit, join_path(path, "unit_priority"))
    structure = data.get("structure_priority")
    if focus is BuildFocus.MIXED and isinstance(structure, str) and structure in _STRUCTURE_FOCUS:
        focus = _STRUCTURE_FOCUS[structure]
    units = check.each(
        data.get("specific_units", []),
        join_path(path, "specific_units"),
        lambda v, p: check.text(v, p, max_len=64, allow_empty=False),
    )
    check.note(path, f"read the wire schema's build_focus as {focus.serde if focus else '?'}")
    return focus, units


def _read_target(check: Checker, value: object, path: str) -> StrategicTarget | None:
    data = check.mapping(value, path)
    if data is None:
        return None
    raw_type = data.get("target_type")
    if isinstance(raw_type, str) and raw_type.lower() in _WIRE_TARGET_TYPES:
        check.note(join_path(path, "target_type"), f"read wire type {raw_type!r}")
        raw_type = _WIRE_TARGET_TYPES[raw_type.lower()]
    target_type = check.enum(TargetType, raw_type, join_path(path, "target_type"))
    raw_priority = data.get("priority")
    if raw_priority is None and isinstance(data.get("urgency"), str):
        urgency = data["urgency"].lower()
        if urgency in _URGENCY_PRIORITY:
            check.note(join_path(path, "priority"), f"derived from urgency {urgency!r}")
            raw_priority = _URGENCY_PRIORITY[urgency]
    if raw_priority is None:
        check.fail(join_path(path, "priority"), "missing (1..10)")
        priority = None
    else:
        priority = check.integer(raw_priority, join_path(path, "priority"), 1, 10)
    description = check.text(data.get("description", ""), join_path(path, "description"), max_len=MAX_DESCRIPTION)
    hint = data.get("location_hint")
    if isinstance(hint, str) and hint and description is not None:
        description = f"{description} (location: {hint})".strip()
    position = _read_position(check, data.get("position"), join_path(path, "position"))
    if target_type is None or priority is None or description is None or position is False:
        return None
    return StrategicTarget(target_type, priority, description, position)


def _read_position(check: Checker, value: object, path: str) -> WorldPos | Literal[False] | None:
    """A WorldPos, None when absent, or False when invalid (already reported)."""
    if value is None:
        return None
    if isinstance(value, list | tuple) and len(value) in (2, 3):
        value = dict(zip(("x", "y", "z"), value, strict=False))
    data = check.mapping(value, path)
    if data is None:
        return False
    x = check.integer(data.get("x"), join_path(path, "x"), *I32)
    y = check.integer(data.get("y"), join_path(path, "y"), *I32)
    z = check.integer(data.get("z", 0), join_path(path, "z"), *I32)
    if x is None or y is None or z is None:
        return False
    return WorldPos(x, y, z)


def _read_guidance(check: Checker, value: object, path: str, extra_builds: tuple[str, ...]) -> EconomicGuidance | None:
    data = check.mapping(value, path)
    if data is None:
        return None
    expand = check.boolean(data.get("expand", False), join_path(path, "expand"))
    target = data.get("harvester_target")
    income = data.get("target_income")
    if target is None and isinstance(income, str) and income.lower() in _INCOME_HARVESTERS:
        target = _INCOME_HARVESTERS[income.lower()]
        check.note(join_path(path, "harvester_target"), f"derived from target_income {income!r}")
    harvesters = check.integer(4 if target is None else target, join_path(path, "harvester_target"), 0, U8_MAX)

    def names(key: str) -> tuple[str, ...]:
        return check.each(
            data.get(key, []), join_path(path, key), lambda v, p: check.text(v, p, max_len=64, allow_empty=False)
        )

    sell = names("sell_structures")
    builds = tuple(dict.fromkeys(names("priority_builds") + extra_builds))
    if expand is None or harvesters is None:
        return None
    return EconomicGuidance(expand, harvesters, sell, builds)


def _read_risk(check: Checker, value: object, path: str) -> RiskAssessment | None:
    data = check.mapping(value, path)
    if data is None:
        return None
    threat = check.enum(ThreatLevel, data.get("threat_level", "low"), join_path(path, "threat_level"))
    pressure = check.enum(TimePressure, data.get("time_pressure", "none"), join_path(path, "time_pressure"))
    direction = check.optional_text(data.get("expected_attack_direction"), join_path(path, "expected_attack_direction"))
    defense = data.get("recommended_defense")
    if defense is None and isinstance(data.get("defensive_posture"), str):
        defense = f"{data['defensive_posture']} posture"
        check.note(join_path(path, "recommended_defense"), "derived from defensive_posture")
    defense = check.optional_text(defense, join_path(path, "recommended_defense"))
    if threat is None or pressure is None:
        return None
    return RiskAssessment(threat, pressure, direction, defense)


def _read_encounter_pattern(check: Checker, data: Mapping[str, Any], path: str) -> EncounterPattern | None:
    scenes_path = join_path(path, "scene_composition")
    raw_scenes = _first(data, "scene_composition", "scenes", default=None)
    if raw_scenes is None:
        check.fail(scenes_path, "missing")
        return None
    scenes = check.each(raw_scenes, scenes_path, lambda v, p: _read_scene(check, v, p))
    hints = _read_hints(check, data.get("mission_structure", {}), join_path(path, "mission_structure"))
    if hints is None:
        return None
    return EncounterPattern(scenes, hints)


def _read_scene(check: Checker, value: object, path: str) -> SceneInstance | None:
    data = check.mapping(value, path)
    if data is None:
        return None
    template = _first(data, "template", "template_id", "scene")
    template = check.text(template, join_path(path, "template"), max_len=64, allow_empty=False)
    raw_values = _first(data, "values", "parameters", "params", default={})
    values_path = join_path(path, "values")
    values = check.mapping(raw_values, values_path)
    values = check.json_value(values, values_path) if values is not None else None
    if template is None or values is None:
        return None
    return SceneInstance(template, values)


def _read_hints(check: Checker, value: object, path: str) -> MissionStructureHints | None:
    data = check.mapping(value, path)
    if data is None:
        return None

    def text(key: str) -> str | None:
        return check.optional_text(data.get(key), join_path(path, key), max_len=64)

    def words(key: str) -> tuple[str, ...]:
        return check.each(data.get(key, []), join_path(path, key), lambda v, p: check.text(v, p, allow_empty=False))

    minutes = data.get("estimated_minutes")
    if minutes is not None:
        minutes = check.integer(minutes, join_path(path, "estimated_minutes"), 1, 1440)
    notes = check.text(data.get("notes") or "", join_path(path, "notes"), max_len=MAX_DESCRIPTION)
    return MissionStructureHints(
        mission_type=text("mission_type"),
        player_faction=text("player_faction"),
        difficulty=text("difficulty"),
        estimated_minutes=minutes,
        objectives=words("objectives"),
        outcomes=words("outcomes"),
        notes=notes or "",
    )


def _read_verified_example(check: Checker, data: Mapping[str, Any], path: str) -> VerifiedExample | None:
    prompt = check.text(
        data.get("prompt_context"), join_path(path, "prompt_context"), max_len=MAX_LONG_TEXT, allow_empty=False
    )
    response = check.text(data.get("response"), join_path(path, "response"), max_len=MAX_LONG_TEXT, allow_empty=False)
    if prompt is None or response is None:
        return None
    return VerifiedExample(prompt, response)


def _read_instructions(check: Checker, data: Mapping[str, Any], path: str) -> Instructions | None:
    text = check.text(
        data.get("instructions"), join_path(path, "instructions"), max_len=MAX_LONG_TEXT, allow_empty=False
    )
    tools = data.get("tools", [])
    if isinstance(tools, str):  # "Read, Grep" as SKILL.md files often write allowed-tools
        tools = [part for part in re.split(r"[,\s]+", tools) if part]
        check.note(join_path(path, "tools"), "split a comma-separated list")
    tools = check.each(tools, join_path(path, "tools"), lambda v, p: check.text(v, p, max_len=128, allow_empty=False))
    model = check.optional_text(data.get("model"), join_path(path, "model"))
    references = check.each(
        data.get("references", []), join_path(path, "references"), lambda v, p: _read_id(check, v, p)
    )
    if text is None:
        return None
    return Instructions(text, tools, model, references)


__all__ = [
    "MAX_SHORT_TEXT",
    "body_to_json",
    "body_to_serde",
    "parse_body",
    "parse_body_json",
    "parse_skill",
    "parse_skill_with_notes",
    "skill_to_document",
    "source_to_document",
]
