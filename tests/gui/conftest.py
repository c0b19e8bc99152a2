"""What the GUI tests share: a sample library to copy, and answering modal dialogs.

Qt runs offscreen (tests/conftest.py). Waiting for background work goes through the views'
public state (``BrowserState.busy``, a loader's ``loading``), never through test-only hooks.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QWidget

from skillstudio.library import create_library


@pytest.fixture(scope="session")
def sample_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample library, built once; copy it before writing to it (see library_copy)."""
    path = tmp_path_factory.mktemp("sample") / "template.db"
    create_library(path, sample=True).close()
    return path


@pytest.fixture
def library_copy(tmp_path: Path, sample_file: Path) -> Path:
    library = tmp_path / "library.db"
    library.write_bytes(sample_file.read_bytes())
    return library


# --- answering modal dialogs from inside their exec() loop ----------------------------------------


@dataclass
class ModalAnswer:
    handled: list[str] = field(default_factory=list)  # class names of the dialogs answered
    errors: list[BaseException] = field(default_factory=list)

    def check(self) -> None:
        if self.errors:
            raise self.errors[0]
        assert self.handled, "no modal dialog appeared"


def answer_next_modal(action: Callable[[QWidget], None], *, timeout_s: float = 3.0) -> ModalAnswer:
    """Run ``action(dialog)`` on the next modal dialog, from inside its ``exec()`` loop.

    Call it *before* the code that opens the dialog. A dialog the action leaves open, or an
    action that raises, is closed, so a test can fail but never hang; ``check()`` re-raises.
    """
    answer = ModalAnswer()
    deadline = time.monotonic() + timeout_s

    def poll() -> None:
        modal = QApplication.activeModalWidget()
        if modal is not None and modal.isVisible():
            try:
                action(modal)
                answer.handled.append(type(modal).__name__)
            except BaseException as error:
                answer.errors.append(error)
                modal.close()
            QTimer.singleShot(300, lambda: _close_if_open(modal, answer))
            return
        if time.monotonic() < deadline:
            QTimer.singleShot(10, poll)

    QTimer.singleShot(0, poll)
    return answer


def _close_if_open(modal: QWidget, answer: ModalAnswer) -> None:
    try:
        if modal.isVisible():
            answer.errors.append(AssertionError(f"{type(modal).__name__} was left open"))
            modal.close()
    except RuntimeError:  # already deleted
        pass


# --- the browser (QtMainWindow and the panels that follow its BrowserState) ------------------------


@pytest.fixture
def owner(qtbot):
    """A parent for the test's panels and state, deleted on the GUI thread when the test ends.

    A parentless QObject would be deleted whenever Python's collector finds it, possibly on a
    worker thread (which Qt does not survive: a pool's thread would wait for its own pool)."""
    widget = QWidget()
    yield widget
    widget.close()
    import shiboken6

    shiboken6.delete(widget)


@pytest.fixture
def browser_state(repository, owner: QWidget):
    """A BrowserState on the test's repository (tests/conftest.py), as the main window owns one."""
    from skillstudio.gui.browser_state import BrowserState

    state = BrowserState(repository, owner)
    yield state
    state.operations.wait()
    state.close()


def browser_idle(window) -> bool:
    """No operation runs and no panel is loading: the window shows what the library holds (and,
    once shown, has built the docks that follow its first rows on screen)."""
    return not (
        window.state.busy or window.model.loading or window.filters.loading or window.detail.loading or window.starting
    )


def wait_for_browser(qtbot, window, timeout: int = 10_000) -> None:
    """Until the browser has caught up with what was asked of it and with the library's changes.

    Changes are announced through queued signals: deliver the ones already posted first (a write
    this test just made), so the panels they start are waited for too.
    """
    from PySide6.QtCore import QCoreApplication

    QCoreApplication.sendPostedEvents()
    qtbot.waitUntil(lambda: browser_idle(window), timeout=timeout)
