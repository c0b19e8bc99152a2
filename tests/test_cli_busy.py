"""The CLI when another program holds the library's write lock: it says it waits, then says busy."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from skillstudio.cli import main as cli_main
from skillstudio.cli.main import main as cli
from skillstudio.library import create_library


def test_a_write_waits_for_another_writer_and_says_so(tmp_path: Path, capsys, monkeypatch) -> None:
    path = tmp_path / "lib.db"
    create_library(path, sample=True).close()
    # The lock is let go once the CLI has said it waits, not after a fixed time: on a busy
    # machine embedding took so long that the write came after a timed release, with no wait.
    noticed = threading.Event()
    notice = cli_main._WaitNotice.__call__

    def noticing(self: cli_main._WaitNotice, waited: float) -> None:
        notice(self, waited)
        if self.said:
            noticed.set()

    monkeypatch.setattr(cli_main._WaitNotice, "__call__", noticing)
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    released = threading.Thread(target=lambda: (noticed.wait(60), holder.execute("ROLLBACK")))
    released.start()
    try:
        assert cli(["embed", "--db", str(path), "--quiet"]) == 0  # writes vectors: must wait
    finally:
        released.join()
        holder.close()
    assert noticed.is_set()
    assert "waiting for the library (another program is writing)" in capsys.readouterr().err


def test_a_write_blocked_past_the_bound_says_busy_not_unusable(tmp_path: Path, capsys, monkeypatch) -> None:
    path = tmp_path / "lib.db"
    create_library(path, sample=True).close()
    monkeypatch.setenv("SKILLSTUDIO_LOCK_WAIT", "0.5")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        assert cli(["list", "--db", str(path), "--limit", "2"]) == 0  # reads never wait for writers
        capsys.readouterr()
        assert cli(["embed", "--db", str(path), "--quiet"]) == 1
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    err = capsys.readouterr().err
    assert "is busy" in err and "not a usable" not in err and "Traceback" not in err
