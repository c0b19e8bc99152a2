"""Agent Skills (SKILL.md) trees: strict and lenient import, export round trip, validate."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillstudio.model import Instructions
from skillstudio.packages.errors import PackageError
from skillstudio.packages.importer import apply_plan, plan_import
from skillstudio.packages.skill_md import export_skill_tree, read_skill_tree, validate_tree
from skillstudio.store import SkillRepository
from tests.packages.helpers import library_state


def write_skill(root: Path, folder: str, front: str, body: str = "# Do it\n\nStep one.\n") -> Path:
    path = root / folder
    path.mkdir(parents=True, exist_ok=True)
    (path / "SKILL.md").write_text(f"---\n{front}---\n{body}", encoding="utf-8")
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    good = write_skill(
        root, "pdf-tools",
        "name: pdf-tools\ndescription: Fill and merge PDF forms.\nlicense: Apache-2.0\n"
        "compatibility: needs python3\nmetadata:\n  owner: docs-team\nallowed-tools: Read Bash\n",
    )  # fmt: skip
    (good / "scripts").mkdir()
    (good / "scripts" / "fill.py").write_text("print('fill')\n")
    (good / "assets").mkdir()
    (good / "assets" / "logo.bin").write_bytes(b"\x00\xff\x10")
    return root


def messy(root: Path) -> None:
    """What real-world files do: every one breaks the spec somehow."""
    write_skill(root, "long-one", f"name: long-one\ndescription: {'x' * 1500}\n")
    write_skill(root, "folder-a", "name: other-name\ndescription: Name differs from folder.\n")
    write_skill(root, "commas", "name: commas\ndescription: Comma tools.\nallowed-tools: Read, Grep, Bash\n")
    write_skill(root, "extras", "name: extras\ndescription: Extra keys.\nversion: 1.2\nmodel: opus\nargument-hint: '[file]'\n")
    write_skill(root, "Bad_Name", "name: Bad_Name\ndescription: Uppercase and underscore.\n")


def import_tree(repository: SkillRepository, root: Path, *, strict: bool = False):
    incoming, origin, _found = read_skill_tree(root, strict=strict)
    return apply_plan(repository, plan_import(repository, incoming, origin=origin, source=root.name))


def test_a_spec_valid_skill_imports_with_files_and_frontmatter(repository: SkillRepository, tree: Path) -> None:
    plan = import_tree(repository, tree, strict=True)
    assert plan.count("add") == 1
    skill = repository.get(plan.added[0].skill.id)
    assert isinstance(skill.body, Instructions)
    assert skill.name == "pdf-tools" and skill.description == "Fill and merge PDF forms."
    assert skill.body.instructions.startswith("# Do it") and skill.body.tools == ("Read", "Bash")
    extras = repository.extras(skill.id)
    assert extras.frontmatter == {"license": "Apache-2.0", "compatibility": "needs python3", "metadata": {"owner": "docs-team"}}
    assert extras.files["scripts/fill.py"] == {"text": "print('fill')\n"}
    assert "base64" in extras.files["assets/logo.bin"] and extras.warnings == ()


def test_lenient_mode_takes_real_world_files_with_warnings(repository: SkillRepository, tree: Path) -> None:
    messy(tree)
    plan = import_tree(repository, tree)
    assert plan.count("add") == 6
    by_name = {item.skill.name: repository.extras(item.skill.id) for item in plan.added}
    assert any("1500 characters" in w for w in by_name["long-one"].warnings)
    assert any("differs from its folder" in w for w in by_name["other-name"].warnings)
    assert any("comma-separated" in w for w in by_name["commas"].warnings)
    extras = by_name["extras"]
    assert extras.frontmatter["metadata"]["version"] == "1.2" and extras.frontmatter["metadata"]["argument-hint"] == "[file]"
    assert sum("not a key of the SKILL.md spec" in w for w in extras.warnings) == 3
    assert any("lowercase" in w for w in by_name["Bad_Name"].warnings)
    commas = next(item.skill for item in plan.added if item.skill.name == "commas")
    assert commas.body.tools == ("Read", "Grep", "Bash")


def test_strict_mode_refuses_every_violation_at_once(repository: SkillRepository, tree: Path) -> None:
    messy(tree)
    before = library_state(repository)
    with pytest.raises(PackageError) as caught:
        import_tree(repository, tree, strict=True)
    paths = " ".join(issue.path for issue in caught.value.issues)
    for folder in ("long-one", "folder-a", "commas", "extras", "Bad_Name"):
        assert folder in paths
    assert library_state(repository) == before


def test_unsafe_trees_are_refused_in_both_modes(repository: SkillRepository, tree: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("password")
    os.symlink(secret, tree / "pdf-tools" / "scripts" / "link.txt")
    with pytest.raises(PackageError, match="symbolic link"):
        read_skill_tree(tree)
    (tree / "pdf-tools" / "scripts" / "link.txt").unlink()
    write_skill(tree, "badutf", "name: badutf\ndescription: x\n")
    (tree / "badutf" / "SKILL.md").write_bytes(b"---\nname: badutf\ndescription: \xff\n---\nbody")
    with pytest.raises(PackageError, match="not valid UTF-8"):
        read_skill_tree(tree)


def test_yaml_bombs_in_frontmatter_are_refused(tree: Path) -> None:
    front = "name: bomb\ndescription: x\nmetadata:\n  a: &a [x,x,x,x,x,x,x,x]\n" + "".join(
        f"  b{i}: &b{i} [*{'a' if i == 0 else f'b{i - 1}'}, *{'a' if i == 0 else f'b{i - 1}'}]\n" for i in range(30)
    )
    write_skill(tree, "bomb", front)
    with pytest.raises(PackageError, match="anchors/aliases"):
        read_skill_tree(tree)


def test_round_trip_through_export(repository: SkillRepository, tree: Path, tmp_path: Path) -> None:
    first = import_tree(repository, tree)
    skills = [repository.get(item.skill.id) for item in first.added]
    out = tmp_path / "exported"
    warnings = export_skill_tree(skills, out, repository.extras_many([s.id for s in skills]))
    assert warnings == []
    assert validate_tree(out) == []  # spec-valid
    assert (out / "pdf-tools" / "scripts" / "fill.py").read_text() == "print('fill')\n"
    assert (out / "pdf-tools" / "assets" / "logo.bin").read_bytes() == b"\x00\xff\x10"
    incoming, _origin, _found = read_skill_tree(out, strict=True)
    again = incoming[0].skill
    original = skills[0]
    assert (again.id, again.name, again.description, again.body) == (original.id, original.name, original.description, original.body)
    assert incoming[0].extras.frontmatter == repository.extras(original.id).frontmatter
    # and importing it back changes nothing
    assert plan_import(repository, incoming, origin="skill-md:skills", source="x").changes == 0


def test_export_makes_names_and_descriptions_spec_valid(tmp_path: Path) -> None:
    from tests.factories import ai_skill, instructions_skill

    skills = [instructions_skill(name="Wave Balancing Checklist", description="d" * 2000), ai_skill()]
    warnings = export_skill_tree(skills, tmp_path / "out")
    assert any("written as 'wave-balancing-checklist'" in w for w in warnings)
    assert any("cut to 1024" in w for w in warnings)
    assert any("has no SKILL.md form" in w for w in warnings)
    assert validate_tree(tmp_path / "out") == []


def test_validate_reports_without_importing(tree: Path) -> None:
    messy(tree)
    issues = validate_tree(tree)
    assert len(issues) >= 5 and all(issue.path for issue in issues)
