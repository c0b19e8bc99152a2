"""The dialog a batch starts from: what ``verify`` offers on the command line.

Opponent, games per skill, or *until decided* with at most N games (``--until-decided
--max-games N``), the lift over the default plan (``--baseline``), the seed (a fresh one per
batch, recorded with the run; a typed one replays a run), the executor and the engine command.
"""

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
from skillstudio.verification import sequential
from skillstudio.verification.executors import DEFAULT_EXECUTOR

OPPONENTS = ("IC Default Hard", "IC Default Normal", "IC Default Easy", "mirror")
EXECUTORS = (DEFAULT_EXECUTOR, "inprocess", "processes:2", "dask-local:2")
MIN_WIDTH = 560  # the longest field, the engine command with its placeholder, reads in full


class QtVerifyDialog(QDialog):
    def __init__(
        self, count: int, skipped: int = 0, parent: QWidget | None = None, options: BatchOptions | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Verify skills")
        self.setMinimumWidth(MIN_WIDTH)
        options = options or BatchOptions()
        self.opponent = QComboBox(self)
        self.opponent.setEditable(True)
        self.opponent.addItems(OPPONENTS)
        self.opponent.setCurrentText(options.opponent)
        self.opponent.setToolTip("Only games against the reference opponent (IC Default Hard) count for promotion")
        self.games = QSpinBox(self)
        self.games.setRange(1, 100_000)
        self.games.setValue(options.games if not options.until_decided else BatchOptions().games)
        self.games.setSuffix(" games")
        self.until_decided = QCheckBox("Until decided: stop each skill once the evidence decides", self)
        self.until_decided.setToolTip(
            "Play in rounds; a skill stops as soon as a sequential test (SPRT) places it clearly above or below "
            "the bar of its next tier (verify --until-decided)"
        )
        self.max_games = QSpinBox(self)
        self.max_games.setRange(1, 100_000)
        self.max_games.setValue(options.games if options.until_decided else sequential.DEFAULT_MAX_GAMES)
        self.max_games.setSuffix(" games per skill at most")
        self.until_decided.toggled.connect(self._show_mode)
        self.until_decided.setChecked(options.until_decided)
        self.baseline = QCheckBox("Also play the default plan (lift)", self)
        self.baseline.setChecked(options.baseline)
        self.baseline.setToolTip(
            "Play each game a second time with the module's default plan, same seed and situation, and report "
            "each skill's lift over it (built-in engine only)"
        )
        # -1 shows as "new each batch": a batch run twice must not replay the same games. A seed
        # typed in (one a run recorded, say) replays that run's games.
        self.seed = QSpinBox(self)
        self.seed.setRange(-1, 2**31 - 1)
        self.seed.setSpecialValueText("new each batch")
        self.seed.setValue(-1 if options.seed is None else options.seed)
        self.seed.setToolTip("Leave at 'new each batch'; type a run's seed to replay its games (they count once)")
        seed_hint = QLabel("Recorded with the run (Runs… lists it); a typed seed replays that run's games.", self)
        seed_hint.setStyleSheet("color: #555;")
        seed_hint.setWordWrap(True)
        self.executor = QComboBox(self)
        self.executor.setEditable(True)
        self.executor.addItems(EXECUTORS)
        self.executor.setCurrentText(options.executor)
        self.executor.setToolTip(
            "auto: worker processes, one per CPU, for a batch of 10,000 games or more; else this process.\n"
            "inprocess | processes[:N] | dask-local[:N] | dask://HOST:PORT (docs/verification.md)"
        )
        self.engine = QLineEdit(shlex.join(options.engine), self)
        self.engine.setPlaceholderText("the built-in reference engine")
        self.engine.setToolTip("An engine command speaking the SkillStudio engine protocol (docs/engine-protocol.md)")
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Opponent:", self.opponent)
        form.addRow("Games per skill:", self.games)
        form.addRow("", self.until_decided)
        form.addRow("", self.max_games)
        form.addRow("", self.baseline)
        form.addRow("Seed:", self.seed)
        form.addRow("", seed_hint)
        form.addRow("Executor:", self.executor)
        form.addRow("Engine command:", self.engine)
        noun = "skill" if count == 1 else "skills"
        text = (
            f"Play {count:,} AI {noun} headless and apply the promotion policy. "
            "Skills the engine cannot play are skipped and listed in the result."
        )
        if skipped:
            text += f"\n{skipped:,} content skill{'s' if skipped != 1 else ''} left out: plays verify them (skillstudio record)."
        self.summary = QLabel(text, self)
        self.summary.setWordWrap(True)
        self.error = QLabel(self)
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b00020;")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Verify")
        buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(count > 0)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addSpacing(6)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addStretch(1)
        layout.addWidget(buttons)
        self._show_mode(options.until_decided)

    def _show_mode(self, until_decided: bool) -> None:
        """Until decided, the games per skill are a maximum, not a number to play."""
        self.games.setEnabled(not until_decided)
        self.max_games.setEnabled(until_decided)

    def accept(self) -> None:
        try:
            self.options().check()
        except ValueError as error:
            self.error.setText(str(error))
            return
        super().accept()

    def options(self) -> BatchOptions:
        """The options as typed; ValueError if the engine command cannot be split into words."""
        try:
            engine = tuple(shlex.split(self.engine.text()))
        except ValueError as error:
            raise ValueError(f"Engine command: {error}") from None
        until_decided = self.until_decided.isChecked()
        return BatchOptions(
            opponent=self.opponent.currentText().strip() or OPPONENTS[0],
            games=self.max_games.value() if until_decided else self.games.value(),
            seed=None if self.seed.value() < 0 else self.seed.value(),
            executor=self.executor.currentText().strip() or DEFAULT_EXECUTOR,
            engine=engine,
            baseline=self.baseline.isChecked(),
            until_decided=until_decided,
        )
