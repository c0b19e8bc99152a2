"""The skill tool as a Model Context Protocol server over stdio (``skillstudio mcp``).

Built on the official ``mcp`` Python SDK (``pip install "skillstudio[agents]"``). It offers
exactly three tools, ``skill_search``, ``skill_create`` and ``skill_update``; there is no delete
tool, and the server has no code path that deletes. The agent's identity is fixed when the
server starts (``--agent-id``): every skill it creates says ``created_by: <agent id>``, whatever
the payload says, and lands pending review.

A refused call is a tool result with ``isError`` set, whose structured content is
``{"error": code, "message": text}`` and whose text is ``"<code>: <text>"``; ``code`` is one of
``invalid``, ``conflict``, ``busy``, ``rate_limited``, ``not_found``, ``not_allowed``
(docs/review.md).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast

from skillstudio.agents.tool import (
    DEFAULT_RATE_LIMIT,
    DEFAULT_RATE_WINDOW,
    AgentSkillTool,
    AgentToolError,
    InvalidAgentId,
    check_agent_id,
)
from skillstudio.store import (
    Actor,
    Database,
    LibraryBusy,
    LibraryError,
    SkillNotFound,
    SkillRepository,
    StorageError,
    team_roles,
)

if TYPE_CHECKING:  # the SDK is an optional dependency, imported when a server is built
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult

P = ParamSpec("P")
R = TypeVar("R")

ERROR_CODES = ("invalid", "conflict", "busy", "rate_limited", "not_found", "not_allowed")

TOOL_NAMES = ("skill_search", "skill_create", "skill_update")

INSTRUCTIONS = (
    "SkillStudio skill library (Iron Curtain D057). Search skills before a task with "
    "skill_search; record an approach that worked with skill_create; refine one with "
    "skill_update (only the fields you give change). Skills cannot be deleted by agents. "
    "Everything you write is reviewed by a person before it is approved."
)


def build_server(tool: AgentSkillTool) -> MCPServer:
    """An MCPServer exposing ``tool``'s three operations (and nothing else)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult, TextContent

    server = MCPServer("skillstudio", instructions=INSTRUCTIONS)

    def refused(code: str, message: str) -> CallToolResult:
        # Returned, not raised: a raised ToolError reaches the client as "Error executing tool
        # <name>: ...", and anything else as a bare "Error executing tool <name>".
        return CallToolResult(
            content=[TextContent(type="text", text=f"{code}: {message}")],
            structured_content={"error": code, "message": message},
            is_error=True,
        )

    def call(operation: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R | CallToolResult:
        try:
            return operation(*args, **kwargs)
        except AgentToolError as error:
            return refused(error.code, str(error))
        except LibraryBusy as error:
            return refused("busy", f"{error}")
        except StorageError as error:
            if "database is locked" in str(error):
                return refused("busy", f"the library is busy; retry soon: {error}")
            raise
        except SkillNotFound as error:
            return refused("not_found", str(error))

    def answer(result: dict[str, Any] | CallToolResult) -> dict[str, Any]:
        # The tools' return annotation is the success shape the SDK advertises as their output
        # schema; a refusal is a CallToolResult, which the SDK passes through as it is.
        return cast("dict[str, Any]", result)

    @server.tool(
        description="Search skills by meaning and keywords (docs/retrieval.md). Returns up to `limit` "
        "skills, best first, with id, name, score and its breakdown, tags, confidence, creator and "
        "instructions (or body)."
    )
    def skill_search(
        query: str,
        domain: str | None = None,
        game_module: str | None = None,
        tags: list[str] | None = None,
        limit: int = 5,
    ) -> dict[str, Any]:
        results = call(tool.skill_search, query, domain=domain, game_module=game_module, tags=tags, limit=limit)
        return answer(results if isinstance(results, CallToolResult) else {"results": results})

    @server.tool(
        description="Create a skill from an approach that worked. It is recorded as yours and "
        "waits for review. Identical content is not stored twice."
    )
    def skill_create(
        name: str,
        description: str,
        instructions: str,
        tags: list[str] | None = None,
        tools: list[str] | None = None,
        model: str | None = None,
        references: list[str] | None = None,
    ) -> dict[str, Any]:
        return answer(
            call(
                tool.skill_create,
                name,
                description,
                instructions,
                tags=tags,
                tools=tools,
                model=model,
                references=references,
            )
        )

    @server.tool(
        description="Update a skill: only the fields you give change. The skill goes back to review. "
        "Give `version` (from skill_search) to refuse the update, as a `conflict`, if the skill "
        "changed since you read it."
    )
    def skill_update(
        id: str,
        version: int | None = None,
        name: str | None = None,
        description: str | None = None,
        instructions: str | None = None,
        tags: list[str] | None = None,
        tools: list[str] | None = None,
        model: str | None = None,
        references: list[str] | None = None,
    ) -> dict[str, Any]:
        changes = {
            "name": name,
            "description": description,
            "instructions": instructions,
            "tags": tags,
            "tools": tools,
            "model": model,
            "references": references,
        }
        return answer(call(tool.skill_update, id, version=version, **changes))

    return server


def serve(
    db: str | Path,
    agent_id: str,
    *,
    rate_limit: int = DEFAULT_RATE_LIMIT,
    rate_window: float = DEFAULT_RATE_WINDOW,
    game_module: str = "ra1",
) -> None:
    """Serve the library at ``db`` to one agent over stdio until the client disconnects."""
    with Database(db) as database:
        serve_database(database, agent_id, rate_limit=rate_limit, rate_window=rate_window, game_module=game_module)


def serve_database(
    database: Database,
    agent_id: str,
    *,
    rate_limit: int = DEFAULT_RATE_LIMIT,
    rate_window: float = DEFAULT_RATE_WINDOW,
    game_module: str = "ra1",
) -> None:
    """On a team library the server records the login role as the creator of what the agent
    writes, so the agent's id must be that role (or it could not update its own skills)."""
    role = team_roles.identity(database)
    if role is not None and role != (agent_id, "agent"):
        raise LibraryError(
            f"{database.location} records this login as {role[1]} {role[0]!r}: an agent serves as its own"
            f" login role, so connect as the agent's role and give --agent-id {role[0]}"
            if role[1] == "agent"
            else f"{database.location}: {role[0]!r} is a human's login; an agent connects as its own agent role"
        )
    repository = SkillRepository(database, Actor(agent_id, "agent"))
    tool = AgentSkillTool(repository, agent_id, rate_limit=rate_limit, rate_window=rate_window, game_module=game_module)
    build_server(tool).run("stdio")


def main(argv: list[str] | None = None) -> int:
    """``python -m skillstudio.agents.mcp_server --db PATH --agent-id ID``."""
    parser = argparse.ArgumentParser(prog="skillstudio-mcp", description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        check_agent_id(args.agent_id)
    except InvalidAgentId as error:  # before opening the library: a message, not a traceback
        parser.error(str(error))
    serve(
        args.db, args.agent_id, rate_limit=args.rate_limit, rate_window=args.rate_window, game_module=args.game_module
    )
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent-id", required=True, metavar="ID", help="the agent's identity: recorded as created_by")
    parser.add_argument(
        "--rate-limit",
        type=int,
        default=DEFAULT_RATE_LIMIT,
        metavar="N",
        help=f"creates/updates per window (default {DEFAULT_RATE_LIMIT})",
    )
    parser.add_argument(
        "--rate-window",
        type=float,
        default=DEFAULT_RATE_WINDOW,
        metavar="S",
        help=f"window in seconds (default {DEFAULT_RATE_WINDOW:g}, RFC 004)",
    )
    parser.add_argument("--game-module", default="ra1", metavar="M", help="game module of created skills (default ra1)")
    if not any(action.dest == "db" for action in parser._actions):
        parser.add_argument("--db", required=True, metavar="PATH", help="the library file")


if __name__ == "__main__":
    import sys

    sys.exit(main())
