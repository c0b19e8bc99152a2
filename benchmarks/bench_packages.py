"""Package benchmark: export and import time for a Workshop package of N skills (default 10,000).

``python -m benchmarks.bench_packages [--quick] [--sizes 10000] [--repeats 3] [--out DIR]``, or
through ``python -m benchmarks.run``. Measures, per size:

* ``export``: read the selection from a library, run the privacy check on every skill, write the
  ``.icpkg`` bytes (and checks two exports are byte-identical);
* ``read``: validate the whole package (ZIP checks, checksums, manifest, every skill);
* ``dry-run``: what ``import --dry-run`` does into an empty library: read, then plan;
* ``import``: read + plan + apply into an empty library, one transaction;
* ``reimport``: the same package again (everything skipped as unchanged).

Beside each figure, its plain-Python limit measured in the same run (``sqlite3``, ``json``,
``zipfile``, ``hashlib`` and nothing else), and the goal of issue 17 as a multiple of it:

* export limit: every D057 row (``SELECT *``) as JSON into a deflated ZIP with a sha256
  manifest (goal: export <= 2x);
* checked-read limit: unzip every entry, check its sha256 against the manifest, parse the JSON
  and the YAML manifest with libyaml (goal: ``read`` and ``dry-run`` <= 2x);
* import limit: the checked read, then one ``executemany`` into D057's ``skills`` and
  ``skill_compositions`` of a bare D057 schema, then an FTS rebuild (goals: import into an
  empty library <= 3x, re-import of the unchanged package <= 2x).

The limits pause Python's cyclic collector, as export and import do (``gc_paused``): with it
running, its passes over the objects they make cost a plain read 25% more at 10k, and more
than the whole validating read at 100k, so a limit would not be one.

It reports; it never asserts a time.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sqlite3
import statistics
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from benchmarks.synthetic import DEFAULT_SEED, generate_skills
from skillstudio.gc_pause import gc_paused
from skillstudio.model import ReviewState
from skillstudio.packages.errors import PackageError
from skillstudio.packages.export import export_selection, load_selection
from skillstudio.packages.icpkg import PackageMeta, read_package
from skillstudio.packages.importer import ImportPlan, apply_plan, incoming_from_package, plan_import
from skillstudio.store import Actor, Database, SkillQuery, SkillRepository
from skillstudio.store.migrations import D057_SKILL_COLUMNS, d057_statements

DEFAULT_OUT = Path(__file__).resolve().parent / "out"
DEFAULT_SIZES = (10_000,)
QUICK_SIZES = (1_000,)
META = PackageMeta("bench-library", "bench", "1.0.0", description="synthetic benchmark library")
ACTOR = Actor("benchmark", "system")
# Each figure's goal as a multiple of its limit (issue 17): (figure, limit, at most x limit).
GOALS = (
    ("export", "export", 2.0),
    ("read", "read", 2.0),
    ("dry-run", "read", 2.0),
    ("import", "import", 3.0),
    ("reimport", "import", 2.0),
)
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _size(text: str) -> int:
    return int(text.lower().replace("k", "000").replace("_", ""))


def _timed(action: Callable[[], Any], repeats: int) -> tuple[list[float], Any]:
    samples, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = action()
        samples.append(time.perf_counter() - start)
    return samples, result


def _summary(samples: list[float]) -> dict[str, Any]:
    return {"median_s": statistics.median(samples), "min_s": min(samples), "samples_s": samples}


def _plan_file(repository: SkillRepository, path: Path) -> ImportPlan:
    package = read_package(path)
    incoming, origin = incoming_from_package(package)
    return plan_import(repository, incoming, origin=origin, source=path.name)


def _import_file(repository: SkillRepository, path: Path) -> ImportPlan:
    return apply_plan(repository, _plan_file(repository, path))


@gc_paused()
def plain_export(library: Path) -> bytes:
    """The export limit: every D057 row as JSON into a deflated ZIP with a sha256 manifest."""
    files: dict[str, bytes] = {}
    connection = sqlite3.connect(library)
    connection.row_factory = sqlite3.Row
    for row in connection.execute("SELECT * FROM skills ORDER BY id"):
        files[f"skills/{row['id']}.json"] = json.dumps(dict(row), ensure_ascii=False).encode("utf-8")
    connection.close()
    manifest = {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", json.dumps(manifest))
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


@gc_paused()
def plain_checked_read(path: Path) -> list[dict[str, Any]]:
    """The checked-read limit: unzip, sha256 of every entry against the manifest, parse the
    manifest (libyaml) and every skill's JSON."""
    with zipfile.ZipFile(path) as archive:
        manifest = yaml.load(archive.read("manifest.yaml"), Loader=_YAML_LOADER)
        listed = manifest["package"]["files"]
        documents = []
        for name in archive.namelist():
            if name == "manifest.yaml":
                continue
            data = archive.read(name)
            if hashlib.sha256(data).hexdigest() != listed[name]["sha256"]:
                raise ValueError(f"{name}: checksum mismatch")
            if name.startswith("skills/"):
                documents.append(json.loads(data))
    return documents


