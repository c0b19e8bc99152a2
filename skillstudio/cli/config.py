"""``skillstudio config get|set|unset [--library]``: the studio settings (docs/cli.md).

Without ``--library`` ``set``/``unset`` edit the user's ``settings.yaml`` and open no library;
with it they edit the library's own overrides (stored in it, shared by everyone who opens it).
``get`` shows the value in force for the library and where it comes from (default, user,
library). A bad value is refused with its key path and the reason; nothing is written then.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from skillstudio.cli import output
from skillstudio.library import open_library
from skillstudio.model import Issue, ValidationError
from skillstudio.store import Database, SkillRepository
from skillstudio.store.settings import (
    KEYS,
    SETTINGS,
    EffectiveSettings,
    effective_settings,
    load_user_values,
    parse_value,
    save_user_values,
    to_values,
)

EXIT_OK, EXIT_FAILED = 0, 1
JSON_VERSION = 1


def add_commands(commands: Any, common: argparse.ArgumentParser, as_json: argparse.ArgumentParser) -> None:
    config = commands.add_parser(
        "config", parents=[common], help="the studio settings: policy thresholds, prune limits"
    )
    verbs = config.add_subparsers(dest="config_command", metavar="VERB", required=True)
    scope = argparse.ArgumentParser(add_help=False)
    scope.add_argument("--library", action="store_true", help="this library's own settings (stored in it)")
    get = verbs.add_parser(
        "get", parents=[common, as_json, scope], help="the settings in force and where they come from"
    )
    get.add_argument("key", metavar="KEY", nargs="?", help="one key, e.g. thresholds.proven (default: all)")
    put = verbs.add_parser("set", parents=[common, scope], help="set one key (checked first)")
    put.add_argument("key", metavar="KEY")
    put.add_argument("value", metavar="VALUE", help="read as YAML: 0.75, true, null, established, IC Default Hard")
    unset = verbs.add_parser("unset", parents=[common, scope], help="drop a key from a layer: the one below applies")
    unset.add_argument("key", metavar="KEY")


def needs_library(args: argparse.Namespace) -> bool:
    """``set``/``unset`` of the user's file touch no library (it may not even exist yet)."""
    return bool(args.config_command == "get" or args.library)


def run(args: argparse.Namespace) -> int:
    if not needs_library(args):
        return _edit_user(args)
    with open_library(getattr(args, "db", None)) as database:
        if args.config_command == "get":
            return _get(args, database)
        return _edit_library(args, database)


def _edit_user(args: argparse.Namespace) -> int:
    _known(args.key, allow_unknown=args.config_command == "unset")
    # unset reads the file as it is, so a bad value can be removed (what remains is checked)
    values = load_user_values(checked=args.config_command == "set")
    if args.config_command == "set":
        values[args.key] = parse_value(args.value)
    else:
        values.pop(args.key, None)
    path = save_user_values(values)
    print(f"{args.key} {'set' if args.config_command == 'set' else 'unset'} in {path}")
    return EXIT_OK


def _edit_library(args: argparse.Namespace, database: Database) -> int:
    _known(args.key, allow_unknown=args.config_command == "unset")
    settings = SkillRepository(database).settings
    if args.config_command == "set":
        settings.set(args.key, parse_value(args.value))
    else:
        settings.unset(args.key)
    print(f"{args.key} {'set' if args.config_command == 'set' else 'unset'} in the library {database.location}")
    return EXIT_OK


def _known(key: str, *, allow_unknown: bool) -> None:
    """An unknown key is refused before anything is read or written (unset may remove one
    another program stored)."""
    if key not in KEYS and not allow_unknown:
        raise ValidationError([Issue(key, f"unknown setting; the settings are {', '.join(KEYS)}")], context="config")


def _get(args: argparse.Namespace, database: Database) -> int:
    effective = effective_settings(database)
    if args.key is not None:
        _known(args.key, allow_unknown=False)
    keys = [args.key] if args.key else [s.key for s in SETTINGS]
    if args.library:
        keys = [k for k in keys if k in effective.library]
    rows = _rows(effective, keys)
    if args.json:
        print(
            output.dump_json(
                {
                    "format": "skillstudio.settings",
                    "version": JSON_VERSION,
                    "user_file": str(effective.user_path),
                    "library": database.location,
                    "settings": rows,
                }
            )
        )
        return EXIT_OK
    if args.key and not args.library:
        print(_shown(rows[0]["value"]))
        return EXIT_OK
    if not rows:
        print("this library overrides no setting", file=sys.stderr)
        return EXIT_OK
    width = max(len(row["key"]) for row in rows)
    for row in rows:
        print(f"{row['key']:<{width}}  {_shown(row['value']):<16}  ({row['source']})")
    return EXIT_OK


def _rows(effective: EffectiveSettings, keys: list[str]) -> list[dict[str, Any]]:
    values = to_values(effective.settings)
    return [{"key": key, "value": values[key], "source": effective.source(key), "help": KEYS[key].help} for key in keys]


def _shown(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


__all__ = ["add_commands", "needs_library", "run"]
