"""A PostgreSQL server for the test session: CI's, or a throwaway cluster started here.

``SKILLSTUDIO_TEST_POSTGRES_URL`` (a superuser's URL, e.g. CI's server) is used as it is. Else,
when ``initdb`` and ``pg_ctl`` are found (PATH, /usr/local/bin, /usr/lib/postgresql/*/bin), a
cluster is made in a temporary folder, listening on 127.0.0.1 on a free port, run as the
``postgres`` user when the tests run as root (PostgreSQL refuses root), and stopped when the
session ends (or the interpreter exits). Only without the binaries are the tests skipped, and
not even then under ``SKILLSTUDIO_REQUIRE_POSTGRES`` (CI): there they fail. Benchmarks start the
same cluster, optionally in a folder of their own that is kept between runs
(``start_server(folder)``: a loaded million-skill library takes minutes to load).

Each test gets a database of its own, copied from a template that already holds an empty
library (``CREATE DATABASE ... TEMPLATE``): a few milliseconds instead of running the DDL.
"""

from __future__ import annotations

import atexit
import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from sqlalchemy.engine import make_url

URL_VARIABLE = "SKILLSTUDIO_TEST_POSTGRES_URL"
REQUIRED_VARIABLE = "SKILLSTUDIO_REQUIRE_POSTGRES"  # set by .ci/run: no server fails the run, never skips
PASSWORD_ROLE = "skillstudio_password_role"  # our cluster asks this role for a password
_BINARY_FOLDERS = ("/usr/local/bin", *sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True))


def find_binaries() -> tuple[str, str] | None:
    """(initdb, pg_ctl), or None when PostgreSQL's server binaries are not installed."""
    for folder in (None, *_BINARY_FOLDERS):
        initdb = shutil.which("initdb", path=folder)
        pg_ctl = shutil.which("pg_ctl", path=folder)
        if initdb and pg_ctl:
            return initdb, pg_ctl
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class PostgresServer:
    """A server the tests may create and drop databases on; ``url(name)`` for SQLAlchemy."""

    admin_url: str  # postgresql+psycopg://user@host:port/postgres
    data_dir: Path | None = None  # set when we started it
    pg_ctl: str | None = None
    _as_postgres: bool = False
    options: str = ""  # the server's -o options (a restart passes them again)
    _counter: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _template: str | None = None  # a database holding an empty library, copied for each test
    keep: bool = False  # the cluster's folder stays when stopped (a benchmark's, given by its caller)

    def url(self, database: str) -> str:
        return make_url(self.admin_url).set(database=database).render_as_string(hide_password=False)

    def _admin(self) -> psycopg.Connection[tuple[object, ...]]:
        url = make_url(self.admin_url)
        return psycopg.connect(
            host=url.host,
            port=url.port,
            user=url.username,
            password=url.password,
            dbname=url.database or "postgres",
            autocommit=True,
        )

    def empty_database(self, *, locale: str | None = None) -> str:
        """A new database holding nothing, in ``locale`` (its collation and character classes)
        or the cluster's; its URL."""
        name = f"skillstudio_test_{os.getpid()}_{next(self._counter)}"
        in_locale = f" LC_COLLATE '{locale}' LC_CTYPE '{locale}'" if locale else ""
        with self._admin() as admin:
            admin.execute(f'CREATE DATABASE "{name}" TEMPLATE template0{in_locale}')
        return self.url(name)

    def library_database(self) -> str:
        """A new database holding an empty library (a copy of the template); its URL."""
        if self._template is None:
            self._make_template()
        name = f"skillstudio_test_{os.getpid()}_{next(self._counter)}"
        with self._admin() as admin:
            admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{self._template}"')
        return self.url(name)

    def _make_template(self) -> None:
        from skillstudio.store import Database

        template = f"skillstudio_template_{os.getpid()}"
        with self._admin() as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{template}"')
            admin.execute(f'CREATE DATABASE "{template}" TEMPLATE template0')
        Database(self.url(template), create=True).close()
        self._template = template

    def drop(self, url: str) -> None:
        name = make_url(url).database
        with self._admin() as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def pg_ctl_run(self, action: str) -> None:
        """``pg_ctl stop`` or ``start`` on a cluster we started (a server restart, for tests)."""
        assert self.data_dir is not None and self.pg_ctl is not None, "not our cluster"
        command = [self.pg_ctl, "-D", str(self.data_dir), "-l", str(self.data_dir.parent / "server.log"), "-w"]
        command += ["-m", "fast", "stop"] if action == "stop" else ["-o", self.options, "start"]
        done = subprocess.run(
            _as_postgres(command) if self._as_postgres else command, capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"pg_ctl {action} failed: {done.stderr.strip()}")

    def stop(self) -> None:
        """Stop a cluster we started and remove its folder unless it is kept (a no-op for CI's server)."""
        if self.data_dir is None or self.pg_ctl is None:
            return
        mode = "fast" if self.keep else "immediate"  # a kept cluster shuts down cleanly
        command = [self.pg_ctl, "-D", str(self.data_dir), "-m", mode, "-w", "stop"]
        subprocess.run(_as_postgres(command) if self._as_postgres else command, capture_output=True, check=False)
        if not self.keep:
            shutil.rmtree(self.data_dir.parent, ignore_errors=True)
        self.data_dir = None


