"""Guard rails in the repository itself (not only in the agent tool), a rate limit kept in the
library (shared by every process of one agent), and truthful answers after a committed write."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from skillstudio.agents import AgentSkillTool, AgentToolError
from skillstudio.model import ReviewState
from skillstudio.review.linter import Linter
from skillstudio.store import Actor, Database, LibraryBusy, ReviewNotAllowed, SkillRepository
from tests.factories import ai_skill


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def create(tool: AgentSkillTool, name: str = "Scout early") -> dict:
    return tool.skill_create(name, "Send a scout first.", "# Scout\nSend one scout.")


@pytest.mark.parametrize("actor", [Actor("agent-7", "agent"), Actor("nightly-job", "system")])
def test_only_a_person_deletes_trashes_purges_or_reviews(repository: SkillRepository, actor: Actor) -> None:
    skill = repository.create(ai_skill(review_state=ReviewState.PENDING))
    trashed = repository.create(ai_skill(name="Trashed"))
    repository.trash.delete(trashed.id)
    other = repository.as_actor(actor)
    refused = [
        lambda: other.trash.delete(skill.id),
        lambda: other.trash.delete_many([skill.id]),
        other.trash.empty,
        lambda: other.trash.empty([trashed.id]),
        *(
            (lambda s=state: other.reviews.review(skill.id, s, comment="mine", version=skill.version))
            for state in ReviewState  # every review change, "pending" included
        ),
    ]
    for attempt in refused:
        with pytest.raises(ReviewNotAllowed) as error:
            attempt()
        assert isinstance(error.value, PermissionError) and actor.id in str(error.value)
    assert repository.get(skill.id).review_state is ReviewState.PENDING
    assert [entry.skill_id for entry in repository.trash.entries()] == [trashed.id]
    assert repository.reviews.decisions(skill.id) == []
    assert not repository.history.audit(actor=actor.id)


def test_one_review_path(repository: SkillRepository) -> None:
    assert not hasattr(repository, "set_review_state")  # review() is the only way to set a state


def test_an_agent_update_still_goes_back_to_pending(repository: SkillRepository) -> None:
    skill = repository.create(ai_skill(created_by="agent-7"))  # agents update only their own skills
    repository.reviews.review(skill.id, ReviewState.APPROVED, version=skill.version)
    tool = AgentSkillTool(repository, "agent-7", provider=None)
    assert tool.skill_update(skill.id, description="Rockets first.")["status"] == "updated"
    assert repository.get(skill.id).review_state is ReviewState.PENDING
    assert [(d.state, d.reviewer_kind) for d in repository.reviews.decisions(skill.id)] == [
        ("approved", "human"),
        ("pending", "agent"),
    ]


def test_rate_limit_holds_across_processes(tmp_path: Path) -> None:
    """Two Database objects of one file, as two MCP server processes of one agent would have."""
    path = tmp_path / "shared.db"
    clock = Clock()
    with Database(path, create=True) as first_db, Database(path) as second_db:
        first = AgentSkillTool(SkillRepository(first_db), "agent-7", clock=clock, provider=None)
        second = AgentSkillTool(SkillRepository(second_db), "agent-7", clock=clock, provider=None)
        create(first, "One")
        with pytest.raises(AgentToolError) as refused:
            create(second, "Two")
        assert refused.value.code == "rate_limited"
        other_agent = AgentSkillTool(SkillRepository(second_db), "agent-8", clock=clock, provider=None)
        assert create(other_agent, "Three")["status"] == "created"  # a budget per agent id
        clock.now += 31
        assert create(second, "Two")["status"] == "created"
        with pytest.raises(AgentToolError):
            create(first, "Four")


_OTHER_PROCESS = """
import json, sys
from skillstudio.agents import AgentSkillTool, AgentToolError
from skillstudio.store import Database, SkillRepository
with Database(sys.argv[1]) as database:
    tool = AgentSkillTool(SkillRepository(database), sys.argv[2], clock=lambda: float(sys.argv[3]), provider=None)
    try:
        print(json.dumps(tool.skill_create(sys.argv[4], "Send a scout first.", "# Scout\\nSend one scout.")["status"]))
    except AgentToolError as error:
        print(json.dumps(error.code))
