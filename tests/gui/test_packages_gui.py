"""File › Import / Export Selection / Prune: preview dialogs over skillstudio.packages.

Reading runs in the background and the writes run as operations, so the tests wait on public
state: the dialog's ``reader.loading`` and the browser state's ``busy``.
"""

from __future__ import annotations

import gc
import threading
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QCoreApplication, QEvent, QLocale, QModelIndex, QObject, Qt, QTimer, QUrl, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QDialog

from skillstudio.gui import qt_packages
from skillstudio.gui.browser_state import BrowserState
from skillstudio.gui.qt_packages import QtExportDialog, QtImportDialog, QtPruneDialog
from skillstudio.gui.rows_model import RowsModel
from skillstudio.gui.workers import FullCollectionsHeld, readable
from skillstudio.packages.icpkg import read_package
from skillstudio.packages.importer import PlannedSkill
from skillstudio.packages.privacy import Finding
from skillstudio.packages.prune import PruneCandidate
from skillstudio.store import Actor, ChangeKind, Database, SkillRepository
from tests.factories import ai_skill, content_skill, instructions_skill
from tests.gui.conftest import wait_for_browser
from tests.packages.helpers import entries_of, library_state, rezip, valid_package

pytestmark = pytest.mark.gui


@pytest.fixture
def repo(tmp_path: Path):
    database = Database(tmp_path / "gui.db", create=True)
    repository = SkillRepository(database, Actor("gui"))
    yield repository
    database.close()


@pytest.fixture
def state(repo: SkillRepository):
    state = BrowserState(repo)
    yield state
    state.close()


@pytest.fixture
def errors(monkeypatch) -> list[tuple[str, str]]:
    """The error dialogs the package dialogs would show, as (title, readable message)."""
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(qt_packages, "show_error", lambda _parent, title, error: shown.append((title, readable(error))))
    return shown


def cells(view) -> list[list[str]]:
    """The text of every row a dialog's list shows."""
    model = view.model()
    return [[model.index(r, c).data() for c in range(model.columnCount())] for r in range(model.rowCount())]


def read(qtbot, dialog) -> None:
    qtbot.waitUntil(lambda: not dialog.reader.loading, timeout=20_000)


def preview(qtbot, dialog: QtImportDialog) -> bool:
    """Preview and wait for it; True if there is something to import (as the dialog says)."""
    dialog.preview()
    read(qtbot, dialog)
    return dialog.import_button.isEnabled()


def finish(qtbot, state: BrowserState) -> None:
    qtbot.waitUntil(lambda: not state.busy, timeout=20_000)


def test_export_dialog_previews_privacy_findings_and_redacts(
    qtbot, state: BrowserState, repo: SkillRepository, tmp_path: Path
) -> None:
    leaky = ai_skill(description="Beat player: Kessler every time")
    clean = content_skill()
    repo.create_many([leaky, clean])
    dialog = QtExportDialog(state, [leaky.id, clean.id])
    qtbot.addWidget(dialog)
    read(qtbot, dialog)
    assert "2 skills to export" in dialog.summary.text() and "1 finding in 1 skill;" in dialog.summary.text()
    assert cells(dialog.findings) == [["Player name", leaky.name, "description", "player: Kessler"]]
    assert not dialog.export_button.isEnabled()  # refused until the findings are removed
    dialog.redact_box.setChecked(True)
    assert dialog.export_button.isEnabled()
    dialog.name_edit.setText("gui-library")
    dialog.output_edit.setText(str(tmp_path / "out.icpkg"))
    assert dialog.progress.value() == dialog.progress.maximum()
    assert dialog.export()
    finish(qtbot, state)
    assert dialog.result() == QDialog.DialogCode.Accepted
    dialog.confirmation.close()
    package = read_package(tmp_path / "out.icpkg")
    assert package.meta.name == "gui-library" and len(package.skills) == 2
    assert all("Kessler" not in s.skill.description for s in package.skills)


def test_export_dialog_reports_bad_metadata(
    qtbot, state: BrowserState, repo: SkillRepository, tmp_path: Path, errors
) -> None:
    repo.create(content_skill())
    dialog = QtExportDialog(state, list(repo.query().ids))
    qtbot.addWidget(dialog)
    read(qtbot, dialog)
    dialog.version_edit.setText("one")
    dialog.output_edit.setText(str(tmp_path / "x.icpkg"))
    assert not dialog.export()
    assert "package.version" in errors[0][1] and not (tmp_path / "x.icpkg").exists()


