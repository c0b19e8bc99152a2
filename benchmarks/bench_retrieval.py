"""Retrieval benchmark: embedding, vector index and ``Retriever.retrieve`` on synthetic libraries.

Run it alone with ``python -m benchmarks.bench_retrieval [--quick] [--sizes 10000,100000]`` or
with every other benchmark through ``python -m benchmarks.run``. See benchmarks/README.md for what
each figure means. Every figure is printed beside a plain limit measured in the same run (raw
WordLlama, bare SQLite, bare numpy) and against its target; nothing here fails on speed.

One core: the measurements run in a child process pinned to a single CPU (Linux) with BLAS,
OpenMP, MKL and Rayon (the tokenizer's thread pool) limited to one thread, set before numpy is
imported, whatever the parent process had already imported (as bench_engine does).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.bench_engine import _pin_to_one_core  # one way to pin a child to one core
from benchmarks.bench_store import _size  # one parser for "100k", "1m", "10,000"

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = Path(__file__).resolve().parent / "out"
DEFAULT_SIZES = (10_000, 100_000)
QUICK_SIZES = (1_000,)
DEFAULT_REPEATS = 2  # rounds of the embedding-throughput measurement
DEFAULT_WARMUPS = 3  # untimed queries before each timed series
INSERT_BATCH = 5_000  # create_many batch, as bench_store
K = 10
PLAIN_CANDIDATES = 200  # the retriever's CANDIDATES: rows the bare FTS / numpy limits fetch
FILTER = ("ai_strategy", "ra1")  # domain + game module of the filtered figures
SINGLE_THREAD = dict.fromkeys(
    ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "RAYON_NUM_THREADS"), "1"
)

TARGETS = {  # what the figures should reach at 100k skills
    "throughput": 20_000.0,  # descriptions/s, at least
    "embed_library": 30.0,  # seconds, at most
    "semantic": 10.0,  # ms median, at most
    "retrieve": 50.0,  # ms median, at most
}

# Situations an agent or a designer might describe, in words that mostly differ from the
# library's (paraphrases: "ore trucks" for harvesters, "planes" for MiGs and Yaks, ...).
QUERIES = (
    "how do I stop enemy planes from wrecking my base early on",
    "keep my ore trucks alive when the opponent keeps raiding them",
    "the enemy is building lots of heavy armour, what should I counter with",
    "quick aggressive opening with cheap tanks before the other side gets defences up",
    "I lost my refinery field, how do I recover the economy",
    "opponent sits behind walls and towers, how to crack a turtling player",
    "fighting on a map that is mostly water and islands",
    "short on electricity, buildings are going offline",
    "push through a narrow choke point guarded by artillery",
    "counter a swarm of foot soldiers with flamethrowers and machine guns",
    "defend against submarines and warships harassing the coastline",
    "late game plan when both sides have superweapons charging",
    "scout the enemy base early to see what they are teching into",
    "sneak invisible units behind the enemy lines",
    "hit them before they reach the top technology level",
    "the AI expands fast to a second base, punish the greed",
    "cover a slow column of trucks crossing the map",
    "mission where the player must survive waves of attackers until reinforcements arrive",
    "night-time operation with limited visibility and ambushes",
    "rescue captured scientists from a guarded compound",
    "the player has to get a VIP out before the timer runs out",
    "a bridge must be held against a big armoured assault",
    "snowy level with a blizzard that gets worse over time",
    "a last stand scenario in a city with street fighting",
    "beach landing from boats against fortified positions",
    "give the player a calm moment after an intense fight",
    "teach the player how a new unit works in a safe setting",
    "make the finale tense with a countdown",
    "jungle ambush against a patrol",
    "desert map with long open sightlines for artillery",
    "mass rocket infantry to shoot down helicopters",
    "use engineers to capture enemy buildings",
    "a coordinated attack from two directions at once",
    "hold the middle of the map and deny resources",
    "fake an attack on one side then strike the other",
    "tesla towers keep killing my tanks, how to break them",
    "counter an air heavy army with anti aircraft guns",
    "siege a fortified base with long range rocket launchers",
    "win a big tank battle in the open field",
    "protect the construction yard from a commando",
    "chrono teleport tanks into the enemy base",
    "iron curtain invulnerable push",
    "a nuke is coming, spread out the base",
    "cheap early infantry rush in the first three minutes",
    "behind on money against a stronger economy, how to catch up",
    "the enemy has an ion cannon, what now",
    "escort a convoy through hostile territory",
    "sabotage the enemy power plants with spies",
    "mine the approaches so tanks blow up on the way in",
    "retreat damaged units and repair them before pushing again",
    "raid the harvesters with fast light vehicles",
    "overwhelm the defence with one huge wave",
    "keep steady pressure so the enemy can never expand",
    "build naval superiority to bombard the shore",
    "switch from tanks to aircraft when they build too much anti armour",
    "team game where my ally is being attacked",
    "survive against the hardest computer opponent",
    "encounter with a boss unit that has a lot of health",
    "a branching mission where the player picks the route",
    "airborne troops dropped behind the front line",
)


# --- parent: spawn the pinned child -------------------------------------------------------------


def _sizes(text: str) -> list[int]:
    """``10000,100000`` is two sizes; ``100,000`` (thousands grouped) is one."""
    if re.fullmatch(r"\d{1,3}(,\d{3})+", text.strip()):
        return [_size(text)]
    return [_size(part) for part in text.split(",") if part.strip()]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_retrieval", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", nargs="+", type=_sizes, help="library sizes (default 10000 100000; 10k or 10000,100000 work)"
    )
    parser.add_argument("--quick", action="store_true", help="1,000 skills only (unless --sizes says otherwise)")
    parser.add_argument(
        "--repeats", type=int, default=DEFAULT_REPEATS, help="rounds of the embedding-throughput measurement"
    )
    parser.add_argument("--warmups", type=int, default=DEFAULT_WARMUPS, help="untimed queries before each timed series")
    parser.add_argument(
        "--queries", type=int, default=len(QUERIES), help=f"queries per series (at most {len(QUERIES)})"
    )
    parser.add_argument("--seed", type=int, default=57, help="generator seed")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where retrieval-<size>.json goes")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    return parser


def _args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = _parser()
    args, _unknown = parser.parse_known_args(argv)  # benchmarks.run passes options for others too
    if args.sizes is None:
        args.sizes = list(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    else:
        args.sizes = [size for group in args.sizes for size in group]
    if args.repeats < 1 or args.warmups < 0 or not 1 <= args.queries <= len(QUERIES):
        parser.error(f"--repeats must be at least 1, --warmups at least 0, --queries in 1..{len(QUERIES)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = _args(list(argv) if argv is not None else sys.argv[1:])
    if args.child:
        return _child(args)
    command = [
        sys.executable,
        "-m",
        "benchmarks.bench_retrieval",
        "--child",
        "--sizes",
        *map(str, args.sizes),
        "--repeats",
        str(args.repeats),
        "--warmups",
        str(args.warmups),
        "--queries",
        str(args.queries),
        "--seed",
        str(args.seed),
        "--out",
        str(args.out),
    ]
    env = {
        **os.environ,
        **SINGLE_THREAD,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    sys.stdout.flush()
    return subprocess.call(command, cwd=ROOT, env=env)


# --- child: everything measured, on one core -----------------------------------------------------


def _child(args: argparse.Namespace) -> int:
    pinning = _pin_to_one_core()
    environment = _environment(pinning)
    args.out.mkdir(parents=True, exist_ok=True)
    reports = []
    for size in args.sizes:
        report = run_size(size, args, environment)
        target = args.out / f"retrieval-{size}.json"
        target.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"[retrieval {size:,}] wrote {target}", flush=True)
        reports.append(report)
    print()
    print(render(reports))
    return 0


def run_size(
    size: int, args: argparse.Namespace, environment: dict[str, Any], *, log: Callable[[str], None] = print
) -> dict[str, Any]:
    """Every measurement for a library of ``size`` skills, as a JSON-ready mapping."""
    import numpy as np

    from benchmarks.synthetic import generate_skills
    from skillstudio.retrieval import LocalEmbeddings, Mode, Retriever, embed_library, embed_now
    from skillstudio.retrieval.indexing import BATCH
    from skillstudio.store import Actor, Database, SkillRepository
    from skillstudio.store import embeddings as embeddings_module
    from skillstudio.store.keyword_search import keyword_candidates

    def say(text: str) -> None:
        log(f"[retrieval {size:,}] {text}")
        sys.stdout.flush()

    queries = list(QUERIES[: args.queries])
    report: dict[str, Any] = {
        "benchmark": "retrieval",
        "size": size,
        "config": {
            "repeats": args.repeats,
            "warmups": args.warmups,
            "queries": len(queries),
            "seed": args.seed,
            "k": K,
            "embed_batch": BATCH,
            "filter": list(FILTER),
        },
        "environment": environment,
        "targets": TARGETS,
        "load_before": _load_average(),
    }

    say(f"generating skills (seed {args.seed}) and inserting with create_many x{INSERT_BATCH:,} ...")
    start = time.perf_counter()
    skills = generate_skills(size, args.seed)
    generated = time.perf_counter()
    workdir = Path(tempfile.mkdtemp(prefix=f"skillstudio-bench-retrieval-{size}-"))
    path = workdir / "library.db"
    with Database(path, create=True) as database:
        repository = SkillRepository(database, Actor("benchmark", "system"))
        for offset in range(0, len(skills), INSERT_BATCH):
            repository.create_many(skills[offset : offset + INSERT_BATCH], message="benchmark import")
    report["build"] = {"generate_s": generated - start, "insert_s": time.perf_counter() - generated}
    texts = [skill.description for skill in skills]
    del skills

    database = Database(path)
    try:
        repository = SkillRepository(database, Actor("benchmark", "system"))
        provider = LocalEmbeddings()
        start = time.perf_counter()
        provider.embed(["warm up"])
        report["model_load_s"] = time.perf_counter() - start
        model = provider._load().wordllama  # the WordLlama object itself, for the raw limit

        # 1. throughput, ours vs raw WordLlama, interleaved so drift hits both alike
        say(f"embedding throughput, {args.repeats} round(s) of {len(texts):,} descriptions ...")
        ours_s, raw_s = [], []
        for _ in range(args.repeats):
            start = time.perf_counter()
            for offset in range(0, len(texts), BATCH):
                provider.embed(texts[offset : offset + BATCH])
            ours_s.append(time.perf_counter() - start)
            start = time.perf_counter()
            for offset in range(0, len(texts), BATCH):
                model.embed(texts[offset : offset + BATCH])
            raw_s.append(time.perf_counter() - start)
        report["throughput"] = {
            "descriptions": len(texts),
            "mean_chars": sum(map(len, texts)) / max(len(texts), 1),
            "ours_s": ours_s,
            "raw_s": raw_s,
            "ours_per_s": len(texts) / statistics.median(ours_s),
            "raw_per_s": len(texts) / statistics.median(raw_s),
        }

        # 2. embed_library end to end, and the bare-SQLite write of the same blobs
        say("embed_library (embedding + SQLite writes) ...")
        start = time.perf_counter()
        *_, progress = embed_library(repository, provider)  # run to the end: the last report has the totals
        embed_s = time.perf_counter() - start
        tables = ["skill_embeddings"]
        label_texts: list[str] = []
        with sqlite3.connect(path) as bare:
            if bare.execute("SELECT 1 FROM sqlite_master WHERE name = 'studio_label_embeddings'").fetchone():
                tables.append("studio_label_embeddings")  # name + tags vectors, if this version has them
                label_of = getattr(embeddings_module, "label_text", None)
                if label_of is not None:
                    label_texts = [label_of(name, tags) for name, tags in bare.execute("SELECT name, tags FROM skills")]
            blobs = {
                table: bare.execute(f"SELECT skill_id, embedding, model_id FROM {table} ORDER BY skill_id").fetchall()
                for table in tables
            }
        write_s = sum(_bare_write(workdir / f"plain-{table}.db", rows, BATCH) for table, rows in blobs.items())
        start = time.perf_counter()
        for offset in range(0, len(label_texts), BATCH):
            model.embed(label_texts[offset : offset + BATCH])
        raw_labels_s = time.perf_counter() - start
        report["embed_library"] = {
            "seconds": embed_s,
            "stored": progress.done,
            "skipped": len(progress.skipped),
            "vectors": {table: len(rows) for table, rows in blobs.items()},
            "per_s": progress.done / embed_s if embed_s else None,
            "bare_write_s": write_s,
            "raw_embed_labels_s": raw_labels_s,
            "raw_embed_plus_bare_write_s": statistics.median(raw_s) + raw_labels_s + write_s,
        }
        del blobs

        # query vectors, computed once: the search figures are only the search
        query_vectors = provider.embed(queries)
        single = []
        for query in queries:
            begin = time.perf_counter()
            provider.embed([query])
            single.append(time.perf_counter() - begin)

        # 5. index load (the first search) and its memory; the bare load of the same vectors
        say("index load, semantic top-10 ...")
        retriever = Retriever(repository, provider)
        index = retriever.index()
        assert index is not None
        start = time.perf_counter()
        index.similarities(query_vectors[0]).top(K)
        load_s = time.perf_counter() - start
        matrix = index._matrix
        start = time.perf_counter()
        plain = _bare_load(path, provider.model_id, provider.dimensions)
        plain_load_s = time.perf_counter() - start
        with sqlite3.connect(path) as bare:
            fields = dict(
                bare.execute(
                    "SELECT e.skill_id, s.domain || '/' || s.game_module FROM skill_embeddings e JOIN skills s ON s.id = e.skill_id"
                    " WHERE e.model_id = ?",
                    (provider.model_id,),
                ).fetchall()
            )
            plain_ids = [
                row[0]
                for row in bare.execute(
                    "SELECT skill_id FROM skill_embeddings WHERE model_id = ?", (provider.model_id,)
                )
            ]
        plain_rows = np.array([n for n, sid in enumerate(plain_ids) if fields[sid] == "/".join(FILTER)], dtype=np.int64)
        report["index"] = {
            "load_s": load_s,
            "vectors": int(matrix.shape[0]),
            "live": len(index),
            "matrix_bytes": int(matrix.nbytes),
            "bare_load_s": plain_load_s,
            "invalid": len(index.invalid),
        }

        # 3. semantic top-10 with the index in memory, and bare numpy on the same shape
        def semantic(domain: str | None, module: str | None) -> Callable[[int], Any]:
            return lambda n: index.similarities(query_vectors[n], domain=domain, game_module=module).top(K)

        def plain_top(rows: Any, k: int) -> Callable[[int], Any]:
            def run(n: int) -> Any:
                scores = plain @ query_vectors[n] if rows is None else (plain @ query_vectors[n])[rows]
                part = np.argpartition(-scores, k - 1)[:k]
                return part[np.argsort(-scores[part])]

            return run

        query_vectors = np.ascontiguousarray(
            query_vectors / np.linalg.norm(query_vectors, axis=1, keepdims=True), np.float32
        )
        n_queries, warm = len(queries), args.warmups
        report["semantic"] = {
            "all": _series(semantic(None, None), n_queries, warm, len),
            "filtered": _series(semantic(*FILTER), n_queries, warm, len),
            "plain_all": _series(plain_top(None, K), n_queries, warm, len),
            "plain_filtered": _series(plain_top(plain_rows, min(K, max(len(plain_rows), 1))), n_queries, warm, len)
            if len(plain_rows)
            else None,
            "filtered_rows": len(plain_rows),
            "query_embedding": _summary(single),
        }

        # 4. whole retrieve + load of the top K, and bare FTS5 + numpy
        say("retrieve (hybrid, fts) ...")
        terms = {
            (n, flt): keyword_candidates(database, query, domain=flt[0], game_module=flt[1], limit=1).terms
            for n, query in enumerate(queries)
            for flt in ((None, None), FILTER)
        }
        bare = sqlite3.connect(path)
        try:

            def whole(mode: Any, domain: str | None, module: str | None) -> Callable[[int], Any]:
                def run(n: int) -> Any:
                    result = retriever.retrieve(queries[n], domain=domain, game_module=module, k=K, mode=mode)
                    loaded = retriever.load(result)
                    if result.used is not mode:
                        raise RuntimeError(f"{mode} fell back to {result.used}: {result.notes}")
                    return loaded

                return run

            def bare_fts(n: int, flt: tuple[str | None, str | None]) -> list[int]:
                words = terms[(n, flt)]
                if not words:
                    return []
                match = " OR ".join(f'"{word}"*' for word in words)
                if flt[0] is None:
                    sql, params = (
                        "SELECT rowid FROM skills_fts WHERE skills_fts MATCH ? ORDER BY rank LIMIT ?",
                        (match, PLAIN_CANDIDATES),
                    )
                else:
                    sql = (
                        "SELECT f.rowid FROM skills_fts f JOIN skills s ON s.rowid = f.rowid WHERE skills_fts MATCH ?"
                        " AND s.domain = ? AND s.game_module = ? ORDER BY f.rank LIMIT ?"
                    )
                    params = (match, flt[0], flt[1], PLAIN_CANDIDATES)
                return [row[0] for row in bare.execute(sql, params)]

            plain_200 = plain_top(None, min(PLAIN_CANDIDATES, plain.shape[0]))
            plain_200_filtered = (
                plain_top(plain_rows, min(PLAIN_CANDIDATES, len(plain_rows))) if len(plain_rows) else None
            )

            def plain_hybrid(flt: tuple[str | None, str | None]) -> Callable[[int], Any]:
                search = plain_200 if flt[0] is None else plain_200_filtered
                return lambda n: (bare_fts(n, flt), search(n) if search is not None else None)

            hybrid_results = [retriever.retrieve(q, k=K, mode=Mode.HYBRID) for q in queries]
            report["retrieve"] = {
                "hybrid_all": _series(whole(Mode.HYBRID, None, None), n_queries, warm, len),
                "hybrid_filtered": _series(whole(Mode.HYBRID, *FILTER), n_queries, warm, len),
                "fts_all": _series(whole(Mode.FTS, None, None), n_queries, warm, len),
                "fts_filtered": _series(whole(Mode.FTS, *FILTER), n_queries, warm, len),
                # Inside retrieve: its hits are read whole, to know what each serves.
                "load_only": _series(
                    lambda n: retriever.repository.get_many_valid(hybrid_results[n].ids)[0], n_queries, warm, len
                ),
                "plain_hybrid_all": _series(plain_hybrid((None, None)), n_queries, warm, lambda r: len(r[0])),
                "plain_hybrid_filtered": _series(plain_hybrid(FILTER), n_queries, warm, lambda r: len(r[0])),
                "plain_fts_all": _series(lambda n: bare_fts(n, (None, None)), n_queries, warm, len),
                "plain_fts_filtered": _series(lambda n: bare_fts(n, FILTER), n_queries, warm, len),
            }
        finally:
            bare.close()

        # catching up after one edit: update a description, re-embed it, search again
        say("one edit: update, re-embed, next search ...")
        edited_id = plain_ids[len(plain_ids) // 2]
        skill = repository.get(edited_id)
        row = index._row[edited_id]
        old_vector = index._matrix[row].copy()
        start = time.perf_counter()
        repository.update(replace(skill, description=skill.description + " Also works against naval harassment."))
        update_s = time.perf_counter() - start
        start = time.perf_counter()
        message = embed_now(repository, provider, [edited_id])
        reembed_s = time.perf_counter() - start
        before = index._matrix
        start = time.perf_counter()
        index.similarities(query_vectors[0]).top(K)
        catch_up_s = time.perf_counter() - start
        after = index._matrix
        current = not bool(np.allclose(after[index._row[edited_id]], old_vector))
        report["edit"] = {
            "update_s": update_s,
            "reembed_s": reembed_s,
            "next_search_s": catch_up_s,
            "reloaded": after is not before,
            "row_updated": current,
            "embed_message": message,
        }
    finally:
        database.close()
        for leftover in sorted(workdir.iterdir()):
            leftover.unlink()
        workdir.rmdir()
    report["load_after"] = _load_average()
    return report


def _bare_write(path: Path, rows: list[tuple[str, bytes, str]], batch: int) -> float:
    """Seconds to ``executemany`` the same blobs into a bare table, one transaction per batch,
    with the library's journal and sync settings."""
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = NORMAL")
        connection.execute(
            "CREATE TABLE skill_embeddings (skill_id TEXT PRIMARY KEY, embedding BLOB NOT NULL, model_id TEXT NOT NULL)"
        )
        start = time.perf_counter()
        for offset in range(0, len(rows), batch):
            connection.execute("BEGIN")
            connection.executemany("INSERT INTO skill_embeddings VALUES (?, ?, ?)", rows[offset : offset + batch])
            connection.execute("COMMIT")
        return time.perf_counter() - start
    finally:
        connection.close()


