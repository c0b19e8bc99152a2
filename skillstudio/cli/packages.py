"""``skillstudio export | import | validate | prune``: sharing and pruning on the command line.

Registered by :mod:`skillstudio.cli.main` (``add_parsers`` and ``commands``); the work is done
by :mod:`skillstudio.packages`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from skillstudio.cli.arguments import MANY, whole_number
from skillstudio.files import write_atomically
from skillstudio.model import Domain
from skillstudio.packages.errors import refuse
from skillstudio.packages.export import PrivacyError, export_selection, load_selection, refuse_replacing
from skillstudio.packages.icpkg import AI_USAGE, PACKAGE_NAME, PackageMeta, default_package_name
from skillstudio.packages.importer import apply_plan, plan_import
from skillstudio.packages.prune import apply_prune, plan_prune
from skillstudio.packages.signing import load_or_create_key
from skillstudio.packages.sources import FORMATS, read_source
from skillstudio.store import Database, SkillQuery, SkillRepository

EXIT_OK, EXIT_FAILED = 0, 1
NO_LIBRARY = frozenset({"validate"})
Handler = Callable[[argparse.Namespace, Database], int]


def add_parsers(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    *,
    common: argparse.ArgumentParser,
    filters: argparse.ArgumentParser,
    as_json: argparse.ArgumentParser,
) -> None:
    export = commands.add_parser(
        "export", parents=[common, filters], help="export skills to a Workshop package (or SKILL.md, JSON)"
    )
    export.add_argument(
        "-o", "--output", required=True, metavar="FILE", help="FILE.icpkg, a folder (skill-md) or FILE.json"
    )
    export.add_argument(
        "--format", choices=("icpkg", "skill-md", "json"), default=None, help="default: from the output name"
    )
    export.add_argument("--query", metavar="TEXT", default="", help="full-text search, words as prefixes")
    export.add_argument("--id", dest="ids", metavar="ID", action="append", help="export these skills (repeatable)")
    export.add_argument(
        "--name",
        help="package name (3-64 of a-z, 0-9, -); default: the output name plus 8 hex digits from your publisher key",
    )
    export.add_argument("--publisher", default="local", help="Workshop publisher (default: local)")
    export.add_argument("--version", dest="package_version", default="1.0.0", help="semver (default 1.0.0)")
    export.add_argument("--license", default="CC-BY-SA-4.0", help="SPDX id (default CC-BY-SA-4.0)")
    export.add_argument("--description", default="", help="package description")
    export.add_argument("--display-name", default="", help="D057 display_name")
    export.add_argument("--engine-version", default="", help="engine version range, e.g. ^0.5.0")
    export.add_argument("--ai-usage", choices=AI_USAGE, default="metadata_only", help="D030 ai_usage")
    export.add_argument("--readme", metavar="FILE", help="a README.md to include")
    export.add_argument(
        "--redact",
        action="store_true",
        help="replace what the privacy check finds by [redacted] (icpkg refuses findings without it; skill-md and json only warn)",
    )
    export.add_argument("--vdf", action="store_true", help="also write a steamcmd workshop_build_item VDF beside it")
    export.add_argument("--dry-run", action="store_true", help="show the selection and privacy findings only")

    imp = commands.add_parser(
        "import", parents=[common, as_json], help="import a package, SKILL.md tree, JSON or Voyager library"
    )
    imp.add_argument("path", metavar="PATH")
    mode = imp.add_mutually_exclusive_group()
    mode.add_argument(
        "--merge", dest="mode", action="store_const", const="merge", help="the default (docs/packages.md)"
    )
    mode.add_argument("--replace", dest="mode", action="store_const", const="replace")
    imp.set_defaults(mode="merge")
    imp.add_argument("--dry-run", action="store_true", help="print what would be added, updated, skipped")
    imp.add_argument("--format", choices=FORMATS, default=None, help="default: detected")
    imp.add_argument("--strict", action="store_true", help="SKILL.md: refuse any spec violation")
    imp.add_argument("--domain", default="ai", help="domain of skills the format does not say (default ai)")
    imp.add_argument("--game-module", default="ra1", help="game module of skills the format does not say (default ra1)")
    imp.add_argument(
        "--trust-key",
        metavar="FINGERPRINT",
        default=None,
        help="accept a package signed by this key (16 hex) for an identity another key brought first",
    )

    validate = commands.add_parser("validate", parents=[common], help="report SKILL.md spec problems without importing")
    validate.add_argument("path", metavar="PATH")
    validate.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 on any spec violation too (default: violations are warnings, exit 1 only on errors)",
    )

    prune = commands.add_parser(
        "prune", parents=[common, as_json], help="move stale, unused or superseded skills to the trash"
    )
    prune.add_argument(
        "--max-size", type=whole_number("--max-size", 0, MANY), metavar="N", help="also prune down to N skills"
    )
    prune.add_argument("--dry-run", action="store_true", help="list what would be pruned")


def commands(query_from: Callable[[argparse.Namespace, str], SkillQuery]) -> dict[str, Handler]:
    def export(args: argparse.Namespace, database: Database) -> int:
        return _export(args, database, query_from)

    return {"export": export, "import": _import, "prune": _prune}


def _package_name(args: argparse.Namespace, out: Path) -> str:
    """``--name`` if it is a package name (refused otherwise, never replaced by a shared default);
    else a default no other export shares (``icpkg.default_package_name``)."""
    name: str | None = args.name
    if name is not None:
        if not PACKAGE_NAME.match(name):
            raise refuse(
                "--name",
                f"{name!r} is not a package name (3-64 of a-z, 0-9, -; "
                "starting and ending with a letter or digit); give another or leave --name out",
            )
        return name
    return default_package_name(out.stem, load_or_create_key(args.publisher).fingerprint)


def _export(
    args: argparse.Namespace, database: Database, query_from: Callable[[argparse.Namespace, str], SkillQuery]
) -> int:
    repository = SkillRepository(database)
    out = Path(args.output)
    fmt = args.format or ("json" if out.suffix.lower() == ".json" else "icpkg" if out.suffix else "skill-md")
    if not args.dry_run:  # before the selection is read: that can take a while
        refuse_replacing(out, folder=fmt == "skill-md")
    ids = (
        [repository.resolve_id(i) for i in args.ids] if args.ids else repository.query(query_from(args, args.query)).ids
    )
    # A row that holds no valid skill is left out and named; the rest are exported.
    preview = load_selection(
        repository,
        ids,
        on_skip=lambda skill_id, reason: print(f"skillstudio: skipped skill {skill_id!r}: {reason}", file=sys.stderr),
    )
    if args.dry_run:
        skipped = f"; {len(preview.skipped)} invalid rows skipped" if preview.skipped else ""
        print(f"{len(preview.skills)} skills selected; {len(preview.findings)} privacy findings{skipped}")
        if preview.rejected:
            print(f"  {len(preview.rejected)} rejected skills left out")
        for finding in preview.findings:
            print(f"  {finding}")
        if fmt == "icpkg":  # the other formats carry no links
            for warning in preview.link_warnings():
                print(f"  warning: {warning}")
        return EXIT_OK
    if not preview.skills:
        print("skillstudio: no skills match; nothing exported", file=sys.stderr)
        return EXIT_FAILED
    from skillstudio.packages.privacy import refuses_export

    if preview.findings and not args.redact:
        if refuses_export(fmt):
            raise PrivacyError(preview.findings)
        for finding in preview.findings:
            print(f"warning: privacy check: {finding}", file=sys.stderr)
    if fmt == "icpkg":
        meta = PackageMeta(
            name=_package_name(args, out),
            publisher=args.publisher,
            version=args.package_version,
            license=args.license,
            description=args.description,
            display_name=args.display_name,
            engine_version=args.engine_version,
            ai_usage=args.ai_usage,
        )
        readme = Path(args.readme).read_text(encoding="utf-8") if args.readme else None
        written = export_selection(preview, meta, out, redact=args.redact, readme=readme, vdf=args.vdf)
        for warning in preview.link_warnings():
            print(f"warning: {warning}", file=sys.stderr)
    else:
        written = preview.as_written(redact=args.redact)
        if fmt == "json":
            from skillstudio.packages.json_library import export_json_library

            write_atomically(out, export_json_library(written, preview.extras).encode("utf-8"))
        else:
            from skillstudio.packages.skill_md import export_skill_tree, has_skill_md_form

            if not any(has_skill_md_form(skill) for skill in written):
                print(
                    "skillstudio: none of these skills has a SKILL.md form (instructions); nothing exported",
                    file=sys.stderr,
                )
                return EXIT_FAILED
            for warning in export_skill_tree(written, out, preview.extras):
                print(f"warning: {warning}", file=sys.stderr)
            written = [skill for skill in written if has_skill_md_form(skill)]
    redacted = ""
    if preview.findings and args.redact:
        redacted = f", {len({f.skill_id for f in preview.findings})} redacted"
    elif preview.findings:
        redacted = f" ({len(preview.findings)} privacy findings left as written; --redact removes them)"
    print(f"exported {len(written)} skills to {out}{redacted}")
    return EXIT_OK


def _import(args: argparse.Namespace, database: Database) -> int:
    try:
        domain = Domain.parse(args.domain)
    except ValueError as error:
        raise refuse("--domain", str(error)) from None
    source = read_source(args.path, fmt=args.format, strict=args.strict, domain=domain, game_module=args.game_module)
    repository = SkillRepository(database)
    signer = source.package.signer if source.package is not None else None
    plan = plan_import(
        repository,
        source.incoming,
        origin=source.origin,
        source=source.label,
        mode=args.mode,
        signer=signer,
        trust_key=args.trust_key,
    )
    embedding_problem = None
    if not args.dry_run:
        apply_plan(repository, plan)
        # New and changed skills get their vectors now, in batches (docs/retrieval.md).
        from skillstudio.cli.retrieval import embed_written

        embedding_problem = embed_written(repository, [s.skill_id for s in plan.steps if s.action in ("add", "update")])
    if args.json:
        print(
            json.dumps(
                {
                    "format": "skillstudio.import",
                    "version": 1,
                    "source": source.label,
                    "detected": source.format,
                    "origin": plan.origin,
                    "mode": plan.mode,
                    "dry_run": args.dry_run,
                    "counts": {a: plan.count(a) for a in ("add", "update", "skip", "conflict", "trash")},
                    "steps": [step.to_json() for step in plan.steps],
                    "warnings": source.warnings + plan.warnings,
                    "key": plan.signer.fingerprint if plan.signer is not None else None,
                    "embedding": embedding_problem or "ok",
                },
                ensure_ascii=False,
                indent=2,
            )
        )
        return EXIT_OK
    verb = "would import" if args.dry_run else "imported"
    print(f"{verb} {source.label} ({source.format}, {plan.origin}): {plan.summary()}")
    if plan.signer is not None:
        trusted = {"record": " (first seen: remembered for this package)", "replace": " (trusted with --trust-key)"}
        print(f"  signed by key {plan.signer.fingerprint}{trusted.get(plan.key_action, '')}")
    for step in plan.steps:
        if args.dry_run or step.action in ("conflict", "trash"):
            print(f"  {step}")
    warnings = source.warnings + plan.warnings
    for warning in warnings[:50]:
        print(f"  warning: {warning}")
    if len(warnings) > 50:
        print(f"  ... and {len(warnings) - 50} more warnings (kept with each skill)")
    if embedding_problem:
        print(f"  warning: {embedding_problem}")
    return EXIT_OK


def _prune(args: argparse.Namespace, database: Database) -> int:
    repository = SkillRepository(database)
    candidates = plan_prune(repository, max_size=args.max_size)
    if not args.dry_run:
        apply_prune(repository, candidates)
    if args.json:
        print(
            json.dumps(
                {
                    "format": "skillstudio.prune",
                    "version": 1,
                    "dry_run": args.dry_run,
                    "pruned": [
                        {"id": c.skill_id, "name": c.name, "confidence": c.confidence, "reason": c.reason}
                        for c in candidates
                    ],
                },
                ensure_ascii=False,
                indent=2,
            )
        )
        return EXIT_OK
    verb = "would move" if args.dry_run else "moved"
    print(f"{verb} {len(candidates)} skills to the trash")
    for candidate in candidates:
        print(f"  {candidate}")
    return EXIT_OK


def _validate(args: argparse.Namespace) -> int:
    """Errors always fail; spec violations are warnings, or errors with ``--strict``; warnings
    (something not kept) and notes never fail (docs/packages.md)."""
    from skillstudio.packages.skill_md import check_tree

    count, found = check_tree(args.path)
    spec_level = "error" if args.strict else "warning"
    for level, issues in (
        ("error", found.errors),
        (spec_level, found.spec),
        ("warning", found.warnings),
        ("note", found.notes),
    ):
        for issue in issues:
            print(f"{level}: {issue}")
    failed = bool(found.errors) or (args.strict and bool(found.spec))
    problems = len(found.errors) + len(found.spec) + len(found.warnings)
    notes = f" ({len(found.notes)} notes)" if found.notes else ""
    if not problems:
        print(f"{count} skills: no problems found{notes}")
        return EXIT_OK
    errors = len(found.errors) + (len(found.spec) if args.strict else 0)
    summary = f"{count} skills: {errors} errors, {problems - errors} warnings{notes}"
    print(summary, file=sys.stderr if failed else sys.stdout)
    return EXIT_FAILED if failed else EXIT_OK


def run_without_library(args: argparse.Namespace) -> int:
    if args.command == "validate":
        return _validate(args)
    raise AssertionError(args.command)


__all__ = ["NO_LIBRARY", "add_parsers", "commands", "run_without_library"]
