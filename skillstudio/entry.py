"""The ``skillstudio`` command: a CLI verb runs headless; no verb (or ``gui``) opens the app.

Kept apart from :mod:`skillstudio.cli` so the CLI never imports Qt, not even lazily.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from skillstudio.cli.main import build_parser, run


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command in (None, "gui"):
        from skillstudio.gui.app import main as gui_main

        return gui_main(db=getattr(args, "db", None))
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