def _bare_load(path: Path, model_id: str, dimensions: int) -> Any:
    """Every vector of the model as one normalised float32 matrix: one SELECT, one frombuffer."""
    import numpy as np

    connection = sqlite3.connect(path)
    try:
        blobs = [
            row[0]
            for row in connection.execute("SELECT embedding FROM skill_embeddings WHERE model_id = ?", (model_id,))
        ]
    finally:
        connection.close()
    matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(-1, dimensions)
    return np.ascontiguousarray(matrix / np.linalg.norm(matrix, axis=1, keepdims=True), dtype=np.float32)


def _series(fn: Callable[[int], Any], count: int, warmups: int, size: Callable[[Any], int]) -> dict[str, Any]:
    """One call per query (query n is the argument), ``warmups`` untimed calls first."""
    for n in range(warmups):
        fn(n % count)
    samples, sizes = [], []
    for n in range(count):
        start = time.perf_counter()
        result = fn(n)
        samples.append(time.perf_counter() - start)
        sizes.append(size(result))
    return {**_summary(samples), "mean_result": statistics.fmean(sizes)}


def _summary(samples: Sequence[float]) -> dict[str, Any]:
    return {
        "median_ms": statistics.median(samples) * 1000,
        "p95_ms": _percentile(samples, 95) * 1000,
        "max_ms": max(samples) * 1000,
        "repeats": len(samples),
        "samples_ms": [sample * 1000 for sample in samples],
    }


