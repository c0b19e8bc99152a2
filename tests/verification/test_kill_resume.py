"""A `skillstudio verify` process killed mid-batch, then `verify --resume`, gives the same final
counts as an uninterrupted run with the same seed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from skillstudio.cli.main import main
from skillstudio.store import Database, SkillRepository
from skillstudio.store.runs import RunStore
from tests.outside import another_program
from tests.verification.helpers import fill_library, playable_skills

ARGS = ["verify", "--games", "10", "--opponent", "IC Default Hard", "--seed", "17", "--chunk", "2", "--quiet"]


def _games_recorded(path: str) -> int:
    try:
        with another_program(path) as connection:
            return int(connection.execute(text("SELECT COUNT(*) FROM studio_run_games")).scalar_one())
    except DBAPIError:  # the batch holds the file's lock a moment (SQLite)
        return 0


def test_killed_run_resumes_to_the_uninterrupted_result(more_libraries, tmp_path: Path, capsys) -> None:
    count = 4
    complete = fill_library(more_libraries("complete"), count)
    assert main(["--db", str(complete), *ARGS]) == 0
    with Database(complete) as database:
        [reference_run] = RunStore(database).runs()
        reference_counts = RunStore(database).counts(reference_run.id)
        reference_quality = {s.id: SkillRepository(database).get(s.id).quality for s in playable_skills(count)}

    killed = fill_library(more_libraries("killed"), count)
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).parents[2]), os.environ.get("PYTHONPATH", "")])
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "skillstudio", "--db", str(killed), *ARGS],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    try:
        while _games_recorded(killed) < 6:
            assert process.poll() is None, "the batch finished before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(10)
    recorded = _games_recorded(killed)
    assert 6 <= recorded < 10 * count

    with Database(killed) as database:
        [run] = RunStore(database).runs()
        assert run.status == "running" and run.games_recorded == recorded
    capsys.readouterr()
    assert main(["--db", str(killed), "verify", "--resume", run.id[:6], "--json"]) == 0
    assert '"status": "finished"' in capsys.readouterr().out
    with Database(killed) as database:
        store = RunStore(database)
        assert store.run(run.id).status == "finished"
        assert store.counts(run.id) == reference_counts
        repository = SkillRepository(database)
        for skill in playable_skills(count):
            assert repository.get(skill.id).quality.verification_count == reference_quality[skill.id].verification_count
            assert repository.get(skill.id).quality.confidence == reference_quality[skill.id].confidence
            assert len(repository.evidence.verifications(skill.id)) == 1  # applied once, never twice
