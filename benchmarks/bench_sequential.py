"""Games saved by ``verify --until-decided`` against a fixed number of games per skill.

Run it with ``python -m benchmarks.bench_sequential [--quick] [--sizes 1000] [--max-games 200]
[--delta 0.1]`` or through ``python -m benchmarks.run``. It measures and reports; it never fails.

For the bundled sample library and for synthetic libraries (``benchmarks.synthetic``), every AI
skill the built-in engine can play (StrategicPattern bodies of a module it has) is verified
twice against IC Default Hard, each time on a fresh copy of the library: once with a fixed
``--max-games`` games per skill, once ``--until-decided`` with at most that many. The report
gives the games each played, the games saved, and how often the sequential decision agrees with
the side of the bar the fixed-N win rate falls on (skills the test left undecided, and fixed-N
rates inside the indifference zone bar +/- delta, are counted apart: either answer is right
there).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = Path(__file__).resolve().parent / "out"
DEFAULT_SIZES = (1_000,)
QUICK_SIZES = (200,)


def _size(text: str) -> int:
    text = text.strip().lower().replace("_", "").replace(",", "")
    return int(float(text[:-1]) * 1000) if text.endswith("k") else int(text)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_sequential", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", type=_size, help="synthetic library sizes (default 1000)")
    parser.add_argument("--quick", action="store_true", help="a 200-skill synthetic library")
    parser.add_argument("--no-sample", action="store_true", help="leave out the bundled sample library")
    parser.add_argument("--max-games", type=int, default=200, help="the fixed N, and the sequential cap (default 200)")
    parser.add_argument("--round", type=int, default=10, help="games per round of the sequential run (default 10)")
    parser.add_argument("--delta", type=float, default=0.10, help="the indifference margin (default 0.10)")
    parser.add_argument("--opponent", default="IC Default Hard")
    parser.add_argument("--seed", type=int, default=57)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where sequential-<name>.json goes")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args, _unknown = _parser().parse_known_args(list(argv) if argv is not None else sys.argv[1:])
    sys.path.insert(0, str(ROOT))
    libraries: list[tuple[str, Any]] = [] if args.no_sample else [("sample", None)]
    libraries += [
        (f"synthetic-{size}", size) for size in (args.sizes or (QUICK_SIZES if args.quick else DEFAULT_SIZES))
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    for name, size in libraries:
        report = run(name, size, args)
        print(render(report))
        (args.out / f"sequential-{name}.json").write_text(json.dumps(report, indent=2))
    return 0


def _library(path: Path, size: int | None) -> None:
    from skillstudio.library import create_library
    from skillstudio.store import Actor, SkillRepository

    if size is None:
        create_library(path, sample=True).close()
        return
    from benchmarks.synthetic import generate_skills

    with create_library(path) as database:
        SkillRepository(database, Actor("bench")).create_many(generate_skills(size))


def _playable(database: Any) -> list[Any]:
    from skillstudio.engine import available_modules
    from skillstudio.model import BodyKind, Domain
    from skillstudio.store import SkillQuery, SkillRepository

    repository = SkillRepository(database)
    modules = set(available_modules())
    skills, _bad = repository.get_many_valid(list(repository.query(SkillQuery(domains=(Domain.AI_STRATEGY,))).ids))
    return [s for s in skills if s.body_kind is BodyKind.STRATEGIC_PATTERN and s.provenance.game_module in modules]


def run(name: str, size: int | None, args: argparse.Namespace) -> dict[str, Any]:
    from skillstudio.store import Database
    from skillstudio.store.paired_runs import PairedRuns
    from skillstudio.store.runs import RunStore
    from skillstudio.verification import sequential
    from skillstudio.verification.runner import collect, run_verification, start_run

    report: dict[str, Any] = {"library": name, "max_games": args.max_games, "round_games": args.round}
    report.update({"delta": args.delta, "alpha": sequential.DEFAULT_ALPHA, "beta": sequential.DEFAULT_BETA})
    with tempfile.TemporaryDirectory() as folder:
        counts: dict[str, dict[str, Any]] = {}
        decisions: dict[str, Any] = {}
        for mode in ("fixed", "sequential"):
            path = Path(folder) / f"{mode}.db"
            _library(path, size)
            with Database(path) as database:
                skills = _playable(database)
                options = sequential.options(delta=args.delta) if mode == "sequential" else None
                run_id = start_run(
                    database,
                    skills,
                    opponent=args.opponent,
                    games=args.max_games,
                    seed=args.seed,
                    chunk_games=args.round if mode == "sequential" else 20,
                    options=options,
                )
                started = time.perf_counter()
                collect(run_verification(database, run_id))
                elapsed = time.perf_counter() - started
                counts[mode] = RunStore(database).counts(run_id)
                report[f"{mode}_seconds"] = round(elapsed, 2)
                if mode == "sequential":
                    decisions = PairedRuns(database).decisions(run_id)
        report["skills"] = len(counts["fixed"])
        report["fixed_games"] = sum(c.played for c in counts["fixed"].values())
        report["sequential_games"] = sum(c.played for c in counts["sequential"].values())
        report["games_saved"] = report["fixed_games"] - report["sequential_games"]
        report["saved_share"] = round(report["games_saved"] / max(1, report["fixed_games"]), 4)
        tally = {"above": 0, "below": 0, "undecided": 0}
        agree = disagree = zone = 0
        per_bar: dict[str, list[int]] = {}
        for skill_id, decision in decisions.items():
            tally[decision.decision] = tally.get(decision.decision, 0) + 1
            games = counts["sequential"][skill_id].played
            per_bar.setdefault(decision.bar_name, []).append(games)
            fixed = counts["fixed"].get(skill_id)
            if fixed is None or not fixed.decided or decision.decision not in ("above", "below"):
                continue
            rate = fixed.wins / fixed.decided
            if abs(rate - decision.bar) < decision.delta:
                zone += 1
            elif (rate > decision.bar) == (decision.decision == "above"):
                agree += 1
            else:
                disagree += 1
        report["decisions"] = tally
        report["agreement"] = {"agree": agree, "disagree": disagree, "indifference_zone": zone}
        report["mean_games_by_bar"] = {bar: round(sum(g) / len(g), 1) for bar, g in sorted(per_bar.items())}
    return report


def render(report: dict[str, Any]) -> str:
    a, d = report["agreement"], report["decisions"]
    head = (
        f"{report['library']}: {report['skills']} playable AI skills, fixed {report['max_games']} games vs "
        f"until decided (rounds of {report['round_games']}, delta {report['delta']:.0%}, "
        f"alpha = beta = {report['alpha']:.0%})"
    )
    games = (
        f"  games: fixed {report['fixed_games']:,} ({report['fixed_seconds']} s), sequential "
        f"{report['sequential_games']:,} ({report['sequential_seconds']} s): {report['games_saved']:,} saved "
        f"({report['saved_share']:.1%})"
    )
    by_bar = ", ".join(f"{bar} {n}" for bar, n in report["mean_games_by_bar"].items())
    decided = (
        f"  decisions: {d.get('above', 0)} above, {d.get('below', 0)} below, {d.get('undecided', 0)} undecided; "
        f"mean games by bar: {by_bar}"
    )
    agreement = (
        f"  against the fixed-N rate's side of the bar: {a['agree']} agree, {a['disagree']} disagree, "
        f"{a['indifference_zone']} inside bar +/- delta"
    )
    return "\n".join([head, games, decided, agreement])


if __name__ == "__main__":
    sys.exit(main())
