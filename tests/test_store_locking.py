"""Opening is read-only until a write is needed; busy is reported as busy; writers wait, boundedly.

Every lock here is a real SQLite lock held by another connection (a thread or another process);
nothing about SQLite is mocked.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

from skillstudio.cli.main import main as cli
from skillstudio.store import Actor, Database, LibraryTooNew, NotALibrary, SkillRepository, StorageError, errors
from skillstudio.store.migrations import d057_statements
from tests.factories import ai_skill, content_skill

# Another program: takes the write lock, writes, says so, and holds it until its stdin closes.
HOLDER = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN " + sys.argv[2])
connection.execute("UPDATE skills SET use_count = use_count + 1")
print("holding", flush=True)
sys.stdin.read()
connection.execute("ROLLBACK")
"""


@contextmanager
def another_process_writing(path: Path, begin: str = "IMMEDIATE") -> Iterator[None]:
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path), begin], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as process:
        try:
            assert process.stdout is not None and process.stdout.readline().strip() == "holding"
            yield
        finally:
            assert process.stdin is not None
            process.stdin.close()  # the other program rolls back and exits
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def beside(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p != path)


@pytest.fixture
def library(tmp_path: Path) -> Path:
    path = tmp_path / "library.db"
    with Database(path, create=True) as database:
        SkillRepository(database, Actor("tester")).create(ai_skill())
    return path


def engine_file(path: Path) -> Path:
    """What an engine writes: D057's tables only, in WAL mode (D034), no SkillStudio tables."""
    with closing(sqlite3.connect(path)) as connection:
        connection.execute("PRAGMA journal_mode = WAL")
        for statement in d057_statements().values():
            connection.execute(statement)
        connection.commit()
    return path


# --- 1. a file that is not a library is checked read-only and left exactly as it was --------------


def _other_app(path: Path, journal: str) -> None:
    with closing(sqlite3.connect(path)) as connection:
        connection.execute(f"PRAGMA journal_mode = {journal}")
        connection.execute("CREATE TABLE replays (id INTEGER PRIMARY KEY, map TEXT)")
        connection.execute("CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT)")
        connection.execute("INSERT INTO replays (map) VALUES ('dunes')")
        connection.commit()


def _no_tables(path: Path) -> None:
    with closing(sqlite3.connect(path)) as connection:
        connection.execute("CREATE TABLE scratch (a)")
        connection.execute("DROP TABLE scratch")
        connection.commit()


def _wrong_skills(path: Path) -> None:
    with closing(sqlite3.connect(path)) as connection:
        connection.execute("CREATE TABLE skills (id TEXT, name TEXT)")
        connection.commit()


def _newer_library(path: Path) -> None:
    Database(path, create=True).close()
    with closing(sqlite3.connect(path)) as connection:
        connection.execute("PRAGMA journal_mode = DELETE")
        connection.execute("INSERT INTO studio_schema_migrations VALUES (99, 'x', 'from the future')")
        connection.commit()


@pytest.mark.parametrize(
    ("make", "refusal", "message"),
    [
        (lambda p: _other_app(p, "delete"), NotALibrary, "has tables replays, settings but no D057 'skills' table"),
        (lambda p: _other_app(p, "wal"), NotALibrary, "has tables replays, settings but no D057 'skills' table"),
        (_no_tables, NotALibrary, "has no tables"),
        (_wrong_skills, NotALibrary, "lacks D057's column(s)"),
        (_newer_library, LibraryTooNew, "schema 99"),
    ],
    ids=["other-app", "other-app-wal", "no-tables", "wrong-skills-table", "newer-skillstudio"],
)
def test_a_refused_file_is_left_byte_identical(tmp_path: Path, make, refusal, message: str) -> None:
    path = tmp_path / "some.db"
    make(path)
    before, files_before = sha256(path), beside(path)
    assert files_before == []
    with pytest.raises(refusal) as caught:
        Database(path)
    assert str(path) in str(caught.value)
    assert message in str(caught.value)
    assert sha256(path) == before
    assert beside(path) == []  # no -wal, -shm or -journal left behind


# --- 2. reads never take the write lock ---------------------------------------------------------


