"""Hostile packages are refused with a clear reason, and the library does not change.

One test per threat of ic-formats.md section 7 and issue 7; each imports through the same path
the CLI uses and compares the whole library before and after.
"""

from __future__ import annotations

import hashlib
import json
import stat
import struct
import tracemalloc
import zipfile

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from skillstudio.packages import icpkg
from skillstudio.packages.errors import PackageError
from skillstudio.packages.icpkg import read_package
from skillstudio.packages.importer import apply_plan, incoming_from_package, plan_import
from skillstudio.store import SkillRepository
from tests import factories
from tests.packages.helpers import entries_of, library_state, rezip, valid_package, with_manifest


@pytest.fixture
def populated(repository: SkillRepository) -> SkillRepository:
    repository.create_many([factories.ai_skill(), factories.content_skill()])
    return repository


def refused(repository: SkillRepository, data: bytes, *expected: str) -> PackageError:
    """Import ``data``; it must be refused naming each ``expected`` text, changing nothing."""
    before = library_state(repository)
    with pytest.raises(PackageError) as caught:
        package = read_package(data)
        incoming, origin = incoming_from_package(package)
        apply_plan(repository, plan_import(repository, incoming, origin=origin, source="hostile"))
    message = str(caught.value)
    for text in expected:
        assert text in message, message
    assert library_state(repository) == before
    return caught.value


def base() -> dict[str, bytes]:
    return entries_of(valid_package())


def a_skill_entry(entries: dict[str, bytes]) -> str:
    return next(name for name in entries if name.startswith("skills/"))


# --- paths --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("../evil.json", "escapes the archive"),
        ("skills/../../evil.json", "escapes the archive"),
        ("/etc/passwd", "absolute path"),
        ("C:/Windows/evil.json", "absolute path"),
        ("skills\\..\\evil.json", "backslash"),
        ("skills/./a.json", "escapes the archive"),
        ("skills/ä.json", "characters outside"),
        ("skills/a.json:stream", "characters outside"),
    ],
)
def test_paths_escaping_the_archive(populated: SkillRepository, name: str, reason: str) -> None:
    entries = base()
    entries[name] = b"{}"
    refused(populated, rezip(entries), reason)


def test_symlinks(populated: SkillRepository) -> None:
    entries = base()
    target = a_skill_entry(entries)

    def as_link(info: zipfile.ZipInfo) -> None:
        if info.filename == target:
            info.external_attr = (stat.S_IFLNK | 0o777) << 16

    refused(populated, rezip(entries, info=as_link), target, "symbolic link")


def test_nul_in_an_entry_name(populated: SkillRepository) -> None:
    entries = base()
    entries["skills/evilX..X..Xetc.json"] = b"{}"
    data = rezip(entries).replace(b"skills/evilX..X..Xetc.json", b"skills/evil\x00..\x00..\x00etc.json")
    refused(populated, data)  # zipfile cuts the name at NUL: what remains is unlisted


def test_duplicate_entries(populated: SkillRepository) -> None:
    entries = base()
    name = a_skill_entry(entries)
    items = [*entries.items(), (name, entries[name])]
    refused(populated, rezip(items), name, "duplicate entry")


def test_entries_differing_only_in_case(populated: SkillRepository) -> None:
    entries = base()
    entries["README.md"] = b"one"
    entries["readme.MD"] = b"two"
    refused(populated, rezip(with_manifest(entries, lambda m: None)), "readme.MD", "duplicate entry")


def test_encrypted_entries(populated: SkillRepository) -> None:
    entries = base()
    name = a_skill_entry(entries)
    data = bytearray(rezip(entries))
    # Set the "encrypted" flag (bit 0 of the general purpose flags) in the central directory.
    at = data.index(b"PK\x01\x02" + bytes(data[data.index(b"PK\x01\x02") + 4 : data.index(b"PK\x01\x02") + 6]))
    while True:
        name_length = int.from_bytes(data[at + 28 : at + 30], "little")
        if data[at + 46 : at + 46 + name_length] == name.encode():
            data[at + 8] |= 0x1
            break
        extra, comment = (
            int.from_bytes(data[at + 30 : at + 32], "little"),
            int.from_bytes(data[at + 32 : at + 34], "little"),
        )
        at += 46 + name_length + extra + comment
    refused(populated, bytes(data), name, "encrypted")


# --- sizes and bombs ----------------------------------------------------------------------------


def test_decompression_bomb_ratio(populated: SkillRepository) -> None:
    entries = base()
    entries["README.md"] = b"\0" * (4 * 1024 * 1024)
    refused(populated, rezip(with_manifest(entries, lambda m: None)), "README.md", "256:1")


def test_declared_size_above_the_limit(populated: SkillRepository, monkeypatch: pytest.MonkeyPatch) -> None:
    package = rezip(base())  # made under the real limits: an export refuses what a reader would
    monkeypatch.setattr(icpkg, "MAX_ENTRY_BYTES", 100)
    refused(populated, package, "more than the 100 allowed")


