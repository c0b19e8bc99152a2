"""Concurrent runners on one real library (a SQLite file, a server database): one runner owns a run at a time (an atomic claim,
released on exit, taken over once its holder is gone), applying a skill's session is idempotent,
and concurrent batches of one skill add up (quality is recomputed from the evidence inside the
transaction that adds it). Real threads and processes, no mocks."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from skillstudio.cli.main import main
from skillstudio.store import Actor, Database, SkillRepository
from skillstudio.store.runs import RunStore
from skillstudio.verification.runner import (
    Progress,
    RunFinished,
    VerificationError,
    collect,
    run_verification,
    start_run,
    verify,
)
from tests.outside import engine_writes
from tests.verification.helpers import playable_skills

HARD = "IC Default Hard"
SKILLS, GAMES, CHUNK, SEED = 6, 10, 2, 17
ROOT = Path(__file__).parents[2]


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))


def _skills(database: Database):
    repository = SkillRepository(database, Actor("tester"))
    return [repository.get(skill.id) for skill in playable_skills(SKILLS)]


def _snapshot(path: str) -> dict[str, object]:
    """What a run left in the library: evidence rows, quality, promotions."""
    with engine_writes(path) as connection:
        evidence = connection.execute(
            "SELECT skill_id, COUNT(*), SUM(wins), SUM(losses + draws + wins) FROM studio_verifications "
            "GROUP BY skill_id ORDER BY skill_id"
        ).all()
        quality = connection.execute(
            "SELECT id, verification_count, success_rate, confidence FROM skills ORDER BY id"
        ).all()
        audit = connection.execute(
            "SELECT skill_id, action, COUNT(*) FROM studio_audit_log "
            "WHERE action IN ('skill.verify', 'skill.promote', 'skill.demote') GROUP BY skill_id, action ORDER BY 1, 2"
        ).all()
    return {"evidence": evidence, "quality": quality, "audit": audit}


def _library(make: Callable[[str], str], name: str, count: int = SKILLS) -> str:
    """A new library on the test's backend holding ``count`` playable skills."""
    target = make(name)
    with Database(target) as database:
        SkillRepository(database, Actor("tester")).create_many(playable_skills(count))
    return target


def _reference(make: Callable[[str], str]) -> dict[str, object]:
    path = _library(make, "reference")
    with Database(path) as database:
        final = collect(verify(database, _skills(database), opponent=HARD, games=GAMES, seed=SEED, chunk_games=CHUNK))
        assert final.status == "finished"
    return _snapshot(path)


def _interrupted(path: str, games_done: int = 14) -> str:
    """A run stopped part-way (skill 0 applied, skill 1 half played), deterministically."""
    with Database(path) as database:
        run_id = start_run(database, _skills(database), opponent=HARD, games=GAMES, seed=SEED, chunk_games=CHUNK)
        events = run_verification(database, run_id)
        for event in events:
            if isinstance(event, Progress) and event.games_done >= games_done:
                break
        events.close()
        assert RunStore(database).run(run_id).status == "cancelled"
    return run_id


