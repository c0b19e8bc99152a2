"""Hangs forever at game HANG_AT (argv[1]), after starting a child process that hangs too.

The child's pid goes to the file named in argv[2], so a test can check that the whole process
group was killed, not just this process.
"""

import subprocess
import sys
import time

import _fake

HANG_AT = int(sys.argv[1]) if len(sys.argv) > 1 else 2
PID_FILE = sys.argv[2] if len(sys.argv) > 2 else None


def before(game, line):
    if game == HANG_AT:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        if PID_FILE:
            with open(PID_FILE, "w") as handle:
                handle.write(str(child.pid))
        sys.stderr.write(f"fake engine: stuck on game {game}\n")
        sys.stderr.flush()
        while True:
            time.sleep(60)
    return line


_fake.hello()
_fake.play(_fake.read_job(), before)
