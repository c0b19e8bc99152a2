"""Engine benchmark: reference-engine games per second in process (one skill's batch, and many
skills' games in one call), and per-game overhead through the process protocol
(``python -m skillstudio.engine`` behind :class:`ProcessEngine`).

Run it alone with ``python -m benchmarks.bench_engine [--quick] [--sizes 1000 10000]`` (or
``python benchmarks/bench_engine.py``) or with every other benchmark through
``python -m benchmarks.run``. It measures and reports; it never fails on speed.

One core: the measurements run in a child process pinned to a single CPU (Linux) with BLAS,
OpenMP and MKL limited to one thread, whatever the parent process had already imported. The
process-protocol figures use two processes (the engine on one core, SkillStudio's reader on
another), as a real verification run does.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = Path(__file__).resolve().parent / "out"
DEFAULT_SIZES = (1_000, 10_000)
QUICK_SIZES = (1_000,)
DEFAULT_REPEATS = 5
DEFAULT_PROTOCOL_GAMES = 5_000
DEFAULT_MULTI = (500, 20)  # skills x games per skill: 10,000 games of a library in one call
QUICK_MULTI = (50, 20)
SINGLE_THREAD = dict.fromkeys(
    ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"), "1"
)


def _size(text: str) -> int:
    text = text.strip().lower().replace("_", "").replace(",", "")
    return int(float(text[:-1]) * 1000) if text.endswith("k") else int(text)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_engine", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", type=_size, help="batch sizes in games (default 1000 10000; 10k works)")
    parser.add_argument("--quick", action="store_true", help="1,000 games, fewer repeats, a smaller protocol batch")
    parser.add_argument("--repeats", type=int, default=None, help=f"timed runs per size (default {DEFAULT_REPEATS})")
    parser.add_argument(
        "--protocol-games",
        type=_size,
        default=None,
        help=f"games sent through the protocol (default {DEFAULT_PROTOCOL_GAMES})",
    )
    parser.add_argument(
        "--multi",
        nargs=2,
        type=int,
        metavar=("SKILLS", "GAMES"),
        default=None,
        help=f"many skills in one call: synthetic AI skills x games each (default {DEFAULT_MULTI[0]} {DEFAULT_MULTI[1]})",
    )
    parser.add_argument("--opponent", default="IC Default Hard")
    parser.add_argument("--module", default="ra1")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where engine.json goes")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    return parser


def _args(argv: Sequence[str] | None) -> argparse.Namespace:
    args, _unknown = _parser().parse_known_args(argv)  # benchmarks.run passes options for others too
    if args.sizes is None:
        args.sizes = list(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    if args.repeats is None:
        args.repeats = 2 if args.quick else DEFAULT_REPEATS
    if args.protocol_games is None:
        args.protocol_games = 500 if args.quick else DEFAULT_PROTOCOL_GAMES
    if args.multi is None:
        args.multi = list(QUICK_MULTI if args.quick else DEFAULT_MULTI)
    args.repeats = max(1, args.repeats)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = _args(list(argv) if argv is not None else sys.argv[1:])
    if args.child:
        return _child(args)
    command = [
        sys.executable,
        "-m",
        "benchmarks.bench_engine",
        "--child",
        "--sizes",
        *map(str, args.sizes),
        "--repeats",
        str(args.repeats),
        "--protocol-games",
        str(args.protocol_games),
        "--multi",
        *map(str, args.multi),
        "--opponent",
        args.opponent,
        "--module",
        args.module,
        "--out",
        str(args.out),
    ]
    env = {
        **os.environ,
        **SINGLE_THREAD,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    return subprocess.call(command, cwd=ROOT, env=env)


def _pin_to_one_core() -> str:
    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu}"
    return "not pinned (no sched_setaffinity on this platform)"


def _child(args: argparse.Namespace) -> int:
    pinning = _pin_to_one_core()
    import numpy as np

    from skillstudio.engine import rng
    from skillstudio.engine.batch import prepare, run_batch
    from skillstudio.engine.protocol import Job, ProcessEngine, reference_engine_argv
    from skillstudio.engine.sim import simulate
    from skillstudio.model import (
        BuildFocus,
        Domain,
        EconomicGuidance,
        EconomyState,
        GamePhase,
        Provenance,
        RiskAssessment,
        SituationSignature,
        Skill,
        Source,
        StrategicPattern,
        StrategicPlan,
        ThreatLevel,
    )

    pattern = StrategicPattern(
        SituationSignature(GamePhase.EARLY, EconomyState.EVEN),
        StrategicPlan(
            BuildFocus.MIXED,
            economic_guidance=EconomicGuidance(expand=True, harvester_target=5),
            risk_assessment=RiskAssessment(threat_level=ThreatLevel.MEDIUM),
        ),
    )
    skill = Skill(
        id="bench-engine-skill",
        domain=Domain.AI_STRATEGY,
        name="Benchmark plan",
        description="Mixed, expands",
        body=pattern,
        provenance=Provenance(Source.hand_authored(), args.module),
        created_at="2025-01-01T00:00:00.000Z",
    )
    setup, opponent, _id, _ignored, _notes = prepare(skill, args.opponent, args.module)
    print(
        f"SkillStudio engine benchmark: module {args.module}, opponent {opponent.label}, plan Mixed/expand/5 harvesters; "
        f"{setup.module.match.steps} steps of {setup.module.match.step_s:g} s, {len(setup.cm.units)} unit types; "
        f"batch sizes {', '.join(f'{s:,}' for s in args.sizes)} games, best of {args.repeats}; one core ({pinning}, "
        f"BLAS threads {os.environ.get('OPENBLAS_NUM_THREADS', '?')})",
        flush=True,
    )
    simulate(setup, rng.derive_seeds(0, "warm-up", 0, 64))  # warm caches and lazy imports

    report: dict[str, Any] = {
        "environment": _environment(pinning),
        "module": args.module,
        "opponent": opponent.label,
        "in_process": [],
        "protocol": None,
    }
    print(
        f"\n{'games':>8} {'best s':>8} {'median s':>9} {'games/s (best)':>15} {'games/s (median)':>17} {'cpu/wall':>9} {'win rate':>9}"
    )
    for size in args.sizes:
        seeds = rng.derive_seeds(1, skill.id, 0, size)
        walls, cpus = [], []
        for _ in range(args.repeats):
            wall0, cpu0 = time.perf_counter(), time.process_time()
            raw = simulate(setup, seeds)
            walls.append(time.perf_counter() - wall0)
            cpus.append(time.process_time() - cpu0)
        best, median = min(walls), statistics.median(walls)
        row = {
            "games": size,
            "repeats": args.repeats,
            "best_s": best,
            "median_s": median,
            "games_per_s_best": size / best,
            "games_per_s_median": size / median,
            "cpu_over_wall": statistics.median(c / w for c, w in zip(cpus, walls, strict=True)),
            "win_rate": float(np.mean(raw.outcome == 1)),
            "mean_duration_s": float(raw.duration_s.mean()),
        }
        report["in_process"].append(row)
        print(
            f"{size:>8,} {best:>8.3f} {median:>9.3f} {row['games_per_s_best']:>15,.0f} {row['games_per_s_median']:>17,.0f} "
            f"{row['cpu_over_wall']:>9.2f} {row['win_rate']:>9.3f}",
            flush=True,
        )

    raw_games = max(args.sizes)
    raw_seeds = rng.derive_seeds(1, skill.id, 0, raw_games)
    report["multi_skill"] = _multi_skill(args, raw_games, lambda: simulate(setup, raw_seeds), skill)

    # --- through the process protocol -------------------------------------------------------------
    games = args.protocol_games
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    if hasattr(os, "sched_setaffinity"):  # the engine gets this core, the reader another one
        os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))

    def through_protocol(n: int) -> tuple[float, int]:
        engine = ProcessEngine(reference_engine_argv(), 120.0, env=env)
        start = time.perf_counter()
        results = list(engine.run(Job.for_skill(skill, args.opponent, n, 1, module=args.module)))
        return time.perf_counter() - start, sum(r.is_error for r in results)

    startup = min(through_protocol(1)[0] for _ in range(3))
    total, errors = min((through_protocol(games) for _ in range(2)), key=lambda pair: pair[0])
    seeds = rng.derive_seeds(1, skill.id, 0, games)
    in_process = min(
        _time(lambda: run_batch(skill, args.opponent, games, 1, args.module, seeds=seeds)) for _ in range(3)
    )
    one = min(_time(lambda: run_batch(skill, args.opponent, 1, 1, args.module)) for _ in range(3))
    marginal = ((total - startup) - (in_process - one)) / max(games - 1, 1)
    report["protocol"] = {
        "games": games,
        "total_s": total,
        "errors": errors,
        "startup_s": startup,
        "in_process_s": in_process,
        "per_game_all_in_ms": total / games * 1e3,
        "per_game_overhead_ms": marginal * 1e3,
        "games_per_s": games / total,
    }
    print(
        f"\nprocess protocol, {games:,} games: {total:.3f} s in all ({games / total:,.0f} games/s, {errors} errors); "
        f"start-up (a 1-game job: Python, imports, module, hello) {startup * 1e3:.0f} ms; "
        f"in process the same games take {in_process:.3f} s;\n"
        f"per-game overhead of the protocol (JSON line out, read, validated, minus start-up): {marginal * 1e3:.3f} ms"
    )
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "engine.json"
    path.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(f"written {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


def _multi_skill(args: argparse.Namespace, raw_games: int, raw_batch: Any, skill: Any) -> dict[str, Any]:
    """Many skills' games in one call (a whole-library verify's work) beside its limit, one
    skill's batch of ``raw_games`` games (``raw_batch``), timed in turn with it so that a busy
    machine slows both alike: ``run_batches`` alone, and ``play_chunk`` (the runner's unit of
    work: the same call plus a stored row per game). Each repeat starts with empty caches of
    compiled match-ups, as a verify of a library's skills does. CPU time is reported beside
    wall time: on a shared machine it shows the cost without the time spent waiting for a core."""
    from benchmarks.synthetic import DEFAULT_SEED, generate_skills
    from skillstudio.engine.batch import BatchRequest, forget_compiled, run_batches
    from skillstudio.engine.situation import STANDARD
    from skillstudio.model import StrategicPattern
    from skillstudio.verification.executors import Chunk, Piece, play_chunk

    n_skills, per_skill = args.multi
    skills: list[Any] = []
    count = max(4 * n_skills, 16)
    while len(skills) < n_skills:  # about a third of a synthetic library are AI skills
        skills = [s for s in generate_skills(count, DEFAULT_SEED) if isinstance(s.body, StrategicPattern)][:n_skills]
        count *= 2
    games = n_skills * per_skill
    requests = [BatchRequest(s, args.opponent, per_skill, 1, args.module) for s in skills]
    # the same skills' games from the opening: as long as the raw batch's (a situated game
    # starts in the mid or late game and plays fewer steps)
    from_opening = [BatchRequest(s, args.opponent, per_skill, 1, args.module, situation=STANDARD) for s in skills]
    chunk = Chunk(0, args.opponent, 1, tuple(Piece(s, args.module, 0, per_skill) for s in skills))
    # the limit's own games as pieces of per_skill games in one call: the machinery's cost alone
    pieces = [
        BatchRequest(skill, args.opponent, min(per_skill, raw_games - first), 1, args.module, first_game=first)
        for first in range(0, raw_games, per_skill)
    ]
    runs = {
        "raw": (raw_games, raw_batch),
        "run_batches": (games, lambda: run_batches(requests)),
        "from_opening": (games, lambda: run_batches(from_opening)),
        "play_chunk": (games, lambda: play_chunk(chunk)),
        "pieces": (raw_games, lambda: run_batches(pieces)),
    }
    walls: dict[str, list[float]] = {name: [] for name in runs}
    cpus: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.repeats):
        for name, (_games, fn) in runs.items():
            forget_compiled()
            wall0, cpu0 = time.perf_counter(), time.process_time()
            fn()
            walls[name].append(time.perf_counter() - wall0)
            cpus[name].append(time.process_time() - cpu0)
    row: dict[str, Any] = {"skills": n_skills, "games_per_skill": per_skill, "games": games, "raw_games": raw_games}
    for name, (n, _fn) in runs.items():
        row[f"{name}_s"] = min(walls[name])
        row[f"{name}_games_per_s"] = n / min(walls[name])
        row[f"{name}_games_per_cpu_s"] = n / min(cpus[name])
    what = {
        "run_batches": "run_batches, the skills' own situations",
        "from_opening": "run_batches, every game from the opening (as long as the raw batch's)",
        "play_chunk": "play_chunk (run_batches and a stored row per game)",
        "pieces": f"run_batches, the limit's games as {len(pieces):,} pieces of {per_skill}",
        "raw": f"limit: one skill's batch of {raw_games:,} games",
    }
    print(
        f"\nmany skills in one call: {n_skills:,} synthetic AI skills x {per_skill} games = {games:,} games, "
        f"best of {args.repeats}, compiled from scratch each time, timed in turn with the limit\n"
        f"  {'games/s':>9} {'of limit':>9} {'games/cpu-s':>12} {'of limit':>9}",
        flush=True,
    )
    for name in ("run_batches", "from_opening", "play_chunk", "pieces", "raw"):
        wall, cpu = row[f"{name}_games_per_s"], row[f"{name}_games_per_cpu_s"]
        print(
            f"  {wall:>9,.0f} {wall / row['raw_games_per_s']:>9.0%} {cpu:>12,.0f} {cpu / row['raw_games_per_cpu_s']:>9.0%}  {what[name]}"
        )
    return row


def _time(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _environment(pinning: str) -> dict[str, Any]:
    import numpy as np

    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "processor": platform.processor() or platform.uname().machine,
        "cpu_count": os.cpu_count(),
        "pinning": pinning,
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
    }


if __name__ == "__main__":
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
