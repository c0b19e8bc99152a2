"""The browser's filter panel: checkable choices per facet, turned into a SkillQuery.

Within a facet, checked choices combine with OR (any of these modules); across facets and for
tags they combine with AND, as the store's SkillQuery does. Nothing checked means "any".
The panel reads and writes ``BrowserState.query``; the table follows the state, not the panel.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QAbstractItemModel, QEvent, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import (
    QGroupBox,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from skillstudio.gui.workers import LatestOnly, readable
from skillstudio.model import Confidence, Domain, ReviewState, SourceKind
from skillstudio.store import ChangeKind, LibraryChange, SkillQuery, SkillRepository

if TYPE_CHECKING:
    from skillstudio.gui.browser_state import BrowserState

log = logging.getLogger(__name__)

UNTAGGED = "\x00untagged"  # the item data of the "(untagged)" choice; no tag can be NUL
NOT_REVIEWED = "\x00none"
FOLLOW_CHANGES_MS = 50  # changes arriving within this reload the choices once


class _LabelToggles(QStyledItemDelegate):
    """A click on a choice's label toggles its box, as a check box's label does (Qt's item views
    toggle only on the box itself)."""

    def editorEvent(
        self,
        event: QEvent,
        model: QAbstractItemModel,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> bool:
        checkable = bool(index.flags() & Qt.ItemFlag.ItemIsUserCheckable) and bool(
            index.flags() & Qt.ItemFlag.ItemIsEnabled
        )
        if not checkable or not isinstance(event, QMouseEvent) or event.button() != Qt.MouseButton.LeftButton:
            return super().editorEvent(event, model, option, index)
        if not option.rect.contains(event.position().toPoint()):
            return False
        if event.type() == QEvent.Type.MouseButtonDblClick:
            return True  # its second release toggles again, as a double click on a box does
        if event.type() != QEvent.Type.MouseButtonRelease:
            return False  # the press makes the choice current, for the keyboard
        checked = Qt.CheckState(index.data(Qt.ItemDataRole.CheckStateRole)) == Qt.CheckState.Checked
        flipped = Qt.CheckState.Unchecked if checked else Qt.CheckState.Checked
        return model.setData(index, flipped.value, Qt.ItemDataRole.CheckStateRole)


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
        self.list.setItemDelegate(_LabelToggles(self.list))
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


@dataclass(frozen=True)
class _Choices:
    modules: list[str]
    creators: list[str]
    tag_counts: dict[str, int]


def _read_choices(repository: SkillRepository) -> _Choices:
    """Off the GUI thread: counting every tag of a 100k library takes seconds."""
    return _Choices(repository.facets.game_modules(), repository.facets.creators(), repository.facets.tag_counts())


class QtFilterPanel(QScrollArea):
    """Shows ``state.query``'s filters as checked choices, and writes the user's clicks into it.

    The choices that depend on the library (modules, creators, tags) are read in the background
    when a library opens and whenever skills join, leave or change; ``choices_loaded`` says when
    a read has ended (its choices shown, or the previous ones kept if it failed).
    """

    choices_loaded = Signal()

    def __init__(self, state: BrowserState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
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
            facet.changed.connect(self._write_query)
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
        self._loader = LatestOnly(self, self._apply_choices, self._choices_failed)
        self._reload_timer = QTimer(self, singleShot=True, interval=FOLLOW_CHANGES_MS)  # a burst reloads once
        self._reload_timer.timeout.connect(self.reload_choices)
        state.query_changed.connect(self._show_query)
        state.library_opened.connect(self._on_library_opened)
        state.library_changed.connect(self._on_library_changed)
        self._show_query(state.query)
        self.reload_choices()

    @property
    def loading(self) -> bool:
        return self._loader.loading or self._reload_timer.isActive()

    def reload_choices(self) -> None:
        """Re-read the choices that depend on the library's content (modules, creators, tags);
        the lists fill in when they arrive, checked as the query says."""
        self._reload_timer.stop()
        repository = self.state.repository
        if repository is not None:
            self._loader.request(_read_choices, repository)

    def shutdown(self) -> None:
        """Before the library closes: drop what is pending, let a running read finish unseen."""
        self._reload_timer.stop()
        self._loader.discard()
        self._loader.wait()

    def _on_library_opened(self, _repository: SkillRepository) -> None:
        self.shutdown()
        for facet in (self.module, self.creator, self.tags):
            facet.set_choices([])  # the previous library's; the new ones are on their way
        self._show_query(self.state.query)
        self.reload_choices()

    def _on_library_changed(self, change: LibraryChange) -> None:
        # New skills may bring a module, a creator or tags; edits and removals change the counts.
        if change.touches(ChangeKind.MEMBERSHIP | ChangeKind.CONTENT) and not self._reload_timer.isActive():
            self._reload_timer.start()

    def _apply_choices(self, choices: _Choices) -> None:
        self.module.set_choices([(m, m) for m in choices.modules])
        self.creator.set_choices([(c, c) for c in choices.creators], max_visible=6)
        self.tags.set_choices(
            [(UNTAGGED, "(untagged)"), *((tag, f"{tag}  ({count})") for tag, count in choices.tag_counts.items())],
            max_visible=12,
        )
        self._show_query(self.state.query)
        # A choice that is gone (the last skill of a module left) no longer filters: no row
        # should be hidden by a box the user cannot see.
        self._write_query()
        self.choices_loaded.emit()

    def _choices_failed(self, error: BaseException) -> None:
        log.warning("the filter choices could not be read: %s", readable(error))
        self.choices_loaded.emit()

    # --- the query -------------------------------------------------------------------------------

    def _show_query(self, query: SkillQuery) -> None:
        """Check what ``query`` filters on (whoever set it: these boxes, Clear, another library)."""
        self.domain.set_checked({d.value for d in query.domains})
        self.confidence.set_checked({c.value for c in query.confidences})
        self.module.set_checked(set(query.game_modules))
        self.source.set_checked({s.value for s in query.sources})
        self.review.set_checked({NOT_REVIEWED if r is None else r.value for r in query.review_states})
        self.creator.set_checked(set(query.created_by))
        self.tags.set_checked(set(query.tags) | ({UNTAGGED} if query.untagged else set()))

    def _write_query(self) -> None:
        self.state.set_query(self.apply_to(self.state.query))

    def clear(self) -> None:
        for facet in self.facets:
            facet.set_checked(set())
        self._write_query()

    def apply_to(self, query: SkillQuery) -> SkillQuery:
        """``query`` filtered as the boxes are checked (its text and order stay)."""
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
