"""``skillstudio publish | pull``: a library to the engine's D057 SQLite file, and back.

Registered by :mod:`skillstudio.cli.main`; the work is done by :mod:`skillstudio.packages.gameplay_db`
(docs/team-library.md, "Publish and pull"). Each opens the library it names itself (``SOURCE``,
``--into``), not ``--db``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from skillstudio.library import open_library
from skillstudio.packages.gameplay_db import apply_pull, plan_pull, publish, pulled_ids
from skillstudio.store import SkillQuery, SkillRepository

EXIT_OK = 0
COMMANDS = frozenset({"publish", "pull"})
QueryFrom = Callable[[argparse.Namespace, str], SkillQuery]


def add_parsers(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    *,
    filters: argparse.ArgumentParser,
    as_json: argparse.ArgumentParser,
) -> None:
    out = commands.add_parser(
        "publish",
        parents=[filters],
        help="write the selected skills to a D057 SQLite file an engine reads (replaced atomically)",
    )
    out.add_argument("library", metavar="SOURCE", help="the library to publish from (a file, or a server URL)")
    out.add_argument("--to", dest="target", required=True, metavar="FILE", help="the engine's file, e.g. gameplay.db")
    out.add_argument("--query", metavar="TEXT", default="", help="full-text search, words as prefixes")
    out.add_argument(
        "--redact", action="store_true", help="replace what the privacy check finds by [redacted] (else it refuses)"
    )

    pull = commands.add_parser(
        "pull",
        parents=[as_json],
        help="merge what an engine learned (new llm_discovered skills, new figures) into a library, for review",
    )
    pull.add_argument("engine_file", metavar="FILE", help="the engine's D057 SQLite file, e.g. gameplay.db")
    pull.add_argument("--into", dest="target", required=True, metavar="LIBRARY", help="the library to merge into")
    pull.add_argument("--dry-run", action="store_true", help="print what would be added, updated, skipped")


def run(args: argparse.Namespace, query_from: QueryFrom, on_wait: Callable[[float], None]) -> int:
    if args.command == "publish":
        return _publish(args, query_from, on_wait)
    return _pull(args, on_wait)


def _publish(args: argparse.Namespace, query_from: QueryFrom, on_wait: Callable[[float], None]) -> int:
    with open_library(args.library, on_wait=on_wait) as database:
        repository = SkillRepository(database)
        ids = repository.query(query_from(args, args.query)).ids
        done = publish(
            repository,
            ids,
            args.target,
            redact=args.redact,
            on_skip=lambda skill_id, reason: print(
                f"skillstudio: skipped skill {skill_id!r}: {reason}", file=sys.stderr
            ),
        )
    preview = done.preview
    redacted = len({f.skill_id for f in preview.findings}) if args.redact else 0
    notes = [f"{done.compositions} compositions"]
    if preview.rejected:
        notes.append(f"{len(preview.rejected)} rejected skills left out")
    if redacted:
        notes.append(f"{redacted} redacted")
    print(f"published {len(done.skills)} skills to {done.target} ({', '.join(notes)})")
    for warning in preview.link_warnings():
        print(f"warning: {warning}", file=sys.stderr)
    return EXIT_OK


def _pull(args: argparse.Namespace, on_wait: Callable[[float], None]) -> int:
    with open_library(args.target, on_wait=on_wait) as database:
        repository = SkillRepository(database)
        plan = plan_pull(repository, args.engine_file)
        embedding_problem = None
        if not args.dry_run:
            apply_pull(repository, plan)
            from skillstudio.cli.retrieval import embed_written

            embedding_problem = embed_written(repository, pulled_ids(plan))
    imports = plan.imports
    if args.json:
        print(
            json.dumps(
                {
                    "format": "skillstudio.pull",
                    "version": 1,
                    "source": imports.source,
                    "origin": imports.origin,
                    "dry_run": args.dry_run,
                    "counts": {
                        **{a: imports.count(a) for a in ("add", "update", "skip", "conflict")},
                        "figures": len(plan.claimed),
                    },
                    "steps": [step.to_json() for step in imports.steps],
                    "warnings": imports.warnings,
                    "embedding": embedding_problem or "ok",
                },
                ensure_ascii=False,
                indent=2,
            )
        )
        return EXIT_OK
    verb = "would pull" if args.dry_run else "pulled"
    print(f"{verb} {imports.source} ({imports.origin}): {plan.summary()}")
    for step in imports.steps:
        if args.dry_run or step.action in ("add", "update", "conflict"):
            print(f"  {step}")
    for warning in imports.warnings[:50]:
        print(f"  warning: {warning}")
    if embedding_problem:
        print(f"  warning: {embedding_problem}")
    return EXIT_OK


__all__ = ["COMMANDS", "add_parsers", "run"]
