"""``skillstudio team init|grant|members``: set up a team library on a PostgreSQL server.

Run by the library's administrator (a role that may create roles and owns the database); the
privileges each group holds are in docs/team-library.md and :mod:`skillstudio.store.team_roles`.
"""

from __future__ import annotations

import argparse
from typing import Any

from skillstudio.library import create_library
from skillstudio.store import Database, LibraryError, NotALibrary, SkillRepository, team_roles
from skillstudio.store.backends import is_server_url

EXIT_OK = 0


def add_parsers(commands: Any, as_json: argparse.ArgumentParser) -> None:
    team = commands.add_parser("team", help="set up a team library on a PostgreSQL server (docs/team-library.md)")
    verbs = team.add_subparsers(dest="team_command", metavar="VERB", required=True)
    init = verbs.add_parser("init", help="create the library's tables and the human and agent roles")
    init.add_argument("url", metavar="URL", help="postgresql+psycopg://ADMIN@HOST[:PORT]/DATABASE (an empty database)")
    init.add_argument("--sample", action="store_true", help="fill it with the bundled sample library")
    grant = verbs.add_parser("grant", help="let a person or an agent log in to the team library")
    grant.add_argument("url", metavar="URL")
    grant.add_argument("name", metavar="NAME", help="their login role, e.g. alice or agent-7")
    kind = grant.add_mutually_exclusive_group(required=True)
    kind.add_argument("--human", dest="kind", action="store_const", const="human", help="a designer or reviewer")
    kind.add_argument("--agent", dest="kind", action="store_const", const="agent", help="an LLM agent")
    listing = verbs.add_parser("members", parents=[as_json], help="who may log in, and as what")
    listing.add_argument("url", metavar="URL")


def run(args: argparse.Namespace) -> int:
    if not is_server_url(args.url):
        raise LibraryError(f"{args.url!r} is not a team library: give a postgresql+psycopg://USER@HOST/DATABASE URL")
    if args.team_command == "init":
        return _init(args)
    with Database(args.url) as database:  # the store says what went wrong, naming the server
        if args.team_command == "grant":
            team_roles.grant(database, args.name, args.kind)
            kind = "an agent" if args.kind == "agent" else "a human"
            print(f"{args.name} may now log in to {database.location} as {kind}")
            print(f"set a password as the server's administrator: ALTER ROLE \"{args.name}\" PASSWORD '...'")
            return EXIT_OK
        members = team_roles.member_list(database)
    if args.json:
        from skillstudio.cli import output

        print(output.dump_json({"members": [{"role": name, "kind": kind} for name, kind in members]}))
    else:
        for name, kind in members:
            print(f"{kind:6} {name}")
        print(f"{len(members)} members")
    return EXIT_OK


def _init(args: argparse.Namespace) -> int:
    """Create the library in an empty database, or bring an existing one's roles up to date."""
    try:
        database = Database(args.url)
    except NotALibrary:  # an empty database (one holding anything else is refused by create)
        database = create_library(args.url, sample=args.sample)
    with database:
        team_roles.set_up(database)
        count = SkillRepository(database).count()
        print(
            f"team library ready at {database.location}: {count} skills;"
            f" roles {team_roles.HUMAN_ROLE} and {team_roles.AGENT_ROLE}"
        )
    print("add people and agents with: skillstudio team grant URL NAME --human | --agent")
    return EXIT_OK
