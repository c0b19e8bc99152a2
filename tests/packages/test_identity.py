"""Package identity and trust (issue 2): default names never collide, an unusable --name is
refused, manifests are signed per publisher, and the library refuses a package that claims an
identity another key brought first (trust on first use, ``--trust-key``)."""

from __future__ import annotations

import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from skillstudio.cli.main import main as cli
from skillstudio.packages.errors import PackageError
from skillstudio.packages.icpkg import PackageMeta, export_package, read_package
from skillstudio.packages.importer import apply_plan, incoming_from_package, plan_import
from skillstudio.store import Database, SkillRepository
from tests import factories
from tests.packages.helpers import entries_of, library_state, rezip, with_manifest


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def make_library(path: Path, skills: list) -> Path:
    with Database(path, create=True) as database:
        SkillRepository(database).create_many(skills)
    return path


def ids_in(path: Path | str) -> set[str]:
    with Database(path) as database:
        return set(SkillRepository(database).query().ids)


def descriptions(path: Path | str) -> dict[str, str]:
    with Database(path) as database:
        repository = SkillRepository(database)
        return {i: repository.get(i).description for i in repository.query().ids}


def use_config_home(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """Another user: another config folder, so another publisher key."""
    path.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(path))


def fingerprint_of(data: bytes) -> str:
    package = read_package(data)
    assert package.signer is not None
    return package.signer.fingerprint


# --- default names ------------------------------------------------------------------------------


def test_short_file_names_get_distinct_default_names_and_replace_keeps_the_other(capsys, tmp_path: Path) -> None:
    first = make_library(tmp_path / "one.db", [factories.ai_skill(), factories.content_skill()])
    second = make_library(tmp_path / "two.db", [factories.instructions_skill()])
    a, b = tmp_path / "a.icpkg", tmp_path / "b.icpkg"
    assert run(capsys, "export", "--db", str(first), "-o", str(a))[0] == 0
    assert run(capsys, "export", "--db", str(second), "-o", str(b))[0] == 0
    names = [yaml.safe_load(entries_of(p.read_bytes())["manifest.yaml"])["package"]["name"] for p in (a, b)]
    assert names[0] != names[1] and names[0] != "skill-library"
    target = make_library(tmp_path / "target.db", [])
    assert run(capsys, "import", "--db", str(target), str(a))[0] == 0
    assert run(capsys, "import", "--db", str(target), str(b), "--replace")[0] == 0
    assert ids_in(target) == ids_in(first) | ids_in(second)  # b's --replace trashed none of a's


def test_default_name_is_stable_for_the_same_file_name(capsys, tmp_path: Path) -> None:
    library = make_library(tmp_path / "one.db", [factories.ai_skill()])
    out = tmp_path / "x.icpkg"
    run(capsys, "export", "--db", str(library), "-o", str(out))
    first = out.read_bytes()
    run(capsys, "export", "--db", str(library), "-o", str(out))
    assert out.read_bytes() == first  # deterministic: same key, same name, same bytes


@pytest.mark.parametrize("name", ["", "ab-", "x", "Not A Name"])
def test_unusable_explicit_name_is_refused(capsys, tmp_path: Path, name: str) -> None:
    library = make_library(tmp_path / "one.db", [factories.ai_skill()])
    out = tmp_path / "a.icpkg"
    code, _, err = run(capsys, "export", "--db", str(library), "-o", str(out), f"--name={name}")
    assert code == 1 and "--name" in err and not out.exists()


# --- signing ------------------------------------------------------------------------------------


