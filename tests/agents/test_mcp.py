"""The skill tool over MCP: a real stdio client session from the `mcp` SDK against
``python -m skillstudio mcp``."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client

from skillstudio.model import ReviewState
from skillstudio.store import Actor, Database, SkillRepository
from tests.agents.mcp_helpers import ToolFailed, result_data, run_session
from tests.outside import holding_the_write_lock

pytestmark = pytest.mark.slow


@pytest.fixture
def library(library_target: str) -> str:
    """An empty library on each backend: agents write to a team library on a server too."""
    return library_target


def test_only_search_create_update_are_offered(library: str) -> None:
    async def work(session):
        tools = (await session.list_tools()).tools
        return {tool.name: tool for tool in tools}

    tools = run_session(library, "agent-7", work)
    assert set(tools) == {"skill_search", "skill_create", "skill_update"}
    assert not any("delete" in name or "delete" in (tool.description or "").split() for name, tool in tools.items())
    assert "created_by" not in tools["skill_create"].input_schema["properties"]


def test_agent_creates_and_updates_land_pending_with_its_identity(library: str) -> None:
    async def work(session):
        created = result_data(
            await session.call_tool(
                "skill_create",
                {
                    "name": "Scout the ore fields",
                    "description": "Send one scout to the nearest ore field first.",
                    "instructions": "# Scout\nSend one rifleman to the nearest ore field.",
                    "tags": ["scouting"],
                    "created_by": "admin",  # a payload cannot choose the creator
                },
            )
        )
        found = result_data(await session.call_tool("skill_search", {"query": "scout ore"}))
        return created, found

    created, found = run_session(library, "agent-7", work, "--rate-window", "0")
    assert created["status"] == "created" and created["review_state"] == "pending"
    assert found["results"][0]["id"] == created["id"] and found["results"][0]["created_by"] == "agent-7"
    with Database(library) as database:
        repository = SkillRepository(database, Actor("reviewer"))
        skill = repository.get(created["id"])
        assert skill.created_by == "agent-7" and skill.review_state is ReviewState.PENDING
        assert repository.history.audit(skill_id=skill.id)[0].actor == "agent-7"
        assert repository.history.audit(skill_id=skill.id)[0].actor_kind == "agent"
        repository.reviews.review(skill.id, ReviewState.APPROVED, comment="fine", version=skill.version)

    async def update(session):
        return result_data(
            await session.call_tool(
                "skill_update", {"id": created["id"], "description": "Scout before building a refinery."}
            )
        )

    async def attempt(session):
        return await session.call_tool(
            "skill_update", {"id": created["id"], "description": "Scout before building a refinery."}
        )

    # Another agent may not change agent-7's skill (docs/review.md, the agents' edit policy) ...
    refused = run_session(library, "agent-8", attempt)
    assert refused.is_error and refused.content[0].text.startswith("not_allowed")
    # ... agent-7 may, and the approved skill goes back to pending.
    updated = run_session(library, "agent-7", update, "--rate-window", "0")
    assert updated["status"] == "updated" and updated["changed"] == ["description"]
    with Database(library) as database:
        skill = SkillRepository(database).get(created["id"])
        assert skill.review_state is ReviewState.PENDING  # an agent update to an approved skill
        assert skill.description == "Scout before building a refinery."
        assert skill.name == "Scout the ore fields" and skill.tags == ("scouting",)  # untouched
        assert skill.created_by == "agent-7"


def test_delete_cannot_be_reached(library: str) -> None:
    async def work(session):
        created = result_data(
            await session.call_tool("skill_create", {"name": "Keep me", "description": "d", "instructions": "i"})
        )
        outcomes = []
        for name, arguments in (
            ("skill_delete", {"id": created["id"]}),
            ("delete", {"id": created["id"]}),
            ("skill_update", {"id": created["id"], "delete": True}),
            ("skill_update", {"id": created["id"], "review_state": "rejected"}),
        ):
            result = await session.call_tool(name, arguments)
            outcomes.append(result.is_error or result_data(result)["status"])
        return created, outcomes

    created, outcomes = run_session(library, "agent-7", work, "--rate-window", "0")
    # unknown tools are errors; unknown arguments are ignored and change nothing
    assert outcomes[:2] == [True, True]
    with Database(library) as database:
        repository = SkillRepository(database)
        assert repository.exists(created["id"]) and repository.trash.entries() == []
        assert repository.get(created["id"]).review_state is ReviewState.PENDING
        assert not repository.history.audit(action="skill.delete")


def test_rate_limit_and_dedup_over_mcp(library: str) -> None:
    async def work(session):
        payload = {
            "name": "Mine the chokepoint",
            "description": "Mines at the bridge.",
            "instructions": "Lay mines at the bridge.",
        }
        first = result_data(await session.call_tool("skill_create", payload))
        again = result_data(await session.call_tool("skill_create", payload))  # identical: dropped, not rate limited
        other = await session.call_tool("skill_create", {**payload, "name": "Another"})
        return first, again, other

    first, again, other = run_session(library, "agent-7", work)
    assert again == {**again, "id": first["id"], "status": "duplicate"}
    assert other.is_error and other.content[0].text.startswith("rate_limited: ")
    assert other.structured_content["error"] == "rate_limited"
    with Database(library) as database:
        assert SkillRepository(database).count() == 1


def test_invalid_input_is_refused(library: str) -> None:
    async def work(session):
        out = []
        for arguments in (
            {"name": "x" * 500, "description": "d", "instructions": "i"},
            {"name": "ok", "description": "d", "instructions": "i" * 4001},
            {"name": "bad\x00name", "description": "d", "instructions": "i"},
            {"name": "ok", "description": "d", "instructions": "i", "tags": ["Not A Tag"]},
            {"name": "ok", "description": "d"},
        ):
            try:
                result_data(await session.call_tool("skill_create", arguments))
                out.append("accepted")
            except ToolFailed as error:
                out.append(str(error))
        return out

    outcomes = run_session(library, "agent-7", work, "--rate-window", "0")
    assert all(outcome != "accepted" for outcome in outcomes), outcomes
    with Database(library) as database:
        assert SkillRepository(database).count() == 0


def _session_with_env(db: Path, agent_id: str, work, env: dict[str, str], *extra: str):
    """Like run_session, with extra environment for the server (a short lock wait)."""

    async def main():
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "skillstudio", "mcp", "--db", str(db), "--agent-id", agent_id, *extra],
            env={**get_default_environment(), **env},
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await asyncio.wait_for(work(session), timeout=60)

    return asyncio.run(main())


def test_errors_carry_a_code_and_versions_guard_updates(library: str) -> None:
    """Every refusal is an isError result with {"error": code, "message": ...} and text "code: ...";
    a call refused as busy takes no rate-limit slot; a stale version is a conflict."""
    payload = {"name": "Scout the ore", "description": "Send a scout to the ore.", "instructions": "Scout the ore."}

    def error_of(result):
        assert result.is_error, result
        code = result.structured_content["error"]
        assert result.content[0].text == f"{code}: {result.structured_content['message']}"
        return code, result.structured_content["message"]

    async def work(session):
        out = {}
        with holding_the_write_lock(library):  # another program holds the write lock
            out["busy"] = error_of(await session.call_tool("skill_create", payload))
        out["created"] = result_data(await session.call_tool("skill_create", payload))  # the slot was not used
        out["rate_limited"] = error_of(await session.call_tool("skill_create", {**payload, "name": "Other"}))
        out["invalid"] = error_of(await session.call_tool("skill_create", {**payload, "name": "x" * 500}))
        out["not_found"] = error_of(
            await session.call_tool("skill_update", {"id": "no-such-skill", "description": "d"})
        )
        found = result_data(await session.call_tool("skill_search", {"query": "scout ore"}))["results"][0]
        out["read"] = found
        with Database(library) as database:  # a person edits after the agent's read
            repository = SkillRepository(database, Actor("reviewer"))
            out["edited"] = repository.update(replace(repository.get(found["id"]), description="A person's edit."))
        out["conflict"] = error_of(
            await session.call_tool(
                "skill_update",
                {"id": found["id"], "version": found["version"], "description": "The agent's stale edit."},
            )
        )
        return out

    out = _session_with_env(library, "agent-7", work, {"SKILLSTUDIO_LOCK_WAIT": "0.5"})
    assert out["busy"][0] == "busy" and "nothing was written" in out["busy"][1]
    assert out["created"]["status"] == "created"
    assert [out[key][0] for key in ("rate_limited", "invalid", "not_found", "conflict")] == [
        "rate_limited",
        "invalid",
        "not_found",
        "conflict",
    ]
    assert out["read"]["id"] == out["created"]["id"] and isinstance(out["read"]["version"], int)
    assert f"it is now version {out['edited'].version}" in out["conflict"][1]
    with Database(library) as database:
        assert SkillRepository(database).get(out["created"]["id"]).description == "A person's edit."
