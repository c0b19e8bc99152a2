"""Verification benchmark: every AI skill of a synthetic library verified with N games each,
in process, with ``auto`` (verify's default: worker processes for a run this large) and on
``dask-local:2``, beside the engine's own speed, plus each executor's overhead per chunk.

Run it alone with ``python -m benchmarks.bench_verification [--quick] [--sizes 1000 10000]
[--games 20] [--chunk 2000] [--executors inprocess dask-local:2]`` or through
``python -m benchmarks.run``. It measures and reports; it never fails on speed.

* Two limits, measured in the same run, each verify printed as its share of both:
  *one skill*: the reference engine alone, one skill in one ``run_batch`` of ``--engine-games``
  (10,000) games in this process (the fastest of three);
  *same games*: the engine alone playing exactly the verify's games (every skill's, the same
  seeds) in one ``run_batches`` call, with nothing stored. Library skills' games cost more to
  simulate than one skill's (more unit types in play, situated starts), so the second is the
  like-for-like one: what the runner adds. ``engine s`` is the time spent inside the
  executor's chunks (the engine), the rest of a run's time is the runner's (planning, storing
  games, applying each skill's session with its revision and audit entry).

* The library is ``benchmarks.synthetic.generate_skills(size)``; "every AI skill" is every
  ai_strategy skill the built-in engine can play (StrategicPattern bodies), as ``skillstudio
  verify --domain ai`` selects them. Skills of modules the reference engine lacks (ra2) are
  played too and come back as error games, as they would from the CLI.
* Each executor verifies a fresh copy of the library (same seed) in a fresh Python process, as
  ``skillstudio verify`` runs. Measured one after another in this process, ``auto`` took 6.1-6.2 s
  after the in-process run and 5.5 s when measured first (10k library, 2 CPUs); which state the
  earlier runs leave behind was not pinned down. The GUI verifies inside its own long-lived
  process, so its runs may sit between the two. The benchmark checks that every executor
  recorded the same games.
* Overhead per chunk: the wall time of ``--overhead-chunks`` empty chunks (no games) through the
  executor, divided by their number: scheduling, pickling and the round trip, nothing else.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = Path(__file__).resolve().parent / "out"
DEFAULT_SIZES = (1_000, 10_000)
QUICK_SIZES = (200,)
DEFAULT_EXECUTORS = ("inprocess", "auto", "dask-local:2")  # auto: what verify does by default


def _size(text: str) -> int:
    text = text.strip().lower().replace("_", "").replace(",", "")
    return int(float(text[:-1]) * 1000) if text.endswith("k") else int(text)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.bench_verification", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--sizes", nargs="+", type=_size, help="library sizes in skills (default 1000)")
    parser.add_argument("--quick", action="store_true", help="a 200-skill library")
    parser.add_argument("--games", type=int, default=20, help="games per skill (default 20)")
    parser.add_argument("--chunk", type=int, default=None, help="games per chunk (default: verify's default)")
    parser.add_argument(
        "--engine-games", type=int, default=10_000, help="games of the engine-alone limit (default 10000)"
    )
    parser.add_argument("--executors", nargs="+", default=list(DEFAULT_EXECUTORS), help="executor spellings")
    parser.add_argument("--overhead-chunks", type=int, default=200, help="empty chunks timed per executor")
    parser.add_argument("--opponent", default="IC Default Hard")
    parser.add_argument("--seed", type=int, default=57)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where verification-<size>.json goes")
    parser.add_argument("--measure-one", nargs=2, metavar=("SPEC", "JSON"), help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args, _unknown = _parser().parse_known_args(list(argv) if argv is not None else sys.argv[1:])
    sizes = args.sizes or list(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    sys.path.insert(0, str(ROOT))
    if args.chunk is None:
        from skillstudio.verification.runner import DEFAULT_CHUNK_GAMES

        args.chunk = DEFAULT_CHUNK_GAMES
    if args.measure_one:  # a child of run(): one executor, in this fresh process
        spec, out = args.measure_one
        Path(out).write_text(json.dumps(measure_executor(sizes[0], spec, args)))
        return 0
    for size in sizes:
        report = run(size, args)
        print(render(report))
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"verification-{size}.json").write_text(json.dumps(report, indent=2))
    return 0


def _burn(n: int) -> float:
    started = time.perf_counter()
    total = 0
    for i in range(n):
        total += i * i
    return time.perf_counter() - started


def parallel_speedup(workers: int = 2, n: int = 5_000_000) -> float:
    """How much faster ``workers`` CPU-bound processes finish than one after another: 2.0 on two
    real cores, about 1.0 on a VM whose vCPUs share one core's time. Explains executor figures."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(workers) as pool:
        list(pool.map(_burn, [1000] * workers))  # start the workers
        serial = _burn(n) * workers
        started = time.perf_counter()
        list(pool.map(_burn, [n] * workers))
        return serial / (time.perf_counter() - started)


