"""The bundled sample library: every file loads, and the set is varied, consistent and plausible.

Each test checks one requirement over the whole sample and names every offending file, so a
failure says what to fix. Quality figures are checked against the verification history with the
same ``summarize`` the application uses; confidence tiers against D057's promotion thresholds.
"""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter
from pathlib import Path

import pytest
import yaml

from skillstudio.library.sample import SampleSkill, load_sample, sample_dir
from skillstudio.model import (
    BodyKind,
    Confidence,
    Domain,
    EncounterPattern,
    Instructions,
    ReviewState,
    SourceKind,
    StrategicPattern,
    TargetType,
    VerifiedExample,
    body_to_json,
    parse_body,
    skill_to_document,
)
from skillstudio.model.evidence import EvidenceKind, summarize

# --- what the sample must be written against ------------------------------------------------------

# ic-formats.md section 4: the 14 scene templates and their parameter names.
SCENE_TEMPLATES: dict[str, set[str]] = {
    "ambush": {"location", "attacker_units", "trigger_zone", "delay"},
    "patrol": {"waypoints", "unit_composition", "alert_radius"},
    "convoy_escort": {"route", "convoy_units", "ambush_points", "escort_units"},
    "defend_position": {"position", "waves", "interval", "reinforcement_schedule"},
    "base_building": {"start_resources", "available_structures", "tech_tree_limit"},
    "timed_objective": {"target", "time_limit", "failure_trigger"},
    "reinforcements": {"trigger", "units", "entry_point", "delay"},
    "scripted_scene": {"actors", "dialogue", "camera_positions"},
    "video_playback": {"video_ref", "trigger", "display_mode", "skippable"},
    "weather": {"type", "intensity", "trigger", "duration", "sim_effects"},
    "extraction": {"pickup_zone", "transport_type", "signal_trigger"},
    "map_expansion": {"trigger", "layer_name", "transition", "reinforcements", "briefing"},
    "sub_map_transition": {"portal_region", "sub_map", "allowed_units", "transition", "outcomes"},
    "phase_briefing": {"briefing_ref", "video_ref", "display_mode", "layer_name", "reinforcements"},
}
WEATHER_TYPES = {"rain", "snow", "sandstorm", "blizzard", "fog", "storm"}
DISPLAY_MODES = {"fullscreen", "radar_comm", "picture_in_picture"}

# ic-formats.md section 2: presets x difficulties, spelled as D057's "IC Default Hard".
PRESETS = {"Classic RA", "OpenRA", "IC Default"}
DIFFICULTIES = {"Sandbox", "Easy", "Normal", "Hard", "Brutal"}
MISSION_DIFFICULTIES = {d.lower() for d in DIFFICULTIES}

# ic-formats.md section 1: set_parameter() names; values are 0..100 unless listed here.
PARAMETER_RANGES: dict[str, tuple[int, int]] = dict.fromkeys(
    (
        "aggression",
        "expansion_priority",
        "harvester_count_target",
        "tech_priority_aa",
        "tech_priority_armor",
        "infantry_ratio",
        "vehicle_ratio",
        "naval_priority",
        "defense_ratio",
        "defense_allocation",
        "harvester_defense",
        "scout_priority",
        "reaction_urgency",
        "aggression_weight",
    ),
    (0, 100),
)
PARAMETER_RANGES["consultation_interval"] = (30, 3000)  # ticks
PARAMETER_RANGES["plan_depth"] = (1, 10)
PARAMETER_RANGES["replan_interval"] = (10, 120)
WORLD_PARAMETERS = {"attack_target_x", "attack_target_y"}  # world units of targets[0]

CELL = 1024  # world units per cell
MAP_CELLS = 128

RA1_UNITS = {
    "rifle_infantry",
    "rocket_infantry",
    "grenadier",
    "flamethrower",
    "engineer",
    "medic",
    "spy",
    "thief",
    "tanya",
    "attack_dog",
    "light_tank",
    "medium_tank",
    "heavy_tank",
    "mammoth_tank",
    "ranger",
    "apc",
    "artillery",
    "v2_launcher",
    "flak_truck",
    "mine_layer",
    "mcv",
    "ore_truck",
    "chinook",
    "longbow",
    "hind",
    "mig",
    "yak",
    "gunboat",
    "destroyer",
    "cruiser",
    "transport",
    "submarine",
}
RA1_STRUCTURES = {
    "construction_yard",
    "power_plant",
    "advanced_power_plant",
    "ore_refinery",
    "ore_silo",
    "barracks",
    "kennel",
    "war_factory",
    "radar_dome",
    "airfield",
    "helipad",
    "naval_yard",
    "sub_pen",
    "service_depot",
    "tech_center",
    "pillbox",
    "camo_pillbox",
    "gun_turret",
    "aa_gun",
    "flame_tower",
    "tesla_coil",
    "sam_site",
}
TD_UNITS = {
    "minigunner",
    "grenadier",
    "rocket_soldier",
    "flamethrower",
    "chem_warrior",
    "engineer",
    "commando",
    "humvee",
    "buggy",
    "recon_bike",
    "apc",
    "light_tank",
    "medium_tank",
    "mammoth_tank",
    "flame_tank",
    "stealth_tank",
    "artillery",
    "mlrs",
    "ssm_launcher",
    "harvester",
    "mcv",
    "orca",
    "apache",
    "chinook",
}
TD_STRUCTURES = {
    "construction_yard",
    "power_plant",
    "advanced_power_plant",
    "tiberium_refinery",
    "tiberium_silo",
    "barracks",
    "hand_of_nod",
    "weapons_factory",
    "airstrip",
    "communications_center",
    "advanced_communications_center",
    "helipad",
    "repair_facility",
    "temple_of_nod",
    "guard_tower",
    "advanced_guard_tower",
    "turret",
    "obelisk",
    "sam_site",
}
UNITS = {"ra1": RA1_UNITS, "td": TD_UNITS}
STRUCTURES = {"ra1": RA1_STRUCTURES, "td": TD_STRUCTURES}
FACTIONS = {"ra1": {"allies", "soviet"}, "td": {"gdi", "nod"}}

