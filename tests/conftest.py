"""Shared fixtures. Qt runs offscreen: without a display it would abort the interpreter."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path

import pytest

from skillstudio.store import Actor, Database, SkillRepository


@pytest.fixture(autouse=True)
def _isolated_user_library(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may touch the real user's library: point the default location into tmp."""
    home = tmp_path_factory.mktemp("data-home")
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    # ... nor read the developer's settings (engines.yaml, retrieval.yaml).
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config-home")))
    monkeypatch.delenv("SKILLSTUDIO_DB", raising=False)


@pytest.fixture
def database(tmp_path: Path):
    with Database(tmp_path / "library.db", create=True) as db:
        yield db


@pytest.fixture
def repository(database: Database) -> SkillRepository:
    return SkillRepository(database, Actor("tester"))
