"""Why an input from outside was refused: every problem, each naming its file (entry) and field."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from skillstudio.model import Issue, ValidationError


class PackageError(ValidationError):
    """An input was refused; nothing was written. ``issues`` name ``file: field`` and the reason."""

    def __init__(self, issues: Iterable[Issue], *, context: str = "") -> None:
        super().__init__(issues, context=context)


def refuse(where: str, message: str, *, context: str = "") -> PackageError:
    return PackageError([Issue(where, message)], context=context)


def path_name(path: Path) -> str:
    """How a file or folder from outside is named in messages, labels and origins: its own
    name, also when it was given as ``.`` or ``..`` (whose ``Path.name`` is '' and '..')."""
    name = path.name
    return name if name not in ("", "..") else path.resolve().name


def in_file(entry: str, path: str) -> str:
    """``skills/x.json: body.plan`` style location for an issue inside one entry."""
    return f"{entry}: {path}" if path else entry
