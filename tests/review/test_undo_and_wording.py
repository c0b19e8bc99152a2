"""A rejection says why, a decision can be taken back (audited on its own), and the audit log
reads as sentences."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from skillstudio.cli.main import main as cli
from skillstudio.library import create_library
from skillstudio.model import ReviewState
from skillstudio.review import reject, undo
from skillstudio.review.audit import audit_sentence, named_ids
from skillstudio.store import (
    Actor,
    AuditAction,
    AuditEntry,
    ChangeKind,
    Database,
    LibraryChange,
    ReviewNotAllowed,
    ReviewRefused,
    SkillRepository,
)
from tests.factories import ai_skill


def test_undo_brings_the_state_before_back_with_an_audit_entry_of_its_own(repository: SkillRepository) -> None:
    skill = repository.create(ai_skill(review_state=ReviewState.PENDING))
    reject(repository, skill.id, "unsafe", version=skill.version)
    revisions = len(repository.history.revisions(skill.id))
    heard: list[LibraryChange] = []
    repository.database.changes.subscribe(heard.append)
    restored = undo(repository, skill.id, ReviewState.REJECTED, version=skill.version)
    assert restored.review_state is ReviewState.PENDING and repository.get(skill.id).review_state is ReviewState.PENDING
    decisions = repository.reviews.decisions(skill.id)
    assert [(d.state, d.reviewer) for d in decisions] == [("rejected", "tester"), ("pending", "tester")]
    assert len(repository.history.revisions(skill.id)) == revisions + 1 == decisions[-1].revision
    entry = repository.history.audit()[0]
    assert entry.action == AuditAction.REVIEW_UNDO and entry.skill_id == skill.id
    assert entry.details == {"state": "pending", "undid": "rejected", "comment": "unsafe", "version": skill.version}
    assert [(c.action, c.touches(ChangeKind.REVIEW)) for c in heard] == [(AuditAction.REVIEW_UNDO, True)]
    # the rejection itself stays on record
    assert [e.action for e in repository.history.audit(skill_id=skill.id)][:2] == ["skill.review_undo", "skill.review"]


def test_undo_of_a_first_decision_leaves_the_skill_unreviewed(repository: SkillRepository) -> None:
    skill = repository.create(ai_skill())  # a person's skill, never reviewed
    repository.reviews.review(skill.id, ReviewState.APPROVED, version=skill.version)
    assert undo(repository, skill.id, ReviewState.APPROVED, version=skill.version).review_state is None
    assert repository.get(skill.id).review_state is None
    assert audit_sentence(repository.history.audit()[0]) == "Took back the decision “Approved”; back to not reviewed"


def test_only_the_reviewers_newest_decision_on_unchanged_content_is_undone(repository: SkillRepository) -> None:
    skill = repository.create(ai_skill(review_state=ReviewState.PENDING))
    reject(repository, skill.id, "unsafe", version=skill.version)
    audited = len(repository.history.audit())
    with pytest.raises(ReviewRefused, match="decided again since"):  # not the decision made
        undo(repository, skill.id, ReviewState.APPROVED, version=skill.version)
    other = repository.as_actor(Actor("ines"))
    with pytest.raises(ReviewRefused, match="tester's"):  # someone else's decision
        undo(other, skill.id, ReviewState.REJECTED, version=skill.version)
    agent = repository.as_actor(Actor("agent-1", "agent"))
    with pytest.raises(ReviewNotAllowed):
        undo(agent, skill.id, ReviewState.REJECTED, version=skill.version)
    changed = repository.update(replace(repository.get(skill.id), description="Edited after the rejection."))
    with pytest.raises(ReviewRefused, match="content changed since"):
        undo(repository, skill.id, ReviewState.REJECTED, version=skill.version)
    with pytest.raises(ReviewRefused, match="content changed since"):  # the version now does not help
        undo(repository, skill.id, ReviewState.REJECTED, version=changed.version)
    assert len(repository.history.audit()) == audited + 1  # the edit; no undo was written
    assert repository.get(skill.id).review_state is ReviewState.REJECTED


def test_cli_undoes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "lib.db"
    with create_library(db, sample=False) as database:
        skill = SkillRepository(database).create(ai_skill(review_state=ReviewState.PENDING))
    assert cli(["review", "reject", skill.id, "--comment", "unsafe", "--db", str(db)]) == 0
    capsys.readouterr()
    assert cli(["review", "undo", skill.id, "--db", str(db)]) == 0
    assert "took back “Rejected”; now pending" in capsys.readouterr().out
    assert cli(["review", "undo", skill.id, "--db", str(db)]) == 1  # the undo is not a decision to undo
    assert "cannot be undone" in capsys.readouterr().err
    assert cli(["audit", "--db", str(db), "--limit", "2"]) == 0
    out = capsys.readouterr().out
    assert "Took back the decision “Rejected” (its comment: “unsafe”); back to pending" in out
    assert "Rejected (content version 1): “unsafe”" in out
    with Database(db) as database:
        assert SkillRepository(database).get(skill.id).review_state is ReviewState.PENDING


def _entry(action: str, details: dict, skill_id: str | None = "s1") -> AuditEntry:
    return AuditEntry(1, "2026-05-01T10:00:00.000Z", "alice", "human", action, skill_id, 2, details)


@pytest.mark.parametrize(
    ("action", "details", "sentence"),
    [
        ("skill.review", {"comment": "", "state": "rejected"}, "Rejected, no reason given"),
        (
            "skill.review",
            {"comment": "checked on ra1", "state": "approved", "version": 3},
            "Approved (content version 3): “checked on ra1”",
        ),
        (
            "skill.review",
            {"comment": "", "state": "changes_requested", "version": 2},
            "Changes requested (content version 2), no comment",
        ),
        ("skill.review", {"comment": "", "state": "escalated"}, "escalated, no comment"),  # a newer state
        ("skill.create", {"name": "Scout first"}, "Created “Scout first”"),
        ("skill.create", {"name": ""}, "Created"),
        (
            "skill.update",
            {"changed": ["body", "composable_with", "name"]},
            "Changed the body, links to other skills and name",
        ),
        ("skill.update", {"changed": []}, "Saved with no field changed"),
        ("skill.import", {"changed": ["description"]}, "Replaced by an import: changed the description"),
        ("skill.delete", {"name": "Scout first"}, "Moved “Scout first” to the trash"),
        ("skill.restore", {}, "Restored from the trash"),
        (
            "skill.promote",
            {
                "run": "3f2a9c1b7d4e",
                "opponent": "hard",
                "wins": 7,
                "losses": 3,
                "draws": 0,
                "errors": 0,
                "credited": True,
                "before": "tentative",
                "after": "established",
                "reason": "70% over 10 games",
            },
            "Run 3f2a9c1b7d4e: 7 wins, 3 losses against hard; Tentative → Established: 70% over 10 games",
        ),
        (
            "skill.verify",
            {"run": "3f2a9c1b7d4e", "lifts": 2, "worse_than_default_plan": ["s2"]},
            "Lift measured in run 3f2a9c1b7d4e for 2 skills; worse than the default plan: “Rush”",
        ),
        (
            "skill.compose",
            {"first": "s1", "then": "s9abcdef00", "successes": 1},
            "“Scout first” then skill s9abcdef: 1 success credited",
        ),
        ("skill.embed", {"model_id": "hash-256", "count": 1}, "Embedded with hash-256"),
        (
            "skill.privacy_mark",
            {"field": "description", "kind": "player_name", "note": "", "changed": True, "text_sha256": "ab"},
            "Marked the player name finding in description a false positive",
        ),
        (
            "library.settings",
            {"changed": {"prune.stale_days": {"from": 30, "to": 60}, "prune.max_size": {"to": 500}}},
            "Changed prune.stale_days from 30 to 60; prune.max_size set to 500",
        ),
        ("skill.from_the_future", {"comment": "", "state": "x", "tags": []}, "state x"),  # as its fields
    ],
)
def test_audit_details_read_as_sentences(action: str, details: dict, sentence: str) -> None:
    names = {"s1": "Scout first", "s2": "Rush"}
    assert audit_sentence(_entry(action, details), names) == sentence


def test_the_names_a_sentence_needs() -> None:
    entries = [
        _entry("skill.compose", {"first": "a", "then": "b"}, "a"),
        _entry("skill.verify", {"run": "r", "lifts": 1, "worse_than_default_plan": ["c"]}, None),
    ]
    assert named_ids(entries) == {"a", "b", "c"}