def _as_postgres(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command]


def start_server(folder: Path | None = None) -> PostgresServer | str:
    """The session's server, or why there is none (the reason a skip names). ``folder``: the
    cluster lives there and is kept when stopped (one made there before is started again)."""
    explicit = os.environ.get(URL_VARIABLE, "").strip()
    if explicit and folder is None:
        return PostgresServer(explicit)
    binaries = find_binaries()
    if binaries is None:
        folders = ", ".join(("PATH", *_BINARY_FOLDERS))
        return f"PostgreSQL's initdb and pg_ctl were not found ({folders}) and {URL_VARIABLE} is not set"
    initdb, pg_ctl = binaries
    as_postgres = os.geteuid() == 0
    base = Path(tempfile.mkdtemp(prefix="skillstudio-pg-")) if folder is None else folder
    data_dir, socket_dir = base / "data", base / "socket"
    socket_dir.mkdir(parents=True, exist_ok=True)
    if as_postgres:
        shutil.chown(base, "postgres")
        shutil.chown(socket_dir, "postgres")

    def run(command: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            _as_postgres(command) if as_postgres else command, capture_output=True, text=True, check=False
        )

    if not (data_dir / "PG_VERSION").exists():
        encoding = ["-E", "UTF8", "--locale=C.UTF-8"]
        made = run([initdb, "-D", str(data_dir), "-U", "postgres", "--auth=trust", *encoding, "-N"])
        if made.returncode != 0:
            if folder is None:
                shutil.rmtree(base, ignore_errors=True)
            raise RuntimeError(f"initdb failed: {made.stderr.strip() or made.stdout.strip()}")
        # One role must give a password (the credentials tests); everyone else is trusted.
        hba = data_dir / "pg_hba.conf"
        hba.write_text(f"host all {PASSWORD_ROLE} 127.0.0.1/32 scram-sha-256\n" + hba.read_text())
    port = _free_port()
    options = (
        f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={socket_dir}"
        " -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
    )
    server = PostgresServer(
        f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres",
        data_dir,
        pg_ctl,
        as_postgres,
        options,
        keep=folder is not None,
    )
    atexit.register(server.stop)
    started = run([pg_ctl, "-D", str(data_dir), "-l", str(base / "server.log"), "-o", options, "-w", "start"])
    if started.returncode != 0:
        log = (base / "server.log").read_text(errors="replace") if (base / "server.log").exists() else ""
        server.stop()
        raise RuntimeError(f"pg_ctl start failed: {started.stderr.strip()} {log[-2000:]}")
    return server


__all__ = ["REQUIRED_VARIABLE", "URL_VARIABLE", "PostgresServer", "find_binaries", "start_server"]