def _percentile(samples: Sequence[float], pct: float) -> float:
    """Linear-interpolated percentile (as bench_store)."""
    if len(samples) == 1:
        return samples[0]
    return statistics.quantiles(samples, n=100, method="inclusive")[int(pct) - 1]


def _load_average() -> list[float] | None:
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def _environment(pinning: str) -> dict[str, Any]:
    import numpy as np

    try:
        from importlib.metadata import version

        wordllama = version("wordllama")
    except Exception:
        wordllama = None
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "sqlite": sqlite3.sqlite_version,
        "wordllama": wordllama,
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "pinning": pinning,
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
        "commit": _git("rev-parse", "--short", "HEAD"),
        "modified": bool(_git("status", "--porcelain", "--", "skillstudio")),
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], check=False, cwd=ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


# --- output ---------------------------------------------------------------------------------------


def _ms(ms: float) -> str:
    if ms < 10:
        return f"{ms:.2f} ms"
    if ms < 1000:
        return f"{ms:.1f} ms"
    return f"{ms / 1000:.2f} s"


def _mp(series: dict[str, Any] | None) -> str:
    if series is None:
        return "-"
    return f"{_ms(series['median_ms'])} / {_ms(series['p95_ms'])}"


def _verdict(ok: bool, size: int) -> str:
    """Targets are set for 100k skills; a smaller library only shows the trend."""
    if size < 100_000:
        return "met" if ok else "not met"
    return "met" if ok else "MISSED"


