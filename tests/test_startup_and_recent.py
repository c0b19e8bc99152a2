"""Qt-free parts of starting the app: which arguments open it, the recent libraries, the docs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillstudio.entry import app_library
from skillstudio.library import RECENT_LIMIT, RecentLibrary, recent_libraries, remember_recent
from skillstudio.paths import documentation

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], (True, None)),
        (["gui"], (True, None)),
        (["--db", "my.db"], (True, "my.db")),
        (["--db=my.db"], (True, "my.db")),
        (["gui", "--db", "my.db"], (True, "my.db")),
        (["list"], (False, None)),
        (["--db", "my.db", "list"], (False, None)),
        (["--version"], (False, None)),
        (["--db", "--help"], (False, None)),
    ],
)
def test_the_app_s_own_arguments_are_read_without_the_cli(argv: list[str], expected: tuple) -> None:
    assert app_library(argv) == expected


def test_starting_the_app_imports_neither_the_cli_nor_the_docks_heavy_libraries() -> None:
    code = (
        "import sys\n"
        "import skillstudio.entry, skillstudio.gui.app\n"
        "loaded = [m for m in ('skillstudio.cli.main', 'numpy', 'pyqtgraph', 'skillstudio.retrieval') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr


def test_recent_libraries_say_why_one_cannot_be_opened(tmp_path: Path) -> None:
    here = tmp_path / "here.db"
    here.write_bytes(b"")
    gone = tmp_path / "gone.db"
    folder_gone = tmp_path / "removed" / "lib.db"
    recent = recent_libraries([str(here), str(gone), str(here), str(folder_gone), str(tmp_path)])
    assert [r.path for r in recent] == [here, gone, folder_gone, tmp_path]  # once each, newest first
    assert recent[0] == RecentLibrary(str(here), None)
    assert "gone" in (recent[1].problem or "")
    assert "folder" in (recent[2].problem or "") and str(folder_gone.parent) in (recent[2].problem or "")
    assert recent[3].problem == "This is not a file."


def test_remembering_a_library_puts_it_first_and_keeps_the_list_short() -> None:
    remembered = [f"/libs/{n}.db" for n in range(RECENT_LIMIT)]
    again = remember_recent(remembered, "/libs/3.db")
    assert again[0] == "/libs/3.db" and again.count("/libs/3.db") == 1 and len(again) == RECENT_LIMIT
    newer = remember_recent(again, Path("/libs/new.db"))
    assert newer[0] == "/libs/new.db" and len(newer) == RECENT_LIMIT and remembered[-1] not in newer


def test_the_documentation_is_found_in_a_checkout() -> None:
    readme = documentation()
    assert readme == ROOT / "README.md" and (readme.parent / "docs" / "architecture.md").is_file()


def test_a_team_library_is_remembered_by_its_url_without_a_password() -> None:
    remembered = remember_recent(["/libs/a.db"], "postgresql+psycopg://alice:s3cret@db.studio:5433/skills")
    assert remembered == ["postgresql+psycopg://alice@db.studio:5433/skills", "/libs/a.db"]
    recent = recent_libraries(remembered)
    assert recent[0].path is None and recent[0].name == "skills" and recent[0].problem is None
    assert recent[1].path == Path("/libs/a.db") and recent[1].name == "a.db"
