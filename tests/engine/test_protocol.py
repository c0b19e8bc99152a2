"""The process protocol, end to end with real subprocesses: the shipped engine, and deliberately
broken engines (tests/engine/broken_engines/) whose every failure must become an error game."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from skillstudio.engine.batch import run_batch
from skillstudio.engine.protocol import (
    PROTOCOL_VERSION,
    Job,
    ProcessEngine,
    ProtocolVersionError,
    reference_engine_argv,
)
from skillstudio.model import ValidationError, VerifiedExample
from tests.engine.plans import pattern, skill

ROOT = Path(__file__).resolve().parents[2]
BROKEN = Path(__file__).resolve().parent / "broken_engines"
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def fake(name: str, *args: str) -> list[str]:
    return [sys.executable, str(BROKEN / f"{name}.py"), *args]


def make_job(games: int = 10, *, opponent: str = "IC Default Hard", first_game: int = 0, body=None) -> Job:
    return Job.for_skill(
        skill(body or pattern(bindings=(("aggression", 65), ("flux_capacitor", 1)))),
        opponent,
        games,
        7,
        first_game=first_game,
    )


def engine(argv: list[str], timeout_s: float = 20.0, **kwargs) -> ProcessEngine:
    return ProcessEngine(argv, timeout_s, env=ENV, **kwargs)


# --- the shipped engine ---------------------------------------------------------------------------


def test_shipped_engine_matches_the_in_process_engine() -> None:
    job = make_job(40)
    client = engine(reference_engine_argv())
    results = list(client.run(job))
    expected = run_batch(skill(pattern(bindings=(("aggression", 65), ("flux_capacitor", 1)))), "IC Default Hard", 40, 7)
    assert [r.game for r in results] == list(range(40))
    assert [r.outcome for r in results] == [g.outcome for g in expected]
    assert [r.seed for r in results] == expected.seed.tolist()
    for got, want in zip(results, expected, strict=True):
        assert got.duration_s == want.duration_s
        assert got.map_control == pytest.approx(want.map_control, abs=1e-3)
        assert got.resource_delta == pytest.approx(want.resource_delta, abs=1e-3)
        assert got.army_value_delta == pytest.approx(want.army_value_delta, abs=1e-3)
        assert got.timeline is not None and got.timeline.t_s == want.timeline.t_s
        assert got.ignored_parameters == ("flux_capacitor",)
    assert client.info.protocol == PROTOCOL_VERSION and client.info.engine == "skillstudio-reference"
    summary = client.summaries[-1]
    assert (summary["games"], summary["wins"], summary["errors"]) == (40, expected.wins, 0)
    assert client.restarts == 0


def test_shipped_engine_plays_a_later_chunk_identically() -> None:
    whole = list(engine(reference_engine_argv()).run(make_job(30)))
    tail = list(engine(reference_engine_argv()).run(make_job(30).rest(18)))
    assert tail == whole[18:]


def test_shipped_engine_refuses_an_unknown_opponent_and_names_the_valid_ones() -> None:
    client = engine(reference_engine_argv())
    results = list(client.run(make_job(5, opponent="Skynet Hard")))
    assert len(results) == 5 and all(r.is_error for r in results)
    assert "IC Default Hard" in results[0].error and "Classic RA Normal" in results[0].error
    assert client.restarts == 0  # a refused job is not retried


def test_shipped_engine_refuses_a_skill_it_cannot_play() -> None:
    job = make_job(3)
    document = dict(job.skill)
    document["body"] = {"VerifiedExample": {"prompt_context": "p", "response": "r"}}
    results = list(engine(reference_engine_argv()).run(replace(job, skill=document)))
    assert all(r.is_error and "StrategicPattern" in r.error for r in results)


def test_shipped_engine_answers_another_protocol_version_with_an_error_line() -> None:
    line = make_job(2).to_json()
    line["protocol"] = 2
    done = subprocess.run(
        reference_engine_argv(),
        input=json.dumps(line) + "\n",
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
        check=False,  # the exit code is asserted below
    )
    out = [json.loads(x) for x in done.stdout.splitlines()]
    assert done.returncode == 2
    assert out[0]["type"] == "hello" and out[0]["protocol"] == PROTOCOL_VERSION
    assert out[1]["type"] == "error" and "protocol version 2" in out[1]["message"]


def test_shipped_engine_version_flag() -> None:
    done = subprocess.run(
        [*reference_engine_argv(), "--version"], capture_output=True, text=True, env=ENV, timeout=60, check=False
    )
    assert done.returncode == 0 and f"protocol {PROTOCOL_VERSION}" in done.stdout


# --- broken engines -------------------------------------------------------------------------------


def test_a_good_fake_engine() -> None:
    results = list(engine(fake("good")).run(make_job(6)))
    assert [r.outcome for r in results] == ["win", "loss"] * 3


def test_a_crash_is_an_error_game_with_the_stderr_tail_and_the_batch_goes_on() -> None:
    client = engine(fake("crash", "3"))
    results = list(client.run(make_job(8)))
    assert [r.game for r in results] == list(range(8))
    assert [r.is_error for r in results] == [False, False, False, True, False, False, False, False]
    crashed = results[3]
    assert "exited (code 3)" in crashed.error and "boom at game 3" in crashed.stderr_tail
    assert crashed.outcome == "error"  # not a loss
    assert client.restarts == 1


def test_a_hang_times_out_kills_the_process_group_and_the_batch_goes_on(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    client = engine(fake("hang", "2", str(pid_file)), timeout_s=1.5, startup_timeout_s=10)
    started = time.monotonic()
    results = list(client.run(make_job(5)))
    assert time.monotonic() - started < 20
    assert [r.is_error for r in results] == [False, False, True, False, False]
    assert "timeout" in results[2].error and "stuck on game 2" in results[2].stderr_tail
    child = int(pid_file.read_text())
    time.sleep(0.2)
    stat = Path(f"/proc/{child}/stat")
    if sys.platform.startswith("linux") and stat.exists():  # gone, or a zombie awaiting its reaper
        assert stat.read_text().split(")")[1].split()[0] == "Z"


@pytest.mark.parametrize(
    ("game", "reason"),
    [(1, "unreadable line"), (3, "map_control: 1.7 is above the maximum 1"), (5, "NaN"), (7, "result for game 70")],
)
def test_garbage_and_out_of_range_lines_are_error_games(game: int, reason: str) -> None:
    client = engine(fake("garbage"))
    results = list(client.run(make_job(9)))
    assert [r.game for r in results] == list(range(9))
    assert [r.game for r in results if r.is_error] == [1, 3, 5, 7]
    assert reason in results[game].error
    assert "printing garbage" in results[game].stderr_tail
    assert client.restarts == 0  # the engine kept going, so did we


@pytest.mark.parametrize(
    ("version", "words"),
    [
        ("2", "speaks protocol version 2"),
        ("none", "speaks no protocol version"),
        ("true", "speaks protocol version True"),
    ],
)
def test_another_protocol_version_is_refused_with_a_clear_message(version: str, words: str) -> None:
    client = engine(fake("wrong_version", version))
    with pytest.raises(ProtocolVersionError) as caught:
        list(client.run(make_job(3)))
    message = str(caught.value)
    assert words in message and f"SkillStudio speaks protocol version {PROTOCOL_VERSION}" in message
    assert "fake-engine" in message


def test_an_engine_without_a_hello_fails_every_game_after_a_few_tries() -> None:
    client = engine(fake("no_hello"), max_failures=2)
    results = list(client.run(make_job(4)))
    assert all(r.is_error for r in results)
    assert "not a protocol hello" in results[0].error and "do not speak the protocol" in results[0].stderr_tail
    assert "failed 2 times in a row" in results[-1].error
    assert client.restarts == 1


def test_an_engine_that_exits_early() -> None:
    results = list(engine(fake("silent"), max_failures=2).run(make_job(3)))
    assert all(r.is_error for r in results) and "exited (code 0) before reporting game 0" in results[0].error


def test_an_engine_reporting_a_failed_game() -> None:
    results = list(engine(fake("engine_error")).run(make_job(4)))
    assert [r.is_error for r in results] == [False, False, True, False]
    assert "map failed to load" in results[2].error


def test_an_engine_that_never_reads_its_job_cannot_block_the_client() -> None:
    games = 20_000  # a job line of several hundred kilobytes: more than a pipe buffer
    job = make_job(games)
    assert len(job.to_line()) > 256 * 1024
    results = list(engine(fake("deaf", "0", str(games))).run(job))
    assert len(results) == games and not any(r.is_error for r in results)


def test_an_engine_that_cannot_start() -> None:
    client = engine([str(BROKEN / "no-such-engine")])
    results = list(client.run(make_job(3)))
    assert all(r.is_error and "cannot start engine" in r.error for r in results)
    assert client.restarts == 0


def test_an_engine_is_an_argv_list_never_a_shell_string() -> None:
    with pytest.raises(TypeError):
        ProcessEngine("python -m skillstudio.engine")


# --- jobs -----------------------------------------------------------------------------------------


def test_job_round_trip_and_validation() -> None:
    job = make_job(5, first_game=10)
    assert Job.from_json(json.loads(job.to_line())) == job
    assert job.seeds == tuple(
        run_batch(pattern(), "IC Default Hard", 5, 7, first_game=10, skill_id=skill().id).seed.tolist()
    )
    data = job.to_json()
    data["seeds"] = data["seeds"][:3]
    with pytest.raises(ValidationError, match="seeds"):
        Job.from_json(data)
    data = job.to_json()
    data["games"] = -1
    with pytest.raises(ValidationError, match="games"):
        Job.from_json(data)


def test_rest_of_a_job() -> None:
    job = make_job(10)
    rest = job.rest(4)
    assert (rest.first_game, rest.games, rest.seeds) == (4, 6, job.seeds[4:])


def test_jobs_only_for_strategy_skills_fail_in_the_engine_not_here() -> None:
    other = replace(skill(), body=VerifiedExample("p", "r"))
    assert Job.for_skill(other, "IC Default Hard", 2, 1).games == 2