def test_declared_total_above_the_limit(populated: SkillRepository, monkeypatch: pytest.MonkeyPatch) -> None:
    package = rezip(base())
    monkeypatch.setattr(icpkg, "MAX_TOTAL_BYTES", 1000)
    refused(populated, package, "uncompressed, more than the 1000 allowed")


def test_archive_above_the_limit(populated: SkillRepository, monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    path = tmp_path / "big.icpkg"
    path.write_bytes(valid_package())
    monkeypatch.setattr(icpkg, "MAX_ARCHIVE_BYTES", 100)
    with pytest.raises(PackageError, match=r"big\.icpkg: is .* bytes"):
        read_package(path)


def directory_flood(records: int) -> bytes:
    """One stored one-byte entry, then ``records`` central-directory records naming it, and an
    end record that claims a single entry (zipfile reads records until the directory's size)."""
    local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 33, 0, 0, 1, 1, 0) + b"a"
    directory = b"".join(
        struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 33, 0, 1, 1, 8, 0, 0, 0, 0, 0, 0) + b"%08x" % index
        for index in range(records)
    )
    return local + directory + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 1, 1, len(directory), len(local), 0)


def test_a_flood_of_directory_records_is_refused_before_zipfile_reads_them(
    populated: SkillRepository, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = directory_flood(100_000)  # 6 MB; the real limit's worth in 512 MiB would be 9M records
    monkeypatch.setattr(icpkg, "MAX_ENTRIES", 1_000)
    tracemalloc.start()
    try:
        with pytest.raises(PackageError, match=r"more entries than the 1000 allowed \(100000 directory records\)"):
            read_package(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000, f"{peak} bytes: the records were parsed before they were counted"
    refused(populated, data, "more entries than the 1000 allowed")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"PK\x01\x02", b"PK", b"\x01\x02", b"P", b"x"]), max_size=40), st.integers(1, 9))
def test_directory_records_are_counted_whole_across_the_slices_they_are_counted_in(
    parts: list[bytes], slice_bytes: int
) -> None:
    data = b"".join(parts)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(icpkg, "_COUNTED_BYTES", slice_bytes)
        assert icpkg._directory_records(data) == data.count(b"PK\x01\x02")


def test_an_entry_that_is_corrupt(populated: SkillRepository) -> None:
    data = bytearray(rezip(base()))
    index = data.index(b"skills/") + 200  # inside the first skill's compressed data
    data[index] ^= 0xFF
    refused(populated, bytes(data))


def test_not_a_zip(populated: SkillRepository) -> None:
    refused(populated, b"PK\x03\x04 definitely not a zip", "not a valid ZIP archive")


# --- YAML ---------------------------------------------------------------------------------------


def test_a_manifest_of_more_values_than_its_entries_need_is_refused_before_it_is_built(
    populated: SkillRepository, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(icpkg, "MAX_ENTRIES", 100)  # allows 6 * 100 + 10,000 values
    entries = base()
    numbers = ", ".join(str(number) for number in range(20_000))  # 20,001 values (not a bomb's ratio)
    entries["manifest.yaml"] = f"[{numbers}]".encode()
    refused(populated, rezip(entries), "manifest.yaml", "more than 10600 values")


def test_yaml_alias_bomb(populated: SkillRepository) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
    entries = base()
    entries["manifest.yaml"] = entries["manifest.yaml"] + b"\n" + bomb.encode()
    refused(populated, rezip(entries), "manifest.yaml", "anchors/aliases are not allowed")


@pytest.mark.parametrize(
    "tag", ["!!python/object/apply:os.system ['echo pwned']", "!!binary aGVsbG8=", "!custom thing", "!!set {a, b}"]
)
def test_non_safe_yaml_tags(populated: SkillRepository, tag: str) -> None:
    entries = base()
    entries["manifest.yaml"] = entries["manifest.yaml"].replace(
        b"description: Naval patterns", f"description: {tag}".encode()
    )
    refused(populated, rezip(entries), "manifest.yaml", "is not allowed")


def test_invalid_yaml(populated: SkillRepository) -> None:
    entries = base()
    entries["manifest.yaml"] = b"package: [unclosed"
    refused(populated, rezip(entries), "manifest.yaml", "not valid or not allowed YAML")


# --- content ------------------------------------------------------------------------------------


def test_checksum_mismatch(populated: SkillRepository) -> None:
    entries = base()
    name = a_skill_entry(entries)
    tampered = with_manifest(entries, lambda m: None)
    skill_name = json.loads(tampered[name])["name"]
    quoted = json.dumps(skill_name, ensure_ascii=False).encode()
    assert quoted in tampered[name]
    # same size, different content
    tampered[name] = tampered[name].replace(quoted, json.dumps(skill_name[::-1], ensure_ascii=False).encode(), 1)
    assert len(tampered[name]) == len(entries[name])
    refused(populated, rezip(tampered), name, "checksum mismatch")


def test_size_mismatch(populated: SkillRepository) -> None:
    entries = base()
    name = a_skill_entry(entries)
    entries[name] = entries[name] + b" "
    refused(populated, rezip(entries), name, "size mismatch")


def test_unlisted_and_missing_entries(populated: SkillRepository) -> None:
    entries = base()
    name = a_skill_entry(entries)
    entries["README.md"] = b"hi"
    del entries[name]
    refused(populated, rezip(entries), "README.md", "unlisted entry", name, "listed but missing")


def test_oversize_fields(populated: SkillRepository) -> None:
    entries = base()
    name = a_skill_entry(entries)
    document = json.loads(entries[name])
    document["name"] = "x" * 5000
    entries[name] = json.dumps(document).encode()
    refused(populated, rezip(with_manifest(entries, lambda m: None)), f"{name}: name", "at most 200")


def test_oversize_manifest_fields(populated: SkillRepository) -> None:
    entries = with_manifest(base(), lambda m: m["package"].update(description="d" * 9000))
    refused(populated, rezip(entries), "manifest.yaml: package.description")


def test_invalid_utf8(populated: SkillRepository) -> None:
    entries = base()
    name = a_skill_entry(entries)
    entries[name] = entries[name].replace(b'"name": "', b'"name": "\xff\xfe', 1)
    refused(populated, rezip(with_manifest(entries, lambda m: None)), name, "not valid UTF-8")


def test_invalid_utf8_in_the_manifest(populated: SkillRepository) -> None:
    entries = base()
    entries["manifest.yaml"] = entries["manifest.yaml"].replace(b"Naval", b"Nav\xc3\x28l")
    refused(populated, rezip(entries), "manifest.yaml", "not valid UTF-8")


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda m: m["package"].update(version=12), "package.version"),
        (lambda m: m["package"].update(version="1.2"), "package.version"),
        (lambda m: m["package"].update(name="../../etc"), "package.name"),
        (lambda m: m["package"].update(tags="not-a-list"), "package.tags"),
        (lambda m: m["package"].update(license="not a licence!"), "package.license"),
        (lambda m: m["package"].update(ai_usage="ask"), "package.ai_usage"),
        (lambda m: m["package"].update(category="mod"), "package.category"),
        (lambda m: m["skill_library"].update(skill_count="many"), "skill_library.skill_count"),
        (lambda m: m.update(package=["list"]), "package"),
    ],
)
def test_wrong_types_in_the_manifest(populated: SkillRepository, change, where: str) -> None:
    refused(populated, rezip(with_manifest(base(), change)), f"manifest.yaml: {where}")


