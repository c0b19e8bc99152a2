"""Rows an engine wrote with source ``workshop`` or ``human_refined`` but none of SkillStudio's
extra details (D057's table has no columns for a package id, an author or an original): they
list, show, edit, verify and export, and the missing details stay unknown, never invented."""

from __future__ import annotations

import json
import sqlite3
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from skillstudio.cli.main import main as cli
from skillstudio.curation.edits import save_edit
from skillstudio.model import SourceKind
from skillstudio.store import Actor, Database, SkillRepository
from tests.test_seed_ddl import ENGINE_BODY, seed_ddl

WORKSHOP_ID = "9b000000-0000-4000-8000-000000000001"
REFINED_ID = "9b000000-0000-4000-8000-000000000002"


def _row(skill_id: str, name: str, source: str) -> tuple[object, ...]:
    return (
        skill_id,
        "ai_strategy",
        name,
        "An engine-written skill.",
        json.dumps(ENGINE_BODY),
        json.dumps(["anti-air"]),
        "ra1",
        source,
        None,
        6,
        0.5,
        None,
        "established",
        3,
        "2026-02-11T08:00:00.000Z",
        None,
        "2026-04-30T20:00:00.000Z",
    )


@pytest.fixture
def engine_library(tmp_path: Path) -> Path:
    """D057's exact DDL and rows from plain SQL: no studio_* table, so no studio_skill_meta row."""
    path = tmp_path / "gameplay.db"
    with sqlite3.connect(path) as connection:
        connection.executescript(seed_ddl())
        connection.executemany(
            f"INSERT INTO skills VALUES ({', '.join('?' * 17)})",
            [_row(WORKSHOP_ID, "Workshop SAM wall", "workshop"), _row(REFINED_ID, "Refined SAM wall", "human_refined")],
        )
    return path


def test_list_and_show(engine_library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["list", "--db", str(engine_library), "--json"]) == 0
    listed = {s["id"]: s for s in json.loads(capsys.readouterr().out)["skills"]}
    assert (listed[WORKSHOP_ID]["source"], listed[REFINED_ID]["source"]) == ("workshop", "human_refined")
    assert "invalid" not in listed[WORKSHOP_ID]

    assert cli(["show", WORKSHOP_ID, "--db", str(engine_library), "--json"]) == 0
    provenance = json.loads(capsys.readouterr().out)["skill"]["provenance"]
    assert (provenance["source"], provenance["source_id"], provenance["author"]) == ("workshop", None, None)
    assert cli(["show", REFINED_ID, "--db", str(engine_library), "--json"]) == 0
    provenance = json.loads(capsys.readouterr().out)["skill"]["provenance"]
    assert (provenance["source"], provenance["original_id"]) == ("human_refined", None)

    assert cli(["show", WORKSHOP_ID, "--db", str(engine_library)]) == 0
    assert "workshop (package unknown by unknown author)" in capsys.readouterr().out
    assert cli(["show", REFINED_ID, "--db", str(engine_library)]) == 0
    assert "human_refined (refines an unknown original)" in capsys.readouterr().out


def test_edit_keeps_the_details_unknown(engine_library: Path) -> None:
    with Database(engine_library) as database:
        repository = SkillRepository(database, Actor("ana"))
        refined = repository.get(REFINED_ID)
        stored = save_edit(repository, refined, replace(refined, name="Refined SAM wall, tidier")).skill
        assert stored.name == "Refined SAM wall, tidier"
        assert stored.provenance.source.kind is SourceKind.HUMAN_REFINED
        assert stored.provenance.source.original_id is None  # still unknown: nothing made up
        workshop = repository.get(WORKSHOP_ID)
        updated = repository.update(replace(workshop, tags=("anti-air", "sam")))
        source = repository.get(updated.id).provenance.source
        assert (source.kind, source.source_id, source.author) == (SourceKind.WORKSHOP, None, None)
    with sqlite3.connect(engine_library) as connection:  # the meta row holds NULL, not a stand-in
        row = connection.execute(
            "SELECT source_id, source_author, original_id FROM studio_skill_meta WHERE skill_id = ?", (WORKSHOP_ID,)
        ).fetchone()
    assert row == (None, None, None)


def test_verify_and_export(engine_library: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = ["--db", str(engine_library)]
    ids = ["--skill", WORKSHOP_ID, "--skill", REFINED_ID]
    batch = ["--games", "3", "--opponent", "IC Default Hard", "--seed", "4", "--quiet", "--json"]
    code = cli(["verify", *db, *ids, *batch])
    assert code == 0
    run = json.loads(capsys.readouterr().out)
    assert {s["id"] for s in run["skills"]} == {WORKSHOP_ID, REFINED_ID}
    assert all(s["applied"] for s in run["skills"]) and run["skipped"] == []

    # the engine's body_json is not SkillStudio's canonical text: the evidence is still matched
    assert cli(["show", WORKSHOP_ID, *db, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["evidence"]["headless"]["decided"] == 3

    target = tmp_path / "out.icpkg"
    assert cli(["export", *db, "-o", str(target)]) == 0
    capsys.readouterr()
    with zipfile.ZipFile(target) as package:
        documents = [json.loads(package.read(n)) for n in package.namelist() if n.startswith("skills/")]
    exported = {d["id"]: d["provenance"] for d in documents}
    assert (exported[WORKSHOP_ID]["source"], exported[WORKSHOP_ID]["source_id"]) == ("workshop", None)
    assert (exported[REFINED_ID]["source"], exported[REFINED_ID]["original_id"]) == ("human_refined", None)