def engine_games_per_s(
    skill: Any, opponent: str, games: int, seed: int, repeats: int = 3, *, blas_threads: int | None = None
) -> float:
    """The limit: the reference engine alone, one skill in one batch of ``games`` games; the
    fastest of ``repeats`` batches (on a shared machine the others measure its neighbours).
    ``blas_threads``: numpy's BLAS limited to that many threads (1: the engine on one core), else
    as many as BLAS starts by itself (one per core)."""
    from threadpoolctl import threadpool_limits

    from skillstudio.engine import run_batch

    fastest = float("inf")
    with threadpool_limits(limits=blas_threads):
        run_batch(skill, opponent, 20, seed, skill.provenance.game_module)  # imports, tables, caches
        for _ in range(repeats):
            started = time.perf_counter()
            run_batch(skill, opponent, games, seed, skill.provenance.game_module)
            fastest = min(fastest, time.perf_counter() - started)
    return games / fastest


def same_games_per_s(skills: list[Any], opponent: str, games: int, seed: int) -> float:
    """The like-for-like limit: the engine alone playing the verify's games (each skill's
    ``games`` games, the same seeds) in one ``run_batches`` call, compiled from scratch as the
    run compiles them; nothing is stored."""
    from skillstudio.engine.batch import BatchRequest, forget_compiled, run_batches

    requests = [BatchRequest(s, opponent, games, seed, s.provenance.game_module) for s in skills]
    forget_compiled()
    started = time.perf_counter()
    run_batches(requests)
    elapsed = time.perf_counter() - started
    forget_compiled()  # the verify compiles its match-ups itself
    return len(requests) * games / elapsed


def _timed(executor: Any) -> Any:
    """``executor``, adding up the time its chunks took (ChunkResult.elapsed_s) in ``engine_s``."""
    from skillstudio.verification.executors import Executor

    class Timed(Executor):
        def __init__(self) -> None:
            self.spec = executor.spec
            self.window = executor.window
            self.engine_s = 0.0

        def map_unordered(self, fn: Any, chunks: Any, cancel: Any) -> Any:
            for result in executor.map_unordered(fn, chunks, cancel):
                self.engine_s += result.elapsed_s
                yield result

        def close(self) -> None:
            executor.close()

    return Timed()


def _library(size: int) -> tuple[list[Any], list[Any], list[Any]]:
    """The synthetic library of ``size`` skills, its AI skills, and those the built-in engine
    plays (StrategicPattern bodies), as ``skillstudio verify --domain ai`` selects them."""
    from benchmarks.synthetic import generate_skills
    from skillstudio.model import BodyKind, Domain

    skills = generate_skills(size)
    ai = [s for s in skills if s.domain is Domain.AI_STRATEGY]
    return skills, ai, [s for s in ai if s.body_kind is BodyKind.STRATEGIC_PATTERN]


