"""What the browser is looking at, as one evented model (napari's models, Anki's browser).

The main window owns one :class:`BrowserState`. Every panel (table, filters, detail pane,
dashboard, retrieval preview, editors) takes it in its constructor and subscribes to the
events it needs; no panel reaches into another. It holds:

- the repository: the open library as the current user. ``library_opened`` fires when another
  library is opened (per-library state must be dropped), ``repository_changed`` for that and
  when only the user name changes (writes must go out as the new actor);
- the query and the selection (ids, plus the current one);
- the busy state: how many background operations run, and what the latest is called;
- ``library_changed``: every committed write in this process, typed (``LibraryChange``) and
  delivered on the GUI thread, whichever thread wrote it;
- ``message``: a line for the status bar, from whichever panel has something to say.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal

from skillstudio.gui.workers import Tasks
from skillstudio.store import LibraryChange, SkillQuery, SkillRepository

STATUS_TIMEOUT_MS = 8_000


class BrowserState(QObject):
    repository_changed = Signal(object)  # SkillRepository
    library_opened = Signal(object)  # SkillRepository of a different library than before
    query_changed = Signal(object)  # SkillQuery
    selection_changed = Signal(object)  # tuple[str, ...], in table order
    current_changed = Signal(object)  # str | None: the skill the detail pane shows
    busy_changed = Signal(bool)
    library_changed = Signal(object)  # LibraryChange, on the GUI thread
    message = Signal(str, int)  # status-bar text, milliseconds to show it (0: until replaced)
    _changed_elsewhere = Signal(object)  # LibraryChange from the writing thread, queued to ours

    def __init__(self, repository: SkillRepository | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._repository: SkillRepository | None = None
        self._unsubscribe = lambda: None
        self._query = SkillQuery()
        self._selection: tuple[str, ...] = ()
        self._current: str | None = None
        self._busy: dict[int, str] = {}
        self._next_token = 0
        self.operations = Tasks(self, threads=1)  # writes run one at a time, in the order asked
        self._changed_elsewhere.connect(self.library_changed.emit, Qt.ConnectionType.QueuedConnection)
        if repository is not None:
            self.set_repository(repository)

    # --- the library -----------------------------------------------------------------------------

    @property
    def repository(self) -> SkillRepository | None:
        return self._repository

    def require_repository(self) -> SkillRepository:
        if self._repository is None:
            raise RuntimeError("no library is open")
        return self._repository

    @property
    def library_path(self) -> Path | None:
        """The open library's file; None without one or for a team library (it has none)."""
        if self._repository is None or self._repository.database.dialect != "sqlite":
            return None
        return self._repository.database.path

    def set_repository(self, repository: SkillRepository) -> None:
        """Show ``repository``: another library (``library_opened``) or another user name."""
        previous = self._repository
        other_library = previous is None or previous.database is not repository.database
        if other_library:
            self._unsubscribe()
            self._unsubscribe = repository.database.changes.subscribe(self._changed_elsewhere.emit)
            self._query = SkillQuery()
            self._selection = ()
            self._current = None
        self._repository = repository
        self.repository_changed.emit(repository)
        if other_library:
            self.library_opened.emit(repository)

    def close(self) -> None:
        """Stop listening to the library (the window closes): views get no more changes."""
        self._unsubscribe()
        self._unsubscribe = lambda: None

    # --- query and selection ---------------------------------------------------------------------

    @property
    def query(self) -> SkillQuery:
        return self._query

    def set_query(self, query: SkillQuery) -> None:
        query = replace(query, offset=0, limit=None)  # the browser shows every match
        if query != self._query:
            self._query = query
            self.query_changed.emit(query)

    @property
    def selection(self) -> tuple[str, ...]:
        return self._selection

    @property
    def current(self) -> str | None:
        return self._current

    def set_selection(self, skill_ids: Sequence[str], current: str | None = None) -> None:
        selection = tuple(dict.fromkeys(skill_ids))
        if selection != self._selection:
            self._selection = selection
            self.selection_changed.emit(selection)
        if current != self._current:
            self._current = current
            self.current_changed.emit(current)

    # --- busy ------------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return bool(self._busy)

    @property
    def busy_text(self) -> str:
        """What the latest running operation is called ("" when idle)."""
        return next(reversed(self._busy.values()), "")

    def begin_busy(self, text: str) -> int:
        self._next_token += 1
        self._busy[self._next_token] = text
        if len(self._busy) == 1:
            self.busy_changed.emit(True)
        return self._next_token

    def end_busy(self, token: int) -> None:
        if self._busy.pop(token, None) is not None and not self._busy:
            self.busy_changed.emit(False)

    # --- messages --------------------------------------------------------------------------------

    def say(self, text: str, timeout_ms: int = STATUS_TIMEOUT_MS) -> None:
        self.message.emit(text, timeout_ms)


__all__ = ["BrowserState", "LibraryChange"]