# Scene parameters that hold {unit: count} maps, and those holding lists of such maps or
# of {units: {...}} entries.
UNIT_MAP_KEYS = {"attacker_units", "unit_composition", "convoy_units", "escort_units", "units"}
TIME_KEYS = {"delay", "interval", "time_limit", "duration", "at"}
ZONE_KEYS = {"trigger_zone", "position", "pickup_zone", "portal_region"}
POINT_LIST_KEYS = {"waypoints", "route", "ambush_points", "camera_positions"}

EARLIEST = "2026-01-01T00:00:00.000Z"
LATEST = "2026-11-20T23:59:59.999Z"
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
FILE_NAME = re.compile(r"^(ra1|td)-[a-z0-9]+(-[a-z0-9]+)*\.yaml$")
TAG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
HANDLE = re.compile(r"^[a-z][a-z0-9._-]{1,23}$")
AGENT = re.compile(r"^agent:[a-z0-9][a-z0-9-]*$")
WORKSHOP_ID = re.compile(r"^([a-z0-9-]{3,64})/([a-z0-9-]{3,64})@\d+\.\d+\.\d+$")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)*\.[a-z]{2,}", re.IGNORECASE)
LOCAL_PATH = re.compile(r"(/home/|/Users/|[A-Za-z]:\\|/root/|/tmp/|/work/)")
FOLDERS = {Domain.AI_STRATEGY: "ai", Domain.CONTENT_GENERATION: "content"}


# --- fixtures and helpers -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample() -> list[SampleSkill]:
    return load_sample()


@pytest.fixture(scope="module")
def by_id(sample: list[SampleSkill]) -> dict[str, SampleSkill]:
    return {entry.skill.id: entry for entry in sample}


def name(entry: SampleSkill) -> str:
    return entry.path.name


def report(problems: list[str]) -> str:
    return "\n  " + "\n  ".join(problems)


def expected_confidence(entry: SampleSkill) -> Confidence:
    """The tier D057's thresholds give this evidence (what promotion would have set)."""
    summary = summarize(entry.verifications)
    count, rate, rating = summary.verification_count, summary.success_rate, summary.average_rating
    if entry.skill.domain is Domain.AI_STRATEGY:
        if count >= 10 and rate > 0.70:
            return Confidence.PROVEN
        if count >= 3 and rate > 0.60:
            return Confidence.ESTABLISHED
        return Confidence.TENTATIVE
    if rating is None or rating < 3.5:
        return Confidence.TENTATIVE
    if count >= 10 and rate > 0.70:
        return Confidence.PROVEN
    if count >= 3:
        return Confidence.ESTABLISHED
    return Confidence.TENTATIVE


def strategic(sample: list[SampleSkill]) -> list[tuple[SampleSkill, StrategicPattern]]:
    return [(e, e.skill.body) for e in sample if isinstance(e.skill.body, StrategicPattern)]


def encounters(sample: list[SampleSkill]) -> list[tuple[SampleSkill, EncounterPattern]]:
    return [(e, e.skill.body) for e in sample if isinstance(e.skill.body, EncounterPattern)]


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


# --- loading and layout ---------------------------------------------------------------------------


def test_sample_loads_with_at_least_44_skills(sample):
    assert len(sample) >= 44, f"the sample has {len(sample)} skills, at least 44 are required"


def test_every_yaml_file_is_one_skill(sample):
    files = sorted(sample_dir().rglob("*.yaml"))
    assert len(files) == len(sample), "load_sample skipped or duplicated files"
    stray = [
        str(p.relative_to(sample_dir()))
        for p in sample_dir().rglob("*")
        if p.is_file() and p.suffix not in (".yaml", ".md")
    ]
    assert not stray, f"non-YAML files in the sample folder:{report(stray)}"


def test_ids_are_unique_uuid4(sample):
    problems = []
    for entry in sample:
        try:
            parsed = uuid.UUID(entry.skill.id)
        except ValueError:
            problems.append(f"{name(entry)}: id {entry.skill.id!r} is not a UUID")
            continue
        if parsed.version != 4 or str(parsed) != entry.skill.id:
            problems.append(f"{name(entry)}: id {entry.skill.id} is not a lowercase UUID4")
    duplicates = [i for i, n in Counter(e.skill.id for e in sample).items() if n > 1]
    problems += [f"duplicate id {i}" for i in duplicates]
    assert not problems, f"bad skill ids:{report(problems)}"


