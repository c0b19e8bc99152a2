"""``verify``, ``record``, ``revalidate``, ``runs``: verification on the command line.

Registered by :mod:`skillstudio.cli.main` through :func:`add_commands`. The JSON documents are
described in docs/cli.md; every success rate is shown with its Wilson 95% interval.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any, TextIO

from skillstudio.cli import output
from skillstudio.cli import verification_modes as modes
from skillstudio.cli.arguments import MANY, whole_number
from skillstudio.cli.progress import ProgressLine
from skillstudio.model import BodyKind, Confidence, Domain
from skillstudio.store import Database, LibraryBusy, LibraryError, SkillQuery, SkillRepository
from skillstudio.store.runs import RunInfo, RunSkill, RunStore
from skillstudio.verification.drive import drive_run
from skillstudio.verification.executors import DEFAULT_EXECUTOR, ExecutorError, parse_executor
from skillstudio.verification.policy import policy_for
from skillstudio.verification.runner import (
    DEFAULT_CHUNK_GAMES,
    Progress,
    RunFinished,
    RunStarted,
    VerificationError,
    revalidation_candidates,
    select_playable,
    skipped_of,
    start_run,
)
from skillstudio.verification.stats import wilson

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
JSON_VERSION = 1
Handler = Callable[[argparse.Namespace, Database], int]


def _parsed(parse: Callable[[str], object]) -> Callable[[str], object]:
    def convert(text: str) -> object:
        try:
            return parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    convert.__name__ = getattr(parse, "__self__", parse).__name__
    return convert


def _executor(text: str) -> str:
    try:
        parse_executor(text)
    except ExecutorError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def add_commands(
    commands: Any, common: argparse.ArgumentParser, as_json: argparse.ArgumentParser
) -> dict[str, Handler]:
    """Add the verification subcommands to ``commands``; returns their handlers by name."""
    batch = argparse.ArgumentParser(add_help=False)
    batch.add_argument(
        "--seed", type=int, default=None, help="batch seed (default: a fresh one, recorded); same seed, same games"
    )
    batch.add_argument(
        "--executor",
        type=_executor,
        default=None,
        help="auto (default: worker processes for 10,000 games or more, else in process) | inprocess"
        " | processes[:N] | dask-local[:N] | dask://HOST:PORT",
    )
    batch.add_argument(
        "--engine", metavar="CMD", help="an engine speaking the protocol (default: settings, else built-in)"
    )
    batch.add_argument(
        "--chunk",
        type=whole_number("--chunk", 1, MANY),
        default=None,
        metavar="N",
        help=f"games per chunk (default {DEFAULT_CHUNK_GAMES})",
    )
    batch.add_argument("--quiet", action="store_true", help="no progress output")

    verify = commands.add_parser("verify", parents=[common, as_json, batch], help="verify AI skills headlessly (D057)")
    verify.add_argument(
        "--domain", type=_parsed(Domain.parse), action="append", help="ai (content skills are verified by `record`)"
    )
    verify.add_argument("--skill", metavar="ID", action="append", help="a skill id or unique prefix (repeatable)")
    verify.add_argument(
        "--confidence",
        type=_parsed(Confidence.parse_range),
        action="append",
        help="tentative | established | proven | established+",
    )
    verify.add_argument("--game-module", metavar="M", action="append", help="ra1, td, ...")
    verify.add_argument("--games", type=whole_number("--games", 1, MANY), help="games per skill")
    verify.add_argument("--opponent", metavar="NAME", help='e.g. "IC Default Hard"')
    verify.add_argument("--resume", metavar="RUN_ID", help="complete an interrupted run")
    modes.add_arguments(verify)  # --baseline, --until-decided, --sequence

    record = commands.add_parser(
        "record", parents=[common, as_json], help="import real outcomes: plays of content skills, AI matches"
    )
    record.add_argument("plays", metavar="FILE.jsonl")

    revalidate = commands.add_parser(
        "revalidate", parents=[common, as_json, batch], help="re-verify Proven skills after an engine update (decay)"
    )
    revalidate.add_argument("--engine-version", required=True, metavar="V", help="the engine version now in use")
    revalidate.add_argument(
        "--games", type=whole_number("--games", 1, MANY), default=20, help="games per skill (default 20)"
    )
    revalidate.add_argument("--opponent", metavar="NAME", default=None, help="default: the policy's reference opponent")

    runs = commands.add_parser("runs", parents=[common, as_json], help="list verification runs; `runs show ID`")
    runs.add_argument("--limit", type=whole_number("--limit", 1, MANY), default=50, metavar="N")
    runs_commands = runs.add_subparsers(dest="runs_command", metavar="show")
    show = runs_commands.add_parser("show", parents=[common, as_json], help="one run in full")
    show.add_argument("run_id", metavar="ID")
    return {"verify": _verify, "record": _record, "revalidate": _revalidate, "runs": _runs}


# --- verify -------------------------------------------------------------------------------------


def _verify(args: argparse.Namespace, database: Database) -> int:
    stop = modes.prepare(args)  # how --baseline, --until-decided and --sequence combine; nothing written yet
    if stop is not None:
        return stop
    if args.sequence:
        return modes.verify_sequence(args, database, lambda run_id: _drive(args, database, run_id))
    repository = SkillRepository(database)
    store = RunStore(database)
    if args.resume:
        run_id = store.resolve(args.resume)
        return _drive(args, database, run_id)
    if not args.games or not args.opponent:
        print("skillstudio: verify needs --games N and --opponent NAME (or --resume RUN_ID)", file=sys.stderr)
        return EXIT_USAGE
    domains = tuple(args.domain or (Domain.AI_STRATEGY,))
    if Domain.CONTENT_GENERATION in domains:
        print("skillstudio: content skills are verified by plays: skillstudio record PLAYS.jsonl", file=sys.stderr)
        return EXIT_FAILED
    if args.skill:
        ids = list(dict.fromkeys(repository.resolve_id(ref) for ref in args.skill))
    else:
        confidences = tuple(dict.fromkeys(c for group in args.confidence or () for c in group))
        query = SkillQuery(domains=domains, confidences=confidences, game_modules=tuple(args.game_module or ()))
        ids = list(repository.query(query).ids)
    # The GUI's selection too: rows holding no valid skill, content skills and bodies the engine
    # cannot play are skipped and named (recorded with the run); the others play.
    modules = {s.game_module for s in repository.summaries(ids) if s.domain == Domain.AI_STRATEGY.value}
    engine = _engine(args, modules)
    skills, skipped = select_playable(repository, ids, engine=engine)
    try:
        options = modes.run_options(args, policy_for(database))
    except ValueError as error:
        print(f"skillstudio: {error}", file=sys.stderr)
        return EXIT_USAGE
    run_id = start_run(
        database,
        skills,
        opponent=args.opponent,
        games=args.games,
        seed=args.seed,
        executor=args.executor or DEFAULT_EXECUTOR,
        engine=engine,
        chunk_games=args.chunk or DEFAULT_CHUNK_GAMES,
        actor=repository.actor,
        skipped=skipped,
        options=options,
    )
    return _drive(args, database, run_id)


def _engine(args: argparse.Namespace, modules: set[str]) -> list[str]:
    """The external engine's argv for skills of these game modules, or [] for the built-in
    in-process engine."""
    from skillstudio.engine.settings import engine_argv, load_engine_settings

    if args.engine:
        return engine_argv("", override=args.engine)
    settings = load_engine_settings()
    configured = {tuple(settings[m]) for m in modules if m in settings}
    if not configured:
        return []
    if len(configured) > 1 or len(modules) > 1:
        raise VerificationError("the selected skills span game modules with different engines; add --game-module M")
    return list(configured.pop())


def _drive(args: argparse.Namespace, database: Database, run_id: str) -> int:
    progress = _ProgressView(sys.stderr, quiet=args.quiet or False)
    final: RunFinished | None = None
    events = drive_run(database, run_id, executor=args.executor or None)  # with its baseline, or a composition
    try:
        for event in events:
            if isinstance(event, RunStarted):
                progress.start(event)
            elif isinstance(event, Progress):
                progress.update(event)
            elif isinstance(event, RunFinished):
                final = event
            else:  # the default plan's games (--baseline), a composition's result
                progress.other(event)
    except KeyboardInterrupt:
        events.close()
        progress.done()
        print(f"skillstudio: interrupted; resume with: skillstudio verify --resume {run_id}", file=sys.stderr)
        return EXIT_FAILED
    except LibraryBusy as error:  # another program held the write lock past the bounded wait
        progress.done()
        print(
            f"skillstudio: {error}; the games so far are stored; resume with: skillstudio verify --resume {run_id}",
            file=sys.stderr,
        )
        return EXIT_FAILED
    except (LibraryError, VerificationError, ExecutorError):
        progress.done()
        raise
    except Exception as error:  # noqa: BLE001 - an executor or cluster failure: the games so far are stored
        progress.done()
        print(
            f"skillstudio: run {run_id} failed ({type(error).__name__}: {error}); "
            f"resume with: skillstudio verify --resume {run_id}",
            file=sys.stderr,
        )
        return EXIT_FAILED
    progress.done()
    assert final is not None
    store = RunStore(database)
    info = store.run(run_id)
    run_skills = store.skills(run_id)
    names = _names(database, [s.skill_id for s in run_skills])
    if args.json:
        print(output.dump_json(run_document(info, run_skills, names, database)))
    else:
        print(run_text(info, run_skills, names, database))
    return EXIT_OK if final.status == "finished" else EXIT_FAILED


class _ProgressView:
    """A batch's progress: its start as a line, then games played with W/L/D/E and the win rate."""

    def __init__(self, stream: TextIO, *, quiet: bool) -> None:
        self.stream, self.quiet = stream, quiet
        self.line = ProgressLine(stream, quiet=quiet, unit="games")

    def start(self, event: RunStarted) -> None:
        if self.quiet:
            return
        resumed = f", {event.games_done} already recorded" if event.games_done else ""
        print(
            f"run {event.run_id}: {event.skills} skills, {event.games_total} games on {event.executor}{resumed}",
            file=self.stream,
            flush=True,
        )

    def update(self, event: Progress) -> None:
        decided = event.wins + event.losses + event.draws
        rate = f"{event.wins / decided:.0%} {wilson(event.wins, decided)}" if decided else "-"
        figures = f"W{event.wins} L{event.losses} D{event.draws} E{event.errors}  win rate {rate}"
        self.line.show(event.games_done, event.games_total, figures)

    def other(self, event: object) -> None:
        shown = modes.progress_text(event)
        if shown is not None:
            self.line.show(*shown)

    def done(self) -> None:
        self.line.done()


