"""The editing session without Qt: form, dirty state, validation, raw YAML, saving, the library
changing underneath (skillstudio/curation/session.py)."""

from __future__ import annotations

import gc
import weakref
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from skillstudio.curation.form import (
    EncounterForm,
    FormState,
    InstructionsForm,
    SceneForm,
    StrategicForm,
    default_body_form,
)
from skillstudio.curation.session import (
    Conflict,
    EditSession,
    Failed,
    Followed,
    FormChange,
    Gone,
    Invalid,
    Refined,
    Saved,
    Unchanged,
    YamlApplied,
    YamlRejected,
)
from skillstudio.model import BodyKind, Confidence, Domain, Issue, Quality, Source, SourceKind
from skillstudio.packages.importer import Incoming, apply_plan, plan_import
from skillstudio.packages.prune import apply_prune, plan_prune
from skillstudio.store import Actor, Database, LibraryChange, SkillExtras, SkillRepository
from tests.factories import ai_skill, content_skill, example_skill, instructions_skill
from tests.outside import another_program

ALL_KINDS = [ai_skill, content_skill, example_skill, instructions_skill]


class Recorder:
    """Every event a session emits, in order, as (event name, value)."""

    def __init__(self, session: EditSession) -> None:
        self.seen: list[tuple[str, object]] = []
        for name in ("base", "form", "validated", "dirty", "status"):
            getattr(session.events, name).connect(lambda value, name=name: self.seen.append((name, value)))

    def names(self) -> list[str]:
        return [name for name, _value in self.seen]

    def of(self, name: str) -> list:
        return [value for seen, value in self.seen if seen == name]


@pytest.fixture
def changes(database: Database) -> list[LibraryChange]:
    seen: list[LibraryChange] = []
    database.changes.subscribe(seen.append)
    return seen


def renamed(session: EditSession, name: str) -> FormState:
    return replace(session.form, name=name)


# --- the form ----------------------------------------------------------------------------------


@pytest.mark.parametrize("make", ALL_KINDS)
def test_an_untouched_form_describes_the_skill_exactly(repository: SkillRepository, make) -> None:
    stored = repository.create(make())
    session = EditSession(stored)
    assert session.valid_skill == stored and session.issues == ()
    assert not session.dirty and session.form == session.saved_form == FormState.of(stored)
    assert session.form.body_kind is stored.body_kind


def test_a_new_session_starts_blank_and_hand_authored() -> None:
    session = EditSession(None, author="mira")
    assert session.is_new and session.skill is None
    assert session.form.body_kind is BodyKind.STRATEGIC_PATTERN and session.form.domain is Domain.AI_STRATEGY
    assert session.base_document["created_by"] == "mira"
    assert session.base_document["provenance"]["source"] == "hand_authored"
    assert session.issues == (Issue("name", "must not be empty"),) and session.valid_skill is None
    session.set_author("noor")
    assert session.base_document["created_by"] == "noor"


def test_dirty_follows_the_form_and_is_announced_when_it_flips(repository: SkillRepository) -> None:
    session = EditSession(repository.create(content_skill(name="Before")))
    events = Recorder(session)
    assert session.set_form(renamed(session, "After"), "name", merge="name#1")
    assert session.dirty
    [change] = events.of("form")
    assert change == FormChange(session.saved_form, session.form, "name", "name#1", undoable=True)
    assert events.of("dirty") == [True]
    assert not session.set_form(renamed(session, "After"))  # the same form: nothing happens
    assert len(events.of("form")) == 1
    session.restore(renamed(session, "Before"), "name")  # undo
    assert not session.dirty and events.of("dirty") == [True, False]
    assert events.of("form")[-1].undoable is False
    assert events.names() == ["form", "validated", "dirty", "form", "validated", "dirty"]