@pytest.mark.parametrize("begin", ["IMMEDIATE", "EXCLUSIVE"])
def test_reading_while_another_process_writes_succeeds_without_waiting(library: Path, begin: str) -> None:
    with another_process_writing(library, begin):
        start = time.monotonic()
        with Database(library) as database:
            repository = SkillRepository(database)
            assert repository.count() == 1
            assert repository.facets.stats().total == 1
            assert len(repository.query().ids) == 1
            database.data_version()
        assert time.monotonic() - start < 1.5  # well under busy_timeout (2 s): nothing waited


def test_cli_stats_and_list_work_while_another_process_writes(
    library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with another_process_writing(library):
        assert cli(["stats", "--db", str(library)]) == 0
        assert cli(["list", "--db", str(library), "--json"]) == 0
    assert "locked" not in capsys.readouterr().err


# --- 3. busy is reported as busy; writers wait with backoff, boundedly ------------------------------


def test_a_writer_waits_for_the_lock_and_reports_that_it_waits(library: Path) -> None:
    locked = threading.Event()

    def hold() -> None:
        with closing(sqlite3.connect(library, isolation_level=None, check_same_thread=False)) as other:
            other.execute("BEGIN IMMEDIATE")
            other.execute("UPDATE skills SET use_count = use_count + 1")
            locked.set()
            time.sleep(1.5)
            other.execute("COMMIT")

    with Database(library) as database:
        waits: list[float] = []
        database.on_wait = waits.append
        repository = SkillRepository(database, Actor("tester"))
        holder = threading.Thread(target=hold)
        holder.start()
        try:
            assert locked.wait(10)
            start = time.monotonic()
            created = repository.create(content_skill())
            elapsed = time.monotonic() - start
        finally:
            holder.join()
        assert repository.get(created.id) == created
        assert repository.count() == 2
    assert elapsed >= 1.0  # it really waited for the other writer's commit
    assert waits, "the wait was not reported"
    assert waits == sorted(waits) and 0 < waits[0] <= waits[-1] <= elapsed
    with closing(sqlite3.connect(library)) as connection:  # both writes landed
        assert connection.execute("SELECT use_count FROM skills WHERE id != ?", (created.id,)).fetchone()[0] >= 1


@pytest.mark.parametrize("how", ["environment", "argument"])
def test_a_writer_gives_up_after_the_configured_wait_with_library_busy(
    library: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    if how == "environment":
        monkeypatch.setenv("SKILLSTUDIO_LOCK_WAIT", "0.5")
        options = {}
    else:
        options = {"lock_wait": 0.5}
    with Database(library, **options) as database, another_process_writing(library):
        waits: list[float] = []
        database.on_wait = waits.append
        repository = SkillRepository(database, Actor("tester"))
        start = time.monotonic()
        with pytest.raises(StorageError) as caught:
            repository.create(content_skill())
        elapsed = time.monotonic() - start
    error = caught.value
    assert type(error).__name__ == "LibraryBusy"
    assert isinstance(error, errors.LibraryBusy)
    message = str(error)
    assert str(library) in message
    assert "busy" in message and "another program is writing" in message
    assert re.search(r"waiting 0\.[5-9] s", message), message
    assert "not a usable" not in message
    assert 0.5 <= error.waited < 1.5 and 0.5 <= elapsed < 1.5
    assert waits and waits[-1] < 0.5
    with Database(library) as database:
        assert SkillRepository(database).count() == 1  # nothing was written


def test_opening_a_file_that_needs_a_migration_waits_boundedly_then_says_busy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = engine_file(tmp_path / "gameplay.db")
    monkeypatch.setenv("SKILLSTUDIO_LOCK_WAIT", "0.3")
    with another_process_writing(path), pytest.raises(StorageError) as caught:
        Database(path)
    assert type(caught.value).__name__ == "LibraryBusy"
    assert "not a usable" not in str(caught.value) and str(path) in str(caught.value)
    with Database(path) as database:  # once the other program is done, the migration runs
        assert SkillRepository(database).count() == 0
    with closing(sqlite3.connect(path)) as connection:
        assert connection.execute("SELECT COUNT(*) FROM studio_schema_migrations").fetchone()[0] >= 1
