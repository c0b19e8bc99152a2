"""The Python agent API: identity, pending, partial updates, rate limit, dedup, limits, no delete."""

from __future__ import annotations

import pytest

from skillstudio.agents import AgentSkillTool, AgentToolError
from skillstudio.model import ReviewState
from skillstudio.store import SkillRepository
from tests.factories import ai_skill
from tests.outside import engine_writes


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def tool(repository: SkillRepository, clock: Clock) -> AgentSkillTool:
    return AgentSkillTool(repository, "agent-7", clock=clock)


def create(tool: AgentSkillTool, name: str = "Scout early", **kwargs) -> dict:
    return tool.skill_create(name, "Send a scout first.", "# Scout\nSend one scout.", **kwargs)


def test_no_delete_in_the_api(tool: AgentSkillTool) -> None:
    public = {name for name in dir(tool) if not name.startswith("_")}
    assert {"skill_search", "skill_create", "skill_update"} <= public
    assert not any("delete" in name or "trash" in name or "purge" in name for name in public)
    assert tool.repository.actor.kind == "agent"


def test_create_is_pending_and_created_by_the_agent(tool: AgentSkillTool, repository: SkillRepository) -> None:
    out = create(tool, tags=["scouting"])
    skill = repository.get(out["id"])
    assert (skill.created_by, skill.review_state, skill.tags) == ("agent-7", ReviewState.PENDING, ("scouting",))
    assert repository.history.audit(skill_id=skill.id)[0].actor == "agent-7"
    with pytest.raises(TypeError):
        tool.skill_create("n", "d", "i", created_by="admin")


def test_rate_limit_per_agent_with_injectable_clock(
    tool: AgentSkillTool, repository: SkillRepository, clock: Clock
) -> None:
    first = create(tool)
    with pytest.raises(AgentToolError) as refused:
        create(tool, name="Second")
    assert refused.value.code == "rate_limited"
    with pytest.raises(AgentToolError):
        tool.skill_update(first["id"], description="changed")
    clock.now += 29.9
    with pytest.raises(AgentToolError):
        create(tool, name="Second")
    clock.now += 0.2
    create(tool, name="Second")
    other = AgentSkillTool(repository, "agent-8", clock=clock)  # another agent has its own budget
    create(other, name="Third")
    relaxed = AgentSkillTool(repository, "agent-9", clock=clock, rate_limit=3, rate_window=10)
    for name in ("a", "b", "c"):
        create(relaxed, name=f"Relaxed {name}")
    with pytest.raises(AgentToolError):
        create(relaxed, name="Relaxed d")


def test_identical_content_is_stored_once(tool: AgentSkillTool, repository: SkillRepository, clock: Clock) -> None:
    first = create(tool)
    clock.now += 60
    again = create(tool)
    assert again["status"] == "duplicate" and again["id"] == first["id"] and again["sha256"] == first["sha256"]
    assert repository.count() == 1
    different = create(tool, tags=["scouting"])
    assert different["status"] == "created" and different["sha256"] != first["sha256"]


class RecordingEmbeddings:
    """A stand-in for a remote embedding model that records what it was asked to embed."""

    model_id, dimensions = "test-embed", 2

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts):
        import numpy as np

        self.texts.extend(texts)
        return np.ones((len(texts), 2), dtype=np.float32)


def test_update_is_partial_and_goes_back_to_pending(repository: SkillRepository, clock: Clock) -> None:
    provider = RecordingEmbeddings()
    tool = AgentSkillTool(repository, "agent-7", clock=clock, provider=provider)
    out = create(tool, tags=["scouting"])
    assert provider.texts == ["Send a scout first.", "Scout early. scouting"]  # description, then label
    repository.reviews.review(out["id"], ReviewState.APPROVED, comment="ok", version=repository.get(out["id"]).version)
    clock.now += 31
    result = tool.skill_update(out["id"], tags=["scouting", "early-game"])
    skill = repository.get(out["id"])
    assert result["changed"] == ["tags"] and skill.review_state is ReviewState.PENDING
    assert skill.description == "Send a scout first." and skill.body.instructions == "# Scout\nSend one scout."
    # The description did not change: its vector is not recomputed (seed 001); the label's is.
    assert provider.texts[2:] == ["Scout early. scouting early-game"]
    clock.now += 31
    tool.skill_update(out["id"], description="Scout the ore field first.")
    assert provider.texts[3:] == ["Scout the ore field first."]
    assert repository.embeddings.get(out["id"]) == (b"\x00\x00\x80\x3f" * 2, "test-embed")
    decisions = repository.reviews.decisions(out["id"])
    assert [d.state for d in decisions] == ["approved", "pending", "pending"]


