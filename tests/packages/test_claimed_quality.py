"""A package's quality figures are its claim, not this library's evidence (issue 13 point 17 B)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from skillstudio.cli.main import main as cli
from skillstudio.model import Confidence, Quality
from skillstudio.packages.icpkg import export_package
from skillstudio.store import Database, ImportItem, SkillExtras, SkillRepository
from tests import factories
from tests.packages.helpers import META

CLAIM = Quality(100_000, 1.0, None, Confidence.PROVEN, "2024-01-01T00:00:00Z")


def package_bytes(**changes) -> tuple[bytes, str]:
    skill = factories.ai_skill(name="Naval doctrine", quality=CLAIM, **changes)
    return export_package([skill], META), skill.id


def show(capsys: pytest.CaptureFixture[str], library: Path, skill_id: str) -> dict:
    assert cli(["show", "--db", str(library), "--json", skill_id]) == 0
    return json.loads(capsys.readouterr().out)["skill"]


@pytest.fixture
def library(tmp_path: Path) -> Path:
    Database(tmp_path / "lib.db", create=True).close()
    return tmp_path / "lib.db"


def test_claimed_quality_is_kept_as_a_claim_not_as_evidence(capsys, library: Path, tmp_path: Path) -> None:
    data, skill_id = package_bytes()
    (tmp_path / "p.icpkg").write_bytes(data)
    assert cli(["import", "--db", str(library), str(tmp_path / "p.icpkg")]) == 0
    capsys.readouterr()
    assert cli(["show", "--db", str(library), "--json", skill_id]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["verifications"] == []  # the package's evidence is not this library's
    quality = document["skill"]["quality"]
    assert quality["confidence"] == "tentative" and quality["verification_count"] == 0
    assert quality["success_rate"] == 0.0
    with Database(library) as database:
        repository = SkillRepository(database)
        claim = repository.extras.get(skill_id).frontmatter["claimed_quality"]
        assert claim["by"] == "kessler/ra1-naval@1.2.0"
        assert (claim["confidence"], claim["verification_count"], claim["success_rate"]) == ("proven", 100_000, 1.0)
        assert repository.evidence.verifications(skill_id) == []

    # importing it again changes nothing
    assert cli(["import", "--db", str(library), str(tmp_path / "p.icpkg")]) == 0
    capsys.readouterr()
    quality = show(capsys, library, skill_id)["quality"]
    assert quality["confidence"] == "tentative" and quality["verification_count"] == 0


def test_an_update_from_the_package_keeps_this_librarys_quality(capsys, library: Path, tmp_path: Path) -> None:
    ours = Quality(3, 0.5, None, Confidence.TENTATIVE, "2025-01-01T00:00:00Z")
    skill = factories.ai_skill(name="Naval doctrine", quality=ours)
    with Database(library) as database:  # as if imported earlier, then verified here
        SkillRepository(database).import_skills(
            [ImportItem(skill, SkillExtras(origin="workshop:kessler/ra1-naval@1.2.0"))]
        )
    changed = replace(skill, quality=CLAIM, description="a newer description")
    (tmp_path / "p2.icpkg").write_bytes(export_package([changed], replace(META, version="1.3.0")))
    assert cli(["import", "--db", str(library), str(tmp_path / "p2.icpkg")]) == 0
    capsys.readouterr()
    shown = show(capsys, library, skill.id)
    assert shown["description"] == "a newer description"
    assert shown["quality"]["verification_count"] == 3 and shown["quality"]["success_rate"] == 0.5


def test_show_says_the_figures_are_the_packages_claim(capsys, library: Path, tmp_path: Path) -> None:
    data, skill_id = package_bytes()
    (tmp_path / "p.icpkg").write_bytes(data)
    assert cli(["import", "--db", str(library), str(tmp_path / "p.icpkg")]) == 0
    capsys.readouterr()
    assert cli(["show", "--db", str(library), "--json", skill_id]) == 0
    claim = json.loads(capsys.readouterr().out)["claimed_quality"]
    assert claim["confidence"] == "proven" and claim["verification_count"] == 100_000
    assert cli(["show", "--db", str(library), skill_id]) == 0
    text = capsys.readouterr().out
    assert "claimed by package kessler/ra1-naval@1.2.0: proven, 100000 games at 100%" in text
    assert "only this library's own evidence promotes or demotes" in text
