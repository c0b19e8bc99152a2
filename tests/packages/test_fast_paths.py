"""Issue 17's fast paths give exactly what the simple paths they replace gave.

Each test runs a simple reference (the old code kept here, or for the privacy scan its plain
definition) and the fast path on the same data, the synthetic library and adversarial inputs,
and fails on any difference.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from dataclasses import replace
from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.synthetic import generate_skills
from skillstudio.model import Domain, ReviewState, Skill, skill_to_document
from skillstudio.model import enums as model_enums
from skillstudio.packages import importer, privacy
from skillstudio.packages.icpkg import export_package, read_package
from skillstudio.packages.importer import ImportPlan, apply_plan, incoming_from_package, plan_import
from skillstudio.packages.privacy import Finding, marker_rules, scan_document
from skillstudio.store import Actor, Database, SkillRepository
from tests.packages.helpers import META

USER_NAMES = ("kessler", "Ann-Marie")


@cache
def synthetic_skills() -> list[Skill]:
    return generate_skills(1500, seed=57)


# --- the privacy scan -----------------------------------------------------------------------


def _reference_texts(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if path in privacy._SKIPPED:
        return
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _reference_texts(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for item in value:
            yield from _reference_texts(item, path)


def reference_scan(document: dict[str, Any], skill_id: str, user_names: tuple[str, ...]) -> list[Finding]:
    """What the scan is: every rule's pattern run along every text. The markers, which skip texts,
    and the starts, which skip positions, must change nothing (the scan before issue 17 already
    skipped texts whose lowercase held no marker, and so missed "paſſword=..." spellings)."""
    findings: list[Finding] = []
    for path, text in _reference_texts(document, ""):
        for kind, pattern, _ in marker_rules(user_names):
            findings.extend(Finding(skill_id, path, kind, match.group(0).strip()) for match in pattern.finditer(text))
    return findings


# Markers overlapping, inside each other, across field boundaries, beside NULs, after case
# changes that alter a string's length (İ lowercases to two characters) or make ASCII (the
# Kelvin sign lowercases to k).
ADVERSARIAL = [
    "see .replay/ and replays\\x and ./replay/foo.orarep",
    "MATCH-42ab match_id: abcd-1234 match-id=zz99 lobby 0123abcd-0123-4567-89ab-0123456789ab",
    "İİİ player 2 'Ann' then PLAYER: Bob, opponent_name=Cara; enemy name: Dee",
    "\u212aey: hunter22 pass\u212aword=swordfish api-key = 'abcd1234' auth_token:xyz12345",
    "sk-proj-ABCDEFGHIJKLMNOPQRSTUV AKIAABCDEFGHIJKLMNOP ghp_abcdefghijklmnopqrstuvwxyz xoxb-1234567890ab",
    "AIzaabcdefghijklmnopqrstuvwxyz0123456789 mail bob.smith@example.co.uk now",
    "/home/kessler/maps C:\\Users\\ann\\x /Users/ann-marie/replays/r.icrep",
    "ann-marie and Kessler, KESSLER2 and xkessler, Ann-Marie.",
    "mat\x00ch-12 play\x00er: x na\x00me= key\x00: value",
    "ΣΑΣ match ΣΑΣ. game 89abcdef-0123-4567-89ab-0123456789ab ends",
    "",
    "player\nplayer 3 “Quoted Name” player:player:player",
    # markers sharing characters, each alone in its text: replay/ and /home/, match- and match
    "replay/home/kessler/x",
    "saved.replay/home/bob",
    "match-id: abcd1234",
    # anchored rules: starts inside words, next to each other, inside an earlier match, in capitals
    "endgame 0123abcd-0123-4567-89ab-0123456789ab GAME 0123ABCD-0123-4567-89AB-0123456789AB",
    "lobby lobby 89abcdef-0123-4567-89ab-0123456789ab,game\t89abcdef-0123-4567-89ab-0123456789ab",
    "multiplayer: x player:player 2: y PLAYER2 'Zed' enemyname=Q opponent name: R_player_name=S",
    "rematch-ab12 match-match-12 match_id=game-1234 matchid 0123abcd-0123-4567-89ab-0123456789ab",
    # spellings (?i) matches whose lowercase is another letter: ſ is s, ı and İ are i, K is k
    "paſſword=swordfish",
    "secret_\u212aey: abcd1234",
    "Keſſler ann-marıe ANN-MARİE",
]


def _with_texts(document: dict[str, Any], texts: list[str]) -> dict[str, Any]:
    out = copy.deepcopy(document)
    out["description"] = texts[0]
    out["name"] = texts[-1]
    out["tags"] = list(texts)
    out["provenance"]["source_id"] = texts[0]  # skipped field: never scanned
    return out


@pytest.mark.parametrize("user_names", [(), USER_NAMES])
def test_scan_finds_what_every_pattern_finds_on_the_synthetic_library(user_names: tuple[str, ...]) -> None:
    found = 0
    for index, skill in enumerate(synthetic_skills()):
        document = skill_to_document(skill, local=False)
        if index % 7 == 0:  # the synthetic library holds no player data: plant some in its prose
            document["description"] += f" {ADVERSARIAL[index % len(ADVERSARIAL)]}"
        expected = reference_scan(document, skill.id, user_names)
        assert scan_document(document, skill.id, user_names) == expected
        found += len(expected)
    assert found  # the library holds some: the comparison covers findings, not only their absence


@pytest.mark.parametrize("user_names", [(), USER_NAMES])
def test_scan_finds_what_every_pattern_finds_in_adversarial_text(user_names: tuple[str, ...]) -> None:
    base = skill_to_document(synthetic_skills()[0], local=False)
    for count in range(1, len(ADVERSARIAL) + 1):
        document = _with_texts(base, ADVERSARIAL[:count])
        assert scan_document(document, "x", user_names) == reference_scan(document, "x", user_names)
    for text in ADVERSARIAL:
        document = _with_texts(base, [text])
        assert scan_document(document, "x", user_names) == reference_scan(document, "x", user_names)
    joined = _with_texts(base, ["".join(ADVERSARIAL)])
    assert scan_document(joined, "x", user_names) == reference_scan(joined, "x", user_names)
    assert scan_document(_with_texts(base, ADVERSARIAL), "x", user_names)


_MARKERS = sorted({marker for _, _, markers in marker_rules(USER_NAMES) for marker in markers})
_PIECES = st.sampled_from(
    [
        *_MARKERS,
        *(m.upper() for m in _MARKERS),
        *(m[:-1] for m in _MARKERS),
        " ",
        "\x00",
        "İ",
        "\u212a",
        "ſ",
        "ı",
        "ß",
        "paſſword=",
        "Keſſler",
        "ann-marıe",
        ":",
        "=",
        "'",
        "2",
        "ab12",
        "0123abcd-0123-4567-89ab-0123456789ab",
        "GAME ",
        "lobby\n",
        "_",
        "x",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_PIECES, max_size=12).map("".join), min_size=1, max_size=4))
def test_scan_finds_what_every_pattern_finds_in_random_marker_soup(texts: list[str]) -> None:
    document = _with_texts(skill_to_document(synthetic_skills()[1], local=False), texts)
    assert scan_document(document, "x", USER_NAMES) == reference_scan(document, "x", USER_NAMES)


def test_every_match_of_an_anchored_rule_begins_with_one_of_its_starts() -> None:
    """What lets the scan try an anchored rule only where a start begins (``privacy._RULES``)."""
    anchored = [(pattern, starts) for _, pattern, _, starts in privacy._RULES if starts]
    assert len(anchored) == 6
    texts = [*ADVERSARIAL, " ".join(ADVERSARIAL)]
    for pattern, starts in anchored:
        matches = [m for text in texts for m in pattern.finditer(text)]
        assert matches, pattern.pattern  # the corpus exercises every anchored rule
        for match in matches:
            assert match.group(0).lower().startswith(starts), (pattern.pattern, match.group(0))


def test_no_letter_of_a_start_has_a_spelling_that_lowercases_to_something_else() -> None:
    """A start is looked for in ``text.lower()``. Under (?i) "s" also matches "ſ", whose
    lowercase is itself: a start holding an "s" would miss "ſ" spellings the pattern matches."""
    letters = sorted({letter for *_, starts in privacy._RULES for word in starts for letter in word})
    everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    for letter in letters:
        spellings = set(re.findall(f"(?i){re.escape(letter)}", everything))
        assert {spelling.lower() for spelling in spellings} == {letter}, letter


def test_every_spelling_of_a_markers_character_folds_to_that_character() -> None:
    """A marker is looked for in the folded text (``privacy._folded``), and a pattern matches
    under (?i) every spelling of its letters: each must fold to the letter, or a text the pattern
    matches would be skipped. Without the fold, "ſ" (an "s" to re, itself once lowercased) hid
    "paſſword=..." from the scan."""
    characters = sorted({c for _, _, markers in marker_rules(USER_NAMES) for marker in markers for c in marker})
    everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    for character in characters:
        spellings = set(re.findall(f"(?i){re.escape(character)}", everything))
        assert {privacy._folded(spelling) for spelling in spellings} == {character}, character


# --- enum spellings -------------------------------------------------------------------------


def _reference_parse(cls: type[model_enums.SpelledEnum], raw: str) -> model_enums.SpelledEnum | None:
    """SpelledEnum.parse before issue 17: every member's spellings folded on every call."""
    folded = model_enums._fold(raw)
    for member in cls:
        if folded in (model_enums._fold(member.value), model_enums._fold(member.serde)):
            return member
    aliases = cls._aliases_map()
    return cls(aliases[folded]) if folded in aliases else None


