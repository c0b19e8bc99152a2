"""The main window on a team library: the server's pushed changes reload it, a lost connection
is said and cleared, and the library is remembered without a password."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from sqlalchemy.engine import make_url

from skillstudio.gui.qt_main_window import QtMainWindow
from skillstudio.library import library_name
from skillstudio.store import Actor, Database, SkillRepository
from tests.gui.conftest import wait_for_browser
from tests.postgres_server import PostgresServer


@pytest.fixture
def window(qtbot, tmp_path: Path, team_url: str):
    alice = make_url(team_url).set(username="alice").render_as_string(hide_password=False)
    database = Database(alice)
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = QtMainWindow(SkillRepository(database, Actor("someone")), settings, person=Actor("someone"))
    qtbot.addWidget(window)
    window.show()
    wait_for_browser(qtbot, window)
    yield window
    window.close()
    database.close()


def other_process_creates(url: str, name: str) -> None:
    code = textwrap.dedent(
        f"""
        from skillstudio.store import Actor, Database, SkillRepository
        from tests.factories import ai_skill
        with Database({url!r}) as database:
            SkillRepository(database, Actor("other")).create(ai_skill(name={name!r}))
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_another_designers_commit_shows_without_polling(qtbot, window: QtMainWindow, team_url: str) -> None:
    database = window.repository.database
    assert window.windowTitle() == f"{library_name(team_url)} — SkillStudio"
    assert window.recent_libraries()[0] == make_url(database.location).set(password=None).render_as_string()
    window._watch_timer.stop()  # the push alone must bring the change in
    calls: list[int] = []
    original = database.data_version
    database.data_version = lambda: calls.append(1) or original()  # type: ignore[method-assign]
    rows = window.model.rowCount()
    assert database._listeners[0].wait_listening(20)
    other_process_creates(team_url, "Made on another machine")
    qtbot.waitUntil(lambda: window.model.rowCount() == rows + 1, timeout=20_000)
    assert calls == []  # the server was never asked whether anything changed


def test_the_window_says_the_connection_is_lost_and_clears_it_when_back(
    qtbot, window: QtMainWindow, postgres_server: PostgresServer
) -> None:
    if postgres_server.data_dir is None:
        pytest.skip("the server is not this test session's own (CI's): it cannot be restarted here")
    assert window.repository.database._listeners[0].wait_listening(20)
    postgres_server.pg_ctl_run("stop")
    try:
        qtbot.waitUntil(window.connection_label.isVisible, timeout=20_000)
        assert "lost" in window.connection_label.text()
    finally:
        postgres_server.pg_ctl_run("start")
    qtbot.waitUntil(lambda: not window.connection_label.isVisible(), timeout=20_000)
