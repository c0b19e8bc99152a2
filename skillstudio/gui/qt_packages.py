"""File › Import…, File › Export Selection…, File › Prune…: preview dialogs over skillstudio.packages.

Each dialog shows what will happen (counts, each skill's action, privacy findings, warnings)
before doing it. The work itself is the same Qt-free code the CLI runs:

- reading and previewing (a package is untrusted input; a large one takes seconds to validate)
  runs in the background with progress; a newer preview supersedes an older one, and a read
  that is superseded or abandoned stops at its next progress report;
- the import, the export and the prune run as :class:`LibraryOp` operations: the dialog stays
  responsive and shows that it works; the store announces what changed to every view.

An input that is refused is said in the dialog, and the library stays exactly as it was.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QLocale, QObject, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
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
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from skillstudio.gui.browser_state import BrowserState
from skillstudio.gui.rows_model import RowsModel, rows_view
from skillstudio.gui.workers import FullCollectionsHeld, LatestOnly, LibraryOp, Tasks, drain, show_error
from skillstudio.model import Confidence, Domain, ValidationError
from skillstudio.model.naming import counted
from skillstudio.packages.export import ExportPreview, export_selection, load_selection
from skillstudio.packages.icpkg import AI_USAGE, PackageMeta, check_meta
from skillstudio.packages.importer import ImportPlan, Mode, PlannedSkill, apply_plan, plan_import
from skillstudio.packages.privacy import Finding
from skillstudio.packages.prune import PruneCandidate, apply_prune, plan_prune
from skillstudio.packages.sources import DEFAULT_GAME_MODULE, FORMATS, ImportDefaults, import_defaults, read_source
from skillstudio.store import ChangeKind, LibraryChange, LibraryError, SkillRepository

# How the import's choices and steps read on screen; the values are the CLI's spellings.
FORMAT_LABELS = {
    "icpkg": "Workshop package (.icpkg)",
    "skill-md": "SKILL.md folder",
    "json": "JSON skill library",
    "voyager": "Voyager library",
}
MODE_LABELS = {"merge": "Keep the library's skill (merge)", "replace": "Replace it with the imported one"}
STEP_LABELS = {"add": "Add", "update": "Update", "skip": "Skip", "conflict": "Conflict", "trash": "Move to trash"}
AI_USAGE_LABELS = {
    "allow": "Allow AI use",
    "metadata_only": "Metadata only",
    "deny": "Deny AI use",
}


def _step_cells(step: PlannedSkill) -> tuple[str, str, str, str]:
    return (STEP_LABELS.get(step.action, step.action), step.name, step.reason, step.entry)


def show_progress(bar: QProgressBar, done: int, total: int) -> None:
    bar.setRange(0, max(total, 1))
    bar.setValue(done)


class ReadCancelled(Exception):
    """A background read stopped because nobody waits for its answer any more."""


Report = Callable[..., None]


class BackgroundRead(QObject):
    """A dialog's reads: the latest request wins, its progress reaches the GUI thread.

    The readers in skillstudio.packages report progress through a callback on the thread that
    reads; here that callback posts the value to the GUI thread, and raises
    :class:`ReadCancelled` once the read was superseded or abandoned (the dialog closed), which
    is as close to cancelling as the readers allow."""

    _reported = Signal(int, object)  # generation, progress values; emitted on the reading thread

    def __init__(
        self, parent: QObject, done: Callable[[Any], None], failed: Callable[[BaseException], None], progress: Report
    ) -> None:
        super().__init__(parent)
        self._progress = progress
        self._generation = 0
        self._cancelled = threading.Event()
        self.loader = LatestOnly(self, done, failed)
        self._reported.connect(self._on_reported, Qt.ConnectionType.QueuedConnection)

    def request(self, func: Callable[..., Any], *args: Any) -> None:
        """Run ``func(*args, report)`` in the background; ``report(*values)`` is its progress."""
        self._cancelled.set()
        self._cancelled = cancelled = threading.Event()
        self._generation += 1
        generation = self._generation
        reported = self._reported

        def report(*values: Any) -> None:
            if cancelled.is_set():
                raise ReadCancelled
            reported.emit(generation, values)

        self.loader.request(func, *args, report)

    def stop(self) -> None:
        """Abandon the read in flight: it stops at its next report, its answer is dropped."""
        self._cancelled.set()
        self._generation += 1
        self.loader.discard()

    @property
    def loading(self) -> bool:
        return self.loader.loading

    def _on_reported(self, generation: int, values: tuple[Any, ...]) -> None:
        if generation == self._generation:
            self._progress(*values)


# --- large reads and the GIL -------------------------------------------------------------------
# A package of 10,000 skills is a few hundred thousand Python objects. Two things then hold the
# GIL long enough to stop the GUI thread for a tenth of a second or more, whichever thread
# does them: the collector's full passes (each walks every object; while the objects are being
# allocated they come one after another, each time the heap grew by a quarter), and freeing
# them all in one go (one uninterrupted cascade of deallocations).


def _release_after(tasks: Tasks, held: FullCollectionsHeld) -> None:
    """Release ``held`` once the work ``tasks`` has (drains, one at a time) is done."""
    if tasks.running:
        tasks.run(lambda: None, finished=held.release)
    else:
        held.release()


@dataclass(frozen=True)
class ImportPreview:
    label: str  # what was read, e.g. the file name
    format: str
    warnings: list[str]
    plan: ImportPlan


def _read_and_plan(
    repository: SkillRepository,
    path: str,
    fmt: str | None,
    strict: bool,
    domain: Domain,
    game_module: str,
    mode: Mode,
    report: Report,
) -> ImportPreview:
    """Read and validate everything at ``path``, then plan it against the library (no writes);
    ``domain`` and ``game_module`` go to skills whose input states none."""
    report("Reading and validating…")
    source = read_source(path, fmt=fmt, strict=strict, domain=domain, game_module=game_module, progress=report)
    report("Comparing with the library…")
    plan = plan_import(repository, source.incoming, origin=source.origin, source=source.label, mode=mode)
    preview = ImportPreview(source.label, source.format, list(source.warnings), plan)
    drain(source.incoming)  # the plan has what the import needs; the rest is freed here
    return preview


def _apply_handed(repository: SkillRepository, handed: list[ImportPlan]) -> str:
    """Apply the plan handed over; on success free its skills here, on failure hand it back."""
    plan = handed.pop()
    try:
        apply_plan(repository, plan)
    except BaseException:
        handed.append(plan)
        raise
    drain(plan.added, plan.replaced)
    return f"Imported from {plan.source}: {plan.summary()}"


class QtImportDialog(QDialog):
    """Pick a package, SKILL.md folder, JSON or Voyager library; preview; import."""

    def __init__(self, state: BrowserState, parent: QWidget | None = None, path: str | Path | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.plan: ImportPlan | None = None
        self._writing = False
        self.reader = BackgroundRead(self, self._previewed, self._refused, self._reported)
        self._disposal = Tasks(self)  # frees dropped previews off the GUI thread
        self._held = FullCollectionsHeld()  # from the first preview until the dialog is done
        self.destroyed.connect(self._held.release)
        self.setWindowTitle("Import skills")
        self.resize(820, 560)
        layout = QVBoxLayout(self)
        form = QFormLayout()
        row = QHBoxLayout()
        self.path_edit = QLineEdit(self)
        row.addWidget(self.path_edit)
        self._pick_buttons: list[QPushButton] = []
        for text, slot in (
            ("Package…", self._pick_package),
            ("Folder…", self._pick_folder),
            ("JSON…", self._pick_json),
        ):
            button = QPushButton(text, self)
            button.clicked.connect(slot)
            row.addWidget(button)
            self._pick_buttons.append(button)
        form.addRow("From:", row)
        self.format_box = QComboBox(self)
        self.format_box.addItem("Detect from what is chosen", None)
        for fmt in FORMATS:
            self.format_box.addItem(FORMAT_LABELS.get(fmt, fmt), fmt)
        form.addRow("Format:", self.format_box)
        self.mode_box = QComboBox(self)
        for mode, label in MODE_LABELS.items():
            self.mode_box.addItem(label, mode)
        form.addRow("Same skill already here:", self.mode_box)
        self.strict_box = QCheckBox("Strict SKILL.md (refuse any spec violation)", self)
        form.addRow("", self.strict_box)
        # SKILL.md, JSON and Voyager inputs may not say what game or domain their skills are for
        unstated = "For skills whose file does not say (SKILL.md, JSON and Voyager libraries); packages say."
        self.module_box = QComboBox(self)
        self.module_box.setEditable(True)  # a module the library does not have yet can be typed
        self.module_box.setAccessibleName("Game module if unstated")
        self.module_box.setToolTip(unstated + " Lists the modules this library has, the most common first.")
        form.addRow("Game module if unstated:", self.module_box)
        self.module_box.setCurrentText(DEFAULT_GAME_MODULE)  # until the library's own are read
        self.domain_box = QComboBox(self)
        self.domain_box.setAccessibleName("Domain if unstated")
        self.domain_box.setToolTip(unstated)
        for domain in Domain:
            self.domain_box.addItem(domain.label, domain.value)
        form.addRow("Domain if unstated:", self.domain_box)
        layout.addLayout(form)
        self._chosen_defaults = False  # the user picked a module or domain: library defaults stay out
        self.module_box.activated.connect(self._choose_defaults)
        typed = self.module_box.lineEdit()
        assert typed is not None  # an editable combo box has one
        typed.textEdited.connect(lambda _text: self._choose_defaults())
        self.domain_box.activated.connect(self._choose_defaults)
        self.defaults_loader = LatestOnly(self, self._show_defaults)
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
        self.steps_model = RowsModel(
            ("Action", "Skill", "Reason", "From"), _step_cells, self, key=lambda step: step.skill_id, tips=(2,)
        )
        self.steps = rows_view(self, self.steps_model)
        layout.addWidget(self.steps, 3)
        self.messages = QPlainTextEdit(self)
        self.messages.setReadOnly(True)
        self.messages.setPlaceholderText("Warnings and problems appear here.")
        layout.addWidget(self.messages, 1)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.import_button = self.buttons.addButton("&Import", QDialogButtonBox.ButtonRole.AcceptRole)
        self.import_button.setEnabled(False)
        self.import_button.clicked.connect(self.apply)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        if path is not None:
            self.path_edit.setText(str(path))
        state.library_opened.connect(self._on_library_opened)
        state.library_changed.connect(self._on_library_changed)
        self._load_defaults()

    # --- the game module and domain for inputs that do not state them --------------------------

    def _load_defaults(self) -> None:
        """The library's modules (most common first, the default) and most common domain."""
        repository = self.state.repository
        if repository is not None:
            self.defaults_loader.request(import_defaults, repository)

    def _show_defaults(self, defaults: ImportDefaults) -> None:
        # what a preview under way (or shown) used stays shown, as does what the user chose
        keep = self._chosen_defaults or self.plan is not None or self.reader.loading
        shown = self.module_box.currentText()
        self.module_box.blockSignals(True)
        self.module_box.clear()
        self.module_box.addItems(defaults.game_modules)
        self.module_box.setCurrentText(shown if keep else defaults.game_modules[0])
        self.module_box.blockSignals(False)
        if not keep:
            self.domain_box.setCurrentIndex(self.domain_box.findData(defaults.domain.value))

    def _choose_defaults(self) -> None:
        self._chosen_defaults = True

    def game_module(self) -> str:
        return self.module_box.currentText().strip()

    def domain(self) -> Domain:
        return Domain(self.domain_box.currentData())

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

    # --- preview (in the background) -----------------------------------------------------------

    def preview(self) -> None:
        """Read and plan in the background; Import is enabled if there is something to import."""
        if self._writing:
            return
        self._drop_plan()
        self.messages.clear()
        path = self.path_edit.text().strip()
        if not path:
            self.reader.stop()
            return
        if not self.game_module():
            self.reader.stop()
            self.summary.setText("Name the game module for skills whose file does not say (e.g. ra1).")
            return
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self._held.hold()
        self.reader.request(
            _read_and_plan,
            self.state.require_repository(),
            path,
            self.format_box.currentData(),
            self.strict_box.isChecked(),
            self.domain(),
            self.game_module(),
            self._mode(),
        )

    def _mode(self) -> Mode:
        return "replace" if self.mode_box.currentData() == "replace" else "merge"

    def _reported(self, *values: Any) -> None:
        if len(values) == 1:  # a phase: reading, then comparing
            text = str(values[0])
            if text.startswith("Comparing"):
                self.progress.setRange(0, 3)
                self.progress.setValue(2)
            self.summary.setText(text)
        else:
            self._reading(*values)

    def _reading(self, done: int, total: int) -> None:
        """Per-skill progress while a large package is validated."""
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)

    def _previewed(self, preview: ImportPreview) -> None:
        plan = self.plan = preview.plan
        self.progress.setRange(0, 3)
        self.progress.setValue(3)
        kind = FORMAT_LABELS.get(preview.format, preview.format)
        self.summary.setText(f"{preview.label} ({kind}, {plan.origin}): {plan.summary()}")
        self.steps_model.set_rows(plan.steps)
        self.messages.setPlainText("\n".join(preview.warnings + plan.warnings))
        self.import_button.setEnabled(plan.changes > 0)

    def _refused(self, error: BaseException) -> None:
        self.progress.setRange(0, 3)
        self.progress.setValue(0)
        if isinstance(error, ValidationError | LibraryError):  # the input (or the library) says no
            self.summary.setText("Refused: nothing will be imported.")
            self.messages.setPlainText(str(error))
            return
        self.summary.setText("Could not read this; nothing will be imported.")
        show_error(self, "Cannot preview the import", error)

    def _drop_plan(self) -> None:
        """Forget the preview; its skills are freed in the background, piece by piece."""
        plan, self.plan = self.plan, None
        self.steps_model.set_rows(())
        self.import_button.setEnabled(False)
        if plan is not None:
            self._disposal.run(drain, plan.added, plan.replaced, plan.steps)

    # --- the import (an operation) -------------------------------------------------------------

    def apply(self) -> None:
        """Import the previewed plan, in one transaction, in the background."""
        plan = self.plan
        if plan is None or self._writing:
            return
        handed, self.plan = [plan], None  # the operation takes the plan (and frees it once written)
        self._set_writing(True)
        self.summary.setText(f"Importing {plan.changes:,} skills…")
        LibraryOp[str](self.state, self, lambda repository: _apply_handed(repository, handed), title="Import").success(
            self._imported
        ).failure(lambda error: self._import_failed(error, handed)).run_in_background(initiator=self)

    def _imported(self, summary: str) -> None:
        self.state.say(summary)
        if isValid(self):
            self._set_writing(False)
            self.accept()

    def _import_failed(self, error: BaseException, handed: list[ImportPlan]) -> None:
        if not isValid(self):
            show_error(None, "Import failed; the library is unchanged", error)
            return
        if handed:
            self.plan = handed.pop()  # handed back: it can be tried again
        self._set_writing(False)
        self.summary.setText("Not imported: the library is unchanged.")
        show_error(self, "Import failed; the library is unchanged", error)

    def _set_writing(self, writing: bool) -> None:
        """While the one transaction runs, nothing can stop it: the dialog shows it and waits."""
        self._writing = writing
        if writing:
            self.progress.setRange(0, 0)  # busy: the store reports no progress inside a transaction
        else:
            self.progress.setRange(0, 3)
            self.progress.setValue(0)
        for widget in (
            self.preview_button,
            self.path_edit,
            self.format_box,
            self.mode_box,
            self.strict_box,
            self.module_box,
            self.domain_box,
            self.buttons.button(QDialogButtonBox.StandardButton.Cancel),
            *self._pick_buttons,
        ):
            widget.setEnabled(not writing)
        self.import_button.setEnabled(not writing and self.plan is not None and self.plan.changes > 0)

    def reject(self) -> None:
        if self._writing:  # the transaction finishes whatever the dialog does; it says so when done
            return
        super().reject()

    def done(self, result: int) -> None:
        self.reader.stop()  # a read still running answers nobody now
        self._drop_plan()  # the dialog may live on (hidden): it keeps nothing of the package
        _release_after(self._disposal, self._held)
        super().done(result)

    # --- the library ---------------------------------------------------------------------------

    def _on_library_opened(self, _repository: SkillRepository) -> None:
        self.reader.stop()
        self._drop_plan()
        self._chosen_defaults = False  # the new library's own modules and domain
        self._load_defaults()
        self.summary.setText("Another library is open now: Preview again.")

    def _on_library_changed(self, change: LibraryChange) -> None:
        if self._writing or change.started_by(self) or self.plan is None:
            return
        if change.touches(ChangeKind.CONTENT) or change.touches(ChangeKind.MEMBERSHIP):
            self._drop_plan()  # what the preview said no longer describes the library
            self.summary.setText("The library changed since the preview: Preview again.")


