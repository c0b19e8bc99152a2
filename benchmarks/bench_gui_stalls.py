"""GUI-thread stalls during long library operations, through the real main window (offscreen).

``python -m benchmarks.bench_gui_stalls [--quick] [--sizes 10000] [--only retag] [--tick-ms 5]``
(or through ``python -m benchmarks.run``). Each *scenario* opens the real QtMainWindow on a copy
of a synthetic library and starts one long operation the way a user does. Meanwhile a QTimer
ticking every ``--tick-ms`` records when it actually fires: the longest gap between two ticks is
the longest time the window could not answer a click or a key. Each figure is printed beside the
plain-SQLite limit measured in the same run. Target: no stall above 100 ms. It measures and
reports; it never fails on speed.

A scenario is a function ``(bench: Bench, size: int) -> list[Row]``, registered in SCENARIOS.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = Path(__file__).resolve().parent / "out"
DEFAULT_SIZES = (10_000,)
TARGET_MS = 100.0
BENCH_TAG = "bench-bulk-tag"


@dataclass
class Row:
    """One measured operation: how long it took, how long the GUI thread stalled meanwhile."""

    scenario: str
    size: int
    operation: str
    seconds: float  # from the user's action until the window shows the result
    worst_stall_ms: float  # the longest gap between two ticks, less the tick interval
    p99_stall_ms: float
    stalls_over_target: int
    ticks: int
    limit: str  # the plain-SQLite figure this is measured against
    limit_seconds: float | None
    notes: dict[str, Any] = field(default_factory=dict)


class StallMeter:
    """A QTimer ticking every ``tick_ms``; a gap beyond the interval is time the GUI thread was busy."""

    def __init__(self, tick_ms: int) -> None:
        from PySide6.QtCore import Qt, QTimer

        self.tick_ms = tick_ms
        self.ticks: list[float] = []
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(tick_ms)
        self._timer.timeout.connect(lambda: self.ticks.append(time.perf_counter()))

    def start(self) -> None:
        self.ticks = [time.perf_counter()]
        self._timer.start()

    def measure(self, start: Callable[[], Any], done: Callable[[], bool], *, settle_ms: int = 300) -> dict[str, Any]:
        """Run the event loop from ``start()`` until ``done()``, then ``settle_ms`` more (results
        land on the GUI thread); a blocking ``start()`` counts as a stall."""
        from PySide6.QtCore import QEventLoop, QTimer

        loop = QEventLoop()
        ended: list[float] = []

        def poll() -> None:
            if done():
                ended.append(time.perf_counter())
                QTimer.singleShot(settle_ms, loop.quit)
            else:
                QTimer.singleShot(2, poll)

        self.start()
        began = self.ticks[0]
        start()
        QTimer.singleShot(0, poll)
        loop.exec()
        figures = self.stop()
        figures["seconds"] = round((ended[0] if ended else time.perf_counter()) - began, 3)
        return figures

    def stop(self) -> dict[str, Any]:
        self._timer.stop()
        self.ticks.append(time.perf_counter())
        gaps = [(b - a) * 1000 for a, b in zip(self.ticks, self.ticks[1:], strict=False)]
        stalls = sorted(max(0.0, gap - self.tick_ms) for gap in gaps)
        worst_at = max(range(len(gaps)), key=gaps.__getitem__) if gaps else 0
        return {
            "worst_stall_ms": round(stalls[-1], 1) if stalls else 0.0,
            "p99_stall_ms": round(stalls[min(len(stalls) - 1, int(0.99 * (len(stalls) - 1)))], 1) if stalls else 0.0,
            "stalls_over_target": sum(stall > TARGET_MS for stall in stalls),
            "ticks": len(self.ticks),
            "worst_at_s": round(self.ticks[worst_at] - self.ticks[0], 3) if gaps else None,
            "over_target_at_s": [
                (round(self.ticks[i] - self.ticks[0], 2), round(gap - self.tick_ms))
                for i, gap in enumerate(gaps)
                if gap - self.tick_ms > TARGET_MS
            ][:20],
        }


class Bench:
    """What every scenario needs: the QApplication, a scratch folder, libraries, a window, waiting."""

    def __init__(self, folder: Path, tick_ms: int, settle_s: float) -> None:
        from PySide6.QtWidgets import QApplication

        self.app = QApplication.instance() or QApplication([])
        self.folder = folder
        self.tick_ms = tick_ms
        self.settle_s = settle_s
        self._templates: dict[int, Path] = {}

    def library(self, size: int, name: str) -> Path:
        """A fresh copy of the synthetic ``size``-skill library (generated once per run and size)."""
        template = self._templates.get(size)
        if template is None:
            from benchmarks.synthetic import generate_skills
            from skillstudio.store import Actor, Database, SkillRepository

            print(f"  generating a {size:,}-skill library…", flush=True)
            template = self.folder / f"template-{size}.db"
            skills = generate_skills(size)
            with Database(template, create=True) as database:
                repository = SkillRepository(database, Actor("bench", "system"))
                for start in range(0, size, 5000):
                    repository.create_many(skills[start : start + 5000])
            self._templates[size] = template
        copy = self.folder / f"{name}-{size}.db"
        shutil.copyfile(template, copy)
        return copy

    def open_window(self, library: Path) -> Any:
        from PySide6.QtCore import QSettings

        from skillstudio.gui.app import freeze_startup_objects
        from skillstudio.gui.qt_main_window import QtMainWindow
        from skillstudio.store import Actor, Database, SkillRepository

        settings = QSettings(str(self.folder / "settings.ini"), QSettings.Format.IniFormat)
        window = QtMainWindow(SkillRepository(Database(library), Actor("bench")), settings)
        window.resize(1400, 820)
        window.ready.connect(freeze_startup_objects)  # as the app does once its docks are built
        window.show()
        self.quiet(window)  # first paints, the docks, the filter lists filled in, the dashboard's first plots
        return window

    def close_window(self, window: Any) -> None:
        database = window.repository.database
        window.close()
        database.close()

    @staticmethod
    def idle(window: Any) -> bool:
        """No operation runs and no panel of the browser is loading (the docks are built)."""
        return not (
            window.state.busy
            or window.model.loading
            or window.filters.loading
            or window.detail.loading
            or window.starting
        )

    def wait_until(self, condition: Callable[[], bool], timeout_s: float = 600.0) -> None:
        """Run the event loop (as the app would) until ``condition()``; waits, never works."""
        from PySide6.QtCore import QEventLoop, QTimer

        deadline = time.monotonic() + timeout_s
        loop = QEventLoop()
        poll = QTimer()
        poll.setInterval(5)
        poll.timeout.connect(lambda: (condition() or time.monotonic() > deadline) and loop.quit())
        poll.start()
        if not condition():
            loop.exec()
        poll.stop()
        if not condition():
            raise TimeoutError(f"still not done after {timeout_s:.0f} s")

    def quiet(self, window: Any) -> None:
        """Until the browser and the docks beside it have done what the last action started."""
        self.wait_until(lambda: self.idle(window))
        dashboard_wait = getattr(window.dashboard, "wait", None)  # it plots what the browser selects
        if callable(dashboard_wait):
            dashboard_wait()
        self.pause(1.0)

    def pause(self, seconds: float) -> None:
        from PySide6.QtCore import QEventLoop, QTimer

        loop = QEventLoop()
        QTimer.singleShot(int(seconds * 1000), loop.quit)
        loop.exec()

    def measure(self, window: Any, action: Callable[[], None]) -> tuple[float, dict[str, Any]]:
        """Tick while ``action`` runs and until the browser shows its result (plus ``settle_s``):
        (seconds to the result, the stall figures)."""
        from PySide6.QtCore import QCoreApplication, QTimer

        meter = StallMeter(self.tick_ms)
        started: list[float] = []
        meter.start()

        def act() -> None:
            started.append(time.perf_counter())
            action()

        QTimer.singleShot(0, act)  # from inside the event loop, as a click would
        self.wait_until(lambda: bool(started))
        QCoreApplication.sendPostedEvents()  # the announcement of a write the action made itself
        self.wait_until(lambda: self.idle(window))
        seconds = time.perf_counter() - started[0]
        self.pause(self.settle_s)  # the repaint after the result, and anything it starts
        return seconds, meter.stop()


# --- scenarios ----------------------------------------------------------------------------------------


def _plain_retag_seconds(library: Path, tag: str) -> float:
    """The same tags written with plain sqlite3: one UPDATE per skill in one transaction (the FTS
    triggers fire as for the app's write), on a copy of the library; no revisions, no audit."""
    copy = library.with_name(library.stem + "-plain.db")
    shutil.copyfile(library, copy)
    connection = sqlite3.connect(copy)
    rows = connection.execute("SELECT id, tags FROM skills").fetchall()
    retagged = [(json.dumps([*json.loads(tags), tag]), skill_id) for skill_id, tags in rows]
    started = time.perf_counter()
    with connection:
        connection.executemany("UPDATE skills SET tags = ? WHERE id = ?", retagged)
    seconds = time.perf_counter() - started
    connection.close()
    copy.unlink()
    return seconds


def scenario_bulk_retag(bench: Bench, size: int) -> list[Row]:
    """Select every skill, Edit › Add Tags…, then Edit › Undo: each a background LibraryOp."""
    from PySide6.QtWidgets import QInputDialog

    library = bench.library(size, "retag")
    limit = _plain_retag_seconds(library, BENCH_TAG)
    window = bench.open_window(library)
    ask = QInputDialog.getText
    QInputDialog.getText = lambda *_args, **_kwargs: (BENCH_TAG, True)
    try:
        select_started = time.perf_counter()
        window.table.selectAll()
        select_s = time.perf_counter() - select_started
        chosen = len(window.selected_ids())
        bench.quiet(window)  # what follows the selection (the dashboard's plots) is not the retag's doing
        rows = []
        for operation, trigger in (
            (f"add a tag to {chosen:,} skills", window.add_tags_action.trigger),
            ("undo it", window.undo_action.trigger),
        ):
            seconds, stalls = bench.measure(window, trigger)
            rows.append(
                Row(
                    "retag",
                    size,
                    operation,
                    round(seconds, 2),
                    stalls["worst_stall_ms"],
                    stalls["p99_stall_ms"],
                    stalls["stalls_over_target"],
                    stalls["ticks"],
                    f"plain sqlite3: {size:,} UPDATEs, one transaction",
                    round(limit, 3),
                    {
                        "worst_at_s": stalls["worst_at_s"],
                        "over_target_at_s": stalls["over_target_at_s"],
                        "select_all_s": round(select_s, 3),
                    },
                )
            )
        tagged = window.repository.query(_tag_query(BENCH_TAG)).total
        rows[-1].notes["tagged_after_undo"] = tagged
    finally:
        QInputDialog.getText = ask
        bench.close_window(window)
    return rows


def _tag_query(tag: str) -> Any:
    from skillstudio.store import SkillQuery

    return SkillQuery(tags=(tag,))


# A second scenario is one more function of the same shape, added here.
SCENARIOS: dict[str, Callable[[Bench, int], list[Row]]] = {
    "retag": scenario_bulk_retag,
}


# --- running ------------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_gui_stalls", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", nargs="+", type=lambda t: int(t.lower().replace("k", "000")), default=list(DEFAULT_SIZES)
    )
    parser.add_argument("--quick", action="store_true", help="1,000 skills")
    parser.add_argument("--only", action="append", choices=sorted(SCENARIOS), help="run just this scenario")
    parser.add_argument("--tick-ms", type=int, default=5, help="the stall meter's interval (default 5 ms)")
    parser.add_argument("--settle", type=float, default=1.0, help="seconds measured after the result shows (default 1)")
    parser.add_argument(
        "--embeddings",
        choices=("none", "local"),
        default="none",
        help="the retrieval provider (default none: the Retrieval Preview does not re-embed what was written; "
        "with local it does, in the background, after its 1.5 s delay; raise --settle to include that)",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where gui-stalls.json goes")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args, _unknown = _parser().parse_known_args(list(argv) if argv is not None else sys.argv[1:])
    sizes = [1_000] if args.quick else args.sizes
    scenarios = {name: SCENARIOS[name] for name in (args.only or SCENARIOS)}
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    sys.path.insert(0, str(ROOT))
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bench-gui-stalls-") as scratch:
        folder = Path(scratch)
        # Settings of our own: the developer's retrieval settings must not change what is measured.
        config = folder / "config"
        (config / "SkillStudio").mkdir(parents=True)
        (config / "SkillStudio" / "retrieval.yaml").write_text(f"embeddings:\n  provider: {args.embeddings}\n")
        os.environ["XDG_CONFIG_HOME"] = str(config)
        bench = Bench(folder, args.tick_ms, args.settle)
        for size in sizes:
            for name, scenario in scenarios.items():
                print(f"  {name}, {size:,} skills…", flush=True)
                rows.extend(scenario(bench, size))
    print(
        f"\nGUI-thread stalls through the real main window (offscreen; {args.tick_ms} ms timer; "
        f"retrieval embeddings: {args.embeddings}); target: none above {TARGET_MS:.0f} ms"
    )
    print(
        f"{'scenario':<8} {'skills':>7}  {'operation':<28} {'shown s':>8} {'worst ms':>9} {'p99 ms':>7} {'>100':>5}  limit"
    )
    for row in rows:
        print(
            f"{row.scenario:<8} {row.size:>7,}  {row.operation:<28} {row.seconds:>8.2f} {row.worst_stall_ms:>9.1f} "
            f"{row.p99_stall_ms:>7.1f} {row.stalls_over_target:>5}  {row.limit}: "
            f"{'—' if row.limit_seconds is None else f'{row.limit_seconds:.3f} s'}"
        )
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / "gui-stalls.json"
    report = {
        "benchmark": "gui_stalls",
        "tick_ms": args.tick_ms,
        "target_ms": TARGET_MS,
        "rows": [asdict(r) for r in rows],
    }
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