def test_names_and_descriptions_are_unique(sample):
    names = [i for i, n in Counter(e.skill.name for e in sample).items() if n > 1]
    descriptions = [i[:50] for i, n in Counter(e.skill.description for e in sample).items() if n > 1]
    assert not names, f"duplicate names:{report(names)}"
    assert not descriptions, f"duplicate descriptions:{report(descriptions)}"


def test_file_names_and_folders_match_module_and_domain(sample):
    problems = []
    for entry in sample:
        rel = entry.path.relative_to(sample_dir())
        if len(rel.parts) != 2 or rel.parts[0] != FOLDERS[entry.skill.domain]:
            problems.append(f"{rel}: a {entry.skill.domain.value} skill belongs in {FOLDERS[entry.skill.domain]}/")
        if not FILE_NAME.match(entry.path.name):
            problems.append(f"{rel}: file name is not <module>-<kebab-case>.yaml")
        elif not entry.path.name.startswith(entry.skill.game_module + "-"):
            problems.append(f"{rel}: file name does not start with its module {entry.skill.game_module}")
    assert not problems, f"misplaced or misnamed files:{report(problems)}"


def test_files_are_in_canonical_form(sample):
    """Apart from ``verifications``, each file is what skill_to_document writes for its skill."""
    problems = []
    for entry in sample:
        raw = yaml.safe_load(entry.path.read_text(encoding="utf-8"))
        raw.pop("verifications", None)
        canonical = skill_to_document(entry.skill)
        unknown = set(raw) - set(canonical)
        if unknown:
            problems.append(f"{name(entry)}: fields skill_to_document does not write: {sorted(unknown)}")
        for key in raw.keys() & canonical.keys():
            if raw[key] != canonical[key]:
                problems.append(f"{name(entry)}: {key} is not in canonical form")
    assert not problems, f"files not in canonical form:{report(problems)}"


RECORD_FIELDS = {
    "recorded_at",
    "kind",
    "opponent",
    "wins",
    "losses",
    "draws",
    "errors",
    "rating",
    "rated",
    "engine_version",
    "body_hash",
    "note",
}


def test_verification_records_use_known_fields(sample):
    """The record reader ignores unknown keys, so a typo (``raitng``) would silently drop data."""
    problems = []
    for entry in sample:
        raw = yaml.safe_load(entry.path.read_text(encoding="utf-8"))
        for i, record in enumerate(raw.get("verifications", [])):
            unknown = set(record) - RECORD_FIELDS
            if unknown:
                problems.append(f"{name(entry)}: verifications[{i}] has unknown fields {sorted(unknown)}")
            if "engine_version" not in record:
                problems.append(f"{name(entry)}: verifications[{i}] does not say which engine it ran on")
    assert not problems, f"bad verification records:{report(problems)}"


def test_timestamps_are_canonical_and_in_2026(sample):
    problems = []
    for entry in sample:
        skill = entry.skill
        stamps = {
            "created_at": skill.created_at,
            "last_used": skill.last_used,
            "quality.last_verified": skill.quality.last_verified,
        }
        stamps.update({f"verifications[{i}]": r.recorded_at for i, r in enumerate(entry.verifications)})
        raw = yaml.safe_load(entry.path.read_text(encoding="utf-8"))
        written = [raw["created_at"], raw["last_used"], raw["quality"]["last_verified"]]
        written += [r["recorded_at"] for r in raw.get("verifications", [])]
        for value in written:
            if value is not None and not (isinstance(value, str) and TIMESTAMP.match(value)):
                problems.append(f"{name(entry)}: {value!r} is not written like 2026-03-14T09:12:40.000Z")
        for field, value in stamps.items():
            if value is not None and not EARLIEST <= value <= LATEST:
                problems.append(f"{name(entry)}: {field} {value} is outside 2026-01-01..2026-11-20")
    assert not problems, f"bad timestamps:{report(problems)}"


# --- variety ----------------------------------------------------------------------------------


def test_both_domains_roughly_balanced(sample):
    counts = Counter(e.skill.domain for e in sample)
    ai, content = counts[Domain.AI_STRATEGY], counts[Domain.CONTENT_GENERATION]
    assert ai >= 24 and content >= 16, f"expected about 26 AI and 18 content skills, got {ai} and {content}"


def test_both_game_modules_in_both_domains(sample):
    counts = Counter((e.skill.domain, e.skill.game_module) for e in sample)
    missing = [f"{d.value}/{m}" for d in Domain for m in ("ra1", "td") if counts[(d, m)] < 3]
    others = sorted({e.skill.game_module for e in sample} - {"ra1", "td"})
    assert not missing, f"fewer than 3 skills for:{report(missing)}"
    assert not others, f"unexpected game modules: {others}"


def test_every_body_kind_is_represented(sample):
    counts = Counter(e.skill.body_kind for e in sample)
    minimum = {
        BodyKind.STRATEGIC_PATTERN: 10,
        BodyKind.ENCOUNTER_PATTERN: 10,
        BodyKind.VERIFIED_EXAMPLE: 4,
        BodyKind.INSTRUCTIONS: 4,
    }
    short = [f"{k.value}: {counts[k]} < {n}" for k, n in minimum.items() if counts[k] < n]
    assert not short, f"too few bodies of a kind:{report(short)}"
    for domain in Domain:
        kinds = {e.skill.body_kind for e in sample if e.skill.domain is domain}
        assert BodyKind.VERIFIED_EXAMPLE in kinds, f"no VerifiedExample in {domain.value}"
        assert BodyKind.INSTRUCTIONS in kinds, f"no Instructions in {domain.value}"


