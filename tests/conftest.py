"""Shared fixtures. Qt runs offscreen: without a display it would abort the interpreter."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from skillstudio.library import create_library
from skillstudio.store import Actor, Database, SkillRepository, team_roles
from tests.libraries import BACKENDS, new_library
from tests.postgres_server import REQUIRED_VARIABLE, PostgresServer, start_server


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "sqlite_only(reason): the test is about SQLite files (WAL, file locks, PRAGMAs, damaged or old"
        " files); its postgresql run is skipped with the reason",
    )


@pytest.fixture(autouse=True)
def _isolated_user_library(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may touch the real user's library: point the default location into tmp."""
    home = tmp_path_factory.mktemp("data-home")
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    # ... nor read the developer's settings (engines.yaml, retrieval.yaml).
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config-home")))
    monkeypatch.delenv("SKILLSTUDIO_DB", raising=False)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """The session's PostgreSQL server (tests/postgres_server.py); skipped only without one."""
    server = start_server()
    if isinstance(server, str):
        if os.environ.get(REQUIRED_VARIABLE):  # CI: the PostgreSQL runs are not optional there
            pytest.fail(f"{REQUIRED_VARIABLE} is set but there is no PostgreSQL server: {server}")
        pytest.skip(server)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def team_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A team library holding the sample, with a human (alice) and an agent (bot-7)."""
    url = postgres_server.empty_database()
    with create_library(url, sample=True) as database:
        team_roles.set_up(database)
        team_roles.grant(database, "alice", "human")
        team_roles.grant(database, "bot-7", "agent")
    yield url
    postgres_server.drop(url)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The backend a store test runs on; every store test runs on both."""
    return str(request.param)


@pytest.fixture
def library_target(request: pytest.FixtureRequest, backend: str, tmp_path: Path) -> Iterator[str]:
    """Where a test's new, empty library is: a file path or a server database's URL."""
    with new_library(request, backend, tmp_path) as target:
        yield target


@pytest.fixture
def more_libraries(request: pytest.FixtureRequest, backend: str, tmp_path: Path) -> Iterator[Callable[[str], str]]:
    """``make(name)``: another new, empty library on the test's backend (for tests of several)."""
    with ExitStack() as stack:

        def make(name: str) -> str:
            folder = tmp_path / name
            folder.mkdir()
            return stack.enter_context(new_library(request, backend, folder))

        yield make


@pytest.fixture
def database(library_target: str) -> Iterator[Database]:
    with Database(library_target) as db:
        yield db


@pytest.fixture
def repository(database: Database) -> SkillRepository:
    return SkillRepository(database, Actor("tester"))
