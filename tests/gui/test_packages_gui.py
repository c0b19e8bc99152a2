"""File › Import / Export Selection / Prune: preview dialogs over skillstudio.packages."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtWidgets import QMessageBox

from skillstudio.gui.qt_packages import QtExportDialog, QtImportDialog, QtPruneDialog
from skillstudio.packages.icpkg import read_package
from skillstudio.store import Actor, Database, SkillRepository
from tests.factories import ai_skill, content_skill, instructions_skill
from tests.packages.helpers import entries_of, library_state, rezip, valid_package


@pytest.fixture
def repo(tmp_path: Path):
    database = Database(tmp_path / "gui.db", create=True)
    repository = SkillRepository(database, Actor("gui"))
    yield repository
    database.close()


def test_export_dialog_previews_privacy_findings_and_redacts(qtbot, repo: SkillRepository, tmp_path: Path) -> None:
    leaky = ai_skill(description="Beat player: Kessler every time")
    clean = content_skill()
    repo.create_many([leaky, clean])
    dialog = QtExportDialog(repo, [leaky.id, clean.id])
    qtbot.addWidget(dialog)
    assert "2 skills" in dialog.summary.text() and "1 findings" in dialog.summary.text()
    assert dialog.findings.topLevelItemCount() == 1 and dialog.findings.topLevelItem(0).text(0) == "player_name"
    assert not dialog.export_button.isEnabled()  # refused until the findings are removed
    dialog.redact_box.setChecked(True)
    assert dialog.export_button.isEnabled()
    dialog.name_edit.setText("gui-library")
    dialog.output_edit.setText(str(tmp_path / "out.icpkg"))
    assert dialog.progress.value() == dialog.progress.maximum()
    assert dialog.export()
    package = read_package(tmp_path / "out.icpkg")
    assert package.meta.name == "gui-library" and len(package.skills) == 2
    assert all("Kessler" not in s.skill.description for s in package.skills)


def test_export_dialog_reports_bad_metadata(qtbot, repo: SkillRepository, tmp_path: Path, monkeypatch) -> None:
    repo.create(content_skill())
    warnings = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *args: warnings.append(args[2]))
    dialog = QtExportDialog(repo, [s for s in repo.query().ids])
    qtbot.addWidget(dialog)
    dialog.version_edit.setText("one")
    dialog.output_edit.setText(str(tmp_path / "x.icpkg"))
    assert not dialog.export()
    assert "package.version" in warnings[0] and not (tmp_path / "x.icpkg").exists()


def test_import_dialog_previews_then_imports(qtbot, repo: SkillRepository, tmp_path: Path) -> None:
    path = tmp_path / "p.icpkg"
    path.write_bytes(valid_package())
    dialog = QtImportDialog(repo, path=path)
    qtbot.addWidget(dialog)
    assert dialog.preview()
    assert "4 added" in dialog.summary.text() and dialog.steps.topLevelItemCount() == 4
    assert repo.count() == 0  # a preview writes nothing
    assert dialog.progress.value() == dialog.progress.maximum()
    dialog.apply()
    assert repo.count() == 4
    again = QtImportDialog(repo, path=path)
    qtbot.addWidget(again)
    assert not again.preview() and "4 skipped" in again.summary.text() and not again.import_button.isEnabled()


def test_import_dialog_shows_why_a_package_is_refused(qtbot, repo: SkillRepository, tmp_path: Path) -> None:
    entries = entries_of(valid_package())
    entries["../escape.json"] = b"{}"
    path = tmp_path / "bad.icpkg"
    path.write_bytes(rezip(entries))
    before = library_state(repo)
    dialog = QtImportDialog(repo, path=path)
    qtbot.addWidget(dialog)
    assert not dialog.preview()
    assert "Refused" in dialog.summary.text() and "../escape.json" in dialog.messages.toPlainText()
    assert not dialog.import_button.isEnabled() and library_state(repo) == before


def test_import_dialog_reads_skill_md_folders_with_warnings(qtbot, repo: SkillRepository, tmp_path: Path) -> None:
    folder = tmp_path / "tree" / "my-skill"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: my-skill\ndescription: d\nversion: 2\n---\nDo it.")
    dialog = QtImportDialog(repo, path=tmp_path / "tree")
    qtbot.addWidget(dialog)
    assert dialog.preview()
    assert "not a key of the SKILL.md spec" in dialog.messages.toPlainText()
    dialog.strict_box.setChecked(True)
    assert not dialog.preview() and "version" in dialog.messages.toPlainText()


def test_prune_dialog_previews_and_trashes(qtbot, repo: SkillRepository) -> None:
    old = ai_skill(created_at="2020-01-01T00:00:00.000Z")
    keep = instructions_skill(created_at="2099-01-01T00:00:00.000Z", use_count=2)
    repo.create_many([old, keep])
    dialog = QtPruneDialog(repo)
    qtbot.addWidget(dialog)
    assert dialog.list.topLevelItemCount() == 1 and dialog.list.topLevelItem(0).text(1) == old.name
    dialog.prune()
    assert [e.skill_id for e in repo.trash.entries()] == [old.id]


def test_main_window_opens_the_dialogs(qtbot, repo: SkillRepository, tmp_path: Path, monkeypatch) -> None:
    from PySide6.QtCore import QSettings

    from skillstudio.gui import qt_packages
    from skillstudio.gui.qt_main_window import QtMainWindow

    repo.create_many([ai_skill(), content_skill()])
    window = QtMainWindow(repo, QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.model.wait()
    opened = []
    for name in ("QtImportDialog", "QtExportDialog", "QtPruneDialog"):
        monkeypatch.setattr(qt_packages, name, lambda *a, _n=name, **k: opened.append((_n, a)) or _Shown())
    window.import_action.trigger()
    window.export_action.trigger()
    window.prune_action.trigger()
    assert [n for n, _ in opened] == ["QtImportDialog", "QtExportDialog", "QtPruneDialog"]
    assert len(opened[1][1][1]) == 2  # nothing selected: every skill shown is exported
    window.close()


class _Shown:
    def exec(self) -> int:
        return 0


def test_import_dialog_reports_progress_on_large_packages(qtbot, repo: SkillRepository, tmp_path: Path) -> None:
    from skillstudio.packages.icpkg import PackageMeta, export_package

    skills = [content_skill() for _ in range(600)]
    path = tmp_path / "big.icpkg"
    path.write_bytes(export_package(skills, PackageMeta("big-library", "kessler")))
    dialog = QtImportDialog(repo, path=path)
    qtbot.addWidget(dialog)
    seen = []
    original = dialog._reading
    dialog._reading = lambda done, total: (seen.append((done, total)), original(done, total))  # type: ignore[method-assign]
    assert dialog.preview()
    assert seen[:3] == [(0, 600), (250, 600), (500, 600)]
    assert "600 added" in dialog.summary.text()
