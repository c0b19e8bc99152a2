"""Workshop packages: export, import, round trip, determinism, conflicts, privacy."""

from __future__ import annotations

from dataclasses import replace

import pytest
import yaml

from skillstudio.model import Quality, SourceKind, skill_to_document
from skillstudio.packages.errors import PackageError
from skillstudio.packages.export import PrivacyError, export_selection, load_selection
from skillstudio.packages.icpkg import PackageMeta, export_package, read_package, workshop_vdf
from skillstudio.packages.importer import apply_plan, incoming_from_package, plan_import
from skillstudio.packages.privacy import REDACTED, redact_skill, scan_skill
from skillstudio.store import SkillRepository
from tests import factories
from tests.packages.helpers import META, entries_of, library_state, rezip, sample_skills, valid_package, with_manifest


def import_bytes(repository: SkillRepository, data: bytes, mode: str = "merge"):
    package = read_package(data)
    incoming, origin = incoming_from_package(package)
    plan = plan_import(repository, incoming, origin=origin, source="test", mode=mode)
    return apply_plan(repository, plan)


def test_export_is_deterministic_and_independent_of_order() -> None:
    skills = sample_skills()
    first = export_package(skills, META)
    assert first == export_package(list(reversed(skills)), META)
    names = list(entries_of(first))
    assert names[0] == "manifest.yaml" and names[1:] == sorted(names[1:])


def test_manifest_carries_d049_and_d057_fields() -> None:
    skills = sample_skills()
    manifest = yaml.safe_load(entries_of(export_package(skills, META))["manifest.yaml"])
    package = manifest["package"]
    assert manifest["format_version"] == 1
    assert {k: package[k] for k in ("name", "publisher", "version", "license", "category")} == {
        "name": "ra1-naval",
        "publisher": "kessler",
        "version": "1.2.0",
        "license": "CC-BY-SA-4.0",
        "category": "skill_library",
    }
    assert len(package["files"]) == len(skills) and all(len(f["sha256"]) == 64 for f in package["files"].values())
    assert manifest["skill_library"]["skill_count"] == len(skills)
    assert manifest["skill_library"]["domain"] == "mixed"
    assert package["ai_usage"] == "metadata_only"


def test_round_trip_keeps_every_skill_exactly_but_provenance(repository: SkillRepository) -> None:
    skills = sample_skills()
    import_bytes(repository, export_package(skills, META))
    for original in skills:
        stored = repository.get(original.id)
        if original.source_kind is SourceKind.WORKSHOP:
            assert stored.provenance == original.provenance  # keeps its original author
        else:
            assert stored.provenance.source.source_id == "kessler/ra1-naval@1.2.0"
            assert stored.provenance.source.author == "kessler"
        # quality figures are the package's claim (kept in the extras), not this library's evidence
        expected = skill_to_document(replace(original, provenance=stored.provenance, quality=Quality()), local=False)
        assert skill_to_document(stored, local=False) == expected
        extras = repository.extras.get(original.id)
        assert extras.origin == "workshop:kessler/ra1-naval@1.2.0"
        if original.quality != Quality():
            claim = extras.frontmatter["claimed_quality"]
            assert (claim["confidence"], claim["verification_count"]) == (
                original.quality.confidence.value,
                original.quality.verification_count,
            )


def test_importing_the_same_package_twice_adds_nothing(repository: SkillRepository) -> None:
    data = valid_package()
    assert import_bytes(repository, data).count("add") == 4
    before = library_state(repository)
    plan = import_bytes(repository, data)
    assert plan.count("skip") == 4 and plan.changes == 0
    assert library_state(repository) == before


def test_merge_updates_same_package_and_reports_conflicts(repository: SkillRepository) -> None:
    mine = factories.ai_skill(name="My own skill")
    repository.create(mine)
    skills = sample_skills()
    import_bytes(repository, export_package(skills, META))
    changed = [replace(skills[0], description="Better wording."), *skills[1:]]
    changed.append(replace(mine, description="A stranger's take on my skill."))
    newer = replace(META, version="1.3.0")
    plan = import_bytes(repository, export_package(changed, newer))
    assert plan.count("update") == 1 and plan.count("conflict") == 1 and plan.count("skip") == 3
    assert repository.get(skills[0].id).description == "Better wording."
    assert repository.get(mine.id).description == mine.description  # kept: not from this package
    assert repository.get(skills[0].id).provenance.source.source_id == "kessler/ra1-naval@1.3.0"