# --- documents and tables --------------------------------------------------------------------------


def _interval(low: float | None, high: float | None) -> list[float] | None:
    return None if low is None or high is None else [round(low, 4), round(high, 4)]


def _names(database: Database, ids: list[str]) -> dict[str, str]:
    return {s.id: s.name for s in SkillRepository(database).summaries(ids)}


def run_summary_document(info: RunInfo) -> dict[str, Any]:
    return {
        "id": info.id,
        "kind": info.kind,
        "status": info.status,
        "opponent": info.opponent,
        "engine": list(info.engine) or None,
        "engine_version": info.engine_version,
        "executor": info.executor,
        "seed": info.seed,
        "games_per_skill": info.games,
        "skills": info.skills,
        "games_asked": info.games_asked,
        "games_recorded": info.games_recorded,
        "chunk_games": info.chunk_games,
        "actor": info.actor,
        "started_at": info.started_at,
        "finished_at": info.finished_at,
        "message": info.message,
        "policy": info.policy,
    }


def run_document(info: RunInfo, skills: list[RunSkill], names: dict[str, str], database: Database) -> dict[str, Any]:
    store = RunStore(database)
    counts = store.counts(info.id)
    extras = modes.RunExtras(database, info)  # lift, sequential decision, composition
    entries = []
    for entry in skills:
        c = counts.get(entry.skill_id)
        wins, losses, draws, errors = (c.wins, c.losses, c.draws, c.errors) if c else (0, 0, 0, 0)
        decided = wins + losses + draws
        interval = wilson(wins, decided)
        current = store.interval(entry.skill_id)
        quality = SkillRepository(database).summaries([entry.skill_id])
        entries.append(
            {
                "id": entry.skill_id,
                "name": names.get(entry.skill_id),
                **extras.entry(entry.skill_id),
                "game_module": entry.game_module,
                "wins": wins,
                "losses": losses,
                "draws": draws,
                "errors": errors,
                "success_rate": round(wins / decided, 4) if decided else None,
                "wilson_95": interval.as_list() if decided else None,
                "confidence_before": entry.confidence_before,
                "confidence_after": entry.confidence_after,
                "applied": entry.applied_at is not None,
                "duplicates": entry.duplicates,
                "note": entry.note,
                "skill_quality": None
                if not quality
                else {
                    "confidence": quality[0].confidence,
                    "verification_count": quality[0].verification_count,
                    "success_rate": quality[0].success_rate,
                    "average_rating": quality[0].average_rating,
                    "wilson_95": None if current is None else _interval(current[2], current[3]),
                },
            }
        )
    return {
        "format": "skillstudio.verification-run",
        "version": JSON_VERSION,
        "run": run_summary_document(info),
        **extras.document(),
        "skills": entries,
        "skipped": [s.as_document() for s in skipped_of(info)],
    }


