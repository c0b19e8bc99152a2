"""The skill model: canonical serialization, every accepted spelling, and validation messages."""

from __future__ import annotations

import copy
import gc
import json
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillstudio.model import (
    BuildFocus,
    Confidence,
    Domain,
    SourceKind,
    TargetType,
    ThreatLevel,
    TimePressure,
    ValidationError,
    body_to_json,
    body_to_serde,
    normalize_timestamp,
    parse_body,
    parse_body_json,
    parse_skill,
    parse_skill_with_notes,
    skill_to_document,
)
from skillstudio.model.validation import Checker
from tests.factories import ai_skill, content_skill, example_skill, instructions_skill

ALL_KINDS = [ai_skill, content_skill, example_skill, instructions_skill]


def problems(data: object) -> list[str]:
    with pytest.raises(ValidationError) as caught:
        parse_skill(data)
    return [str(issue) for issue in caught.value.issues]


@pytest.mark.parametrize("make", ALL_KINDS)
def test_every_body_kind_round_trips_through_its_document(make) -> None:
    skill = make()
    document = skill_to_document(skill)
    assert parse_skill(json.loads(json.dumps(document))) == skill


def test_body_is_written_as_serde_externally_tagged_json() -> None:
    serde = body_to_serde(ai_skill().body)
    assert list(serde) == ["StrategicPattern"]
    inner = serde["StrategicPattern"]
    assert inner["situation"]["game_phase"] == "Early"
    assert inner["situation"]["army_composition"] == [["rifle_infantry", 60], ["light_tank", 40]]
    assert inner["plan"]["build_focus"] == "AntiArmor"
    assert inner["plan"]["priority_targets"][0] == {
        "target_type": "Defend",
        "position": None,
        "priority": 8,
        "description": "hold the ore field",
    }
    assert inner["plan"]["risk_assessment"]["time_pressure"] == "Urgent"
    assert inner["parameter_bindings"] == [["aggression", 40], ["tech_priority_armor", 70]]


def test_body_json_is_deterministic_text() -> None:
    assert body_to_json(ai_skill().body) == body_to_json(ai_skill().body)
    assert parse_body_json(body_to_json(ai_skill().body)) == ai_skill().body


def test_validation_names_the_field_path_and_the_problem() -> None:
    document = skill_to_document(ai_skill())
    targets = document["body"]["StrategicPattern"]["plan"]["priority_targets"]
    targets.extend([dict(targets[0]), dict(targets[0], priority=14)])
    assert problems(document) == ["body.plan.priority_targets[2].priority: 14 is outside 1..10"]


def test_every_problem_is_reported_at_once() -> None:
    document = skill_to_document(ai_skill())
    document["name"] = ""
    document["quality"]["success_rate"] = 1.5
    document["body"]["StrategicPattern"]["situation"]["game_phase"] = "endgame"
    document["body"]["StrategicPattern"]["plan"]["confidence"] = 4000
    found = problems(document)
    assert "name: must not be empty" in found
    assert "quality.success_rate: 1.5 is outside 0..1" in found
    assert "body.situation.game_phase: 'endgame' is not one of early|mid|late" in found
    assert "body.plan.confidence: 4000 is outside 0..1000" in found
    assert len(found) == 4


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: d.pop("domain"), "domain: missing (one of ai_strategy|content_generation)"),
        (lambda d: d.update(tags="not json"), "tags: is not valid JSON"),
        (lambda d: d.update(use_count=-1), "use_count: -1 is outside 0..4294967295"),
        (lambda d: d.update(use_count=True), "use_count: expected a whole number, got true"),
        (lambda d: d.update(created_at="yesterday"), "created_at: 'yesterday' is not an ISO 8601 time"),
        (lambda d: d["quality"].update(success_rate=float("nan")), "quality.success_rate: nan is not a finite number"),
        (lambda d: d.update(name="x" * 201), "name: is 201 characters long, at most 200 allowed"),
        (lambda d: d.update(description="a\x00b"), "description: contains a NUL character"),
        (lambda d: d.update(id="../../etc"), "id: '../../etc' is not a valid skill id"),
        (lambda d: d["provenance"].update(source="borrowed"), "provenance.source: 'borrowed' is not one of"),
        (lambda d: d["provenance"].update(game_module="Red Alert 1!"), "provenance.game_module:"),
        (lambda d: d.update(body={"Poem": {}}), "body: 'Poem' is not one of"),
        (lambda d: d.update(body={"A": {}, "B": {}}), "body: expected one body variant"),
        (lambda d: d.update(body=[]), "body: expected a mapping, got a list"),
        (
            lambda d: d.update(domain="content"),
            "body: a StrategicPattern body does not belong to the content_generation",
        ),
    ],
)
def test_bad_fields_are_refused_with_a_message(mutate, expected) -> None:
    document = skill_to_document(ai_skill())
    mutate(document)
    found = problems(document)
    assert any(message.startswith(expected) for message in found), found


