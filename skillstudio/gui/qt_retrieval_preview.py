"""The Retrieval Preview dock: what the LLM would receive for a query, and why (docs/retrieval.md).

``QtRetrievalPreview`` runs :class:`~skillstudio.retrieval.Retriever` off the GUI thread (a
:class:`LatestOnly` loader: the newest query wins) and shows the ranked hits with their score
breakdown, the prompt text ``format_as_context`` makes within the budget, and seed 002's
catalog. It follows the browser's state: another library replaces everything it shows, and any
write that can change what a query retrieves runs the query again. Skills the user writes get
their vectors shortly after. Compute Embeddings (:class:`QtEmbedJob`) runs ``embed_library`` as
a :class:`LibraryOp` behind a progress dialog whose Cancel stops it between batches.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from html import escape
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QAction, QFont, QFontDatabase, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDockWidget,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QPlainTextEdit,
    QProgressDialog,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from skillstudio.gui.browser_state import BrowserState
from skillstudio.gui.qt_confidence_delegate import QtConfidenceDelegate
from skillstudio.gui.workers import LatestOnly, LibraryOp, Tasks, readable, show_error
from skillstudio.model import (
    Domain,
    EconomyState,
    GamePhase,
    SituationSignature,
    ThreatLevel,
    ValidationError,
    parse_situation,
)
from skillstudio.retrieval import (
    DEFAULT_BUDGET,
    Catalog,
    EmbeddingProvider,
    EmbedProgress,
    LocalEmbeddings,
    Mode,
    PromptContext,
    ProviderError,
    RetrievalResult,
    Retriever,
    catalog,
    embed_library,
    embed_now,
    format_as_context,
    settings,
)
from skillstudio.store import ChangeKind, LibraryChange, LibraryError, SkillRepository, initiated_by
from skillstudio.store.embeddings import EmbeddingStatus

log = logging.getLogger(__name__)

SEARCH_DEBOUNCE_MS = 250
THROTTLE_S = 0.1  # at most this often an embedding progress update
CANCEL_WAIT_MS = 120_000  # a cancelled Compute Embeddings ends after its current batch
MODES = (Mode.HYBRID, Mode.FTS, Mode.SEMANTIC, Mode.TAGS)
DOMAINS = (("Any", None), ("AI", Domain.AI_STRATEGY.value), ("Content", Domain.CONTENT_GENERATION.value))

# (title, tooltip) of each results column; the numbers are ScoreBreakdown's (retrieval/ranking.py).
COLUMNS = (
    ("#", "Rank: the order the skills enter the prompt"),
    ("Name", "The skill; select a row to show it in the browser"),
    ("Confidence", "Verification tier: tentative, established or proven"),
    ("Score", "Final score: relevance × evidence factor × lift factor, the ranking key"),
    (
        "FTS",
        "Keyword relevance: FTS5's bm25 divided by the best bm25 of this query (0–1); — when keywords were not used",
    ),
    (
        "Semantic",
        (
            "Semantic relevance: the embedding cosine placed between the library's typical and best cosine "
            "for this query (0–1); — without a vector"
        ),
    ),
    (
        "Situation",
        "Similarity of the skill's situation signature to the query's situation (0–1); — without a situation",
    ),
    ("Quality", "Posterior mean success rate, Beta(2, 2) prior: (wins + 2) / (games + 4); 0.5 with no games"),
    (
        "Evidence",
        "The factor quality applies to relevance: 0.6 for a skill that keeps losing, 1.4 for one that keeps winning",
    ),
    (
        "Lift",
        (
            "The factor the lift over the default plan applies (verify --baseline, current body): 1 + the end of "
            "its 95% interval nearest zero, 0.5–1.5; — without a lift"
        ),
    ),
)
NAME_COLUMN, CONFIDENCE_COLUMN = 1, 2
# What a query retrieves depends on the skills' text, membership, review state (the serving
# rule), quality (the evidence factor; a run's lift is announced with the quality) and vectors: a write touching any of them re-runs it.
AFFECTS_RETRIEVAL = (
    ChangeKind.CONTENT | ChangeKind.MEMBERSHIP | ChangeKind.REVIEW | ChangeKind.QUALITY | ChangeKind.VECTORS
)
# Writes whose skills then need (new) vectors, embedded shortly after in one batch.
NEEDS_VECTORS = ChangeKind.CONTENT | ChangeKind.MEMBERSHIP
AUTO_EMBED_DELAY_MS = 1500
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter


def configured_provider() -> tuple[EmbeddingProvider | None, str]:
    """The provider the retrieval settings name, and a note when they could not be used (then local)."""
    try:
        return settings.configured_provider(), ""
    except Exception as error:  # noqa: BLE001 - a broken settings file must not stop the GUI
        return LocalEmbeddings(), f"the retrieval settings cannot be used ({error}); using the local model"


def number(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def parse_shares(text: str, field: str) -> list[list[Any]]:
    """``rifle_infantry 60, light_tank 40`` as parse_situation's pairs; ValueError names the field."""
    pairs: list[list[Any]] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        unit, _, share = part.rpartition(" ")
        share = share.strip().rstrip("%")
        if not unit.strip() or not share.isdigit():
            raise ValueError(
                f"{field}: write unit and share pairs like 'rifle_infantry 60, light_tank 40' (not {part!r})"
            )
        pairs.append([unit.strip(), int(share)])
    return pairs


