"""A `verify --executor processes:2` killed with -9 leaves no worker processes behind."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skillstudio.library import create_library

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc for child processes")


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, stack = set(), [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.add(child)
            stack.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_workers_end_when_verify_is_killed(tmp_path: Path) -> None:
    library = tmp_path / "lib.db"
    create_library(library, sample=True).close()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "skillstudio.entry",
            "verify",
            "--db",
            str(library),
            "--games",
            "400",
            "--opponent",
            "IC Default Hard",
            "--executor",
            "processes:2",
            "--chunk",
            "5",
            "--quiet",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        workers: set[int] = set()
        while time.monotonic() < deadline and len(workers) < 2:
            workers = _descendants(process.pid)
            time.sleep(0.2)
        assert len(workers) >= 2, "the process pool never started"
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(pid) for pid in workers):
            time.sleep(0.2)
        assert not any(_alive(pid) for pid in workers), "worker processes outlived a kill -9 of verify"
    finally:
        if process.poll() is None:
            process.kill()
        for pid in _descendants(process.pid):
            with contextlib.suppress(OSError):  # already gone
                os.kill(pid, signal.SIGKILL)
