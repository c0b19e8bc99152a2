"""The small dialog a batch starts from: opponent, games per skill, seed, executor, engine."""

from __future__ import annotations

import shlex

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from skillstudio.gui.dashboard.verify_worker import BatchOptions

OPPONENTS = ("IC Default Hard", "IC Default Normal", "IC Default Easy", "mirror")
EXECUTORS = ("inprocess", "processes:2", "dask-local:2")


class QtVerifyDialog(QDialog):
    def __init__(
        self, count: int, skipped: int = 0, parent: QWidget | None = None, options: BatchOptions | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Verify skills")
        options = options or BatchOptions()
        self.opponent = QComboBox(self)
        self.opponent.setEditable(True)
        self.opponent.addItems(OPPONENTS)
        self.opponent.setCurrentText(options.opponent)
        self.opponent.setToolTip("Only games against the reference opponent (IC Default Hard) count for promotion")
        self.games = QSpinBox(self)
        self.games.setRange(1, 100_000)
        self.games.setValue(options.games)
        self.games.setSuffix(" games")
        # -1 shows as "new each batch": a batch run twice must not replay the same games. A seed
        # typed in (one a run recorded, say) replays that run's games.
        self.seed = QSpinBox(self)
        self.seed.setRange(-1, 2**31 - 1)
        self.seed.setSpecialValueText("new each batch")
        self.seed.setValue(-1 if options.seed is None else options.seed)
        self.seed.setToolTip("Leave at 'new each batch'; type a run's seed to replay its games (they count once)")
        self.executor = QComboBox(self)
        self.executor.setEditable(True)
        self.executor.addItems(EXECUTORS)
        self.executor.setCurrentText(options.executor)
        self.engine = QLineEdit(shlex.join(options.engine), self)
        self.engine.setPlaceholderText("the built-in reference engine")
        self.engine.setToolTip("An engine command speaking the SkillStudio engine protocol (docs/engine-protocol.md)")
        form = QFormLayout()
        form.addRow("Opponent:", self.opponent)
        form.addRow("Games per skill:", self.games)
        form.addRow("Seed:", self.seed)
        form.addRow("Executor:", self.executor)
        form.addRow("Engine command:", self.engine)
        self.baseline = QCheckBox("Also play the default plan (lift)", self)
        self.baseline.setChecked(options.baseline)
        self.baseline.setToolTip(
            "Play each game a second time with the module's default plan, same seed and situation, and report "
            "each skill's lift over it (built-in engine only)"
        )
        form.addRow("", self.baseline)
        noun = "skill" if count == 1 else "skills"
        text = f"Play {count:,} AI {noun} headless and apply the promotion policy (skills the engine cannot play are skipped and listed)."
        if skipped:
            text += f"\n{skipped:,} content skill{'s' if skipped != 1 else ''} left out: plays verify them (skillstudio record)."
        self.summary = QLabel(text, self)
        self.summary.setWordWrap(True)
        self.error = QLabel(self)
        self.error.setStyleSheet("color: #b00020;")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Verify")
        buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(count > 0)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)

    def accept(self) -> None:
        try:
            self.options()
        except ValueError as error:
            self.error.setText(f"Engine command: {error}")
            return
        super().accept()

    def options(self) -> BatchOptions:
        return BatchOptions(
            opponent=self.opponent.currentText().strip() or OPPONENTS[0],
            games=self.games.value(),
            seed=None if self.seed.value() < 0 else self.seed.value(),
            executor=self.executor.currentText().strip() or "inprocess",
            engine=tuple(shlex.split(self.engine.text())),
            baseline=self.baseline.isChecked(),
        )
