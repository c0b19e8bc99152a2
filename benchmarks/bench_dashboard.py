"""Dashboard benchmark: how long the GUI's event loop stalls while a large verification batch
runs on the dashboard's worker thread.

``python -m benchmarks.bench_dashboard [--quick] [--skills 50] [--games 200] [--chunks 20 100]``
(or through ``python -m benchmarks.run``). Offscreen Qt: the real main window opens on a
synthetic library, all its playable AI skills are selected, and the dashboard verifies them
(50 skills x 200 games = 10,000 games by default) exactly as its Verify action does, once per
chunk size. Meanwhile a 10 ms ``QTimer`` records when it actually fires; a *stall* is a gap
between two ticks beyond the 10 ms interval. Reported: worst and p99 stall, ticks late by more
than 50 ms, games per second. It measures and reports; it never fails on speed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = Path(__file__).resolve().parent / "out"
TICK_MS = 10
STALL_LIMIT_MS = 50.0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_dashboard", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 skills x 100 games")
    parser.add_argument("--skills", type=int, default=50, help="AI skills verified (default 50)")
    parser.add_argument("--games", type=int, default=200, help="games per skill (default 200: 10,000 games)")
    parser.add_argument(
        "--chunks", type=int, nargs="+", default=[20, 100], help="chunk sizes, one batch each (default 20 100)"
    )
    parser.add_argument("--seed", type=int, default=57)
    parser.add_argument(
        "--executor", default="inprocess", help="executor of the batch (default inprocess, as the Verify dialog)"
    )
    parser.add_argument(
        "--switch-interval", type=float, default=None, help="sys.setswitchinterval for the run (seconds)"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where dashboard.json goes")
    return parser


def _percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def _library(path: Path, count: int) -> list[str]:
    from benchmarks.synthetic import generate_skills
    from skillstudio.model import BodyKind, Domain
    from skillstudio.store import Actor, Database, SkillRepository

    skills = generate_skills(max(400, count * 8))  # a library of every kind; the playable AI skills are verified
    playable = [
        s
        for s in skills
        if s.domain is Domain.AI_STRATEGY
        and s.body_kind is BodyKind.STRATEGIC_PATTERN
        and s.game_module in ("ra1", "td")
    ][:count]
    with Database(path, create=True) as database:
        SkillRepository(database, Actor("bench")).create_many(skills)
    return [s.id for s in playable]


def _wait_until(condition: Any, timeout_s: float = 60.0) -> None:
    """Run the event loop until ``condition()`` holds (the dashboard's public state)."""
    from PySide6.QtCore import QEventLoop, QTimer

    if condition():
        return
    loop = QEventLoop()
    deadline = time.monotonic() + timeout_s
    poll = QTimer(interval=20)

    def check() -> None:
        if condition() or time.monotonic() > deadline:
            loop.quit()

    poll.timeout.connect(check)
    poll.start()
    loop.exec()
    poll.stop()


def _one_batch(
    app: Any, library: Path, ids: list[str], games: int, chunk: int, seed: int, settings: Path, executor: str
) -> dict[str, Any]:
    from PySide6.QtCore import QCoreApplication, QEventLoop, QItemSelectionModel, QSettings, QTimer

    from skillstudio.gui.dashboard.verify_worker import BatchOptions
    from skillstudio.gui.qt_main_window import QtMainWindow
    from skillstudio.store import Actor, Database, SkillRepository

    database = Database(library)
    window = QtMainWindow(
        SkillRepository(database, Actor("bench")), QSettings(str(settings), QSettings.Format.IniFormat)
    )
    window.resize(1500, 950)
    window.show()
    while window.model.loading:  # the browser's first query, on its worker thread
        QCoreApplication.processEvents()  # delivers the query's queued answer, runs the model's timers
        time.sleep(0.005)
    for skill_id in ids[:10]:  # a selection for the dashboard to follow, as a user would have
        row = window.model.row_of(skill_id)
        if row is not None:
            window.table.selectionModel().select(
                window.model.index(row, 0),
                QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows,
            )
    _wait_until(lambda: not window.starting)  # the docks follow the browser's first rows on screen
    dashboard = window.dashboard
    assert dashboard is not None
    loaded = [0]
    dashboard.data_loaded.connect(lambda: loaded.__setitem__(0, loaded[0] + 1))
    _wait_until(lambda: not dashboard.loading)
    settle = QEventLoop()  # the window's first paints and the plots' first data, before measuring
    QTimer.singleShot(1500, settle.quit)
    settle.exec()
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(TICK_MS)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    loop = QEventLoop()
    outcome: list[Any] = []
    ended: list[float] = []

    def on_finished(result: Any) -> None:
        outcome.append(result)
        ended.append(time.perf_counter())
        QTimer.singleShot(1000, loop.quit)  # what follows the batch (reloads) counts too

    dashboard.batch_finished.connect(on_finished)
    progress_signals = [0]
    timer.start()
    started = time.perf_counter()
    dashboard.batch_progress.connect(lambda _update: progress_signals.__setitem__(0, progress_signals[0] + 1))
    dashboard.start_batch(ids, BatchOptions(games=games, seed=seed, chunk_games=chunk, executor=executor))
    loop.exec()
    timer.stop()
    elapsed = (ended[0] if ended else time.perf_counter()) - started
    window.close()
    database.close()
    gaps = [(b - a) * 1000 for a, b in itertools.pairwise(ticks)]
    worst_index = max(range(len(gaps)), key=gaps.__getitem__) if gaps else 0
    worst_at = round(ticks[worst_index] - started, 3) if gaps else None
    stalls = [max(0.0, gap - TICK_MS) for gap in gaps]
    result = outcome[0] if outcome else None
    played = result.finished.games_done if result is not None else 0
    return {
        "executor": executor,
        "chunk_games": chunk,
        "skills": len(ids),
        "games_per_skill": games,
        "games": played,
        "status": result.finished.status if result is not None else "failed",
        "seconds": round(elapsed, 3),
        "games_per_second": round(played / elapsed, 1) if elapsed else None,
        "ticks": len(ticks),
        "expected_ticks": int(elapsed * 1000 / TICK_MS),
        "progress_signals": progress_signals[0],
        "worst_stall_ms": round(max(stalls, default=0.0), 2),
        "p99_stall_ms": round(_percentile(stalls, 99), 2),
        "p50_gap_ms": round(_percentile(gaps, 50), 2),
        "stalls_over_50ms": sum(s > STALL_LIMIT_MS for s in stalls),
        "loaded_plots": loaded[0],
        "worst_stall_at_s": worst_at,
        "batch_ended_at_s": round(ended[0] - started, 3) if ended else None,
    }


def main(argv: Sequence[str] | None = None) -> int:
    args, _unknown = _parser().parse_known_args(list(argv) if argv is not None else sys.argv[1:])
    if args.quick:
        args.skills, args.games = min(args.skills, 10), min(args.games, 100)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    sys.path.insert(0, str(ROOT))
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    if args.switch_interval:
        sys.setswitchinterval(args.switch_interval)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-dashboard-") as folder:
        template = Path(folder) / "template.db"
        ids = _library(template, args.skills)
        for chunk in args.chunks:
            library = Path(folder) / f"library-{chunk}.db"
            library.write_bytes(template.read_bytes())
            rows.append(
                _one_batch(
                    app, library, ids, args.games, chunk, args.seed, Path(folder) / "settings.ini", args.executor
                )
            )
    print(f"Event-loop stalls during a batch on the dashboard's worker thread ({TICK_MS} ms timer, offscreen)")
    print(
        f"{'chunk':>6} {'games':>7} {'seconds':>8} {'games/s':>8} {'ticks':>6} {'worst ms':>9} {'p99 ms':>7} {'>50 ms':>7}"
    )
    for row in rows:
        print(
            f"{row['chunk_games']:>6} {row['games']:>7,} {row['seconds']:>8.1f} {row['games_per_second']:>8,.0f} {row['ticks']:>6} "
            f"{row['worst_stall_ms']:>9.1f} {row['p99_stall_ms']:>7.1f} {row['stalls_over_50ms']:>7}"
        )
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / "dashboard.json"
    out.write_text(
        json.dumps({"benchmark": "dashboard", "tick_ms": TICK_MS, "runs": rows}, indent=2) + "\n", encoding="utf-8"
    )
    for row in rows:
        print(
            f"chunk {row['chunk_games']}: worst stall at {row['worst_stall_at_s']} s; the batch ended at {row['batch_ended_at_s']} s"
        )
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