def test_export_failure_is_reported_and_the_dialog_stays(
    qtbot, state: BrowserState, repo: SkillRepository, tmp_path: Path, errors
) -> None:
    repo.create(content_skill())
    dialog = QtExportDialog(state, repo.query().ids)
    qtbot.addWidget(dialog)
    read(qtbot, dialog)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    dialog.output_edit.setText(str(blocker / "out.icpkg"))  # its folder cannot be made
    assert dialog.export()
    finish(qtbot, state)
    assert errors and errors[0][0] == "Not exported"
    assert dialog.result() != QDialog.DialogCode.Accepted and dialog.export_button.isEnabled()


def test_import_dialog_previews_then_imports(qtbot, state: BrowserState, repo: SkillRepository, tmp_path: Path) -> None:
    path = tmp_path / "p.icpkg"
    path.write_bytes(valid_package())
    dialog = QtImportDialog(state, path=path)
    qtbot.addWidget(dialog)
    assert preview(qtbot, dialog)
    assert "4 added" in dialog.summary.text() and dialog.steps.model().rowCount() == 4
    assert repo.count() == 0  # a preview writes nothing
    assert dialog.progress.value() == dialog.progress.maximum()
    dialog.apply()
    finish(qtbot, state)
    assert repo.count() == 4
    again = QtImportDialog(state, path=path)
    qtbot.addWidget(again)
    assert not preview(qtbot, again) and "4 skipped" in again.summary.text() and not again.import_button.isEnabled()


def test_import_runs_off_the_gui_thread_and_announces_membership(
    qtbot, state: BrowserState, repo: SkillRepository, tmp_path: Path, monkeypatch
) -> None:
    path = tmp_path / "p.icpkg"
    path.write_bytes(valid_package())
    threads: dict[str, int] = {}
    gate = threading.Event()
    real_read, real_apply = qt_packages.read_source, qt_packages.apply_plan

    def reading(*args, **kwargs):
        threads["read"] = threading.get_ident()
        return real_read(*args, **kwargs)

    def applying(repository, plan):
        threads["apply"] = threading.get_ident()
        assert gate.wait(10)
        return real_apply(repository, plan)

    monkeypatch.setattr(qt_packages, "read_source", reading)
    monkeypatch.setattr(qt_packages, "apply_plan", applying)
    changes = []
    state.library_changed.connect(changes.append)
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # other tests' dialogs let go
    thresholds, holders = gc.get_threshold(), FullCollectionsHeld.holders()
    dialog = QtImportDialog(state, path=path)
    qtbot.addWidget(dialog)
    dialog.show()
    assert preview(qtbot, dialog)
    assert FullCollectionsHeld.holders() == holders + 1 and gc.get_threshold()[2] > thresholds[0] * 1000
    dialog.apply()
    qtbot.waitUntil(lambda: "apply" in threads, timeout=10_000)
    # The write waits in the background; the dialog still answers, shows it works, and stays.
    ticked = []
    QTimer.singleShot(20, lambda: ticked.append(True))
    qtbot.waitUntil(lambda: bool(ticked), timeout=2_000)
    assert state.busy and dialog.progress.maximum() == 0 and not dialog.import_button.isEnabled()
    dialog.reject()
    assert dialog.isVisible()  # one transaction: closing cannot stop it halfway
    gate.set()
    finish(qtbot, state)
    main = threading.get_ident()
    assert threads["read"] != main and threads["apply"] != main
    imports = [change for change in changes if change.touches(ChangeKind.MEMBERSHIP)]
    assert len(imports) == 1 and imports[0].started_by(dialog) and len(imports[0].skill_ids) == 4
    assert dialog.result() == QDialog.DialogCode.Accepted and repo.count() == 4
    # the collector's full passes, held off while the dialog read and held the package, resume
    qtbot.waitUntil(lambda: FullCollectionsHeld.holders() == holders, timeout=5_000)
    assert dialog.plan is None and (holders > 0 or gc.get_threshold() == thresholds)


def test_import_dialog_shows_why_a_package_is_refused(
    qtbot, state: BrowserState, repo: SkillRepository, tmp_path: Path
) -> None:
    repo.create(content_skill())  # a library with something in it to keep
    entries = entries_of(valid_package())
    entries["../escape.json"] = b"{}"
    path = tmp_path / "bad.icpkg"
    path.write_bytes(rezip(entries))
    files = sorted(tmp_path.glob("gui.db*"))
    before, before_bytes = library_state(repo), {f.name: f.read_bytes() for f in files}
    dialog = QtImportDialog(state, path=path)
    qtbot.addWidget(dialog)
    assert not preview(qtbot, dialog)
    assert "Refused" in dialog.summary.text() and "../escape.json" in dialog.messages.toPlainText()
    assert not dialog.import_button.isEnabled() and library_state(repo) == before
    dialog.apply()  # nothing planned: nothing runs
    assert not state.busy
    assert sorted(tmp_path.glob("gui.db*")) == files
    assert {f.name: f.read_bytes() for f in files} == before_bytes  # byte for byte