# --- the work done off the GUI thread -------------------------------------------------------------


@dataclass(frozen=True)
class PreviewRequest:
    query: str
    domain: Domain | None = None
    game_module: str | None = None
    k: int = 5
    mode: Mode = Mode.HYBRID
    role: str | None = None
    situation: SituationSignature | None = None
    budget: int = DEFAULT_BUDGET


@dataclass(frozen=True)
class Preview:
    request: PreviewRequest
    result: RetrievalResult
    context: PromptContext
    catalog: Catalog
    status: EmbeddingStatus | None
    modules: tuple[str, ...]


def build_preview(retriever: Retriever, request: PreviewRequest) -> Preview:
    """One retrieval, its prompt and catalog, and the library's embedding status."""
    r = request
    result = retriever.retrieve(
        r.query, domain=r.domain, game_module=r.game_module, k=r.k, mode=r.mode, role=r.role, situation=r.situation
    )
    skills = retriever.load(result)
    return Preview(
        r,
        result,
        format_as_context(skills, r.budget),
        catalog(skills),
        retriever.embedding_status(),
        tuple(retriever.repository.facets.game_modules()),
    )


def embed_written(
    repository: SkillRepository, provider: EmbeddingProvider, ids: list[str], initiator: object
) -> str | None:
    """Vectors for skills the user just wrote (a save, an import, a restore); a note if it could not."""
    with initiated_by(initiator):
        return embed_now(repository, provider, ids)


@dataclass(frozen=True)
class EmbedOutcome:
    model_id: str
    stored: int
    total: int
    skipped: tuple[tuple[str, str], ...]
    cancelled: bool


class EmbeddingStopped(LibraryError):
    """Compute Embeddings stopped early; the message says why and that the stored vectors stay."""


def embed_everything(
    repository: SkillRepository, provider: EmbeddingProvider, cancelled: Callable[[], bool]
) -> Generator[EmbedProgress, None, EmbedOutcome]:
    """``embed_library``, its progress throttled (at most one per ``THROTTLE_S``, plus the last).

    ``cancelled`` is asked between batches, so the batches stored stay stored."""
    last: EmbedProgress | None = None
    last_yield = 0.0

    def stopped(why: str) -> str:
        stored = last.done if last else 0
        return f"{why}\n\n{stored:,} vectors were stored before it stopped; run Compute Embeddings again to resume."

    try:
        for progress in embed_library(repository, provider, cancelled=cancelled):
            last = progress
            now = time.monotonic()
            if now - last_yield >= THROTTLE_S or progress.finished:
                last_yield = now
                yield progress
    except ProviderError as error:
        raise EmbeddingStopped(stopped(f"The embedding provider failed: {error}")) from error
    except LibraryError as error:
        raise EmbeddingStopped(stopped(f"Embedding stopped: {error}")) from error
    except Exception as error:  # a bug: shown with its traceback, which then says what was kept
        error.add_note(stopped("Embedding stopped."))
        raise
    stored, total = (last.done, last.total) if last else (0, 0)
    skipped = last.skipped if last else ()
    return EmbedOutcome(
        provider.model_id, stored, total, skipped, cancelled() and not (last is not None and last.finished)
    )


