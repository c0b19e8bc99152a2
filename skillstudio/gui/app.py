"""Starting the app: a QApplication, the chosen library, the main window."""

from __future__ import annotations

import gc
import sys

from PySide6.QtCore import QSettings
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QMessageBox

from skillstudio import __version__
from skillstudio.gui.qt_main_window import QtMainWindow
from skillstudio.library import actor_for, open_library
from skillstudio.paths import resource
from skillstudio.store import Actor, LibraryError, SkillRepository


def freeze_startup_objects() -> None:
    """Keep what start-up built (modules, Qt wrappers, the window and its docks) out of full collections.

    They live as long as the app; a full collection would walk them all, holding the GIL, each
    time a background operation's allocations trigger one: tens of milliseconds of frozen GUI
    thread for nothing (benchmarks/bench_gui_stalls.py)."""
    gc.collect()
    gc.freeze()


def main(db: str | None = None) -> int:
    running = QApplication.instance()
    app = running if isinstance(running, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationName("SkillStudio")
    app.setApplicationVersion(__version__)
    app.setOrganizationName("SkillStudio")
    app.setDesktopFileName("skillstudio")
    app.setWindowIcon(QIcon(str(resource("icons", "skillstudio.svg"))))
    try:
        database = open_library(db)
    except LibraryError as error:
        QMessageBox.critical(None, "SkillStudio", f"Cannot open the library.\n\n{error}")
        print(f"skillstudio: {error}", file=sys.stderr)
        return 1
    settings = QSettings()
    person = Actor(str(settings.value("user/name", "") or Actor.current_user().id), "human")
    window = QtMainWindow(SkillRepository(database, actor_for(database, person)), settings, person=person)
    window.ready.connect(freeze_startup_objects)  # once the docks are built too, behind the shown browser
    window.show()
    try:
        return app.exec()
    finally:
        database.close()
