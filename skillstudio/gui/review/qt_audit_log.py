"""The audit log viewer: every create, update, delete, restore, review decision, promotion and
import, filtered by actor, action and time range, each entry's details said as a sentence
(:func:`skillstudio.review.audit.audit_sentence`), with the revision diff one double click away
and CSV export.

The entries are read in the background (a newer filter supersedes an older read), and the log
follows the library: every write this process commits shows up without reopening it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QDateTime, Qt, QTimer, QTimeZone
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDateTimeEdit,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from skillstudio.files import write_atomically
from skillstudio.gui.browser_state import BrowserState
from skillstudio.gui.workers import LatestOnly, readable, show_error
from skillstudio.review.audit import audit_csv, audit_sentence, named_ids
from skillstudio.store import AuditAction, AuditEntry, LibraryChange, SkillRepository

# What each action is called on screen: the filter and the Action column read it from here.
LIMIT = 5000  # the newest entries shown; the filters narrow the rest down
RELOAD_DELAY_MS = 250  # writes in a burst (a batch, an agent) reload the log once
_ANY = "(any)"


@dataclass(frozen=True)
class AuditPage:
    entries: list[AuditEntry]
    names: dict[str, str]  # skill id -> name, for the skills the entries name still in the library
    actors: list[str] | None  # everyone in the log, when asked for


def load_audit(
    repository: SkillRepository,
    actor: str | None,
    action: AuditAction | None,
    since: str | None,
    until: str | None,
    with_actors: bool,
) -> AuditPage:
    entries = repository.history.audit(actor=actor, action=action, since=since, until=until, limit=LIMIT)
    names = {s.id: s.name for s in repository.summaries(sorted(named_ids(entries)))}
    actors = repository.history.actors() if with_actors else None
    return AuditPage(entries, names, actors)


def _skill_label(entry: AuditEntry, names: dict[str, str]) -> str:
    """The entry's skill by its name now; one no longer in the library by the name the entry
    recorded, else by its short id."""
    if not entry.skill_id:
        return "—"
    if entry.skill_id in names:
        return names[entry.skill_id]
    recorded = entry.details.get("name")
    gone = recorded if isinstance(recorded, str) and recorded else entry.skill_id[:8]
    return f"{gone} (no longer in the library)"


class QtAuditLog(QDialog):
    def __init__(self, state: BrowserState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.setWindowTitle("Audit Log")
        self.setSizeGripEnabled(True)
        self.resize(1100, 640)
        self.entries: list[AuditEntry] = []
        self.loader = LatestOnly(self, self._show, self._failed)
        self._reload_timer = QTimer(self, singleShot=True, interval=RELOAD_DELAY_MS)
        self._reload_timer.timeout.connect(self.reload)

        self.actor_filter = QComboBox(self)
        self.actor_filter.setAccessibleName("Actor")
        self.actor_filter.addItem(_ANY, None)
        self.action_filter = QComboBox(self)
        self.action_filter.setAccessibleName("Action")
        self.action_filter.addItem(_ANY, None)
        for action in AuditAction:
            self.action_filter.addItem(action.label, action.value)
            self.action_filter.setItemData(self.action_filter.count() - 1, action.value, Qt.ItemDataRole.ToolTipRole)
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
        self.close_buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.close_button = self.close_buttons.button(QDialogButtonBox.StandardButton.Close)
        self.close_buttons.rejected.connect(self.reject)  # Close, like Esc
        self.count = QLabel(self)

        self.list = QTreeWidget(self)
        self.list.setHeaderLabels(["Time (UTC)", "Actor", "Kind", "Action", "Skill", "Revision", "Details"])
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.setAlternatingRowColors(True)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        for column, width in enumerate((150, 120, 60, 150, 220, 70)):
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
        bottom.addWidget(self.close_buttons)
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
        state.library_opened.connect(self._on_library_opened)
        state.library_changed.connect(self._on_library_changed)
        self._actors_known = False
        self._stale = False  # the library changed while the log was closed
        self.reload()

    # --- loading -------------------------------------------------------------------------------

    @staticmethod
    def _iso(value: QDateTime) -> str:
        return value.toUTC().toString("yyyy-MM-ddTHH:mm:ss.zzzZ")

    def selected_action(self) -> AuditAction | None:
        value = self.action_filter.currentData()
        return None if value is None else AuditAction(value)

    def reload(self) -> None:
        """Read the entries for the filters in the background (the newest LIMIT of them)."""
        self._reload_timer.stop()
        self.loader.request(
            load_audit,
            self.state.require_repository(),
            self.actor_filter.currentData(),
            self.selected_action(),
            self._iso(self.since.dateTime()) if self.use_since.isChecked() else None,
            self._iso(self.until.dateTime()) if self.use_until.isChecked() else None,
            not self._actors_known,
        )

    def _show(self, page: AuditPage) -> None:
        if page.actors is not None:
            self._actors_known = True
            self._add_actors(page.actors)
        current = self.current_entry()
        current_id = None if current is None else current.id
        self.entries = page.entries
        self.list.clear()
        rows = []
        for entry in self.entries:
            skill = _skill_label(entry, page.names)
            details = audit_sentence(entry, page.names)
            row = QTreeWidgetItem(
                [
                    entry.at[:19].replace("T", " "),
                    entry.actor,
                    entry.actor_kind,
                    AuditAction.label_of(entry.action),
                    skill,
                    "—" if entry.revision is None else str(entry.revision),
                    details,
                ]
            )
            row.setToolTip(3, entry.action)
            row.setToolTip(4, entry.skill_id or "")
            row.setToolTip(6, details)
            rows.append(row)
        self.list.addTopLevelItems(rows)
        for index, entry in enumerate(self.entries):  # the entry the user looked at stays selected
            if entry.id == current_id:
                self.list.setCurrentItem(rows[index])
                break
        self.count.setText(
            f"{len(self.entries)} entries" + (f" (the newest {LIMIT})" if len(self.entries) == LIMIT else "")
        )
        self.diff_button.setEnabled(self._current_has_revision())

    def _failed(self, error: BaseException) -> None:
        self.count.setText(f"Cannot read the audit log: {readable(error)}")

    def _add_actors(self, actors: list[str]) -> None:
        """Add actors the filter does not offer yet, keeping its choice."""
        known = {self.actor_filter.itemData(index) for index in range(self.actor_filter.count())}
        self.actor_filter.blockSignals(True)
        for actor in actors:
            if actor not in known:
                self.actor_filter.addItem(actor, actor)
        self.actor_filter.blockSignals(False)

    # --- following the library -----------------------------------------------------------------

    def _on_library_changed(self, change: LibraryChange) -> None:
        self._add_actors([change.actor])
        self._refresh()

    def _on_library_opened(self, _repository: SkillRepository) -> None:
        self.loader.discard()
        self._reload_timer.stop()
        self.entries = []
        self.list.clear()
        self.actor_filter.blockSignals(True)
        self.actor_filter.clear()
        self.actor_filter.addItem(_ANY, None)
        self.actor_filter.blockSignals(False)
        self._actors_known = False
        self._refresh()

    def _refresh(self) -> None:
        if self.isVisible():
            self._reload_timer.start()
        else:
            self._stale = True  # a closed log reads nothing; it catches up when shown again

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self._stale = False
            self.reload()

    # --- the selected entry --------------------------------------------------------------------

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

        dialog = QtHistoryDialog(self.state, entry.skill_id, self)
        dialog.select_revisions([entry.revision])
        dialog.show()
        return dialog

    def export_csv(self, path: str | Path) -> None:
        write_atomically(Path(path), audit_csv(self.entries).encode("utf-8"))  # whole, or the old file stays

    def export_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export the audit log", "audit-log.csv", "CSV (*.csv)")
        if not path:
            return
        try:
            self.export_csv(path)
        except OSError as error:  # a folder one cannot write to, a full disk
            show_error(self, "Audit log not exported", error)
