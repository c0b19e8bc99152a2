"""The reference engine behind the process protocol: what ``python -m skillstudio.engine`` runs.

It is also the reference implementation a studio can copy: print a hello, read one job line,
validate it, play the games, print one line per game (flushing as it goes) and a summary.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from skillstudio.engine.batch import ENGINE_NAME, ENGINE_VERSION, NotAStrategySkill, engine_version, prepare
from skillstudio.engine.module import available_modules, load_module
from skillstudio.engine.opponents import UnknownOpponentError
from skillstudio.engine.protocol import PROTOCOL_VERSION, Job, parse_line
from skillstudio.engine.sim import OUTCOME_DRAW, OUTCOME_LOSS, OUTCOME_WIN, simulate
from skillstudio.engine.situation import SituationError
from skillstudio.model.document import parse_skill
from skillstudio.model.validation import ValidationError

MAX_JOB_BYTES = 64 << 20
FIRST_CHUNK, MAX_CHUNK = 1024, 16384  # games simulated (and reported) together; chunks grow x8 from
# the first: a first line within a fraction of a second, then large-batch speed, and never more
# than a few seconds between lines
OUTCOME_NAMES = {OUTCOME_WIN: "win", OUTCOME_LOSS: "loss", OUTCOME_DRAW: "draw"}
_COUNT_KEY = {"win": "wins", "loss": "losses", "draw": "draws"}


class JobError(Exception):
    """The job cannot be played; reported as an ``error`` line."""


def _emit(out: IO[str], data: dict[str, Any]) -> None:
    out.write(json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n")


def serve(stdin: IO[bytes], stdout: IO[str], *, module_dirs: Sequence[Path] = ()) -> int:
    """Speak the protocol on the given streams; returns the exit code."""
    search = tuple(Path(d) for d in module_dirs)
    _emit(
        stdout,
        {
            "type": "hello",
            "protocol": PROTOCOL_VERSION,
            "engine": ENGINE_NAME,
            "engine_version": ENGINE_VERSION,
            "modules": sorted({*available_modules(), *(m for d in search for m in available_modules(d))}),
        },
    )
    stdout.flush()
    try:
        job = _read_job(stdin)
        started = time.perf_counter()
        counts = _play(job, stdout, search)
    except JobError as error:
        _emit(stdout, {"type": "error", "message": str(error)[:4000]})
        stdout.flush()
        return 2
    _emit(stdout, {"type": "summary", **counts, "elapsed_s": round(time.perf_counter() - started, 3)})
    stdout.flush()
    return 0


def _read_job(stdin: IO[bytes]) -> Job:
    raw = stdin.readline(MAX_JOB_BYTES + 1)
    if not raw.strip():
        raise JobError("no job on stdin (expected one JSON line)")
    if len(raw) > MAX_JOB_BYTES:
        raise JobError(f"the job line is longer than {MAX_JOB_BYTES} bytes")
    try:
        data = parse_line(raw)
    except (UnicodeDecodeError, ValueError) as error:
        raise JobError(f"the job is not valid JSON: {error}") from None
    if isinstance(data, dict) and isinstance(data.get("protocol"), int) and data["protocol"] != PROTOCOL_VERSION:
        raise JobError(
            f"job protocol version {data['protocol']} is not supported; this engine speaks {PROTOCOL_VERSION}"
        )
    try:
        return Job.from_json(data)
    except ValidationError as error:
        raise JobError(str(error)) from None


def _play(job: Job, stdout: IO[str], search: tuple[Path, ...]) -> dict[str, object]:
    """Play the job, writing a line per game; returns the summary line's fields."""
    try:
        skill = parse_skill(job.skill, context="skill")
        module = load_module(job.module, search=search)
        setup, _opponent, _skill_id, ignored, notes = prepare(skill, job.opponent, module)
    except (ValidationError, UnknownOpponentError, NotAStrategySkill, SituationError) as error:
        raise JobError(str(error)) from None
    if job.timeline_samples not in (None, module.match.timeline_samples):
        notes = (
            *notes,
            f"timeline_samples {job.timeline_samples} ignored; module {module.id} samples {module.match.timeline_samples}",
        )
    counts = {"games": job.games, "wins": 0, "losses": 0, "draws": 0, "errors": 0}
    seeds = np.array(job.seeds, dtype=np.uint64)
    start, chunk = 0, FIRST_CHUNK
    while start < job.games:
        raw = simulate(setup, seeds[start : start + chunk])
        t_s = [round(float(t), 3) for t in raw.timeline_t]
        # round whole columns at once, then write each line (same fields as GameResult.to_json)
        columns = zip(
            np.round(raw.duration_s, 3).tolist(),
            np.round(raw.resource_delta, 3).tolist(),
            np.round(raw.army_value_delta, 3).tolist(),
            np.round(raw.map_control, 3).tolist(),
            np.round(raw.timeline[:, :, 0], 1).tolist(),
            np.round(raw.timeline[:, :, 1], 1).tolist(),
            raw.outcome.tolist(),
            strict=True,
        )
        for i, (duration, resources, army, control, skill_line, opponent_line, code) in enumerate(columns):
            outcome = OUTCOME_NAMES[code]
            counts[_COUNT_KEY[outcome]] += 1
            line = {
                "type": "game",
                "game": job.first_game + start + i,
                "seed": int(seeds[start + i]),
                "outcome": outcome,
                "duration_s": duration,
                "resource_delta": resources,
                "army_value_delta": army,
                "map_control": control,
                "timeline": {"t_s": t_s, "skill": skill_line, "opponent": opponent_line},
                "ignored_parameters": list(ignored),
            }
            _emit(stdout, line)
        stdout.flush()
        start += raw.outcome.shape[0]
        chunk = min(chunk * 8, MAX_CHUNK)
    return {**counts, "notes": list(notes)[:100], "engine_version": engine_version(module)}


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m skillstudio.engine",
        description="SkillStudio's reference skirmish engine, speaking the engine protocol "
        "(docs/engine-protocol.md): one JSON job on stdin, JSON Lines on stdout.",
    )
    parser.add_argument(
        "--modules", action="append", default=[], metavar="DIR", help="also look for <module>.yaml here"
    )
    parser.add_argument("--version", action="store_true", help="print the engine and protocol versions and exit")
    args = parser.parse_args(argv)
    if args.version:
        print(f"{ENGINE_NAME} {ENGINE_VERSION} (protocol {PROTOCOL_VERSION})")
        return 0
    stdout = sys.stdout
    try:
        return serve(sys.stdin.buffer, stdout, module_dirs=[Path(d) for d in args.modules])
    except BrokenPipeError:  # SkillStudio stopped reading (cancelled)
        return 1
