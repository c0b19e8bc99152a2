"""Agent Skills (SKILL.md) trees: strict and lenient import, export round trip, validate."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillstudio.model import Instructions
from skillstudio.packages.errors import PackageError
from skillstudio.packages.importer import apply_plan, plan_import
from skillstudio.packages.skill_md import export_skill_tree, read_skill_tree, validate_tree
from skillstudio.packages.sources import read_source
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
        root,
        "pdf-tools",
        "name: pdf-tools\ndescription: Fill and merge PDF forms.\nlicense: Apache-2.0\n"
        "compatibility: needs python3\nmetadata:\n  owner: docs-team\nallowed-tools: Read Bash\n",
    )
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
    write_skill(
        root, "extras", "name: extras\ndescription: Extra keys.\nversion: 1.2\nmodel: opus\nargument-hint: '[file]'\n"
    )
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
    extras = repository.extras.get(skill.id)
    assert extras.frontmatter == {
        "license": "Apache-2.0",
        "compatibility": "needs python3",
        "metadata": {"owner": "docs-team"},
    }
    assert extras.files["scripts/fill.py"] == {"text": "print('fill')\n"}
    assert "base64" in extras.files["assets/logo.bin"] and extras.warnings == ()


def test_lenient_mode_takes_real_world_files_with_warnings(repository: SkillRepository, tree: Path) -> None:
    messy(tree)
    plan = import_tree(repository, tree)
    assert plan.count("add") == 6
    by_name = {item.skill.name: repository.extras.get(item.skill.id) for item in plan.added}
    assert any("1500 characters" in w for w in by_name["long-one"].warnings)
    assert any("differs from its folder" in w for w in by_name["other-name"].warnings)
    assert any("comma-separated" in w for w in by_name["commas"].warnings)
    extras = by_name["extras"]
    assert (
        extras.frontmatter["metadata"]["version"] == "1.2"
        and extras.frontmatter["metadata"]["argument-hint"] == "[file]"
    )
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
    warnings = export_skill_tree(skills, out, repository.extras.many([s.id for s in skills]))
    assert warnings == []
    assert validate_tree(out) == []  # spec-valid
    assert (out / "pdf-tools" / "scripts" / "fill.py").read_text() == "print('fill')\n"
    assert (out / "pdf-tools" / "assets" / "logo.bin").read_bytes() == b"\x00\xff\x10"
    incoming, _origin, _found = read_skill_tree(out, strict=True)
    again = incoming[0].skill
    original = skills[0]
    assert (again.id, again.name, again.description, again.body) == (
        original.id,
        original.name,
        original.description,
        original.body,
    )
    assert incoming[0].extras.frontmatter == repository.extras.get(original.id).frontmatter
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


# --- every file of a skill folder is kept, and written back byte for byte --------------------------

REAL_SKILL_FILES: dict[str, bytes] = {
    "forms.md": b"# Forms\n\nFill the fields in order.\n",
    "reference.md": "R\u00e9f\u00e9rence \u2014 caf\u00e9 \u2713\n".encode(),
    "LICENSE.txt": b"Apache License\r\nVersion 2.0\r\n",  # CRLF stays CRLF
    "bom.txt": b"\xef\xbb\xbfstarts with a BOM\n",
    "empty.txt": b"",
    "templates/x.html": b"<html><body>{{ form }}</body></html>",
    "templates/deep/nested/data.bin": bytes(range(256)) + b"\xff\xfe\x00",
    "templates/deep/nul.txt": b"text with a \x00 NUL",
    "scripts/fill.py": b"print('fill')\n",
    "assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    "sub/SKILL.md": b"---\nname: not-a-skill\n---\nA SKILL.md inside a skill folder is only a file.\n",
}


def files_under(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.relative_to(folder).as_posix() != "SKILL.md"
    }


def real_skill(root: Path) -> Path:
    folder = write_skill(
        root, "pdf", "name: pdf\ndescription: Fill PDF forms.\nlicense: Complete terms in LICENSE.txt\n"
    )
    for rel, data in REAL_SKILL_FILES.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    return folder


def test_import_keeps_every_file_and_export_writes_them_back_byte_for_byte(
    repository: SkillRepository, tmp_path: Path
) -> None:
    root = tmp_path / "skills"
    folder = real_skill(root)
    (folder / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")  # dot entries are not part of a skill
    (folder / ".git").mkdir()
    (folder / ".git" / "config").write_text("[core]\n")
    (folder / "templates" / ".cache.tmp").write_text("editor litter")
    plan = import_tree(repository, root, strict=True)  # extra files are no spec violation
    skill = repository.get(plan.added[0].skill.id)
    extras = repository.extras.get(skill.id)
    assert sorted(extras.files) == sorted(REAL_SKILL_FILES) and extras.warnings == ()
    out = tmp_path / "exported"
    assert export_skill_tree([skill], out, repository.extras.many([skill.id])) == []
    assert files_under(out / "pdf") == REAL_SKILL_FILES
    # and the exported folder is the same skill again, files included
    incoming, _origin, _found = read_skill_tree(out, strict=True)
    assert incoming[0].extras.files == extras.files


def test_dot_entries_are_skipped_with_a_note(tmp_path: Path) -> None:
    folder = real_skill(tmp_path / "skills")
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (folder / "templates" / ".env").write_text("TOKEN=x\n")
    (folder / "my form.pdf").write_bytes(b"%PDF")  # a name a Workshop package may not hold
    incoming, _origin, found = read_skill_tree(tmp_path / "skills", strict=True)  # no spec violation
    assert not any(rel.startswith(".") or "/." in rel for rel in incoming[0].extras.files)
    assert "my form.pdf" not in incoming[0].extras.files
    assert found.spec == [] and any(".git" in str(note) and "templates/.env" in str(note) for note in found.notes)
    assert [str(w) for w in found.warnings] == [
        "pdf/my form.pdf: file name has characters other than A-Z a-z 0-9 . _ -; not kept"
    ]
    assert incoming[0].extras.warnings == (str(found.warnings[0]),)  # shown to the reviewer


def test_file_limits_still_refuse_hostile_trees(tmp_path: Path) -> None:
    from skillstudio.packages import skill_md

    root = tmp_path / "many"
    folder = write_skill(root, "many", "name: many\ndescription: Too many files.\n")
    (folder / "lots").mkdir()
    for index in range(skill_md.MAX_FILES_PER_SKILL + 1):
        (folder / "lots" / f"f{index}.txt").write_text("x")
    with pytest.raises(PackageError, match=f"more than {skill_md.MAX_FILES_PER_SKILL} files"):
        read_skill_tree(root)

    root = tmp_path / "big"
    folder = write_skill(root, "big", "name: big\ndescription: Too many bytes.\n")
    for index in range(5):
        (folder / f"part{index}.bin").write_bytes(b"\x00" * (skill_md.MAX_FILE - 1))
    with pytest.raises(PackageError, match=f"more than {skill_md.MAX_FILES_BYTES} bytes"):
        read_skill_tree(root)

    root = tmp_path / "huge"
    folder = write_skill(root, "huge", "name: huge\ndescription: One file too big.\n")
    (folder / "huge.bin").write_bytes(b"\x00" * (skill_md.MAX_FILE + 1))
    with pytest.raises(PackageError, match=f"at most {skill_md.MAX_FILE}"):
        read_skill_tree(root)

    root = tmp_path / "deep"
    folder = write_skill(root, "deep", "name: deep\ndescription: Nested too deep.\n")
    path = folder
    for _ in range(skill_md.MAX_FILE_DEPTH + 1):
        path = path / "d"
    path.mkdir(parents=True)
    (path / "x.txt").write_text("x")
    with pytest.raises(PackageError, match="nested deeper"):
        read_skill_tree(root)


def test_special_files_and_symlinks_anywhere_in_the_folder_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    folder = real_skill(root)
    os.mkfifo(folder / "templates" / "pipe")  # reading it would block forever
    with pytest.raises(PackageError, match="not a regular file"):
        read_skill_tree(root)
    (folder / "templates" / "pipe").unlink()
    secret = tmp_path / "secret.txt"
    secret.write_text("password")
    os.symlink(secret, folder / "notes.md")
    with pytest.raises(PackageError, match=r"pdf/notes\.md.*symbolic link"):
        read_skill_tree(root)


def test_export_writes_no_file_outside_its_folder_nor_over_skill_md(tmp_path: Path) -> None:
    from skillstudio.store import SkillExtras
    from tests.factories import instructions_skill

    skill = instructions_skill(name="safe")
    bad = [
        "SKILL.md",
        ".git/config",
        "../escape.txt",
        "a/../../b.txt",
        "/abs.txt",
        "a\\b.txt",
        "sp ace.txt",
        "a//b.txt",
    ]
    files = {rel: {"text": "x"} for rel in bad} | {"ok/fine.txt": {"text": "fine"}}
    warnings = export_skill_tree([skill], tmp_path / "out", {skill.id: SkillExtras(files=files)})
    assert sum("not written" in w for w in warnings) == len(bad)
    assert files_under(tmp_path / "out" / "safe") == {"ok/fine.txt": b"fine"}
    assert not (tmp_path / "escape.txt").exists() and not (tmp_path / "out" / "b.txt").exists()
    assert (tmp_path / "out" / "safe" / "SKILL.md").read_text().startswith("---\nname: safe\n")


# --- what the spec says is valid, and what it says is not -----------------------------------------


def test_the_specs_minimal_example_is_valid(tmp_path: Path) -> None:
    """Frontmatter with only name and description, and no body at all."""
    root = tmp_path / "skills"
    (root / "skill-name").mkdir(parents=True)
    (root / "skill-name" / "SKILL.md").write_text(
        "---\nname: skill-name\ndescription: A description of what this skill does and when to use it.\n---\n"
    )
    incoming, _origin, found = read_skill_tree(root, strict=True)
    assert incoming[0].warnings == () and found.spec == [] and found.errors == []
    assert validate_tree(root) == []
    assert incoming[0].skill.body.instructions == "A description of what this skill does and when to use it."


@pytest.mark.parametrize("value", ['""', "''", '"   "'])
def test_an_empty_compatibility_is_a_spec_violation(tmp_path: Path, value: str) -> None:
    root = tmp_path / "skills"
    write_skill(root, "compat", f"name: compat\ndescription: x\ncompatibility: {value}\n")
    with pytest.raises(PackageError, match=r"compatibility.*1-500"):
        read_skill_tree(root, strict=True)
    assert any("compatibility" in issue.path for issue in validate_tree(root))


def test_a_duplicate_frontmatter_key_is_an_error_naming_key_and_line(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "dup", "name: dup\ndescription: x\nname: other\nmetadata:\n  owner: a\n  owner: b\n")
    for strict in (False, True):
        with pytest.raises(PackageError) as caught:
            read_skill_tree(root, strict=strict)
        text = str(caught.value)
        assert "duplicate key 'name'" in text and "line 4" in text and "first at line 2" in text
        assert "duplicate key 'owner'" in text and "line 7" in text
    assert any("duplicate key 'name'" in issue.message for issue in validate_tree(root))


@pytest.mark.parametrize(
    ("inside", "given"),
    [("pdf-tools", "."), ("pdf-tools/scripts", ".."), ("pdf-tools/scripts", "../."), ("", "pdf-tools/.")],
)
def test_a_folder_given_as_dot_or_dot_dot_is_named_by_its_real_name(
    tree: Path, monkeypatch: pytest.MonkeyPatch, inside: str, given: str
) -> None:
    """`skillstudio import .` inside a skill folder: the spec compares the skill's name with its
    folder's name, and the origin and the source are named after that folder, not ''."""
    monkeypatch.chdir(tree / inside)
    incoming, origin, found = read_skill_tree(given, strict=True)
    assert [item.skill.name for item in incoming] == ["pdf-tools"] and found.spec == []
    assert origin == "skill-md:pdf-tools" and validate_tree(given) == []
    source = read_source(given)
    assert source.label == "pdf-tools" and source.origin == "skill-md:pdf-tools"
