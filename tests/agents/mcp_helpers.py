"""A real MCP stdio client session (the official SDK) against ``python -m skillstudio mcp``."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

T = TypeVar("T")


def run_session(db: Path | str, agent_id: str, work: Callable[[ClientSession], Awaitable[T]], *extra: str) -> T:
    """Start the server as a subprocess, initialise a session, run ``work``, shut it down."""

    async def main() -> T:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "skillstudio", "mcp", "--db", str(db), "--agent-id", agent_id, *extra],
        )
        # errlog given now: stdio_client's default is the sys.stderr of when mcp was first imported,
        # which may be a closed capture of an earlier test.
        async with stdio_client(params, errlog=sys.stderr) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await asyncio.wait_for(work(session), timeout=60)

    return asyncio.run(main())


def result_data(result: Any) -> dict[str, Any]:
    """A tool result's structured content (or its JSON text), raising on a tool error."""
    if result.is_error:
        raise ToolFailed(result.content[0].text)
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


class ToolFailed(Exception):
    pass