def test_update_validation(tool: AgentSkillTool, repository: SkillRepository, clock: Clock) -> None:
    strategic = repository.create(ai_skill())
    for args, kwargs, code in (
        (("missing-id",), {"description": "x"}, "not_found"),
        ((strategic.id,), {}, "invalid"),  # nothing to update
    ):
        with pytest.raises(AgentToolError) as error:
            tool.skill_update(*args, **kwargs)
        assert error.value.code == code
    with pytest.raises(AgentToolError, match="only Instructions"):
        tool.skill_update(strategic.id, instructions="text")
    with pytest.raises(AgentToolError, match="unknown or read-only"):
        tool.skill_update(strategic.id, created_by="admin")
    with pytest.raises(AgentToolError, match="unknown or read-only"):
        tool.skill_update(strategic.id, review_state="approved")
    assert repository.get(strategic.id).version == strategic.version


@pytest.mark.parametrize(
    "name, description, instructions, extra",
    [
        ("x" * 121, "d", "i", {}),
        ("n", "d" * 1001, "i", {}),
        ("n", "d", "i" * 4001, {}),
        ("", "d", "i", {}),
        ("a\nb", "d", "i", {}),
        ("n", "d\x07", "i", {}),
        (3, "d", "i", {}),
        ("n", "d", "i", {"tags": "not-a-list"}),
        ("n", "d", "i", {"tags": ["UPPER"]}),
        ("n", "d", "i", {"tags": [f"t{i}" for i in range(21)]}),
        ("n", "d", "i", {"references": ["no-such-skill"]}),
        ("n", "d", "i", {"tools": [{"x": 1}]}),
    ],
)
def test_untrusted_input_is_validated(
    tool: AgentSkillTool, repository: SkillRepository, name, description, instructions, extra
) -> None:
    with pytest.raises(AgentToolError) as error:
        tool.skill_create(name, description, instructions, **extra)
    assert error.value.code == "invalid"
    assert repository.count() == 0


def test_search_never_serves_rejected(tool: AgentSkillTool, repository: SkillRepository, clock: Clock) -> None:
    kept = create(tool, name="Scout north")
    clock.now += 31
    gone = create(tool, name="Scout south")
    repository.reviews.review(
        gone["id"], ReviewState.REJECTED, comment="unsafe", version=repository.get(gone["id"]).version
    )
    found = tool.skill_search("scout")
    assert [hit["id"] for hit in found] == [kept["id"]]
    assert set(found[0]) >= {"id", "name", "score", "tags", "confidence", "instructions"}
    with pytest.raises(AgentToolError) as error:
        tool.skill_update(gone["id"], description="try again")
    assert error.value.code == "not_found"
    with pytest.raises(AgentToolError):
        tool.skill_search("scout", limit=1000)
    assert repository.exists(gone["id"])  # rejected is kept


def test_agents_may_not_approve(repository: SkillRepository) -> None:
    from skillstudio.store import Actor, ReviewNotAllowed

    skill = repository.create(ai_skill())
    agent = repository.as_actor(Actor("agent-7", "agent"))
    # Every review change is a person's, "pending" too: an agent's only way back to pending is
    # its own update (update_pending), see tests/agents/test_guard_rails.py.
    for state in (ReviewState.APPROVED, ReviewState.REJECTED, ReviewState.CHANGES_REQUESTED, ReviewState.PENDING):
        with pytest.raises(ReviewNotAllowed):
            agent.reviews.review(skill.id, state, version=skill.version)
    assert repository.get(skill.id).review_state is None


def test_one_budget_per_agent_and_library(repository: SkillRepository, clock: Clock) -> None:
    create(AgentSkillTool(repository, "agent-5", clock=clock), name="First")
    with pytest.raises(AgentToolError):  # a second tool for the same agent shares the budget
        create(AgentSkillTool(repository, "agent-5", clock=clock), name="Second")


# --- retrieval (docs/retrieval.md) ---------------------------------------------------------------


def test_search_ranks_with_real_scores_and_keeps_vectors_current(
    tool: AgentSkillTool, repository: SkillRepository, clock: Clock
) -> None:
    from skillstudio.retrieval import LOCAL_MODEL_ID

    air = tool.skill_create(
        "Flak screen",
        "Anti-aircraft guns around the refinery stop bomber raids on harvesters.",
        "# Flak\nBuild flak.",
    )
    clock.now += 31
    naval = tool.skill_create(
        "Sub hunt", "Destroyers with depth charges clear submarines from the shore.", "# Subs\nHunt."
    )
    assert air["embedding"] == naval["embedding"] == f"stored ({LOCAL_MODEL_ID})"
    assert repository.embeddings.info(air["id"]).current
    found = tool.skill_search("planes keep bombing my ore collectors")  # paraphrase: no shared word with "Flak screen"
    assert found[0]["id"] == air["id"]
    scores = [hit["score"] for hit in found]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)  # real scores, not rank-made
    breakdown = found[0]["score_breakdown"]
    assert breakdown["semantic"] is not None and breakdown["final"] == pytest.approx(found[0]["score"], abs=1e-4)

    before = repository.embeddings.info(naval["id"])
    clock.now += 31
    tool.skill_update(naval["id"], tags=["naval"])  # not the description: the vector stays (seed 001)
    assert repository.embeddings.info(naval["id"]) == before
    clock.now += 31
    updated = tool.skill_update(naval["id"], description="Aircraft carriers launch bombers at enemy harvesters.")
    assert updated["embedding"].startswith("stored")
    info = repository.embeddings.info(naval["id"])
    assert info is not None and info.current and info.embedded_at != before.embedded_at