def test_a_skill_cannot_compose_with_itself() -> None:
    skill = ai_skill()
    document = skill_to_document(skill)
    document["composable_with"] = [skill.id]
    assert problems(document) == ["composable_with: a skill cannot be composed with itself"]


def test_workshop_and_refined_details_may_be_unknown_but_never_invalid() -> None:
    """D057's skills table has no columns for them: an engine's row has none, and they stay
    unknown (None) rather than being made up. Given, they are checked."""
    document = skill_to_document(ai_skill())
    document["provenance"] = {"source": "workshop", "game_module": "ra1"}
    source = parse_skill(document).provenance.source
    assert (source.kind, source.source_id, source.author) == (SourceKind.WORKSHOP, None, None)
    document["provenance"] = {"source": "workshop", "game_module": "ra1", "source_id": None, "author": "kessler"}
    assert parse_skill(document).provenance.source.author == "kessler"
    document["provenance"] = {"source": "human_refined", "game_module": "ra1", "original_id": None}
    assert parse_skill(document).provenance.source.original_id is None
    document["provenance"] = {"source": "workshop", "game_module": "ra1", "source_id": "", "author": 7}
    assert problems(document) == [
        "provenance.source_id: must not be empty",
        "provenance.author: expected text, got 7",
    ]
    document["provenance"] = {"source": "human_refined", "game_module": "ra1", "original_id": "not an id!"}
    assert problems(document)[0].startswith("provenance.original_id: ")


def test_not_a_mapping_at_all() -> None:
    assert problems([1, 2]) == ["expected a mapping, got a list"]
    assert problems(None) == ["expected a mapping, got null"]


def test_scene_values_are_bounded() -> None:
    document = skill_to_document(content_skill())
    nested: dict = {}
    cursor = nested
    for _ in range(40):
        cursor["x"] = {}
        cursor = cursor["x"]
    document["body"]["EncounterPattern"]["scene_composition"][0]["values"] = nested
    assert any("nested deeper than" in message for message in problems(document))


# --- other spellings ------------------------------------------------------------------------------


def test_flat_d057_row_form_is_read() -> None:
    skill = ai_skill()
    row = {
        "id": skill.id,
        "domain": "ai_strategy",
        "name": skill.name,
        "description": skill.description,
        "body_json": body_to_json(skill.body),
        "tags": json.dumps(list(skill.tags)),
        "game_module": "ra1",
        "source": "llm_discovered",
        "model_id": "model-x",
        "verification_count": 5,
        "success_rate": 0.6,
        "average_rating": None,
        "confidence": "tentative",
        "use_count": 0,
        "created_at": skill.created_at,
        "last_used": None,
        "last_verified": "2026-03-02T10:00:00.000Z",
        "created_by": "agent:orchestrator",
        "engine_version": "0.5.0",
    }
    assert parse_skill(row) == skill


def test_serde_spellings_of_the_whole_skill_are_read() -> None:
    document = skill_to_document(example_skill())
    document["domain"] = "AiStrategy"
    document["quality"]["confidence"] = "Proven"
    document["provenance"] = {
        "source": {"Workshop": {"source_id": "kessler/naval@1.0.0", "author": "kessler"}},
        "game_module": "ra1",
        "engine_version": "0.5.0",
        "model_id": None,
    }
    skill, notes = parse_skill_with_notes(document)
    assert skill.domain is Domain.AI_STRATEGY
    assert skill.quality.confidence is Confidence.PROVEN
    assert skill.provenance.source.kind is SourceKind.WORKSHOP
    assert skill.provenance.source.author == "kessler"
    assert notes == []  # serde spellings are canonical for the body's enums, not notes


@pytest.mark.parametrize(
    ("raw", "member"),
    [
        ("AntiArmor", BuildFocus.ANTI_ARMOR),
        ("anti-armor", BuildFocus.ANTI_ARMOR),
        ("ANTI_AIR", BuildFocus.ANTI_AIR),
        ("balanced", BuildFocus.MIXED),
        ("infantry_mass", BuildFocus.INFANTRY),
        ("AirPower", BuildFocus.AIR_POWER),
    ],
)
def test_enum_spellings(raw: str, member: BuildFocus) -> None:
    assert BuildFocus.parse(raw) is member