def _enum_classes() -> list[type[model_enums.SpelledEnum]]:
    return [
        value
        for value in vars(model_enums).values()
        if isinstance(value, type)
        and issubclass(value, model_enums.SpelledEnum)
        and value is not model_enums.SpelledEnum
    ]


def test_enum_parse_reads_every_spelling_as_before() -> None:
    spellings = {"", "x", "  ", "-_-", "Ai Strategy"}
    for cls in _enum_classes():
        for member in cls:
            for text in (member.value, member.serde):
                spellings |= {text, text.upper(), text.replace("_", "-"), f" {text} ", text.replace("_", " ")}
        spellings |= set(cls._aliases_map())
    for _ in range(2):  # the second time, each spelling comes from those already read
        for cls in _enum_classes():
            for raw in sorted(spellings):
                expected = _reference_parse(cls, raw)
                if expected is None:
                    with pytest.raises(ValueError, match="is not one of"):
                        cls.parse(raw)
                else:
                    assert cls.parse(raw) is expected


def test_the_spellings_an_enum_remembers_are_bounded() -> None:
    member = next(iter(Domain))
    padded = [" " * n + member.value for n in range(model_enums._READ_LIMIT + 500)]  # each reads as member
    assert all(Domain.parse(raw) is member for raw in padded)
    assert len(model_enums._READ[Domain]) <= model_enums._READ_LIMIT
    assert all(Domain.parse(raw) is member for raw in reversed(padded))