def test_import_dialog_reads_skill_md_folders_with_warnings(
    qtbot, state: BrowserState, repo: SkillRepository, tmp_path: Path
) -> None:
    folder = tmp_path / "tree" / "my-skill"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: my-skill\ndescription: d\nversion: 2\n---\nDo it.")
    dialog = QtImportDialog(state, path=tmp_path / "tree")
    qtbot.addWidget(dialog)
    assert preview(qtbot, dialog)
    assert "not a key of the SKILL.md spec" in dialog.messages.toPlainText()
    dialog.strict_box.setChecked(True)
    assert not preview(qtbot, dialog) and "version" in dialog.messages.toPlainText()


def test_a_newer_preview_supersedes_and_stops_the_older_read(
    qtbot, state: BrowserState, repo: SkillRepository, tmp_path: Path, monkeypatch
) -> None:
    from skillstudio.packages.icpkg import PackageMeta, export_package

    big = tmp_path / "big.icpkg"
    big.write_bytes(export_package([content_skill() for _ in range(600)], PackageMeta("big-library", "kessler")))
    small = tmp_path / "p.icpkg"
    small.write_bytes(valid_package())
    started, released = threading.Event(), threading.Event()
    went_on: list[tuple[str, int]] = []  # the reports after which a read carried on
    real_read = qt_packages.read_source

    def reading(path, *, progress, **kwargs):
        def report(done, total):
            progress(done, total)  # raises once the read is superseded
            went_on.append((Path(path).name, done))
            if done == 0:
                started.set()
                assert released.wait(10)

        return real_read(path, progress=report, **kwargs)

    monkeypatch.setattr(qt_packages, "read_source", reading)
    dialog = QtImportDialog(state, path=big)
    qtbot.addWidget(dialog)
    dialog.preview()
    assert started.wait(10)  # the big read is under way, held after its first report
    dialog.path_edit.setText(str(small))
    dialog.preview()
    released.set()
    read(qtbot, dialog)
    assert "4 added" in dialog.summary.text() and dialog.steps.model().rowCount() == 4
    assert [done for name, done in went_on if name == "big.icpkg"] == [0]  # stopped at its next report


def test_prune_dialog_previews_and_trashes(qtbot, state: BrowserState, repo: SkillRepository) -> None:
    old = ai_skill(created_at="2020-01-01T00:00:00.000Z")
    keep = instructions_skill(created_at="2099-01-01T00:00:00.000Z", use_count=2)
    repo.create_many([old, keep])
    shown: list[tuple[int, int]] = []
    dialog = QtPruneDialog(state)
    qtbot.addWidget(dialog)
    dialog.progress.valueChanged.connect(lambda value: shown.append((value, dialog.progress.maximum())))
    dialog.reload()
    read(qtbot, dialog)
    assert (2, 2) in shown  # the read of every skill, reported as it goes
    assert [row[1] for row in cells(dialog.list)] == [old.name]
    assert dialog.size_box.value() == 2  # starts at the library's size
    dialog.prune()
    finish(qtbot, state)
    assert [e.skill_id for e in repo.trash.entries()] == [old.id]


def test_prune_runs_as_an_operation_and_announces_what_left(
    qtbot, state: BrowserState, repo: SkillRepository, monkeypatch
) -> None:
    old = ai_skill(created_at="2020-01-01T00:00:00.000Z")
    older = content_skill(created_at="2019-01-01T00:00:00.000Z")
    keep = instructions_skill(created_at="2099-01-01T00:00:00.000Z", use_count=2)
    repo.create_many([old, older, keep])
    threads = []
    real_apply = qt_packages.apply_prune
    monkeypatch.setattr(
        qt_packages, "apply_prune", lambda r, c: (threads.append(threading.get_ident()), real_apply(r, c))[1]
    )
    changes, busy, said = [], [], []
    state.library_changed.connect(changes.append)
    state.busy_changed.connect(busy.append)
    state.message.connect(lambda text, _ms: said.append(text))
    dialog = QtPruneDialog(state)
    qtbot.addWidget(dialog)
    read(qtbot, dialog)
    assert dialog.list.model().rowCount() == 2
    dialog.prune()
    finish(qtbot, state)
    assert threads and threads[0] != threading.get_ident() and busy == [True, False]
    pruned = [change for change in changes if change.removes(old.id)]
    assert len(pruned) == 1 and pruned[0].removes(older.id) and not pruned[0].removes(keep.id)
    assert pruned[0].started_by(dialog) and pruned[0].touches(ChangeKind.MEMBERSHIP)
    assert dialog.result() == QDialog.DialogCode.Accepted and "Moved 2 skills to the trash" in said[-1]


