"""The ``skillstudio`` command: a CLI verb runs headless; no verb (or ``gui``) opens the app.

Kept apart from :mod:`skillstudio.cli` so the CLI never imports Qt, not even lazily; and the app
starts without importing the CLI (a second of imports it does not need).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

APP_COMMAND = "gui"


def app_library(argv: Sequence[str]) -> tuple[bool, str | None]:
    """Whether ``argv`` only opens the app (nothing, ``gui``, ``--db PATH``), and the --db it names.

    Anything else (a verb, --help, --version, a mistake) is left to the CLI's parser."""
    words = list(argv)
    if words[:1] == [APP_COMMAND]:
        words = words[1:]
    if not words:
        return True, None
    if len(words) == 2 and words[0] == "--db" and not words[1].startswith("-"):
        return True, words[1]
    if len(words) == 1 and words[0].startswith("--db="):
        return True, words[0].removeprefix("--db=")
    return False, None


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    opens_app, db = app_library(arguments)
    if not opens_app:
        from skillstudio.cli.main import build_parser, run

        args = build_parser().parse_args(arguments)
        if args.command not in (None, APP_COMMAND):
            return run(args)
        db = getattr(args, "db", None)  # the app's arguments, spelled in another order
    from skillstudio.gui.app import main as gui_main

    return gui_main(db=db)


if __name__ == "__main__":
    sys.exit(main())