def render(reports: Sequence[dict[str, Any]]) -> str:
    """One row per figure and library size: ours, the plain limit, the target."""
    first = reports[0]
    config, env = first["config"], first["environment"]
    lines = [
        (
            f"SkillStudio retrieval benchmark: sizes {', '.join(format(r['size'], ',') for r in reports)} skills; "
            f"{config['queries']} paraphrased queries, {config['warmups']} warmups; k={config['k']}; "
            f"filter = {'+'.join(config['filter'])}; seed {config['seed']}"
        ),
        f"Python {env['python']}, numpy {env['numpy']}, SQLite {env['sqlite']}, wordllama {env['wordllama']}, "
        f"{env['platform']}, {env['cpus']} CPUs, one core ({env['pinning']}, BLAS/OMP/Rayon threads "
        f"{env['blas_threads']}), commit {env['commit']}" + (" (skillstudio/ modified)" if env["modified"] else ""),
        "load average (1/5/15 min) before/after each size: "
        + "; ".join(f"{r['size']:,}: {r['load_before']} -> {r['load_after']}" for r in reports),
    ]
    if any(r["load_before"] and r["load_before"][0] > 0.8 for r in reports):
        lines.append("NOTE: another process was busy when a size started (load above 0.8); figures may be noisy.")
    lines.append("")
    rows: list[tuple[str, str, str, str, str]] = [
        ("figure", "skills", "SkillStudio", "plain limit (same run)", "target")
    ]

    def add(label: str, report: dict[str, Any], ours: str, plain: str, target: str = "") -> None:
        rows.append((label, f"{report['size']:,}", ours, plain, target))

    t = TARGETS
    for r in reports:
        x = r["throughput"]
        ok = x["ours_per_s"] >= t["throughput"]
        add(
            "1 embed throughput, 1 core (desc/s)",
            r,
            f"{x['ours_per_s']:,.0f}/s",
            f"{x['raw_per_s']:,.0f}/s raw WordLlama embed()",
            f">= {t['throughput']:,.0f}/s: {_verdict(ok, r['size'])}",
        )
    for r in reports:
        x = r["embed_library"]
        ok = x["seconds"] <= t["embed_library"]
        add(
            "2 embed_library, whole library",
            r,
            f"{x['seconds']:.2f} s ({x['per_s']:,.0f}/s)",
            f"bare executemany {x['bare_write_s']:.2f} s; raw embed + it {x['raw_embed_plus_bare_write_s']:.2f} s"
            + (" (desc + label vectors)" if len(x.get("vectors", {})) > 1 else ""),
            f"<= {t['embed_library']:.0f} s at 100k: {_verdict(ok, r['size'])}",
        )
    for key, label, plain_key in (
        ("all", "3 semantic top-10, no filter", "plain_all"),
        ("filtered", "3 semantic top-10, ai+ra1", "plain_filtered"),
    ):
        for r in reports:
            x = r["semantic"][key]
            ok = x["median_ms"] <= t["semantic"]
            add(
                label + " (med/p95)",
                r,
                _mp(x),
                f"{_mp(r['semantic'][plain_key])} matrix@q + argpartition",
                f"<= {t['semantic']:.0f} ms: {_verdict(ok, r['size'])}",
            )
    for r in reports:
        add("  query embedding, one text", r, _mp(r["semantic"]["query_embedding"]), "", "")
    for key, label, plain_key, plain_text in (
        ("hybrid_all", "4 retrieve hybrid + load, no filter", "plain_hybrid_all", "bare FTS5 LIMIT 200 + numpy"),
        ("hybrid_filtered", "4 retrieve hybrid + load, ai+ra1", "plain_hybrid_filtered", "bare FTS5 LIMIT 200 + numpy"),
        ("fts_all", "4 retrieve fts + load, no filter", "plain_fts_all", "bare FTS5 LIMIT 200"),
        ("fts_filtered", "4 retrieve fts + load, ai+ra1", "plain_fts_filtered", "bare FTS5 LIMIT 200"),
    ):
        for r in reports:
            x = r["retrieve"][key]
            ok = x["median_ms"] <= t["retrieve"]
            add(
                label + " (med/p95)",
                r,
                _mp(x),
                f"{_mp(r['retrieve'][plain_key])} {plain_text}",
                f"<= {t['retrieve']:.0f} ms: {_verdict(ok, r['size'])}",
            )
    for r in reports:
        add("  of which reading the top 10 whole", r, _mp(r["retrieve"]["load_only"]), "", "")
    for r in reports:
        x = r["index"]
        add(
            "5 index load (first search)",
            r,
            f"{x['load_s'] * 1000:,.0f} ms, {x['matrix_bytes'] / 2**20:.1f} MB matrix",
            f"{x['bare_load_s'] * 1000:,.0f} ms bare SELECT + frombuffer",
            f"{x['live']:,} live vectors",
        )
    for r in reports:
        x = r["edit"]
        add(
            "  one edit: update / re-embed / next search",
            r,
            f"{_ms(x['update_s'] * 1000)} / {_ms(x['reembed_s'] * 1000)} / {_ms(x['next_search_s'] * 1000)}",
            f"search median {_ms(r['semantic']['all']['median_ms'])}",
            ("RELOADED everything" if x["reloaded"] else "patched in place")
            + (", row updated" if x["row_updated"] else ", ROW NOT UPDATED"),
        )
    for r in reports:
        b = r["build"]
        add("  (build, not timed above)", r, f"generate {b['generate_s']:.1f} s, insert {b['insert_s']:.1f} s", "", "")
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines)


if __name__ == "__main__":
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
