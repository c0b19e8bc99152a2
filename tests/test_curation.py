"""Editing rules (HumanRefined provenance, reverts), diffs and the YAML form; no Qt."""

from __future__ import annotations

from dataclasses import replace

import pytest

from skillstudio.curation import new_skill, revert_to_revision, save_edit
from skillstudio.model import Confidence, Quality, Source, SourceKind, ValidationError
from skillstudio.model.diff import side_by_side, unified_diff
from skillstudio.model.yaml_form import skill_from_yaml, skill_to_yaml
from skillstudio.store import Actor, ConflictError, Database, SkillRepository
from tests.factories import ai_skill, content_skill, example_skill
from tests.outside import engine_writes

VERIFIED = Quality(14, 0.78, None, Confidence.PROVEN, "2026-04-01T00:00:00.000Z")


@pytest.fixture
def editor(repository: SkillRepository) -> SkillRepository:
    return repository.as_actor(Actor("mira"))


@pytest.mark.parametrize("make", [ai_skill, example_skill])  # llm_discovered, workshop
def test_editing_an_agents_or_workshop_skill_creates_a_refinement(editor: SkillRepository, make) -> None:
    original = editor.create(make(quality=VERIFIED, use_count=9))
    outcome = save_edit(editor, original, replace(original, name="Sharper", tags=("refined",)), message="tighter")
    refinement = outcome.skill
    assert outcome.refined_from == original.id and refinement.id != original.id
    assert refinement.provenance.source == Source.human_refined(original.id)
    assert refinement.created_by == "mira"
    assert refinement.quality == Quality()  # tentative, no evidence carried over
    assert refinement.use_count == 0 and refinement.name == "Sharper"
    assert refinement.provenance.game_module == original.provenance.game_module
    assert editor.get(original.id) == original  # the original is untouched...
    assert editor.refinements_of(original.id) == [refinement.id]  # ...and superseded
    assert editor.history.revisions(refinement.id)[0].message == "tighter"


@pytest.mark.parametrize("source", [Source.hand_authored(), Source.human_refined("x")])
def test_editing_a_human_skill_updates_it_in_place(editor: SkillRepository, source: Source) -> None:
    original = editor.create(
        content_skill(provenance=replace(content_skill().provenance, source=source), quality=VERIFIED)
    )
    outcome = save_edit(editor, original, replace(original, description="clearer"))
    assert outcome.refined_from is None and outcome.skill.id == original.id
    assert outcome.skill.description == "clearer" and outcome.skill.version == original.version + 1
    assert outcome.skill.quality == VERIFIED  # evidence stays with an in-place edit
    assert [r.action for r in editor.history.revisions(original.id)] == ["create", "update"]


def test_an_unchanged_edit_writes_nothing(editor: SkillRepository) -> None:
    original = editor.create(ai_skill())
    outcome = save_edit(editor, original, replace(original))
    assert not outcome.changed and editor.count() == 1 and len(editor.history.audit()) == 1


@pytest.mark.parametrize("make", [ai_skill, content_skill])
def test_a_stale_edit_is_a_conflict_on_both_paths(editor: SkillRepository, database: Database, make) -> None:
    original = editor.create(make())
    with engine_writes(database) as other:
        other.execute("UPDATE skills SET name = 'changed meanwhile' WHERE id = ?", (original.id,))
    with pytest.raises(ConflictError) as caught:
        save_edit(editor, original, replace(original, description="mine"))
    assert caught.value.theirs.name == "changed meanwhile"
    assert caught.value.yours.description == "mine"  # what would have been stored
    assert editor.count() == 1


def test_new_skill_is_hand_authored_by_the_editor(editor: SkillRepository) -> None:
    stored = new_skill(editor, ai_skill(quality=VERIFIED))
    assert stored.source_kind is SourceKind.HAND_AUTHORED and stored.created_by == "mira"
    assert stored.quality == Quality()


def test_revert_is_a_new_revision_that_keeps_the_evidence(editor: SkillRepository) -> None:
    original = editor.create(content_skill(quality=VERIFIED))
    edited = editor.update(replace(original, name="Second name"))
    editor.update(replace(edited, name="Third name"))
    reverted = revert_to_revision(editor, original.id, 1)
    assert reverted.name == original.name and reverted.quality == VERIFIED
    history = editor.history.revisions(original.id)
    assert [r.number for r in history] == [1, 2, 3, 4] and history[-1].message == "revert to revision 1"


def test_diffs_show_what_changed() -> None:
    old = ai_skill()
    new = replace(old, name="Renamed", tags=(*old.tags, "extra"))
    text = unified_diff(old, new, old_label="revision 1", new_label="revision 2")
    assert "-name: Rocket screen against early armour" in text and "+name: Renamed" in text
    assert "+- extra" in text
    rows = side_by_side(old, new)
    changed = [row for row in rows if row.kind != "equal"]
    assert any(row.old == "name: Rocket screen against early armour" and row.new == "name: Renamed" for row in changed)
    assert sum(row.kind == "equal" for row in rows) > 20
    assert unified_diff(old, old) == "" and all(row.kind == "equal" for row in side_by_side(old, old))


def test_yaml_form_round_trips_and_reports_errors_with_lines() -> None:
    skill = content_skill(description="two\nlines")
    text = skill_to_yaml(skill)
    assert "description: |" in text and "review_state" not in text
    assert skill_from_yaml(text) == skill
    with pytest.raises(ValidationError, match=r"line 2, column \d+: not valid YAML"):
        skill_from_yaml("name: x\n  bad: [indent\n")
    with pytest.raises(ValidationError, match=r"body.scene_composition\[0\].template: expected text"):
        skill_from_yaml(text.replace("template: ambush", "template: [1, 2]"))


def test_changing_only_tags_or_links_of_an_agent_skill_stays_in_place(editor: SkillRepository) -> None:
    partner = editor.create(ai_skill())
    original = editor.create(ai_skill())
    outcome = save_edit(editor, original, replace(original, tags=("curated",), composable_with=(partner.id,)))
    assert outcome.refined_from is None and outcome.skill.id == original.id
    assert outcome.skill.tags == ("curated",) and editor.count() == 2


def test_bulk_retag_is_one_transaction(editor: SkillRepository) -> None:
    from skillstudio.curation import retag

    a = editor.create(ai_skill(tags=("early-game",)))
    b = editor.create(content_skill(tags=("ambush",)))
    changed = retag(editor, [a.id, b.id], add=["reviewed"], remove=["ambush"])
    assert [s.tags for s in changed] == [("early-game", "reviewed"), ("reviewed",)]
    assert editor.history.revisions(b.id)[-1].message == "tags +reviewed, -ambush"
    assert retag(editor, [a.id], add=["reviewed"]) == []  # nothing to change, nothing written
