"""Seed 003's JSON library and Voyager libraries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillstudio.packages.errors import PackageError
from skillstudio.packages.importer import apply_plan, plan_import
from skillstudio.packages.json_library import export_json_library, read_json_library
from skillstudio.packages.skill_md import export_skill_tree
from skillstudio.packages.sources import detect_format, read_source
from skillstudio.packages.voyager import description_prose, read_voyager, split_version
from skillstudio.store import SkillExtras, SkillQuery, SkillRepository
from tests import factories
from tests.packages.helpers import library_state

SEED_003 = {
    "search": {
        "name": "search",
        "principle": "look everywhere",
        "when_to_apply": "finding objects",
        "created_iteration": 2,
        "last_used_iteration": 7,
        "usage_count": 5,
    },
    "heat": {
        "name": "heat",
        "principle": "use microwave",
        "when_to_apply": "heating objects",
        "created_iteration": 3,
        "last_used_iteration": 3,
        "usage_count": 0,
    },
}


def test_json_library_round_trip(repository: SkillRepository, tmp_path: Path) -> None:
    path = tmp_path / "skills.json"
    path.write_text(json.dumps(SEED_003))
    incoming, origin = read_json_library(path)
    plan = apply_plan(repository, plan_import(repository, incoming, origin=origin, source=path.name))
    assert plan.count("add") == 2
    skills = [repository.get(item.skill.id) for item in plan.added]
    text = export_json_library(skills, repository.extras.many([s.id for s in skills]))
    assert json.loads(text) == SEED_003
    again, _ = read_json_library(path)
    assert plan_import(repository, again, origin=origin, source=path.name).changes == 0


def test_json_library_problems_name_the_entry(repository: SkillRepository, tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"x": {"name": "x", "principle": 3, "usage_count": -1}, "y": []}))
    before = library_state(repository)
    with pytest.raises(PackageError) as caught:
        read_json_library(path)
    message = str(caught.value)
    assert '["x"].principle' in message and '["x"].usage_count' in message and '["y"]' in message
    assert library_state(repository) == before


def voyager_tree(root: Path) -> Path:
    (root / "code").mkdir(parents=True)
    (root / "description").mkdir()
    skills = {}
    for name, code in [
        ("mineWoodLog", "async function mineWoodLog(bot) {}"),
        ("craftTable", "async function craftTable(bot) { v1 }"),
        ("craftTableV2", "async function craftTable(bot) { v2 }"),
        ("craftTableV3", "async function craftTable(bot) { v3 }"),
    ]:
        (root / "code" / f"{name}.js").write_text(code)
        (root / "description" / f"{name}.txt").write_text(
            f"async function {name}(bot) {{\n    // {name} does things\n}}"
        )
        skills[name] = {"code": code, "description": f"{name} description"}
    (root / "skills.json").write_text(json.dumps(skills))
    return root


def test_voyager_library_with_version_pile_ups(repository: SkillRepository, tmp_path: Path) -> None:
    root = voyager_tree(tmp_path / "voyager")
    assert detect_format(root) == "voyager"
    incoming, origin = read_voyager(root)
    assert sorted(item.skill.name for item in incoming) == ["craftTable", "mineWoodLog"]
    table = next(item for item in incoming if item.skill.name == "craftTable")
    assert "v3" in table.skill.body.instructions and "```javascript" in table.skill.body.instructions
    assert set(table.extras.files) == {"versions/craftTable.js", "versions/craftTableV2.js"}
    assert "folded craftTable, craftTableV2 into craftTableV3" in table.warnings[0]
    apply_plan(repository, plan_import(repository, incoming, origin=origin, source="voyager"))
    # The pile-up is one skill whose history holds V1 and V2 before V3, so diffs show its growth.
    history = repository.history.revisions(table.skill.id)
    assert [revision.number for revision in history] == [1, 2, 3]
    assert ["v1" in r.skill().body.instructions for r in history] == [True, False, False]
    assert "v2" in history[1].skill().body.instructions and "v3" in history[2].skill().body.instructions
    assert repository.get(table.skill.id).body == table.skill.body
    mine = next(item for item in incoming if item.skill.name == "mineWoodLog")
    assert len(repository.history.revisions(mine.skill.id)) == 1
    again, _ = read_voyager(root)
    assert plan_import(repository, again, origin=origin, source="voyager").changes == 0


# A description as Voyager writes it: a stub of the function, the prose in its comment.
VOYAGER_STUB = (
    "async function gatherReeds(bot) {\n"
    "    // Walks along the river bank and breaks sugar cane until six stalks are held.\n"
    "    // Replants the lowest block of each so that the stalks grow back.\n"
    "}"
)
VOYAGER_PROSE = (
    "Walks along the river bank and breaks sugar cane until six stalks are held."
    " Replants the lowest block of each so that the stalks grow back."
)


def test_a_voyager_description_is_the_prose_of_its_function_stub(repository: SkillRepository, tmp_path: Path) -> None:
    """Voyager's description files are function stubs: the skill is described, and found, by
    what their comment says, not by the stub's first line."""
    root = tmp_path / "voyager"
    (root / "code").mkdir(parents=True)
    (root / "description").mkdir()
    code = "async function gatherReeds(bot) { await mineBlock(bot, 'sugar_cane', 6); }"
    (root / "code" / "gatherReeds.js").write_text(code)
    (root / "description" / "gatherReeds.txt").write_text(VOYAGER_STUB)
    (root / "skills.json").write_text(json.dumps({"gatherReeds": {"code": code, "description": VOYAGER_STUB}}))
    [item], origin = read_voyager(root)
    assert item.skill.description == VOYAGER_PROSE
    assert item.skill.body.instructions.startswith(VOYAGER_PROSE + "\n\n```javascript\n")
    assert "async function gatherReeds(bot) {\n    //" not in item.skill.body.instructions
    apply_plan(repository, plan_import(repository, [item], origin=origin, source="voyager"))
    assert repository.query(SkillQuery(text="sugar cane")).ids == [item.skill.id]


