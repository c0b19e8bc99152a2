"""A team library's server restarts under a writer: the CLI says what is wrong while it is down,
no acknowledged write is lost, nothing half-written remains, and writing resumes by itself."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from skillstudio.cli.main import main
from skillstudio.library import create_library
from skillstudio.store import Database, SkillRepository
from tests.outside import another_program
from tests.postgres_server import PostgresServer

WRITER = textwrap.dedent(
    """
    import json, sys, time
    from dataclasses import replace
    from skillstudio.store import Actor, Database, LibraryError, SkillRepository
    from tests.factories import ai_skill

    url, out, stop_file = sys.argv[1], sys.argv[2], sys.argv[3]
    acknowledged, failures, n = [], [], 0
    with Database(url, lock_wait=2) as database:
        repository = SkillRepository(database, Actor("writer"))
        while True:
            n += 1
            name = f"written {n}"
            try:
                skill = repository.create(replace(ai_skill(name=name), id=f"00000000-0000-4000-8000-{n:012d}"))
            except LibraryError as error:  # the server is away: say so, and try again
                failures.append(str(error))
                time.sleep(0.05)
            else:
                acknowledged.append(skill.id)
            with open(stop_file) as flag:
                if flag.read() == "stop" and len(acknowledged) > 20:
                    break
    with open(out, "w") as f:
        json.dump({"acknowledged": acknowledged, "failures": failures}, f)
    """
)


@pytest.fixture
def restartable(postgres_server: PostgresServer) -> PostgresServer:
    if postgres_server.data_dir is None:
        pytest.skip("the server is not this test session's own: it cannot be restarted here")
    return postgres_server


def test_a_restart_loses_no_acknowledged_write_and_leaves_nothing_half_written(
    restartable: PostgresServer, tmp_path: Path, capsys
) -> None:
    url = restartable.empty_database()
    try:
        create_library(url).close()
        out, flag = tmp_path / "writer.json", tmp_path / "flag"
        flag.write_text("")
        writer = subprocess.Popen([sys.executable, "-c", WRITER, url, str(out), str(flag)])
        try:
            deadline = time.monotonic() + 60
            while _count(url) < 10:  # the writer is writing
                assert time.monotonic() < deadline and writer.poll() is None
                time.sleep(0.05)
            restartable.pg_ctl_run("stop")  # every connection dropped, mid-write
            assert main(["stats", "--db", url]) == 1
            err = capsys.readouterr().err
            assert "cannot connect to the PostgreSQL server" in err and "Traceback" not in err
            time.sleep(0.5)  # the writer meets the closed server
            restartable.pg_ctl_run("start")
            flag.write_text("stop")
            assert writer.wait(timeout=120) == 0
        finally:
            if writer.poll() is None:
                writer.kill()
        result = json.loads(out.read_text())
        assert result["failures"], "the writer never met the stopped server"
        assert all("connect" in f or "connection" in f for f in result["failures"]), result["failures"][:3]
        with Database(url) as database:
            stored = set(SkillRepository(database).query().ids)
        assert set(result["acknowledged"]) <= stored  # none lost
        with another_program(url) as other:  # each stored skill whole: its studio rows came with it
            for table in ("studio_skill_meta", "studio_skill_versions", "studio_revisions", "studio_audit_log"):
                column = "skill_id"
                missing = other.exec_driver_sql(
                    f"SELECT count(*) FROM skills WHERE id NOT IN (SELECT {column} FROM {table} WHERE {column} IS NOT NULL)"
                ).scalar_one()
                assert missing == 0, table
            orphans = other.exec_driver_sql(
                "SELECT count(*) FROM studio_skill_meta WHERE skill_id NOT IN (SELECT id FROM skills)"
            ).scalar_one()
            assert orphans == 0
    finally:
        restartable.drop(url)


def _count(url: str) -> int:
    with another_program(url) as other:
        return int(other.exec_driver_sql("SELECT count(*) FROM skills").scalar_one())
