"""Finding, creating and opening libraries: the user's default one, the sample, given paths,
and the recently opened ones."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import platformdirs
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from skillstudio.library.sample import load_sample
from skillstudio.store import Actor, Database, LibraryError, SkillRepository, team_roles
from skillstudio.store.backends import is_server_url

ENV_VAR = "SKILLSTUDIO_DB"
APP_NAME = "SkillStudio"
SAMPLE_ACTOR = Actor("skillstudio-sample", "system")
RECENT_LIMIT = 8  # libraries remembered for File › Open Recent
# A URL's scheme: two characters at least, so that a Windows drive ("C://...") stays a path.
_URL_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]+)://")


def default_library_path() -> Path:
    """``library.db`` in the platform's per-user data folder (e.g. ~/.local/share/SkillStudio)."""
    return platformdirs.user_data_path(APP_NAME, appauthor=False) / "library.db"


def chosen_library_path(explicit: str | os.PathLike[str] | None) -> tuple[Path, bool]:
    """The path to open and whether the user chose it (``--db`` or $SKILLSTUDIO_DB)."""
    if explicit:
        return library_file(explicit), True
    from_env = os.environ.get(ENV_VAR, "").strip()
    if from_env:
        return library_file(from_env), True
    return default_library_path(), False


def library_file(named: str | os.PathLike[str]) -> Path:
    """The file a user named as a library file: a path, or a ``sqlite:///path`` URL (SQLAlchemy's
    spelling of one). Another URL is refused naming what SkillStudio opens, where it would
    otherwise be looked for as a file called "mysql:/..." (a server's URL is not a file; see
    is_server_url)."""
    text = os.fspath(named)
    scheme = _URL_SCHEME.match(text)
    if scheme is None:
        return Path(text).expanduser()
    if scheme.group(1).split("+", 1)[0].lower() == "sqlite":
        try:
            database = make_url(text).database
        except ArgumentError:
            database = None
        if database and database != ":memory:" and not database.startswith("file:"):
            return Path(database).expanduser()
        raise LibraryError(f"{text!r} names no library file; give its path, or sqlite:///path")
    # Only the scheme is repeated: the rest of a URL may hold a password.
    raise LibraryError(
        f"cannot open a {scheme.group(1)}:// library: SkillStudio opens library files (a path, or"
        " sqlite:///path) and team libraries on PostgreSQL (postgresql+psycopg://user@host/db)"
    )


def sample_library_path() -> Path:
    """A copy of the bundled sample, beside the user's library, made on first request."""
    path = platformdirs.user_data_path(APP_NAME, appauthor=False) / "sample-library.db"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        create_library(path, sample=True).close()
    return path


def open_library(
    explicit: str | os.PathLike[str] | None = None, *, on_wait: Callable[[float], None] | None = None
) -> Database:
    """Open the chosen library. Only the default library is created (from the sample) if missing;
    a path the user named must exist, so a typo never silently creates an empty library.
    ``on_wait`` hears how long a write has been waiting for another program's lock. A
    ``postgresql+psycopg://`` URL (``--db`` or $SKILLSTUDIO_DB) opens a team library on a server."""
    named = str(explicit) if explicit else os.environ.get(ENV_VAR, "").strip()
    if is_server_url(named):
        return Database(named, on_wait=on_wait)
    path, chosen = chosen_library_path(explicit)
    if not chosen and not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        create_library(path, sample=True).close()
    return Database(path, on_wait=on_wait)


def create_library(path: str | os.PathLike[str], *, sample: bool = False) -> Database:
    """A new library file, empty or holding the sample; never a half-made one.

    The library is built under a temporary name beside the target and renamed into place
    only when complete, so a failure (or a crash) leaves no file at ``path``. A
    ``postgresql+psycopg://`` URL sets up a library in that (existing, empty) server database.
    """
    if is_server_url(path):
        database = Database(path, create=True)
        try:
            if sample:
                fill_with_sample(database)
        except BaseException:
            database.close()
            raise
        return database
    target = library_file(path).absolute()
    if target.is_dir():  # an empty name is the current folder
        raise LibraryError(f"{target} is a folder; name the new library file, e.g. {target / 'skills.db'}")
    if target.exists():
        raise LibraryError(f"{target} already exists; choose a new file name")
    if not target.parent.is_dir():
        raise LibraryError(f"cannot create {target}: the folder {target.parent} does not exist")
    handle, temporary_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(handle)
    temporary = Path(temporary_name)
    temporary.unlink()
    try:
        database = Database(temporary, create=True)
        try:
            if sample:
                fill_with_sample(database)
        finally:
            database.close()  # the last close checkpoints the WAL into the main file
        os.replace(temporary, target)
    finally:
        for leftover in (temporary, *(temporary.with_name(temporary.name + s) for s in ("-wal", "-shm"))):
            leftover.unlink(missing_ok=True)
    return Database(target)


def fill_with_sample(database: Database) -> None:
    """Add the bundled sample library's skills, with their verification counts, in one write."""
    items = [(item.skill, item.verifications) for item in load_sample()]
    SkillRepository(database, SAMPLE_ACTOR).create_many(items, message="bundled sample library")


@dataclass(frozen=True)
class RecentLibrary:
    """A library opened before (a file's path or a team library's URL), and why it cannot be
    opened now (None: it can, as far as a look at the file tells; opening it still checks the
    rest; a server is not asked until the library is opened)."""

    location: str
    problem: str | None = None

    @property
    def path(self) -> Path | None:
        """The file, for a file library."""
        return None if is_server_url(self.location) else Path(self.location)

    @property
    def name(self) -> str:
        """What a menu shows first: the file's name, or the server database's name."""
        return self.path.name if self.path is not None else library_name(self.location)


def library_name(location: str) -> str:
    """A library's short name: its file's stem, or its server database's name."""
    if is_server_url(location):
        return make_url(location).database or location
    return Path(location).stem


def actor_for(database: Database, person: Actor) -> Actor:
    """Who writes to ``database``: on a team library, the login role the server records
    (team_roles); elsewhere ``person``, the app's user."""
    identity = team_roles.identity(database)
    if identity is None:
        return person
    role, kind = identity
    return Actor(role, "agent" if kind == "agent" else "human")


def unopenable_reason(path: Path) -> str | None:
    """Why ``path`` cannot be a library to open now, said for a person; None if the file is there."""
    if not path.parent.is_dir():
        return f"Its folder {path.parent} is gone."
    if not path.exists():
        return "The file is gone (deleted, moved or renamed)."
    if not path.is_file():
        return "This is not a file."
    if not os.access(path, os.R_OK):
        return "You may not read this file."
    return None


def recent_libraries(remembered: Sequence[str]) -> list[RecentLibrary]:
    """The remembered libraries (newest first), each with what stands in the way of opening it."""
    locations = [text for text in dict.fromkeys(remembered) if text][:RECENT_LIMIT]
    return [RecentLibrary(text, None if is_server_url(text) else unopenable_reason(Path(text))) for text in locations]


def without_password(location: str) -> str:
    """A team library's URL without any password in it (what SkillStudio may keep); a path as it is."""
    if not is_server_url(location):
        return location
    return make_url(location)._replace(password=None).render_as_string(hide_password=False)  # set() keeps a None


def remember_recent(remembered: Sequence[str], path: str | os.PathLike[str]) -> list[str]:
    """The remembered paths with ``path`` first (once), the oldest dropped past RECENT_LIMIT."""
    newest = without_password(str(path)) if is_server_url(str(path)) else str(Path(path))
    return [newest, *(text for text in dict.fromkeys(remembered) if text and text != newest)][:RECENT_LIMIT]