def test_listeners_that_go_away_stop_listening(repository: SkillRepository) -> None:
    session = EditSession(repository.create(content_skill()))

    class View:
        def __init__(self) -> None:
            self.names: list[str] = []

        def on_form(self, change: FormChange) -> None:
            self.names.append(change.after.name)

    kept, dropped = View(), View()
    session.events.form.connect(kept.on_form)
    disconnect = session.events.form.connect(dropped.on_form)
    disconnect()
    session.set_form(renamed(session, "One"))
    assert kept.names == ["One"] and dropped.names == []
    gone = weakref.ref(kept)
    del kept  # a bound method is held weakly: the session does not keep a closed view alive
    gc.collect()
    assert gone() is None
    session.set_form(renamed(session, "Two"))  # and emitting past it is fine


# --- validation --------------------------------------------------------------------------------


def test_problems_carry_the_path_of_their_field(repository: SkillRepository) -> None:
    session = EditSession(repository.create(ai_skill()))
    body = session.form.body
    assert isinstance(body, StrategicForm)
    target = replace(body.plan.priority_targets[0], priority=14)
    plan = replace(body.plan, priority_targets=(target,))
    session.set_form(replace(session.form, name="  ", body=replace(body, plan=plan)))
    assert [str(issue) for issue in session.issues] == [
        "name: must not be empty",
        "body.plan.priority_targets[0].priority: 14 is outside 1..10",
    ]
    assert session.valid_skill is None
    bindings = (("aggression", "lots"),)  # text typed in a number column stays text
    session.set_form(replace(session.form, name="Named", body=replace(body, parameter_bindings=bindings)))
    [issue] = session.issues
    assert issue.path.startswith("body.parameter_bindings[0]")


def test_a_scene_value_that_is_not_yaml_is_a_problem_of_that_parameter(repository: SkillRepository) -> None:
    session = EditSession(repository.create(content_skill()))
    body = session.form.body
    assert isinstance(body, EncounterForm)
    scene = body.scene_composition[1]
    bad = replace(scene, values=(("pickup_zone", "{center: [51, 24"), *scene.values[1:]))
    scenes = (body.scene_composition[0], bad)
    session.set_form(replace(session.form, body=replace(body, scene_composition=scenes)))
    [issue] = session.issues
    assert issue.path == "body.scene_composition[1].values.pickup_zone"
    assert issue.message.startswith("is not valid YAML")
    good = replace(scene, values=(("pickup_zone", "{center: [51, 24], radius: 3}"), *scene.values[1:]))
    session.set_form(replace(session.form, body=replace(body, scene_composition=(scenes[0], good))))
    assert session.issues == ()
    values = session.document()["body"]["EncounterPattern"]["scene_composition"][1]["values"]
    assert values["pickup_zone"] == {"center": [51, 24], "radius": 3}


def test_the_domain_must_allow_the_body(repository: SkillRepository) -> None:
    session = EditSession(repository.create(ai_skill()))
    session.set_form(replace(session.form, domain=Domain.CONTENT_GENERATION))
    assert [issue.path for issue in session.issues] == ["body"]
    session.set_form(
        replace(session.form, body=default_body_form(BodyKind.ENCOUNTER_PATTERN), domain=Domain.CONTENT_GENERATION)
    )
    assert session.issues == () and session.valid_skill.body_kind is BodyKind.ENCOUNTER_PATTERN


# --- raw YAML ----------------------------------------------------------------------------------


@pytest.mark.parametrize("make", ALL_KINDS)
def test_yaml_round_trips_through_the_form(repository: SkillRepository, make) -> None:
    session = EditSession(repository.create(make()))
    text = session.yaml_text()
    assert session.apply_yaml(text) == YamlApplied(changed=False)
    assert not session.dirty


def test_applied_yaml_is_one_edit_and_read_only_fields_stay(repository: SkillRepository) -> None:
    stored = repository.create(instructions_skill(name="Wave checklist"))
    session = EditSession(stored)
    events = Recorder(session)
    text = session.yaml_text()
    edited = text.replace("name: Wave checklist", "name: Wave checklist (raw)")
    edited = edited.replace(f"id: {stored.id}", "id: 00000000-0000-4000-8000-999999999999")
    result = session.apply_yaml(edited)
    assert result == YamlApplied(changed=True, ignored=("id",))
    assert session.form.name == "Wave checklist (raw)" and session.dirty
    assert session.valid_skill.id == stored.id  # the id stays the one read
    [change] = events.of("form")
    assert change.key == "raw" and change.undoable and change.before.name == "Wave checklist"


