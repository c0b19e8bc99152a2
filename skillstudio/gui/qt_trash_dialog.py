"""The trash: deleted skills, restorable one by one, or deleted for good.

The list is read in the background and follows the library (a skill trashed or restored
elsewhere appears or goes); restoring and emptying run as background operations.
"""

from __future__ import annotations

from collections.abc import Iterator

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QMessageBox,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from skillstudio.gui.browser_state import BrowserState
from skillstudio.gui.workers import LatestOnly, LibraryOp, show_error
from skillstudio.model.naming import counted
from skillstudio.store import ChangeKind, LibraryChange, LibraryError, SkillRepository, TrashEntry

PROGRESS_EVERY = 50  # skills between two progress reports of a long restore


class NotAllRestored(LibraryError):
    """Some of the chosen skills could not be restored; the others were."""

    def __init__(self, failures: list[tuple[str, LibraryError]]) -> None:
        self.failures = failures
        lines = "; ".join(f"{name}: {error}" for name, error in failures[:5])
        more = f" (and {len(failures) - 5} more)" if len(failures) > 5 else ""
        super().__init__(f"{counted(len(failures), 'skill')} could not be restored: {lines}{more}")


def _restore(repository: SkillRepository, chosen: list[tuple[str, str]]) -> Iterator[str]:
    """Restore each (id, name); one that fails does not stop the others."""
    failures: list[tuple[str, LibraryError]] = []
    for done, (skill_id, name) in enumerate(chosen, start=1):
        try:
            repository.trash.restore(skill_id)
        except LibraryError as error:
            failures.append((name, error))
        if done % PROGRESS_EVERY == 0 or done == len(chosen):
            yield f"Restoring {done:,} of {len(chosen):,} skills…"
    if failures:
        raise NotAllRestored(failures)


class QtTrashDialog(QDialog):
    def __init__(self, state: BrowserState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.setWindowTitle("Trash")
        self.resize(720, 420)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Deleted skills stay here, with their history, until the trash is emptied.", self))
        self.list = QTreeWidget(self)
        self.list.setHeaderLabels(["Name", "Deleted", "By", "Note"])
        self.list.setRootIsDecorated(False)
        self.list.setSelectionMode(QTreeWidget.SelectionMode.ExtendedSelection)
        self.list.setColumnWidth(0, 280)
        layout.addWidget(self.list)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.restore_button = QPushButton("&Restore", self)
        self.empty_button = QPushButton("&Empty Trash…", self)
        buttons.addButton(self.restore_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.empty_button, QDialogButtonBox.ButtonRole.DestructiveRole)
        buttons.rejected.connect(self.reject)
        self.restore_button.clicked.connect(self.restore_selected)
        self.empty_button.clicked.connect(self.empty)
        layout.addWidget(buttons)
        self.empty_button.setEnabled(False)
        self._loader = LatestOnly(
            self, self._show_entries, lambda error: show_error(self, "Cannot read the trash", error)
        )
        state.library_changed.connect(self._on_library_change)
        state.library_opened.connect(self._on_library_opened)
        state.busy_changed.connect(lambda _busy: self._update_buttons())
        self.reload()

    @property
    def loading(self) -> bool:
        return self._loader.loading

    def reload(self) -> None:
        repository = self.state.repository
        if repository is not None:
            self._loader.request(repository.trash.entries)

    def _show_entries(self, entries: list[TrashEntry]) -> None:
        self.list.clear()
        for entry in entries:
            item = QTreeWidgetItem(
                [entry.name, entry.deleted_at[:16].replace("T", " "), entry.deleted_by, entry.message]
            )
            item.setData(0, Qt.ItemDataRole.UserRole, entry.skill_id)
            self.list.addTopLevelItem(item)
        self._update_buttons()

    def _update_buttons(self) -> None:
        idle = not self.state.busy  # a restore or an emptying under way: let it finish first
        self.restore_button.setEnabled(idle)
        self.empty_button.setEnabled(idle and self.list.topLevelItemCount() > 0)

    def _on_library_change(self, change: LibraryChange) -> None:
        if change.touches(ChangeKind.MEMBERSHIP):  # something was trashed, restored or purged
            self.reload()

    def _on_library_opened(self, _repository: SkillRepository) -> None:
        self._loader.discard()
        self._loader.wait()
        self.reject()  # it listed the trash of the library that closed

    def restore_selected(self) -> None:
        chosen = [
            (item.data(0, Qt.ItemDataRole.UserRole), item.text(0))
            for item in self.list.selectedItems()
            if item.data(0, Qt.ItemDataRole.UserRole)
        ]
        if not chosen:
            return

        def restore(repository: SkillRepository) -> Iterator[str]:
            return (yield from _restore(repository, chosen))

        def restored(_result: object) -> None:
            self.state.say(f"Restored {counted(len(chosen), 'skill')} from the trash")

        LibraryOp(self.state, self, restore, title="Restore from the trash").success(restored).failure(
            lambda error: show_error(self, "Cannot restore", error)
        ).progress(lambda text: self.state.say(str(text), 0)).run_in_background(initiator=self)
        self._update_buttons()

    def empty(self) -> None:
        count = self.list.topLevelItemCount()
        answer = QMessageBox.question(
            self,
            "Empty trash",
            f"Delete {counted(count, 'skill')} and {'its' if count == 1 else 'their'} history for good? "
            "This cannot be undone.",
        )
        if answer == QMessageBox.StandardButton.Yes:
            LibraryOp(
                self.state, self, lambda repository: repository.trash.empty(), title="Empty trash"
            ).run_in_background(initiator=self)
            self._update_buttons()