def test_all_confidence_tiers_are_represented(sample):
    for domain in Domain:
        tiers = Counter(e.skill.confidence for e in sample if e.skill.domain is domain)
        missing = [c.value for c in Confidence if tiers[c] < 2]
        assert not missing, f"{domain.value} has fewer than 2 skills at: {missing}"


def test_every_source_kind_is_represented(sample):
    counts = Counter(e.skill.source_kind for e in sample)
    assert counts[SourceKind.LLM_DISCOVERED] >= 20, f"only {counts[SourceKind.LLM_DISCOVERED]} llm_discovered"
    assert counts[SourceKind.HAND_AUTHORED] >= 2, f"only {counts[SourceKind.HAND_AUTHORED]} hand_authored"
    assert counts[SourceKind.WORKSHOP] >= 3, f"only {counts[SourceKind.WORKSHOP]} workshop skills"
    assert counts[SourceKind.HUMAN_REFINED] >= 2, f"only {counts[SourceKind.HUMAN_REFINED]} human_refined"


def test_workshop_skills_name_a_package_and_its_author(sample):
    problems = []
    for entry in sample:
        source = entry.skill.provenance.source
        if source.kind is not SourceKind.WORKSHOP:
            continue
        match = WORKSHOP_ID.match(source.source_id or "")
        if not match:
            problems.append(f"{name(entry)}: source_id {source.source_id!r} is not publisher/name@x.y.z")
        elif source.author != match.group(1):
            problems.append(f"{name(entry)}: author {source.author!r} is not the publisher {match.group(1)!r}")
        if match and f"{match.group(2)}".split("-")[0] != entry.skill.game_module:
            problems.append(f"{name(entry)}: package {match.group(2)} is not named for {entry.skill.game_module}")
    assert not problems, f"bad workshop provenance:{report(problems)}"


def test_human_refined_skills_differ_from_their_originals(sample, by_id):
    problems = []
    for entry in sample:
        source = entry.skill.provenance.source
        if source.kind is not SourceKind.HUMAN_REFINED:
            continue
        original = by_id.get(source.original_id or "")
        if original is None:
            problems.append(f"{name(entry)}: original {source.original_id} is not in the sample")
            continue
        o = original.skill
        if o.source_kind is not SourceKind.LLM_DISCOVERED:
            problems.append(f"{name(entry)}: refines {name(original)}, which is not llm_discovered")
        if (o.domain, o.game_module, o.body_kind) != (
            entry.skill.domain,
            entry.skill.game_module,
            entry.skill.body_kind,
        ):
            problems.append(f"{name(entry)}: domain, module or body kind differs from {name(original)}")
        if body_to_json(o.body) == body_to_json(entry.skill.body):
            problems.append(f"{name(entry)}: body is identical to {name(original)}'s")
        if o.name == entry.skill.name:
            problems.append(f"{name(entry)}: has the same name as its original")
        if not entry.skill.created_at > o.created_at:
            problems.append(f"{name(entry)}: created before its original {name(original)}")
    assert not problems, f"bad refinements:{report(problems)}"


def test_review_states_cover_the_review_workflow(sample):
    discovered = Counter(e.skill.review_state for e in sample if e.skill.source_kind is SourceKind.LLM_DISCOVERED)
    everywhere = Counter(e.skill.review_state for e in sample)
    assert discovered[ReviewState.PENDING] >= 3, "fewer than 3 llm_discovered skills await review"
    assert discovered[ReviewState.APPROVED] >= 2, "fewer than 2 approved llm_discovered skills"
    assert everywhere[ReviewState.REJECTED] == 1, "expected exactly one rejected skill"
    assert everywhere[ReviewState.CHANGES_REQUESTED] == 1, "expected exactly one changes_requested skill"
    assert discovered[ReviewState.REJECTED] == 1 and discovered[ReviewState.CHANGES_REQUESTED] == 1, (
        "the rejected and changes_requested skills should be llm_discovered"
    )
    assert everywhere[None] >= 10, "most skills should not be in review at all"


def test_tags_are_kebab_case_and_some_skills_are_untagged(sample):
    untagged = [e for e in sample if not e.skill.tags]
    assert len(untagged) >= 2, f"only {len(untagged)} untagged skills, want at least 2"
    bad = [f"{name(e)}: {t!r}" for e in sample for t in e.skill.tags if not TAG.match(t)]
    assert not bad, f"tags must be lowercase kebab-case:{report(bad)}"


def test_descriptions_are_one_to_three_sentences(sample):
    problems = []
    for entry in sample:
        text = entry.skill.description
        sentences = len(re.findall(r"[.!?](\s|$)", text))
        if not 60 <= len(text) <= 400 or not 1 <= sentences <= 3:
            problems.append(f"{name(entry)}: {len(text)} characters, {sentences} sentences")
    assert not problems, f"descriptions should be 1-3 sentences of 60-400 characters:{report(problems)}"


# --- provenance, usage and links ----------------------------------------------------------------


