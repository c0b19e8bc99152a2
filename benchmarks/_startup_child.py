"""What runs in each process bench_startup.py launches: ``python -m benchmarks._startup_child WHAT``.

Kept apart, and light (nothing but the standard library at the top), so that what it adds to
every measured start-up is next to nothing. It prints ``BENCH {json}``: seconds since the
parent launched it (``$BENCH_STARTUP_LAUNCHED_AT``, a wall-clock time) at each milestone.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

LAUNCHED_AT = "BENCH_STARTUP_LAUNCHED_AT"


def since_launch() -> float:
    return time.time() - float(os.environ[LAUNCHED_AT])


def report(figures: dict[str, float]) -> None:
    print("BENCH " + json.dumps(figures), flush=True)


def app(library: str) -> None:
    """The real start-up (``skillstudio --db LIBRARY``), watched from inside its own event loop."""
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QApplication

    application = QApplication(sys.argv[:1])  # the app's main() takes it; its cost counts all the same
    figures: dict[str, float] = {}

    def window() -> Any:  # the app's QtMainWindow, once main() made it
        return next((w for w in application.topLevelWidgets() if type(w).__name__ == "QtMainWindow"), None)

    class Paints(QObject):
        """Shown: the window's first paint. Usable: the first paint of the table or the module
        list once the table has its rows and the filter lists are filled."""

        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() != QEvent.Type.Paint or (shown := window()) is None:
                return False
            if watched is shown:
                figures.setdefault("shown", since_launch())
            elif watched in (shown.table.viewport(), shown.filters.module.list.viewport()):
                ready = shown.model.rowCount() > 0 and not (shown.model.loading or shown.filters.loading)
                if ready and "shown" in figures:
                    figures["usable"] = since_launch()
                    application.removeEventFilter(self)
            return False

    paints = Paints()
    application.installEventFilter(paints)

    def poll() -> None:
        shown = window()
        if (
            shown is not None
            and "usable" in figures
            and shown.dashboard is not None
            and shown.dashboard.snapshot is not None
        ):
            figures["complete"] = since_launch()
            report(figures)
            shown.close()
            return
        QTimer.singleShot(5, poll)

    QTimer.singleShot(0, poll)
    from skillstudio.entry import main as skillstudio

    skillstudio(["--db", library])


def baseline() -> None:
    """The least a Qt window costs: QApplication, a QMainWindow with an empty table, its first paint."""
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtGui import QStandardItemModel
    from PySide6.QtWidgets import QApplication, QMainWindow, QTableView

    application = QApplication(sys.argv[:1])
    window = QMainWindow()
    table = QTableView(window)
    table.setModel(QStandardItemModel(0, 11, table))
    window.setCentralWidget(table)
    window.menuBar().addMenu("&File")
    window.resize(1400, 820)

    class FirstPaint(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and watched is window:
                report({"shown": since_launch()})
                window.removeEventFilter(self)
                QTimer.singleShot(0, window.close)
            return False

    first_paint = FirstPaint()
    window.installEventFilter(first_paint)
    window.show()
    application.exec()


def nothing() -> None:
    """The interpreter starting, and this module."""
    report({"shown": since_launch()})


if __name__ == "__main__":
    {"app": app, "baseline": baseline, "nothing": nothing}[sys.argv[1]](*sys.argv[2:])
