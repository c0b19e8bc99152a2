"""The review queue: pending skills, newest first, with everything a reviewer needs to decide.

Left: the queue (filter by creator and source). Right: the selected skill's provenance,
verification figures and risk findings, the diff since its last approved revision, a comment
box and Approve (Ctrl+Return) / Reject (Ctrl+Shift+R) / Request changes (Ctrl+Shift+C). After a
decision the next item is selected automatically. The work is done by :mod:`skillstudio.review`.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
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

from skillstudio.gui.qt_diff_view import QtDiffView
from skillstudio.model import ReviewState, SourceKind
from skillstudio.review import change_since_approved, findings_for, pending_queue
from skillstudio.review.linter import Linter
from skillstudio.review.workflow import QueueItem
from skillstudio.store import ConflictError, LibraryError, RiskFinding, SkillRepository

SHORTCUTS = {
    ReviewState.APPROVED: QKeySequence("Ctrl+Return"),
    ReviewState.REJECTED: QKeySequence("Ctrl+Shift+R"),
    ReviewState.CHANGES_REQUESTED: QKeySequence("Ctrl+Shift+C"),
}
_SEVERITY_COLOUR = {"high": "#c62828", "medium": "#ef6c00", "low": "#1565c0", "info": "#607d8b"}
_ANY = "(anyone)"
LINT_ON_OPEN = 200  # unlinted pending skills linted when the queue loads (more: when selected)


def _e(value: object) -> str:
    return html.escape(str(value))


def findings_html(findings: list[RiskFinding]) -> str:
    """Risk findings as HTML rows (also used by the detail pane)."""
    if not findings:
        return '<p style="color:#2e7d32">No risk findings.</p>'
    rows = []
    for f in findings:
        colour = _SEVERITY_COLOUR.get(f.severity, "#607d8b")
        where = f"{f.field} {f.start}–{f.end}" if f.end > f.start else f.field
        excerpt = f" <code>{_e(f.excerpt)}</code>" if f.excerpt else ""
        rows.append(
            f'<li><b style="color:{colour}">{_e(f.severity.upper())}</b> {_e(f.reason)} '
            f'<span style="color:#707070">({_e(f.rule)}; {_e(where)})</span>{excerpt}</li>'
        )
    return "<ul>" + "".join(rows) + "</ul>"


class QtReviewQueue(QDialog):
    decided = Signal(str, str)  # skill id, new state

    def __init__(self, repository: SkillRepository, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.repository = repository
        self.setWindowTitle("Review Queue")
        self.setWindowFlag(Qt.WindowType.WindowMaximizeButtonHint, True)
        self.setSizeGripEnabled(True)
        self.resize(1320, 820)
        self._items: list[QueueItem] = []

        self.creator_filter = QComboBox(self)
        self.creator_filter.setAccessibleName("Created by")
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
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        for button, state in (
            (self.approve_button, ReviewState.APPROVED),
            (self.reject_button, ReviewState.REJECTED),
            (self.changes_button, ReviewState.CHANGES_REQUESTED),
        ):
            button.setToolTip(
                f"{button.text().replace('&', '')} ({SHORTCUTS[state].toString(QKeySequence.SequenceFormat.NativeText)})"
            )
            button.clicked.connect(lambda _checked=False, s=state: self.decide(s))
            shortcut = QShortcut(SHORTCUTS[state], self)
            shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
            shortcut.activated.connect(lambda s=state: self.decide(s))

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
        self._fill_creators()
        self.reload()

    # --- queue ---------------------------------------------------------------------------------

    def _fill_creators(self) -> None:
        creators = sorted({item.summary.created_by for item in pending_queue(self.repository)})
        self.creator_filter.blockSignals(True)
        self.creator_filter.clear()
        self.creator_filter.addItem(_ANY, None)
        for creator in creators:
            self.creator_filter.addItem(creator, creator)
        self.creator_filter.blockSignals(False)

    def reload(self, select: str | None = None) -> None:
        creator = self.creator_filter.currentData()
        source = self.source_filter.currentData()
        self._items = pending_queue(
            self.repository, created_by=[creator] if creator else [], sources=[SourceKind(source)] if source else []
        )
        findings = self.repository.findings.many([item.summary.id for item in self._items])
        unlinted = [item.summary.id for item in self._items if item.summary.id not in findings][:LINT_ON_OPEN]
        if unlinted:  # skills written before the linter ran (an engine's, an older import): lint now
            linter = Linter(repository=self.repository)
            for skill in self.repository.get_many(unlinted):
                found = linter.lint_and_store(skill)
                if found:
                    findings[skill.id] = found
        self.list.blockSignals(True)
        self.list.clear()
        for item in self._items:
            s = item.summary
            risk = findings.get(s.id, [])
            worst = next((sev for sev in ("high", "medium", "low", "info") if any(f.severity == sev for f in risk)), "")
            try:
                source = SourceKind(s.source).label
            except ValueError:
                source = s.source
            row = QTreeWidgetItem(
                [s.name, s.created_by, source, f"{len(risk)} ({worst})" if risk else "—", item.changed_at[:10]]
            )
            row.setToolTip(4, item.changed_at.replace("T", " "))
            row.setToolTip(1, s.created_by)
            row.setData(0, Qt.ItemDataRole.UserRole, s.id)
            row.setToolTip(0, s.name)
            if worst in ("high", "medium"):
                row.setForeground(3, Qt.GlobalColor.darkRed if worst == "high" else Qt.GlobalColor.darkYellow)
            self.list.addTopLevelItem(row)
        self.list.blockSignals(False)
        count = len(self._items)
        self.count_label.setText(
            "No skills wait for review"
            if not count
            else "1 skill waits for review"
            if count == 1
            else f"{count} skills wait for review"
        )
        ids = self.pending_ids()
        index = ids.index(select) if select in ids else 0
        if ids:
            self.list.setCurrentItem(self.list.topLevelItem(index))
        self._show_current()

    def pending_ids(self) -> list[str]:
        return [item.summary.id for item in self._items]

    def current_id(self) -> str | None:
        item = self.list.currentItem()
        return None if item is None else item.data(0, Qt.ItemDataRole.UserRole)

    def select(self, skill_id: str) -> None:
        ids = self.pending_ids()
        if skill_id in ids:
            self.list.setCurrentItem(self.list.topLevelItem(ids.index(skill_id)))

    # --- the selected skill --------------------------------------------------------------------

    def _show_current(self) -> None:
        skill_id = self.current_id()
        for button in (self.approve_button, self.reject_button, self.changes_button):
            button.setEnabled(skill_id is not None)
        if skill_id is None:
            self.details.setHtml('<p style="color:#707070">Nothing waits for review.</p>')
            self.diff.show_message("Select a pending skill to see what changed since it was last approved.")
            return
        try:
            change = change_since_approved(self.repository, skill_id)
            findings = findings_for(self.repository, change.current)
        except LibraryError as error:
            self.details.setHtml(f'<p style="color:#c62828">{_e(error)}</p>')
            self.diff.show_message(str(error))
            return
        skill = change.current
        self._shown = (skill.id, skill.version)  # a decision is on the content shown here
        quality = skill.quality
        source = skill.provenance.source
        extras = self.repository.extras.get(skill.id)
        decisions = self.repository.reviews.decisions(skill.id)
        rate = f"{quality.success_rate:.0%}" if quality.verification_count else "—"
        rows = [
            ("Created", f"{skill.created_at[:16].replace('T', ' ')} by <b>{_e(skill.created_by)}</b>"),
            (
                "Source",
                _e(source.kind.label)
                + (f" · {_e(source.source_id)}" if source.source_id else "")
                + (f" · from {_e(extras.origin)}" if extras and extras.origin else ""),
            ),
            ("Domain", f"{_e(skill.domain.label)} · {_e(skill.game_module)} · {_e(skill.body_kind.label)}"),
            ("LLM model", _e(skill.provenance.model_id or "—")),
            (
                "Verification",
                f"{_e(quality.confidence.value)} · "
                + (
                    f"success {rate} over {quality.verification_count} verifications · last {_e((quality.last_verified or '—')[:10])}"
                    if quality.verification_count
                    else "not verified yet"
                ),
            ),
            ("Revisions", str(len(self.repository.history.revisions(skill.id)))),
        ]
        if decisions:
            last = decisions[-1]
            rows.append(
                (
                    "Last decision",
                    f"{_e(last.state)} by {_e(last.reviewer)} {_e(last.at[:16].replace('T', ' '))}"
                    + (f": “{_e(last.comment)}”" if last.comment else ""),
                )
            )
        table = "".join(f"<tr><td style='color:#707070;padding-right:10px'>{k}</td><td>{v}</td></tr>" for k, v in rows)
        warnings = ""
        if extras and extras.warnings:
            warnings = (
                "<p><b>Import warnings</b></p><ul>" + "".join(f"<li>{_e(w)}</li>" for w in extras.warnings) + "</ul>"
            )
        self.details.setHtml(
            f"<h3 style='margin:0'>{_e(skill.name)}</h3><p>{_e(skill.description) or '<i>No description.</i>'}</p>"
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

    # --- deciding ------------------------------------------------------------------------------

    def decide(self, state: ReviewState) -> bool:
        """Record ``state`` for the selected skill with the comment; the next item follows."""
        skill_id = self.current_id()
        if skill_id is None:
            return False
        ids = self.pending_ids()
        position = ids.index(skill_id)
        following = ids[position + 1] if position + 1 < len(ids) else (ids[position - 1] if position > 0 else None)
        shown_id, shown_version = getattr(self, "_shown", (None, None))
        if shown_id != skill_id:  # nothing of it was shown (it could not be read): nothing to decide on
            self.status.setText('<span style="color:#c62828">Select the skill again: it was not shown.</span>')
            return False
        try:
            self.repository.reviews.review(
                skill_id, state, comment=self.comment.toPlainText().strip(), version=shown_version
            )
        except ConflictError as error:  # changed since it was shown: show what it is now
            self._show_current()
            self.status.setText(f'<span style="color:#c62828">{_e(error)} Review the change shown now.</span>')
            return False
        except LibraryError as error:
            self.status.setText(f'<span style="color:#c62828">{_e(error)}</span>')
            return False
        self.comment.clear()
        self.status.setText(f"{_e(state.label)}: {_e(self.list.currentItem().text(0))}")
        self.decided.emit(skill_id, state.value)
        self.reload(select=following)
        return True