def test_threat_level_keeps_d057s_none_and_confidence_ranges() -> None:
    assert ThreatLevel.parse("None") is ThreatLevel.NONE
    assert TimePressure.parse("moderate") is TimePressure.MEDIUM
    assert Confidence.parse_range("established+") == (Confidence.ESTABLISHED, Confidence.PROVEN)
    assert Confidence.parse_range("proven") == (Confidence.PROVEN,)
    with pytest.raises(ValueError, match="is not one of tentative"):
        Confidence.parse_range("great+")


def test_internally_tagged_body_and_mapping_bindings() -> None:
    body = parse_body(
        {
            "type": "strategic_pattern",
            "situation": {"game_phase": "mid", "economy_state": "ahead", "map_control": 65},
            "plan": {"build_focus": "tech"},
            "parameter_bindings": {"aggression": 80},
        }
    )
    assert body.situation.map_control == pytest.approx(0.65)  # a percentage read as a fraction
    assert body.parameter_bindings == (("aggression", 80),)
    assert body.plan.confidence == 500  # D044's field is absent from LLM output; default, noted


def test_llm_wire_schema_plan_is_converted() -> None:
    """The [R] string-typed wire schema (research/llm-generation-schemas.md section 9)."""
    body = parse_body(
        {
            "StrategicPattern": {
                "situation": {"game_phase": "early", "economy_state": "behind"},
                "plan": {
                    "priority_targets": [
                        {
                            "description": "enemy refinery",
                            "target_type": "structure",
                            "location_hint": "north east",
                            "urgency": "immediate",
                        },
                    ],
                    "build_focus": {
                        "unit_priority": "balanced",
                        "structure_priority": "economy",
                        "specific_units": ["ore_truck"],
                    },
                    "economic_guidance": {"expand": True, "protect_harvesters": True, "target_income": "maximize"},
                    "risk_assessment": {
                        "threat_level": "high",
                        "defensive_posture": "turtle",
                        "time_pressure": "moderate",
                    },
                    "tactical_notes": "keep the MCV safe",
                    "reasoning": "behind on economy",
                },
            }
        }
    )
    plan = body.plan
    assert plan.build_focus is BuildFocus.ECONOMY
    assert plan.priority_targets[0].target_type is TargetType.ATTACK
    assert plan.priority_targets[0].priority == 9
    assert "north east" in plan.priority_targets[0].description
    assert plan.economic_guidance.harvester_target == 6
    assert plan.economic_guidance.priority_builds == ("ore_truck",)
    assert plan.risk_assessment.time_pressure is TimePressure.MEDIUM
    assert plan.risk_assessment.recommended_defense == "turtle posture"
    assert "keep the MCV safe" in plan.reasoning


def test_game_module_and_domain_aliases_are_noted() -> None:
    document = skill_to_document(ai_skill())
    document["domain"] = "ai"
    document["provenance"]["game_module"] = "red_alert"
    skill, notes = parse_skill_with_notes(document)
    assert skill.game_module == "ra1"
    assert {note.path for note in notes} == {"domain", "provenance.game_module"}


def test_missing_id_and_created_at_are_filled_and_noted() -> None:
    document = skill_to_document(instructions_skill())
    del document["id"], document["created_at"]
    skill, notes = parse_skill_with_notes(document)
    assert len(skill.id) == 36
    assert {note.path for note in notes} >= {"id", "created_at"}


def test_instruction_tools_may_be_a_comma_separated_string() -> None:
    document = skill_to_document(instructions_skill())
    document["body"]["Instructions"]["tools"] = "Read, Grep  Bash"
    assert parse_skill(document).body.tools == ("Read", "Grep", "Bash")


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("2026-03-01T10:00:00Z", "2026-03-01T10:00:00.000Z"),
        ("2026-03-01T12:00:00.123456+02:00", "2026-03-01T10:00:00.123Z"),
        ("2026-03-01", "2026-03-01T00:00:00.000Z"),
        ("2026-03-01T10:00:00", "2026-03-01T10:00:00.000Z"),
    ],
)
def test_timestamps_are_written_as_d034_does(raw: str, canonical: str) -> None:
    assert normalize_timestamp(raw) == canonical