# --- re-import: unchanged skills known by their stored columns ------------------------------


def _plan_facts(plan: ImportPlan) -> tuple:
    return (plan.steps, plan.added, plan.replaced, plan.trashed, plan.warnings, plan.key_action)


def _plans_with_and_without_the_fast_path(
    repository: SkillRepository, data: bytes, monkeypatch: pytest.MonkeyPatch, mode: str = "merge"
) -> tuple[ImportPlan, ImportPlan]:
    incoming, origin = incoming_from_package(read_package(data))
    fast = plan_import(repository, incoming, origin=origin, source="p.icpkg", mode=mode)  # type: ignore[arg-type]
    with monkeypatch.context() as patch:
        patch.setattr(importer, "stored_content_keys", lambda database, ids: {})  # every skill compared in full
        full = plan_import(repository, incoming, origin=origin, source="p.icpkg", mode=mode)  # type: ignore[arg-type]
    return fast, full


@pytest.fixture
def imported(tmp_path) -> tuple[SkillRepository, list[Skill]]:
    skills = [s for s in synthetic_skills()[:400] if s.review_state is not ReviewState.REJECTED]
    database = Database(tmp_path / "target.db", create=True)
    repository = SkillRepository(database, Actor("tester", "human"))
    incoming, origin = incoming_from_package(read_package(export_package(skills, META)))
    apply_plan(repository, plan_import(repository, incoming, origin=origin, source="p.icpkg"))
    return repository, skills


def test_reimport_of_the_same_package_plans_what_the_full_comparison_plans(imported, monkeypatch) -> None:
    repository, skills = imported
    fast, full = _plans_with_and_without_the_fast_path(repository, export_package(skills, META), monkeypatch)
    assert _plan_facts(fast) == _plan_facts(full)
    assert fast.count("skip") == len(skills)


def test_a_changed_package_and_library_plan_what_the_full_comparison_plans(imported, monkeypatch) -> None:
    repository, skills = imported
    # The library edits some skills and links others to a skill of its own.
    own = repository.create(replace(skills[0], id="own-skill-0001", composable_with=(), created_by="tester"))
    edited = [repository.get(skill.id) for skill in skills[10:14]]
    repository.update_many([replace(skill, description=skill.description + " (ours)") for skill in edited])
    linked = repository.get(skills[20].id)
    repository.update(replace(linked, composable_with=(*linked.composable_with, own.id)))
    repository.trash.delete(skills[30].id)
    # A newer version of the package changes some skills, their links, provenance and quality.
    changed = list(skills)
    changed[40] = replace(changed[40], name=changed[40].name + " II")
    changed[41] = replace(changed[41], composable_with=(changed[42].id,))
    changed[43] = replace(changed[43], tags=(*changed[43].tags, "new-tag"))
    changed[44] = replace(changed[44], created_by="someone-else")
    changed[45] = replace(changed[45], use_count=changed[45].use_count + 7)  # not content
    changed.pop(50)  # no longer in the package: --replace trashes it
    changed.append(replace(own, description="Another library's text for this id."))  # another origin
    newer = replace(META, version="1.3.0")
    for mode in ("merge", "replace"):
        fast, full = _plans_with_and_without_the_fast_path(
            repository, export_package(changed, newer), monkeypatch, mode
        )
        assert _plan_facts(fast) == _plan_facts(full)
        assert {"skip", "update", "conflict" if mode == "merge" else "trash"} <= {step.action for step in fast.steps}