def test_export_signs_with_a_per_publisher_key_kept_private(capsys, tmp_path: Path) -> None:
    library = make_library(tmp_path / "one.db", [factories.ai_skill()])
    out = tmp_path / "naval.icpkg"
    assert run(capsys, "export", "--db", str(library), "-o", str(out), "--publisher", "kessler")[0] == 0
    key = Path(os.environ["XDG_CONFIG_HOME"]) / "SkillStudio" / "keys" / "kessler.ed25519"
    assert key.is_file() and stat.S_IMODE(key.stat().st_mode) == 0o600
    manifest = yaml.safe_load(entries_of(out.read_bytes())["manifest.yaml"])
    assert manifest["signature"]["algorithm"] == "ed25519"
    assert manifest["signature"]["fingerprint"] == fingerprint_of(out.read_bytes())
    # another export reuses the key
    other = tmp_path / "other.icpkg"
    run(capsys, "export", "--db", str(library), "-o", str(other), "--publisher", "kessler")
    assert fingerprint_of(other.read_bytes()) == fingerprint_of(out.read_bytes())


def test_a_signature_that_does_not_verify_is_refused(capsys, tmp_path: Path) -> None:
    library = make_library(tmp_path / "one.db", [factories.ai_skill(), factories.content_skill()])
    out = tmp_path / "naval.icpkg"
    run(capsys, "export", "--db", str(library), "-o", str(out), "--publisher", "kessler")
    entries = entries_of(out.read_bytes())
    skill = next(name for name in entries if name.startswith("skills/"))
    entries[skill] = entries[skill].replace(b"Mass rocket", b"Sell everything").replace(b"An ambush", b"No ambush")
    # swapped file, manifest rehashed (signature kept): the signature covers the hashes
    forged = rezip(with_manifest(entries, lambda m: None))
    with pytest.raises(PackageError, match="signature"):
        read_package(forged)
    # the manifest changed, signature kept
    entries = entries_of(out.read_bytes())
    with pytest.raises(PackageError, match="signature"):
        read_package(rezip(with_manifest(entries, lambda m: m["package"].update(version="9.0.0"))))


# --- trust on first use -------------------------------------------------------------------------


def fill(target: str, skills: list) -> str:
    with Database(target) as database:
        SkillRepository(database).create_many(skills)
    return target


@pytest.fixture
def published(capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, more_libraries):
    """kessler/ra1-naval@1.0.0 signed by kessler's key, imported into a target library; a
    forger's library holding the same skills with other descriptions; and kessler's library
    (each on the test's backend)."""
    skills = [factories.ai_skill(), factories.content_skill()]
    use_config_home(monkeypatch, tmp_path / "kessler-config")
    source = fill(more_libraries("kessler"), skills)
    legit = tmp_path / "naval.icpkg"
    assert (
        run(capsys, "export", "--db", str(source), "-o", str(legit), "--publisher", "kessler", "--name", "ra1-naval")[0]
        == 0
    )
    target = more_libraries("target")
    assert run(capsys, "import", "--db", str(target), str(legit))[0] == 0
    forger = fill(more_libraries("forger"), [replace(s, description="Forged advice") for s in skills])
    return legit, target, forger, source


def test_forged_package_signed_by_another_key_is_refused(capsys, tmp_path: Path, monkeypatch, published) -> None:
    legit, target, forger, _source = published
    use_config_home(monkeypatch, tmp_path / "forger-config")
    forged = tmp_path / "forged.icpkg"
    assert (
        run(
            capsys,
            "export",
            "--db",
            str(forger),
            "-o",
            str(forged),
            "--publisher",
            "kessler",
            "--name",
            "ra1-naval",
            "--version",
            "2.0.0",
        )[0]
        == 0
    )
    before = descriptions(target)
    for extra in ((), ("--replace",)):
        code, _, err = run(capsys, "import", "--db", str(target), str(forged), *extra)
        assert code == 1, err
        assert fingerprint_of(legit.read_bytes()) in err and fingerprint_of(forged.read_bytes()) in err
        assert descriptions(target) == before
    # the user trusts the new key explicitly: then it is imported, and remembered
    new = fingerprint_of(forged.read_bytes())
    code, text, err = run(capsys, "import", "--db", str(target), str(forged), "--trust-key", new)
    assert code == 0 and "2 updated" in text, err
    assert set(descriptions(target).values()) == {"Forged advice"}
    # now the original key is the stranger
    use_config_home(monkeypatch, tmp_path / "kessler-config")
    code, _, err = run(capsys, "import", "--db", str(target), str(legit))
    assert code == 1 and new in err


