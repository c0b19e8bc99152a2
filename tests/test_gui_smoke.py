"""The window opens on a library and shows what it holds (pytest-qt, offscreen)."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytestmark = pytest.mark.gui

from skillstudio.gui.qt_main_window import QtMainWindow  # noqa: E402
from skillstudio.store import SkillRepository  # noqa: E402
from tests.factories import ai_skill, content_skill  # noqa: E402


def test_main_window_names_the_library_and_counts_its_skills(qtbot, repository: SkillRepository) -> None:
    repository.create_many([ai_skill(), content_skill()])
    window = QtMainWindow(repository)
    qtbot.addWidget(window)
    window.show()
    assert window.windowTitle().startswith("library")
    assert window.summary.text() == "2 skills, 0 in the trash"
    assert window.statusBar().currentMessage() == "2 skills"
    repository.delete(repository.query().ids[0])
    window.refresh()
    assert window.summary.text() == "1 skill, 1 in the trash"