class QtExportDialog(QDialog):
    """Export the selected (or filtered) skills to a Workshop package, after the privacy check."""

    def __init__(self, state: BrowserState, skill_ids: Sequence[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.skill_ids = list(skill_ids)
        self.preview: ExportPreview | None = None
        self.confirmation: QMessageBox | None = None  # says where the export went, once done
        self._writing = False
        self.reader = BackgroundRead(self, self._loaded, self._load_failed, self._progress)
        self._disposal = Tasks(self)
        self._held = FullCollectionsHeld()  # from the first read until the dialog is done
        self.destroyed.connect(self._held.release)
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
        for usage in AI_USAGE:
            self.ai_usage_box.addItem(AI_USAGE_LABELS.get(usage, usage), usage)
            self.ai_usage_box.setItemData(self.ai_usage_box.count() - 1, usage, Qt.ItemDataRole.ToolTipRole)
        self.ai_usage_box.setCurrentIndex(self.ai_usage_box.findData("metadata_only"))
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
        self.summary = QLabel("Reading the selection…", self)
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self._names: dict[str, str] = {}
        self.findings_model = RowsModel(("Kind", "Skill", "Field", "Text"), self._finding_cells, self, tips=(3,))
        self.findings = rows_view(self, self.findings_model, widths=(130, 300, 110))
        layout.addWidget(self.findings, 1)
        self.notes = QPlainTextEdit(self)  # links to skills left out: the exporter may want them too
        self.notes.setReadOnly(True)
        self.notes.setAccessibleName("Notes on the export")
        self.notes.setMaximumHeight(90)
        self.notes.hide()
        layout.addWidget(self.notes)
        self.redact_box = QCheckBox("Remove what the privacy check found ([redacted]) and export", self)
        self.redact_box.toggled.connect(self._update_button)
        layout.addWidget(self.redact_box)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.export_button = self.buttons.addButton("&Export", QDialogButtonBox.ButtonRole.AcceptRole)
        self.export_button.clicked.connect(self.export)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        state.library_opened.connect(self._on_library_opened)
        self.load()

    def _pick_output(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Export package", f"{self.name_edit.text()}.icpkg", "Workshop packages (*.icpkg)"
        )
        if path:
            self.output_edit.setText(path)

    def _progress(self, done: int, total: int) -> None:
        show_progress(self.progress, done, total)

    def load(self) -> None:
        """Read the selection and run the privacy check, in the background."""
        self._drop_preview()
        self.findings_model.set_rows(())
        self._names = {}
        self._update_button()
        self._held.hold()
        self.reader.request(self._read, self.state.require_repository(), self.skill_ids)

    @staticmethod
    def _read(repository: SkillRepository, skill_ids: list[str], report: Report) -> ExportPreview:
        return load_selection(repository, skill_ids, progress=report)

    def _loaded(self, preview: ExportPreview) -> None:
        self.preview = preview
        flagged = len({f.skill_id for f in preview.findings})
        left_out = [
            f"{counted(len(preview.rejected), 'rejected skill')} left out (rejected skills are never exported)"
            if preview.rejected
            else "",
            f"{counted(len(preview.skipped), 'row')} left out: not valid skills" if preview.skipped else "",
        ]
        self.summary.setText(
            f"{counted(len(preview.skills), 'skill')} to export. Privacy check: "
            + (
                f"{counted(len(preview.findings), 'finding')} in {counted(flagged, 'skill')}; "
                "the export is refused unless they are removed."
                if preview.findings
                else "nothing found."
            )
            + "".join(f" {text}." for text in left_out if text)
        )
        notes = preview.link_warnings()
        self.notes.setPlainText("\n".join(notes))
        self.notes.setVisible(bool(notes))
        self._names = {skill.id: skill.name for skill in preview.skills}
        self.findings_model.set_rows(preview.findings)
        self._update_button()

    def _finding_cells(self, finding: Finding) -> tuple[str, str, str, str]:
        return (finding.kind_label, self._names.get(finding.skill_id, finding.skill_id), finding.path, finding.text)

    def _load_failed(self, error: BaseException) -> None:
        self.preview = None
        self._update_button()
        if isinstance(error, LibraryError):
            self.summary.setText(f"Cannot read the selection: {error}")
            return
        self.summary.setText("Cannot read the selection.")
        show_error(self, "Cannot read the selection", error)

    def _update_button(self) -> None:
        preview = self.preview
        ok = not self._writing and preview is not None and bool(preview.skills)
        if ok and preview is not None and preview.findings and not self.redact_box.isChecked():
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
            ai_usage=self.ai_usage_box.currentData(),
        )

    def export(self) -> bool:
        """Write the package in the background; True if the export started."""
        preview = self.preview
        if preview is None or self._writing:
            return False
        output = self.output_edit.text().strip()
        if not output:
            self._pick_output()
            output = self.output_edit.text().strip()
            if not output:
                return False
        meta, redact = self.meta(), self.redact_box.isChecked()
        try:
            check_meta(meta)  # a typo in the form is said at once, before any work starts
        except ValidationError as error:
            show_error(self, "Not exported", error)
            return False
        self._set_writing(True)

        def write(_repository: SkillRepository) -> tuple[int, int]:
            written = export_selection(preview, meta, output, redact=redact)
            return len(written), Path(output).stat().st_size

        LibraryOp[tuple[int, int]](self.state, self, write, title="Export").success(
            lambda result: self._exported(*result, output)
        ).failure(self._export_failed).run_in_background(initiator=self)
        return True

    def _exported(self, count: int, size: int, output: str) -> None:
        path = Path(output).resolve()
        self.state.say(f"Exported {counted(count, 'skill')} to {path}")
        if not isValid(self):
            return
        self._set_writing(False)
        self.accept()
        self.confirmation = exported_message(self.parentWidget() or self, path, count, size)
        self.confirmation.open()

    def _export_failed(self, error: BaseException) -> None:
        if isValid(self):
            self._set_writing(False)
        show_error(self if isValid(self) else None, "Not exported", error)

    def _set_writing(self, writing: bool) -> None:
        self._writing = writing
        if writing:
            self.progress.setRange(0, 0)
        else:
            self.progress.setRange(0, 1)
            self.progress.setValue(1)
        self.buttons.button(QDialogButtonBox.StandardButton.Cancel).setEnabled(not writing)
        self._update_button()

    def reject(self) -> None:
        if self._writing:  # the file is written whole or not at all; wait for it
            return
        super().reject()

    def _drop_preview(self) -> None:
        preview, self.preview = self.preview, None
        if preview is not None:
            self._disposal.run(drain, preview.skills)

    def done(self, result: int) -> None:
        self.reader.stop()
        self._drop_preview()  # the dialog may live on (hidden): it keeps none of the skills
        _release_after(self._disposal, self._held)
        super().done(result)

    def _on_library_opened(self, _repository: SkillRepository) -> None:
        if not self._writing:
            self.reject()  # the selection was in the library that closed


def exported_message(parent: QWidget, path: Path, count: int, size: int) -> QMessageBox:
    """Where the export went (the file, its size, how many skills), with Show in Folder."""
    box = QMessageBox(
        QMessageBox.Icon.Information,
        "Exported",
        f"Exported {counted(count, 'skill')} to {path.name} ({QLocale().formattedDataSize(size)}).",
        QMessageBox.StandardButton.Ok,
        parent,
    )
    box.setInformativeText(f"Folder: {path.parent}")
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)  # the path can be copied
    show = box.addButton("Show in Folder", QMessageBox.ButtonRole.ActionRole)
    show.clicked.connect(lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(path.parent))))
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    return box


