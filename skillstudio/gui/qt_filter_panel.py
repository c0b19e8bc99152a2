"""The browser's filter panel: checkable choices per facet, turned into a SkillQuery.

Within a facet, checked choices combine with OR (any of these modules); across facets and for
tags they combine with AND, as the store's SkillQuery does. Nothing checked means "any".
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QCoreApplication, QObject, QRunnable, Qt, QThreadPool, Signal
from PySide6.QtWidgets import (
    QGroupBox,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from skillstudio.model import Confidence, Domain, ReviewState, SourceKind
from skillstudio.store import LibraryError, SkillQuery, SkillRepository

UNTAGGED = "\x00untagged"  # the item data of the "(untagged)" choice; no tag can be NUL
NOT_REVIEWED = "\x00none"


class _Facet(QGroupBox):
    """One facet: a titled list of checkable choices."""

    changed = Signal()

    def __init__(self, title: str, parent: QWidget | None = None, *, searchable: bool = False) -> None:
        super().__init__(title, parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        self.search: QLineEdit | None = None
        if searchable:
            self.search = QLineEdit(self)
            self.search.setPlaceholderText(f"Find {title.replace('&', '').split(' (')[0].lower()}…")
            self.search.setClearButtonEnabled(True)
            self.search.textChanged.connect(self._hide_unmatched)
            layout.addWidget(self.search)
        self.list = QListWidget(self)
        self.list.setUniformItemSizes(True)
        self.list.itemChanged.connect(lambda _item: self.changed.emit())
        layout.addWidget(self.list)

    def set_choices(self, choices: list[tuple[str, str]], *, max_visible: int = 8) -> None:
        """(data, label) pairs; keeps the checked state of choices that remain."""
        checked = set(self.checked())
        self.list.blockSignals(True)
        self.list.clear()
        for data, label in choices:
            item = QListWidgetItem(label, self.list)
            item.setData(Qt.ItemDataRole.UserRole, data)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if data in checked else Qt.CheckState.Unchecked)
        self.list.blockSignals(False)
        rows = max(1, min(len(choices), max_visible))
        self.list.setFixedHeight(rows * self.list.sizeHintForRow(0) + 2 * self.list.frameWidth() + 2 if choices else 24)
        self._hide_unmatched(self.search.text() if self.search else "")

    def checked(self) -> list[str]:
        return [
            self.list.item(row).data(Qt.ItemDataRole.UserRole)
            for row in range(self.list.count())
            if self.list.item(row).checkState() == Qt.CheckState.Checked
        ]

    def set_checked(self, values: set[str]) -> None:
        self.list.blockSignals(True)
        for row in range(self.list.count()):
            item = self.list.item(row)
            state = Qt.CheckState.Checked if item.data(Qt.ItemDataRole.UserRole) in values else Qt.CheckState.Unchecked
            item.setCheckState(state)
        self.list.blockSignals(False)

    def _hide_unmatched(self, text: str) -> None:
        needle = text.strip().lower()
        for row in range(self.list.count()):
            item = self.list.item(row)
            item.setHidden(bool(needle) and needle not in item.text().lower())


class _ChoiceSignals(QObject):
    loaded = Signal(int, list, list, dict)  # generation, modules, creators, tag counts


class _ChoicesTask(QRunnable):
    def __init__(self, repository: SkillRepository, generation: int, signals: _ChoiceSignals) -> None:
        super().__init__()
        self.repository, self.generation, self.signals = repository, generation, signals

    def run(self) -> None:
        try:
            modules = self.repository.facets.game_modules()
            creators = self.repository.facets.creators()
            tags = self.repository.facets.tag_counts()
        except LibraryError:
            return  # the library went away (closed, replaced); the next reload will try again
        self.signals.loaded.emit(self.generation, modules, creators, tags)


class QtFilterPanel(QScrollArea):
    """Emits ``changed`` whenever a choice is (un)checked; ``apply_to`` builds the query."""

    changed = Signal()

    def __init__(self, repository: SkillRepository, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.repository = repository
        self.setWidgetResizable(True)
        self.setMinimumWidth(210)
        body = QWidget(self)
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 4, 4, 4)
        self.domain = _Facet("&Domain", body)
        self.confidence = _Facet("Con&fidence", body)
        self.module = _Facet("Game &module", body)
        self.source = _Facet("S&ource", body)
        self.review = _Facet("&Review state", body)
        self.creator = _Facet("Created &by", body, searchable=True)
        self.tags = _Facet("&Tags (all of)", body, searchable=True)
        self.facets = (self.domain, self.confidence, self.module, self.source, self.review, self.creator, self.tags)
        for facet in self.facets:
            facet.changed.connect(self.changed)
            layout.addWidget(facet)
        self.clear_button = QPushButton("Clear filters", body)
        self.clear_button.clicked.connect(self.clear)
        layout.addWidget(self.clear_button)
        layout.addStretch(1)
        self.setWidget(body)

        self.domain.set_choices([(d.value, d.label) for d in Domain])
        self.confidence.set_choices([(c.value, c.label) for c in Confidence])
        self.source.set_choices([(s.value, s.label) for s in SourceKind])
        self.review.set_choices([(NOT_REVIEWED, "Not reviewed"), *((r.value, r.label) for r in ReviewState)])
        self._generation = 0
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._signals = _ChoiceSignals(self)
        self._signals.loaded.connect(self._apply_choices)
        self.reload_choices()

    def reload_choices(self) -> None:
        """Re-read the choices that depend on the library's content (modules, creators, tags).

        Counting every tag of a 100k library takes seconds, so it runs on a worker thread; the
        lists fill in when it is done, keeping what was checked.
        """
        self._generation += 1
        self._pool.clear()
        self._pool.start(_ChoicesTask(self.repository, self._generation, self._signals))

    def wait(self, timeout_ms: int = 30_000) -> None:
        """Block until the choices are loaded (tests, benchmarks)."""
        self._pool.waitForDone(timeout_ms)
        QCoreApplication.sendPostedEvents()

    def shutdown(self) -> None:
        self._generation += 1
        self._pool.clear()
        self._pool.waitForDone()

    def _apply_choices(
        self, generation: int, modules: list[str], creators: list[str], tag_counts: dict[str, int]
    ) -> None:
        if generation != self._generation:
            return
        self.module.set_choices([(m, m) for m in modules])
        self.creator.set_choices([(c, c) for c in creators], max_visible=6)
        self.tags.set_choices(
            [(UNTAGGED, "(untagged)"), *((tag, f"{tag}  ({count})") for tag, count in tag_counts.items())],
            max_visible=12,
        )

    def clear(self) -> None:
        for facet in self.facets:
            facet.set_checked(set())
        self.changed.emit()

    def apply_to(self, query: SkillQuery) -> SkillQuery:
        tags = self.tags.checked()
        reviews = self.review.checked()
        return replace(
            query,
            domains=tuple(Domain(v) for v in self.domain.checked()),
            confidences=tuple(Confidence(v) for v in self.confidence.checked()),
            game_modules=tuple(self.module.checked()),
            sources=tuple(SourceKind(v) for v in self.source.checked()),
            review_states=tuple(None if v == NOT_REVIEWED else ReviewState(v) for v in reviews),
            created_by=tuple(self.creator.checked()),
            tags=tuple(t for t in tags if t != UNTAGGED),
            untagged=UNTAGGED in tags,
        )
