"""GUI stalls during an import: how long the GUI thread's event loop stops (the meter is bench_gui_stalls').

``python -m benchmarks.bench_gui_stalls [--quick] [--sizes 10000] [--tick-ms 5] [--out DIR]`` (or
through ``python -m benchmarks.run``). Offscreen Qt. A ``QTimer`` ticks every ``--tick-ms`` and
records when it actually fires; a *stall* is a gap between two ticks beyond the interval (as in
``bench_dashboard``). Target: no stall above 100 ms. It measures and reports; it never fails on
speed.

Scenario ``import_stalls``: a synthetic Workshop package of N skills (default 10,000) is imported
into an empty library through the real File › Import dialog: Preview (read, validate and plan
in the background), then Import (one transaction, as a ``LibraryOp``). Beside it, the plain
limit measured in the same run: the same rows (every regular table the import filled) inserted
with bare ``sqlite3`` in one transaction, once on a background thread with the same timer (the
stall floor of a background write in this interpreter) and once on the GUI thread (the stall a
write on the GUI thread would be).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.bench_gui_stalls import TARGET_MS, StallMeter

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = Path(__file__).resolve().parent / "out"
DEFAULT_SIZES = (10_000,)
QUICK_SIZES = (1_000,)
TICK_MS = 5


def _size(text: str) -> int:
    return int(text.lower().replace("k", "000").replace("_", ""))


def _package(path: Path, size: int, seed: int) -> int:
    from benchmarks.synthetic import generate_skills
    from skillstudio.packages.icpkg import PackageMeta, export_package

    skills = generate_skills(size, seed=seed)
    meta = PackageMeta("bench-stalls", "bench", "1.0.0", description="synthetic benchmark library")
    path.write_bytes(export_package(skills, meta))
    return len(skills)


def _regular_tables(connection: sqlite3.Connection) -> list[tuple[str, str]]:
    """(name, CREATE statement) of the ordinary tables: no FTS (virtual or shadow), no sqlite_."""
    rows = connection.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL").fetchall()
    virtual = [name for name, sql in rows if sql.upper().startswith("CREATE VIRTUAL")]
    return [
        (name, sql)
        for name, sql in rows
        if not name.startswith("sqlite_") and name not in virtual and not any(name.startswith(f"{v}_") for v in virtual)
    ]


def _rows_of(library: Path) -> list[tuple[str, str, list[tuple[Any, ...]]]]:
    with sqlite3.connect(library) as connection:
        return [
            (name, sql, connection.execute(f'SELECT * FROM "{name}"').fetchall())
            for name, sql in _regular_tables(connection)
        ]


def _bare_insert(path: Path, tables: list[tuple[str, str, list[tuple[Any, ...]]]]) -> None:
    """The same rows into bare tables (no indexes, triggers or FTS), one transaction, with the
    library's journal and sync settings."""
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = NORMAL")
        connection.execute("PRAGMA foreign_keys = OFF")
        for _name, sql, _rows in tables:
            connection.execute(sql)
        connection.execute("BEGIN")
        for name, _sql, rows in tables:
            if rows:
                marks = ", ".join("?" * len(rows[0]))
                connection.executemany(f'INSERT INTO "{name}" VALUES ({marks})', rows)
        connection.execute("COMMIT")
    finally:
        connection.close()


