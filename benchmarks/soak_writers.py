"""Concurrent writers on one library file: is any acknowledged write lost?

``python -m benchmarks.soak_writers [--writers 6] [--seconds 30] [--rounds 3]``

Each round starts a fresh copy of the sample library and N writer processes. Each writer, until
the time is up, reads a random skill and updates its description with a unique token, trusting
the repository's optimistic check: a ConflictError (someone changed it since the read) counts
as a conflict, a LibraryBusy as busy, and a returned update as an *acknowledged* write. After
the round, every acknowledged token must be found in the skill's revision history (each update
writes one revision in the same transaction); one that is not is a lost update.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import tempfile
import time
from pathlib import Path

from benchmarks.bench_team import lost_updates, save_token


def _writer(path: str, number: int, seconds: float, out: str) -> None:
    from skillstudio.store import Actor, Database, SkillRepository

    acknowledged: list[tuple[str, str, float]] = []
    conflicts = busy = 0
    rng = random.Random(number)
    with Database(path) as database:
        repository = SkillRepository(database, Actor(f"writer-{number}"))
        ids = repository.query().ids[:8]  # few skills: writers collide often
        deadline = time.monotonic() + seconds
        sequence = 0
        while time.monotonic() < deadline:
            skill_id = rng.choice(ids)
            skill = repository.get(skill_id)
            sequence += 1
            token = f"w{number}-{sequence}"
            outcome = save_token(repository, skill, token)
            conflicts += outcome == "conflict"
            busy += outcome == "busy"
            if outcome == "saved":
                acknowledged.append((skill_id, token, time.time()))
    Path(out).write_text(json.dumps({"acknowledged": acknowledged, "conflicts": conflicts, "busy": busy}))


def run_round(writers: int, seconds: float) -> dict[str, object]:
    from skillstudio.library import create_library

    folder = Path(tempfile.mkdtemp(prefix="skillstudio-soak-"))
    path = folder / "library.db"
    create_library(path, sample=True).close()
    context = multiprocessing.get_context("spawn")
    outputs = [folder / f"writer-{n}.json" for n in range(writers)]
    processes = [context.Process(target=_writer, args=(str(path), n, seconds, str(outputs[n]))) for n in range(writers)]
    started = time.monotonic()
    for process in processes:
        process.start()
    for process in processes:
        process.join()
    elapsed = time.monotonic() - started
    results = [json.loads(out.read_text()) for out in outputs]
    acknowledged = [(item[0], item[1], item[2]) for result in results for item in result["acknowledged"]]
    lost = lost_updates(str(path), acknowledged)
    return {
        "writers": writers,
        "seconds": round(elapsed, 1),
        "acknowledged": len(acknowledged),
        "conflicts": sum(r["conflicts"] for r in results),
        "busy": sum(r["busy"] for r in results),
        "lost": lost,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.soak_writers", description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="2 writers, 3 s, 1 round")
    args = parser.parse_args(argv)
    if args.quick:
        args.writers, args.seconds, args.rounds = 2, 3.0, 1
    print(f"{'round':>5} {'writers':>7} {'seconds':>7} {'acknowledged':>12} {'conflicts':>9} {'busy':>5} {'lost':>5}")
    failed = False
    for number in range(1, args.rounds + 1):
        result = run_round(args.writers, args.seconds)
        print(
            f"{number:>5} {result['writers']:>7} {result['seconds']:>7} {result['acknowledged']:>12}"
            f" {result['conflicts']:>9} {result['busy']:>5} {result['lost']:>5}"
        )
        failed |= bool(result["lost"])
    print("lost updates: none" if not failed else "LOST UPDATES FOUND")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