def test_bad_yaml_is_a_typed_problem_with_line_and_column(repository: SkillRepository) -> None:
    session = EditSession(repository.create(instructions_skill(name="Wave checklist")))
    result = session.apply_yaml("name: ok\nbody: [unclosed\n")
    assert isinstance(result, YamlRejected)
    [problem] = result.problems
    assert (problem.line, problem.column) == (3, 1) and problem.message.startswith("not valid YAML")
    assert str(problem).startswith("line 3, column 1: not valid YAML")
    result = session.apply_yaml(session.yaml_text().replace("domain: content_generation", "domain: nonsense"))
    assert isinstance(result, YamlRejected)
    assert [(p.path, p.line) for p in result.problems] == [("domain", None)]
    assert str(result.problems[0]).startswith("domain: 'nonsense'")
    assert session.form.name == "Wave checklist" and not session.dirty  # nothing applied


def test_an_invalid_form_still_shows_as_yaml(repository: SkillRepository) -> None:
    session = EditSession(repository.create(content_skill(name="Ambush")))
    session.set_form(renamed(session, ""))
    assert "name: ''" in session.yaml_text() and "review_state" not in session.yaml_text()


# --- saving ------------------------------------------------------------------------------------


def test_saving_a_hand_authored_skill_updates_it_in_place(repository: SkillRepository, changes) -> None:
    stored = repository.create(content_skill(name="Before"))
    session = EditSession(stored)
    session.set_form(renamed(session, "After"))
    outcome = session.save(repository, message="clearer")
    assert isinstance(outcome, Saved) and not outcome.created
    assert outcome.skill.id == stored.id and outcome.skill.version == stored.version + 1
    assert repository.get(stored.id).name == "After"
    assert repository.history.revisions(stored.id)[-1].message == "clearer"
    assert session.skill == outcome.skill and not session.dirty
    assert changes[-1].started_by(session)  # its own write: it can tell the echo
    assert session.follow(changes[-1], repository) is Followed.IGNORED


@pytest.mark.parametrize("make", [ai_skill, example_skill], ids=["llm-discovered", "workshop"])
def test_saving_an_agents_skill_refines_it_into_a_new_human_refined_skill(repository: SkillRepository, make) -> None:
    original = repository.create(make(quality=Quality(9, 0.8, None, Confidence.PROVEN, None)))
    session = EditSession(original)
    assert session.becomes_refinement
    session.set_form(renamed(session, "Sharper"))
    outcome = session.save(repository.as_actor(Actor("mira")))
    assert isinstance(outcome, Refined) and outcome.original == original
    refinement = outcome.skill
    assert refinement.id != original.id and refinement.provenance.source == Source.human_refined(original.id)
    assert refinement.created_by == "mira" and refinement.quality == Quality()
    assert repository.get(original.id) == original
    # The session now edits the refinement: the next save updates it in place.
    assert session.skill == refinement and not session.becomes_refinement and not session.dirty
    assert session.base_document["provenance"]["original_id"] == original.id
    session.set_form(renamed(session, "Sharper still"))
    again = session.save(repository)
    assert isinstance(again, Saved) and again.skill.id == refinement.id
    assert repository.refinements_of(original.id) == [refinement.id]


def test_a_new_skill_is_saved_hand_authored_by_the_saving_actor(repository: SkillRepository) -> None:
    session = EditSession(None, author="tester")
    session.set_form(replace(session.form, name="Brand new"))
    outcome = session.save(repository.as_actor(Actor("noor")))
    assert isinstance(outcome, Saved) and outcome.created
    stored = repository.get(outcome.skill.id)
    assert stored.source_kind is SourceKind.HAND_AUTHORED and stored.created_by == "noor"
    assert not session.is_new and session.skill == stored