def test_unsigned_package_claiming_a_signed_identity_is_refused(capsys, tmp_path: Path, published) -> None:
    legit, target, forger, _source = published
    with Database(forger) as database:
        skills = SkillRepository(database).get_many(SkillRepository(database).query().ids)
    data = export_package(skills, PackageMeta("ra1-naval", "kessler", "2.0.0"))  # no key: unsigned
    forged = tmp_path / "unsigned.icpkg"
    forged.write_bytes(data)
    before = descriptions(target)
    code, _, err = run(capsys, "import", "--db", str(target), str(forged), "--replace")
    assert code == 1 and "unsigned" in err and fingerprint_of(legit.read_bytes()) in err
    assert descriptions(target) == before


def test_same_key_updates_as_before(capsys, tmp_path: Path, published) -> None:
    _legit, target, _, source = published
    with Database(source) as database:
        repository = SkillRepository(database)
        skill = repository.get(repository.query().ids[0])
        repository.update(replace(skill, description="Better advice"))
    newer = tmp_path / "naval2.icpkg"
    run(
        capsys,
        "export",
        "--db",
        str(source),
        "-o",
        str(newer),
        "--publisher",
        "kessler",
        "--name",
        "ra1-naval",
        "--version",
        "1.1.0",
    )
    code, text, err = run(capsys, "import", "--db", str(target), str(newer))
    assert code == 0 and "1 updated" in text, err
    assert "Better advice" in descriptions(target).values()


def test_unsigned_package_of_a_never_signed_identity_imports_with_a_warning(repository: SkillRepository) -> None:
    data = export_package([factories.ai_skill()], PackageMeta("old-style", "kessler", "1.0.0"))
    package = read_package(data)
    assert package.signer is None
    incoming, origin = incoming_from_package(package)
    plan = plan_import(repository, incoming, origin=origin, source="test")
    assert any("unsigned" in warning for warning in plan.warnings)
    apply_plan(repository, plan)
    assert repository.count() == 1


def test_refused_trust_changes_nothing_in_the_library(repository: SkillRepository, tmp_path: Path, monkeypatch) -> None:
    from skillstudio.packages.signing import load_or_create_key

    skills = [factories.ai_skill()]
    meta = PackageMeta("ra1-naval", "kessler", "1.0.0")
    use_config_home(monkeypatch, tmp_path / "a")
    first = read_package(export_package(skills, meta, signing_key=load_or_create_key("kessler")))
    incoming, origin = incoming_from_package(first)
    apply_plan(repository, plan_import(repository, incoming, origin=origin, source="a", signer=first.signer))
    use_config_home(monkeypatch, tmp_path / "b")
    other = read_package(
        export_package(
            [replace(skills[0], description="x")],
            replace(meta, version="2.0.0"),
            signing_key=load_or_create_key("kessler"),
        )
    )
    before = library_state(repository)
    incoming, origin = incoming_from_package(other)
    with pytest.raises(PackageError, match=first.signer.fingerprint):
        plan_import(repository, incoming, origin=origin, source="b", mode="replace", signer=other.signer)
    with pytest.raises(PackageError, match=other.signer.fingerprint):
        plan_import(repository, incoming, origin=origin, source="b", trust_key="0" * 16, signer=other.signer)
    assert library_state(repository) == before


def test_nameless_resource_yaml_libraries_never_share_an_identity() -> None:
    """Two resource.yaml libraries without a name used to be one identity (local/skill-library)."""
    from skillstudio.model.validation import Checker
    from skillstudio.packages.icpkg import _read_resource

    def identity(description: str) -> str:
        meta, _files, _library = _read_resource(Checker(), {"type": "skill_library", "description": description})
        assert meta is not None
        return meta.package_id

    assert identity("one library") != identity("another library")
    assert identity("one library") == identity("one library")  # a re-import is the same package