def test_wrong_types_in_a_skill(populated: SkillRepository) -> None:
    entries = base()
    name = a_skill_entry(entries)
    document = json.loads(entries[name])
    document["tags"] = "anti-air"
    document["quality"]["success_rate"] = "high"
    entries[name] = json.dumps(document).encode()
    refused(populated, rezip(with_manifest(entries, lambda m: None)), f"{name}: tags", f"{name}: quality.success_rate")


def test_duplicate_json_keys(populated: SkillRepository) -> None:
    entries = base()
    name = a_skill_entry(entries)
    assert entries[name].startswith(b"{")
    entries[name] = b'{"name": "sneaky", ' + entries[name][1:]
    refused(populated, rezip(with_manifest(entries, lambda m: None)), name, "appears twice")


def test_duplicate_skill_ids(populated: SkillRepository) -> None:
    entries = base()
    name = a_skill_entry(entries)
    entries["skills/copy.json"] = entries[name]
    refused(
        populated, rezip(with_manifest(entries, lambda m: m["skill_library"].update(skill_count=5))), "duplicate skill"
    )


@pytest.mark.parametrize("version", [2, "1", 0, None])
def test_unknown_manifest_versions(populated: SkillRepository, version) -> None:
    refused(populated, rezip(with_manifest(base(), lambda m: m.update(format_version=version))), "format_version")


def test_no_manifest(populated: SkillRepository) -> None:
    entries = base()
    del entries["manifest.yaml"]
    refused(populated, rezip(entries), "has no manifest.yaml")


def test_unexpected_file_kinds(populated: SkillRepository) -> None:
    entries = base()
    entries["run.sh"] = b"rm -rf /"
    refused(
        populated,
        rezip(with_manifest(entries, lambda m: None)),
        "run.sh",
        "not a file a skill library package may hold",
    )


def test_every_problem_is_reported_at_once(populated: SkillRepository) -> None:
    entries = base()
    names = [name for name in entries if name.startswith("skills/")]
    for name in names[:2]:
        document = json.loads(entries[name])
        document["domain"] = "nonsense"
        entries[name] = json.dumps(document).encode()
    error = refused(populated, rezip(with_manifest(entries, lambda m: None)))
    assert {issue.path.split(":")[0] for issue in error.issues} == set(names[:2])


def test_a_valid_package_still_imports(populated: SkillRepository) -> None:
    """Guard: the helpers themselves do not make every package fail."""
    entries = with_manifest(base(), lambda m: None)
    package = read_package(rezip(entries))
    assert len(package.skills) == 4
    assert hashlib.sha256(entries["manifest.yaml"]).hexdigest()
    assert yaml.safe_load(entries["manifest.yaml"])["package"]["name"] == "ra1-naval"
