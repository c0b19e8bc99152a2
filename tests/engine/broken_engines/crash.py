"""Crashes (exit 3, traceback on stderr) when it reaches game CRASH_AT (argv[1], default 3)."""

import sys

import _fake

CRASH_AT = int(sys.argv[1]) if len(sys.argv) > 1 else 3


def before(game, line):
    if game == CRASH_AT:
        sys.stderr.write(f"fake engine: simulating a crash\nTraceback: boom at game {game}\n")
        sys.stderr.flush()
        sys.exit(3)
    return line


_fake.hello()
_fake.play(_fake.read_job(), before)