def _text_tab(parent: QWidget, font: QFont) -> tuple[QWidget, QLabel, QPlainTextEdit]:
    """A tab of read-only monospace text under a size label (the prompt, the catalog)."""
    tab = QWidget(parent)
    label = QLabel("", tab)
    text = QPlainTextEdit(tab)
    text.setReadOnly(True)
    text.setFont(font)
    layout = QVBoxLayout(tab)
    layout.setContentsMargins(4, 4, 4, 4)
    layout.addWidget(label)
    layout.addWidget(text, 1)
    return tab, label, text


# --- the dock ---------------------------------------------------------------------------------------


class QtRetrievalPreview(QDockWidget):
    """Type what an engine's situation would say; see the skills, scores and prompt it would get.

    The main window docks it (it starts hidden) and puts :attr:`toggle_action` and
    :attr:`embed_action` in its View menu; before the library closes for good it calls
    :meth:`shutdown`.
    """

    def __init__(self, state: BrowserState, parent: QWidget | None = None) -> None:
        super().__init__("Retrieval Preview", parent)
        self.state = state
        self.setObjectName("retrieval_preview_dock")
        self.setAllowedAreas(
            Qt.DockWidgetArea.RightDockWidgetArea
            | Qt.DockWidgetArea.LeftDockWidgetArea
            | Qt.DockWidgetArea.BottomDockWidgetArea
        )
        self.provider, provider_note = configured_provider()
        self.provider_note = provider_note
        self.retriever: Retriever | None = None  # one per library: it holds the vector index
        self.preview: Preview | None = None  # what the dock shows
        self.embed_job: QtEmbedJob | None = None  # the running (or last) Compute Embeddings
        self.loader = LatestOnly(self, self._apply, self._fail)
        self.debounce = QTimer(self, singleShot=True, interval=SEARCH_DEBOUNCE_MS)
        self.debounce.timeout.connect(self.search_now)
        self._dirty = True  # a search is due when the dock is next shown
        self._filling = False
        # The first time it shows it takes a useful width, unless the main window restored a
        # layout in which the user had already sized it (then it clears this).
        self.needs_width = True
        self._auto_embed = Tasks(self)  # vectors for the user's writes; one batch at a time
        self._to_embed: dict[str, None] = {}  # skills the user wrote, waiting for their vectors
        self._embed_timer = QTimer(self, singleShot=True, interval=AUTO_EMBED_DELAY_MS)
        self._embed_timer.timeout.connect(self._embed_written)

        self._build()
        self.toggle_action = self.toggleViewAction()
        self.toggle_action.setText("Retrieval &Preview")
        self.toggle_action.setShortcut(QKeySequence("Ctrl+Shift+R"))
        self.toggle_action.setStatusTip("What the LLM would receive for a query: ranked skills, scores and prompt text")
        self.embed_action = QAction("Compute &Embeddings…", self)
        self.embed_action.setStatusTip("Compute the description vectors semantic retrieval needs (missing or stale)")
        self.embed_action.triggered.connect(lambda _checked=False: self.compute_embeddings())
        self.visibilityChanged.connect(self._on_visibility)
        self.hide()  # until the user asks for it

        state.library_opened.connect(self._on_library_opened)
        state.library_changed.connect(self._on_library_change)
        if state.repository is not None:
            self._on_library_opened(state.repository)

    # --- building -------------------------------------------------------------------------------

    def _build(self) -> None:
        body = QWidget(self)
        self.query = QLineEdit(body)
        self.query.setPlaceholderText("What the engine's situation says, e.g. enemy aircraft raiding my ore trucks")
        self.query.setClearButtonEnabled(True)
        self.query.textChanged.connect(lambda _text: self.schedule_search())

        self.domain = QComboBox(body)
        for title, value in DOMAINS:
            self.domain.addItem(title, value)
        self.module = QComboBox(body)
        self.module.addItem("Any", None)
        self.mode = QComboBox(body)
        for mode in MODES:
            self.mode.addItem(mode.value, mode.value)  # plain strings: findData compares them
        self.mode.setToolTip(
            "hybrid: keywords + meaning (+ situation); fts: keywords only; semantic: meaning only; "
            "tags: the query's words against tags"
        )
        self.k = QSpinBox(body)
        self.k.setRange(1, 50)
        self.k.setValue(5)
        self.k.setToolTip("How many skills to retrieve (k)")
        self.budget = QSpinBox(body)
        self.budget.setRange(0, 100_000)
        self.budget.setSingleStep(500)
        self.budget.setValue(DEFAULT_BUDGET)
        self.budget.setSuffix(" chars")
        self.budget.setToolTip("The prompt's character budget: a skill that does not fit is left out whole")
        self.role = QLineEdit(body)
        self.role.setPlaceholderText("any role")
        self.role.setToolTip(
            "Only skills whose SKILL.md roles include this one (skills without roles serve every role)"
        )
        for combo in (self.domain, self.module, self.mode):
            combo.currentIndexChanged.connect(lambda _index: self.schedule_search())
        for spin in (self.k, self.budget):
            spin.valueChanged.connect(lambda _value: self.schedule_search())
        self.role.textChanged.connect(lambda _text: self.schedule_search())

        options = QGridLayout()
        options.setHorizontalSpacing(6)
        for column, (text, widget) in enumerate(
            (("Domain", self.domain), ("Module", self.module), ("Mode", self.mode))
        ):
            label = QLabel(text, body)
            label.setBuddy(widget)
            options.addWidget(label, 0, column * 2)
            options.addWidget(widget, 0, column * 2 + 1)
        for column, (text, field) in enumerate((("k", self.k), ("Budget", self.budget), ("Role", self.role))):
            options.addWidget(QLabel(text, body), 1, column * 2)
            options.addWidget(field, 1, column * 2 + 1)
        for column in (1, 3, 5):
            options.setColumnStretch(column, 1)

        self.situation_box = self._build_situation(body)

        self.status = QLabel("", body)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.lacking = QLabel("", body)
        self.lacking.setWordWrap(True)
        self.lacking.setStyleSheet("color: #9a6b00;")
        self.embed_button = QPushButton("Embed…", body)
        self.embed_button.setToolTip("Compute the missing and stale vectors (View › Compute Embeddings…)")
        self.embed_button.clicked.connect(self._embed)
        lacking_row = QHBoxLayout()
        lacking_row.addWidget(self.lacking, 1)
        lacking_row.addWidget(self.embed_button)
        self.lacking.hide()
        self.embed_button.hide()

        self.table = QTableWidget(0, len(COLUMNS), body)
        for column, (title, tip) in enumerate(COLUMNS):
            item = QTableWidgetItem(title)
            item.setToolTip(tip)
            self.table.setHorizontalHeaderItem(column, item)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setShowGrid(False)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.setItemDelegateForColumn(CONFIDENCE_COLUMN, QtConfidenceDelegate(self.table))
        header = self.table.horizontalHeader()
        header.setHighlightSections(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(NAME_COLUMN, QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(36)
        self.table.itemSelectionChanged.connect(self._on_row_selected)

        fixed = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        prompt_tab, self.prompt_size, self.prompt = _text_tab(body, fixed)
        self.prompt.setPlaceholderText("The prompt text appears here.")
        self.prompt_size.setWordWrap(True)
        self.copy_button = QPushButton("&Copy", body)
        self.copy_button.setToolTip("Copy the prompt text to the clipboard")
        self.copy_button.clicked.connect(self.copy_prompt)
        catalog_tab, self.catalog_size, self.catalog_text = _text_tab(body, fixed)

        self.tabs = QTabWidget(body)
        self.tabs.addTab(prompt_tab, "Prompt")
        self.tabs.addTab(catalog_tab, "Catalog")
        self.tabs.setCornerWidget(self.copy_button)  # beside the tabs: the size label keeps the full width
        splitter = QSplitter(Qt.Orientation.Vertical, body)
        splitter.addWidget(self.table)
        splitter.addWidget(self.tabs)
        splitter.setStretchFactor(0, 1)  # k rows are few; the prompt is long
        splitter.setStretchFactor(1, 2)
        splitter.setChildrenCollapsible(False)

        layout = QVBoxLayout(body)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.query)
        layout.addLayout(options)
        layout.addWidget(self.situation_box)
        layout.addWidget(self.status)
        layout.addLayout(lacking_row)
        layout.addWidget(splitter, 1)
        self.setWidget(body)

    def _build_situation(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Situation", parent)
        box.setCheckable(True)
        box.setChecked(False)
        box.setToolTip("Match StrategicPattern skills against a game situation as well")
        content = QWidget(box)
        self.phase = QComboBox(content)
        self.economy = QComboBox(content)
        self.threat = QComboBox(content)
        for combo, enum in ((self.phase, GamePhase), (self.economy, EconomyState), (self.threat, ThreatLevel)):
            for member in enum:
                combo.addItem(member.value, member.value)
            combo.currentIndexChanged.connect(lambda _index: self.schedule_search())
        self.economy.setCurrentIndex(self.economy.findData(EconomyState.EVEN.value))
        self.threat.setCurrentIndex(self.threat.findData(ThreatLevel.MEDIUM.value))
        self.map_control = QDoubleSpinBox(content)
        self.map_control.setRange(0, 100)
        self.map_control.setDecimals(0)
        self.map_control.setSingleStep(5)
        self.map_control.setSuffix(" %")
        self.map_control.setValue(50)
        self.map_control.valueChanged.connect(lambda _value: self.schedule_search())
        self.army = QLineEdit(content)
        self.army.setPlaceholderText("rifle_infantry 60, light_tank 40")
        self.enemy = QLineEdit(content)
        self.enemy.setPlaceholderText("yak 50, heavy_tank 50")
        self.tech = QLineEdit(content)
        self.tech.setPlaceholderText("tier1, radar")
        for edit in (self.army, self.enemy, self.tech):
            edit.textChanged.connect(lambda _text: self.schedule_search())
        self.situation_error = QLabel("", content)
        self.situation_error.setWordWrap(True)
        self.situation_error.setStyleSheet("color: #b00020;")
        self.situation_error.hide()

        grid = QGridLayout()
        for column, (text, widget) in enumerate(
            (("Phase", self.phase), ("Economy", self.economy), ("Threat", self.threat))
        ):
            grid.addWidget(QLabel(text, content), 0, column * 2)
            grid.addWidget(widget, 0, column * 2 + 1)
        form = QFormLayout()
        form.addRow("Map control", self.map_control)
        form.addRow("Our army", self.army)
        form.addRow("Enemy", self.enemy)
        form.addRow("Tech", self.tech)
        inner = QVBoxLayout(content)
        inner.setContentsMargins(0, 0, 0, 0)
        inner.addLayout(grid)
        inner.addLayout(form)
        inner.addWidget(self.situation_error)
        outer = QVBoxLayout(box)
        outer.setContentsMargins(6, 2, 6, 2)
        outer.addWidget(content)
        content.setVisible(False)  # collapsed while the situation is off
        box.setFlat(True)  # no empty frame while collapsed
        box.toggled.connect(content.setVisible)
        box.toggled.connect(lambda on: box.setFlat(not on))
        box.toggled.connect(lambda _on: self.schedule_search())
        return box

    # --- following the browser ------------------------------------------------------------------

    def _on_library_opened(self, repository: SkillRepository) -> None:
        """Another library (or the first): forget the old one's work and results, search the new one."""
        self._stop_work()
        self.retriever = Retriever(repository, self.provider)
        self._clear_results()
        self._set_modules(self._modules_of(repository))
        self.schedule_search()

    def shutdown(self) -> None:
        """The window closes: no more searches or vectors; running work ends before the library does."""
        self._stop_work()
        self.retriever = None

    def _stop_work(self) -> None:
        """Before the library shown so far closes: Compute Embeddings stops after its batch (the
        batches stored stay stored), the search's answer is dropped, vectors not started yet
        wait for the next Embed; what is running finishes first."""
        self.debounce.stop()
        self.loader.discard()
        self._auto_embed.cancel_pending()
        if self.embed_job is not None and self.embed_job.running:
            self.embed_job.cancel()
            self.state.operations.wait(CANCEL_WAIT_MS)
        if self.loader.loading:
            self.loader.wait()
        if self._auto_embed.running:
            self._auto_embed.wait()
        # Waiting delivered the old library's queued changes: they are no business of the next one.
        self._embed_timer.stop()
        self._to_embed = {}
        self.debounce.stop()

    @staticmethod
    def _modules_of(repository: SkillRepository) -> list[str]:
        try:
            return repository.facets.game_modules()
        except LibraryError:
            return []

    def _on_library_change(self, change: LibraryChange) -> None:
        if change.touches(AFFECTS_RETRIEVAL):
            self.schedule_search()
        repository = self.state.repository
        # The user's writes get their vectors here; another writer's are its business (the CLI
        # and agents embed what they write).
        if repository is None or self.provider is None or change.actor != repository.actor.id:
            return
        if change.touches(NEEDS_VECTORS):
            written = [skill_id for skill_id in change.skill_ids if not change.removes(skill_id)]
            if written:
                self._to_embed.update(dict.fromkeys(written))
                self._embed_timer.start()  # batched: an import's or a burst of saves' ids go together

    def _embed_written(self) -> None:
        repository = self.state.repository
        if not self._to_embed or repository is None or self.retriever is None or self.provider is None:
            return
        ids, self._to_embed = list(self._to_embed), {}
        # The write already stands: a failure only leaves the skills lacking a vector, which the
        # status line shows with its Embed… button.
        self._auto_embed.run(embed_written, repository, self.provider, ids, self, done=self._on_embedded)

    @staticmethod
    def _on_embedded(note: str | None) -> None:
        if note:
            log.warning("vectors for the skills just written: %s", note)

    def _on_visibility(self, visible: bool) -> None:
        if not visible:
            return
        if self.needs_width:  # a useful width the first time, not the dock's minimum; once laid out
            self.needs_width = False
            QTimer.singleShot(0, self._size_dock)
        self._adopt_browser_filter()
        if self._dirty:
            self.schedule_search()

    def _size_dock(self) -> None:
        # Only the QMainWindow holding a dock can size it (QMainWindow.resizeDocks).
        holder = self.parentWidget()
        if isinstance(holder, QMainWindow) and not self.isFloating():
            # Two fifths of the window: at 1280 pixels the browser's table keeps a readable width.
            holder.resizeDocks([self], [max(460, holder.width() * 2 // 5)], Qt.Orientation.Horizontal)

    def _adopt_browser_filter(self) -> None:
        """Start from what the browser shows: its domain and module when it filters on exactly one."""
        query = self.state.query
        if len(query.domains) == 1:
            self.domain.setCurrentIndex(max(0, self.domain.findData(Domain(query.domains[0]).value)))
        if len(query.game_modules) == 1:
            module = query.game_modules[0]
            if self.module.findData(module) < 0:
                self.module.addItem(module, module)
            self.module.setCurrentIndex(self.module.findData(module))

    def _set_modules(self, modules: list[str] | tuple[str, ...]) -> None:
        current = self.module.currentData()
        wanted = ["Any", *modules] + ([current] if current and current not in modules else [])
        if [self.module.itemText(i) for i in range(self.module.count())] == wanted:
            return
        self.module.blockSignals(True)
        self.module.clear()
        self.module.addItem("Any", None)
        for module in wanted[1:]:
            self.module.addItem(module, module)
        self.module.setCurrentIndex(max(0, self.module.findData(current)) if current else 0)
        self.module.blockSignals(False)

    # --- searching ------------------------------------------------------------------------------

    def request(self) -> tuple[PreviewRequest, str | None]:
        """The request the controls describe, and what is wrong with the situation if anything."""
        situation, problem = None, None
        if self.situation_box.isChecked():
            try:
                situation = self.situation()
            except (ValueError, ValidationError) as error:
                problem = str(error)
        request = PreviewRequest(
            query=self.query.text(),
            domain=Domain(self.domain.currentData()) if self.domain.currentData() else None,
            game_module=self.module.currentData(),
            k=self.k.value(),
            mode=Mode(self.mode.currentData()),
            role=self.role.text().strip() or None,
            situation=situation,
            budget=self.budget.value(),
        )
        return request, problem

    def situation(self) -> SituationSignature:
        data = {
            "game_phase": self.phase.currentData(),
            "economy_state": self.economy.currentData(),
            "threat_level": self.threat.currentData(),
            "map_control": self.map_control.value() / 100,
            "army_composition": parse_shares(self.army.text(), "our army"),
            "enemy_composition_estimate": parse_shares(self.enemy.text(), "enemy"),
            "active_tech": [t.strip() for t in self.tech.text().split(",") if t.strip()],
        }
        return parse_situation(data)

    def schedule_search(self) -> None:
        """Search after a pause (typing, spinning); only while the dock is shown."""
        self._dirty = True
        if self.isVisible():
            self.debounce.start()

    def search_now(self) -> None:
        self.debounce.stop()
        if self.retriever is None:
            return
        if not self.isVisible():
            self._dirty = True
            return
        self._dirty = False
        request, problem = self.request()
        self.situation_error.setText(f"Situation ignored: {problem}" if problem else "")
        self.situation_error.setVisible(bool(problem))
        self.loader.request(build_preview, self.retriever, request)

    def _apply(self, preview: Preview) -> None:
        self.preview = preview
        self._set_modules(preview.modules)
        self._fill_table(preview)
        self._fill_texts(preview)
        self._show_status(preview)

    def _fail(self, error: BaseException) -> None:
        # Shown in place, as the results are: a dialog per keystroke would be worse than useless.
        message = str(error) if isinstance(error, ProviderError) else readable(error)
        self.status.setText(f"<span style='color:#b00020'>Retrieval failed: {escape(message)}</span>")

    # --- showing --------------------------------------------------------------------------------

    def _clear_results(self) -> None:
        self.preview = None
        self._filling = True
        self.table.setRowCount(0)
        self._filling = False
        self.prompt.clear()
        self.prompt_size.setText("")
        self.catalog_text.clear()
        self.catalog_size.setText("")
        self.status.setText("")
        self.lacking.hide()
        self.embed_button.hide()

    def _fill_table(self, preview: Preview) -> None:
        self._filling = True
        self.table.setRowCount(0)
        self.table.setRowCount(len(preview.result.hits))
        for row, hit in enumerate(preview.result.hits):
            s = hit.score
            cells = [
                str(row + 1),
                hit.name,
                hit.confidence,
                number(s.final),
                number(s.fts),
                number(s.semantic),
                number(s.situation),
                number(s.quality),
                number(s.evidence),
                number(s.lift_factor) if s.lift is not None else "—",
            ]
            games = (
                f"{hit.verification_count} games, {hit.success_rate:.0%} success"
                if hit.verification_count
                else "not verified"
            )
            tip = (
                f"{hit.name}\n{hit.domain} · {hit.game_module} · {games}\n"
                f"bm25 {number(s.bm25)} · cosine {number(s.cosine)} · relevance {number(s.relevance)}"
            )
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, hit.skill_id)
                item.setToolTip(tip if column == NAME_COLUMN else COLUMNS[column][1])
                if column not in (NAME_COLUMN, CONFIDENCE_COLUMN):
                    item.setTextAlignment(_RIGHT)
                self.table.setItem(row, column, item)
        self._filling = False

    def _fill_texts(self, preview: Preview) -> None:
        context, listing = preview.context, preview.catalog
        self.prompt.setPlainText(context.text)
        size = f"{context.size:,} of {context.budget:,} characters"
        if context.left_out:
            size += "; left out: " + ", ".join(f"{item.name} ({item.size:,})" for item in context.left_out)
        elif context.included:
            size += "; every retrieved skill fits"
        self.prompt_size.setText(size)
        self.prompt_size.setToolTip(size)
        self.copy_button.setEnabled(bool(context.text))
        self.catalog_text.setPlainText(listing.text)
        self.catalog_size.setText(f"catalog {listing.size:,} characters vs full content {listing.full_size:,}")

    def _show_status(self, preview: Preview) -> None:
        result = preview.result
        if not preview.request.query.strip():
            text = "Type a query to see what the LLM would receive."
        else:
            text = f"<b>Mode:</b> {result.used.value}"
            if result.used is not result.mode:
                text += f" (asked for {result.mode.value})"
            if result.model_id:
                text += f" · {escape(result.model_id)}"
            text += f" · {len(result.hits)} skill{'s' if len(result.hits) != 1 else ''}"
            notes = list(result.notes) + ([self.provider_note] if self.provider_note else [])
            if notes:
                text += "<br><span style='color:#555'>" + "; ".join(escape(n) for n in notes) + "</span>"
        self.status.setText(text)
        status = preview.status
        lacking = status.lacking if status is not None else 0
        if status is not None and lacking:
            noun = "skill lacks" if lacking == 1 else "skills lack"
            self.lacking.setText(f"{lacking:,} {noun} a current vector for {status.model_id}")
        self.lacking.setVisible(bool(lacking))
        self.embed_button.setVisible(bool(lacking))

    # --- actions --------------------------------------------------------------------------------

    def selected_id(self) -> str | None:
        items = self.table.selectedItems()
        return items[0].data(Qt.ItemDataRole.UserRole) if items else None

    def _on_row_selected(self) -> None:
        skill_id = self.selected_id()
        if skill_id is not None and not self._filling:
            # The browser selects it if it shows it, else its detail pane shows it alone.
            self.state.set_selection((skill_id,), skill_id)

    def copy_prompt(self) -> None:
        QGuiApplication.clipboard().setText(self.prompt.toPlainText())
        self.state.say("Prompt text copied to the clipboard", 3000)

    def _embed(self) -> None:
        self.embed_action.trigger()

    def compute_embeddings(self) -> QtEmbedJob | None:
        """Embed what lacks a current vector, in the background behind a progress dialog."""
        if self.embed_job is not None and self.embed_job.running:
            self.embed_job.dialog.show()
            return self.embed_job
        if self.provider is None:
            QMessageBox.information(
                self,
                "Compute Embeddings",
                "No embedding provider is configured (the retrieval "
                "settings say `none`): retrieval uses keyword search alone.",
            )
            return None
        if self.state.repository is None:
            return None
        if self.embed_job is not None:
            self.embed_job.dispose()
        self.embed_job = QtEmbedJob(self.state, self, self.provider)
        self.embed_job.start(initiator=self)
        return self.embed_job


# --- Compute Embeddings ------------------------------------------------------------------------------


class QtEmbedJob(QObject):
    """One Compute Embeddings run: the operation, its progress dialog, the message at the end."""

    def __init__(self, state: BrowserState, parent: QWidget, provider: EmbeddingProvider) -> None:
        super().__init__(parent)
        self._owner = parent
        self.provider = provider
        self.running = False
        self.result: EmbedOutcome | None = None
        self.message: QMessageBox | None = None
        self._cancelled = threading.Event()  # read between batches on the worker thread
        self.dialog = QProgressDialog(f"Computing embeddings with {provider.model_id}…", "Cancel", 0, 0, parent)
        self.dialog.setWindowTitle("Compute Embeddings")
        self.dialog.setWindowModality(Qt.WindowModality.WindowModal)
        self.dialog.setMinimumDuration(0)
        self.dialog.setAutoClose(False)
        self.dialog.setAutoReset(False)
        self.dialog.setMinimumWidth(420)
        self.dialog.canceled.connect(self.cancel)

        cancelled = self._cancelled.is_set

        def embed(repository: SkillRepository) -> Generator[EmbedProgress, None, EmbedOutcome]:
            return (yield from embed_everything(repository, provider, cancelled))

        self._operation = (
            LibraryOp[EmbedOutcome](state, parent, embed, title="Computing embeddings")
            .progress(self._on_progress)
            .success(self._on_outcome)
            .failure(self._on_failed)
        )

    def start(self, *, initiator: object) -> None:
        self.running = True
        self.dialog.show()
        self._operation.run_in_background(initiator=initiator)

    def cancel(self) -> None:
        self._cancelled.set()
        self.dialog.setLabelText("Cancelling after this batch…")

    def _on_progress(self, progress: EmbedProgress) -> None:
        handled = progress.done + len(progress.skipped)
        self.dialog.setMaximum(max(1, progress.total))
        self.dialog.setValue(min(handled, max(1, progress.total)) if progress.total else 1)
        if not self._cancelled.is_set():
            self.dialog.setLabelText(
                f"Computing embeddings with {progress.model_id}: {handled:,} of {progress.total:,}"
            )

    def _on_outcome(self, outcome: EmbedOutcome) -> None:
        self._ended()
        self.result = outcome
        if outcome.total == 0:
            text = f"Every skill already has a current vector for {outcome.model_id}."
        else:
            text = f"Stored {outcome.stored:,} of {outcome.total:,} vectors for {outcome.model_id}"
            text += "; cancelled (run Compute Embeddings again to resume)." if outcome.cancelled else "."
        details = "\n".join(f"{skill_id}: {why}" for skill_id, why in outcome.skipped)
        if outcome.skipped:
            text += f"\n{len(outcome.skipped):,} skipped: the provider answered no usable vector (see details)."
        box = QMessageBox(
            QMessageBox.Icon.Information, "Embeddings computed", text, QMessageBox.StandardButton.Ok, self._owner
        )
        if details:
            box.setDetailedText(details)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()  # window-modal, without blocking the event loop
        self.message = box

    def _on_failed(self, error: BaseException) -> None:
        self._ended()
        show_error(self._owner, "Cannot compute embeddings", error)

    def _ended(self) -> None:
        self.running = False
        self.dialog.reset()
        self.dialog.hide()

    def dispose(self) -> None:
        """Once ended: free the dialog and the job."""
        self.dialog.deleteLater()
        self.deleteLater()


__all__ = [
    "EmbedOutcome",
    "EmbeddingStopped",
    "Preview",
    "PreviewRequest",
    "QtEmbedJob",
    "QtRetrievalPreview",
    "configured_provider",
    "embed_everything",
    "parse_shares",
]
