"""The review queue: pending skills, newest first, with everything a reviewer needs to decide.

Left: the queue (filter by creator and source). Right: the selected skill's provenance,
verification figures and risk findings, the diff since its last approved revision, a comment
box and Approve (Ctrl+Return) / Reject (Ctrl+Shift+R) / Request changes (Ctrl+Shift+C). Reject
asks for the reason (required: the record must say why). After a decision the next item is
selected automatically; Undo (Ctrl+Z) takes the reviewer's decisions back, newest first. The work
is done by :mod:`skillstudio.review`.

The queue and the selected skill are read in the background (a newer read supersedes an older
one); a decision is an operation (it may wait for a busy library without freezing the window),
and the queue follows every change to the library that touches reviews or membership.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from skillstudio.gui.browser_state import BrowserState
from skillstudio.gui.qt_diff_view import QtDiffView
from skillstudio.gui.rich_text import escaped, findings_html
from skillstudio.gui.workers import LatestOnly, LibraryOp, readable, show_error
from skillstudio.model import ReviewState, Skill, SourceKind
from skillstudio.review import change_since_approved, findings_for, pending_queue, undo
from skillstudio.review.audit import state_label
from skillstudio.review.linter import Linter
from skillstudio.review.workflow import PendingChange, QueueItem
from skillstudio.store import (
    ChangeKind,
    ConflictError,
    LibraryChange,
    LibraryError,
    ReviewDecision,
    RiskFinding,
    SkillExtras,
    SkillRepository,
)

SHORTCUTS = {
    ReviewState.APPROVED: QKeySequence("Ctrl+Return"),
    ReviewState.REJECTED: QKeySequence("Ctrl+Shift+R"),
    ReviewState.CHANGES_REQUESTED: QKeySequence("Ctrl+Shift+C"),
}
_ANY = "(anyone)"
LINT_ON_OPEN = 200  # unlinted pending skills linted when the queue loads (more: when selected)


@dataclass(frozen=True)
class Decided:
    """A decision this queue recorded: what Undo takes back (the skill, its name, the state set,
    the content version it was on, and the comment, which goes back into the comment box)."""

    skill_id: str
    name: str
    state: ReviewState
    version: int
    comment: str


class RejectReasonDialog(QDialog):
    """Why a skill is rejected: the reason is required (Reject stays disabled until there is one)."""

    def __init__(self, name: str, reason: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Reject skill")
        self.resize(460, 220)
        prompt = QLabel(f"Why is “{name}” rejected? The reason is kept with the decision in the audit log.", self)
        prompt.setTextFormat(Qt.TextFormat.PlainText)
        prompt.setWordWrap(True)
        self.reason_edit = QPlainTextEdit(self)
        self.reason_edit.setAccessibleName("Reason for the rejection")
        self.reason_edit.setPlaceholderText("e.g. prompt injection in the body")
        self.reason_edit.setPlainText(reason)
        self.reason_edit.setTabChangesFocus(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.reject_button = self.buttons.addButton("&Reject", QDialogButtonBox.ButtonRole.AcceptRole)
        self.reject_button.setToolTip("Reject with this reason (Ctrl+Return)")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        confirm = QShortcut(QKeySequence("Ctrl+Return"), self)
        confirm.activated.connect(self._confirm)
        layout = QVBoxLayout(self)
        layout.addWidget(prompt)
        layout.addWidget(self.reason_edit, 1)
        layout.addWidget(self.buttons)
        self.reason_edit.textChanged.connect(self._update)
        self._update()
        self.reason_edit.setFocus()

    def reason(self) -> str:
        return self.reason_edit.toPlainText().strip()

    def _update(self) -> None:
        self.reject_button.setEnabled(bool(self.reason()))

    def _confirm(self) -> None:
        if self.reject_button.isEnabled():
            self.accept()


@dataclass(frozen=True)
class QueueView:
    """One load of the queue: the pending items, their risk findings, and who created any."""

    items: list[QueueItem]
    findings: dict[str, list[RiskFinding]]
    creators: list[str]


@dataclass(frozen=True)
class PendingDetails:
    """Everything the right side shows of one pending skill, read together."""

    change: PendingChange
    findings: list[RiskFinding]
    extras: SkillExtras | None
    decisions: list[ReviewDecision]
    revisions: int


def load_queue(repository: SkillRepository, creator: str | None, source: str | None) -> QueueView:
    """The pending skills for the filters, newest first; lints those never linted (up to
    LINT_ON_OPEN: skills an engine or an older import wrote before the linter ran)."""
    items = pending_queue(
        repository, created_by=[creator] if creator else [], sources=[SourceKind(source)] if source else []
    )
    everyone = items if not creator and not source else pending_queue(repository)
    findings = repository.findings.many([item.summary.id for item in items])
    unlinted = [item.summary.id for item in items if item.summary.id not in findings][:LINT_ON_OPEN]
    if unlinted:
        linter = Linter(repository=repository)
        for skill in repository.get_many(unlinted):
            found = linter.lint_and_store(skill)
            if found:
                findings[skill.id] = found
    return QueueView(items, findings, sorted({item.summary.created_by for item in everyone}))


def load_details(repository: SkillRepository, skill_id: str) -> PendingDetails:
    change = change_since_approved(repository, skill_id)
    return PendingDetails(
        change,
        findings_for(repository, change.current),
        repository.extras.get(skill_id),
        repository.reviews.decisions(skill_id),
        len(repository.history.revisions(skill_id)),
    )


class QtReviewQueue(QDialog):
    """The queue follows the library (``library_changed``); a decision is a background write."""

    decided = Signal(str, str)  # skill id, new state

    def __init__(self, state: BrowserState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.setWindowTitle("Review Queue")
        self.setWindowFlag(Qt.WindowType.WindowMaximizeButtonHint, True)
        self.setSizeGripEnabled(True)
        self.resize(1320, 820)
        self._items: list[QueueItem] = []
        self._select_after_load: str | None = None
        self._shown: tuple[str, int] | None = None  # the skill and content version shown: decisions are on it
        self._deciding = False  # a decision or an undo is being written
        self._decided: list[Decided] = []  # what Undo takes back, newest last
        self._stale = False  # the library changed while the queue was closed
        self.loader = LatestOnly(self, self._show_queue, self._queue_failed)
        self.details_loader = LatestOnly(self, self._show_details, self._details_failed)

        self.creator_filter = QComboBox(self)
        self.creator_filter.setAccessibleName("Created by")
        self.creator_filter.addItem(_ANY, None)
        self.source_filter = QComboBox(self)
        self.source_filter.setAccessibleName("Source")
        self.source_filter.addItem("(any source)", None)
        for kind in SourceKind:
            self.source_filter.addItem(kind.label, kind.value)
        self.count_label = QLabel(self)

        self.list = QTreeWidget(self)
        self.list.setHeaderLabels(["Skill", "Created by", "Source", "Risk", "Changed"])
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.setAlternatingRowColors(True)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setAccessibleName("Pending skills")
        self.list.header().setStretchLastSection(False)
        for column, width in enumerate((215, 140, 100, 70, 95)):
            self.list.setColumnWidth(column, width)

        self.details = QTextBrowser(self)
        self.details.setOpenLinks(False)
        self.details.setAccessibleName("Provenance, verification and risk findings")
        self.diff = QtDiffView(self)
        self.comment = QPlainTextEdit(self)
        self.comment.setPlaceholderText("Comment for the record (why you decide so)")
        self.comment.setMaximumHeight(64)
        self.comment.setAccessibleName("Review comment")
        self.approve_button = QPushButton("&Approve", self)
        self.reject_button = QPushButton("&Reject", self)
        self.changes_button = QPushButton("Request &Changes", self)
        self.undo_button = QPushButton("&Undo", self)
        self.undo_button.clicked.connect(self.undo)
        undo_shortcut = QShortcut(QKeySequence(QKeySequence.StandardKey.Undo), self)
        undo_shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
        undo_shortcut.activated.connect(self.undo)
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        for button, decision in (
            (self.approve_button, ReviewState.APPROVED),
            (self.reject_button, ReviewState.REJECTED),
            (self.changes_button, ReviewState.CHANGES_REQUESTED),
        ):
            button.setToolTip(
                f"{button.text().replace('&', '')} ({SHORTCUTS[decision].toString(QKeySequence.SequenceFormat.NativeText)})"
            )
            button.clicked.connect(lambda _checked=False, s=decision: self.decide(s))
            shortcut = QShortcut(SHORTCUTS[decision], self)
            shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
            shortcut.activated.connect(lambda s=decision: self.decide(s))

        filters = QHBoxLayout()
        filters.addWidget(QLabel("Created by:", self))
        filters.addWidget(self.creator_filter, 1)
        filters.addWidget(QLabel("Source:", self))
        filters.addWidget(self.source_filter, 1)
        left = QWidget(self)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addLayout(filters)
        left_layout.addWidget(self.list, 1)
        left_layout.addWidget(self.count_label)

        right_split = QSplitter(Qt.Orientation.Vertical, self)
        right_split.addWidget(self.details)
        right_split.addWidget(self.diff)
        right_split.setSizes([330, 400])
        buttons = QHBoxLayout()
        buttons.addWidget(self.status, 1)
        buttons.addWidget(self.undo_button)
        buttons.addWidget(self.changes_button)
        buttons.addWidget(self.reject_button)
        buttons.addWidget(self.approve_button)
        right = QWidget(self)
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(right_split, 1)
        right_layout.addWidget(self.comment)
        right_layout.addLayout(buttons)

        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(left)
        split.addWidget(right)
        split.setSizes([640, 680])
        layout = QVBoxLayout(self)
        layout.addWidget(split)

        self.list.currentItemChanged.connect(lambda _current, _previous: self._show_current())
        self.creator_filter.currentIndexChanged.connect(lambda _index: self.reload())
        self.source_filter.currentIndexChanged.connect(lambda _index: self.reload())
        state.library_opened.connect(self._on_library_opened)
        state.library_changed.connect(self._on_library_changed)
        self._enable_decisions()
        self.reload()

    # --- queue ---------------------------------------------------------------------------------

    @property
    def loading(self) -> bool:
        """Whether the queue or the selected skill is still being read."""
        return self.loader.loading or self.details_loader.loading

    def reload(self, select: str | None = None) -> None:
        """Read the queue for the filters in the background; ``select`` (else the current skill)
        stays selected if it is still pending."""
        self._select_after_load = select if select is not None else self.current_id()
        self.loader.request(
            load_queue,
            self.state.require_repository(),
            self.creator_filter.currentData(),
            self.source_filter.currentData(),
        )

    def _show_queue(self, view: QueueView) -> None:
        self._fill_creators(view.creators)
        self._items = view.items
        self.list.blockSignals(True)
        self.list.clear()
        rows = []
        for item in self._items:
            s = item.summary
            risk = view.findings.get(s.id, [])
            worst = next((sev for sev in ("high", "medium", "low", "info") if any(f.severity == sev for f in risk)), "")
            source = SourceKind.label_of(s.source)
            row = QTreeWidgetItem(
                [s.name, s.created_by, source, f"{len(risk)} ({worst})" if risk else "—", item.changed_at[:10]]
            )
            row.setToolTip(4, item.changed_at.replace("T", " "))
            row.setToolTip(1, s.created_by)
            row.setData(0, Qt.ItemDataRole.UserRole, s.id)
            row.setToolTip(0, s.name)
            if worst in ("high", "medium"):
                row.setForeground(3, Qt.GlobalColor.darkRed if worst == "high" else Qt.GlobalColor.darkYellow)
            rows.append(row)
        self.list.addTopLevelItems(rows)
        count = len(self._items)
        self.count_label.setText(
            "No skills wait for review"
            if not count
            else "1 skill waits for review"
            if count == 1
            else f"{count} skills wait for review"
        )
        ids = self.pending_ids()
        select = self._select_after_load
        if ids:
            self.list.setCurrentItem(rows[ids.index(select) if select in ids else 0])
        self.list.blockSignals(False)
        self._show_current()  # once, whether or not the current row changed

    def _fill_creators(self, creators: list[str]) -> None:
        current = self.creator_filter.currentData()
        self.creator_filter.blockSignals(True)
        self.creator_filter.clear()
        self.creator_filter.addItem(_ANY, None)
        for creator in creators:
            self.creator_filter.addItem(creator, creator)
        self.creator_filter.setCurrentIndex(max(0, self.creator_filter.findData(current)) if current else 0)
        self.creator_filter.blockSignals(False)

    def _queue_failed(self, error: BaseException) -> None:
        self.count_label.setText(f"Cannot read the queue: {readable(error)}")

    def pending_ids(self) -> list[str]:
        return [item.summary.id for item in self._items]

    def current_id(self) -> str | None:
        item = self.list.currentItem()
        return None if item is None else item.data(0, Qt.ItemDataRole.UserRole)

    def select(self, skill_id: str) -> None:
        ids = self.pending_ids()
        item = self.list.topLevelItem(ids.index(skill_id)) if skill_id in ids else None
        if item is not None:
            self.list.setCurrentItem(item)

    # --- the selected skill --------------------------------------------------------------------

    def _show_current(self) -> None:
        skill_id = self.current_id()
        if self._shown is not None and self._shown[0] != skill_id:
            self._shown = None  # nothing may be decided on a skill until its content is on screen
        self._enable_decisions()
        if skill_id is None:
            self.details_loader.discard()
            self.details.setHtml('<p style="color:#707070">Nothing waits for review.</p>')
            self.diff.show_message("Select a pending skill to see what changed since it was last approved.")
            return
        self.details_loader.request(load_details, self.state.require_repository(), skill_id)

    def _details_failed(self, error: BaseException) -> None:
        self._shown = None  # what was on screen may be gone (trashed, unreadable)
        self._enable_decisions()
        self.details.setHtml(f'<p style="color:#c62828">{escaped(readable(error))}</p>')
        self.diff.show_message(readable(error))

    def _show_details(self, details: PendingDetails) -> None:
        change = details.change
        skill = change.current
        if skill.id != self.current_id():
            return  # another skill was selected meanwhile; its own details follow
        self._shown = (skill.id, skill.version)
        self._enable_decisions()
        quality = skill.quality
        source = skill.provenance.source
        extras = details.extras
        decisions = details.decisions
        findings = details.findings
        rate = f"{quality.success_rate:.0%}" if quality.verification_count else "—"
        rows = [
            ("Created", f"{skill.created_at[:16].replace('T', ' ')} by <b>{escaped(skill.created_by)}</b>"),
            (
                "Source",
                escaped(source.kind.label)
                + (f" · {escaped(source.source_id)}" if source.source_id else "")
                + (f" · from {escaped(extras.origin)}" if extras and extras.origin else ""),
            ),
            (
                "Domain",
                f"{escaped(skill.domain.label)} · {escaped(skill.game_module)} · {escaped(skill.body_kind.label)}",
            ),
            ("LLM model", escaped(skill.provenance.model_id or "—")),
            (
                "Verification",
                f"{escaped(quality.confidence.label)} · "
                + (
                    f"success {rate} over {quality.verification_count} verifications · last {escaped((quality.last_verified or '—')[:10])}"
                    if quality.verification_count
                    else "not verified yet"
                ),
            ),
            ("Revisions", str(details.revisions)),
        ]
        if decisions:
            last = decisions[-1]
            rows.append(
                (
                    "Last decision",
                    f"{escaped(state_label(last.state))} by {escaped(last.reviewer)} {escaped(last.at[:16].replace('T', ' '))}"
                    + (f": “{escaped(last.comment)}”" if last.comment else ""),
                )
            )
        table = "".join(f"<tr><td style='color:#707070;padding-right:10px'>{k}</td><td>{v}</td></tr>" for k, v in rows)
        warnings = ""
        if extras and extras.warnings:
            warnings = (
                "<p><b>Import warnings</b></p><ul>"
                + "".join(f"<li>{escaped(w)}</li>" for w in extras.warnings)
                + "</ul>"
            )
        self.details.setHtml(
            f"<h3 style='margin:0'>{escaped(skill.name)}</h3><p>{escaped(skill.description) or '<i>No description.</i>'}</p>"
            f"<table>{table}</table><p><b>Risk findings</b> ({len(findings)})</p>{findings_html(findings)}{warnings}"
        )
        if change.approved is None:
            self.diff.set_new_only(skill, new_label="pending (never approved)", new_title="Pending")
            self.diff.set_unified(True)  # all of it is new: one full-width column reads better
        else:
            self.diff.set_skills(
                change.approved,
                skill,
                old_label=f"approved (revision {change.approved_revision})",
                new_label="pending",
                old_title="Last approved",
                new_title="Pending",
            )
            self.diff.set_unified(False)

    def _enable_decisions(self) -> None:
        can = self._shown is not None and not self._deciding
        for button in (self.approve_button, self.reject_button, self.changes_button):
            button.setEnabled(can)
        self.undo_button.setEnabled(bool(self._decided) and not self._deciding)
        last = self._decided[-1] if self._decided else None
        self.undo_button.setToolTip(
            f"Take back “{last.state.label}” on “{last.name}” (Ctrl+Z)" if last else "Nothing to take back"
        )

    # --- deciding ------------------------------------------------------------------------------

    def decide(self, decision: ReviewState) -> bool:
        """Record ``decision`` for the selected skill with the comment, in the background;
        the next item follows. A rejection asks for its reason first. False if nothing could be
        decided now (or the reason was not given)."""
        skill_id = self.current_id()
        item = self.list.currentItem()
        if skill_id is None or item is None or self._deciding:
            return False
        if self._shown is None or self._shown[0] != skill_id:  # not on screen (yet, or unreadable)
            why = (
                "It is still being read."
                if self.details_loader.loading
                else "Select the skill again: it was not shown."
            )
            self.status.setText(f'<span style="color:#c62828">{why}</span>')
            return False
        version = self._shown[1]
        comment = self.comment.toPlainText().strip()
        name = item.text(0)
        if decision is ReviewState.REJECTED:
            reason = self.ask_reason(name, comment)
            if reason is None:
                self.status.setText(f"Not rejected: {escaped(name)}")
                return False
            comment = reason
            if self.current_id() != skill_id or self._shown != (skill_id, version):
                self.status.setText(
                    '<span style="color:#c62828">The skill changed while you wrote; decide again.</span>'
                )
                return False
        ids = self.pending_ids()
        position = ids.index(skill_id)
        following = ids[position + 1] if position + 1 < len(ids) else (ids[position - 1] if position > 0 else None)
        decided = Decided(skill_id, name, decision, version, comment)
        self._set_deciding(f"{escaped(decision.label)}: {escaped(name)}…")
        LibraryOp[Skill](
            self.state,
            self,
            lambda repository: repository.reviews.review(skill_id, decision, comment=comment, version=version),
            title="Review",
        ).success(lambda _skill: self._decided_now(decided, following)).failure(
            self._decision_failed
        ).run_in_background(initiator=self)
        return True

    def ask_reason(self, name: str, reason: str) -> str | None:
        """The reason for rejecting ``name`` (``reason``: what the comment box holds); None if
        the reviewer cancelled."""
        dialog = RejectReasonDialog(name, reason, self)
        try:
            return dialog.reason() if dialog.exec() == QDialog.DialogCode.Accepted else None
        finally:
            dialog.deleteLater()

    def _set_deciding(self, status: str) -> None:
        self._deciding = True
        self._enable_decisions()
        self.status.setText(status)

    def _decided_now(self, decided: Decided, following: str | None) -> None:
        if not isValid(self):
            return
        self._deciding = False
        self._decided.append(decided)
        self.comment.clear()
        self.status.setText(f"{escaped(decided.state.label)}: {escaped(decided.name)}. Undo (Ctrl+Z) takes it back.")
        self.decided.emit(decided.skill_id, decided.state.value)
        self.reload(select=following)

    def _decision_failed(self, error: BaseException) -> None:
        if not isValid(self):
            return
        self._deciding = False
        self._enable_decisions()
        if isinstance(error, ConflictError):  # changed since it was shown: show what it is now
            self._show_current()
            self.status.setText(f'<span style="color:#c62828">{escaped(error)} Review the change shown now.</span>')
        elif isinstance(error, LibraryError):
            self.status.setText(f'<span style="color:#c62828">{escaped(error)}</span>')
        else:
            show_error(self, "Review", error)

    def undo(self) -> bool:
        """Take back the newest decision made here, in the background: the skill waits for review
        again, selected, with its comment back in the box. False if there is nothing to take
        back now."""
        if not self._decided or self._deciding:
            return False
        decided = self._decided.pop()
        self._set_deciding(f"Taking back “{escaped(decided.state.label)}” on {escaped(decided.name)}…")
        LibraryOp[Skill](
            self.state,
            self,
            lambda repository: undo(repository, decided.skill_id, decided.state, version=decided.version),
            title="Undo review decision",
        ).success(lambda skill: self._undone(decided, skill)).failure(self._undo_failed).run_in_background(
            initiator=self
        )
        return True

    def _undone(self, decided: Decided, skill: Skill) -> None:
        if not isValid(self):
            return
        self._deciding = False
        now = state_label(skill.review_state.value if skill.review_state else None).lower()
        self.status.setText(
            f"Took back “{escaped(decided.state.label)}” on {escaped(decided.name)}: it is {escaped(now)} again."
        )
        self.comment.setPlainText(decided.comment)
        self.reload(select=decided.skill_id)

    def _undo_failed(self, error: BaseException) -> None:
        if not isValid(self):
            return
        self._deciding = False
        self._enable_decisions()
        if isinstance(error, LibraryError):  # changed or decided since: it stays as it is
            self.status.setText(f'<span style="color:#c62828">{escaped(error)}</span>')
        else:
            show_error(self, "Undo review decision", error)

    # --- the library ---------------------------------------------------------------------------

    def _on_library_changed(self, change: LibraryChange) -> None:
        if change.started_by(self):
            return  # our own decision: the queue reloads when it is recorded, the next one selected
        if change.touches(ChangeKind.REVIEW) or change.touches(ChangeKind.MEMBERSHIP):
            self._refresh()

    def _on_library_opened(self, _repository: SkillRepository) -> None:
        self.loader.discard()
        self.details_loader.discard()
        self._items = []
        self._shown = None
        self._decided.clear()  # decisions in the library that closed
        self.list.clear()
        self.comment.clear()
        self.status.clear()
        self._refresh()

    def _refresh(self) -> None:
        if self.isVisible():
            self.reload()
        else:
            self._stale = True  # a closed queue reads nothing; it catches up when shown again

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self._stale = False
            self.reload()