def test_creators_and_models_fit_the_source(sample):
    problems = []
    for entry in sample:
        skill = entry.skill
        model = skill.provenance.model_id
        if skill.source_kind is SourceKind.LLM_DISCOVERED:
            if not AGENT.match(skill.created_by):
                problems.append(
                    f"{name(entry)}: an llm_discovered skill is created by agent:<name>, not {skill.created_by!r}"
                )
            if not model:
                problems.append(f"{name(entry)}: an llm_discovered skill names its model_id")
        else:
            if not HANDLE.match(skill.created_by) or skill.created_by.startswith("agent:"):
                problems.append(
                    f"{name(entry)}: {skill.source_kind.value} skill needs a human handle, not {skill.created_by!r}"
                )
            if model is not None:
                problems.append(f"{name(entry)}: model_id is only for llm_discovered skills")
    assert not problems, f"provenance does not fit the source:{report(problems)}"


def test_use_count_and_last_used_agree(sample):
    problems = []
    for entry in sample:
        skill = entry.skill
        if (skill.use_count == 0) != (skill.last_used is None):
            problems.append(f"{name(entry)}: use_count {skill.use_count} but last_used {skill.last_used}")
        if skill.last_used is not None and skill.last_used < skill.created_at:
            problems.append(f"{name(entry)}: last used before it was created")
    assert not problems, f"usage figures disagree:{report(problems)}"


def test_composable_links_exist_and_are_mutual(sample, by_id):
    problems = []
    for entry in sample:
        for other_id in entry.skill.composable_with:
            other = by_id.get(other_id)
            if other is None:
                problems.append(f"{name(entry)}: composable_with {other_id} is not in the sample")
                continue
            if entry.skill.id not in other.skill.composable_with:
                problems.append(f"{name(entry)} -> {name(other)}: the link is not recorded both ways")
            if (other.skill.domain, other.skill.game_module) != (entry.skill.domain, entry.skill.game_module):
                problems.append(f"{name(entry)} -> {name(other)}: composes across domain or module")
    linked = sum(1 for e in sample if e.skill.composable_with)
    assert not problems, f"bad composable_with links:{report(problems)}"
    assert linked >= 10, f"only {linked} skills have composable_with links"


def test_instruction_references_exist(sample, by_id):
    problems = []
    for entry in sample:
        body = entry.skill.body
        if isinstance(body, Instructions):
            if not body.references:
                problems.append(f"{name(entry)}: references no skills")
            problems += [
                f"{name(entry)}: reference {r} is not in the sample" for r in body.references if r not in by_id
            ]
            if entry.skill.id in body.references:
                problems.append(f"{name(entry)}: references itself")
    assert not problems, f"bad Instructions references:{report(problems)}"


# --- quality agrees with evidence -----------------------------------------------------------------


def test_quality_matches_verification_history(sample):
    problems = []
    for entry in sample:
        quality = entry.skill.quality
        summary = summarize(entry.verifications)
        if quality.verification_count != summary.verification_count:
            problems.append(
                f"{name(entry)}: verification_count {quality.verification_count}, records add up to {summary.verification_count}"
            )
        if abs(quality.success_rate - summary.success_rate) > 0.0005:
            problems.append(
                f"{name(entry)}: success_rate {quality.success_rate}, records give {summary.success_rate:.4f}"
            )
        if (quality.average_rating is None) != (summary.average_rating is None):
            problems.append(
                f"{name(entry)}: average_rating {quality.average_rating}, records give {summary.average_rating}"
            )
        elif quality.average_rating is not None and abs(quality.average_rating - summary.average_rating) > 0.005:
            problems.append(
                f"{name(entry)}: average_rating {quality.average_rating}, records give {summary.average_rating:.3f}"
            )
        if quality.last_verified != summary.last_verified:
            problems.append(
                f"{name(entry)}: last_verified {quality.last_verified}, latest record {summary.last_verified}"
            )
    assert not problems, f"quality disagrees with verifications:{report(problems)}"


def test_confidence_follows_d057_thresholds(sample):
    problems = [
        f"{name(e)}: {e.skill.confidence.value}, but its evidence makes it {expected_confidence(e).value}"
        for e in sample
        if e.skill.confidence is not expected_confidence(e)
    ]
    assert not problems, f"confidence does not follow the promotion thresholds:{report(problems)}"


def test_verification_kind_fits_the_domain(sample):
    problems = []
    for entry in sample:
        want = EvidenceKind.HEADLESS if entry.skill.domain is Domain.AI_STRATEGY else EvidenceKind.PLAY
        for i, record in enumerate(entry.verifications):
            if record.kind is not want:
                problems.append(f"{name(entry)}: verifications[{i}] is {record.kind.value}, expected {want.value}")
    assert not problems, f"wrong kind of evidence:{report(problems)}"


def test_headless_opponents_are_real_presets(sample):
    problems = []
    for entry in sample:
        for i, record in enumerate(entry.verifications):
            if record.kind is EvidenceKind.HEADLESS:
                preset, _, difficulty = (record.opponent or "").rpartition(" ")
                if preset not in PRESETS or difficulty not in DIFFICULTIES:
                    problems.append(f"{name(entry)}: verifications[{i}] opponent {record.opponent!r}")
                if record.rated or record.rating is not None:
                    problems.append(f"{name(entry)}: verifications[{i}] headless games are not rated")
            elif record.opponent is not None:
                problems.append(f"{name(entry)}: verifications[{i}] plays have no opponent")
    assert not problems, f"bad opponents:{report(problems)}"