def test_main_window_opens_the_dialogs(qtbot, repo: SkillRepository, tmp_path: Path, monkeypatch) -> None:
    from PySide6.QtCore import QSettings

    from skillstudio.gui.qt_main_window import QtMainWindow

    repo.create_many([ai_skill(), content_skill()])
    window = QtMainWindow(repo, QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    wait_for_browser(qtbot, window)
    opened = []
    for name in ("QtImportDialog", "QtExportDialog", "QtPruneDialog"):
        monkeypatch.setattr(qt_packages, name, lambda *a, _n=name, **k: opened.append((_n, a)) or _Shown())
    window.import_action.trigger()
    window.export_action.trigger()
    window.prune_action.trigger()
    assert [n for n, _ in opened] == ["QtImportDialog", "QtExportDialog", "QtPruneDialog"]
    assert all(isinstance(args[0], BrowserState) for _, args in opened)
    assert len(opened[1][1][1]) == 2  # nothing selected: every skill shown is exported
    window.close()


class _Shown:
    def exec(self) -> int:
        return 0


def test_import_dialog_reports_progress_on_large_packages(
    qtbot, state: BrowserState, repo: SkillRepository, tmp_path: Path
) -> None:
    from skillstudio.packages.icpkg import PackageMeta, export_package

    skills = [content_skill() for _ in range(600)]
    path = tmp_path / "big.icpkg"
    path.write_bytes(export_package(skills, PackageMeta("big-library", "kessler")))
    dialog = QtImportDialog(state, path=path)
    qtbot.addWidget(dialog)
    seen = []
    original = dialog._reading
    dialog._reading = lambda done, total: (seen.append((done, total)), original(done, total))
    assert preview(qtbot, dialog)
    assert seen[:3] == [(0, 600), (250, 600), (500, 600)]
    assert "600 added" in dialog.summary.text()


class FolderOpener(QObject):
    """Receives what QDesktopServices would open for "file" URLs (Qt's own hook for them)."""

    def __init__(self) -> None:
        super().__init__()
        self.opened: list[QUrl] = []

    @Slot(QUrl)
    def open_url(self, url: QUrl) -> None:
        self.opened.append(url)


def test_an_export_says_where_it_went_and_shows_the_folder(
    qtbot, state: BrowserState, repo: SkillRepository, tmp_path: Path
) -> None:
    skills = [content_skill(), instructions_skill()]
    repo.create_many(skills)
    dialog = QtExportDialog(state, [skill.id for skill in skills])
    qtbot.addWidget(dialog)
    read(qtbot, dialog)
    out = tmp_path / "shared" / "rockets.icpkg"
    dialog.output_edit.setText(str(out))
    assert dialog.export()
    finish(qtbot, state)
    box = dialog.confirmation
    assert box is not None and box.isVisible()
    size = QLocale().formattedDataSize(out.stat().st_size)
    assert box.text() == f"Exported 2 skills to rockets.icpkg ({size})."
    assert box.informativeText() == f"Folder: {out.parent}"
    opener = FolderOpener()
    QDesktopServices.setUrlHandler("file", opener, "open_url")
    try:
        show = next(button for button in box.buttons() if button.text() == "Show in Folder")
        show.click()
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert opener.opened == [QUrl.fromLocalFile(str(out.parent))]


def test_the_export_names_links_to_skills_left_out(qtbot, state: BrowserState, repo: SkillRepository) -> None:
    partner = repo.create(ai_skill(name="Tank rush"))
    linked = repo.create(ai_skill(name="Rocket screen", composable_with=(partner.id,)))
    dialog = QtExportDialog(state, [linked.id])
    qtbot.addWidget(dialog)
    read(qtbot, dialog)
    assert dialog.notes.isVisibleTo(dialog)
    assert dialog.notes.toPlainText() == (
        "“Rocket screen” links to “Tank rush”, not in this export: a library without it drops the link on import"
    )
    assert "1 skill to export." in dialog.summary.text()


def test_import_offers_the_librarys_game_modules_and_domain(
    qtbot, state: BrowserState, repo: SkillRepository, tmp_path: Path
) -> None:
    from dataclasses import replace

    made = content_skill()
    repo.create_many(
        [
            replace(made, id=f"{made.id[:-4]}{n:04}", provenance=replace(made.provenance, game_module="td"))
            for n in range(2)
        ]
    )
    repo.create(ai_skill())
    library = tmp_path / "seed.json"
    library.write_text('{"rush": {"name": "rush", "principle": "Rush early."}}')
    dialog = QtImportDialog(state, path=library)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.module_box.count() == 2, timeout=10_000)
    assert [dialog.module_box.itemText(i) for i in range(2)] == ["td", "ra1"]  # the most common first
    assert dialog.game_module() == "td" and dialog.domain_box.currentText() == "Content generation"
    dialog.module_box.setCurrentText("cnc")  # one the library does not have yet
    assert preview(qtbot, dialog)
    dialog.apply()
    finish(qtbot, state)
    rush = next(skill for skill in repo.get_many(repo.query().ids) if skill.name == "rush")
    assert (rush.game_module, rush.domain.value, rush.created_by) == ("cnc", "content_generation", "gui")