def test_replace_overwrites_conflicts_and_trashes_what_the_package_dropped(repository: SkillRepository) -> None:
    mine = factories.ai_skill(name="My own skill")
    repository.create(mine)
    skills = sample_skills()
    import_bytes(repository, export_package(skills, META))
    newer = [replace(mine, description="Theirs."), *skills[1:]]
    plan = import_bytes(repository, export_package(newer, replace(META, version="2.0.0")), mode="replace")
    assert plan.count("update") == 1 and plan.count("trash") == 1
    assert repository.get(mine.id).description == "Theirs."
    assert skills[0].id in {entry.skill_id for entry in repository.trash.entries()}
    actions = {entry.action for entry in repository.history.audit()}
    assert "skill.import" in actions


def test_a_failing_write_leaves_the_library_as_it_was(
    repository: SkillRepository, monkeypatch: pytest.MonkeyPatch
) -> None:
    repository.create(factories.ai_skill())
    before = library_state(repository)
    package = read_package(valid_package())
    incoming, origin = incoming_from_package(package)
    plan = plan_import(repository, incoming, origin=origin, source="t")

    def boom(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr("skillstudio.store.extras._extras_row", boom)
    with pytest.raises(RuntimeError):
        apply_plan(repository, plan)
    assert library_state(repository) == before


def test_resource_yaml_form_is_accepted() -> None:
    entries = entries_of(valid_package())
    resource = {
        "type": "skill_library",
        "display_name": "Competitive RA1 AI Strategies",
        "description": "150 patterns",
        "game_module": "ra1",
        "domain": "ai_strategy",
        "skill_count": 4,
        "average_confidence": "proven",
        "license": "CC-BY-SA-4.0",
        "ai_usage": "Allow",
    }
    del entries["manifest.yaml"]
    entries["resource.yaml"] = yaml.safe_dump(resource).encode()
    package = read_package(rezip(entries))
    assert package.manifest_form == "resource.yaml"
    # No name: the display name as a slug plus the document's hash, so nameless libraries never share one.
    assert package.meta.ai_usage == "allow" and package.meta.name.startswith("competitive-ra1-ai-strategies-")
    assert len(package.meta.name) == len("competitive-ra1-ai-strategies-") + 8
    assert package.meta.package_id == f"local/{package.meta.name}@0.0.0"
    assert len(package.skills) == 4


def test_a_manifest_without_format_version_reads_as_version_1() -> None:
    entries = with_manifest(entries_of(valid_package()), lambda m: m.pop("format_version"))
    assert len(read_package(rezip(entries)).skills) == 4


def test_workshop_vdf_bounds_title_and_description() -> None:
    meta = PackageMeta("ra1-naval", "kessler", display_name="x" * 300, description='say "hi"' * 2000)
    text = workshop_vdf(meta, "/tmp/out")
    title = next(line for line in text.splitlines() if '"title"' in line)
    assert len(title.split("\t")[2]) == 128 + 2
    assert '\\"hi\\"' in text


# --- privacy ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Mail me at kessler@example.com", "email"),
        ("use key sk-proj-abcdefghijklmnop1234", "api_key"),
        ("AKIAABCDEFGHIJKLMNOP", "api_key"),
        ("ghp_0123456789abcdefghijABCDEFGHIJ", "api_key"),
        ("config api_key=hunter2hunter", "api_key"),
        ("seen in replays/ranked-07.orarep", "replay"),
        ("from game.icrep", "replay"),
        ("match_id: 8a1d7a52-9b7e-4c3e-9f0e-1d2c3b4a5f60", "match_id"),
        ("see match-20260401-77", "match_id"),
        ('Player 2 "Tanya1990" rushed', "player_name"),
        ("player: Kessler", "player_name"),
        ("opponent_name=Boris", "player_name"),
        ("logs in /home/alice/.local/share", "home_path"),
        (r"C:\Users\bob\Documents", "home_path"),
    ],
)
def test_privacy_check_finds(text: str, kind: str) -> None:
    skill = factories.ai_skill(description=text)
    findings = scan_skill(skill, user_names=())
    assert [f.kind for f in findings if f.path == "description"][:1] == [kind]
    assert REDACTED in redact_skill(skill, user_names=()).description


def test_privacy_check_scans_bodies_and_the_local_user_name() -> None:
    skill = factories.instructions_skill(
        body=replace(factories.instructions_skill().body, instructions="ask zoltan-k first")
    )
    findings = scan_skill(skill, user_names=("zoltan-k",))
    assert [(f.path, f.kind) for f in findings] == [("body.Instructions.instructions", "user_name")]