def _tier(before: str, after: str | None) -> str:
    if after is None:
        return f"{before} (not applied)"
    return before if before == after else f"{before} -> {after}"


def run_text(info: RunInfo, skills: list[RunSkill], names: dict[str, str], database: Database) -> str:
    counts = RunStore(database).counts(info.id)
    lines = [
        f"Run {info.id} ({info.kind}, {info.status}): {info.skills} skills x {info.games} games vs {info.opponent}, "
        f"seed {info.seed}, {info.executor}, engine {' '.join(info.engine) or 'built-in'} {info.engine_version}".rstrip(),
        f"{'ID':<8}  {'NAME':<32}  {'W':>4} {'L':>4} {'D':>4} {'E':>4}  {'RATE':>5}  {'WILSON 95%':<16}  TIER",
    ]
    totals = [0, 0, 0, 0]
    for entry in skills:
        c = counts.get(entry.skill_id)
        wins, losses, draws, errors = (c.wins, c.losses, c.draws, c.errors) if c else (0, 0, 0, 0)
        totals = [totals[0] + wins, totals[1] + losses, totals[2] + draws, totals[3] + errors]
        decided = wins + losses + draws
        rate = f"{wins / decided:.0%}" if decided else "-"
        interval = str(wilson(wins, decided)) if decided else "-"
        name = names.get(entry.skill_id, "(deleted)")
        name = name if len(name) <= 32 else name[:31] + "…"
        repeated = f"  ({entry.duplicates} games already credited, not counted again)" if entry.duplicates else ""
        lines.append(
            f"{entry.skill_id[:8]:<8}  {name:<32}  {wins:>4} {losses:>4} {draws:>4} {errors:>4}  {rate:>5}  {interval:<16}  "
            f"{_tier(entry.confidence_before, entry.confidence_after)}{repeated}"
        )
    wins, losses, draws, errors = totals
    decided = wins + losses + draws
    lines.append(
        f"{'all':<8}  {'':<32}  {wins:>4} {losses:>4} {draws:>4} {errors:>4}  "
        f"{(f'{wins / decided:.0%}' if decided else '-'):>5}  {(str(wilson(wins, decided)) if decided else '-'):<16}"
    )
    lines.extend(modes.RunExtras(database, info).lines(skills, names))
    promoted = sum(
        1
        for s in skills
        if s.confidence_after and Confidence(s.confidence_after).rank > Confidence(s.confidence_before).rank
    )
    demoted = sum(
        1
        for s in skills
        if s.confidence_after and Confidence(s.confidence_after).rank < Confidence(s.confidence_before).rank
    )
    lines.append(f"{promoted} promoted, {demoted} demoted; error games are not losses")
    lines.extend(f"skipped {s.skill_id[:8]} {s.name}: {s.reason}" for s in skipped_of(info))
    return "\n".join(lines)