def test_histories_are_chronological_across_engine_versions(sample):
    problems = []
    for entry in sample:
        records = entry.verifications
        stamps = [r.recorded_at for r in records]
        if stamps != sorted(stamps):
            problems.append(f"{name(entry)}: verifications are not in date order")
        if any(stamp < entry.skill.created_at for stamp in stamps):
            problems.append(f"{name(entry)}: verified before it was created")
        versions = [version_key(r.engine_version) for r in sorted(records, key=lambda r: r.recorded_at)]
        if versions != sorted(versions):
            problems.append(f"{name(entry)}: engine versions go backwards over time")
        if versions and version_key(entry.skill.provenance.engine_version) > versions[0]:
            problems.append(f"{name(entry)}: first verified on an engine older than it was discovered on")
    assert not problems, f"implausible histories:{report(problems)}"


def test_histories_tell_varied_stories(sample):
    def grew(entry: SampleSkill) -> bool:
        records = entry.verifications
        versions = {r.engine_version for r in records}
        return (
            bool(records)
            and records[0].decided <= 5
            and summarize(records).verification_count >= 40
            and len(versions) >= 2
        )

    assert any(grew(e) for e in sample), "no skill grew from a handful of games to 40+ across engine versions"
    assert sum(1 for e in sample if any(r.errors for r in e.verifications)) >= 2, "fewer than 2 skills with error games"
    assert any(not e.verifications for e in sample if e.skill.domain is Domain.AI_STRATEGY), "no fresh AI candidate"
    assert any(not e.verifications for e in sample if e.skill.domain is Domain.CONTENT_GENERATION), (
        "no fresh content candidate"
    )
    weak = [
        e
        for e in sample
        if e.skill.confidence is Confidence.TENTATIVE and summarize(e.verifications).verification_count >= 5
    ]
    assert weak, "no tentative skill with enough games to show weak figures"
    assert any(r.draws for e in sample for r in e.verifications), "no history records a draw"


# --- strategic patterns ---------------------------------------------------------------------------


def test_unit_and_structure_names_belong_to_the_module(sample):
    problems = []
    for entry, body in strategic(sample):
        module = entry.skill.game_module
        units, structures = UNITS[module], STRUCTURES[module]
        situation, guidance = body.situation, body.plan.economic_guidance
        for unit, _ in situation.army_composition + situation.enemy_composition_estimate:
            if unit not in units:
                problems.append(f"{name(entry)}: composition names {unit!r}, not a {module} unit")
        for build in guidance.priority_builds:
            if build not in units | structures:
                problems.append(f"{name(entry)}: priority_builds names {build!r}")
        for sold in guidance.sell_structures:
            if sold not in structures:
                problems.append(f"{name(entry)}: sell_structures names {sold!r}")
        for tech in situation.active_tech:
            if not re.match(r"^tier[1-3]$", tech) and tech not in structures:
                problems.append(f"{name(entry)}: active_tech {tech!r} is neither a tier nor a structure")
    assert not problems, f"unknown unit or structure names:{report(problems)}"


def test_composition_shares_are_percentages(sample):
    problems = []
    for entry, body in strategic(sample):
        for label in ("army_composition", "enemy_composition_estimate"):
            pairs = getattr(body.situation, label)
            total = sum(share for _, share in pairs)
            if not pairs or not 50 <= total <= 100 or any(share < 1 for _, share in pairs):
                problems.append(f"{name(entry)}: {label} shares add up to {total}")
            if len({unit for unit, _ in pairs}) != len(pairs):
                problems.append(f"{name(entry)}: {label} repeats a unit")
    assert not problems, f"bad compositions:{report(problems)}"


def test_parameter_bindings_use_known_names_and_ranges(sample):
    problems = []
    for entry, body in strategic(sample):
        names = [n for n, _ in body.parameter_bindings]
        if not names:
            problems.append(f"{name(entry)}: no parameter bindings")
        if len(set(names)) != len(names):
            problems.append(f"{name(entry)}: a parameter is bound twice")
        first = body.plan.priority_targets[0] if body.plan.priority_targets else None
        for param, value in body.parameter_bindings:
            if param in WORLD_PARAMETERS:
                if first is None or first.target_type is not TargetType.ATTACK or first.position is None:
                    problems.append(f"{name(entry)}: {param} without an Attack as priority_targets[0]")
                elif value != (first.position.x if param.endswith("_x") else first.position.y):
                    problems.append(f"{name(entry)}: {param} {value} is not priority_targets[0]'s position")
            elif param not in PARAMETER_RANGES:
                problems.append(f"{name(entry)}: unknown parameter {param!r}")
            else:
                lo, hi = PARAMETER_RANGES[param]
                if not lo <= value <= hi:
                    problems.append(f"{name(entry)}: {param} {value} is outside {lo}..{hi}")
            if param == "harvester_count_target" and value != body.plan.economic_guidance.harvester_target:
                problems.append(f"{name(entry)}: harvester_count_target differs from harvester_target")
    assert not problems, f"bad parameter bindings:{report(problems)}"