def run(size: int, args: argparse.Namespace) -> dict[str, Any]:
    _, ai, playable = _library(size)
    reference = next((s for s in playable if s.provenance.game_module == "ra1"), playable[0])
    engine_limit = engine_games_per_s(reference, args.opponent, args.engine_games, args.seed)
    one_core_limit = engine_games_per_s(reference, args.opponent, args.engine_games, args.seed, blas_threads=1)
    same_games_limit = same_games_per_s(playable, args.opponent, args.games, args.seed)
    report: dict[str, Any] = {
        "library_skills": size,
        "engine_games": args.engine_games,
        "engine_games_per_s": round(engine_limit, 1),
        "engine_games_per_s_one_core": round(one_core_limit, 1),
        "same_games_per_s": round(same_games_limit, 1),
        "ai_skills": len(ai),
        "verified_skills": len(playable),
        "games_per_skill": args.games,
        "chunk_games": args.chunk,
        "opponent": args.opponent,
        "seed": args.seed,
        "runs": [],
        "overhead": [],
        "environment": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "parallel_speedup_2_processes": round(parallel_speedup(), 2),
        },
    }
    signatures = {}
    for spec in args.executors:
        measured = _in_fresh_process(size, spec, args)
        figures = measured["run"]
        games_per_s = figures["games"] / figures["seconds"]
        figures["share_of_engine"] = round(games_per_s / engine_limit, 3)
        figures["share_of_engine_one_core"] = round(games_per_s / one_core_limit, 3)
        figures["share_of_same_games"] = round(games_per_s / same_games_limit, 3)
        report["runs"].append(figures)
        report["overhead"].append(measured["overhead"])
        signatures[spec] = measured["signature"]
    report["identical_results"] = len({json.dumps(s) for s in signatures.values()}) <= 1
    return report


def _in_fresh_process(size: int, spec: str, args: argparse.Namespace) -> dict[str, Any]:
    """:func:`measure_executor` in a new Python process (its figures are printed by the caller)."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "measured.json"
        argv = [sys.executable, "-m", "benchmarks.bench_verification", "--sizes", str(size), "--games", str(args.games)]
        argv += ["--chunk", str(args.chunk), "--overhead-chunks", str(args.overhead_chunks)]
        argv += ["--opponent", args.opponent, "--seed", str(args.seed), "--measure-one", spec, str(out)]
        subprocess.run(argv, cwd=ROOT, check=True)
        measured: dict[str, Any] = json.loads(out.read_text())
        return measured


def measure_executor(size: int, spec: str, args: argparse.Namespace) -> dict[str, Any]:
    """One executor verifying every playable AI skill of a fresh library of ``size`` skills: its
    run's figures, its overhead per empty chunk, and the games it recorded (to compare)."""
    from skillstudio.store import Actor, Database, SkillRepository
    from skillstudio.store.runs import RunStore
    from skillstudio.verification.executors import Chunk, open_executor, play_chunk
    from skillstudio.verification.runner import Progress, RunFinished, RunStarted, run_verification, start_run

    skills, _, playable = _library(size)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "library.db"
        with Database(path, create=True) as database:
            SkillRepository(database, Actor("bench")).create_many(skills)
            started = time.perf_counter()
            executor = _timed(open_executor(spec, games=len(playable) * args.games))
            shown = spec if executor.spec == spec else f"{spec}={executor.spec}"  # what auto chose
            startup = time.perf_counter() - started
            try:
                run_id = start_run(
                    database,
                    playable,
                    opponent=args.opponent,
                    games=args.games,
                    seed=args.seed,
                    executor=spec,
                    chunk_games=args.chunk,
                )
                began = time.perf_counter()
                first_progress = None
                for event in run_verification(database, run_id, executor=executor):
                    if isinstance(event, Progress) and first_progress is None:
                        first_progress = time.perf_counter() - began
                    if isinstance(event, RunStarted | RunFinished):
                        final = event
                elapsed = time.perf_counter() - began
                counts = RunStore(database).counts(run_id)
                games = sum(c.played for c in counts.values())
                run = {
                    "executor": shown,
                    "status": final.status,
                    "games": games,
                    "seconds": round(elapsed, 3),
                    "executor_startup_s": round(startup, 3),
                    "games_per_s": round(games / elapsed, 1),
                    "engine_s": round(executor.engine_s, 3),
                    "runner_s": round(max(0.0, elapsed - executor.engine_s), 3),
                    "skills_per_s": round(len(playable) / elapsed, 2),
                    "first_progress_s": round(first_progress or 0, 3),
                    "wins": sum(c.wins for c in counts.values()),
                    "losses": sum(c.losses for c in counts.values()),
                    "draws": sum(c.draws for c in counts.values()),
                    "errors": sum(c.errors for c in counts.values()),
                }
                empty = [Chunk(i, args.opponent, 0, ()) for i in range(args.overhead_chunks)]
                list(executor.map_unordered(play_chunk, empty[:4], lambda: False))  # warm up
                began = time.perf_counter()
                list(executor.map_unordered(play_chunk, empty, lambda: False))
                overhead = (time.perf_counter() - began) / max(1, args.overhead_chunks)
            finally:
                executor.close()
    return {
        "run": run,
        "overhead": {"executor": shown, "chunks": args.overhead_chunks, "per_chunk_ms": round(overhead * 1000, 3)},
        "signature": sorted((k, v.wins, v.losses, v.draws, v.errors) for k, v in counts.items()),
    }


