"""The CLI when another program holds the library's write lock: it says it waits, then says busy."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from skillstudio.cli.main import main as cli
from skillstudio.library import create_library


def test_a_write_waits_for_another_writer_and_says_so(tmp_path: Path, capsys, monkeypatch) -> None:
    path = tmp_path / "lib.db"
    create_library(path, sample=True).close()
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    released = threading.Timer(1.8, lambda: holder.execute("ROLLBACK"))
    released.start()
    try:
        started = time.monotonic()
        assert cli(["embed", "--db", str(path), "--quiet"]) == 0  # writes vectors: must wait
        assert time.monotonic() - started >= 1.5
    finally:
        released.join()
        holder.close()
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
