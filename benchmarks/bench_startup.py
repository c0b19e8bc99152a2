"""Start-up: from launching ``skillstudio`` to a window the user can work in.

``python -m benchmarks.bench_startup [--quick] [--sizes 10000] [--repeats 5] [--out DIR]``
(or through ``python -m benchmarks.run``). Every measurement is a fresh Python process, started
as the ``skillstudio`` command starts (``skillstudio.entry.main`` with ``--db``), offscreen,
timed from the moment the process is launched:

- *shown*: the main window's first paint;
- *usable*: the table shows its first rows and the filter lists are filled (what the user needs
  to browse, search and select);
- *complete*: the docks beside the browser (dashboard, retrieval preview) are built and the
  dashboard has drawn its first plots.

Beside them, in the same run: ``python -c pass`` (the interpreter alone) and a bare
QApplication + QMainWindow with an empty table, shown (the least any Qt window costs). The
bytecode is compiled once before measuring (an installed app has it). One more process with
``-X importtime`` reports which imports the time to *shown* goes to. The library is the bundled
sample, plus synthetic libraries of ``--sizes`` skills if asked. Goal: usable in under 2 s on the
sample. It measures and reports; it never fails on speed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = Path(__file__).resolve().parent / "out"
GOAL_S = 2.0
TIMEOUT_S = 120
LAUNCHED_AT = "BENCH_STARTUP_LAUNCHED_AT"  # the parent's wall clock when it started the child
IMPORTS = (
    "PySide6.QtWidgets",
    "sqlalchemy",
    "superqt",
    "numpy",
    "pyqtgraph",
    "skillstudio.entry",
    "skillstudio.cli.main",
    "skillstudio.gui.app",
    "skillstudio.gui.dashboard",
    "skillstudio.gui.qt_retrieval_preview",
)


@dataclass
class Row:
    library: str
    skills: int
    what: str
    median_s: float
    min_s: float
    max_s: float
    samples: list[float]


# --- the measuring process ------------------------------------------------------------------------


def _environment(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(
        PYTHONPATH=os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
        PYTHONPYCACHEPREFIX=str(folder / "bytecode"),  # compiled once, reused: as installed
        QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"),
        # The user's settings and libraries stay out of it (recent libraries, retrieval settings).
        XDG_CONFIG_HOME=str(folder / "config"),
        XDG_DATA_HOME=str(folder / "data"),
        HOME=str(folder / "home"),
    )
    return env


def _launch(env: dict[str, str], *args: str) -> tuple[dict[str, float], str]:
    env = {**env, LAUNCHED_AT: repr(time.time())}  # the child reports its times since this moment
    done = subprocess.run(
        [sys.executable, *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("BENCH ")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(lines[-1][len("BENCH ") :]), done.stderr


def _child(*call: str) -> tuple[str, ...]:
    """Arguments for python to run ``benchmarks._startup_child.main(*call)``."""
    return ("-m", "benchmarks._startup_child", *call)


def _import_breakdown(env: dict[str, str], library: str) -> dict[str, float]:
    """Seconds the start-up spends importing each of IMPORTS (``-X importtime``, cumulative: a
    package's figure includes what it imported first)."""
    _figures, stderr = _launch(env, "-X", "importtime", *_child("app", library))
    seconds: dict[str, float] = {}
    for line in stderr.splitlines():
        fields = line.removeprefix("import time:").split("|")
        if len(fields) == 3 and fields[1].strip().isdigit() and fields[2].strip() in IMPORTS:
            seconds[fields[2].strip()] = int(fields[1]) / 1e6
    return dict(sorted(seconds.items(), key=lambda item: -item[1]))


def _row(library: str, skills: int, what: str, samples: list[float]) -> Row:
    return Row(library, skills, what, statistics.median(samples), min(samples), max(samples), samples)


def _libraries(folder: Path, sizes: Sequence[int]) -> list[tuple[str, int, Path]]:
    from skillstudio.library import create_library
    from skillstudio.store import Actor, Database, SkillRepository

    sample = folder / "sample.db"
    create_library(sample, sample=True).close()
    with Database(sample) as database:
        libraries = [("sample", SkillRepository(database, Actor("bench")).count(), sample)]
    for size in sizes:
        from benchmarks.synthetic import generate_skills

        print(f"  generating a {size:,}-skill library…", flush=True)
        path = folder / f"synthetic-{size}.db"
        skills = generate_skills(size)
        with Database(path, create=True) as database:
            repository = SkillRepository(database, Actor("bench", "system"))
            for start in range(0, size, 5000):
                repository.create_many(skills[start : start + 5000])
        libraries.append((f"synthetic {size:,}", size, path))
    return libraries


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_startup", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        nargs="*",
        type=lambda t: int(t.lower().replace("k", "000")),
        default=[],
        help="synthetic libraries to start on as well (default: the sample only)",
    )
    parser.add_argument("--quick", action="store_true", help="the sample only, 2 repeats")
    parser.add_argument("--repeats", type=int, default=5, help="fresh processes per figure (default 5)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where startup.json goes")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args, _unknown = _parser().parse_known_args(list(argv) if argv is not None else sys.argv[1:])
    sizes = [] if args.quick else [size for size in args.sizes if size > 0]
    repeats = 2 if args.quick else max(1, args.repeats)
    sys.path.insert(0, str(ROOT))
    rows: list[Row] = []
    imports: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as scratch:
        folder = Path(scratch)
        for sub in ("config", "data", "home"):
            (folder / sub).mkdir()
        env = _environment(folder)
        libraries = _libraries(folder, sizes)
        sample = str(libraries[0][2])
        _launch(env, *_child("app", sample))  # compiles the bytecode; not measured
        nothing = [_launch(env, *_child("nothing"))[0]["shown"] for _ in range(repeats)]
        rows.append(_row("—", 0, "python, nothing imported", nothing))
        baseline = [_launch(env, *_child("baseline"))[0]["shown"] for _ in range(repeats)]
        rows.append(_row("—", 0, "bare QMainWindow shown", baseline))
        for name, skills, path in libraries:
            print(f"  starting on the {name} library ({skills:,} skills)…", flush=True)
            runs = [_launch(env, *_child("app", str(path)))[0] for _ in range(repeats)]
            for what in ("shown", "usable", "complete"):
                rows.append(_row(name, skills, f"SkillStudio {what}", [run[what] for run in runs]))
        imports = _import_breakdown(env, sample)

    print(f"\nStart-up from launch, fresh processes (offscreen, median of {repeats}); goal: usable < {GOAL_S:.0f} s")
    print(f"{'library':<18} {'skills':>7}  {'what':<26} {'median s':>9} {'min s':>7} {'max s':>7}")
    for row in rows:
        print(
            f"{row.library:<18} {row.skills:>7,}  {row.what:<26} {row.median_s:>9.3f} {row.min_s:>7.3f} {row.max_s:>7.3f}"
        )
    print("\nImports on the way (seconds, cumulative: nested packages count in their importer; one -X importtime run):")
    print("  " + ", ".join(f"{name} {seconds:.2f}" for name, seconds in imports.items()))
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / "startup.json"
    report = {"benchmark": "startup", "goal_s": GOAL_S, "repeats": repeats, "rows": [asdict(r) for r in rows]}
    report["imports_s"] = imports
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