def test_plans_are_complete_and_on_the_map(sample):
    problems = []
    for entry, body in strategic(sample):
        plan = body.plan
        if not 1 <= len(plan.priority_targets) <= 3:
            problems.append(f"{name(entry)}: {len(plan.priority_targets)} priority targets (1-3 expected)")
        priorities = [t.priority for t in plan.priority_targets]
        if priorities[:1] and priorities[0] != max(priorities):
            problems.append(f"{name(entry)}: the first target is not the highest priority")
        for target in plan.priority_targets:
            if not target.description:
                problems.append(f"{name(entry)}: a target has no description")
            p = target.position
            if p is not None and not (0 <= p.x <= MAP_CELLS * CELL and 0 <= p.y <= MAP_CELLS * CELL and p.z == 0):
                problems.append(f"{name(entry)}: target position {p} is off a 128x128 map")
        if not plan.reasoning or not 300 <= plan.confidence <= 900:
            problems.append(f"{name(entry)}: plan needs reasoning and a confidence of 300-900")
        if not 1 <= plan.economic_guidance.harvester_target <= 8:
            problems.append(f"{name(entry)}: harvester_target {plan.economic_guidance.harvester_target}")
        if not 0.0 <= body.situation.map_control <= 1.0:
            problems.append(f"{name(entry)}: map_control {body.situation.map_control}")
    assert not problems, f"incomplete plans:{report(problems)}"


# --- encounter patterns ---------------------------------------------------------------------------


def test_scenes_use_the_14_templates_with_all_their_parameters(sample):
    problems = []
    for entry, body in encounters(sample):
        if not body.scene_composition:
            problems.append(f"{name(entry)}: no scenes")
        for i, scene in enumerate(body.scene_composition):
            params = SCENE_TEMPLATES.get(scene.template)
            if params is None:
                problems.append(f"{name(entry)}: scene {i} uses unknown template {scene.template!r}")
                continue
            if set(scene.values) != params:
                extra, missing = set(scene.values) - params, params - set(scene.values)
                problems.append(f"{name(entry)}: {scene.template} extra {sorted(extra)} missing {sorted(missing)}")
    assert not problems, f"bad scene compositions:{report(problems)}"


def _check_values(where: str, key: str, value, module: str, problems: list[str]) -> None:
    """Sensible values for one scene parameter, by what the parameter means."""
    units, structures = UNITS[module], STRUCTURES[module]

    def unit_map(v, label):
        if not isinstance(v, dict) or not v:
            problems.append(f"{where}.{label}: expected a {{unit: count}} map")
            return
        for unit, count in v.items():
            if unit not in units:
                problems.append(f"{where}.{label}: {unit!r} is not a {module} unit")
            if not isinstance(count, int) or not 1 <= count <= 30:
                problems.append(f"{where}.{label}: count {count!r} for {unit}")

    def cell(v, label):
        if not (isinstance(v, list) and len(v) == 2 and all(isinstance(c, int) and 0 <= c < MAP_CELLS for c in v)):
            problems.append(f"{where}.{label}: {v!r} is not an [x, y] cell on a 128x128 map")

    if key in UNIT_MAP_KEYS:
        unit_map(value, key)
    elif key == "waves":
        if not isinstance(value, list) or not value:
            problems.append(f"{where}.waves: expected a list of waves")
        for i, wave in enumerate(value or []):
            unit_map(wave, f"waves[{i}]")
    elif key in ("reinforcement_schedule", "reinforcements"):
        for i, drop in enumerate(value):
            unit_map(drop.get("units"), f"{key}[{i}].units")
            for inner, v in drop.items():
                if inner in TIME_KEYS:
                    _check_values(where, inner, v, module, problems)
    elif key in TIME_KEYS:
        if not isinstance(value, int) or not 0 <= value <= 1800:
            problems.append(f"{where}.{key}: {value!r} is not a time in seconds (0-1800)")
    elif key in ZONE_KEYS:
        if not isinstance(value, dict) or set(value) != {"center", "radius"}:
            problems.append(f"{where}.{key}: expected {{center: [x, y], radius: r}}")
        else:
            cell(value["center"], f"{key}.center")
            if not isinstance(value["radius"], int) or not 1 <= value["radius"] <= 12:
                problems.append(f"{where}.{key}.radius: {value['radius']!r} cells")
    elif key in POINT_LIST_KEYS:
        if not isinstance(value, list) or not value:
            problems.append(f"{where}.{key}: expected a list of cells")
        for i, point in enumerate(value or []):
            cell(point, f"{key}[{i}]")
    elif key == "alert_radius" or key == "tech_tree_limit":
        if not isinstance(value, int) or not 1 <= value <= 10:
            problems.append(f"{where}.{key}: {value!r}")
    elif key == "type":
        if value not in WEATHER_TYPES:
            problems.append(f"{where}.type: {value!r} is not one of {sorted(WEATHER_TYPES)}")
    elif key == "intensity":
        if not isinstance(value, int | float) or not 0 < value <= 1:
            problems.append(f"{where}.intensity: {value!r} is not in (0, 1]")
    elif key == "display_mode":
        if value not in DISPLAY_MODES:
            problems.append(f"{where}.display_mode: {value!r}")
    elif key == "transport_type":
        if value not in units:
            problems.append(f"{where}.transport_type: {value!r} is not a {module} unit")
    elif key == "allowed_units":
        problems += [f"{where}.allowed_units: {u!r}" for u in value if u not in units]
    elif key == "available_structures":
        problems += [f"{where}.available_structures: {s!r}" for s in value if s not in structures]
    elif key == "start_resources":
        if not isinstance(value, int) or not 1000 <= value <= 20000:
            problems.append(f"{where}.start_resources: {value!r}")
    elif key == "skippable":
        if not isinstance(value, bool):
            problems.append(f"{where}.{key}: {value!r} is not true/false")
    elif key in ("sim_effects", "actors", "dialogue"):
        if not isinstance(value, list) or not value or not all(isinstance(x, str) and x for x in value):
            problems.append(f"{where}.{key}: expected a list of text")
    elif key == "outcomes":
        if not isinstance(value, dict) or not value:
            problems.append(f"{where}.outcomes: expected a map of outcome -> transition")
    elif not isinstance(value, str) or not value:
        problems.append(f"{where}.{key}: expected a name, got {value!r}")


