"""File › Import…, File › Export Selection…, File › Prune…: preview dialogs over skillstudio.packages.

Each dialog shows what will happen (counts, each skill's action, privacy findings, warnings)
before doing it, with a progress bar while a large input is read. The work itself is the same
Qt-free code the CLI runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from skillstudio.model import Domain, ValidationError
from skillstudio.packages.errors import PackageError
from skillstudio.packages.export import ExportPreview, PrivacyError, export_selection, load_selection
from skillstudio.packages.icpkg import AI_USAGE, PackageMeta
from skillstudio.packages.importer import ImportPlan, apply_plan, plan_import
from skillstudio.packages.prune import PruneCandidate, apply_prune, plan_prune
from skillstudio.packages.sources import FORMATS, Source, read_source
from skillstudio.store import LibraryError, SkillRepository


def _tree(parent: QWidget, headers: list[str]) -> QTreeWidget:
    tree = QTreeWidget(parent)
    tree.setHeaderLabels(headers)
    tree.setRootIsDecorated(False)
    tree.setColumnWidth(0, 90)
    tree.setColumnWidth(1, 300)
    return tree


class QtImportDialog(QDialog):
    """Pick a package, SKILL.md folder, JSON or Voyager library; preview; import."""

    def __init__(
        self, repository: SkillRepository, parent: QWidget | None = None, path: str | Path | None = None
    ) -> None:
        super().__init__(parent)
        self.repository = repository
        self.source: Source | None = None
        self.plan: ImportPlan | None = None
        self.setWindowTitle("Import skills")
        self.resize(820, 560)
        layout = QVBoxLayout(self)
        form = QFormLayout()
        row = QHBoxLayout()
        self.path_edit = QLineEdit(self)
        row.addWidget(self.path_edit)
        for text, slot in (
            ("Package…", self._pick_package),
            ("Folder…", self._pick_folder),
            ("JSON…", self._pick_json),
        ):
            button = QPushButton(text, self)
            button.clicked.connect(slot)
            row.addWidget(button)
        form.addRow("From:", row)
        self.format_box = QComboBox(self)
        self.format_box.addItems(["detect", *FORMATS])
        form.addRow("Format:", self.format_box)
        self.mode_box = QComboBox(self)
        self.mode_box.addItems(["merge", "replace"])
        form.addRow("Same id present:", self.mode_box)
        self.strict_box = QCheckBox("Strict SKILL.md (refuse any spec violation)", self)
        form.addRow("", self.strict_box)
        self.domain_box = QComboBox(self)
        self.domain_box.addItems([d.value for d in Domain])
        form.addRow("Domain if unstated:", self.domain_box)
        layout.addLayout(form)
        self.preview_button = QPushButton("&Preview", self)
        self.preview_button.clicked.connect(self.preview)
        layout.addWidget(self.preview_button)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 3)
        self.progress.setValue(0)
        layout.addWidget(self.progress)
        self.summary = QLabel("Choose what to import, then Preview.", self)
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.steps = _tree(self, ["Action", "Skill", "Reason", "From"])
        layout.addWidget(self.steps, 3)
        self.messages = QPlainTextEdit(self)
        self.messages.setReadOnly(True)
        self.messages.setPlaceholderText("Warnings and problems appear here.")
        layout.addWidget(self.messages, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.import_button = buttons.addButton("&Import", QDialogButtonBox.ButtonRole.AcceptRole)
        self.import_button.setEnabled(False)
        self.import_button.clicked.connect(self.apply)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        if path is not None:
            self.path_edit.setText(str(path))

    def _pick_package(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import package", "", "Workshop packages (*.icpkg *.zip)")
        if path:
            self.path_edit.setText(path)

    def _pick_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Import SKILL.md or Voyager folder")
        if path:
            self.path_edit.setText(path)

    def _pick_json(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import JSON library", "", "JSON (*.json)")
        if path:
            self.path_edit.setText(path)

    def _reading(self, done: int, total: int) -> None:
        """Per-skill progress while a large package is validated."""
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        QApplication.processEvents()

    def _step(self, value: int, text: str) -> None:
        self.progress.setValue(value)
        self.summary.setText(text)
        QApplication.processEvents()

    def preview(self) -> bool:
        """Read and plan; True if there is something to import."""
        self.plan = None
        self.import_button.setEnabled(False)
        self.steps.clear()
        self.messages.clear()
        path = self.path_edit.text().strip()
        if not path:
            return False
        fmt = self.format_box.currentText()
        try:
            self.progress.setRange(0, 1)
            self._step(0, "Reading and validating…")
            self.source = read_source(
                path,
                fmt=None if fmt == "detect" else fmt,
                strict=self.strict_box.isChecked(),
                domain=Domain.parse(self.domain_box.currentText()),
                progress=self._reading,
            )
            self.progress.setRange(0, 3)
            self._step(2, "Comparing with the library…")
            self.plan = plan_import(
                self.repository,
                self.source.incoming,
                origin=self.source.origin,
                source=self.source.label,
                mode=self.mode_box.currentText(),  # type: ignore[arg-type]
            )
        except (ValidationError, LibraryError) as error:
            self.progress.setRange(0, 3)
            self.progress.setValue(0)
            self.summary.setText("Refused: nothing will be imported.")
            self.messages.setPlainText(str(error))
            return False
        self.progress.setValue(3)
        plan = self.plan
        self.summary.setText(f"{self.source.label} ({self.source.format}, {plan.origin}): {plan.summary()}")
        for step in plan.steps:
            item = QTreeWidgetItem([step.action, step.name, step.reason, step.entry])
            item.setData(0, Qt.ItemDataRole.UserRole, step.skill_id)
            self.steps.addTopLevelItem(item)
        self.messages.setPlainText("\n".join(self.source.warnings + plan.warnings))
        self.import_button.setEnabled(plan.changes > 0)
        return plan.changes > 0

    def apply(self) -> None:
        if self.plan is None:
            return
        try:
            apply_plan(self.repository, self.plan)
        except LibraryError as error:
            QMessageBox.warning(self, "Import failed; the library is unchanged", str(error))
            return
        self.accept()


class QtExportDialog(QDialog):
    """Export the selected (or filtered) skills to a Workshop package, after the privacy check."""

    def __init__(self, repository: SkillRepository, skill_ids: Sequence[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.repository = repository
        self.skill_ids = list(skill_ids)
        self.preview: ExportPreview | None = None
        self.setWindowTitle("Export to a Workshop package")
        self.resize(820, 560)
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.name_edit = QLineEdit("my-skill-library", self)
        self.publisher_edit = QLineEdit("local", self)
        self.version_edit = QLineEdit("1.0.0", self)
        self.license_edit = QLineEdit("CC-BY-SA-4.0", self)
        self.display_edit = QLineEdit(self)
        self.description_edit = QLineEdit(self)
        self.ai_usage_box = QComboBox(self)
        self.ai_usage_box.addItems(list(AI_USAGE))
        self.ai_usage_box.setCurrentText("metadata_only")
        row = QHBoxLayout()
        self.output_edit = QLineEdit(self)
        browse = QPushButton("Browse…", self)
        browse.clicked.connect(self._pick_output)
        row.addWidget(self.output_edit)
        row.addWidget(browse)
        for label, widget in (
            ("Package name:", self.name_edit),
            ("Publisher:", self.publisher_edit),
            ("Version:", self.version_edit),
            ("License (SPDX):", self.license_edit),
            ("Display name:", self.display_edit),
            ("Description:", self.description_edit),
            ("AI usage:", self.ai_usage_box),
        ):
            form.addRow(label, widget)
        form.addRow("Save as:", row)
        layout.addLayout(form)
        self.progress = QProgressBar(self)
        layout.addWidget(self.progress)
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.findings = _tree(self, ["Kind", "Skill", "Field", "Text"])
        layout.addWidget(self.findings, 1)
        self.redact_box = QCheckBox("Remove what the privacy check found ([redacted]) and export", self)
        self.redact_box.toggled.connect(self._update_button)
        layout.addWidget(self.redact_box)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.export_button = buttons.addButton("&Export", QDialogButtonBox.ButtonRole.AcceptRole)
        self.export_button.clicked.connect(self.export)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.load()

    def _pick_output(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Export package", f"{self.name_edit.text()}.icpkg", "Workshop packages (*.icpkg)"
        )
        if path:
            self.output_edit.setText(path)

    def _progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        QApplication.processEvents()

    def load(self) -> None:
        try:
            self.preview = load_selection(self.repository, self.skill_ids, progress=self._progress)
        except LibraryError as error:
            self.summary.setText(f"Cannot read the selection: {error}")
            self.preview = None
            self._update_button()
            return
        preview = self.preview
        flagged = len({f.skill_id for f in preview.findings})
        self.summary.setText(
            f"{len(preview.skills)} skills. Privacy check: "
            + (
                f"{len(preview.findings)} findings in {flagged} skills; export is refused unless they are removed."
                if preview.findings
                else "nothing found."
            )
        )
        names = {skill.id: skill.name for skill in preview.skills}
        for finding in preview.findings:
            self.findings.addTopLevelItem(
                QTreeWidgetItem(
                    [finding.kind, names.get(finding.skill_id, finding.skill_id), finding.path, finding.text]
                )
            )
        self._update_button()

    def _update_button(self) -> None:
        ok = self.preview is not None and bool(self.preview.skills)
        if ok and self.preview.findings and not self.redact_box.isChecked():
            ok = False
        self.export_button.setEnabled(ok)

    def meta(self) -> PackageMeta:
        return PackageMeta(
            name=self.name_edit.text().strip(),
            publisher=self.publisher_edit.text().strip(),
            version=self.version_edit.text().strip(),
            license=self.license_edit.text().strip(),
            description=self.description_edit.text(),
            display_name=self.display_edit.text(),
            ai_usage=self.ai_usage_box.currentText(),
        )

    def export(self) -> bool:
        if self.preview is None:
            return False
        output = self.output_edit.text().strip()
        if not output:
            self._pick_output()
            output = self.output_edit.text().strip()
            if not output:
                return False
        try:
            export_selection(self.preview, self.meta(), output, redact=self.redact_box.isChecked())
        except (PrivacyError, PackageError, ValidationError, OSError) as error:
            QMessageBox.warning(self, "Not exported", str(error))
            return False
        self.accept()
        return True


class QtPruneDialog(QDialog):
    """D057 pruning: the list of skills that would go to the trash, then do it."""

    def __init__(self, repository: SkillRepository, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.repository = repository
        self.candidates: list[PruneCandidate] = []
        self.setWindowTitle("Prune the library")
        self.resize(820, 480)
        layout = QVBoxLayout(self)
        row = QHBoxLayout()
        self.limit_box = QCheckBox("Keep at most", self)
        self.size_box = QSpinBox(self)
        self.size_box.setRange(0, 10_000_000)
        self.size_box.setValue(max(repository.count(), 1))
        row.addWidget(self.limit_box)
        row.addWidget(self.size_box)
        row.addWidget(QLabel("skills", self))
        row.addStretch(1)
        refresh = QPushButton("&Preview", self)
        refresh.clicked.connect(self.reload)
        row.addWidget(refresh)
        layout.addLayout(row)
        self.summary = QLabel(self)
        layout.addWidget(self.summary)
        self.list = _tree(self, ["Confidence", "Skill", "Why"])
        layout.addWidget(self.list)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.prune_button = buttons.addButton("&Move to Trash", QDialogButtonBox.ButtonRole.AcceptRole)
        self.prune_button.clicked.connect(self.prune)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.reload()

    def reload(self) -> None:
        max_size = self.size_box.value() if self.limit_box.isChecked() else None
        self.candidates = plan_prune(self.repository, max_size=max_size)
        self.list.clear()
        for c in self.candidates:
            self.list.addTopLevelItem(QTreeWidgetItem([c.confidence, c.name, c.reason]))
        self.summary.setText(f"{len(self.candidates)} skills would move to the trash (restorable from View › Trash).")
        self.prune_button.setEnabled(bool(self.candidates))

    def prune(self) -> None:
        try:
            apply_prune(self.repository, self.candidates)
        except LibraryError as error:
            QMessageBox.warning(self, "Not pruned", str(error))
            return
        self.accept()


__all__ = ["QtExportDialog", "QtImportDialog", "QtPruneDialog"]
