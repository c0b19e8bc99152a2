"""What changed in a library, announced after each committed write (as Anki's operations do).

Views subscribe and refresh the rows named in a :class:`LibraryChange` instead of reloading
everything. Callbacks run on the writing thread; the Qt layer re-emits them as queued signals.
Changes made by other processes are not announced here: watch ``Database.data_version()``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LibraryChange:
    action: str  # the audit action: skill.create, skill.update, skill.delete, ...
    skill_ids: tuple[str, ...]
    actor: str


Listener = Callable[[LibraryChange], None]


class ChangeBus:
    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` after every committed change; returns a function that unsubscribes."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def emit(self, change: LibraryChange) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(change)
            except Exception:  # a broken view must not turn a committed write into an error
                log.exception("a library change listener failed")
