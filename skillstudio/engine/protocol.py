"""The engine process protocol (docs/engine-protocol.md), SkillStudio's side.

SkillStudio starts an engine (an argv list, never a shell string), writes one JSON job line on its
stdin and closes it, and reads JSON Lines from its stdout: a ``hello`` (with the protocol version),
one ``game`` line per game in game order, and a final ``summary``. :class:`ProcessEngine` turns
every way an engine can fail into *error* games (never losses), each with the tail of the engine's
stderr, and carries on with the rest of the batch by restarting the engine for the games that are
left. Only an engine speaking another protocol version stops a batch, with
:class:`ProtocolVersionError`.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from skillstudio.engine import rng
from skillstudio.engine.results import GameResult
from skillstudio.engine.schema import check
from skillstudio.model.document import skill_to_document
from skillstudio.model.skill import Skill
from skillstudio.model.validation import ValidationError

PROTOCOL_VERSION = 1
MAX_LINE_BYTES = 1 << 20  # a longer stdout line is garbage
STDERR_TAIL_CHARS = 2000
MAX_GAMES_PER_JOB = 1_000_000


class EngineError(RuntimeError):
    """The engine cannot be used at all (as opposed to failing a game)."""


class ProtocolVersionError(EngineError):
    """The engine speaks another protocol version; SkillStudio refuses it."""


# ================================================================================================
# Jobs
# ================================================================================================


@dataclass(frozen=True)
class Job:
    """One batch (or the rest of one) for an engine."""

    module: str
    opponent: str
    skill: Mapping[str, Any]  # the skill document
    batch_seed: int
    first_game: int
    seeds: tuple[int, ...]
    engine_version: str | None = None
    timeline_samples: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def games(self) -> int:
        return len(self.seeds)

    @classmethod
    def for_skill(
        cls,
        skill: Skill,
        opponent: str,
        games: int,
        batch_seed: int,
        *,
        module: str | None = None,
        first_game: int = 0,
        engine_version: str | None = None,
    ) -> Job:
        """A job whose per-game seeds derive from (batch seed, skill id, game index), like
        :func:`skillstudio.engine.batch.run_batch`, so the in-process and process paths agree."""
        if not 0 <= games <= MAX_GAMES_PER_JOB:
            raise ValueError(f"games must be 0..{MAX_GAMES_PER_JOB}, got {games}")
        seeds = rng.derive_seeds(batch_seed, skill.id, first_game, games)
        return cls(
            module=module or skill.game_module,
            opponent=opponent,
            skill=skill_to_document(skill, local=False),
            batch_seed=int(batch_seed),
            first_game=first_game,
            seeds=tuple(int(s) for s in seeds),
            engine_version=engine_version if engine_version is not None else (skill.provenance.engine_version or None),
        )

    def rest(self, from_game: int) -> Job:
        """The same job for games ``from_game ..`` only (after an engine failure)."""
        skip = from_game - self.first_game
        return Job(
            self.module,
            self.opponent,
            self.skill,
            self.batch_seed,
            from_game,
            self.seeds[skip:],
            self.engine_version,
            self.timeline_samples,
            self.extra,
        )

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            **self.extra,
            "type": "job",
            "protocol": PROTOCOL_VERSION,
            "module": self.module,
            "engine_version": self.engine_version,
            "opponent": self.opponent,
            "skill": dict(self.skill),
            "batch_seed": self.batch_seed,
            "first_game": self.first_game,
            "games": self.games,
            "seeds": list(self.seeds),
        }
        if self.timeline_samples is not None:
            data["timeline_samples"] = self.timeline_samples
        return data

    def to_line(self) -> bytes:
        return (json.dumps(self.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")

    @classmethod
    def from_json(cls, data: Any) -> Job:
        """A job as an engine reads it; ValidationError names every problem."""
        issues = check(data, "job")
        if not issues and len(data["seeds"]) != data["games"]:
            from skillstudio.model.validation import Issue

            issues.append(Issue("seeds", f"has {len(data['seeds'])} entries but games is {data['games']}"))
        if issues:
            raise ValidationError(issues, context="job")
        known = {
            "type",
            "protocol",
            "module",
            "engine_version",
            "opponent",
            "skill",
            "batch_seed",
            "first_game",
            "games",
            "seeds",
            "timeline_samples",
        }
        return cls(
            module=data["module"],
            opponent=data["opponent"],
            skill=data["skill"],
            batch_seed=data["batch_seed"],
            first_game=data["first_game"],
            seeds=tuple(data["seeds"]),
            engine_version=data.get("engine_version"),
            timeline_samples=data.get("timeline_samples"),
            extra={key: value for key, value in data.items() if key not in known},
        )


def parse_line(raw: bytes) -> object:
    """JSON from one output line; NaN and Infinity are not JSON and count as garbage."""

    def no_constants(name: str) -> Any:
        raise ValueError(f"{name} is not valid JSON")

    return json.loads(raw.decode("utf-8"), parse_constant=no_constants)


# ================================================================================================
# The client
# ================================================================================================


@dataclass
class EngineInfo:
    engine: str = ""
    engine_version: str = ""
    protocol: int = 0
    hello: dict[str, Any] = field(default_factory=dict)


class _Pipe:
    """One engine process with reader threads for stdout (lines) and stderr (a bounded tail)."""

    EOF = object()

    def __init__(self, argv: Sequence[str], job_line: bytes, env: Mapping[str, str] | None, cwd: str | None):
        kwargs: dict[str, Any] = {}
        # sys.platform rather than os.name: the type checker knows the flag exists only on Windows
        if sys.platform == "win32":  # pragma: no cover - Windows
            kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP
        else:
            kwargs["start_new_session"] = True  # its own process group, killed as a whole
        self.process = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=None if env is None else dict(env),
            cwd=cwd,
            **kwargs,
        )
        self.lines: queue.Queue[Any] = queue.Queue()
        self._stderr: collections.deque[bytes] = collections.deque()
        self._stderr_size = 0
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._write, args=(job_line,), daemon=True),
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _write(self, data: bytes) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(data)
            stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass  # the engine exited or closed its stdin; its output tells what happened
        finally:
            with contextlib.suppress(BrokenPipeError, OSError):
                stdin.close()

    def _read_stdout(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        with stdout:
            self._pump_stdout(stdout)

    def _pump_stdout(self, stdout: IO[bytes]) -> None:
        try:
            while True:
                line = stdout.readline(MAX_LINE_BYTES + 1)
                if not line:
                    break
                if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                    while True:  # skip the rest of an overlong line
                        rest = stdout.readline(MAX_LINE_BYTES)
                        if not rest or rest.endswith(b"\n"):
                            break
                    self.lines.put(None)  # marks "too long"
                    continue
                self.lines.put(line)
        except (OSError, ValueError):
            pass
        finally:
            self.lines.put(self.EOF)

    def _read_stderr(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        with stderr:
            self._pump_stderr(stderr)

    def _pump_stderr(self, stderr: IO[bytes]) -> None:
        try:
            while True:
                chunk = stderr.read1(8192) if hasattr(stderr, "read1") else stderr.read(8192)
                if not chunk:
                    break
                with self._lock:
                    self._stderr.append(chunk)
                    self._stderr_size += len(chunk)
                    while self._stderr_size > 4 * STDERR_TAIL_CHARS and len(self._stderr) > 1:
                        self._stderr_size -= len(self._stderr.popleft())
        except (OSError, ValueError):
            pass

    def stderr_tail(self, wait: float = 0.0, settle: float = 0.0) -> str:
        """The last of stderr. ``wait``: let the reader finish (the process ended); ``settle``:
        give a running engine's stderr a moment to arrive (it is a separate pipe, read apart)."""
        if wait:
            self._threads[2].join(wait)
        if settle:
            time.sleep(settle)
        with self._lock:
            data = b"".join(self._stderr)
        return data.decode("utf-8", "replace")[-STDERR_TAIL_CHARS:].strip()

    def kill(self) -> None:
        if self.process.poll() is None:
            try:
                if os.name == "posix":
                    os.killpg(self.process.pid, signal.SIGKILL)
                else:  # pragma: no cover - Windows
                    self.process.kill()
            except (ProcessLookupError, PermissionError, OSError):
                pass
        with contextlib.suppress(subprocess.TimeoutExpired):  # pragma: no cover - a process that survives SIGKILL
            self.process.wait(timeout=5)

    def close(self, grace_s: float) -> int | None:
        """Wait a little for a normal exit, then kill the process group; returns the exit code.

        The stdout and stderr pipes are not closed here: a reader thread may be blocked on one
        (if something outside the process group still holds it open), and closing a buffered
        pipe under a blocked reader deadlocks. The daemon readers close them at end of file.
        """
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=grace_s)
        self.kill()
        return self.process.returncode


