"""A skill's revisions, the differences between any two, and reverting to one."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from skillstudio.curation import revert_to_revision
from skillstudio.gui.browser_state import BrowserState
from skillstudio.gui.qt_diff_view import QtDiffView
from skillstudio.gui.workers import LatestOnly, LibraryOp
from skillstudio.model import Skill, SourceKind, ValidationError
from skillstudio.store import LibraryChange, LibraryError, Revision, SkillNotFound, SkillRepository

ACTION_LABELS = {
    "create": "created",
    "update": "edited",
    "delete": "moved to trash",
    "restore": "restored",
    "review": "reviewed",
    "review_undo": "review taken back",
    "verify": "verified",
    "compose": "composed",
    "embedding": "embedded",
    "baseline": "found",
    "external": "changed outside",
}


def _local(timestamp: str) -> str:
    try:
        return datetime.fromisoformat(timestamp).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return timestamp


@dataclass(frozen=True)
class _History:
    revisions: list[Revision]
    current: Skill | None  # None: not in the library (trashed, deleted, or not a valid skill)
    error: str = ""


def _read_history(repository: SkillRepository, skill_id: str) -> _History:
    """Off the GUI thread: every revision holds a whole snapshot of the skill."""
    try:
        revisions = repository.history.revisions(skill_id)
    except LibraryError as error:
        return _History([], None, str(error))
    try:
        current: Skill | None = repository.get(skill_id)
    except LibraryError:
        current = None
    return _History(revisions, current)


@dataclass(frozen=True)
class _Original:
    skill: Skill | None
    label: str = ""
    problem: str = ""  # why there is nothing to compare with


def _read_original(repository: SkillRepository, original_id: str) -> _Original:
    """The original as it is now, or as last stored if it is in the trash (off the GUI thread)."""
    try:
        original = repository.get(original_id)
        return _Original(original, f"Original “{original.name}” (as it is now)")
    except SkillNotFound:
        pass
    except LibraryError as error:
        return _Original(None, problem=f"The original (id {original_id}) cannot be read: {error}")
    try:
        revisions = repository.history.revisions(original_id)
    except LibraryError:
        revisions = []
    for revision in reversed(revisions):
        try:
            skill = revision.skill()
        except ValidationError:
            continue
        return _Original(skill, f"Original “{skill.name}” (in the trash; as last stored)")
    return _Original(
        None,
        problem=f"The original of this refinement (id {original_id}) is no longer in this library: "
        "it was deleted for good, so there is nothing to compare with.",
    )


class QtHistoryDialog(QDialog):
    """The revision list of one skill (also of a skill in the trash), with a diff beside it.

    Select one revision to compare it with its predecessor, or two to compare them.
    """

    reverted = Signal(str)  # the skill id, after a revert made a new revision

    def __init__(self, state: BrowserState | SkillRepository, skill_id: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        if isinstance(state, SkillRepository):
            # Until the editor and the audit log pass their BrowserState: a state of our own,
            # which stops listening to the library with the dialog.
            state = BrowserState(state, self)
            self.destroyed.connect(state.close)
        self.state = state
        self.skill_id = skill_id
        self._revisions: list[Revision] = []
        self._current: Skill | None = None
        self._select: int | None = None  # the revision to select when the history arrives
        self._keep_selection = False  # ...or keep what the user looks at (someone else wrote)
        self._loader = LatestOnly(self, self._show_history)
        self._original_loader = LatestOnly(self, self._show_original)
        self._original_revision: Revision | None = None
        self.setWindowFlag(Qt.WindowType.WindowMaximizeButtonHint, True)
        self.setSizeGripEnabled(True)
        self.resize(1180, 720)

        self.heading = QLabel(self)
        self.heading.setWordWrap(True)
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        self.list = QTreeWidget(self)
        self.list.setHeaderLabels(["#", "Action", "Author", "Time", "Message"])
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.setAlternatingRowColors(True)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.list.setAccessibleName("Revisions")
        self.list.setToolTip("Select one revision to see what it changed, or two (Ctrl+click) to compare them")
        header = self.list.header()
        header.setStretchLastSection(True)
        for column in range(4):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.list.itemSelectionChanged.connect(self._selection_changed)
        list_label = QLabel("&Revisions (select two to compare them)", self)
        list_label.setBuddy(self.list)

        self.diff = QtDiffView(self)
        self.original_button = QPushButton("Compare with &original", self)
        self.original_button.setToolTip(
            "Differences between the skill this refines (as it is now) and the selected revision"
        )
        self.original_button.clicked.connect(self.compare_with_original)
        self.revert_button = QPushButton("Re&vert to this revision…", self)
        self.revert_button.clicked.connect(self.revert_selected)
        self.close_button = QPushButton("Close", self)
        self.close_button.clicked.connect(self.reject)
        for button in (self.original_button, self.revert_button, self.close_button):
            button.setAutoDefault(False)

        left = QWidget(self)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(list_label)
        left_layout.addWidget(self.list, 1)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(left)
        splitter.addWidget(self.diff)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 5)
        splitter.setSizes([420, 760])
        splitter.setChildrenCollapsible(False)
        buttons = QHBoxLayout()
        buttons.addWidget(self.original_button)
        buttons.addWidget(self.revert_button)
        buttons.addStretch(1)
        buttons.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(splitter, 1)
        layout.addLayout(buttons)
        self.setWindowTitle(f"History of {skill_id} — SkillStudio")
        self.heading.setText(f"<b>{_html(skill_id)}</b> — reading the history…")
        self.diff.show_message("Reading the history…")
        self._update_buttons()
        self.original_button.setEnabled(False)
        self.list.setFocus()
        state.library_changed.connect(self._on_library_change)
        state.library_opened.connect(self._on_library_opened)
        self.reload()

    @property
    def loading(self) -> bool:
        return self._loader.loading or self._original_loader.loading

    def _on_library_change(self, change: LibraryChange) -> None:
        """Another window (or a revert here) wrote to this skill: show the new revisions."""
        if self.skill_id in change.skill_ids:
            self._request(select=None, keep_selection=True)

    def _on_library_opened(self, _repository: SkillRepository) -> None:
        """The skill belongs to the library that closes: so does its history."""
        for loader in (self._loader, self._original_loader):
            loader.discard()
            loader.wait()
        self.close()

    # --- content ----------------------------------------------------------------------------------

    def reload(self, select: int | None = None) -> None:
        """Read the revisions again (in the background) and select ``select`` (default: the latest)."""
        self._request(select=select, keep_selection=False)

    def _request(self, *, select: int | None, keep_selection: bool) -> None:
        repository = self.state.repository
        if repository is None:
            return
        self._select, self._keep_selection = select, keep_selection
        self._loader.request(_read_history, repository, self.skill_id)

    def _show_history(self, history: _History) -> None:
        select = self._select
        if self._keep_selection:
            unchanged = [r.number for r in history.revisions] == self.revision_numbers()
            if unchanged:  # a write without a revision (vectors, quality): nothing new to list
                self._current = history.current
                self._update_buttons()
                return
            selected = self.selected_numbers()
            latest = bool(self._revisions) and selected == [self._revisions[-1].number]
            select = None if latest or not selected else selected[-1]
        self._revisions = history.revisions
        self._current = history.current
        if history.error:
            self.diff.show_message(f"Cannot read the history: {history.error}")
        name = self._current.name if self._current else self._latest_name()
        self.setWindowTitle(f"History of {name} — SkillStudio")
        state = "" if self._current is not None else " <i>(not in the library: in the trash or deleted)</i>"
        self.heading.setText(
            f"<b>{_html(name)}</b>{state} — {len(self._revisions)} revision{'s' if len(self._revisions) != 1 else ''}"
        )
        self.list.blockSignals(True)
        self.list.clear()
        for revision in reversed(self._revisions):  # newest first
            item = QTreeWidgetItem(
                [
                    str(revision.number),
                    ACTION_LABELS.get(revision.action, revision.action),
                    revision.author,
                    _local(revision.created_at),
                    revision.message.splitlines()[0] if revision.message else "",
                ]
            )
            item.setData(0, Qt.ItemDataRole.UserRole, revision.number)
            item.setToolTip(3, revision.created_at)
            item.setToolTip(4, revision.message)
            item.setTextAlignment(0, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.list.addTopLevelItem(item)
        self.list.blockSignals(False)
        self.original_button.setEnabled(self._original_id() is not None)
        if not self.original_button.isEnabled():
            self.original_button.setToolTip("Only a human-refined skill has an original to compare with")
        if self._revisions:
            self.select_revisions([select if select is not None else self._revisions[-1].number])
        else:
            if not history.error:
                self.diff.show_message("This skill has no recorded history.")
            self._update_buttons()

    def _latest_name(self) -> str:
        for revision in reversed(self._revisions):
            row = revision.snapshot.get("row")
            name = revision.snapshot.get("name") or (row.get("name") if isinstance(row, dict) else None)
            if name:
                return str(name)
        return self.skill_id

    def revision_numbers(self) -> list[int]:
        return [revision.number for revision in self._revisions]

    def selected_numbers(self) -> list[int]:
        return sorted(item.data(0, Qt.ItemDataRole.UserRole) for item in self.list.selectedItems())

    def select_revisions(self, numbers: list[int]) -> None:
        """Select these revisions; asked before the history has arrived, once it has."""
        if not self._revisions and self._loader.loading:
            self._select, self._keep_selection = (numbers[-1] if numbers else None), False
            return
        self.list.blockSignals(True)
        self.list.clearSelection()
        first = None
        for index in range(self.list.topLevelItemCount()):
            item = self.list.topLevelItem(index)
            if item is not None and item.data(0, Qt.ItemDataRole.UserRole) in numbers:
                item.setSelected(True)
                first = first or item
        if first is not None:
            self.list.setCurrentItem(first, 0, self.list.selectionModel().SelectionFlag.NoUpdate)
        self.list.blockSignals(False)
        self._selection_changed()

    def _revision(self, number: int) -> Revision | None:
        return next((r for r in self._revisions if r.number == number), None)

    def _skill_at(self, revision: Revision) -> Skill | None:
        try:
            return revision.skill()
        except ValidationError as error:
            self.diff.show_message(
                f"Revision {revision.number} cannot be shown: it does not hold a valid skill.\n\n{error}"
            )
            return None

    def _label(self, revision: Revision) -> str:
        action = ACTION_LABELS.get(revision.action, revision.action)
        return f"Revision {revision.number} ({action} by {revision.author}, {_local(revision.created_at)})"

    def _selection_changed(self) -> None:
        self._original_loader.discard()  # the user chose what to compare
        numbers = self.selected_numbers()
        self._update_buttons()
        if not numbers:
            self.diff.show_message("Select a revision to see what it changed, or two to compare them.")
            return
        if len(numbers) == 1:
            index = self.revision_numbers().index(numbers[0])
            newer = self._revisions[index]
            older = self._revisions[index - 1] if index > 0 else None
        else:
            older, last = self._revision(numbers[0]), self._revision(numbers[-1])
            if last is None:
                return
            newer = last
        self.compare(older, newer)

    def compare(self, older: Revision | None, newer: Revision) -> None:
        new_skill = self._skill_at(newer)
        if new_skill is None:
            return
        if older is None:
            self.diff.set_new_only(
                new_skill, new_label=self._label(newer) + " — the first revision", new_title=f"Revision {newer.number}"
            )
            return
        old_skill = self._skill_at(older)
        if old_skill is None:
            return
        self.diff.set_skills(
            old_skill,
            new_skill,
            old_label=self._label(older),
            new_label=self._label(newer),
            old_title=f"Revision {older.number}",
            new_title=f"Revision {newer.number}",
        )
        if not self.diff.changed_count():
            review = newer.snapshot.get("review_state")
            changed = review != older.snapshot.get("review_state")  # a review, not an edit
            extra = f" (review state: {review})" if changed and review else ""
            self.diff.summary.setText(f"No differences in content{extra}")

    # --- original -------------------------------------------------------------------------------

    def _original_id(self) -> str | None:
        skill = self._current
        if skill is None:
            for revision in reversed(self._revisions):
                try:
                    skill = revision.skill()
                    break
                except ValidationError:
                    continue
        if skill is None or skill.source_kind is not SourceKind.HUMAN_REFINED:
            return None
        return skill.provenance.source.original_id

    def compare_with_original(self) -> None:
        """The original as it is now (or as last stored, if trashed) against the selected revision."""
        original_id = self._original_id()
        repository = self.state.repository
        if original_id is None or repository is None:
            return
        numbers = self.selected_numbers()
        revision = self._revision(numbers[-1]) if numbers else (self._revisions[-1] if self._revisions else None)
        if revision is None:
            return
        self._original_revision = revision
        self._original_loader.request(_read_original, repository, original_id)

    def _show_original(self, original: _Original) -> None:
        revision = self._original_revision
        if revision is None:
            return
        if original.skill is None:
            self.diff.show_message(original.problem)
            return
        mine = self._skill_at(revision)
        if mine is None:
            return
        self.diff.set_skills(
            original.skill,
            mine,
            old_label=original.label,
            new_label=f"This refinement, {self._label(revision)}",
            old_title="Original",
            new_title=f"Refinement, revision {revision.number}",
        )

    # --- revert ---------------------------------------------------------------------------------

    def _update_buttons(self) -> None:
        numbers = self.selected_numbers()
        latest = self._revisions[-1].number if self._revisions else None
        ok = self._current is not None and len(numbers) == 1 and numbers[0] != latest
        self.revert_button.setEnabled(ok)
        if self._current is None:
            self.revert_button.setToolTip("The skill is not in the library (restore it from the trash first)")
        elif len(numbers) != 1:
            self.revert_button.setToolTip("Select one revision to revert to")
        elif numbers[0] == latest:
            self.revert_button.setToolTip("This is the current revision")
        else:
            self.revert_button.setToolTip(
                f"Make the skill's content what revision {numbers[0]} shows, as a new revision"
            )

    def confirm_revert(self, number: int) -> bool:
        answer = QMessageBox.question(
            self,
            "Revert to an earlier revision",
            f"Make the content of “{self._current.name if self._current else self.skill_id}” what revision "
            f"{number} shows?\n\nThis adds a new revision; the history, quality and use count are kept.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        return answer == QMessageBox.StandardButton.Yes

    def revert_selected(self) -> bool:
        """Ask, then revert in the background; ``reverted`` follows once the revision is stored."""
        numbers = self.selected_numbers()
        if len(numbers) != 1 or not self.revert_button.isEnabled():
            return False
        number = numbers[0]
        if not self.confirm_revert(number):
            return False
        skill_id = self.skill_id

        def reverted(_skill: Skill) -> None:
            self.reload()
            self.reverted.emit(skill_id)

        LibraryOp(
            self.state,
            self,
            lambda repository: revert_to_revision(repository, skill_id, number),
            title=f"Revert to revision {number}",
        ).success(reverted).run_in_background(initiator=self)
        return True


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
