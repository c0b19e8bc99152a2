"""What the skill editor's pages share: each is built from the editing session and shows what
the session announces (as napari's layer controls follow their layer)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from skillstudio.curation.session import EditSession, Emitter
from skillstudio.gui.browser_state import BrowserState

T = TypeVar("T")


def subscribe(owner: QObject, emitter: Emitter[T], callback: Callable[[T], None]) -> None:
    """Call ``callback`` on ``emitter``'s events while ``owner`` lives (the session may outlive
    its views, e.g. in a script holding it)."""
    disconnect = emitter.connect(callback)
    owner.destroyed.connect(lambda *_: disconnect())


class EditorPage(QWidget):
    """A page of the editor. ``edited(key, mergeable)`` reports a person's edit of the field at
    ``key`` (never while the page shows the session's form); the editor then reads the pages."""

    edited = Signal(str, bool)

    def __init__(self, state: BrowserState, session: EditSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.session = session
