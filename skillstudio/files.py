"""Writing a file whole or not at all: the one way SkillStudio replaces a file it owns."""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path


def write_atomically(path: Path, data: bytes, *, mode: int = 0o666) -> None:
    """Write ``data`` to ``path`` whole or not at all (:func:`replace_atomically`)."""
    replace_atomically(path, lambda temp: temp.write_bytes(data), mode=mode)


def replace_atomically(path: Path, fill: Callable[[Path], object], *, mode: int = 0o666) -> None:
    """Make ``path`` what ``fill`` writes, whole or not at all: ``fill`` writes a new, empty
    temporary file beside ``path`` (it is given its name), which is then flushed to disk and
    renamed over ``path``. A crash never leaves half a file, and a reader holding the old file
    open keeps reading the old one. If ``fill`` raises, the temporary file is removed and
    ``path`` is left as it was.

    A new file is created with ``mode`` less the user's umask, as a plain ``open`` would (0666:
    an exported package others can read; 0o600 for a settings file); a file replaced keeps its
    own mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        kept_mode: int | None = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        kept_mode = None
    temp = path.parent / f".{path.name}.{secrets.token_hex(8)}.tmp"
    os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), mode))
    try:
        fill(temp)
        with temp.open("rb+") as stream:
            os.fsync(stream.fileno())
        if kept_mode is not None:
            os.chmod(temp, kept_mode)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


__all__ = ["replace_atomically", "write_atomically"]
