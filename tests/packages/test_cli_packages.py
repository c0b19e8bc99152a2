"""`skillstudio export | import | validate | prune` on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillstudio.cli.main import main as cli
from skillstudio.model import Confidence, Instructions, Quality
from skillstudio.store import Database, SkillRepository
from tests.factories import ai_skill, content_skill, instructions_skill
from tests.packages.helpers import entries_of, rezip


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def library(tmp_path: Path) -> Path:
    path = tmp_path / "lib.db"
    with Database(path, create=True) as database:
        SkillRepository(database).create_many(
            [
                ai_skill(quality=Quality(12, 0.8, None, Confidence.PROVEN)),
                ai_skill(name="Tentative idea"),
                content_skill(),
                instructions_skill(),
            ]
        )
    return path


def empty(tmp_path: Path, name: str = "empty.db") -> Path:
    Database(tmp_path / name, create=True).close()
    return tmp_path / name


def test_export_with_filters_then_import_dry_run_and_twice(capsys, library: Path, tmp_path: Path) -> None:
    out = tmp_path / "naval.icpkg"
    code, text, _ = run(
        capsys,
        "export",
        "--db",
        str(library),
        "--domain",
        "ai",
        "--confidence",
        "established+",
        "--publisher",
        "kessler",
        "-o",
        str(out),
    )
    assert code == 0 and "exported 1 skills" in text
    first = out.read_bytes()
    assert (
        run(
            capsys,
            "export",
            "--db",
            str(library),
            "--domain",
            "ai",
            "--confidence",
            "established+",
            "--publisher",
            "kessler",
            "-o",
            str(out),
        )[0]
        == 0
    )
    assert out.read_bytes() == first  # deterministic
    target = empty(tmp_path)
    code, text, _ = run(capsys, "import", "--db", str(target), str(out), "--dry-run")
    assert code == 0 and "1 added" in text and "add " in text
    with Database(target) as database:
        assert SkillRepository(database).count() == 0
    assert "1 added" in run(capsys, "import", "--db", str(target), str(out))[1]
    code, text, _ = run(capsys, "import", "--db", str(target), str(out), "--json")
    document = json.loads(text)
    assert (
        document["format"] == "skillstudio.import"
        and document["counts"]["add"] == 0
        and document["counts"]["skip"] == 1
    )


def test_export_refuses_private_data_without_redact(capsys, tmp_path: Path) -> None:
    path = tmp_path / "leaky.db"
    with Database(path, create=True) as database:
        SkillRepository(database).create(ai_skill(description="Seen in replays/ladder.orarep vs player: Boris"))
    out = tmp_path / "x.icpkg"
    code, _, err = run(capsys, "export", "--db", str(path), "-o", str(out))
    assert code == 1 and err.startswith("skillstudio: privacy check refused") and "replay" in err
    assert not out.exists()
    code, text, _ = run(capsys, "export", "--db", str(path), "-o", str(out), "--dry-run")
    assert code == 0 and "privacy findings" in text and not out.exists()
    code, text, _ = run(capsys, "export", "--db", str(path), "-o", str(out), "--redact")
    assert code == 0 and "1 redacted" in text and out.exists()


def test_hostile_package_exits_1_naming_the_entry(capsys, library: Path, tmp_path: Path) -> None:
    out = tmp_path / "p.icpkg"
    run(capsys, "export", "--db", str(library), "-o", str(out))
    entries = entries_of(out.read_bytes())
    entries["../../evil.json"] = b"{}"
    bad = tmp_path / "bad.icpkg"
    bad.write_bytes(rezip(entries))
    code, _, err = run(capsys, "import", "--db", str(empty(tmp_path)), str(bad))
    assert code == 1 and err.startswith("skillstudio: ") and "../../evil.json" in err


def test_skill_md_export_import_and_validate(capsys, library: Path, tmp_path: Path) -> None:
    folder = tmp_path / "agent-skills"
    code, _, _ = run(capsys, "export", "--db", str(library), "-o", str(folder), "--format", "skill-md")
    assert code == 0 and (folder / "wave-balancing-checklist" / "SKILL.md").exists()
    code, text, _ = run(capsys, "validate", str(folder))
    assert code == 0 and "no problems" in text
    (folder / "broken").mkdir()
    (folder / "broken" / "SKILL.md").write_text("---\nname: Not_Valid\ndescription: x\n---\nbody")
    code, text, _ = run(capsys, "validate", str(folder))  # spec violations are warnings...
    assert code == 0 and "warning: broken/SKILL.md: name" in text
    code, text, _ = run(capsys, "validate", str(folder), "--strict")  # ...or, strictly, errors
    assert code == 1 and "error: broken/SKILL.md: name" in text
    target = empty(tmp_path)
    code, _, err = run(capsys, "import", "--db", str(target), str(folder), "--strict")
    assert code == 1 and "Not_Valid" in err
    code, text, _ = run(capsys, "import", "--db", str(target), str(folder))
    assert code == 0 and "2 added" in text and "warning:" in text


def test_json_export_and_import(capsys, library: Path, tmp_path: Path) -> None:
    out = tmp_path / "lib.json"
    assert run(capsys, "export", "--db", str(library), "-o", str(out))[0] == 0
    assert list(json.loads(out.read_text())) == ["Wave balancing checklist"]
    code, text, _ = run(capsys, "import", "--db", str(empty(tmp_path)), str(out), "--domain", "content")
    assert code == 0 and "(json, json:lib.json): 1 added" in text


def test_prune_dry_run_then_prune(capsys, library: Path) -> None:
    code, text, _ = run(capsys, "prune", "--db", str(library), "--dry-run", "--max-size", "2")
    assert code == 0 and "would move" in text
    before = text.splitlines()[0].split()[2]
    code, text, _ = run(capsys, "prune", "--db", str(library), "--max-size", "2", "--json")
    document = json.loads(text)
    assert code == 0 and str(len(document["pruned"])) == before
    with Database(library) as database:
        assert SkillRepository(database).count() <= 2


def real_skills(root: Path) -> Path:
    """The spec's minimal example, and a skill with the files real skills keep beside SKILL.md."""
    (root / "skill-name").mkdir(parents=True)
    (root / "skill-name" / "SKILL.md").write_text(
        "---\nname: skill-name\ndescription: A description of what this skill does.\n---\n"
    )
    pdf = root / "pdf"
    (pdf / "templates").mkdir(parents=True)
    (pdf / "SKILL.md").write_text(
        "---\nname: pdf\ndescription: Fill PDF forms.\nlicense: see LICENSE.txt\n---\n# PDF\n\nRead forms.md.\n"
    )
    for rel in ("forms.md", "reference.md", "LICENSE.txt", "templates/x.html"):
        (pdf / rel).write_text(f"{rel}\n")
    return root