def test_a_new_body_type_is_saved(repository: SkillRepository) -> None:
    session = EditSession(None)
    body = replace(default_body_form(BodyKind.INSTRUCTIONS), instructions="# Waves", tools=("Read",))
    assert isinstance(body, InstructionsForm)
    session.set_form(replace(session.form, name="Checklist", domain=Domain.CONTENT_GENERATION, body=body))
    outcome = session.save(repository)
    assert isinstance(outcome, Saved)
    assert repository.get(outcome.skill.id).body.tools == ("Read",)


def test_an_unchanged_or_invalid_form_writes_nothing(repository: SkillRepository) -> None:
    stored = repository.create(ai_skill())
    session = EditSession(stored)
    assert session.save(repository) == Unchanged(stored)
    session.set_form(renamed(session, ""))
    outcome = session.save(repository)
    assert isinstance(outcome, Invalid) and outcome.issues == (Issue("name", "must not be empty"),)
    assert len(repository.history.audit()) == 1 and repository.count() == 1


@pytest.mark.parametrize("make", [content_skill, ai_skill], ids=["in-place", "refinement"])
def test_a_concurrent_change_is_a_conflict_and_reload_keeps_the_edit_one_undo_away(
    repository: SkillRepository, database: Database, make
) -> None:
    stored = repository.create(make(name="Ours at first"))
    session = EditSession(stored)
    with another_program(database) as other:  # no change is announced
        other.execute(text("UPDATE skills SET name = 'Theirs' WHERE id = :id"), {"id": stored.id})
    session.set_form(renamed(session, "Mine"))
    mine = session.form
    outcome = session.save(repository)
    assert isinstance(outcome, Conflict)
    assert outcome.theirs.name == "Theirs" and outcome.yours.name == "Mine" and "nothing was saved" in outcome.message
    assert repository.get(stored.id).name == "Theirs" and repository.count() == 1
    assert session.form == mine and session.dirty  # the edit is kept

    events = Recorder(session)
    session.reload(outcome.theirs)
    assert session.form.name == "Theirs" and not session.dirty
    [change] = events.of("form")
    assert change.key == "reload" and change.undoable and change.before == mine
    session.restore(change.before, "reload")  # undo: my edit on top of their version
    outcome = session.save(repository)
    assert isinstance(outcome, Saved | Refined) and outcome.skill.name == "Mine"


def test_a_store_refusal_is_failed_not_gone(repository: SkillRepository) -> None:
    partner = repository.create(content_skill(name="Soon gone"))
    session = EditSession(repository.create(content_skill(name="Keeper")))
    session.set_form(replace(session.form, composable_with=(partner.id,)))
    repository.trash.delete(partner.id)
    outcome = session.save(repository)
    assert isinstance(outcome, Failed) and "no skill with id" in str(outcome.error)
    assert session.status.departure is None


def test_saving_a_skill_that_left_the_library_is_gone(repository: SkillRepository) -> None:
    stored = repository.create(ai_skill())
    session = EditSession(stored)
    session.set_form(renamed(session, "Mine"))
    repository.trash.delete(stored.id)  # not followed: found out on saving
    outcome = session.save(repository)
    assert isinstance(outcome, Gone) and "no longer in this library" in outcome.reason
    assert session.status.departure == outcome.reason and repository.count() == 0


def test_a_closed_library_takes_nothing(repository: SkillRepository) -> None:
    session = EditSession(None)
    session.set_form(renamed(session, "New"))
    session.detach("its library was closed")
    assert session.save(repository) == Gone("its library was closed")
    assert repository.count() == 0