def test_two_resumes_at_once_count_the_evidence_once(more_libraries) -> None:
    reference = _reference(more_libraries)
    path = _library(more_libraries, "lib")
    run_id = _interrupted(path)
    barrier = threading.Barrier(2)
    outcomes: list[object] = [None, None]

    def resume(slot: int) -> None:
        with Database(path) as database:
            events = run_verification(database, run_id)
            barrier.wait()
            try:
                outcomes[slot] = collect(events)
            except VerificationError as error:
                outcomes[slot] = error

    threads = [threading.Thread(target=resume, args=(slot,)) for slot in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    finished = [o for o in outcomes if isinstance(o, RunFinished)]
    refused = [o for o in outcomes if isinstance(o, VerificationError)]
    assert len(finished) + len(refused) == 2, outcomes
    assert any(o.status == "finished" and o.message != "already finished" for o in finished)
    for error in refused:
        assert f"run {run_id} is being resumed by process {os.getpid()} since" in str(error)
    assert _snapshot(path) == reference
    with Database(path) as database:
        assert RunStore(database).run(run_id).status == "finished"


def test_a_claimed_run_is_refused_by_the_cli_until_released(more_libraries, capsys) -> None:
    reference = _reference(more_libraries)
    path = _library(more_libraries, "lib")
    with Database(path) as database:
        run_id = start_run(database, _skills(database), opponent=HARD, games=GAMES, seed=SEED, chunk_games=CHUNK)
        events = run_verification(database, run_id)
        next(event for event in events if isinstance(event, Progress))  # running, suspended mid-batch
        capsys.readouterr()
        assert main(["--db", str(path), "verify", "--resume", run_id, "--quiet"]) == 1
        assert f"run {run_id} is being resumed by process {os.getpid()} since" in capsys.readouterr().err
        events.close()  # GeneratorExit releases the claim
    assert main(["--db", str(path), "verify", "--resume", run_id, "--quiet"]) == 0
    assert _snapshot(path) == reference


@pytest.mark.parametrize("stop", [KeyboardInterrupt, RuntimeError])
def test_the_claim_is_released_on_interrupt_and_error(more_libraries, stop: type[BaseException]) -> None:
    reference = _reference(more_libraries)
    path = _library(more_libraries, "lib")
    with Database(path) as database:
        run_id = start_run(database, _skills(database), opponent=HARD, games=GAMES, seed=SEED, chunk_games=CHUNK)
        events = run_verification(database, run_id)
        next(event for event in events if isinstance(event, Progress))
        with pytest.raises(stop):
            events.throw(stop("stop here"))
        assert RunStore(database).run(run_id).status in ("cancelled", "failed")
        assert collect(run_verification(database, run_id)).status == "finished"
    assert _snapshot(path) == reference


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait(30)
    return process.pid


def _set_claim(path: str, run_id: str, pid: int, host: str, heartbeat: str) -> None:
    with engine_writes(path) as connection:
        connection.execute(
            "UPDATE studio_verification_runs SET claimed_by = 'someone', claimed_pid = ?, claimed_host = ?, "
            "claimed_at = ?, heartbeat_at = ? WHERE id = ?",
            (pid, host, heartbeat, heartbeat, run_id),
        )


def test_a_stale_claim_is_taken_over(more_libraries) -> None:
    import socket

    from skillstudio.model import utc_now

    reference = _reference(more_libraries)
    path = _library(more_libraries, "lib")
    run_id = _interrupted(path)
    host = socket.gethostname()
    # A live holder (this process) with a fresh heartbeat: refused.
    _set_claim(path, run_id, os.getpid(), host, utc_now())
    with Database(path) as database, pytest.raises(VerificationError, match="is being resumed by process"):
        collect(run_verification(database, run_id))
    # Its process is gone (a kill -9 on this host): stale at once.
    _set_claim(path, run_id, _dead_pid(), host, utc_now())
    with Database(path) as database:
        assert collect(run_verification(database, run_id)).status == "finished"
    assert _snapshot(path) == reference
    # Another host's holder whose heartbeat is older than the bound: stale too.
    two = _library(more_libraries, "two")
    run_two = _interrupted(two)
    _set_claim(two, run_two, os.getpid(), "elsewhere", "2000-01-01T00:00:00Z")
    with Database(two) as database:
        assert collect(run_verification(database, run_two)).status == "finished"
    assert _snapshot(two) == reference


def test_applying_a_session_twice_adds_nothing(more_libraries) -> None:
    """Even with the claim out of the way (a run reopened by hand), each skill's session is
    stored at most once."""
    path = _library(more_libraries, "once")
    with Database(path) as database:
        collect(verify(database, _skills(database), opponent=HARD, games=GAMES, seed=SEED, chunk_games=CHUNK))
        [run] = RunStore(database).runs()
    reference = _snapshot(path)
    with engine_writes(path) as connection:
        connection.execute("UPDATE studio_verification_runs SET status = 'running' WHERE id = ?", (run.id,))
        connection.execute("UPDATE studio_run_skills SET applied_at = NULL WHERE run_id = ?", (run.id,))
    with Database(path) as database:
        final = collect(run_verification(database, run.id))
    assert final.status == "finished"
    assert all(result.action == "" for result in final.results)
    assert _snapshot(path) == reference


def test_concurrent_batches_of_one_skill_add_up(more_libraries) -> None:
    path = _library(more_libraries, "lib", 1)
    [skill] = playable_skills(1)
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "skillstudio",
                "--db",
                str(path),
                "verify",
                "--skill",
                skill.id,
                "--games",
                "1",
                "--opponent",
                HARD,
                "--seed",
                str(seed),
                "--quiet",
            ],
            env=_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for seed in range(6)
    ]
    for process in processes:
        assert process.wait(120) == 0, process.stderr.read().decode() if process.stderr else ""
        if process.stderr:
            process.stderr.close()
    with engine_writes(path) as connection:
        rows, decided = connection.execute(
            "SELECT COUNT(*), SUM(wins + losses + draws) FROM studio_verifications WHERE skill_id = ?", (skill.id,)
        ).one()
        [count] = connection.execute("SELECT verification_count FROM skills WHERE id = ?", (skill.id,)).one()
    assert rows == 6
    assert count == decided


def test_concurrent_batches_of_one_skill_add_up_in_threads(more_libraries) -> None:
    path = _library(more_libraries, "lib", 1)
    [skill] = playable_skills(1)
    barrier = threading.Barrier(6)
    errors: list[BaseException] = []

    def batch(seed: int) -> None:
        try:
            with Database(path) as database:
                skills = [SkillRepository(database).get(skill.id)]
                events = verify(database, skills, opponent=HARD, games=1, seed=seed)
                barrier.wait()
                assert collect(events).status == "finished"
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=batch, args=(seed,)) for seed in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors
    with engine_writes(path) as connection:
        rows, decided = connection.execute(
            "SELECT COUNT(*), SUM(wins + losses + draws) FROM studio_verifications WHERE skill_id = ?", (skill.id,)
        ).one()
        [count] = connection.execute("SELECT verification_count FROM skills WHERE id = ?", (skill.id,)).one()
    assert rows == 6
    assert count == decided


def test_two_resume_processes_at_once_count_the_evidence_once(more_libraries) -> None:
    reference = _reference(more_libraries)
    path = _library(more_libraries, "lib")
    run_id = _interrupted(path)
    command = [sys.executable, "-m", "skillstudio", "--db", str(path), "verify", "--resume", run_id, "--json"]
    processes = [
        subprocess.Popen(command, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    results = [(process.wait(120), *process.communicate()) for process in processes]
    assert sorted(code for code, _, _ in results) in ([0, 0], [0, 1]), results
    for code, _, err in results:
        if code == 1:
            assert f"run {run_id} is being resumed by process " in err
    assert _snapshot(path) == reference