def test_scene_values_are_sensible(sample):
    problems: list[str] = []
    for entry, body in encounters(sample):
        for i, scene in enumerate(body.scene_composition):
            for key, value in scene.values.items():
                _check_values(
                    f"{name(entry)} scene {i} ({scene.template})", key, value, entry.skill.game_module, problems
                )
    assert not problems, f"implausible scene values:{report(problems)}"


def test_mission_structure_fits_the_module(sample):
    problems = []
    for entry, body in encounters(sample):
        hints, module = body.mission_structure, entry.skill.game_module
        if hints.player_faction not in FACTIONS[module]:
            problems.append(f"{name(entry)}: player_faction {hints.player_faction!r} is not a {module} faction")
        if hints.difficulty not in MISSION_DIFFICULTIES:
            problems.append(f"{name(entry)}: difficulty {hints.difficulty!r}")
        if not hints.mission_type or not hints.objectives:
            problems.append(f"{name(entry)}: needs a mission_type and objectives")
        if hints.estimated_minutes is None or not 5 <= hints.estimated_minutes <= 90:
            problems.append(f"{name(entry)}: estimated_minutes {hints.estimated_minutes}")
        if not {"victory", "defeat"} <= set(hints.outcomes):
            problems.append(f"{name(entry)}: outcomes {list(hints.outcomes)} lack victory or defeat")
    assert not problems, f"bad mission structure:{report(problems)}"


# --- verified examples ----------------------------------------------------------------------------


def test_ai_examples_reply_with_a_valid_strategic_plan(sample):
    problems = []
    for entry in sample:
        body = entry.skill.body
        if entry.skill.domain is not Domain.AI_STRATEGY or not isinstance(body, VerifiedExample):
            continue
        if "Current game state" not in body.prompt_context:
            problems.append(f"{name(entry)}: prompt_context does not show the game state")
        try:
            plan = json.loads(body.response)
            parse_body(
                {"StrategicPattern": {"situation": {"game_phase": "Mid", "economy_state": "Even"}, "plan": plan}}
            )
        except ValueError as error:  # JSONDecodeError and ValidationError are both ValueErrors
            problems.append(f"{name(entry)}: response is not a valid StrategicPlan: {error}")
    assert not problems, f"bad AI examples:{report(problems)}"


def test_content_examples_reply_with_mission_yaml(sample):
    problems = []
    for entry in sample:
        body = entry.skill.body
        if entry.skill.domain is not Domain.CONTENT_GENERATION or not isinstance(body, VerifiedExample):
            continue
        try:
            mission = yaml.safe_load(body.response)["mission"]
        except (yaml.YAMLError, TypeError, KeyError) as error:
            problems.append(f"{name(entry)}: response is not a mission YAML document ({error})")
            continue
        if mission.get("player_faction") not in FACTIONS[entry.skill.game_module]:
            problems.append(f"{name(entry)}: player_faction {mission.get('player_faction')!r}")
        for i, scene in enumerate(mission.get("scenes") or [{}]):
            params = SCENE_TEMPLATES.get(scene.get("template"))
            if params is None:
                problems.append(f"{name(entry)}: scene {i} template {scene.get('template')!r}")
            elif set(scene.get("values", {})) != params:
                problems.append(f"{name(entry)}: scene {i} ({scene['template']}) parameters differ from the template's")
            else:
                for key, value in scene["values"].items():
                    _check_values(f"{name(entry)} scene {i}", key, value, entry.skill.game_module, problems)
    assert not problems, f"bad content examples:{report(problems)}"


# --- hygiene --------------------------------------------------------------------------------------


def test_no_personal_data_in_the_files(sample):
    problems = []
    for entry in sample:
        text = entry.path.read_text(encoding="utf-8")
        problems += [f"{name(entry)}: looks like an e-mail address: {m.group(0)}" for m in EMAIL.finditer(text)]
        problems += [f"{name(entry)}: looks like a local path: {m.group(0)}" for m in LOCAL_PATH.finditer(text)]
        if "http://" in text or "https://" in text:
            problems.append(f"{name(entry)}: contains a URL")
    assert not problems, f"personal data in the sample:{report(problems)}"


def test_sample_files_are_small(sample):
    """D057: a skill is about 1-5 KB; the verification history adds a little."""
    big = [f"{name(e)}: {e.path.stat().st_size} bytes" for e in sample if e.path.stat().st_size > 8 * 1024]
    assert not big, f"sample files over 8 KB:{report(big)}"


def test_sample_dir_is_inside_the_resources(sample):
    assert sample_dir().name == "sample_library"
    assert all(Path(e.path).is_relative_to(sample_dir()) for e in sample)
