"""What sharing tells people, and the files it leaves: skills named in warnings (not ids), the
importing person credited where the input names no author, and an export readable like any file
the user writes."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from skillstudio.files import write_atomically
from skillstudio.packages.errors import PackageError
from skillstudio.packages.export import export_selection, load_selection
from skillstudio.packages.icpkg import PackageMeta, read_package
from skillstudio.packages.importer import apply_plan, incoming_from_package, plan_import
from skillstudio.packages.sources import ImportDefaults, read_source
from skillstudio.store import Actor, Database, SkillRepository
from tests.factories import ai_skill

META = PackageMeta("rocket-pack", "kessler", "1.0.0")


@pytest.fixture
def umask() -> Iterator[None]:
    """The test sets the umask it needs; the process gets its own back."""
    before = os.umask(0o022)
    yield
    os.umask(before)


def linked(repository: SkillRepository) -> tuple:
    """Three skills: the exported "Rocket screen" links to "Tank rush" and "Pillbox line"."""
    tank = repository.create(ai_skill(name="Tank rush"))
    pillbox = repository.create(ai_skill(name="Pillbox line"))
    rocket = repository.create(ai_skill(name="Rocket screen", composable_with=(tank.id, pillbox.id)))
    return rocket, tank, pillbox


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)], ids=["022", "027", "002"])
def test_an_export_gets_the_users_normal_file_mode(
    repository: SkillRepository, tmp_path: Path, umask: None, mask: int, mode: int
) -> None:
    os.umask(mask)
    skill = repository.create(ai_skill())
    out = tmp_path / "exports" / "out.icpkg"
    export_selection(load_selection(repository, [skill.id]), META, out, sign=False)
    assert stat.S_IMODE(out.stat().st_mode) == mode
    assert [entry.name for entry in out.parent.iterdir()] == ["out.icpkg"]  # no temporary file left
    assert len(read_package(out).skills) == 1


def test_rewriting_a_file_keeps_its_mode(tmp_path: Path, umask: None) -> None:
    path = tmp_path / "library.json"
    path.write_text("{}")
    path.chmod(0o640)  # the user chose who reads it: an export over it keeps that
    write_atomically(path, b'{"a": 1}\n')
    assert stat.S_IMODE(path.stat().st_mode) == 0o640 and json.loads(path.read_text()) == {"a": 1}


def test_links_left_out_of_an_export_are_named(repository: SkillRepository) -> None:
    rocket, tank, pillbox = linked(repository)
    preview = load_selection(repository, [rocket.id, pillbox.id])
    assert preview.links_out == {rocket.id: [tank.id]}
    assert preview.link_warnings() == [
        "“Rocket screen” links to “Tank rush”, not in this export: a library without it drops the link on import"
    ]
    assert load_selection(repository, [rocket.id, tank.id, pillbox.id]).link_warnings() == []


def test_links_an_import_drops_are_named_not_listed_as_ids(repository: SkillRepository, tmp_path: Path) -> None:
    rocket, tank, pillbox = linked(repository)
    package = tmp_path / "rocket.icpkg"
    export_selection(load_selection(repository, [rocket.id]), META, package, sign=False)
    with Database(tmp_path / "other.db", create=True) as database:
        other = SkillRepository(database, Actor("ines"))
        trashed = other.create(replace(tank, composable_with=()))
        other.trash.delete(trashed.id)
        incoming, origin = incoming_from_package(read_package(package))
        plan = plan_import(other, incoming, origin=origin, source=package.name)
        warning = next(w for w in plan.warnings if "dropped" in w)
        assert warning == (
            f"“Rocket screen”: its links to “Tank rush” (in this library's trash) and skill {pillbox.id[:8]} "
            "(in neither the import nor this library) were dropped"
        )
        assert tank.id not in warning and pillbox.id not in warning  # never a whole raw id
        apply_plan(other, plan)
        stored = other.extras.get(rocket.id)
        assert stored is not None and warning.removeprefix("“Rocket screen”: ") in stored.warnings


def _skill_md(root: Path, name: str, author: str | None) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    metadata = f"metadata:\n  author: {author}\n" if author else ""
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Does {name}.\n{metadata}---\nStep one.\n")


def test_imports_that_name_no_author_are_created_by_the_person_importing(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    _skill_md(root, "scout-first", None)
    _skill_md(root, "wall-in", "kessler")
    library = tmp_path / "seed.json"
    library.write_text(json.dumps({"rush": {"name": "rush", "principle": "Rush early.", "when_to_apply": "Always."}}))
    with Database(tmp_path / "lib.db", create=True) as database:
        rhea = SkillRepository(database, Actor("rhea"))
        for path in (root, library):
            source = read_source(path)
            apply_plan(rhea, plan_import(rhea, source.incoming, origin=source.origin, source=source.label))
        creators = {skill.name: skill.created_by for skill in rhea.get_many(rhea.query().ids)}
        assert creators == {"scout-first": "rhea", "wall-in": "kessler", "rush": "rhea"}
        # someone else importing the same folder again changes nothing: the creator is kept
        ines = rhea.as_actor(Actor("ines"))
        source = read_source(root)
        again = plan_import(ines, source.incoming, origin=source.origin, source=source.label)
        assert again.count("skip") == 2 and again.changes == 0


def test_import_defaults_follow_the_library(repository: SkillRepository, tmp_path: Path) -> None:
    from skillstudio.model import Domain
    from skillstudio.packages.sources import import_defaults
    from tests.factories import content_skill

    assert import_defaults(repository) == ImportDefaults(["ra1"], Domain.AI_STRATEGY)  # an empty library
    repository.create_many(
        [content_skill(provenance=replace(content_skill().provenance, game_module="td")) for _ in range(2)]
    )
    repository.create(ai_skill())
    defaults = import_defaults(repository)
    assert defaults == ImportDefaults(["td", "ra1"], Domain.CONTENT_GENERATION)
    # and a format that states neither takes them
    library = tmp_path / "seed.json"
    library.write_text(json.dumps({"rush": {"name": "rush", "principle": "Rush early."}}))
    source = read_source(library, domain=defaults.domain, game_module=defaults.game_modules[0])
    skill = source.incoming[0].skill
    assert (skill.game_module, skill.domain) == ("td", Domain.CONTENT_GENERATION)


def test_export_selection_never_writes_over_a_library(tmp_path: Path) -> None:
    """The app's export dialog takes a typed path: the library's own file is refused there too."""
    library = tmp_path / "lib.db"
    with Database(library, create=True) as database:
        repository = SkillRepository(database)
        skill = repository.create(ai_skill())
        with pytest.raises(PackageError, match="is a SQLite database"):
            export_selection(load_selection(repository, [skill.id]), META, library, sign=False)
        assert repository.count() == 1
    assert library.read_bytes()[:16] == b"SQLite format 3\x00"
