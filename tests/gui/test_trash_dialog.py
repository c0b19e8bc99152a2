"""The trash dialog's prompt, read as a user reads it."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytestmark = pytest.mark.gui

from PySide6.QtWidgets import QMessageBox  # noqa: E402

from skillstudio.gui.qt_trash_dialog import QtTrashDialog  # noqa: E402
from skillstudio.store import SkillRepository  # noqa: E402
from tests.factories import ai_skill  # noqa: E402
from tests.gui.conftest import answer_next_modal  # noqa: E402


@pytest.mark.parametrize(
    ("trashed", "question"),
    [
        (1, "Delete 1 skill and its history for good? This cannot be undone."),
        (2, "Delete 2 skills and their history for good? This cannot be undone."),
    ],
)
def test_emptying_the_trash_asks_in_words_that_agree(
    qtbot, repository: SkillRepository, browser_state, trashed: int, question: str
) -> None:
    skills = [ai_skill() for _ in range(trashed)]
    repository.create_many(skills)
    repository.trash.delete_many([skill.id for skill in skills])
    dialog = QtTrashDialog(browser_state)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: not dialog.loading and dialog.list.topLevelItemCount() == trashed, timeout=10_000)
    asked: list[str] = []

    def decline(box) -> None:
        asked.append(box.text())
        box.button(QMessageBox.StandardButton.No).click()

    answer = answer_next_modal(decline)
    dialog.empty()
    answer.check()
    assert asked == [question] and len(repository.trash.entries()) == trashed  # declined: nothing deleted