def _candidate_cells(candidate: PruneCandidate) -> tuple[str, str, str]:
    why = candidate.reason[:1].upper() + candidate.reason[1:]  # a column of its own: a sentence
    return (Confidence.label_of(candidate.confidence), candidate.name, why)


def _plan_prune(repository: SkillRepository, max_size: int | None, report: Report) -> tuple[int, list[PruneCandidate]]:
    return repository.count(), plan_prune(repository, max_size=max_size, progress=report)


class QtPruneDialog(QDialog):
    """D057 pruning: the list of skills that would go to the trash, then do it."""

    def __init__(self, state: BrowserState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.candidates: list[PruneCandidate] = []
        self._writing = False
        self._sized = False  # the size box starts at the library's size, once it is known
        self.reader = BackgroundRead(self, self._previewed, self._preview_failed, self._progress)
        self._held = FullCollectionsHeld()  # while every skill is read to find the candidates
        self.destroyed.connect(self._held.release)
        self.setWindowTitle("Prune the library")
        self.resize(820, 480)
        layout = QVBoxLayout(self)
        row = QHBoxLayout()
        self.limit_box = QCheckBox("Keep at most", self)
        self.size_box = QSpinBox(self)
        self.size_box.setRange(0, 10_000_000)
        self.size_box.setValue(1)
        row.addWidget(self.limit_box)
        row.addWidget(self.size_box)
        row.addWidget(QLabel("skills", self))
        row.addStretch(1)
        self.preview_button = QPushButton("&Preview", self)
        self.preview_button.clicked.connect(self.reload)
        row.addWidget(self.preview_button)
        layout.addLayout(row)
        self.summary = QLabel(self)
        layout.addWidget(self.summary)
        self.candidates_model = RowsModel(
            ("Confidence", "Skill", "Why"), _candidate_cells, self, key=lambda c: c.skill_id, tips=(1, 2)
        )
        self.list = rows_view(self, self.candidates_model)
        layout.addWidget(self.list)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 1)
        layout.addWidget(self.progress)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.prune_button = self.buttons.addButton("&Move to Trash", QDialogButtonBox.ButtonRole.AcceptRole)
        self.prune_button.clicked.connect(self.prune)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        state.library_opened.connect(self._on_library_opened)
        state.library_changed.connect(self._on_library_changed)
        self.reload()

    def reload(self) -> None:
        """Work out the candidates in the background (every skill is read)."""
        if self._writing:
            return
        max_size = self.size_box.value() if self.limit_box.isChecked() else None
        self.candidates = []
        self.candidates_model.set_rows(())
        self.prune_button.setEnabled(False)
        self.summary.setText("Looking for skills to prune…")
        self.progress.setRange(0, 0)
        self._held.hold()
        self.reader.request(_plan_prune, self.state.require_repository(), max_size)

    def _progress(self, done: int, total: int) -> None:
        show_progress(self.progress, done, total)

    def _previewed(self, result: tuple[int, list[PruneCandidate]]) -> None:
        count, self.candidates = result
        self._held.release()
        if not self._sized:
            self._sized = True
            self.size_box.setValue(max(count, 1))
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        self.candidates_model.set_rows(self.candidates)
        self.summary.setText(
            f"{counted(len(self.candidates), 'skill')} would move to the trash (restorable from View › Trash)."
            if self.candidates
            else "Nothing to prune: no skill is stale, unused or superseded."
        )
        self.prune_button.setEnabled(bool(self.candidates))

    def _preview_failed(self, error: BaseException) -> None:
        self._held.release()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.summary.setText("Cannot work out what to prune.")
        show_error(self, "Cannot preview the prune", error)

    def prune(self) -> None:
        """Move the candidates to the trash in one transaction, in the background."""
        candidates = list(self.candidates)
        if not candidates or self._writing:
            return
        self._set_writing(True)
        LibraryOp[int](self.state, self, lambda repository: apply_prune(repository, candidates), title="Prune").success(
            self._pruned
        ).failure(self._prune_failed).run_in_background(initiator=self)

    def _pruned(self, count: int) -> None:
        self.state.say(f"Moved {counted(count, 'skill')} to the trash (View › Trash restores them)")
        if isValid(self):
            self._set_writing(False)
            self.accept()

    def _prune_failed(self, error: BaseException) -> None:
        if isValid(self):
            self._set_writing(False)
        show_error(self if isValid(self) else None, "Not pruned", error)

    def _set_writing(self, writing: bool) -> None:
        self._writing = writing
        self.progress.setRange(0, 0 if writing else 1)
        for widget in (
            self.limit_box,
            self.size_box,
            self.preview_button,
            self.buttons.button(QDialogButtonBox.StandardButton.Cancel),
        ):
            widget.setEnabled(not writing)
        self.prune_button.setEnabled(not writing and bool(self.candidates))

    def reject(self) -> None:
        if self._writing:
            return
        super().reject()

    def done(self, result: int) -> None:
        self.reader.stop()
        self._held.release()
        super().done(result)

    def _on_library_opened(self, _repository: SkillRepository) -> None:
        if self.isVisible():
            self.reload()

    def _on_library_changed(self, change: LibraryChange) -> None:
        # the candidates were worked out on skills that may be gone now
        if (
            self.isVisible()
            and not self._writing
            and not change.started_by(self)
            and change.touches(ChangeKind.MEMBERSHIP)
        ):
            self.reload()


__all__ = [
    "BackgroundRead",
    "FullCollectionsHeld",
    "QtExportDialog",
    "QtImportDialog",
    "QtPruneDialog",
    "ReadCancelled",
]
