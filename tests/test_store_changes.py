"""Which change each committed write announces (events.py): action, skills, actor, removed, initiator.

Pinned once for every kind of write, so that moving writes between the repository's parts cannot
change what views hear.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from skillstudio.model import Confidence, Quality, ReviewState
from skillstudio.model.evidence import EvidenceKind, VerificationRecord
from skillstudio.store import (
    Actor,
    AuditAction,
    ConflictError,
    Database,
    ImportItem,
    LibraryChange,
    QualityOutcome,
    SkillNotFound,
    SkillRepository,
    initiated_by,
)
from tests.factories import ai_skill


@pytest.fixture
def heard(database: Database) -> list[LibraryChange]:
    changes: list[LibraryChange] = []
    database.changes.subscribe(changes.append)
    return changes


def said(changes: list[LibraryChange]) -> list[tuple[str, tuple[str, ...], str, frozenset[str]]]:
    out = [(str(c.action), c.skill_ids, c.actor, c.removed) for c in changes]
    changes.clear()
    return out


def test_each_write_announces_its_change(repository: SkillRepository, heard: list[LibraryChange]) -> None:
    a, b, c = ai_skill(), ai_skill(), ai_skill()
    repository.create(a)
    repository.create_many([b, c])
    assert said(heard) == [
        ("skill.create", (a.id,), "tester", frozenset()),
        ("skill.create", (b.id, c.id), "tester", frozenset()),
    ]
    a = repository.update(replace(repository.get(a.id), name="renamed"))
    repository.update_many([replace(repository.get(b.id), tags=("x",)), replace(repository.get(c.id), tags=("y",))])
    repository.reviews.update_pending(replace(repository.get(b.id), name="agent's"))
    repository.reviews.review(a.id, ReviewState.APPROVED, comment="ok", version=a.version)
    assert said(heard) == [
        ("skill.update", (a.id,), "tester", frozenset()),
        ("skill.update", (b.id, c.id), "tester", frozenset()),
        ("skill.update", (b.id,), "tester", frozenset()),
        ("skill.review", (a.id,), "tester", frozenset()),
    ]
    repository.evidence.record_composition(a.id, b.id)
    repository.evidence.set_quality(
        a.id, QualityOutcome(Quality(10, 0.8, None, Confidence.ESTABLISHED), AuditAction.PROMOTE)
    )
    repository.embeddings.put(a.id, b"\x00\x00\x80\x3f" * 2, "embed-1")
    assert said(heard) == [
        ("skill.compose", (a.id, b.id), "tester", frozenset()),
        ("skill.promote", (a.id,), "tester", frozenset()),
        ("skill.embed", (a.id,), "tester", frozenset()),
    ]
    repository.trash.delete(a.id)
    repository.trash.delete_many([b.id, c.id], action="skill.prune")
    repository.trash.restore(b.id)
    assert said(heard) == [
        ("skill.delete", (a.id,), "tester", frozenset({a.id})),
        ("skill.prune", (b.id, c.id), "tester", frozenset({b.id, c.id})),
        ("skill.restore", (b.id,), "tester", frozenset()),
    ]
    repository.trash.empty()
    [(action, ids, actor, removed)] = said(heard)
    assert (action, sorted(ids), actor, removed) == ("skill.purge", sorted([a.id, c.id]), "tester", {a.id, c.id})


def test_an_import_announces_added_replaced_and_trashed(
    repository: SkillRepository, heard: list[LibraryChange]
) -> None:
    kept, dropped = repository.create(ai_skill()), repository.create(ai_skill())
    new = ai_skill()
    said(heard)
    repository.import_skills([ImportItem(new)], [ImportItem(replace(kept, name="imported"))], [dropped.id])
    assert said(heard) == [("skill.import", (new.id, kept.id, dropped.id), "tester", frozenset({dropped.id}))]


def test_failed_and_empty_writes_announce_nothing(repository: SkillRepository, heard: list[LibraryChange]) -> None:
    skill = repository.create(ai_skill())
    said(heard)
    with pytest.raises(ConflictError):
        repository.reviews.review(skill.id, ReviewState.APPROVED, comment="", version=skill.version + 1)
    with pytest.raises(SkillNotFound):
        repository.trash.delete("no-such-skill")
    repository.trash.delete_many([])
    repository.trash.empty()
    repository.findings.set(skill.id, [])  # computed data: neither audited nor announced
    assert said(heard) == []


def test_a_change_carries_the_initiator_and_the_actor(repository: SkillRepository, heard: list[LibraryChange]) -> None:
    view = object()
    with initiated_by(view):
        skill = repository.create(ai_skill())
    agent = repository.as_actor(Actor("agent-1", "agent"))
    agent.reviews.update_pending(replace(skill, name="agent's"))
    first, second = heard
    assert first.started_by(view) and not second.started_by(view)
    assert (first.actor, second.actor) == ("tester", "agent-1")


def test_verification_evidence_is_announced_once_per_session(
    repository: SkillRepository, heard: list[LibraryChange]
) -> None:
    skill = repository.create(ai_skill())
    said(heard)
    record = VerificationRecord("2026-01-01T00:00:00.000Z", EvidenceKind.HEADLESS, 3, 1)
    repository.evidence.set_quality(skill.id, QualityOutcome(repository.get(skill.id).quality), record=record)
    assert said(heard) == [("skill.verify", (skill.id,), "tester", frozenset())]


def test_every_audit_action_has_a_label_and_the_aspects_it_changes() -> None:
    from skillstudio.store import AuditAction, ChangeKind

    for action in AuditAction:
        assert action.label and action.label != action.value
        assert action.kinds != ChangeKind.NONE
    assert AuditAction.label_of("skill.prune") == "Prune"
    assert AuditAction.label_of("skill.from_the_future") == "skill.from_the_future"  # shown as stored