# --- runs -------------------------------------------------------------------------------------------


def _runs(args: argparse.Namespace, database: Database) -> int:
    store = RunStore(database)
    if getattr(args, "runs_command", None) == "show":
        info = store.run(store.resolve(args.run_id))
        skills = store.skills(info.id)
        names = _names(database, [s.skill_id for s in skills])
        if args.json:
            print(output.dump_json(run_document(info, skills, names, database)))
        else:
            print(run_text(info, skills, names, database))
        return EXIT_OK
    runs = store.runs(args.limit)
    extras = modes.runs_extras(database, runs)
    if args.json:
        print(
            output.dump_json(
                {
                    "format": "skillstudio.verification-runs",
                    "version": JSON_VERSION,
                    "count": len(runs),
                    "runs": [{**run_summary_document(r), **extras[r.id]} for r in runs],
                }
            )
        )
        return EXIT_OK
    lines = [
        f"{'RUN':<12}  {'KIND':<10}  {'STATUS':<9}  {'STARTED':<24}  {'SKILLS':>6}  {'GAMES':>11}  OPPONENT / EXECUTOR"
    ]
    lines.extend(
        f"{r.id:<12}  {r.kind:<10}  {r.status:<9}  {r.started_at:<24}  {r.skills:>6}  "
        f"{f'{r.games_recorded}/{r.games_asked}':>11}  {r.opponent} / {r.executor}"
        + (f"  ({note})" if (note := modes.runs_note(extras[r.id])) else "")
        for r in runs
    )
    lines.append(f"{len(runs)} runs")
    print("\n".join(lines))
    return EXIT_OK


