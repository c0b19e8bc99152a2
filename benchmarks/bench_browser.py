"""How the library browser feels on a large library: open time, filter and keystroke latency.

Runs the real main window offscreen. For each action two figures: *shown*, the time from the
user's action until the table has repainted with the result (queries run on a worker thread),
and *blocked*, how long the GUI thread itself was busy in that time, i.e. how long the window
could not answer a click or a key. Libraries are generated once per size, kept in benchmarks/out/.

    python -m benchmarks.bench_browser [--sizes 10000 100000] [--quick] [--repeats 7] [--fresh]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
DEFAULT_SIZES = (10_000, 100_000)


def library_for(size: int, *, fresh: bool = False) -> Path:
    """A generated library of ``size`` skills, built once and kept for later runs."""
    from itertools import islice

    from benchmarks.synthetic import iter_skills
    from skillstudio.store import Actor, Database, SkillRepository

    path = OUT / f"browser-library-{size}.db"
    if path.exists() and not fresh:
        return path
    OUT.mkdir(exist_ok=True)
    for leftover in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        leftover.unlink(missing_ok=True)
    print(f"  generating a {size:,}-skill library (kept as {path.name})…", flush=True)
    with Database(path, create=True) as database:
        repository = SkillRepository(database, Actor("bench", "system"))
        skills = iter_skills(size)  # 1M skills as objects would not fit in memory: 5,000 at a time
        while batch := list(islice(skills, 5000)):
            repository.create_many(batch)
    return path


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _measure_in_process(path: Path, repeats: int) -> dict[str, object]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings, Qt
    from PySide6.QtWidgets import QApplication

    from skillstudio.gui.qt_main_window import QtMainWindow
    from skillstudio.store import Actor, Database, SkillRepository

    app = QApplication.instance() or QApplication([])
    settings = QSettings(str(OUT / "bench-settings.ini"), QSettings.Format.IniFormat)

    blocked: list[float] = []

    def settle(window: QtMainWindow) -> None:
        """Wait for the query the action started, then repaint; GUI-thread time is recorded."""
        busy = 0.0
        while True:
            window.model._loader._pool.waitForDone()  # waiting, not working: the GUI thread would be idle
            started = time.perf_counter()
            app.sendPostedEvents()  # the result arrives, the model resets, the table repaints
            app.processEvents()
            busy += time.perf_counter() - started
            if not window.model.loading:
                break
        blocked.append(busy)

    started = time.perf_counter()
    database = Database(path)
    window = QtMainWindow(SkillRepository(database, Actor("bench")), settings)
    window.resize(1400, 820)
    window.show()
    settle(window)
    open_s = time.perf_counter() - started
    while window.filters.loading:  # the tag and creator lists fill in on a worker thread
        app.processEvents()
        time.sleep(0.005)
    window._watch_timer.stop()  # measure our actions only

    def facet_item(facet, value):
        for row in range(facet.list.count()):
            if facet.list.item(row).data(Qt.ItemDataRole.UserRole) == value:
                return facet.list.item(row)
        raise LookupError(value)

    results: dict[str, object] = {"open_s": open_s, "rows": window.model.rowCount()}
    actions = {
        "filter: confidence proven": (facet_item(window.filters.confidence, "proven"), None),
        "filter: + module ra1": (facet_item(window.filters.module, "ra1"), None),
        "filter: + domain ai_strategy": (facet_item(window.filters.domain, "ai_strategy"), None),
    }
    tag_counts = window.repository.facets.tag_counts()
    common_tag = max(tag_counts, key=tag_counts.get) if tag_counts else None
    for name, (item, _) in actions.items():
        samples, blocking, shown = [], [], 0
        for _ in range(repeats):
            item.setCheckState(Qt.CheckState.Unchecked)
            settle(window)
            started = time.perf_counter()
            item.setCheckState(Qt.CheckState.Checked)  # the filter panel re-queries on this signal
            action_s = time.perf_counter() - started
            settle(window)
            samples.append(time.perf_counter() - started)
            blocking.append(action_s + blocked[-1])
            shown = window.model.rowCount()
        results[name] = {"samples": samples, "blocked": blocking, "rows": shown}
    window.filters.clear()
    settle(window)
    if common_tag is not None:
        item = facet_item(window.filters.tags, common_tag)
        samples, blocking = [], []
        for _ in range(repeats):
            item.setCheckState(Qt.CheckState.Unchecked)
            settle(window)
            started = time.perf_counter()
            item.setCheckState(Qt.CheckState.Checked)
            action_s = time.perf_counter() - started
            settle(window)
            samples.append(time.perf_counter() - started)
            blocking.append(action_s + blocked[-1])
        results[f"filter: tag {common_tag!r} alone"] = {
            "samples": samples,
            "blocked": blocking,
            "rows": window.model.rowCount(),
        }
        window.filters.clear()
        settle(window)

    for word in ("tank", "refinery ambush", "zzzz"):
        typed = ""
        for character in word:
            typed += character
            samples, blocking = [], []
            for _ in range(max(2, repeats // 2)):
                window.search.blockSignals(True)
                window.search.setText("")
                window.apply_filters()  # the same text twice is not searched again: start from none
                settle(window)
                window.search.setText(typed)
                window.search.blockSignals(False)
                started = time.perf_counter()
                window.apply_filters()  # what the debounce timer calls after a pause in typing
                action_s = time.perf_counter() - started
                settle(window)
                samples.append(time.perf_counter() - started)
                blocking.append(action_s + blocked[-1])
            results[f"keystroke: {typed!r}"] = {
                "samples": samples,
                "blocked": blocking,
                "rows": window.model.rowCount(),
            }
        window.search.clear()
        window.apply_filters()
        settle(window)
    settle(window)

    samples = []
    rows = window.model.rowCount()
    for n in range(repeats):
        target = (rows // (repeats + 1)) * (n + 1)
        started = time.perf_counter()
        window.table.scrollTo(window.model.index(target, 0))
        settle(window)
        samples.append(time.perf_counter() - started)
    results["scroll to an unread page"] = {"samples": samples, "rows": rows}

    samples, blocking = [], []
    for column in (4, 0, 3, 5):
        started = time.perf_counter()
        window.table.sortByColumn(column, Qt.SortOrder.DescendingOrder)
        action_s = time.perf_counter() - started
        settle(window)
        samples.append(time.perf_counter() - started)
        blocking.append(action_s + blocked[-1])
    results["sort by a column"] = {"samples": samples, "blocked": blocking, "rows": rows}
    window.close()
    database.close()
    return results


def _child(path: str, repeats: int) -> None:
    """Runs in a fresh process, so the open time is the one a user sees after starting the app."""
    sys.stdout.write(json.dumps(_measure_in_process(Path(path), repeats)) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_browser", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", nargs="+", type=lambda t: int(t.lower().replace("k", "000")), default=list(DEFAULT_SIZES)
    )
    parser.add_argument("--quick", action="store_true", help="1,000 skills only")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--fresh", action="store_true", help="regenerate the libraries")
    args, _unknown = parser.parse_known_args(argv)
    sizes = [1_000] if args.quick else args.sizes
    print(
        f"SkillStudio browser benchmark: sizes {', '.join(f'{s:,}' for s in sizes)} skills; "
        f"{args.repeats} repeats; offscreen Qt; times from action to repainted table"
    )
    report: dict[str, object] = {}
    for size in sizes:
        path = library_for(size, fresh=args.fresh)
        root = Path(__file__).resolve().parents[1]
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(root)}
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                f"from benchmarks.bench_browser import _child; _child({str(path)!r}, {args.repeats})",
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=root,
            timeout=1800,
            check=False,  # a failed child is reported with its stderr below
        )
        if done.returncode != 0:
            print(done.stderr[-3000:])
            return 1
        results = json.loads(done.stdout.strip().splitlines()[-1])
        report[str(size)] = results
        print(f"\n{size:,} skills ({results['rows']:,} rows shown at start)")
        print(f"  {'open window (fresh process, to first paint)':<44} {results['open_s'] * 1000:8.1f} ms")
        for name, value in results.items():
            if isinstance(value, dict):
                median, p95 = _percentiles(value["samples"])
                line = f"  {name:<44} shown {median * 1000:7.1f} ms median {p95 * 1000:7.1f} p95"
                if "blocked" in value:
                    b_median, b_p95 = _percentiles(value["blocked"])
                    line += f" | GUI blocked {b_median * 1000:6.1f} median {b_p95 * 1000:6.1f} p95"
                print(f"{line}  -> {value['rows']:,} rows")
    OUT.mkdir(exist_ok=True)
    (OUT / "browser.json").write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