def test_search_tags_filter_and_empty_query(tool: AgentSkillTool, repository: SkillRepository, clock: Clock) -> None:
    tagged = create(tool, name="Scout tagged", tags=["scouting"])
    clock.now += 31
    create(tool, name="Scout plain")
    assert [hit["id"] for hit in tool.skill_search("scout", tags=["scouting"])] == [tagged["id"]]
    listed = tool.skill_search("", limit=5)
    assert {hit["name"] for hit in listed} == {"Scout tagged", "Scout plain"} and listed[0]["score"] is None


def test_a_failing_provider_does_not_turn_a_stored_create_into_an_error(
    repository: SkillRepository, clock: Clock
) -> None:
    from skillstudio.retrieval import ProviderConfig, make_provider

    with __import__("socket").socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    provider = make_provider(ProviderConfig(kind="ollama", base_url=f"http://127.0.0.1:{port}", timeout=1))
    tool = AgentSkillTool(repository, "agent-7", clock=clock, provider=provider)
    out = create(tool)
    assert out["status"] == "created" and repository.exists(out["id"])
    assert "no vectors were computed" in out["embedding"] and f"127.0.0.1:{port}" in out["embedding"]
    assert tool.skill_search("scout")[0]["id"] == out["id"]  # searched by FTS5 meanwhile (D057's fallback)


# --- versions: an update after a stale read (docs/review.md) ------------------------------------


def test_search_results_carry_the_version(tool: AgentSkillTool, repository: SkillRepository) -> None:
    made = create(tool)
    hit = tool.skill_search("scout")[0]
    assert hit["id"] == made["id"] and hit["version"] == repository.get(made["id"]).version
    assert tool.skill_search("")[0]["version"] == hit["version"]  # the listing too


def test_an_update_after_a_stale_read_does_not_overwrite_a_human_edit(
    tool: AgentSkillTool, repository: SkillRepository, clock: Clock
) -> None:
    from dataclasses import replace

    made = create(tool)
    read = tool.skill_search("scout")[0]  # the agent reads...
    person = repository.get(made["id"])
    edited = repository.update(replace(person, description="A person's careful edit."))  # ...a person edits
    clock.now += 31
    with pytest.raises(AgentToolError) as refused:
        tool.skill_update(made["id"], version=read["version"], description="The agent's stale idea.")
    assert refused.value.code == "conflict"
    assert f"version {read['version']}" in str(refused.value) and f"version {edited.version}" in str(refused.value)
    assert repository.get(made["id"]).description == "A person's careful edit."
    answer = tool.skill_update(made["id"], version=edited.version, description="Built on the person's edit.")
    assert answer["status"] == "updated" and answer["version"] == repository.get(made["id"]).version
    for bad in ("3", -1, True, 1.5):
        with pytest.raises(AgentToolError) as error:
            tool.skill_update(made["id"], version=bad, description="x")
        assert error.value.code == "invalid"


def test_an_update_without_a_version_applies_to_the_current_skill(
    tool: AgentSkillTool, repository: SkillRepository, clock: Clock
) -> None:
    from dataclasses import replace

    made = create(tool)
    person = repository.get(made["id"])
    repository.update(replace(person, name="Scout early (edited)"))
    clock.now += 31
    assert tool.skill_update(made["id"], description="Only the description.")["status"] == "updated"
    skill = repository.get(made["id"])
    assert (skill.name, skill.description) == ("Scout early (edited)", "Only the description.")  # as before


def test_search_fills_its_limit_past_a_row_that_holds_no_valid_skill(
    tool: AgentSkillTool, repository: SkillRepository
) -> None:
    names = ["Scout the ore field early", "Scout ore with a dog", "Scout ore at night", "Scout the ore by air"]
    made = [
        repository.create(ai_skill(name=name, description="Scout the ore field.", tags=("scouting",))) for name in names
    ]
    best = tool.skill_search("scout ore", limit=3)
    assert len(best) == 3
    with engine_writes(repository.database) as engine:  # an engine writes a row SkillStudio cannot read
        engine.execute("UPDATE skills SET body_json = 'not json' WHERE id = ?", (best[0]["id"],))
    after = tool.skill_search("scout ore", limit=3)
    assert len(after) == 3 and best[0]["id"] not in [hit["id"] for hit in after]
    assert {hit["id"] for hit in after} <= {skill.id for skill in made}
