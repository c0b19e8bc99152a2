"""Retake the README's and docs/'s screenshots on a copy of the bundled sample library.

Run it under an X server whose screen is the size wanted (the window fills it), e.g.::

    Xvfb :55 -screen 0 1600x1000x24 &  DISPLAY=:55 python tools/take_screenshots.py docs/screenshots
    Xvfb :56 -screen 0 1280x800x24 &   DISPLAY=:56 python tools/take_screenshots.py docs/screenshots/1280x800

It builds the app's own main window (QSettings, the user's layout and the user's settings file
are kept in a temporary folder), drives it through its public methods as a user would through
the menus, and grabs the whole screen, dialogs included. Each step waits for what it shows to
have loaded; nothing is staged: the batch plays real games on the reference engine.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

TEMPORARY = Path(tempfile.mkdtemp(prefix="skillstudio-shots-"))
os.environ["XDG_CONFIG_HOME"] = str(TEMPORARY / "config")  # settings.yaml, retrieval.yaml: defaults
os.environ["XDG_DATA_HOME"] = str(TEMPORARY / "data")

from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from skillstudio.gui.dashboard.verify_worker import BatchOptions  # noqa: E402
from skillstudio.gui.qt_main_window import QtMainWindow  # noqa: E402
from skillstudio.library import create_library  # noqa: E402
from skillstudio.store import Actor, Database, SkillQuery, SkillRepository  # noqa: E402


def settle(app: QApplication, until: Callable[[], bool] = lambda: True, timeout_s: float = 120.0) -> None:
    """Let the app run until ``until()`` holds, then a moment more for the paint."""
    deadline = time.monotonic() + timeout_s
    while not until():
        if time.monotonic() > deadline:
            raise TimeoutError("the app did not get there in time")
        app.processEvents()
        time.sleep(0.02)
    for _ in range(25):
        app.processEvents()
        time.sleep(0.02)


def shoot(app: QApplication, out: Path, name: str) -> None:
    screen = app.primaryScreen()
    path = out / f"{name}.png"
    screen.grabWindow(0).save(str(path))
    print(path)


def ids_named(repository: SkillRepository, *names: str) -> list[str]:
    summaries = {s.name: s.id for s in repository.summaries(repository.query(SkillQuery()).ids)}
    return [next(i for n, i in summaries.items() if n.startswith(name)) for name in names]


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication(sys.argv[:1])
    library = TEMPORARY / "sample.db"
    create_library(library, sample=True).close()
    repository = SkillRepository(Database(library), Actor("mira", "human"))
    settings = QSettings(str(TEMPORARY / "layout.ini"), QSettings.Format.IniFormat)
    window = QtMainWindow(repository, settings)
    geometry = app.primaryScreen().geometry()
    window.setGeometry(geometry)
    window.show()
    settle(app, lambda: window.dashboard is not None and not window.starting and not window.model.loading)

    def idle() -> bool:
        dashboard = window.dashboard
        return not (
            window.state.busy
            or window.model.loading
            or window.detail.loading
            or (dashboard is not None and (dashboard.loading or dashboard.running))
        )

    # The browser: a tier its evidence contradicts, and the detail pane saying why.
    [opening] = ids_named(repository, "IC Default balanced opening")
    window.select_skill(opening)
    settle(app, idle)
    shoot(app, out, "browser")

    # A batch from the dashboard, with the lift over the default plan.
    dashboard = window.dashboard
    assert dashboard is not None
    chosen = ids_named(
        repository,
        "Early AA against Yak rush",
        "MiG strikes on exposed ore trucks",
        "Light tank rush at 5:00",
        "Transition to medium armor",
        "IC Default balanced opening",
        "Yak rush on an infantry opening",
    )
    window.state.set_selection(tuple(chosen), chosen[0])
    dashboard.start_batch(chosen, BatchOptions(games=40, seed=3, baseline=True))
    settle(app, idle, timeout_s=600)
    dashboard.tabs.setCurrentIndex(0)
    settle(app)
    shoot(app, out, "dashboard")
    dashboard.tabs.setCurrentIndex(2)
    settle(app, idle)
    shoot(app, out, "dashboard-lift")

    # The settings, the editor and the history, each over the browser.
    dialog: QWidget = window.show_settings()
    settle(app, lambda: not dialog.loading)  # type: ignore[attr-defined]
    shoot(app, out, "settings")
    dialog.close()

    window.select_skill(chosen[0])
    settle(app, idle)
    window.edit_current()
    settle(app)
    shoot(app, out, "editor-strategic")
    for editor in list(window._editors):
        editor.close()
    settle(app)

    [encounter] = ids_named(repository, "Bridge ambush, timed hold")
    window.select_skill(encounter)
    settle(app, idle)
    window.edit_current()
    settle(app)
    shoot(app, out, "editor-encounter")
    for editor in list(window._editors):
        editor.close()
    settle(app)

    # The history of a skill the batch changed: its last two revisions side by side.
    window.select_skill(chosen[0])
    settle(app, idle)
    from skillstudio.gui.qt_history import QtHistoryDialog

    window.show_history()
    [history] = [w for w in window.findChildren(QtHistoryDialog) if w.isVisible()]
    revisions = [r.number for r in repository.history.revisions(chosen[0])]
    history.select_revisions(revisions[-2:])
    settle(app, lambda: not history.loading)
    shoot(app, out, "history-diff")
    history.close()

    queue = window.show_review_queue()
    settle(app, lambda: not getattr(queue, "loading", False))
    shoot(app, out, "review-queue")
    queue.close()

    preview = window.retrieval_preview
    if preview is not None:
        preview.show()
        preview.query.setText("enemy aircraft raiding my ore trucks")
        preview.search_now()
        settle(app, lambda: not getattr(preview, "loading", False))
        shoot(app, out, "retrieval-preview")

    window.close()
    repository.database.close()
    shutil.rmtree(TEMPORARY, ignore_errors=True)


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots"))