def test_validate_strict_accepts_extra_files_and_the_minimal_example(capsys, tmp_path: Path) -> None:
    root = real_skills(tmp_path / "skills")
    for flags in ((), ("--strict",)):
        code, text, err = run(capsys, "validate", str(root), *flags)
        assert code == 0 and "no problems found" in text and "warning" not in text + err


def test_validate_warns_and_strict_fails_on_spec_violations(capsys, tmp_path: Path) -> None:
    root = real_skills(tmp_path / "skills")
    (root / "broken").mkdir()
    (root / "broken" / "SKILL.md").write_text("---\nname: Not_Valid\ndescription: x\ncompatibility: ''\n---\nbody")
    code, text, _ = run(capsys, "validate", str(root))
    assert code == 0 and "warning: broken/SKILL.md: name" in text and "warning: broken/SKILL.md: compatibility" in text
    code, text, _ = run(capsys, "validate", str(root), "--strict")
    assert code == 1 and "error: broken/SKILL.md: name" in text and "error: broken/SKILL.md: compatibility" in text
    (root / "broken" / "SKILL.md").write_text("---\nname: broken\nname: broken\ndescription: x\n---\nbody")
    code, text, _ = run(capsys, "validate", str(root))  # hard errors fail either way
    assert code == 1 and "error: broken/SKILL.md: frontmatter: duplicate key 'name'" in text


@pytest.fixture
def pdf_library(tmp_path: Path) -> Path:
    """Anthropic's pdf skill shows how to open an encrypted file: a false positive of the check."""
    path = tmp_path / "pdf.db"
    with Database(path, create=True) as database:
        SkillRepository(database).create(
            instructions_skill(
                name="pdf", body=Instructions("reader = PdfReader('in.pdf', password=mypassword)", (), None, ())
            )
        )
    return path