# --- record -------------------------------------------------------------------------------------------


def _record(args: argparse.Namespace, database: Database) -> int:
    from skillstudio.verification.plays import record_plays

    summary = record_plays(args.plays, SkillRepository(database))
    if args.json:
        print(
            output.dump_json(
                {
                    "format": "skillstudio.play-record",
                    "version": JSON_VERSION,
                    "file": summary.path,
                    "plays": summary.plays,
                    "matches": summary.matches,
                    "already_imported": summary.already_imported,
                    "skills": [
                        {
                            "id": r.skill_id,
                            "name": r.name,
                            "kind": r.kind,
                            "new_plays": r.new_plays,
                            "completed": r.completed,
                            "rated": r.rated,
                            "rating": r.rating,
                            "wins": r.completed if r.kind == "gameplay" else None,
                            "losses": r.losses if r.kind == "gameplay" else None,
                            "draws": r.draws if r.kind == "gameplay" else None,
                            "opponent": r.opponent,
                            "engine_version": r.engine_version or None,
                            "confidence_before": r.before,
                            "confidence_after": r.after,
                            "action": r.action,
                            "reason": r.reason,
                            "verification_count": r.verification_count,
                            "success_rate": round(r.completion_rate, 4),
                            "wilson_95": r.interval.as_list(),
                            "average_rating": r.average_rating,
                            "validation": list(r.validation),
                            "contradicted": None if r.contradiction is None else r.contradiction.as_document(),
                        }
                        for r in summary.results
                    ],
                }
            )
        )
        return EXIT_OK
    new = summary.plays + summary.matches - summary.already_imported
    counted = f"{summary.plays} plays" + (f", {summary.matches} matches" if summary.matches else "")
    print(f"{summary.path}: {counted}, {new} new, {summary.already_imported} already imported")
    for r in summary.results:
        if r.kind == "gameplay":
            print(
                f"  {r.skill_id[:8]}  {r.name[:32]:<32}  +{r.new_plays} matches vs {r.opponent} "
                f"({r.completed}W {r.losses}L {r.draws}D)  success {r.completion_rate:.0%} {r.interval} "
                f"over {r.verification_count}  {_tier(r.before, r.after)}"
            )
        else:
            rating = "-" if r.average_rating is None else f"{r.average_rating:.2f}"
            print(
                f"  {r.skill_id[:8]}  {r.name[:32]:<32}  +{r.new_plays} plays  completion {r.completion_rate:.0%} "
                f"{r.interval} over {r.verification_count}  rating {rating}  {_tier(r.before, r.after)}"
            )
        for finding in r.validation:
            print(f"    {finding}")
        if r.contradiction is not None:
            print(f"    contradicted: {r.contradiction.reason}; {r.contradiction.advice}")
    return EXIT_OK


# --- revalidate ----------------------------------------------------------------------------------------


def _revalidate(args: argparse.Namespace, database: Database) -> int:
    repository = SkillRepository(database)
    ids = repository.query(SkillQuery(domains=(Domain.AI_STRATEGY,), confidences=(Confidence.PROVEN,))).ids
    skills = revalidation_candidates(repository, args.engine_version, [repository.get(i) for i in ids])
    engine = _engine(args, {s.provenance.game_module for s in skills}) if skills else []
    if not engine:
        skills = [s for s in skills if s.body_kind is BodyKind.STRATEGIC_PATTERN]
    if not skills:
        if args.json:
            print(
                output.dump_json(
                    {"format": "skillstudio.verification-run", "version": JSON_VERSION, "run": None, "skills": []}
                )
            )
        else:
            print(f"no Proven skills recorded against an engine other than {args.engine_version}")
        return EXIT_OK
    run_id = start_run(
        database,
        skills,
        opponent=args.opponent or policy_for(database).reference_opponent,
        games=args.games,
        seed=args.seed,
        executor=args.executor or DEFAULT_EXECUTOR,
        engine=engine,
        chunk_games=args.chunk or DEFAULT_CHUNK_GAMES,
        actor=repository.actor,
        kind="revalidate",
        options={"engine_version": args.engine_version},
    )
    return _drive(args, database, run_id)


__all__ = ["ExecutorError", "VerificationError", "add_commands"]
