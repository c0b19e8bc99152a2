"""Agent ids that read as a person or as the library are refused (issue 13 point 17 A)."""

from __future__ import annotations

import getpass
from pathlib import Path

import pytest

from skillstudio.agents import AgentSkillTool
from skillstudio.cli.main import main as cli
from skillstudio.store import Database, LibraryError, SkillRepository

RESERVED = ["root", "admin", "administrator", "system", "external", "unknown", "user"]


@pytest.mark.parametrize("agent_id", [*RESERVED, "ROOT", "Admin", "SyStEm"])
def test_reserved_ids_are_refused_in_any_case(repository: SkillRepository, agent_id: str) -> None:
    with pytest.raises(ValueError, match="reserved") as caught:
        AgentSkillTool(repository, agent_id, provider=None)
    assert isinstance(caught.value, LibraryError)  # the CLI reports it without a traceback


def test_the_local_user_name_is_refused(repository: SkillRepository, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(getpass, "getuser", lambda: "Kessler")
    for agent_id in ("kessler", "KESSLER"):
        with pytest.raises(ValueError, match="local user name"):
            AgentSkillTool(repository, agent_id, provider=None)


def test_ordinary_agent_ids_still_work(repository: SkillRepository) -> None:
    for agent_id in ("agent-7", "claude@desk", "rooted", "admin-bot"):
        assert AgentSkillTool(repository, agent_id, provider=None).agent_id == agent_id


def test_mcp_command_prints_the_rule_without_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Database(tmp_path / "lib.db", create=True).close()
    code = cli(["mcp", "--db", str(tmp_path / "lib.db"), "--agent-id", "root"])
    out, err = capsys.readouterr()
    assert code == 1
    assert "agent id 'root' is reserved" in err and "Traceback" not in err + out
