"""The core stays Qt-free: only skillstudio/gui/ may import PySide6 (or pyqtgraph, which loads it)."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "skillstudio"
QT_MODULES = ("PySide6", "shiboken6", "pyqtgraph", "superqt")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):  # function-level imports count too
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_no_module_outside_gui_imports_qt() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent)
        if relative.parts[:2] == ("skillstudio", "gui") or relative.name == "entry.py":
            continue  # entry.py starts the GUI, lazily, when no CLI verb is given
        for name in imported_modules(path):
            if name.split(".")[0] in QT_MODULES:
                offenders.append(f"{relative} imports {name}")
    assert offenders == []


def test_the_checker_sees_qt_imports(tmp_path: Path) -> None:
    """Guard against a checker that cannot fail."""
    sample = tmp_path / "x.py"
    sample.write_text("def f():\n    from PySide6.QtCore import QObject\n")
    assert "PySide6.QtCore" in imported_modules(sample)


def test_importing_the_core_loads_no_qt() -> None:
    code = (
        "import sys\n"
        "import skillstudio.model, skillstudio.store, skillstudio.cli.main, skillstudio.library, skillstudio.entry\n"
        "import skillstudio.review, skillstudio.agents, skillstudio.agents.mcp_server\n"
        f"loaded = sorted(m for m in sys.modules if m.split('.')[0] in {QT_MODULES!r})\n"
        "assert not loaded, loaded\n"
    )
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parent)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(shutil.which("lint-imports") is None, reason="import-linter is not installed")
def test_import_linter_contracts_hold() -> None:
    """The contracts in pyproject.toml (Qt-free core, layers) as import-linter checks them."""
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parent)}
    done = subprocess.run(
        ["lint-imports", "--no-cache"],
        capture_output=True,
        text=True,
        cwd=PACKAGE.parent,
        env=env,
        timeout=120,
        check=False,  # the assertion shows the contracts' report
    )
    assert done.returncode == 0, done.stdout + done.stderr
