"""``skillstudio`` on a terminal: the verbs of D057's ``ic skill``, over the same core as the GUI.

Exit codes: 0 success, 1 not found or invalid input (including a bad library file, and ``show``
of a row that holds no valid skill), 2 usage. ``export`` skips rows that hold no valid skill,
naming each on stderr, and exits 0 if it exported at least one skill (1 if none was left).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from skillstudio import __version__
from skillstudio.cli import config as config_cli
from skillstudio.cli import output, verification
from skillstudio.cli import packages as packages_cli
from skillstudio.cli import publish as publish_cli
from skillstudio.cli import retrieval as retrieval_cli
from skillstudio.cli import review as review_cli
from skillstudio.cli import team as team_cli
from skillstudio.cli.arguments import whole_number
from skillstudio.library import ENV_VAR, create_library, open_library
from skillstudio.model import Confidence, Domain, ReviewState, SourceKind, ValidationError
from skillstudio.model.claims import claim_in, claimed_quality_text
from skillstudio.retrieval import ProviderError
from skillstudio.store import Database, LibraryError, SkillQuery, SkillRepository, SortKey
from skillstudio.store.errors import InvalidStoredSkill
from skillstudio.verification.policy import policy_for
from skillstudio.verification.standing import Standing, standings

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
MAX_PAGE = 2**31 - 1  # --limit / --offset: SQLite takes 64-bit integers; nobody pages further


def _enum_argument(parse: Callable[[str], object]) -> Callable[[str], object]:
    def convert(text: str) -> object:
        try:
            return parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    convert.__name__ = getattr(parse, "__self__", parse).__name__  # argparse names it in errors
    return convert


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--db",
        metavar="PATH|URL",
        default=argparse.SUPPRESS,
        help=f"the library file (a path, or sqlite:///path), or a team library's postgresql+psycopg://user@host/db URL"
        f" (default: ${ENV_VAR}, else your SkillStudio library)",
    )
    as_json = argparse.ArgumentParser(add_help=False)
    as_json.add_argument("--json", action="store_true", help="print the stable JSON form (docs/cli.md)")

    filters = argparse.ArgumentParser(add_help=False)
    group = filters.add_argument_group("filters")
    group.add_argument("--domain", type=_enum_argument(Domain.parse), action="append", help="ai | content")
    group.add_argument(
        "--confidence",
        type=_enum_argument(Confidence.parse_range),
        action="append",
        help="tentative | established | proven, or established+ for established and better",
    )
    group.add_argument("--game-module", metavar="M", action="append", help="ra1, td, ...")
    group.add_argument("--source", type=_enum_argument(SourceKind.parse), action="append", help=SourceKind.choices())
    group.add_argument("--tag", metavar="T", action="append", help="carries this tag (repeat: all of them)")
    group.add_argument("--untagged", action="store_true", help="only skills without tags")
    group.add_argument("--created-by", metavar="WHO", action="append", help="user or agent id")
    group.add_argument("--review", type=_enum_argument(ReviewState.parse), action="append", help=ReviewState.choices())
    group.add_argument("--sort", type=SortKey, choices=list(SortKey), default=SortKey.RELEVANCE)
    group.add_argument("--desc", action="store_true", help="sort descending")
    group.add_argument(
        "--limit", type=whole_number("--limit", 1, MAX_PAGE), metavar="N", help=f"at most N skills (1..{MAX_PAGE})"
    )
    group.add_argument(
        "--offset",
        type=whole_number("--offset", 0, MAX_PAGE),
        default=0,
        metavar="N",
        help=f"skip the first N (0..{MAX_PAGE})",
    )

    parser = argparse.ArgumentParser(
        prog="skillstudio",
        parents=[common],
        description="Curate, verify and share D057 skill libraries. Without a command, opens the app.",
    )
    parser.add_argument("--version", action="version", version=f"skillstudio {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    init = commands.add_parser("init", parents=[common], help="create a new library file")
    init.add_argument("path", metavar="PATH")
    init.add_argument("--sample", action="store_true", help="fill it with the bundled sample library")

    listing = commands.add_parser("list", parents=[common, as_json, filters], help="list skills")
    listing.add_argument("--query", metavar="TEXT", default="", help="full-text search, words as prefixes")

    show = commands.add_parser("show", parents=[common, as_json], help="one skill in full")
    show.add_argument("skill_id", metavar="ID", help="a skill id or a unique prefix of one (4+ characters)")

    commands.add_parser("stats", parents=[common, as_json], help="counts by domain, confidence, module, source")

    search = commands.add_parser("search", parents=[common, as_json, filters], help="full-text search")
    search.add_argument("text", metavar="TEXT", nargs="+")

    packages_cli.add_parsers(commands, common=common, filters=filters, as_json=as_json)
    publish_cli.add_parsers(commands, filters=filters, as_json=as_json)
    commands.add_parser("gui", parents=[common], help="open the app (the default without a command)")
    COMMANDS.update(verification.add_commands(commands, common, as_json))
    COMMANDS.update(review_cli.add_commands(commands, common, as_json))
    COMMANDS.update(retrieval_cli.add_commands(commands, common, as_json))
    config_cli.add_commands(commands, common, as_json)
    team_cli.add_parsers(commands, as_json)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one CLI command. Opening the GUI is :mod:`skillstudio.entry`'s job, which keeps this
    package free of Qt."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command in (None, "gui"):
        parser.print_usage(sys.stderr)
        print("skillstudio: the app is started by the `skillstudio` launcher, not the CLI module", file=sys.stderr)
        return EXIT_USAGE
    return run(args)


def run(args: argparse.Namespace) -> int:
    """Run one parsed CLI command."""
    try:
        if args.command == "init":
            return _init(args)
        if args.command in packages_cli.NO_LIBRARY:
            return packages_cli.run_without_library(args)
        if args.command == "config":  # the user's settings file needs no library
            return config_cli.run(args)
        if args.command in publish_cli.COMMANDS:  # each names its library itself
            return publish_cli.run(args, _query_from, _WaitNotice())
        if args.command == "team":  # names its server itself
            return team_cli.run(args)
        with open_library(getattr(args, "db", None), on_wait=_WaitNotice()) as database:
            return COMMANDS[args.command](args, database)
    except (
        LibraryError,
        ValidationError,
        ProviderError,
        verification.VerificationError,
        verification.ExecutorError,
    ) as error:
        print(f"skillstudio: {error}", file=sys.stderr)
        return EXIT_FAILED
    except BrokenPipeError:  # `skillstudio list | head`
        return EXIT_OK


class _WaitNotice:
    """Says once, on stderr, that a write is waiting for another program's lock (docs/storage.md)."""

    def __init__(self) -> None:
        self.said = False

    def __call__(self, waited: float) -> None:
        if not self.said and waited >= 1.0:
            self.said = True
            print("skillstudio: waiting for the library (another program is writing)…", file=sys.stderr)


