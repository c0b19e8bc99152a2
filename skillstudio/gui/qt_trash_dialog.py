"""The trash: deleted skills, restorable one by one, or deleted for good."""

from __future__ import annotations

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

from skillstudio.store import LibraryError, SkillRepository


class QtTrashDialog(QDialog):
    def __init__(self, repository: SkillRepository, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.repository = repository
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
        self.reload()

    def reload(self) -> None:
        self.list.clear()
        for entry in self.repository.trash.entries():
            item = QTreeWidgetItem(
                [entry.name, entry.deleted_at[:16].replace("T", " "), entry.deleted_by, entry.message]
            )
            item.setData(0, Qt.ItemDataRole.UserRole, entry.skill_id)
            self.list.addTopLevelItem(item)
        self.empty_button.setEnabled(self.list.topLevelItemCount() > 0)

    def restore_selected(self) -> None:
        for item in self.list.selectedItems():
            try:
                self.repository.trash.restore(item.data(0, Qt.ItemDataRole.UserRole))
            except LibraryError as error:
                QMessageBox.warning(self, "Cannot restore", str(error))
        self.reload()

    def empty(self) -> None:
        count = self.list.topLevelItemCount()
        answer = QMessageBox.question(
            self, "Empty trash", f"Delete {count} skill{'s' if count != 1 else ''} and their history for good?"
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.repository.trash.empty()
            self.reload()