def test_privacy_findings_warn_for_skill_md_and_json_but_refuse_packages(
    capsys, pdf_library: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "agent-skills"
    code, text, err = run(capsys, "export", "--db", str(pdf_library), "-o", str(folder), "--format", "skill-md")
    assert code == 0 and "exported 1 skills" in text
    assert "warning: privacy check:" in err and "password=mypassword" in err
    assert "password=mypassword" in (folder / "pdf" / "SKILL.md").read_text()  # unchanged
    out = tmp_path / "lib.json"
    code, text, err = run(capsys, "export", "--db", str(pdf_library), "-o", str(out))
    assert code == 0 and "warning: privacy check:" in err and "password=mypassword" in out.read_text()
    package = tmp_path / "pdf.icpkg"
    code, _, err = run(capsys, "export", "--db", str(pdf_library), "-o", str(package))
    assert code == 1 and err.startswith("skillstudio: privacy check refused") and not package.exists()
    redacted = tmp_path / "redacted"
    code, text, _ = run(
        capsys, "export", "--db", str(pdf_library), "-o", str(redacted), "--format", "skill-md", "--redact"
    )
    assert code == 0 and "1 redacted" in text
    assert "mypassword" not in (redacted / "pdf" / "SKILL.md").read_text()


@pytest.mark.parametrize("size", ["-1", "-100", "many", "1e3"])
def test_prune_refuses_a_size_below_zero_or_not_a_number_and_trashes_nothing(capsys, library: Path, size: str) -> None:
    """`prune --max-size -1` pruned every skill: "down to -1" was taken as a size."""
    with pytest.raises(SystemExit) as usage:
        cli(["prune", "--db", str(library), "--max-size", size])
    assert usage.value.code == 2 and "--max-size" in capsys.readouterr().err
    with Database(library) as database:
        assert SkillRepository(database).count() == 4 and SkillRepository(database).trash.entries() == []


def test_pruning_below_zero_is_refused_by_the_core_too(library: Path) -> None:
    from skillstudio.packages.prune import plan_prune

    with Database(library) as database, pytest.raises(ValueError, match="down to -1 skills"):
        plan_prune(SkillRepository(database), max_size=-1)


def test_a_skill_md_export_counts_only_the_skills_it_wrote(capsys, library: Path, tmp_path: Path) -> None:
    out = tmp_path / "tree"
    code, text, err = run(capsys, "export", "--db", str(library), "-o", str(out), "--format", "skill-md")
    assert code == 0 and "exported 1 skills" in text  # the instructions skill; three others have no form
    assert err.count("has no SKILL.md form; skipped") == 3 and [p.name for p in out.iterdir()] == [
        "wave-balancing-checklist"
    ]
    code, text, err = run(
        capsys, "export", "--db", str(library), "-o", str(tmp_path / "none"), "--format", "skill-md", "--domain", "ai"
    )
    assert code == 1 and "none of these skills has a SKILL.md form" in err and not (tmp_path / "none").exists()


@pytest.mark.parametrize("extra", [[], ["--format", "json"], ["--redact"]])
def test_an_export_never_replaces_a_library(capsys, library: Path, tmp_path: Path, extra: list[str]) -> None:
    """`export -o lib.db` once replaced the open library with a package (its suffix said icpkg)."""
    other = empty(tmp_path, "other.db")
    for target in (library, other):
        before = target.read_bytes()
        code, _, err = run(capsys, "export", "--db", str(library), "-o", str(target), *extra)
        assert code == 1 and "is a SQLite database" in err and target.read_bytes() == before
    with Database(library) as database:
        assert SkillRepository(database).count() == 4


def test_an_export_never_replaces_a_librarys_write_ahead_log(capsys, library: Path, tmp_path: Path) -> None:
    """A -wal file holds a library's newest transactions until a checkpoint copies them in."""
    with Database(library) as database:
        wal = Path(f"{library}-wal")
        SkillRepository(database).create(ai_skill(name="Only in the log"))  # a reader keeps the log
        with database.read():
            assert wal.stat().st_size > 0
            before = wal.read_bytes()
            code, _, err = run(capsys, "export", "--db", str(library), "-o", str(wal), "--format", "icpkg")
            assert code == 1 and "write-ahead log" in err and wal.read_bytes()[:32] == before[:32]
        assert SkillRepository(database).count() == 5


def test_an_export_replaces_an_earlier_export_but_not_a_file_with_a_folder(
    capsys, library: Path, tmp_path: Path
) -> None:
    package = tmp_path / "out.icpkg"
    for _ in range(2):
        code, text, _ = run(capsys, "export", "--db", str(library), "-o", str(package))
        assert code == 0 and "exported 4 skills" in text
    notes = tmp_path / "notes"
    notes.write_text("mine")
    code, _, err = run(capsys, "export", "--db", str(library), "-o", str(notes), "--format", "skill-md")
    assert code == 1 and "is a file; a SKILL.md export writes a folder" in err and notes.read_text() == "mine"
    code, _, err = run(capsys, "export", "--db", str(library), "-o", str(tmp_path), "--format", "icpkg")
    assert code == 1 and "is a folder; this export writes a file" in err
