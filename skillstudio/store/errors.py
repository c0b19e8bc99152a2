"""What can go wrong with a library, each error carrying a message a user can act on.

Every store error is defined here and derives from :class:`LibraryError`, so a front end can
catch the one base and show ``str(error)``.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

from skillstudio.model import Issue, ValidationError

if TYPE_CHECKING:
    from skillstudio.model import Skill


class LibraryError(Exception):
    """Base of every store error; ``str(error)`` is a complete, user-facing sentence."""


class LibraryNotFound(LibraryError):
    pass


class NotALibrary(LibraryError):
    """The file exists but is not a SQLite database holding D057's skill tables.

    Raised after a read-only look at the file: a refused file is left exactly as it was.
    """


class LibraryTooNew(LibraryError):
    pass


class LibraryTooOld(LibraryError):
    """A team library behind this SkillStudio's schema, which only its owner may upgrade."""


class StorageError(LibraryError):
    """SQLite failed: the file is damaged, the disk is full, or (LibraryBusy) another writer
    held the lock past our wait."""


class LibraryBusy(StorageError):
    """Another program held the library's write lock (SQLITE_BUSY) for longer than we waited.

    Nothing was changed by the operation that gave up; trying it again later is safe. The file
    is fine: this is never a sign of a damaged or foreign database.
    """

    def __init__(
        self, path: object, waited: float, *, detail: str = "database is locked", adjustable: bool = False
    ) -> None:
        self.path = path
        self.waited = waited  # seconds
        hint = " (SKILLSTUDIO_LOCK_WAIT sets how many seconds to wait)" if adjustable else ""
        super().__init__(
            f"the library {path} is busy: another program is writing to it; gave up after "
            f"waiting {waited:.1f} s ({detail}); that step changed nothing, try again once it is done{hint}"
        )


class SkillNotFound(LibraryError, LookupError):
    def __init__(self, skill_id: str, *, in_trash: bool = False, ambiguous: bool = False) -> None:
        self.skill_id = skill_id
        if ambiguous:
            super().__init__(f"several skills have ids starting {skill_id!r}; give more of the id")
            return
        where = "in the trash" if in_trash else "in this library"
        super().__init__(f"no skill with id {skill_id!r} {where}")


class SkillExists(LibraryError):
    def __init__(self, skill_id: str, *, in_trash: bool = False) -> None:
        self.skill_id = skill_id
        detail = " (it is in the trash: restore it or empty the trash first)" if in_trash else ""
        super().__init__(f"a skill with id {skill_id!r} already exists{detail}")


class ConflictError(LibraryError):
    """An update was based on a version of the skill that is no longer the stored one."""

    def __init__(self, yours: Skill, theirs: Skill, *, read_version: int | None = None) -> None:
        self.yours = yours  # what the caller wanted to store (for a refinement: the new skill)
        self.theirs = theirs  # what the library holds now
        read = yours.version if read_version is None else read_version
        super().__init__(
            f"skill {theirs.id!r} was changed by someone else since you read it "
            f"(you read version {read}, the library now holds version {theirs.version}); "
            "nothing was saved"
        )


class InvalidSkillData(LibraryError):
    """A write was refused because the skill's data is not valid (e.g. a dangling reference)."""

    def __init__(self, issues: list[Issue], *, context: str = "") -> None:
        self.issues = tuple(issues)
        super().__init__(str(ValidationError(issues, context=context)))


class InvalidStoredSkill(LibraryError):
    """A row in the database (often written by another program) does not hold a valid skill."""

    def __init__(self, skill_id: str, error: ValidationError) -> None:
        self.skill_id = skill_id
        self.issues = error.issues
        super().__init__(f"skill {skill_id!r} in the database is not valid: {error}")

    @property
    def reason(self) -> str:
        """Why the row was skipped, in one line, for reports that name the skill beside it."""
        return "not a valid skill: " + "; ".join(str(issue) for issue in self.issues)


class ReviewNotAllowed(LibraryError, PermissionError):
    """Only a person may review (any review state), delete, trash or purge: agents and system
    actors are refused by the repository itself, whatever front end they come through."""


class ReviewRefused(LibraryError):
    """A review step that cannot be recorded as asked (a rejection without a reason, a decision
    that can no longer be taken back); nothing was written, and the message says what to do."""


class RunNotFound(LibraryError):
    def __init__(self, run_id: str) -> None:
        super().__init__(f"no verification run {run_id!r}")
        self.run_id = run_id


class RunClaimed(LibraryError):
    """Another runner holds the run (and its claim is not stale)."""

    def __init__(self, run_id: str, pid: int | None, host: str | None, since: str | None) -> None:
        where = "" if not host or host == socket.gethostname() else f" on {host}"
        super().__init__(f"run {run_id} is being resumed by process {pid}{where} since {since}")
        self.run_id, self.pid, self.host, self.since = run_id, pid, host, since


class TeamRoleError(LibraryError, ValueError):
    """A team member's role name or kind that cannot be granted; the message says why."""
