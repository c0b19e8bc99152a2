"""Run every benchmark: ``python -m benchmarks.run [--quick] [--sizes N ...] [--only NAME ...]``.

A benchmark is any module in this package that defines ``main(argv) -> int``; it gets the
arguments this command did not consume (at least ``--quick`` and ``--sizes``, which every
benchmark accepts) and prints its own report. Benchmarks run one after another, in name order.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

PACKAGE = "benchmarks"
NOT_BENCHMARKS = frozenset({"run", "synthetic"})


def discover() -> list[tuple[str, Callable[[Sequence[str]], int]]]:
    """(name, main) for every module of the package that exposes a callable ``main``."""
    found = []
    folder = Path(__file__).resolve().parent
    for info in sorted(pkgutil.iter_modules([str(folder)]), key=lambda info: info.name):
        if info.name in NOT_BENCHMARKS or info.name.startswith("_") or info.ispkg:
            continue
        module = importlib.import_module(f"{PACKAGE}.{info.name}")
        main = getattr(module, "main", None)
        if callable(main):
            found.append((info.name, main))
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.run",
        description="Run every benchmark in benchmarks/ (other options go to each benchmark).",
    )
    parser.add_argument("--only", action="append", metavar="NAME", help="run just this benchmark (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    args, rest = parser.parse_known_args(argv)
    benchmarks = discover()
    if args.list:
        for name, _ in benchmarks:
            print(name)
        return 0
    if args.only:
        unknown = sorted(set(args.only) - {name for name, _ in benchmarks})
        if unknown:
            parser.error(f"no benchmark named {', '.join(unknown)} (have: {', '.join(n for n, _ in benchmarks)})")
        benchmarks = [(name, fn) for name, fn in benchmarks if name in args.only]
    failed = []
    started = time.perf_counter()
    for name, benchmark in benchmarks:
        print(f"=== {name} {' '.join(rest)}".rstrip(), flush=True)
        began = time.perf_counter()
        try:
            status = benchmark(list(rest))
        except SystemExit as exit_:  # argparse errors inside a benchmark
            status = exit_.code if isinstance(exit_.code, int) else 1
        except Exception:
            traceback.print_exc()
            status = 1
        print(
            f"=== {name}: {'ok' if not status else f'FAILED ({status})'} in {time.perf_counter() - began:.1f} s\n",
            flush=True,
        )
        if status:
            failed.append(name)
    print(
        f"{len(benchmarks)} benchmark(s) in {time.perf_counter() - started:.1f} s"
        + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