@gc_paused()
def plain_import(path: Path, library: Path) -> int:
    """The import limit: the checked read, one executemany into D057's tables of an empty bare
    D057 schema, an FTS rebuild."""
    documents = plain_checked_read(path)
    rows = []
    for document in documents:
        row = {**document, **document["provenance"], **document["quality"]}
        row["body_json"] = json.dumps(document["body"], ensure_ascii=False)
        row["tags"] = json.dumps(document["tags"], ensure_ascii=False)
        rows.append(tuple(row.get(column) for column in D057_SKILL_COLUMNS))
    pairs = {tuple(sorted((d["id"], p))) for d in documents for p in d.get("composable_with", [])}
    connection = sqlite3.connect(library)
    with connection:
        for statement in d057_statements().values():
            connection.execute(statement)
    with connection:
        marks = ", ".join("?" * len(D057_SKILL_COLUMNS))
        connection.executemany(f"INSERT INTO skills ({', '.join(D057_SKILL_COLUMNS)}) VALUES ({marks})", rows)
        connection.executemany("INSERT INTO skill_compositions (skill_a, skill_b) VALUES (?, ?)", sorted(pairs))
        connection.execute("INSERT INTO skills_fts(skills_fts) VALUES ('rebuild')")
    connection.close()
    return len(rows)


def run_size(size: int, repeats: int, seed: int, folder: Path) -> dict[str, Any]:
    skills = generate_skills(size, seed=seed)
    source_path = folder / f"source-{size}.db"
    exported = folder / f"export-{size}.icpkg"
    with Database(source_path, create=True) as database:
        repository = SkillRepository(database, ACTOR)
        repository.create_many(skills)
        # The figures are those of a process doing only that step (the CLI): the benchmark's
        # own objects stay out of the collector's walks between its steps.
        del skills
        ids = repository.query(SkillQuery()).ids
        # Rejected skills are kept but never exported (issue 8): the package holds the rest.
        rejected = repository.query(SkillQuery(review_states=(ReviewState.REJECTED,))).total

        def export() -> bytes:  # what ``export --redact`` does, unsigned (no key is made)
            export_selection(load_selection(repository, ids), META, exported, redact=True, sign=False)
            return exported.read_bytes()

        try:
            export_samples, data = _timed(export, repeats)
        except PackageError as error:  # more entries than a package may hold (MAX_ENTRIES)
            return {"size": size, "refused": str(error).splitlines()[0]}
        identical = export() == data
        findings = len(load_selection(repository, ids[:1000]).findings)
    export_limit, _ = _timed(partial(plain_export, source_path), repeats)
    package_path = folder / f"bench-{size}.icpkg"
    package_path.write_bytes(data)

    report: dict[str, Any] = {
        "size": size,
        "package_bytes": len(data),
        "deterministic": identical,
        "privacy_findings_in_first_1000": findings,
        "rejected_left_out": rejected,
        "export": _summary(export_samples),
        "limits": {"export": _summary(export_limit)},
    }
    try:
        read_samples, skills_in_package = _timed(lambda: len(read_package(package_path).skills), repeats)
    except PackageError as error:  # e.g. more entries than a package may hold (MAX_ENTRIES)
        return {**report, "refused": str(error).splitlines()[0]}
    read_limit, _ = _timed(partial(plain_checked_read, package_path), repeats)
    import_limit: list[float] = []
    for attempt in range(repeats):
        import_limit += _timed(partial(plain_import, package_path, folder / f"plain-{size}-{attempt}.db"), 1)[0]
    import_samples: list[float] = []
    reimport_samples: list[float] = []
    dry_run_samples: list[float] = []
    added = skipped = 0
    for attempt in range(repeats):
        target = folder / f"target-{size}-{attempt}.db"
        with Database(target, create=True) as database:
            repository = SkillRepository(database, ACTOR)
            dry_run_samples += _timed(partial(_plan_file, repository, package_path), 1)[0]

            do_import = partial(_import_file, repository, package_path)
            samples, plan = _timed(do_import, 1)
            import_samples += samples
            added = plan.count("add")
            del plan
            samples, plan = _timed(do_import, 1)
            reimport_samples += samples
            skipped = plan.count("skip")
            del plan
    return {
        **report,
        "skills_in_package": skills_in_package,
        "added": added,
        "skipped_on_reimport": skipped,
        "read": _summary(read_samples),
        "dry-run": _summary(dry_run_samples),
        "import": _summary(import_samples),
        "reimport": _summary(reimport_samples),
        "limits": {
            "export": _summary(export_limit),
            "read": _summary(read_limit),
            "import": _summary(import_limit),
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_packages", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=_size, default=None)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_SIZES[0]} skills")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args, _unknown = parser.parse_known_args(argv)  # benchmarks.run passes options for others too
    sizes = args.sizes or (QUICK_SIZES if args.quick else DEFAULT_SIZES)
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"{'skills':>8} {'package':>9}  {'figure':<9} {'median':>8} {'limit':>8} {'x limit':>8} {'goal':>6}")
    for size in sizes:
        with tempfile.TemporaryDirectory() as folder:
            report = run_size(size, max(args.repeats, 1), args.seed, Path(folder))
        (args.out / f"packages-{size}.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
        package = f"{report['package_bytes'] / 1e6:>7.1f}MB" if "package_bytes" in report else f"{'-':>9}"
        for figure, limit_name, goal in GOALS:
            if figure not in report:
                print(f"{size:>8} {package}  {figure:<9} refused: {report['refused']}")
                continue
            seconds = report[figure]["median_s"]
            limit = report["limits"][limit_name]["median_s"]
            print(
                f"{size:>8} {package}  {figure:<9} {seconds:>7.2f}s {limit:>7.2f}s "
                f"{seconds / limit:>7.1f}x {goal:>5.0f}x"
            )
        if "deterministic" in report:
            print(f"{'':>8} deterministic: {report['deterministic']}")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