# --- following the library ---------------------------------------------------------------------

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def test_a_pruned_skill_has_left_the_library(repository: SkillRepository, changes) -> None:
    old = (NOW - timedelta(days=100)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    stale = repository.create(ai_skill(created_at=old, quality=Quality(1, 0.1, None, Confidence.TENTATIVE, old)))
    session = EditSession(stale)
    events = Recorder(session)
    session.set_form(renamed(session, "Mine"))
    assert apply_prune(repository.as_actor(Actor("mira")), plan_prune(repository, now=NOW)) == 1
    assert session.follow(changes[-1], repository) is Followed.LEFT
    assert session.status.departure == "was pruned (moved to the trash) by mira"
    assert events.of("status")[-1].departure == session.status.departure
    outcome = session.save(repository)
    assert isinstance(outcome, Gone) and outcome.reason == session.status.departure
    # Restored: it is back and can be saved.
    repository.trash.restore(stale.id)
    assert session.follow(changes[-1], repository) is Followed.RETURNED
    assert session.status.departure is None
    assert isinstance(session.save(repository), Refined)


def _import(repository: SkillRepository, skills, version: str, mode="merge") -> None:
    origin = f"workshop:someone/pack@{version}"
    incoming = [Incoming(f"skills/{s.id}.json", s, SkillExtras(origin=origin)) for s in skills]
    apply_plan(repository, plan_import(repository, incoming, origin=origin, source="pack", mode=mode, signer=None))


def test_a_skill_an_import_moved_to_the_trash_has_left_the_library(repository: SkillRepository, changes) -> None:
    kept, dropped = ai_skill(name="Kept"), ai_skill(name="Dropped")
    _import(repository, [kept, dropped], "1.0.0")
    session = EditSession(repository.get(dropped.id))
    other = EditSession(repository.get(kept.id))
    _import(repository, [kept], "2.0.0", mode="replace")  # version 2 no longer has it
    change = changes[-1]
    assert change.removes(dropped.id)
    assert session.follow(change, repository) is Followed.LEFT
    assert "by an import" in session.status.departure
    assert other.follow(change, repository) is Followed.IGNORED


def test_a_change_elsewhere_reloads_a_clean_form_and_marks_a_dirty_one_stale(
    repository: SkillRepository, changes
) -> None:
    stored = repository.create(content_skill(name="First"))
    session = EditSession(stored)
    repository.update(replace(repository.get(stored.id), name="Second"))
    assert session.follow(changes[-1], repository) is Followed.RELOADED
    assert session.form.name == "Second" and not session.dirty
    session.set_form(renamed(session, "Mine"))
    repository.as_actor(Actor("noor")).update(replace(repository.get(stored.id), name="Third"))
    assert session.follow(changes[-1], repository) is Followed.STALE
    assert session.status.stale_by == "noor" and session.form.name == "Mine"
    assert isinstance(session.save(repository), Conflict)


def test_a_review_or_verification_refreshes_the_read_only_fields(repository: SkillRepository, changes) -> None:
    from skillstudio.model import ReviewState

    stored = repository.create(content_skill())
    session = EditSession(stored)
    session.set_form(renamed(session, "Mine"))
    repository.reviews.review(stored.id, ReviewState.APPROVED, version=stored.version)
    assert session.follow(changes[-1], repository) is Followed.REFRESHED
    assert session.base_document["review_state"] == "approved"
    assert session.form.name == "Mine" and session.status.stale_by is None


def test_changes_to_other_skills_are_ignored(repository: SkillRepository, changes) -> None:
    session = EditSession(repository.create(content_skill()))
    other = repository.create(content_skill())
    repository.trash.delete(other.id)
    assert session.follow(changes[-1], repository) is Followed.IGNORED
    assert EditSession(None).follow(changes[-1], repository) is Followed.IGNORED


def test_scene_forms_keep_the_text_as_typed() -> None:
    scene = SceneForm("ambush", (("position", "north_bridge"), ("delay", "300")))
    form = EncounterForm((scene,), default_body_form(BodyKind.ENCOUNTER_PATTERN).mission_structure)
    issues: list[Issue] = []
    assert form.document(issues)["scene_composition"] == [
        {"template": "ambush", "values": {"position": "north_bridge", "delay": 300}}
    ]
    assert issues == []