@pytest.mark.parametrize(
    ("description", "prose"),
    [
        (VOYAGER_STUB, VOYAGER_PROSE),
        ("function craft(bot, n) {\n  /* Crafts n planks.\n   * Needs logs.\n   */\n}", "Crafts n planks. Needs logs."),
        ("async function a(bot) {\n\n    // Only this.\n\n}", "Only this."),
        # not a stub of comments: kept as written
        ("async function a(bot) {\n    await mine(bot);\n}", "async function a(bot) {\n    await mine(bot);\n}"),
        ("async function a(bot) {\n    // says\n    await mine(bot);\n}", None),
        ("async function a(bot) {\n    //\n}", None),
        ("Mines a log.\nThen crafts planks.", None),
        ("  plain  ", "plain"),
        ("", ""),
    ],
)
def test_description_prose(description: str, prose: str | None) -> None:
    assert description_prose(description) == (description.strip() if prose is None else prose)


def test_voyager_refuses_unsafe_names(tmp_path: Path) -> None:
    root = voyager_tree(tmp_path / "voyager")
    (root / "skills.json").write_text(json.dumps({"../../etc/passwd": {"code": "x", "description": "y"}}))
    with pytest.raises(PackageError, match="skill name must be"):
        read_voyager(root)


def test_split_version() -> None:
    assert split_version("fooV2") == ("foo", 2)
    assert split_version("fooV12") == ("foo", 12)
    assert split_version("attackV") == ("attackV", 1)
    assert split_version("V2rocket") == ("V2rocket", 1)


def test_detection(tmp_path: Path) -> None:
    (tmp_path / "tree" / "a").mkdir(parents=True)
    (tmp_path / "tree" / "a" / "SKILL.md").write_text("---\nname: a\ndescription: b\n---\nc")
    assert detect_format(tmp_path / "tree") == "skill-md"
    (tmp_path / "lib.json").write_text("{}")
    assert detect_format(tmp_path / "lib.json") == "json"
    with pytest.raises(PackageError, match="does not exist"):
        read_source(tmp_path / "missing.icpkg")


def test_exports_tolerate_extras_of_any_shape(tmp_path: Path) -> None:
    """Extras kept from a package or written by another program may hold anything under the
    keys an export reads back: what is not the expected shape is left out, never a crash."""
    skill = factories.instructions_skill(name="odd-extras")
    odd = SkillExtras(frontmatter={"metadata": ["not", "a", "mapping"], "created_iteration": "soon"})
    [entry] = json.loads(export_json_library([skill], {skill.id: odd})).values()
    assert (entry["created_iteration"], entry["last_used_iteration"]) == (0, 0)
    assert export_skill_tree([skill], tmp_path / "out", {skill.id: odd}) == []
    assert "skillstudio-id" in (tmp_path / "out" / "odd-extras" / "SKILL.md").read_text()