def _init(args: argparse.Namespace) -> int:
    with create_library(args.path, sample=args.sample) as database:
        count = SkillRepository(database).count()
    print(f"created {database.location} with {count} skills" if count else f"created empty library {database.location}")
    return EXIT_OK


def _query_from(args: argparse.Namespace, text: str) -> SkillQuery:
    confidences = tuple(dict.fromkeys(c for group in args.confidence or () for c in group))
    return SkillQuery(
        domains=tuple(args.domain or ()),
        confidences=confidences,
        game_modules=tuple(args.game_module or ()),
        sources=tuple(args.source or ()),
        tags=tuple(args.tag or ()),
        untagged=args.untagged,
        created_by=tuple(args.created_by or ()),
        review_states=tuple(args.review or ()),
        text=text,
        sort=args.sort,
        descending=args.desc,
        offset=max(args.offset, 0),
        limit=args.limit,
    )


def _list(args: argparse.Namespace, database: Database, text: str | None = None) -> int:
    repository = SkillRepository(database)
    result = repository.query(_query_from(args, args.query if text is None else text))
    summaries = repository.summaries(result.ids)
    found = _standings(repository, result.ids)
    if args.json:
        print(output.dump_json(output.list_document(summaries, result.total, found)))
    else:
        print(output.summary_table(summaries, result.total, found))
    return EXIT_OK


def _standings(repository: SkillRepository, ids: Sequence[str]) -> dict[str, Standing]:
    """Each skill's tier against its credited evidence; with settings that are not valid, the
    listing still works and says why the check is missing."""
    try:
        return standings(repository, ids, policy_for(repository.database))
    except ValidationError as error:
        print(f"skillstudio: {error}; tiers are shown without checking them against the evidence", file=sys.stderr)
        return {}


def _search(args: argparse.Namespace, database: Database) -> int:
    return _list(args, database, text=" ".join(args.text))


def _show(args: argparse.Namespace, database: Database) -> int:
    repository = SkillRepository(database)
    skill_id = repository.resolve_id(args.skill_id)
    try:
        skill = repository.get(skill_id)
    except InvalidStoredSkill as error:
        return _show_invalid(args, repository, skill_id, error)
    details: output.SkillDetails = {
        "refinements": repository.refinements_of(skill.id),
        "revisions": repository.history.revisions(skill.id),
        "verifications": repository.evidence.verifications(skill.id),
    }
    standing = _standings(repository, [skill.id]).get(skill.id)
    # A package's figures are its claim, not this library's evidence (docs/packages.md).
    extras = repository.extras.get(skill.id)
    claim = claim_in(extras.frontmatter) if extras is not None else None
    if args.json:
        document = output.skill_document(skill, **details, standing=standing)
        document["claimed_quality"] = claim
        print(output.dump_json(document))
    else:
        print(output.skill_text(skill, **details, standing=standing))
        if claim is not None:
            print("  " + claimed_quality_text(claim))
    return EXIT_OK


def _show_invalid(
    args: argparse.Namespace, repository: SkillRepository, skill_id: str, error: InvalidStoredSkill
) -> int:
    """What can be read of a row that holds no valid skill (id, name), and every problem with
    its field path; exit 1. The report goes to stderr; ``--json`` also prints it on stdout."""
    found = repository.summaries([skill_id])
    summary = found[0] if found else None
    if args.json:
        print(output.dump_json(output.invalid_skill_document(skill_id, error.issues, summary)))
    print(f"skillstudio: {output.invalid_skill_text(skill_id, error.issues, summary)}", file=sys.stderr)
    return EXIT_FAILED


def _stats(args: argparse.Namespace, database: Database) -> int:
    stats = SkillRepository(database).facets.stats()
    if args.json:
        print(output.dump_json(output.stats_document(stats, database.location)))
    else:
        print(output.stats_text(stats, database.location))
    return EXIT_OK


COMMANDS: dict[str, Callable[[argparse.Namespace, Database], int]] = {
    "list": _list,
    "search": _search,
    "show": _show,
    "stats": _stats,
}
COMMANDS.update(packages_cli.commands(_query_from))