def test_clean_skills_have_no_findings() -> None:
    assert all(scan_skill(skill, user_names=()) == [] for skill in sample_skills())


def test_export_refuses_private_data_unless_redacting(repository: SkillRepository, tmp_path) -> None:
    leaky = factories.ai_skill(description="Beat player: Kessler, mail kessler@example.com")
    repository.create(leaky)
    preview = load_selection(repository, [leaky.id])
    assert {f.kind for f in preview.findings} >= {"player_name", "email"}
    with pytest.raises(PrivacyError, match="description"):
        export_selection(preview, META, tmp_path / "out.icpkg")
    assert not (tmp_path / "out.icpkg").exists()
    written = export_selection(preview, META, tmp_path / "out.icpkg", redact=True, vdf=True)
    assert "kessler@example.com" not in written[0].description
    package = read_package(tmp_path / "out.icpkg")
    assert "example.com" not in package.skills[0].skill.description
    assert (tmp_path / "out.vdf").read_text().startswith('"workshopitem"')


def test_skill_md_files_travel_in_packages(repository: SkillRepository, tmp_path) -> None:
    from skillstudio.packages.skill_md import read_skill_tree
    from skillstudio.store import Actor, Database

    folder = tmp_path / "tree" / "pdf-tools"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: pdf-tools\ndescription: PDFs.\nlicense: MIT\n---\nUse the script.")
    (folder / "scripts" / "run.py").write_text("print(1)\n")
    incoming, origin, _ = read_skill_tree(tmp_path / "tree")
    apply_plan(repository, plan_import(repository, incoming, origin=origin, source="tree"))
    preview = load_selection(repository, [incoming[0].skill.id])
    export_selection(preview, META, tmp_path / "p.icpkg")
    assert "extras/" in " ".join(entries_of((tmp_path / "p.icpkg").read_bytes()))
    with Database(tmp_path / "other.db", create=True) as database:
        other = SkillRepository(database, Actor("other"))
        import_bytes(other, (tmp_path / "p.icpkg").read_bytes())
        extras = other.extras.get(incoming[0].skill.id)
        assert extras.files == {"scripts/run.py": {"text": "print(1)\n"}} and extras.frontmatter == {"license": "MIT"}
        assert extras.origin == "workshop:kessler/ra1-naval@1.2.0"


def test_extras_with_unsafe_paths_are_refused(repository: SkillRepository) -> None:
    import json as _json

    entries = entries_of(valid_package())
    stem = next(n for n in entries if n.startswith("skills/"))[len("skills/") : -len(".json")]
    entries[f"extras/{stem}.json"] = _json.dumps(
        {"frontmatter": {}, "files": {"../../.bashrc": {"text": "x"}}}
    ).encode()
    before = library_state(repository)
    with pytest.raises(PackageError, match="not a safe relative path"):
        read_package(rezip(with_manifest(entries, lambda m: None)))
    assert library_state(repository) == before


def test_an_export_no_import_would_read_is_refused_before_anything_is_written(
    repository: SkillRepository, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillstudio.packages import icpkg
    from skillstudio.store import SkillExtras

    skills = sample_skills()[:3]
    repository.create_many(skills)
    real_limit = icpkg.MAX_ENTRIES
    monkeypatch.setattr(icpkg, "MAX_ENTRIES", 3)  # the manifest and two skills
    target = tmp_path / "library.icpkg"
    target.write_bytes(b"the package exported yesterday")
    preview = load_selection(repository, [s.id for s in skills])
    with pytest.raises(PackageError, match="3 skills make a package no import would read") as refused:
        export_selection(preview, META, target, sign=False)
    assert "would have 4 entries, at most 3 allowed" in str(refused.value)
    assert target.read_bytes() == b"the package exported yesterday"
    assert len(read_package(export_package(skills[:2], META)).skills) == 2  # at the limit: written and read

    # A SKILL.md script of one repeated character compresses past the ratio a reader takes for a
    # decompression bomb: written, it could never be imported.
    monkeypatch.setattr(icpkg, "MAX_ENTRIES", real_limit)
    padding = {"scripts/pad.txt": {"text": "0" * 2_000_000}}
    with pytest.raises(PackageError, match="decompression bomb"):
        export_package(skills[:1], META, extras={skills[0].id: SkillExtras(files=padding)})
