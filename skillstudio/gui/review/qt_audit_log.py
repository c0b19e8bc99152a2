"""The audit log viewer: every create, update, delete, restore, review decision, promotion and
import, filtered by actor, action and time range, with the revision diff one double click away
and CSV export."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QDateTime, QTimeZone
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDateTimeEdit,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from skillstudio.review.audit import audit_csv
from skillstudio.store import AuditEntry, SkillRepository

ACTIONS = (
    "skill.create",
    "skill.update",
    "skill.delete",
    "skill.restore",
    "skill.purge",
    "skill.review",
    "skill.promote",
    "skill.demote",
    "skill.verify",
    "skill.import",
    "skill.prune",
    "skill.compose",
    "skill.embed",
)
_ANY = "(any)"


class QtAuditLog(QDialog):
    def __init__(self, repository: SkillRepository, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.repository = repository
        self.setWindowTitle("Audit Log")
        self.setSizeGripEnabled(True)
        self.resize(1100, 640)
        self.entries: list[AuditEntry] = []

        self.actor_filter = QComboBox(self)
        self.actor_filter.setAccessibleName("Actor")
        self.action_filter = QComboBox(self)
        self.action_filter.setAccessibleName("Action")
        self.action_filter.addItem(_ANY, None)
        for action in ACTIONS:
            self.action_filter.addItem(action, action)
        self.use_since = QCheckBox("From", self)
        self.since = QDateTimeEdit(QDateTime.currentDateTimeUtc().addDays(-7), self)
        self.use_until = QCheckBox("to", self)
        self.until = QDateTimeEdit(QDateTime.currentDateTimeUtc(), self)
        for edit in (self.since, self.until):
            edit.setDisplayFormat("yyyy-MM-dd HH:mm")
            edit.setCalendarPopup(True)
            edit.setTimeZone(QTimeZone.utc())
        self.export_button = QPushButton("Export &CSV…", self)
        self.diff_button = QPushButton("Show &Diff", self)
        self.count = QLabel(self)

        self.list = QTreeWidget(self)
        self.list.setHeaderLabels(["Time (UTC)", "Actor", "Kind", "Action", "Skill", "Revision", "Details"])
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.setAlternatingRowColors(True)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        for column, width in enumerate((150, 120, 60, 110, 220, 70)):
            self.list.setColumnWidth(column, width)

        filters = QHBoxLayout()
        for label, widget in (("Actor:", self.actor_filter), ("Action:", self.action_filter)):
            filters.addWidget(QLabel(label, self))
            filters.addWidget(widget)
        filters.addWidget(self.use_since)
        filters.addWidget(self.since)
        filters.addWidget(self.use_until)
        filters.addWidget(self.until)
        filters.addStretch(1)
        bottom = QHBoxLayout()
        bottom.addWidget(self.count, 1)
        bottom.addWidget(self.diff_button)
        bottom.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.addLayout(filters)
        layout.addWidget(self.list, 1)
        layout.addLayout(bottom)

        for signal in (self.actor_filter.currentIndexChanged, self.action_filter.currentIndexChanged):
            signal.connect(lambda _index: self.reload())
        for box in (self.use_since, self.use_until):
            box.toggled.connect(lambda _on: self.reload())
        for edit in (self.since, self.until):
            edit.dateTimeChanged.connect(lambda _value: self.reload())
        self.list.itemDoubleClicked.connect(lambda _item, _column: self.show_diff())
        self.list.currentItemChanged.connect(lambda _c, _p: self.diff_button.setEnabled(self._current_has_revision()))
        self.diff_button.clicked.connect(self.show_diff)
        self.export_button.clicked.connect(self.export_dialog)
        self._fill_actors()
        self.reload()

    def _fill_actors(self) -> None:
        actors = sorted({entry.actor for entry in self.repository.history.audit()})
        self.actor_filter.blockSignals(True)
        self.actor_filter.addItem(_ANY, None)
        for actor in actors:
            self.actor_filter.addItem(actor, actor)
        self.actor_filter.blockSignals(False)

    @staticmethod
    def _iso(value: QDateTime) -> str:
        return value.toUTC().toString("yyyy-MM-ddTHH:mm:ss.zzzZ")

    def reload(self) -> None:
        self.entries = self.repository.history.audit(
            actor=self.actor_filter.currentData(),
            action=self.action_filter.currentData(),
            since=self._iso(self.since.dateTime()) if self.use_since.isChecked() else None,
            until=self._iso(self.until.dateTime()) if self.use_until.isChecked() else None,
            limit=5000,
        )
        names = {
            s.id: s.name for s in self.repository.summaries(sorted({e.skill_id for e in self.entries if e.skill_id}))
        }
        self.list.clear()
        for entry in self.entries:
            skill = names.get(entry.skill_id or "", entry.skill_id or "—")
            details = ", ".join(f"{k}: {v}" for k, v in sorted(entry.details.items()))
            row = QTreeWidgetItem(
                [
                    entry.at[:19].replace("T", " "),
                    entry.actor,
                    entry.actor_kind,
                    entry.action,
                    skill,
                    "—" if entry.revision is None else str(entry.revision),
                    details,
                ]
            )
            row.setToolTip(4, entry.skill_id or "")
            self.list.addTopLevelItem(row)
        self.count.setText(f"{len(self.entries)} entries" + (" (the newest 5000)" if len(self.entries) == 5000 else ""))
        self.diff_button.setEnabled(self._current_has_revision())

    def current_entry(self) -> AuditEntry | None:
        item = self.list.currentItem()
        return None if item is None else self.entries[self.list.indexOfTopLevelItem(item)]

    def _current_has_revision(self) -> bool:
        entry = self.current_entry()
        return entry is not None and entry.skill_id is not None and entry.revision is not None

    def show_diff(self) -> QDialog | None:
        """The revision the selected entry wrote, against its predecessor (the history dialog)."""
        entry = self.current_entry()
        if entry is None or entry.skill_id is None or entry.revision is None:
            return None
        from skillstudio.gui.qt_history import QtHistoryDialog

        dialog = QtHistoryDialog(self.repository, entry.skill_id, self)
        if hasattr(dialog, "select_revision"):
            dialog.select_revision(entry.revision)
        else:
            for index in range(dialog.list.topLevelItemCount()):
                item = dialog.list.topLevelItem(index)
                if item.text(0) == str(entry.revision):
                    dialog.list.setCurrentItem(item)
        dialog.show()
        return dialog

    def export_csv(self, path: str | Path) -> None:
        Path(path).write_text(audit_csv(self.entries), encoding="utf-8")

    def export_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export the audit log", "audit-log.csv", "CSV (*.csv)")
        if path:
            self.export_csv(path)
