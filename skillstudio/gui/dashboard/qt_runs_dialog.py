"""Past verification runs with their status; a run that did not finish can be resumed."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from skillstudio.store import SkillRepository
from skillstudio.store.runs import RunInfo, RunStore

HEADERS = ("Run", "Kind", "Status", "Opponent", "Skills", "Games", "Seed", "Executor", "Started", "Finished", "Message")
NUMBERS = (4, 5, 6)  # right-aligned columns


class QtRunsDialog(QDialog):
    resume_requested = Signal(str)

    def __init__(self, repository: SkillRepository, parent: QWidget | None = None, *, busy: bool = False) -> None:
        super().__init__(parent)
        self.setWindowTitle("Verification runs")
        self.resize(1000, 420)
        self.repository, self.busy = repository, busy
        self.table = QTableWidget(0, len(HEADERS), self)
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.table.doubleClicked.connect(lambda _index: self.resume_selected())
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.resume_button = QPushButton("Resume", self)
        self.resume_button.setToolTip(
            "Play the games this run has not recorded yet, with its seed, engine and executor"
        )
        self.refresh_button = QPushButton("Refresh", self)
        buttons.addButton(self.resume_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.refresh_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        self.resume_button.clicked.connect(self.resume_selected)
        self.refresh_button.clicked.connect(self.reload)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(self.note)
        layout.addWidget(buttons)
        self.runs: list[RunInfo] = []
        self.reload()

    def reload(self) -> None:
        self.runs = RunStore(self.repository.database).runs(limit=500)
        self.table.setRowCount(len(self.runs))
        for row, run in enumerate(self.runs):
            values = (
                run.id,
                run.kind,
                run.status,
                run.opponent,
                f"{run.skills:,}",
                f"{run.games_recorded:,} / {run.games_asked:,}",
                str(run.seed),  # typed into Verify… › Seed, it replays the run's games
                run.executor,
                run.started_at[:19].replace("T", " "),
                (run.finished_at or "")[:19].replace("T", " "),
                run.message,
            )
            for column, value in enumerate(values):
                item = QTableWidgetItem(value)
                item.setData(Qt.ItemDataRole.UserRole, run.id)
                if column in NUMBERS:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, column, item)
        self.note.setText(
            f"{len(self.runs)} runs. A cancelled, failed or interrupted run can be resumed: "
            "only its missing games are played, with the same seeds."
            if self.runs
            else "No verification runs yet."
        )
        self._update_buttons()

    def selected_run(self) -> RunInfo | None:
        rows = self.table.selectionModel().selectedRows()
        return self.runs[rows[0].row()] if rows else None

    def select_run(self, run_id: str) -> None:
        for row, run in enumerate(self.runs):
            if run.id == run_id:
                self.table.selectRow(row)

    def _update_buttons(self) -> None:
        run = self.selected_run()
        self.resume_button.setEnabled(run is not None and run.status != "finished" and not self.busy)

    def resume_selected(self) -> None:
        run = self.selected_run()
        if run is not None and run.status != "finished" and not self.busy:
            self.resume_requested.emit(run.id)
            self.accept()