"""


def test_rate_limit_holds_across_real_processes(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    path = tmp_path / "shared.db"
    Database(path, create=True).close()

    def other_process(agent: str, at: float, name: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", _OTHER_PROCESS, str(path), agent, str(at), name],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return json.loads(done.stdout.strip().splitlines()[-1])

    assert other_process("agent-7", 1000.0, "One") == "created"
    assert other_process("agent-7", 1010.0, "Two") == "rate_limited"  # another process, same agent
    with Database(path) as database:  # and this process too
        tool = AgentSkillTool(SkillRepository(database), "agent-7", clock=lambda: 1020.0, provider=None)
        with pytest.raises(AgentToolError) as refused:
            create(tool, "Three")
        assert refused.value.code == "rate_limited"
    assert other_process("agent-8", 1010.0, "Four") == "created"
    assert other_process("agent-7", 1031.0, "Five") == "created"


def test_a_failed_write_does_not_use_a_slot(repository: SkillRepository, monkeypatch: pytest.MonkeyPatch) -> None:
    tool = AgentSkillTool(repository, "agent-7", clock=Clock(), provider=None)

    def busy(*args, **kwargs):
        raise LibraryBusy(repository.database.location, 0.5)

    monkeypatch.setattr(tool.repository, "create", busy)
    with pytest.raises(AgentToolError) as refused:
        create(tool)
    assert refused.value.code == "busy" and "nothing was written" in str(refused.value)
    monkeypatch.undo()
    assert create(tool)["status"] == "created"  # same instant: the failed call took no slot


def test_a_conflicting_update_does_not_use_a_slot(repository: SkillRepository) -> None:
    clock = Clock()
    tool = AgentSkillTool(repository, "agent-7", clock=clock, provider=None)
    made = create(tool)
    clock.now += 31
    read = tool.skill_search("scout")[0]
    person = repository.get(made["id"])
    repository.update(replace(person, description="A person's edit."))
    with pytest.raises(AgentToolError) as refused:
        tool.skill_update(made["id"], version=read["version"], description="The agent's edit.")
    assert refused.value.code == "conflict"
    assert tool.skill_update(made["id"], description="The agent's edit.")["status"] == "updated"  # slot unused


@pytest.mark.parametrize("operation", ["create", "update"])
def test_a_committed_write_is_reported_as_stored_when_linting_fails(
    repository: SkillRepository, monkeypatch: pytest.MonkeyPatch, operation: str
) -> None:
    clock = Clock()
    tool = AgentSkillTool(repository, "agent-7", clock=clock, provider=None)
    made = create(tool) if operation == "update" else None
    clock.now += 31

    def locked(self, skill):
        raise LibraryBusy(repository.database.location, 0.5)

    monkeypatch.setattr(Linter, "lint_and_store", locked)
    if made is None:
        answer = create(tool)
        assert answer["status"] == "created" and repository.exists(answer["id"])
    else:
        answer = tool.skill_update(made["id"], description="Scout the ore first.")
        assert answer["status"] == "updated"
        assert repository.get(made["id"]).description == "Scout the ore first."
    assert (
        answer["warnings"][0].startswith("risk findings not stored: ")
        and "a reviewer will lint it" in answer["warnings"][0]
    )
    assert "busy" in answer["warnings"][0]
    clock.now += 1
    with pytest.raises(AgentToolError) as refused:  # the stored write did use its slot
        create(tool, "Another")
    assert refused.value.code == "rate_limited"


def test_non_human_actors_cannot_create_decided_skills_or_restore(repository: SkillRepository) -> None:
    from skillstudio.store import Actor, ReviewNotAllowed

    agent = repository.as_actor(Actor("agent-9", "agent"))
    with pytest.raises(ReviewNotAllowed):
        agent.create(ai_skill(review_state=ReviewState.APPROVED, created_by="agent-9"))
    assert (
        agent.create(ai_skill(review_state=ReviewState.PENDING, created_by="agent-9")).review_state
        is ReviewState.PENDING
    )
    trashed = repository.create(ai_skill())
    repository.trash.delete(trashed.id)
    with pytest.raises(ReviewNotAllowed):
        agent.trash.restore(trashed.id)
    assert repository.trash.restore(trashed.id) is not None  # a person may
