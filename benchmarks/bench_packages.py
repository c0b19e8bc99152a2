"""Package benchmark: export and import time for a Workshop package of N skills (default 10,000).

``python -m benchmarks.bench_packages [--quick] [--sizes 10000] [--repeats 3] [--out DIR]``, or
through ``python -m benchmarks.run``. Measures, per size:

* ``export``: read the selection from a library, run the privacy check on every skill, write the
  ``.icpkg`` bytes (and checks two exports are byte-identical);
* ``read``: validate the whole package (ZIP checks, checksums, manifest, every skill);
* ``import``: read + plan + apply into an empty library, one transaction;
* ``reimport``: the same package again (everything skipped as unchanged).

It reports; it never asserts a time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.synthetic import DEFAULT_SEED, generate_skills
from skillstudio.model import ReviewState
from skillstudio.packages.export import load_selection
from skillstudio.packages.icpkg import PackageMeta, export_package, read_package
from skillstudio.packages.importer import ImportPlan, apply_plan, incoming_from_package, plan_import
from skillstudio.packages.privacy import redact_skill
from skillstudio.store import Actor, Database, SkillQuery, SkillRepository

DEFAULT_OUT = Path(__file__).resolve().parent / "out"
DEFAULT_SIZES = (10_000,)
QUICK_SIZES = (1_000,)
META = PackageMeta("bench-library", "bench", "1.0.0", description="synthetic benchmark library")
ACTOR = Actor("benchmark", "system")


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


def _import_file(repository: SkillRepository, path: Path) -> ImportPlan:
    package = read_package(path)
    incoming, origin = incoming_from_package(package)
    return apply_plan(repository, plan_import(repository, incoming, origin=origin, source=path.name))


def run_size(size: int, repeats: int, seed: int, folder: Path) -> dict[str, Any]:
    skills = generate_skills(size, seed=seed)
    source_path = folder / f"source-{size}.db"
    with Database(source_path, create=True) as database:
        repository = SkillRepository(database, ACTOR)
        repository.create_many(skills)
        ids = repository.query(SkillQuery()).ids
        # Rejected skills are kept but never exported (issue 8): the package holds the rest.
        rejected = repository.query(SkillQuery(review_states=(ReviewState.REJECTED,))).total

        def export() -> bytes:
            preview = load_selection(repository, ids)
            flagged = {finding.skill_id for finding in preview.findings}
            selected = [redact_skill(s) if s.id in flagged else s for s in preview.skills]
            return export_package(selected, META, extras=preview.extras)

        export_samples, data = _timed(export, repeats)
        identical = export() == data
        findings = len(load_selection(repository, ids[:1000]).findings)
    package_path = folder / f"bench-{size}.icpkg"
    package_path.write_bytes(data)

    read_samples, package = _timed(lambda: read_package(package_path), repeats)
    import_samples: list[float] = []
    reimport_samples: list[float] = []
    added = skipped = 0
    for attempt in range(repeats):
        target = folder / f"target-{size}-{attempt}.db"
        with Database(target, create=True) as database:
            repository = SkillRepository(database, ACTOR)

            do_import = partial(_import_file, repository, package_path)
            samples, plan = _timed(do_import, 1)
            import_samples += samples
            added = plan.count("add")
            samples, plan = _timed(do_import, 1)
            reimport_samples += samples
            skipped = plan.count("skip")
    return {
        "size": size,
        "package_bytes": len(data),
        "deterministic": identical,
        "privacy_findings_in_first_1000": findings,
        "skills_in_package": len(package.skills),
        "rejected_left_out": rejected,
        "added": added,
        "skipped_on_reimport": skipped,
        "export": _summary(export_samples),
        "read": _summary(read_samples),
        "import": _summary(import_samples),
        "reimport": _summary(reimport_samples),
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
    print(f"{'skills':>8} {'package':>10} {'export':>9} {'read':>9} {'import':>9} {'reimport':>9}  deterministic")
    for size in sizes:
        with tempfile.TemporaryDirectory() as folder:
            report = run_size(size, max(args.repeats, 1), args.seed, Path(folder))
        (args.out / f"packages-{size}.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
        print(
            f"{size:>8} {report['package_bytes'] / 1e6:>8.1f}MB {report['export']['median_s']:>8.2f}s "
            f"{report['read']['median_s']:>8.2f}s {report['import']['median_s']:>8.2f}s "
            f"{report['reimport']['median_s']:>8.2f}s  {report['deterministic']}"
        )
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