class ProcessEngine:
    """An external engine behind the protocol: ``ProcessEngine(argv, timeout_s).run(job)``.

    ``run`` yields exactly one :class:`GameResult` per game of the job, in order. A game the
    engine does not report within ``timeout_s`` (after the previous one; the first gets
    ``startup_timeout_s`` more), a crash, a hang, a line that is not JSON or is out of range: each
    becomes an error result for that game with the stderr tail, and the engine is restarted for
    the games after it. After ``max_failures`` failed attempts in a row the remaining games are
    recorded as errors without trying further.
    """

    def __init__(
        self,
        argv: Sequence[str],
        timeout_s: float = 60.0,
        *,
        startup_timeout_s: float = 30.0,
        max_failures: int = 3,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> None:
        if isinstance(argv, str | bytes) or not argv or not all(isinstance(a, str) for a in argv):
            raise TypeError("an engine is an argv list of strings (never a shell string)")
        if timeout_s <= 0 or startup_timeout_s < 0:
            raise ValueError("timeouts must be positive")
        self.argv = list(argv)
        self.timeout_s = float(timeout_s)
        self.startup_timeout_s = float(startup_timeout_s)
        self.max_failures = max(1, int(max_failures))
        self.env = env
        self.cwd = cwd
        self.info = EngineInfo()
        self.summaries: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self.restarts = 0

    @property
    def name(self) -> str:
        return os.path.basename(self.argv[0])

    def run(self, job: Job) -> Iterator[GameResult]:
        next_game = job.first_game
        end = job.first_game + job.games
        failures = 0
        last_error: GameResult | None = None
        fatal = False
        while next_game < end:
            if failures >= self.max_failures:
                assert last_error is not None
                reason = (
                    last_error.error
                    if fatal
                    else f"not played: the engine failed {failures} times in a row (last: {last_error.error})"
                )
                for game in range(next_game, end):
                    yield GameResult.failed(
                        game, reason or "", seed=job.seeds[game - job.first_game], stderr_tail=last_error.stderr_tail
                    )
                return
            if failures:
                self.restarts += 1
            for result in self._attempt(job.rest(next_game)):
                broke = result.extra.pop("_broke", False)
                fatal = result.extra.pop("_fatal", False)
                yield result
                next_game = result.game + 1
                if fatal:
                    failures, last_error = self.max_failures, result
                elif broke:
                    failures, last_error = failures + 1, result
                elif not result.is_error:
                    failures = 0

    def _attempt(self, job: Job) -> Iterator[GameResult]:
        """One engine process for ``job``; stops after the first failure that ends the process."""
        expected = job.first_game
        end = job.first_game + job.games

        def seed_of(game: int) -> int:
            return job.seeds[game - job.first_game]

        try:
            pipe = _Pipe(self.argv, job.to_line(), self.env, self.cwd)
        except OSError as error:
            reason = f"cannot start engine {self.argv[0]!r}: {error.strerror or error}"
            for game in range(expected, end):
                yield _broken(GameResult.failed(game, reason, seed=seed_of(game)), fatal=True)
            return

        def fail(reason: str, *, fatal: bool = False) -> GameResult:
            return _broken(
                GameResult.failed(expected, reason, seed=seed_of(expected), stderr_tail=pipe.stderr_tail(wait=0.5)),
                fatal=fatal,
            )

        greeted = False
        deadline = time.monotonic() + self.startup_timeout_s + self.timeout_s
        try:
            while expected < end:
                remaining = deadline - time.monotonic()
                try:
                    item = pipe.lines.get(timeout=max(remaining, 0.0))
                except queue.Empty:
                    pipe.kill()
                    what = "said hello" if not greeted else f"reported game {expected}"
                    limit = self.startup_timeout_s + self.timeout_s if not greeted else self.timeout_s
                    yield fail(f"timeout: the engine has not {what} within {limit:g} s (killed)")
                    return
                if item is _Pipe.EOF:
                    code = pipe.close(grace_s=2.0)
                    yield fail(f"the engine exited (code {code}) before reporting game {expected}")
                    return
                if item is None:
                    if not greeted:
                        pipe.kill()
                        yield fail("the engine's first line is not a hello (an overlong line)")
                        return
                    yield _garbage(expected, seed_of(expected), "an output line longer than 1 MiB", pipe)
                    expected += 1
                    deadline = time.monotonic() + self.timeout_s
                    continue
                try:
                    data = parse_line(item)
                except (UnicodeDecodeError, ValueError) as error:
                    snippet = item[:120].decode("utf-8", "replace").strip()
                    if not greeted:
                        pipe.kill()
                        yield fail(f"the engine's first line is not a protocol hello: {snippet!r}")
                        return
                    yield _garbage(expected, seed_of(expected), f"unreadable line {snippet!r} ({error})", pipe)
                    expected += 1
                    deadline = time.monotonic() + self.timeout_s
                    continue
                line: dict[str, Any] = data if isinstance(data, dict) else {}  # JSON: the keys are text
                kind = line.get("type")
                if not greeted:
                    if kind != "hello":
                        pipe.kill()
                        yield fail(f"the engine's first line is not a protocol hello (type {kind!r})")
                        return
                    self._hello(line, pipe)  # raises ProtocolVersionError
                    greeted = True
                    deadline = time.monotonic() + self.timeout_s
                    continue
                if kind == "game":
                    deadline = time.monotonic() + self.timeout_s
                    try:
                        result = GameResult.from_json(line)
                    except ValidationError as error:
                        yield _garbage(expected, seed_of(expected), f"invalid result: {error}", pipe)
                        expected += 1
                        continue
                    if result.game != expected:
                        yield _garbage(
                            expected,
                            seed_of(expected),
                            f"result for game {result.game} where game {expected} was due",
                            pipe,
                        )
                        expected += 1
                        continue
                    if result.is_error:  # the engine itself says the game failed
                        tail = pipe.stderr_tail(settle=0.1)
                        result = GameResult.failed(
                            expected, f"engine: {result.error}", seed=seed_of(expected), stderr_tail=tail
                        )
                    yield result
                    expected += 1
                elif kind == "error":
                    said = line.get("message")
                    message = said if isinstance(said, str) else "(no message)"
                    pipe.kill()
                    yield fail(f"the engine refused the job: {message[:1000]}", fatal=True)
                    return
                elif kind == "summary":
                    self.summaries.append(line)
                    self.notes.append(f"summary before game {expected} of {end}")
                elif kind == "hello":
                    self.notes.append("a second hello line was ignored")
                # other types (progress, log, ...) are ignored; they do not extend the deadline
            # all games reported: read the summary if it comes promptly, then let the engine exit
            wait_until = time.monotonic() + min(self.timeout_s, 5.0)
            while True:
                try:
                    item = pipe.lines.get(timeout=max(wait_until - time.monotonic(), 0.0))
                except queue.Empty:
                    self.notes.append("no summary line")
                    break
                if item is _Pipe.EOF:
                    self.notes.append("no summary line")
                    break
                try:
                    data = parse_line(item) if item is not None else None
                except (UnicodeDecodeError, ValueError):
                    continue
                if isinstance(data, dict) and data.get("type") == "summary":
                    if check(data, "summary"):
                        self.notes.append("the summary line is malformed")
                    self.summaries.append(data)
                    break
        finally:
            pipe.close(grace_s=2.0)

    def _hello(self, data: dict[str, Any], pipe: _Pipe) -> None:
        version = data.get("protocol")
        named = data.get("engine")
        engine = named if isinstance(named, str) else self.name
        if type(version) is not int or version != PROTOCOL_VERSION:  # not True, not 1.0
            pipe.kill()
            spoken = "no protocol version" if version is None else f"protocol version {version!r}"
            raise ProtocolVersionError(
                f"engine {engine!r} ({' '.join(self.argv)[:200]}) speaks {spoken}, but SkillStudio speaks "
                f"protocol version {PROTOCOL_VERSION}; refused. Use an engine build for protocol {PROTOCOL_VERSION}."
            )
        issues = check(data, "hello")
        if issues:
            self.notes.append(f"hello line: {'; '.join(map(str, issues))}")
        self.info = EngineInfo(
            engine=engine,
            engine_version=str(data.get("engine_version", ""))[:64],
            protocol=version,
            hello=data,
        )


def _broken(result: GameResult, *, fatal: bool = False) -> GameResult:
    """Mark an error result as having ended the engine process (internal; not sent anywhere)."""
    result.extra["_broke"] = True
    if fatal:
        result.extra["_fatal"] = True
    return result


def _garbage(game: int, seed: int, reason: str, pipe: _Pipe) -> GameResult:
    return GameResult.failed(game, reason, seed=seed, stderr_tail=pipe.stderr_tail(settle=0.1))


def reference_engine_argv(*extra: str) -> list[str]:
    """The argv of SkillStudio's own engine: this Python running ``-m skillstudio.engine``."""
    return [sys.executable, "-m", "skillstudio.engine", *extra]


def results_to_arrays(results: Sequence[GameResult]) -> dict[str, np.ndarray]:
    """Outcome counts and per-game numbers as arrays (error games as NaN / outcome 'error')."""
    nan = float("nan")

    def pick(key: str) -> np.ndarray:
        return np.array([nan if getattr(r, key) is None else getattr(r, key) for r in results], dtype=float)

    return {
        "game": np.array([r.game for r in results], dtype=np.int64),
        "outcome": np.array([r.outcome for r in results]),
        "duration_s": pick("duration_s"),
        "resource_delta": pick("resource_delta"),
        "army_value_delta": pick("army_value_delta"),
        "map_control": pick("map_control"),
    }