def render(report: dict[str, Any]) -> str:
    lines = [
        (
            f"Verification of every playable AI skill of a {report['library_skills']:,}-skill library: "
            f"{report['verified_skills']} skills ({report['ai_skills']} AI) x {report['games_per_skill']} games vs "
            f"{report['opponent']}, {report['chunk_games']} games per chunk, {report['environment']['cpus']} CPUs "
            f"(2 CPU-bound processes run {report['environment']['parallel_speedup_2_processes']:.2f}x as fast as one)"
        ),
        (
            f"limit: the engine alone, one skill in one {report['engine_games']:,}-game batch (best of 3): "
            f"{report['engine_games_per_s']:,.0f} games/s (BLAS on its own threads), "
            f"{report['engine_games_per_s_one_core']:,.0f} games/s (one core: BLAS on one thread); "
            "the engine alone on the same games "
            f"(one run_batches call, nothing stored): {report['same_games_per_s']:,.0f} games/s"
        ),
        (
            f"{'executor':<16} {'games':>7} {'seconds':>8} {'games/s':>8} {'of 1 skill':>10} {'1 core':>7} {'of same':>8} {'engine s':>8} "
            f"{'runner s':>8} {'skills/s':>8} {'startup s':>9} {'W':>6} {'L':>6} {'D':>5} {'E':>5}"
        ),
    ]
    for r in report["runs"]:
        lines.append(
            f"{r['executor']:<16} {r['games']:>7} {r['seconds']:>8.1f} {r['games_per_s']:>8.1f} "
            f"{r['share_of_engine']:>10.1%} {r['share_of_engine_one_core']:>7.1%} {r['share_of_same_games']:>8.1%} "
            f"{r['engine_s']:>8.1f} {r['runner_s']:>8.1f} "
            f"{r['skills_per_s']:>8.2f} {r['executor_startup_s']:>9.2f} {r['wins']:>6} {r['losses']:>6} "
            f"{r['draws']:>5} {r['errors']:>5}"
        )
    lines.append(
        "overhead per chunk (empty chunks): "
        + ", ".join(f"{o['executor']} {o['per_chunk_ms']:.2f} ms" for o in report["overhead"])
    )
    lines.append(f"identical results across executors: {report['identical_results']}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
