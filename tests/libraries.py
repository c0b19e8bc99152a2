"""New, empty libraries on each backend, for the fixtures that run store tests on both."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from skillstudio.store import Database
from tests.postgres_server import PostgresServer

BACKENDS = ("sqlite", "postgresql")


@contextmanager
def new_library(request: pytest.FixtureRequest, backend: str, folder: Path) -> Iterator[str]:
    """A new, empty library on ``backend`` for as long as the block runs: a file in ``folder``,
    or a server database holding an empty library (its URL). A test marked ``sqlite_only`` is
    skipped on postgresql, with the marker's reason."""
    if backend == "sqlite":
        path = folder / "library.db"
        Database(path, create=True).close()
        yield str(path)
        return
    marker = request.node.get_closest_marker("sqlite_only")
    if marker is not None:
        pytest.skip(f"SQLite only: {marker.args[0] if marker.args else marker.kwargs.get('reason', '')}")
    server: PostgresServer = request.getfixturevalue("postgres_server")
    url = server.library_database()
    try:
        yield url
    finally:
        server.drop(url)


__all__ = ["BACKENDS", "new_library"]
