"""The agent interface (seed 001's skill tool): search, create, update, and no delete.

A Python API for in-process agents (:class:`AgentSkillTool`) and an MCP server over stdio
(:mod:`skillstudio.agents.mcp_server`, ``skillstudio mcp``). Qt-free (docs/review.md).
"""

from skillstudio.agents.tool import (
    DEFAULT_RATE_LIMIT,
    DEFAULT_RATE_WINDOW,
    AgentSkillTool,
    AgentToolError,
    Limits,
    content_hash,
)

__all__ = ["DEFAULT_RATE_LIMIT", "DEFAULT_RATE_WINDOW", "AgentSkillTool", "AgentToolError", "Limits", "content_hash"]
