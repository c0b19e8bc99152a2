"""A team library on a PostgreSQL server: roles and identity enforced by the server, and live
changes between SkillStudio processes (docs/team-library.md)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from dataclasses import replace

import psycopg
import pytest
from sqlalchemy.engine import make_url

from skillstudio.agents.tool import AgentSkillTool
from skillstudio.cli.main import main
from skillstudio.library.sample import load_sample
from skillstudio.model import ReviewState
from skillstudio.store import Actor, Database, LibraryTooOld, SkillQuery, SkillRepository, StorageError, team_roles
from skillstudio.store.errors import TeamRoleError
from skillstudio.store.migrations import LATEST_VERSION, schema_version
from skillstudio.store.team_roles import HUMAN_ROLE
from tests.factories import ai_skill
from tests.postgres_server import PostgresServer

WAIT_S = 20  # generous: a wait, never a timing assertion


def as_role(url: str, role: str) -> str:
    return make_url(url).set(username=role).render_as_string(hide_password=False)


def raw(url: str, role: str) -> psycopg.Connection:
    u = make_url(url)
    return psycopg.connect(host=u.host, port=u.port, user=role, dbname=u.database, autocommit=True)


def test_team_init_creates_then_is_repeatable_and_lists_who_may_log_in(
    team_url: str, postgres_server: PostgresServer, capsys
) -> None:
    fresh = postgres_server.empty_database()
    try:
        assert main(["team", "init", fresh, "--sample"]) == 0
        assert main(["team", "grant", fresh, "carol", "--human"]) == 0
        assert "carol may now log in" in capsys.readouterr().out
        with Database(fresh) as database:
            assert SkillRepository(database).count() == len(load_sample())
            assert ("carol", "human") in team_roles.member_list(database)
    finally:
        postgres_server.drop(fresh)
    with Database(team_url) as database:
        before = SkillRepository(database).count()
    assert main(["team", "init", team_url, "--sample"]) == 0  # again: nothing doubles, nothing is lost
    assert f"team library ready at {make_url(team_url).render_as_string()}: {before} skills" in capsys.readouterr().out
    assert main(["team", "members", team_url, "--json"]) == 0
    assert '"role": "alice"' in capsys.readouterr().out
    with Database(team_url) as database:
        assert ("alice", "human") in team_roles.member_list(database)
        assert ("bot-7", "agent") in team_roles.member_list(database)
    # moving someone to the other group takes them out of the first
    assert main(["team", "grant", team_url, "alice", "--agent"]) == 0
    assert main(["team", "grant", team_url, "alice", "--human"]) == 0
    with Database(team_url) as database:
        assert [kind for name, kind in team_roles.member_list(database) if name == "alice"] == ["human"]


def test_a_bad_role_name_or_a_file_is_refused_with_the_reason(team_url: str, tmp_path, capsys) -> None:
    with pytest.raises(TeamRoleError):
        team_roles.checked_role_name('x"; DROP TABLE skills; --')
    for name in ("pg_monitor", HUMAN_ROLE, "Alice", ""):
        assert main(["team", "grant", team_url, name, "--human"]) == 1
        assert "cannot be a team member's role" in capsys.readouterr().err
    assert main(["team", "init", str(tmp_path / "lib.db")]) == 1
    assert "is not a team library" in capsys.readouterr().err
    # a member is no administrator: the server refuses, and the CLI says so, naming the library
    assert main(["team", "grant", as_role(team_url, "alice"), "mallory", "--human"]) == 1
    err = capsys.readouterr().err
    assert "alice@" in err and "permission denied" in err.lower() and "Traceback" not in err


def test_an_agent_role_cannot_delete_review_or_approve_even_with_its_own_sql(team_url: str) -> None:
    with raw(team_url, "bot-7") as agent:
        for statement, table in (
            ("DELETE FROM skills", "skills"),
            ("DELETE FROM studio_audit_log", "studio_audit_log"),
            ("DELETE FROM studio_revisions", "studio_revisions"),
            ("UPDATE studio_settings SET value = value", "studio_settings"),
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match=f"permission denied for table {table}"):
                agent.execute(statement)
        for statement in (
            "UPDATE studio_skill_meta SET review_state = 'approved'",
            (
                "INSERT INTO studio_review_decisions(skill_id, state, reviewer, reviewer_kind, at, comment)"
                " VALUES ('x', 'approved', 'alice', 'human', '2026-01-01', '')"
            ),
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="an agent cannot set a review state"):
                agent.execute(statement)
        assert agent.execute("SELECT count(*) FROM skills").fetchone()[0] > 0  # reading is allowed


def test_the_server_records_who_wrote_whatever_the_client_claims(team_url: str) -> None:
    with Database(as_role(team_url, "bot-7")) as database:
        # The agent's own tool, on the agent's login: created_by comes from the role.
        tool = AgentSkillTool(SkillRepository(database, Actor("bot-7", "agent")), "bot-7", rate_limit=100)
        created = tool.skill_create("Flank at dawn", "Hit the refinery first.", "Send two tanks.")
        assert created["status"] == "created"
        skill_id = created["id"]
        updated = tool.skill_update(skill_id, description="Hit the refinery at dawn.")
        assert updated["status"] == "updated"
        liar = SkillRepository(database, Actor("alice", "human"))  # a client claiming to be alice
        lied = liar.create(replace(ai_skill(name="Claimed by alice"), review_state=ReviewState.PENDING))
        with pytest.raises(StorageError, match="permission denied for table"):  # trash, then skills
            liar.trash.delete(skill_id)
        assert liar.get(skill_id).name == "Flank at dawn"
    with raw(team_url, "postgres") as admin:
        creators = dict(admin.execute("SELECT skill_id, created_by FROM studio_skill_meta").fetchall())
        assert creators[skill_id] == "bot-7" and creators[lied.id] == "bot-7"
        actors = set(
            admin.execute(
                "SELECT actor, actor_kind FROM studio_audit_log WHERE skill_id IN (%s, %s)", (skill_id, lied.id)
            ).fetchall()
        )
        assert actors == {("bot-7", "agent")}
        authors = {
            row[0] for row in admin.execute("SELECT author FROM studio_revisions WHERE skill_id = %s", (skill_id,))
        }
        assert authors == {"bot-7"}

    with Database(as_role(team_url, "alice")) as database:
        reviewer = SkillRepository(database, Actor("someone-else", "human"))
        current = reviewer.get(skill_id)
        reviewer.reviews.review(skill_id, ReviewState.APPROVED, version=current.version)
        reviewer.update(replace(reviewer.get(skill_id), name="Flank at dawn, refined"))
    with raw(team_url, "postgres") as admin:
        decided = admin.execute(
            "SELECT state, reviewer, reviewer_kind FROM studio_review_decisions WHERE skill_id = %s ORDER BY id",
            (skill_id,),
        ).fetchall()
        assert decided == [("pending", "bot-7", "agent"), ("approved", "alice", "human")]
        assert admin.execute(
            "SELECT created_by FROM studio_skill_meta WHERE skill_id = %s", (skill_id,)
        ).fetchone() == ("bot-7",)


def test_an_agent_cannot_approve_through_skillstudio_either(team_url: str) -> None:
    with Database(as_role(team_url, "bot-7")) as database:
        repository = SkillRepository(database, Actor("bot-7", "agent"))
        skill = repository.create(replace(ai_skill(name="Mine"), review_state=ReviewState.PENDING))
        before = repository.get(skill.id)
        with pytest.raises(Exception) as refused:  # the store's refusal or the server's
            repository.reviews.review(skill.id, ReviewState.APPROVED, version=before.version)
        assert "agent" in str(refused.value) or "permission denied" in str(refused.value)
        assert repository.get(skill.id).review_state is before.review_state


def test_another_process_commit_is_pushed_and_our_own_is_not(team_url: str) -> None:
    heard: list[int] = []
    changed = threading.Event()

    def on_change() -> None:
        heard.append(1)
        changed.set()

    with Database(team_url) as database:
        assert database.watch_changes(on_change)
        listener = database._listeners[0]
        assert listener.wait_listening(WAIT_S)
        SkillRepository(database, Actor("tester")).create(ai_skill(name="Ours"))  # not heard as someone else's
        code = textwrap.dedent(
            f"""
            from skillstudio.store import Actor, Database, SkillRepository
            from tests.factories import ai_skill
            with Database({team_url!r}) as database:
                SkillRepository(database, Actor("other")).create(ai_skill(name="Theirs"))
            """
        )
        subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
        assert changed.wait(WAIT_S), "the other process's commit was not pushed"
        # notifications arrive in commit order, so ours (earlier) would have been heard first
        assert heard == [1]


def test_a_file_library_has_nothing_to_listen_to(tmp_path) -> None:
    with Database(tmp_path / "lib.db", create=True) as database:
        assert database.watch_changes(lambda: None) is False


def test_the_listener_says_when_the_server_goes_and_hears_it_come_back(
    team_url: str, postgres_server: PostgresServer
) -> None:
    if postgres_server.data_dir is None:
        pytest.skip("the server is not this test session's own (CI's): it cannot be restarted here")
    events: list[tuple[bool, str]] = []
    back = threading.Event()
    changes = threading.Event()

    def on_connection(connected: bool, reason: str) -> None:
        events.append((connected, reason))
        if connected:
            back.set()

    with Database(team_url) as database:
        assert database.watch_changes(changes.set, on_connection)
        assert database._listeners[0].wait_listening(WAIT_S)
        postgres_server.pg_ctl_run("stop")
        postgres_server.pg_ctl_run("start")
        assert back.wait(WAIT_S), f"no reconnection heard: {events}"
        assert events[0][0] is False and events[0][1]  # lost, with the driver's reason
        assert changes.wait(WAIT_S)  # back: what was missed may have changed, so reload
        # and it listens again: another commit is pushed
        changes.clear()
        with raw(team_url, "alice") as other:
            other.execute("UPDATE skills SET use_count = use_count + 1")
        assert changes.wait(WAIT_S)


def test_an_agent_serves_mcp_as_its_own_login_role(team_url: str) -> None:
    from tests.agents.mcp_helpers import result_data, run_session

    agent_url = as_role(team_url, "bot-7")

    async def work(session):
        return result_data(
            await session.call_tool(
                "skill_create",
                {"name": "Scout first", "description": "Look before you leap.", "instructions": "Scout."},
            )
        )

    created = run_session(agent_url, "bot-7", work)
    assert created["status"] == "created"
    with raw(team_url, "postgres") as admin:
        row = admin.execute("SELECT created_by FROM studio_skill_meta WHERE skill_id = %s", (created["id"],)).fetchone()
        assert row == ("bot-7",)


def test_mcp_refuses_an_agent_id_other_than_the_login_role(team_url: str, capsys) -> None:
    agent_url = as_role(team_url, "bot-7")
    assert main(["mcp", "--db", agent_url, "--agent-id", "someone-else"]) == 1
    assert "give --agent-id bot-7" in capsys.readouterr().err
    assert main(["mcp", "--db", as_role(team_url, "alice"), "--agent-id", "alice"]) == 1
    assert "is a human's login" in capsys.readouterr().err


def test_a_connection_service_file_names_the_server_and_no_password_is_kept(
    team_url: str, tmp_path, monkeypatch
) -> None:
    u = make_url(team_url)
    services = tmp_path / "pg_service.conf"
    services.write_text(f"[skills]\nhost={u.host}\nport={u.port}\nuser=alice\ndbname={u.database}\n")
    monkeypatch.setenv("PGSERVICEFILE", str(services))
    with Database("postgresql+psycopg:///?service=skills") as database:
        assert SkillRepository(database).count() == len(load_sample())
        assert team_roles.identity(database) == ("alice", "human")


def test_the_documentation_lists_each_privilege_the_roles_hold() -> None:
    from pathlib import Path

    text = (Path(__file__).parents[1] / "docs" / "team-library.md").read_text(encoding="utf-8")
    for privilege in team_roles.PRIVILEGES:
        tables = privilege.tables if privilege.tables == "every table" else f"`{privilege.tables}`"
        assert f"| `{privilege.role}` | {tables} | {privilege.grants} |" in text


def test_the_team_benchmark_runs_on_a_team_library_and_loses_nothing(team_url: str, tmp_path) -> None:
    pytest.importorskip("mcp")
    from benchmarks import bench_team

    assert bench_team.main(["--quick", "--db", team_url, "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "team-postgresql.json").read_text(encoding="utf-8"))
    assert report["designers"]["acknowledged"] > 0 and report["agents"]["acknowledged"] > 0
    assert report["lost_updates"] == 0 and report["agents"]["failed_processes"] == 0
    with raw(team_url, "postgres") as admin:  # the agents wrote as their own roles
        creators = {row[0] for row in admin.execute("SELECT DISTINCT created_by FROM studio_skill_meta")}
    assert "agent-0" in creators


def test_only_the_owner_upgrades_a_team_library_and_a_member_is_told_whom_to_ask(team_url: str) -> None:
    with Database(team_url) as database, database.engine.begin() as connection:  # as a newer schema finds it
        connection.exec_driver_sql(f"DELETE FROM studio_schema_migrations WHERE version = {LATEST_VERSION}")
    with pytest.raises(LibraryTooOld, match="only the library's owner can upgrade it"):
        Database(as_role(team_url, "alice"))
    with Database(team_url) as database, database.engine.connect() as connection:  # the owner's open upgrades it
        assert schema_version(connection) == LATEST_VERSION
    with Database(as_role(team_url, "alice")) as database:
        assert SkillRepository(database, Actor("alice")).query(SkillQuery(text="rush")).total > 0