def test_prune_dialog_speaks_of_one_skill(qtbot, state: BrowserState, repo: SkillRepository) -> None:
    old = ai_skill(created_at="2020-01-01T00:00:00.000Z")
    repo.create(old)
    dialog = QtPruneDialog(state)
    qtbot.addWidget(dialog)
    read(qtbot, dialog)
    assert dialog.summary.text().startswith("1 skill would move to the trash")
    assert cells(dialog.list)[0][0] == "Tentative"


@pytest.mark.parametrize("dialog_list", ["import steps", "export findings", "prune candidates"])
def test_a_long_list_is_shown_without_asking_the_model_about_every_row(
    qtbot, state: BrowserState, dialog_list: str
) -> None:
    """A tree view asked the model of every row whether it had children when a plan arrived:
    200,000 calls into Python, a 130 ms stall, for 100,000 skills; tree-widget items cost as
    much to make. Each dialog's list is a table over a RowsModel, which asks for what shows."""
    calls = [0]

    class Counting(RowsModel):
        def rowCount(self, parent=QModelIndex()) -> int:  # type: ignore[no-untyped-def]
            calls[0] += 1
            return super().rowCount(parent)

        def columnCount(self, parent=QModelIndex()) -> int:  # type: ignore[no-untyped-def]
            calls[0] += 1
            return super().columnCount(parent)

        def data(self, index, role=Qt.ItemDataRole.DisplayRole):  # type: ignore[no-untyped-def]
            calls[0] += 1
            return super().data(index, role)

    dialog, view, rows = {
        "import steps": lambda: (
            d := QtImportDialog(state),
            d.steps,
            [PlannedSkill("add", f"id-{n}", f"Skill {n}", f"skills/id-{n}.json") for n in range(20_000)],
        ),
        "export findings": lambda: (
            d := QtExportDialog(state, []),
            d.findings,
            [Finding(f"id-{n}", "description", "player_name", f"Kessler{n}") for n in range(20_000)],
        ),
        "prune candidates": lambda: (
            d := QtPruneDialog(state),
            d.list,
            [PruneCandidate(f"id-{n}", f"Skill {n}", "tentative", "stale") for n in range(20_000)],
        ),
    }[dialog_list]()
    qtbot.addWidget(dialog)
    used = view.model()
    assert isinstance(used, RowsModel)  # what the dialog shows its rows through
    model = Counting(used.headers, used._cells, dialog, key=used._key, tips=tuple(used._tips))
    view.setModel(model)
    dialog.show()
    qtbot.waitExposed(dialog)
    calls[0] = 0
    model.set_rows(rows)
    QCoreApplication.processEvents()
    assert view.model().rowCount() == 20_000
    assert calls[0] < 2_000, f"{calls[0]} calls for 20,000 rows"
    assert model.index(19_999, 1).data() in {"Skill 19999", "id-19999"}


def test_the_export_dialog_will_not_write_over_the_open_library(
    qtbot, state: BrowserState, repo: SkillRepository, errors
) -> None:
    """Its output is a typed path: the library's own file there was replaced by the package."""
    repo.create(content_skill())
    dialog = QtExportDialog(state, repo.query().ids)
    qtbot.addWidget(dialog)
    read(qtbot, dialog)
    dialog.output_edit.setText(str(repo.database.path))
    assert dialog.export()
    finish(qtbot, state)
    assert errors and errors[0][0] == "Not exported" and "is a SQLite database" in errors[0][1]
    assert dialog.result() != QDialog.DialogCode.Accepted and repo.count() == 1
    assert repo.database.path.read_bytes()[:16] == b"SQLite format 3\x00"
