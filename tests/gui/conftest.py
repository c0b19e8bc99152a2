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