@settings(max_examples=300, deadline=None)
@given(moment=st.datetimes(min_value=datetime(1000, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)))
def test_a_time_already_canonical_reads_as_the_full_normalisation_writes_it(moment: datetime) -> None:
    """normalize_timestamp returns a canonical text as it is (its fast path): the same text the
    full path makes of the same moment, given as a datetime or in another spelling."""
    written = normalize_timestamp(moment)  # the full path
    assert normalize_timestamp(written) == written
    assert normalize_timestamp(written.replace("Z", "+00:00")) == written  # the full path again


@pytest.mark.parametrize(
    "impossible", ["2026-02-30T10:00:00.000Z", "2026-13-01T10:00:00.000Z", "2026-03-01T24:00:00.000Z"]
)
def test_a_canonical_looking_time_that_does_not_exist_is_refused(impossible: str) -> None:
    with pytest.raises(ValueError):
        normalize_timestamp(impossible)
    with pytest.raises(ValueError):
        normalize_timestamp(impossible.replace("Z", "+00:00"))


def test_documents_leaving_the_library_drop_local_annotations() -> None:
    document = skill_to_document(ai_skill(), local=False)
    assert "review_state" not in document and "version" not in document


def test_parsing_does_not_modify_its_input() -> None:
    document = skill_to_document(ai_skill())
    before = copy.deepcopy(document)
    parse_skill(document)
    assert document == before


def test_verification_records_round_trip_through_their_document() -> None:
    from skillstudio.model.evidence import (
        EvidenceKind,
        VerificationRecord,
        read_verification_record,
        record_to_document,
    )
    from skillstudio.model.validation import Checker

    record = VerificationRecord(
        "2026-04-01T20:00:00.000Z", EvidenceKind.PLAY, 3, 1, 0, 2, None, 4.25, 4, "0.5.0", "ab", "n"
    )
    check = Checker()
    assert read_verification_record(check, record_to_document(record), "r") == record and not check.issues


def test_every_members_serde_spelling_is_its_value_in_pascal_case_on_every_read() -> None:
    """serde is worked out once per value and kept; what it gives is the rule's spelling."""
    from skillstudio.model import enums

    kinds = [k for k in vars(enums).values() if isinstance(k, type) and issubclass(k, enums.SpelledEnum)]
    members = [m for kind in kinds if kind is not enums.SpelledEnum for m in kind]
    assert len(members) > 40
    for member in members * 2:
        assert member.serde == "".join(part.capitalize() for part in member.value.split("_"))


def test_parsing_leaves_nothing_for_the_cycle_collector() -> None:
    """Reading a skill makes no reference cycles: all it made is freed when it is dropped. A
    recursive closure per scene value left 500,000 objects of a 100,000-skill import to the
    GUI's collector, whose pass over them stalled the window for 300-450 ms."""
    from benchmarks.synthetic import generate_skills

    documents = [json.loads(json.dumps(skill_to_document(s, local=False))) for s in generate_skills(300, seed=57)]
    assert any('"values": {"' in json.dumps(document) for document in documents)  # scene values to check
    for document in documents:
        parse_skill(document)  # first reads fill caches that live on
    enabled = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        for document in documents:
            parse_skill(document)
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()


_TEXT = st.text(st.characters(blacklist_characters="\x00"), max_size=20)  # NUL: refused, as below
_JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _TEXT
_JSON_VALUES = st.recursive(
    _JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(value=_JSON_VALUES)
def test_a_free_form_value_reads_as_a_json_round_trip_gives_it(value: object) -> None:
    """Checker.json_value checks and copies in one walk: what it returns is what writing the
    value as JSON and reading it back gives (plain lists and dicts), and nothing is refused."""
    check = Checker()
    assert check.json_value(value, "values") == json.loads(json.dumps(value))
    assert not check.issues


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"a": [1, float("nan")]}, "values.a[1]: nan is not a finite number"),
        ({"a": {"b": {1: 2}}}, "values.a.b: keys must be text"),
        ([[[[[[[[[[[[[[[[[[0]]]]]]]]]]]]]]]]]], "is nested deeper than 16 levels"),
        ({"a": [1, b"x"]}, "values.a[1]: bytes is not a JSON value"),
        ({"a": ["ok", "x\x00"]}, "values.a[1]: text is too long or contains NUL"),
        ([0] * 20_001, "values: has more than 20000 values"),
    ],
)
def test_a_free_form_value_outside_json_is_refused_where_it_is(value: object, problem: str) -> None:
    check = Checker()
    assert check.json_value(value, "values") is None
    assert problem in "\n".join(str(issue) for issue in check.issues)