def import_stalls(size: int, *, seed: int = 57, folder: Path, tick_ms: int = TICK_MS) -> dict[str, Any]:
    """Import ``size`` synthetic skills through the real import dialog; stalls per phase, and
    the plain-SQLite limit for the same rows."""
    from PySide6.QtCore import QEventLoop, QTimer

    from skillstudio.gui.browser_state import BrowserState
    from skillstudio.gui.qt_packages import QtImportDialog
    from skillstudio.store import Actor, Database, SkillRepository

    package = folder / f"stalls-{size}.icpkg"
    skills = _package(package, size, seed)
    library = folder / f"import-{size}.db"
    database = Database(library, create=True)
    state = BrowserState(SkillRepository(database, Actor("bench", "human")))
    dialog = QtImportDialog(state, path=package)
    dialog.resize(900, 600)
    dialog.show()
    settle = QEventLoop()  # the dialog's first paint, before measuring
    QTimer.singleShot(300, settle.quit)
    settle.exec()
    meter = StallMeter(tick_ms)
    preview = meter.measure(dialog.preview, lambda: not dialog.reader.loading)
    planned = dialog.plan.changes if dialog.plan is not None else 0
    write = meter.measure(dialog.apply, lambda: not state.busy, settle_ms=1000)  # and what follows it
    imported = state.require_repository().count()
    dialog.close()
    state.close()
    database.close()

    tables = _rows_of(library)
    rows = sum(len(table_rows) for _name, _sql, table_rows in tables)
    worker: list[threading.Thread] = []

    def start_bare() -> None:
        thread = threading.Thread(target=_bare_insert, args=(folder / f"bare-thread-{size}.db", tables))
        worker.append(thread)
        thread.start()

    bare_thread = meter.measure(start_bare, lambda: not worker[0].is_alive(), settle_ms=50)
    began = time.perf_counter()
    _bare_insert(folder / f"bare-gui-{size}.db", tables)
    bare_gui_s = time.perf_counter() - began
    return {
        "scenario": "import",
        "skills": skills,
        "planned_changes": planned,
        "imported": imported,
        "rows": rows,
        "tables": {name: len(table_rows) for name, _sql, table_rows in tables},
        "tick_ms": tick_ms,
        "preview": preview,
        "import": write,
        "bare_sqlite_thread": bare_thread,
        "bare_sqlite_gui_thread_s": round(bare_gui_s, 3),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_gui_stalls", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", type=_size, default=None, help="skills imported (default 10000)")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_SIZES[0]} skills")
    parser.add_argument("--seed", type=int, default=57)
    parser.add_argument("--tick-ms", type=int, default=TICK_MS, help=f"timer interval (default {TICK_MS} ms)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args, _unknown = parser.parse_known_args(list(argv) if argv is not None else sys.argv[1:])
    sizes = args.sizes or (QUICK_SIZES if args.quick else DEFAULT_SIZES)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    sys.path.insert(0, str(ROOT))
    from PySide6.QtWidgets import QApplication

    _app = QApplication.instance() or QApplication([])
    reports = []
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="bench-gui-stalls-") as folder:
            reports.append(import_stalls(size, seed=args.seed, folder=Path(folder), tick_ms=args.tick_ms))
    print(f"GUI-thread stalls ({args.tick_ms} ms timer, offscreen; target: none above {TARGET_MS:.0f} ms)")
    print(f"{'scenario':<34} {'skills':>7} {'seconds':>8} {'worst ms':>9} {'at s':>6} {f'>{TARGET_MS:.0f} ms':>7}")
    for report in reports:
        for label, figures in (
            ("import dialog: preview (read+plan)", report["preview"]),
            ("import dialog: import (LibraryOp)", report["import"]),
            (f"bare sqlite3, thread ({report['rows']:,} rows)", report["bare_sqlite_thread"]),
        ):
            print(
                f"{label:<34} {report['skills']:>7,} {figures['seconds']:>8.2f} {figures['worst_stall_ms']:>9.1f} "
                f"{figures['worst_at_s'] or 0:>6.2f} {figures['stalls_over_target']:>7}"
            )
        print(
            f"{'bare sqlite3, on the GUI thread':<34} {report['skills']:>7,} {report['bare_sqlite_gui_thread_s']:>8.2f} "
            f"{report['bare_sqlite_gui_thread_s'] * 1000:>9.1f}   (the whole write is one stall)"
        )
        print(f"imported {report['imported']:,} of {report['planned_changes']:,} planned")
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / "gui-stalls-import.json"
    out.write_text(json.dumps({"benchmark": "gui_stalls", "runs": reports}, indent=2) + "\n", encoding="utf-8")
    print(f"written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
