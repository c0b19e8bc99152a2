"""How the library browser feels on a large library: open time, filter, sort and keystroke latency.

Runs the real main window offscreen. For each action: *first screen*, the time from the user's
action until the table has repainted with the query's first page (queries run on a worker
thread); *all rows*, until the rest of the ids have arrived too (the row count and scrollbar
follow); *GUI blocked*, how long the GUI thread itself was busy in that time, i.e. how long the
window could not answer a click or a key; and the *plain SQLite limit*, bare sqlite3 reading the
same first page (or rows) with hand-written SQL in the same run. Also the filter panel's choices,
the store's first pages without the GUI (the 1M figures), and the GUI process's peak RSS.
Libraries are generated once per size and kept in benchmarks/out/.

The store's first pages also run on a team library (``--backends sqlite postgresql``): each
size's SQLite library is copied into a PostgreSQL server (benchmarks/postgres_library.py),
either ``--postgres-url``'s or a throwaway cluster started as the tests start theirs
(tests/postgres_server.py; ``--pgdata DIR`` keeps it, and its copies, between runs), and each
figure is printed beside a plain-PostgreSQL limit (bare psycopg, hand-written SQL) and the
SQLite one. ``--store-only`` skips the GUI.

    python -m benchmarks.bench_browser [--sizes 10000 100000] [--quick] [--repeats 7] [--fresh]
        [--backends sqlite postgresql] [--store-only] [--postgres-url URL | --pgdata DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
DEFAULT_SIZES = (10_000, 100_000)


def library_for(size: int, *, fresh: bool = False, out: Path = OUT) -> Path:
    """A generated library of ``size`` skills, built once and kept for later runs."""
    from itertools import islice

    from benchmarks.synthetic import iter_skills
    from skillstudio.store import Actor, Database, SkillRepository

    path = out / f"browser-library-{size}.db"
    if path.exists() and not fresh:
        Database(path).close()  # a file kept from an older schema migrates here, not while timed
        return path
    out.mkdir(exist_ok=True)
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


SCREEN = 64  # skill_table_model.FIRST_SCREEN: the rows a query shows first
PAGE_SQL = f"ORDER BY name COLLATE NOCASE, id LIMIT {SCREEN}"
CONFIDENCE_ORDER = (
    "CASE WHEN confidence = 'tentative' THEN 0 WHEN confidence = 'established' THEN 1"
    " WHEN confidence = 'proven' THEN 2 ELSE -1 END"
)
SORTED_COLUMNS = {4: "success_rate", 0: "name", 3: CONFIDENCE_ORDER, 5: "verification_count"}
SUMMARY_COLUMNS = (
    "s.id, name, domain, game_module, confidence, success_rate, verification_count, average_rating, use_count,"
    " source, m.created_by, created_at, last_verified, last_used, tags, m.review_state"
)


# The store's filtered list (_store_queries), with its backend's spelling of the order; ``walk``
# marks the filtered columns so that SQLite walks the order's index for a first page, as the
# store writes it (backends.sqlite: +column), instead of reading every skill of the domain.
_FILTER_SQL = (
    "SELECT id FROM skills WHERE {walk}domain IN ('ai_strategy') AND {walk}confidence IN ('established', 'proven')"
    " AND {walk}game_module IN ('ra1') ORDER BY success_rate DESC{nulls}, {name}, id"
)


class _Plain:
    """The plain-SQLite limit of each figure: the same first page (or rows) read by bare sqlite3
    with hand-written SQL, in the same process and run, with the app's page cache, memory map
    and temporary storage."""

    filtered_sql = _FILTER_SQL.format(walk="", nulls="", name="name COLLATE NOCASE")
    filtered_page_sql = _FILTER_SQL.format(walk="+", nulls="", name="name COLLATE NOCASE") + " LIMIT 200"

    def __init__(self, path: Path) -> None:
        import sqlite3

        from skillstudio.store.backends.sqlite import CONNECTION_PRAGMAS

        self.connection = sqlite3.connect(path)
        for pragma in CONNECTION_PRAGMAS:
            if pragma.split()[1] in {"cache_size", "mmap_size", "temp_store"}:
                self.connection.execute(pragma)

    def time(self, sql: str, *params: object) -> float:
        started = time.perf_counter()
        self.connection.execute(sql, params).fetchall()
        return time.perf_counter() - started

    def ranked_page(self, match: str, rows: int = SCREEN) -> float:
        from skillstudio.store.backends.sqlite import SEARCH_INDEX  # the index the store searches

        return self.time(
            f"SELECT s.id FROM (SELECT rowid AS r, rank AS k FROM {SEARCH_INDEX} WHERE {SEARCH_INDEX} MATCH ?"
            " ORDER BY +rank LIMIT ?) JOIN skills AS s ON s.rowid = r ORDER BY k",
            match,
            rows,
        )

    def success_ordered_page(self, match: str, rows: int = SCREEN) -> float:
        from skillstudio.store.backends.sqlite import SEARCH_INDEX

        return self.time(
            f"SELECT id FROM skills WHERE +rowid IN (SELECT rowid FROM {SEARCH_INDEX} WHERE {SEARCH_INDEX} MATCH ?)"
            " ORDER BY success_rate DESC, name COLLATE NOCASE, id LIMIT ?",
            match,
            rows,
        )

    def search_page(self, words: list[str], rows: int) -> float:
        return self.ranked_page(" ".join(f'"{word}"*' for word in words), rows)

    def rows(self, ids: list[str]) -> float:
        marks = ", ".join("?" * len(ids))
        return self.time(
            f"SELECT {SUMMARY_COLUMNS} FROM skills AS s LEFT JOIN studio_skill_meta AS m ON m.skill_id = s.id"
            f" WHERE s.id IN ({marks})",
            *ids,
        )


class _PlainPostgres:
    """The plain-PostgreSQL limit: the same first page read by bare psycopg with hand-written
    SQL, on its own connection to the same server, in the same run."""

    filtered_sql = _FILTER_SQL.format(walk="", nulls=" NULLS LAST", name="lower(name)")
    filtered_page_sql = filtered_sql + " LIMIT 200"

    def __init__(self, url: str) -> None:
        import psycopg
        from sqlalchemy.engine import make_url

        # Planned for each search's word, as the store's are (psycopg would prepare a statement
        # run five times, and the server then keep one generic plan for every word).
        self.connection = psycopg.connect(
            make_url(url).set(drivername="postgresql").render_as_string(False), autocommit=True, prepare_threshold=None
        )

    def time(self, sql: str, *params: object) -> float:
        started = time.perf_counter()
        self.connection.execute(sql, params).fetchall()
        return time.perf_counter() - started

    def search_page(self, words: list[str], rows: int) -> float:
        """Every match ranked (ts_rank, the weights the app gives name, tags and description),
        the best ``rows`` kept and joined to their skills."""
        return self.time(
            "SELECT s.id FROM (SELECT skill_id, ts_rank('{0.025, 0.25, 0.5, 1.0}', document, q) AS k"
            " FROM studio_skill_search, to_tsquery('simple', %s) AS q WHERE document @@ q"
            " ORDER BY k DESC LIMIT %s) AS r JOIN skills AS s ON s.id = r.skill_id ORDER BY r.k DESC",
            " & ".join(f"{word}:*" for word in words),
            rows,
        )

    def close(self) -> None:
        self.connection.close()


def _measure_in_process(path: Path, repeats: int, light: bool = False) -> dict[str, object]:
    """``light``: one search (the whole word) and one sort, for the 1M library, where every
    "all rows" takes seconds; the peak memory is that of the same workflow."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import resource

    from PySide6.QtCore import QEventLoop, QSettings, Qt
    from PySide6.QtWidgets import QApplication

    from skillstudio.gui.qt_filter_panel import _read_choices
    from skillstudio.gui.qt_main_window import QtMainWindow
    from skillstudio.store import Actor, Database, SkillQuery, SkillRepository, fts_expression

    app = QApplication.instance() or QApplication([])
    settings = QSettings(str(path.parent / "bench-settings.ini"), QSettings.Format.IniFormat)
    plain = _Plain(path)

    blocked: list[float] = []
    first_rows: list[float] = []  # when the model put a query's first screen in the table

    def first_screen(window: QtMainWindow, started: float) -> float:
        """Seconds from ``started`` until the action's first screen of rows is painted."""
        while not first_rows:
            app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)  # sleeps until the worker posts
        app.processEvents()  # the repaint of the reset table
        seconds = time.perf_counter() - started
        first_rows.clear()
        return seconds

    def settle(window: QtMainWindow) -> None:
        """Wait for everything the action started (the rest of the ids too), then repaint;
        GUI-thread time is recorded. Then let the dashboard, which follows the query a moment
        later, finish too: its reload must not run into the next action's figures."""
        busy = 0.0
        while True:
            for loader in (window.model._loader, window.model._rest_loader):
                loader._pool.waitForDone()  # waiting, not working: the GUI thread would be idle
            started = time.perf_counter()
            app.sendPostedEvents()  # the result arrives, the model resets, the table repaints
            app.processEvents()
            busy += time.perf_counter() - started
            if not window.model.loading:
                break
        blocked.append(busy)
        while window.dashboard is not None and window.dashboard.loading:
            app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
        first_rows.clear()

    started = time.perf_counter()
    database = Database(path)
    window = QtMainWindow(SkillRepository(database, Actor("bench")), settings)
    window.model.first_rows_shown.connect(lambda: first_rows.append(time.perf_counter()))
    window.resize(1400, 820)
    window.show()
    open_s = first_screen(window, started)
    settle(window)
    open_complete_s = time.perf_counter() - started
    while window.filters.loading:  # the tag and creator lists fill in on a worker thread
        app.processEvents()
        time.sleep(0.005)
    window._watch_timer.stop()  # measure our actions only
    repository = window.repository

    def open_limit() -> float:
        started = time.perf_counter()
        fresh = _Plain(path)
        ids = [row[0] for row in fresh.connection.execute(f"SELECT id FROM skills {PAGE_SQL}")]
        fresh.rows(ids)
        fresh.connection.close()
        return time.perf_counter() - started

    results: dict[str, object] = {
        "open": {
            "samples": [open_s],
            "complete": [open_complete_s],
            "limit": [open_limit() for _ in range(3)],
            "rows": window.model.rowCount(),
        },
    }

    def facet_item(facet, value):
        for row in range(facet.list.count()):
            if facet.list.item(row).data(Qt.ItemDataRole.UserRole) == value:
                return facet.list.item(row)
        raise LookupError(value)

    def toggle(name: str, item, limit: Callable[[], float]) -> None:
        samples, complete, blocking = [], [], []
        for _ in range(repeats):
            item.setCheckState(Qt.CheckState.Unchecked)
            settle(window)
            started = time.perf_counter()
            item.setCheckState(Qt.CheckState.Checked)  # the filter panel re-queries on this signal
            action_s = time.perf_counter() - started
            samples.append(first_screen(window, started))
            settle(window)
            complete.append(time.perf_counter() - started)
            blocking.append(action_s + blocked[-1])
        results[name] = {
            "samples": samples,
            "complete": complete,
            "blocked": blocking,
            "limit": [limit() for _ in range(repeats)],
            "rows": window.model.rowCount(),
        }

    where = "confidence IN ('proven')"
    toggle(
        "filter: confidence proven",
        facet_item(window.filters.confidence, "proven"),
        lambda: plain.time(f"SELECT id FROM skills WHERE {where} {PAGE_SQL}"),
    )
    toggle(
        "filter: + module ra1",
        facet_item(window.filters.module, "ra1"),
        lambda: plain.time(f"SELECT id FROM skills WHERE {where} AND game_module IN ('ra1') {PAGE_SQL}"),
    )
    toggle(
        "filter: + domain ai_strategy",
        facet_item(window.filters.domain, "ai_strategy"),
        lambda: plain.time(
            f"SELECT id FROM skills WHERE {where} AND game_module IN ('ra1') AND domain IN ('ai_strategy') {PAGE_SQL}"
        ),
    )
    window.filters.clear()
    settle(window)
    tag_counts = repository.facets.tag_counts()
    common_tag = max(tag_counts, key=tag_counts.get) if tag_counts else None
    if common_tag is not None:
        toggle(
            f"filter: tag {common_tag!r} alone",
            facet_item(window.filters.tags, common_tag),
            lambda: plain.time(
                f"SELECT id FROM skills WHERE EXISTS (SELECT 1 FROM json_each(skills.tags) WHERE value = ?) {PAGE_SQL}",
                common_tag,
            ),
        )
        window.filters.clear()
        settle(window)

    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        _read_choices(repository)
        samples.append(time.perf_counter() - started)
    results["filter panel choices (modules, creators, tags)"] = {
        "samples": samples,
        "limit": [
            plain.time("SELECT tag, skills FROM studio_tag_counts")
            + plain.time("SELECT created_by FROM studio_creator_counts")
            + plain.time("SELECT DISTINCT game_module FROM skills")
            for _ in range(repeats)
        ],
        "before": [
            plain.time(
                "SELECT tag.value, COUNT(*) FROM skills, json_each(CASE WHEN json_valid(skills.tags)"
                " THEN skills.tags ELSE '[]' END) AS tag WHERE tag.type = 'text' GROUP BY tag.value"
            )
            for _ in range(2)
        ],
        "rows": len(tag_counts),
    }

    def keystroke(typed: str, label: str, limit: Callable[[str], float]) -> None:
        """The first screen after ``typed`` is searched, in the table's current order."""
        samples, complete, blocking = [], [], []
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
            samples.append(first_screen(window, started))
            settle(window)
            complete.append(time.perf_counter() - started)
            blocking.append(action_s + blocked[-1])
        match = fts_expression(typed) or '""'
        results[label] = {
            "samples": samples,
            "complete": complete,
            "blocked": blocking,
            "limit": [limit(match) for _ in range(max(2, repeats // 2))],
            "rows": window.model.rowCount(),
        }

    for word in ("tank",) if light else ("tank", "refinery ambush", "zzzz"):
        for typed in [word] if light else [word[: n + 1] for n in range(len(word))]:
            keystroke(typed, f"keystroke: {typed!r}", plain.ranked_page)
        window.search.clear()
        window.apply_filters()
        settle(window)
    settle(window)
    if not light:  # a search in a column's order: the limit walks that order's index
        window.table.sortByColumn(4, Qt.SortOrder.DescendingOrder)
        settle(window)
        for typed in ("t", "tank", "r"):
            keystroke(typed, f"keystroke: {typed!r}, by Success (desc)", plain.success_ordered_page)
        window.search.clear()
        window.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)  # as the sorts below expect
        window.apply_filters()
        settle(window)

    samples, limits = [], []
    rows = window.model.rowCount()
    for n in range(repeats):
        target = (rows // (repeats + 1)) * (n + 1)
        started = time.perf_counter()
        window.table.scrollTo(window.model.index(target, 0))
        settle(window)
        samples.append(time.perf_counter() - started)
        limits.append(plain.rows(list(window.model.ids()[target : target + 200])))  # a PAGE
    results["scroll to an unread page"] = {"samples": samples, "limit": limits, "rows": rows}

    for column, key in list(SORTED_COLUMNS.items())[: 1 if light else None]:
        samples, complete, blocking, limits = [], [], [], []
        for _ in range(max(2, repeats // 2)):
            window.table.sortByColumn(column, Qt.SortOrder.AscendingOrder)
            settle(window)
            started = time.perf_counter()
            window.table.sortByColumn(column, Qt.SortOrder.DescendingOrder)
            action_s = time.perf_counter() - started
            samples.append(first_screen(window, started))
            settle(window)
            complete.append(time.perf_counter() - started)
            blocking.append(action_s + blocked[-1])
            tail = "id" if column == 0 else "name COLLATE NOCASE, id"
            limits.append(plain.time(f"SELECT id FROM skills ORDER BY {key} DESC, {tail} LIMIT {SCREEN}"))
        results[f"sort by {window.model.headerData(column, Qt.Orientation.Horizontal)} (desc)"] = {
            "samples": samples,
            "complete": complete,
            "blocked": blocking,
            "limit": limits,
            "rows": rows,
        }
    window.close()
    results.update(_store_queries(repository, plain, repeats, SkillQuery))
    results["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    database.close()
    return results


def _store_queries(repository, plain: _Plain | _PlainPostgres, repeats: int, skill_query) -> dict[str, object]:
    """The store's first pages without the GUI (the figures asked for at 1M), and the full list
    behind them (what the table reads after its first screen)."""
    from skillstudio.model import Confidence, Domain
    from skillstudio.store import SortKey

    filtered = skill_query(
        domains=(Domain.AI_STRATEGY,),
        confidences=(Confidence.ESTABLISHED, Confidence.PROVEN),
        game_modules=("ra1",),
        sort=SortKey.SUCCESS_RATE,
        descending=True,
    )
    out: dict[str, object] = {}

    def timed(name: str, run: Callable[[], object], limit: Callable[[], float], rows: Callable[[object], int]) -> None:
        samples, value = [], None
        for _ in range(repeats):
            started = time.perf_counter()
            value = run()
            samples.append(time.perf_counter() - started)
        out[name] = {"samples": samples, "limit": [limit() for _ in range(repeats)], "rows": rows(value)}

    timed(
        "store: filtered list, first page",
        lambda: repository.first_page(filtered, 200),
        lambda: plain.time(plain.filtered_page_sql),
        len,
    )
    timed(
        "store: filtered list, all ids",
        lambda: repository.query(filtered).ids,
        lambda: plain.time(plain.filtered_sql),
        len,
    )
    for text in ("tank", "anti ar"):
        timed(
            f"store: FTS {text!r}, first page",
            lambda text=text: repository.first_page(skill_query(text=text), 200),
            lambda text=text: plain.search_page(text.split(), 200),
            len,
        )
    return out


def _child(path: str, repeats: int, light: bool = False) -> None:
    """Runs in a fresh process, so the open time is the one a user sees after starting the app."""
    sys.stdout.write(json.dumps(_measure_in_process(Path(path), repeats, light)) + "\n")


def _store_only(target: str, plain: _Plain | _PlainPostgres, repeats: int) -> dict[str, object]:
    """The store's first pages on the library at ``target`` (a path or a server URL), no GUI."""
    from skillstudio.store import Actor, Database, SkillQuery, SkillRepository

    with Database(target) as database:
        return _store_queries(SkillRepository(database, Actor("bench")), plain, repeats, SkillQuery)


def _gui_run(path: Path, repeats: int, light: bool) -> dict[str, object] | None:
    """The GUI's figures, measured in a fresh process; None if it failed (its stderr printed)."""
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(root)}
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            f"from benchmarks.bench_browser import _child; _child({str(path)!r}, {repeats}, {light})",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        timeout=1800 + path.stat().st_size // 100_000,  # 1M skills: every "all rows" is seconds long
        check=False,  # a failed child is reported with its stderr
    )
    if done.returncode != 0:
        print(done.stderr[-3000:])
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def _print_gui(size: int, results: dict[str, object]) -> None:
    print(f"\n{size:,} skills; GUI peak RSS (ru_maxrss) {results['peak_rss_mb']:.0f} MB")
    print(f"  {'action':<46} {'first screen':>21} {'all rows':>9} {'GUI blocked':>12} {'plain SQLite limit':>19}  rows")
    for name, value in results.items():
        if not isinstance(value, dict):
            continue
        median, p95 = _percentiles(value["samples"])
        line = f"  {name:<46} {median * 1000:8.1f} ms, p95 {p95 * 1000:6.1f}"
        line += f" {_percentiles(value['complete'])[0] * 1000:6.0f} ms" if "complete" in value else " " * 10
        line += f" {_percentiles(value['blocked'])[0] * 1000:9.1f} ms" if "blocked" in value else " " * 13
        line += f" {_percentiles(value['limit'])[0] * 1000:16.1f} ms"
        if "before" in value:
            line += f" (counting every row: {_percentiles(value['before'])[0] * 1000:.0f} ms)"
        print(f"{line}  {value['rows']:,}")


def _print_store(size: int, by_backend: dict[str, dict[str, object]]) -> None:
    """The store's figures, each backend's median (and p95) beside its plain limit."""
    print(f"\n{size:,} skills: the store's queries without the GUI (median, p95; limit: median)")
    header = f"  {'query':<36}"
    for backend in by_backend:
        header += f" {backend:>26} {'plain limit':>12}"
    print(header + "  rows")
    first = next(iter(by_backend.values()))
    for name in (key for key, value in first.items() if key.startswith("store:") and isinstance(value, dict)):
        line = f"  {name.removeprefix('store: '):<36}"
        rows = []
        for results in by_backend.values():
            value = results[name]
            assert isinstance(value, dict)
            median, p95 = _percentiles(value["samples"])
            line += f" {median * 1000:11.1f} ms, p95 {p95 * 1000:7.1f} {_percentiles(value['limit'])[0] * 1000:9.1f} ms"
            rows.append(f"{value['rows']:,}")
        print(f"{line}  {' / '.join(dict.fromkeys(rows))}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_browser", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", nargs="+", type=lambda t: int(t.lower().replace("k", "000")), default=list(DEFAULT_SIZES)
    )
    parser.add_argument("--quick", action="store_true", help="1,000 skills only")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--fresh", action="store_true", help="regenerate the libraries")
    parser.add_argument("--out", type=Path, default=OUT, help="where libraries and browser.json are kept")
    parser.add_argument(
        "--light", action="store_true", help="one search and one sort per size (for 1M: every 'all rows' takes seconds)"
    )
    parser.add_argument(
        "--backends",
        nargs="+",
        choices=("sqlite", "postgresql"),
        default=["sqlite"],
        help="a team library (postgresql) runs the store's queries only",
    )
    parser.add_argument("--store-only", action="store_true", help="the store's queries only, without the GUI")
    parser.add_argument("--postgres-url", help="a superuser's URL of the server to copy the libraries into")
    parser.add_argument(
        "--pgdata", type=Path, help="keep the throwaway cluster, and its copied libraries, in this folder between runs"
    )
    args, _unknown = parser.parse_known_args(argv)
    sizes = [1_000] if args.quick else args.sizes
    print(
        f"SkillStudio browser benchmark: sizes {', '.join(f'{s:,}' for s in sizes)} skills; "
        f"{args.repeats} repeats; {' and '.join(args.backends)}"
        + ("; the store's queries only" if args.store_only else "; offscreen Qt; times from action to repainted table")
    )
    server = _postgres_server(args) if "postgresql" in args.backends else None
    if isinstance(server, str):
        print(f"no PostgreSQL server: {server}")
        return 1
    report: dict[str, object] = {}
    try:
        for size in sizes:
            path = library_for(size, fresh=args.fresh, out=args.out)
            by_backend: dict[str, dict[str, object]] = {}
            if "sqlite" in args.backends:
                if args.store_only:
                    by_backend["SQLite"] = _store_only(str(path), _Plain(path), args.repeats)
                else:
                    results = _gui_run(path, args.repeats, args.light)
                    if results is None:
                        return 1
                    _print_gui(size, results)
                    by_backend["SQLite"] = results
                report[str(size)] = by_backend["SQLite"]
            if server is not None:
                from benchmarks.postgres_library import server_library

                url = server_library(server.admin_url, server.url(f"skillstudio_browser_{size}"), path)
                plain = _PlainPostgres(url)
                try:
                    by_backend["PostgreSQL"] = _store_only(url, plain, args.repeats)
                finally:
                    plain.close()
                report[f"postgresql-{size}"] = by_backend["PostgreSQL"]
            _print_store(size, by_backend)
    finally:
        if server is not None:
            server.stop()
    args.out.mkdir(exist_ok=True)
    (args.out / "browser.json").write_text(json.dumps(report, indent=2))
    return 0


def _postgres_server(args: argparse.Namespace):
    """``--postgres-url``'s server, or a throwaway cluster (kept in ``--pgdata`` if given)."""
    from tests.postgres_server import PostgresServer, start_server

    if args.postgres_url:
        return PostgresServer(args.postgres_url)
    return start_server(args.pgdata)


if __name__ == "__main__":
    sys.exit(main())
