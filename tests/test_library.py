"""Opening and creating libraries; the sample loader is strict about its own files."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from skillstudio.library import create_library, load_sample, locations, open_library
from skillstudio.library.locations import library_file
from skillstudio.library.sample import load_sample_file
from skillstudio.model import ValidationError
from skillstudio.store import LibraryError, LibraryNotFound, SkillRepository


def test_a_typo_in_a_sample_file_is_an_error_not_lost_data(tmp_path: Path) -> None:
    original = load_sample()[0].path
    text = original.read_text(encoding="utf-8").replace("composable_with:", "compsable_with:", 1)
    broken = tmp_path / "broken.yaml"
    broken.write_text(text, encoding="utf-8")
    with pytest.raises(ValidationError, match=r"broken.yaml.*compsable_with: unknown field"):
        load_sample_file(broken)
    broken.write_text(original.read_text(encoding="utf-8").replace("losses:", "lossess:", 1), encoding="utf-8")
    with pytest.raises(ValidationError, match=r"verifications\[0\].lossess: unknown field"):
        load_sample_file(broken)


@pytest.mark.parametrize("content", [b"\xff\xfe not utf-8", b"key: [unclosed", b"- just\n- a list\n"])
def test_unreadable_sample_files_name_the_file(tmp_path: Path, content: bytes) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(content)
    with pytest.raises(ValidationError, match=r"bad\.yaml"):
        load_sample_file(bad)


def test_a_failed_creation_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def explode() -> list:
        raise ValidationError([], context="simulated failure")

    monkeypatch.setattr(locations, "load_sample", explode)
    target = tmp_path / "new.db"
    with pytest.raises(ValidationError):
        create_library(target, sample=True)
    assert list(tmp_path.iterdir()) == []


def test_the_sample_library_holds_every_sample_skill_and_its_history(tmp_path: Path) -> None:
    sample = load_sample()
    with create_library(tmp_path / "s.db", sample=True) as database:
        repository = SkillRepository(database)
        assert repository.count() == len(sample)
        for item in sample:
            stored = repository.get(item.skill.id)
            # Compositions come back most-successful first, not in file order.
            assert replace(stored, composable_with=tuple(sorted(stored.composable_with))) == replace(
                item.skill, version=1, composable_with=tuple(sorted(item.skill.composable_with))
            )
            assert [replace(r, body_hash="") for r in repository.evidence.verifications(item.skill.id)] == list(
                item.verifications
            )
        refined = [item.skill for item in sample if item.skill.provenance.source.original_id]
        assert refined and repository.refinements_of(refined[0].provenance.source.original_id) == [refined[0].id]


def test_open_library_creates_only_the_default(tmp_path: Path) -> None:
    with pytest.raises(LibraryNotFound):
        open_library(tmp_path / "named-but-missing.db")
    with open_library() as database:  # the default, created from the sample (tmp XDG_DATA_HOME)
        assert SkillRepository(database).count() == len(load_sample())
    with pytest.raises(LibraryError, match="already exists"):
        create_library(database.path)


def test_a_library_file_may_be_named_by_a_sqlite_url(tmp_path: Path) -> None:
    """--db takes SQLAlchemy's spelling of a file too; it was looked for as 'sqlite:/...'."""
    path = tmp_path / "lib.db"
    create_library(f"sqlite:///{path}").close()
    assert path.is_file()
    for url in (f"sqlite:///{path}", f"sqlite+pysqlite:///{path}", f"SQLite:///{path}"):
        with open_library(url) as database:
            assert database.path == path and SkillRepository(database).count() == 0
    with pytest.raises(LibraryNotFound, match=f"no library at {tmp_path / 'missing.db'}"):
        open_library(f"sqlite:///{tmp_path / 'missing.db'}")
    assert library_file("C://Users/me/lib.db") == Path("C://Users/me/lib.db")  # a drive, not a scheme


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:", "sqlite:///file:lib.db?mode=ro&uri=true"])
def test_a_sqlite_url_naming_no_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(LibraryError, match="names no library file"):
        open_library(url)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("url", ["mysql://me:s3cret@db.example/skills", "mssql+pyodbc://me:s3cret@dsn"])
def test_another_databases_url_is_refused_naming_what_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.chdir(tmp_path)
    for attempt in (open_library, create_library):
        with pytest.raises(LibraryError, match=r"cannot open a \S+:// library.*postgresql\+psycopg://") as refused:
            attempt(url)
        assert "s3cret" not in str(refused.value)
    monkeypatch.setenv("SKILLSTUDIO_DB", url)
    with pytest.raises(LibraryError, match="cannot open a mysql:// library" if "mysql" in url else "mssql"):
        open_library()
    assert list(tmp_path.iterdir()) == []
