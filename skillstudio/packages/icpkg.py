"""Workshop packages (``.icpkg``): the one writer and the one (hostile-input-proof) reader.

Layout (docs/packages.md)::

    manifest.yaml            D049 ``package:`` fields + D057's ``skill_library:`` fields
    README.md                optional
    preview.png              optional
    skills/<stem>.json       one canonical skill document per skill (local=False)
    extras/<stem>.json       optional: SKILL.md frontmatter and files of that skill

``<stem>`` is the skill id when it is a safe file name, else the first 32 hex digits of its
SHA-256. Every entry but the manifest is listed under ``package.files`` with its sha256 and size.

Writing is deterministic: entries in a fixed order (manifest first, then by name), fixed
timestamps (1980-01-01), fixed permissions, DEFLATE at level 9, and no time in the manifest, so
the same skills and metadata always give the same bytes.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import stat
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillstudio.gc_pause import gc_paused
from skillstudio.model import (
    Confidence,
    Domain,
    Issue,
    Skill,
    ValidationError,
    parse_skill_with_notes,
    skill_to_document,
)
from skillstudio.model.validation import Checker, join_path
from skillstudio.packages.errors import PackageError, in_file, refuse
from skillstudio.packages.safe_yaml import decode_utf8, dump_yaml, load_yaml
from skillstudio.packages.signing import Signer, SigningKey, fingerprint, sign_manifest, verify_manifest
from skillstudio.packages.zip_reader import read_entries
from skillstudio.packages.zip_writer import CENTRAL_SIGNATURE, DeflatingZipWriter
from skillstudio.store import SkillExtras

FORMAT_VERSION = 1
MANIFEST = "manifest.yaml"
RESOURCE = "resource.yaml"

# Limits (IC: no hard size cap on packages, but a bounded decompressor and a 256:1 ratio cap).
MAX_ARCHIVE_BYTES = 512 * 1024 * 1024
# A 100,000-skill library fits in one package, half of its skills with SKILL.md extras. A hostile
# central directory is counted before zipfile parses it (read_package), so this bounds its cost.
MAX_ENTRIES = 150_000
MAX_ENTRY_BYTES = 8 * 1024 * 1024
MAX_MANIFEST_BYTES = 48 * 1024 * 1024  # about 150 bytes per listed file, up to 330 with long ids
# YAML values in a manifest: each listed file takes 6 (its name, a mapping, sha256 and size keys
# and values); the rest is a bounded set of fields. PyYAML builds a node of several hundred
# bytes per value before anything can be checked, so the count is checked first.
MANIFEST_NODES_PER_ENTRY = 6
MANIFEST_OTHER_NODES = 10_000
MAX_TOTAL_BYTES = 1024 * 1024 * 1024
MAX_RATIO = 256
RATIO_FLOOR = 4096  # entries smaller than this cannot be bombs; their ratio is not checked
MAX_EXTRA_FILES_BYTES = 8 * 1024 * 1024  # per skill, SKILL.md scripts/references/assets

_ENTRY_NAME = re.compile(r"^[A-Za-z0-9._\-]+(?:/[A-Za-z0-9._\-]+)*$")
_SAFE_STEM = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-]{0,127}$")
PACKAGE_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{1,62})[a-z0-9]$")  # D030 PackageName, 3..64
PUBLISHER = re.compile(r"^[a-z0-9](?:[a-z0-9_-]{0,62}[a-z0-9])?$")
SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
SPDX = re.compile(r"^[A-Za-z0-9.+\-]+(?: (?:AND|OR|WITH) [A-Za-z0-9.+\-]+)*$")
AI_USAGE = ("allow", "metadata_only", "deny")


@dataclass(frozen=True)
class PackageMeta:
    """What the exporter asks for; ``game_module``, ``domain`` and counts are derived."""

    name: str
    publisher: str
    version: str = "1.0.0"
    license: str = "CC-BY-SA-4.0"
    description: str = ""
    display_name: str = ""
    engine_version: str = ""
    tags: tuple[str, ...] = ()
    ai_usage: str = "metadata_only"
    game_module: str = ""  # derived from the skills when empty

    @property
    def package_id(self) -> str:
        return f"{self.publisher}/{self.name}@{self.version}"


@dataclass(frozen=True)
class PackagedSkill:
    entry: str  # skills/<stem>.json
    skill: Skill
    notes: tuple[Issue, ...] = ()
    extras: SkillExtras | None = None


@dataclass(frozen=True)
class Package:
    meta: PackageMeta
    skills: tuple[PackagedSkill, ...]
    manifest_form: str  # manifest.yaml | resource.yaml
    domain: str = ""
    average_confidence: str = ""
    readme: str | None = None
    notes: tuple[Issue, ...] = ()
    entries: tuple[str, ...] = field(default_factory=tuple)
    signer: Signer | None = None  # the verified key of a signed manifest; None: unsigned


def default_package_name(stem: str, salt: str) -> str:
    """A package name for an export not given one: the file stem as a slug plus 8 hex digits of
    sha256(salt, stem). ``salt`` is the publisher key's fingerprint, so the same user exporting
    to the same file name gets the same name (an update of that package), and two file names
    (``a.icpkg``, ``b.icpkg``) or two users never share one."""
    suffix = hashlib.sha256(f"{salt}\0{stem}".encode()).hexdigest()[:8]
    base = re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-")[:55].strip("-") or "skill-library"
    return f"{base}-{suffix}"


# ================================================================================================
# Writing
# ================================================================================================


def skill_stem(skill_id: str) -> str:
    if _SAFE_STEM.match(skill_id) and not skill_id.endswith("."):
        return skill_id
    return hashlib.sha256(skill_id.encode("utf-8")).hexdigest()[:32]


def _json_bytes(document: Any) -> bytes:
    # One line: json's C encoder does not indent, and its pure-Python one took a fifth of an export.
    return (json.dumps(document, ensure_ascii=False, separators=(", ", ": "), allow_nan=False) + "\n").encode("utf-8")


def average_confidence(skills: Sequence[Skill]) -> Confidence:
    if not skills:
        return Confidence.TENTATIVE
    mean = sum(skill.confidence.rank for skill in skills) / len(skills)
    rank = int(mean + 0.5)
    return next(member for member in Confidence if member.rank == rank)


def _single(values: Sequence[str], mixed: str) -> str:
    distinct = sorted(set(values))
    return distinct[0] if len(distinct) == 1 else mixed


def check_meta(meta: PackageMeta) -> None:
    """Refuse metadata a Workshop would refuse (name, publisher, semver, SPDX, ai_usage)."""
    check = Checker()
    _check_identity(check, meta.name, meta.publisher, meta.version, "package")
    if not isinstance(meta.license, str) or not SPDX.match(meta.license) or len(meta.license) > 128:
        check.fail("package.license", f"{meta.license!r} is not an SPDX license expression")
    if meta.ai_usage not in AI_USAGE:
        check.fail("package.ai_usage", f"{meta.ai_usage!r} is not one of {'|'.join(AI_USAGE)}")
    if len(meta.description) > 8000:
        check.fail("package.description", "longer than 8000 characters")
    check.raise_if_failed("package metadata")


def _check_identity(check: Checker, name: object, publisher: object, version: object, path: str) -> None:
    if not isinstance(name, str) or not PACKAGE_NAME.match(name):
        check.fail(join_path(path, "name"), f"{name!r} is not a package name (3-64 of a-z, 0-9, -)")
    if not isinstance(publisher, str) or not PUBLISHER.match(publisher):
        check.fail(join_path(path, "publisher"), f"{publisher!r} is not a publisher name (1-64 of a-z, 0-9, -, _)")
    if not isinstance(version, str) or not SEMVER.match(version) or len(version) > 64:
        check.fail(join_path(path, "version"), f"{version!r} is not a semantic version (e.g. 1.2.0)")


def build_manifest(meta: PackageMeta, skills: Sequence[Skill], files: Mapping[str, bytes]) -> dict[str, Any]:
    domain = _single([skill.domain.value for skill in skills], "mixed")
    game_module = meta.game_module or _single([skill.game_module for skill in skills], "mixed")
    return {
        "format_version": FORMAT_VERSION,
        "package": {
            "name": meta.name,
            "publisher": meta.publisher,
            "version": meta.version,
            "license": meta.license,
            "description": meta.description,
            "category": "skill_library",
            "game_module": game_module,
            "engine_version": meta.engine_version,
            "tags": list(meta.tags),
            "ai_usage": meta.ai_usage,
            "files": {
                name: {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
                for name, data in sorted(files.items())
            },
        },
        "skill_library": {
            "display_name": meta.display_name or meta.name,
            "domain": domain,
            "skill_count": len(skills),
            "average_confidence": average_confidence(skills).value,
        },
    }


def export_package(
    skills: Sequence[Skill],
    meta: PackageMeta,
    *,
    readme: str | None = None,
    preview_png: bytes | None = None,
    extras: Mapping[str, SkillExtras] | None = None,
    signing_key: SigningKey | None = None,
) -> bytes:
    """The ``.icpkg`` bytes for these skills. Run the privacy check first (``privacy``).
    With ``signing_key`` the manifest is signed (``signing.sign_manifest``); without, unsigned."""
    check_meta(meta)
    ordered = sorted(skills, key=lambda skill: skill.id)
    with DeflatingZipWriter() as writer:
        files: dict[str, bytes] = {}

        def add(entry: str, data: bytes) -> None:
            files[entry] = data
            writer.add(entry, data)  # deflated by the writer's threads (zip_writer)

        for skill in ordered:
            stem = skill_stem(skill.id)
            entry = f"skills/{stem}.json"
            if entry in files:
                raise refuse(entry, f"two skills map to the same file (ids {skill.id!r})")
            add(entry, _json_bytes(skill_to_document(skill, local=False)))
            extra = (extras or {}).get(skill.id)
            if extra is not None and (extra.files or extra.frontmatter):
                add(f"extras/{stem}.json", _json_bytes({"frontmatter": extra.frontmatter, "files": extra.files}))
        if readme is not None:
            add("README.md", readme.encode("utf-8"))
        if preview_png is not None:
            add("preview.png", preview_png)
        manifest = build_manifest(meta, ordered, files)
        if signing_key is not None:
            manifest = sign_manifest(manifest, signing_key)
        writer.add(MANIFEST, dump_yaml(manifest).encode("utf-8"))
        _refuse_unreadable(writer.infos(), writer.size(), len(skills))
        return writer.finish([MANIFEST, *sorted(files)])


def _refuse_unreadable(infos: Sequence[zipfile.ZipInfo], size: int, skill_count: int) -> None:
    """Refuse to write a package that ``read_package`` would refuse: more entries or bytes than
    a package may hold, or an entry a reader takes for a decompression bomb."""
    issues = _size_issues(infos, "the package")
    if len(infos) > MAX_ENTRIES:
        issues.insert(0, Issue("the package", f"would have {len(infos)} entries, at most {MAX_ENTRIES} allowed"))
    if size > MAX_ARCHIVE_BYTES:
        issues.insert(0, Issue("the package", f"would be {size} bytes, more than the {MAX_ARCHIVE_BYTES} allowed"))
    if issues:
        raise PackageError(
            issues,
            context=f"{skill_count} skills make a package no import would read; export them as several packages",
        )


def workshop_vdf(meta: PackageMeta, content_folder: str, *, appid: str = "0", preview: str = "") -> str:
    """A steamcmd ``workshop_build_item`` VDF (title <= 128, description <= 8000 characters)."""

    def quoted(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    title = (meta.display_name or meta.name)[:128]
    rows = [
        ("appid", appid),
        ("publishedfileid", "0"),
        ("contentfolder", content_folder),
        ("previewfile", preview),
        ("visibility", "0"),
        ("title", title),
        ("description", meta.description[:8000]),
        ("changenote", f"{meta.package_id}"),
    ]
    body = "".join(f"\t{quoted(key)}\t{quoted(value)}\n" for key, value in rows)
    return f'"workshopitem"\n{{\n{body}}}\n'


# ================================================================================================
# Reading: everything is untrusted
# ================================================================================================


@gc_paused()
def read_package(source: str | Path | bytes, *, progress: Callable[[int, int], None] | None = None) -> Package:
    """Validate a whole package and return what it holds, or raise PackageError naming every
    problem found (file and field). Nothing here touches a library. ``progress(done, total)``
    is called while the skills are validated (the long part of a large package)."""
    if isinstance(source, bytes):
        data = source
        label = "package"
    else:
        path = Path(source)
        label = path.name
        try:
            size = path.stat().st_size
            if size > MAX_ARCHIVE_BYTES:
                raise refuse(label, f"is {size} bytes, more than the {MAX_ARCHIVE_BYTES} allowed")
            data = path.read_bytes()
        except OSError as error:
            raise refuse(label, f"cannot be read ({error.strerror or error})") from None
    if len(data) > MAX_ARCHIVE_BYTES:
        raise refuse(label, f"is {len(data)} bytes, more than the {MAX_ARCHIVE_BYTES} allowed")
    records = _directory_records(data)
    if records > MAX_ENTRIES:
        raise refuse(label, f"has more entries than the {MAX_ENTRIES} allowed ({records} directory records)")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError) as error:
        raise refuse(label, f"is not a valid ZIP archive ({error})") from None
    except Exception as error:  # noqa: BLE001 - zipfile raises odd errors on mangled directories
        raise refuse(label, f"is not a valid ZIP archive ({type(error).__name__})") from None
    with archive:  # its directory, checked as zipfile parsed it; the entries are read from ``data``
        infos = archive.infolist()
    return _read_archive(infos, data, label, progress)


_COUNTED_BYTES = 4 * 1024 * 1024


def _directory_records(data: bytes) -> int:
    """At least as many as the central-directory records zipfile would parse in ``data``.

    zipfile makes an object of about 550 bytes for every record before anything can count
    them: bare records filling the allowed size would take gigabytes. Each record starts with
    the signature, so counting it bounds them. Counted in slices: ``bytes.count`` holds the GIL,
    and over a 150 MB package it held it for 100 ms, a stall in the GUI reading in the
    background. A slice reaches 3 bytes into the next, so a signature is counted in the slice
    it starts in (it cannot overlap itself)."""
    reach = len(CENTRAL_SIGNATURE) - 1
    return sum(
        data.count(CENTRAL_SIGNATURE, start, start + _COUNTED_BYTES + reach)
        for start in range(0, len(data), _COUNTED_BYTES)
    )


def _size_issues(infos: Sequence[zipfile.ZipInfo], label: str) -> list[Issue]:
    """What the size limits refuse in these entries: each entry's size, its compression ratio
    (a decompression bomb), and the whole's. Reading applies them to a package from outside;
    writing to the package it made, so that no export is one an import refuses."""
    issues: list[Issue] = []
    total = 0
    compressed_total = 0
    for info in infos:
        name = info.filename
        limit = MAX_MANIFEST_BYTES if name in (MANIFEST, RESOURCE) else MAX_ENTRY_BYTES
        if info.file_size > limit:
            issues.append(Issue(name, f"declares {info.file_size} bytes, more than the {limit} allowed"))
        if info.file_size >= RATIO_FLOOR and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            issues.append(Issue(name, f"compression ratio above {MAX_RATIO}:1 (decompression bomb)"))
        total += info.file_size
        compressed_total += info.compress_size
    if total > MAX_TOTAL_BYTES:
        issues.append(Issue(label, f"declares {total} bytes uncompressed, more than the {MAX_TOTAL_BYTES} allowed"))
    if total >= RATIO_FLOOR and total > MAX_RATIO * max(compressed_total, 1):
        issues.append(Issue(label, f"overall compression ratio above {MAX_RATIO}:1 (decompression bomb)"))
    return issues


def _read_archive(
    infos: list[zipfile.ZipInfo], data: bytes, label: str, progress: Callable[[int, int], None] | None = None
) -> Package:
    if len(infos) > MAX_ENTRIES:
        raise refuse(label, f"has {len(infos)} entries, at most {MAX_ENTRIES} allowed")
    issues: list[Issue] = []
    entries: dict[str, zipfile.ZipInfo] = {}
    folded: set[str] = set()
    for info in infos:
        name = info.filename
        problem = _entry_problem(info)
        if problem:
            issues.append(Issue(repr(name) if not _ENTRY_NAME.match(name) else name, problem))
            continue
        if name.endswith("/"):
            continue  # a directory entry holds nothing
        if name in entries or name.lower() in folded:
            issues.append(Issue(name, "appears twice in the archive (duplicate entry)"))
            continue
        entries[name] = info
        folded.add(name.lower())
    issues += _size_issues(list(entries.values()), label)
    if issues:
        raise PackageError(issues, context=f"{label} refused")

    manifest_name = MANIFEST if MANIFEST in entries else RESOURCE if RESOURCE in entries else None
    if manifest_name is None:
        raise refuse(label, f"has no {MANIFEST} (or D057 {RESOURCE})", context=f"{label} refused")
    contents, issues = read_entries(data, list(entries.values()))
    if issues:
        raise PackageError(issues, context=f"{label} refused")

    manifest_text = decode_utf8(contents[manifest_name], manifest_name)
    nodes = MANIFEST_NODES_PER_ENTRY * MAX_ENTRIES + MANIFEST_OTHER_NODES
    document = load_yaml(manifest_text, manifest_name, max_aliases=0, max_nodes=nodes)
    check = Checker()
    if manifest_name == MANIFEST:
        meta, listed, library = _read_manifest(check, document)
    else:
        meta, listed, library = _read_resource(check, document)
    _prefix_issues(check, manifest_name)
    if check.issues:
        raise PackageError(check.issues, context=f"{label} refused")
    assert meta is not None
    signer = None
    if manifest_name == MANIFEST and isinstance(document, dict) and "signature" in document:
        try:
            signer = verify_manifest(document)
        except PackageError as error:
            raise PackageError(error.issues, context=f"{label} refused") from None

    others = {name for name in contents if name != manifest_name}
    if listed is not None:
        issues.extend(
            Issue(name, f"is not listed in {manifest_name} files (unlisted entry)")
            for name in sorted(others - set(listed))
        )
        issues.extend(
            Issue(in_file(manifest_name, f"package.files.{name}"), "listed but missing from the archive")
            for name in sorted(set(listed) - others)
        )
        for name in sorted(others & set(listed)):
            sha, size = listed[name]
            if len(contents[name]) != size:
                issues.append(Issue(name, f"is {len(contents[name])} bytes, the manifest says {size} (size mismatch)"))
            elif hashlib.sha256(contents[name]).hexdigest() != sha:
                issues.append(Issue(name, "SHA-256 does not match the manifest (checksum mismatch)"))
    known = re.compile(
        r"^(?:skills/[^/]+\.json|extras/[^/]+\.json|README(?:\.md)?|CHANGELOG(?:\.md)?|preview\.png|LICENSE(?:\.\w+)?|assets/.+|resource\.yaml|mod\.toml)$"
    )
    issues.extend(
        Issue(name, "is not a file a skill library package may hold")
        for name in sorted(others)
        if not known.match(name)
    )
    if issues:
        raise PackageError(issues, context=f"{label} refused")

    extras_by_stem: dict[str, tuple[str, SkillExtras]] = {}
    for name in sorted(n for n in others if n.startswith("extras/")):
        try:
            extras_by_stem[name[len("extras/") : -len(".json")]] = (name, _read_extras(name, contents[name]))
        except PackageError as error:
            issues.extend(error.issues)
    skills: list[PackagedSkill] = []
    seen_ids: dict[str, str] = {}
    skill_entries = sorted(n for n in others if n.startswith("skills/"))
    for index, name in enumerate(skill_entries):
        if progress is not None and index % 250 == 0:
            progress(index, len(skill_entries))
        try:
            skill, notes = parse_skill_with_notes(load_json(contents[name], name))
        except PackageError as error:
            issues.extend(error.issues)
            continue
        except ValidationError as error:
            issues.extend(Issue(in_file(name, issue.path), issue.message) for issue in error.issues)
            continue
        if skill.id in seen_ids:
            issues.append(Issue(name, f"skill id {skill.id!r} is also in {seen_ids[skill.id]} (duplicate skill)"))
            continue
        seen_ids[skill.id] = name
        stem = name[len("skills/") : -len(".json")]
        extra = extras_by_stem.pop(stem, (None, None))[1]
        skills.append(PackagedSkill(name, skill, tuple(notes), extra))
    for stem, (name, _extra) in extras_by_stem.items():
        issues.append(Issue(name, f"belongs to no skill (no skills/{stem}.json)"))
    count = library.get("skill_count")
    if count is not None and count != len(skills) and not issues:
        issues.append(
            Issue(in_file(manifest_name, "skill_library.skill_count"), f"says {count}, the package holds {len(skills)}")
        )
    if issues:
        raise PackageError(issues, context=f"{label} refused")
    readme = contents.get("README.md") or contents.get("README")
    return Package(
        meta=meta,
        skills=tuple(skills),
        manifest_form=manifest_name,
        domain=str(library.get("domain") or ""),
        average_confidence=str(library.get("average_confidence") or ""),
        readme=decode_utf8(readme, "README.md") if readme is not None else None,
        notes=tuple(check.notes),
        entries=tuple(sorted(contents)),
        signer=signer,
    )


def _entry_problem(info: zipfile.ZipInfo) -> str | None:
    name = info.filename
    if "\x00" in name:
        return "name contains a NUL character"
    if "\\" in name:
        return "name contains a backslash"
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return "absolute path"
    parts = name.rstrip("/").split("/")
    if any(part in ("..", ".", "") for part in parts):
        return "path escapes the archive ('..', '.' or empty component)"
    if not _ENTRY_NAME.match(name.rstrip("/")):
        return "name has characters outside A-Z a-z 0-9 . _ - /"
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        return "is a symbolic link"
    if mode and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return "is not a regular file"
    if name.endswith("/") and info.file_size:
        return "directory entry with content"
    return None


def _prefix_issues(check: Checker, name: str) -> None:
    check.issues[:] = [Issue(in_file(name, issue.path), issue.message) for issue in check.issues]
    check.notes[:] = [Issue(in_file(name, issue.path), issue.message) for issue in check.notes]


def load_json(data: bytes, where: str) -> object:
    text = decode_utf8(data, where)

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(items)
        if len(out) < len(items):  # a key appears twice: name the first repeated one
            seen: set[str] = set()
            for key, _value in items:
                if key in seen:
                    raise refuse(where, f"key {key!r} appears twice in one object")
                seen.add(key)
        return out

    def constant(name: str) -> Any:
        raise refuse(where, f"{name} is not JSON")

    try:
        return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except PackageError:
        raise
    except RecursionError:
        raise refuse(where, "JSON nested too deeply") from None
    except ValueError as error:
        raise refuse(where, f"is not valid JSON ({error})") from None


_PACKAGE_KEYS = {
    "name",
    "publisher",
    "version",
    "license",
    "description",
    "category",
    "game_module",
    "engine_version",
    "tags",
    "files",
    "ai_usage",
    "platforms",
    "dependencies",
    "distribution",
}
_LIBRARY_KEYS = {"display_name", "domain", "skill_count", "average_confidence"}


def _text(check: Checker, value: object, path: str, max_len: int, *, required: bool = False) -> str:
    if value is None and not required:
        return ""
    result = check.text(value, path, max_len=max_len, allow_empty=not required)
    return result or ""


def _ai_usage(check: Checker, value: object, path: str) -> str:
    if value is None:
        return "metadata_only"
    if isinstance(value, str):
        folded = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", value).lower().replace("-", "_")
        if folded in AI_USAGE:
            return folded
    check.fail(path, f"{value!r} is not one of {'|'.join(AI_USAGE)}")
    return "metadata_only"


def _read_library_fields(check: Checker, data: Mapping[str, Any], path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    out["display_name"] = _text(check, data.get("display_name"), join_path(path, "display_name"), 128)
    domain = data.get("domain")
    if domain is not None:
        if domain == "mixed":
            out["domain"] = "mixed"
        else:
            parsed = check.enum(Domain, domain, join_path(path, "domain"))
            out["domain"] = parsed.value if parsed else ""
    if "skill_count" in data:
        out["skill_count"] = check.integer(data["skill_count"], join_path(path, "skill_count"), 0, MAX_ENTRIES)
    if data.get("average_confidence") is not None:
        confidence = check.enum(Confidence, data["average_confidence"], join_path(path, "average_confidence"))
        out["average_confidence"] = confidence.value if confidence else ""
    return out


def _read_files(check: Checker, value: object, path: str) -> dict[str, tuple[str, int]] | None:
    files = check.mapping(value, path)
    if files is None:
        return None
    if len(files) > MAX_ENTRIES:
        check.fail(path, f"lists {len(files)} files, at most {MAX_ENTRIES}")
        return None
    out: dict[str, tuple[str, int]] = {}
    for name, entry in files.items():
        where = join_path(path, name)
        item = check.mapping(entry, where)
        if item is None:
            continue
        sha = item.get("sha256")
        if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{64}", sha):
            check.fail(join_path(where, "sha256"), f"expected 64 lowercase hex digits, got {type(sha).__name__}")
            continue
        size = check.integer(item.get("size"), join_path(where, "size"), 0, MAX_TOTAL_BYTES)
        if size is None:
            continue
        out[name] = (sha, size)
    return out


def _read_manifest(
    check: Checker, document: object
) -> tuple[PackageMeta | None, dict[str, tuple[str, int]] | None, dict[str, Any]]:
    root = check.mapping(document, "")
    if root is None:
        return None, None, {}
    version = root.get("format_version", FORMAT_VERSION)
    if type(version) is not int or version != FORMAT_VERSION:
        check.fail("format_version", f"{version!r} is not a manifest version this SkillStudio reads ({FORMAT_VERSION})")
        return None, None, {}
    for key in root:
        if key not in ("format_version", "package", "skill_library", "signature"):
            check.note(key, "unknown field, ignored")
    package = check.mapping(root.get("package"), "package")
    if package is None:
        return None, None, {}
    for key in package:
        if key not in _PACKAGE_KEYS:
            check.note(join_path("package", key), "unknown field, ignored")
    name, publisher, semver = package.get("name"), package.get("publisher"), package.get("version")
    _check_identity(check, name, publisher, semver, "package")
    license_ = package.get("license")
    if not isinstance(license_, str) or not SPDX.match(license_) or len(license_) > 128:
        check.fail("package.license", f"{license_!r} is not an SPDX license expression")
    if package.get("category", "skill_library") != "skill_library":
        check.fail("package.category", f"{package.get('category')!r} is not skill_library")
    description = _text(check, package.get("description"), "package.description", 8000)
    game_module = _text(check, package.get("game_module"), "package.game_module", 64)
    engine_version = _text(check, package.get("engine_version"), "package.engine_version", 64)
    tags = check.each(
        package.get("tags", []) or [], "package.tags", lambda v, p: check.text(v, p, max_len=64, allow_empty=False)
    )
    if tags is not None and len(tags) > 100:
        check.fail("package.tags", f"has {len(tags)} tags, at most 100")
    ai_usage = _ai_usage(check, package.get("ai_usage"), "package.ai_usage")
    files = _read_files(check, package.get("files"), "package.files")
    library: dict[str, Any] = {}
    if root.get("skill_library") is not None:
        section = check.mapping(root["skill_library"], "skill_library")
        if section is not None:
            for key in section:
                if key not in _LIBRARY_KEYS:
                    check.note(join_path("skill_library", key), "unknown field, ignored")
            library = _read_library_fields(check, section, "skill_library")
    # _check_identity and the license check recorded an issue for any of these that is not text
    if (
        check.issues
        or not isinstance(name, str)
        or not isinstance(publisher, str)
        or not isinstance(semver, str)
        or not isinstance(license_, str)
    ):
        return None, None, library
    meta = PackageMeta(
        name=name,
        publisher=publisher,
        version=semver,
        license=license_,
        description=description,
        display_name=library.get("display_name", ""),
        engine_version=engine_version,
        tags=tuple(tags or ()),
        ai_usage=ai_usage,
        game_module=game_module,
    )
    return meta, files, library


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:64].strip("-")
    return slug if len(slug) >= 3 else (slug + "-lib")[:64]


def _read_resource(
    check: Checker, document: object
) -> tuple[PackageMeta | None, dict[str, tuple[str, int]] | None, dict[str, Any]]:
    """D057's ``resource.yaml``: flat, no identity. Name, publisher and version may be given;
    else the name is the display name as a slug plus a hash of the document, the publisher
    ``local``, the version 0.0.0."""
    root = check.mapping(document, "")
    if root is None:
        return None, None, {}
    if root.get("type") != "skill_library":
        check.fail("type", f"{root.get('type')!r} is not skill_library")
    library = _read_library_fields(check, root, "")
    display = library.get("display_name") or ""
    if "name" in root:
        name = root["name"]
    else:
        # No name: a fixed default would make every nameless library one identity, so that one's
        # --replace could trash another's skills. The content names it: the same document gets
        # the same name on a re-import, a different one never collides.
        digest = hashlib.sha256(json.dumps(root, sort_keys=True, default=str).encode()).hexdigest()[:8]
        name = f"{_slug(display or 'skill-library')[:55]}-{digest}"
    publisher = root.get("publisher", root.get("author", "local"))
    semver = root.get("version", "0.0.0")
    _check_identity(check, name, publisher, semver, "")
    license_ = root.get("license", "LicenseRef-Unspecified")
    if not isinstance(license_, str) or not SPDX.match(license_) or len(license_) > 128:
        check.fail("license", f"{license_!r} is not an SPDX license expression")
    description = _text(check, root.get("description"), "description", 8000)
    game_module = _text(check, root.get("game_module"), "game_module", 64)
    ai_usage = _ai_usage(check, root.get("ai_usage"), "ai_usage")
    files = _read_files(check, root["files"], "files") if "files" in root else None
    # _check_identity and the license check recorded an issue for any of these that is not text
    if (
        check.issues
        or not isinstance(name, str)
        or not isinstance(publisher, str)
        or not isinstance(semver, str)
        or not isinstance(license_, str)
    ):
        return None, None, library
    meta = PackageMeta(
        name=name,
        publisher=publisher,
        version=semver,
        license=license_,
        description=description,
        display_name=display,
        ai_usage=ai_usage,
        game_module=game_module,
    )
    return meta, files, library


def _read_extras(name: str, data: bytes) -> SkillExtras:
    document = load_json(data, name)
    check = Checker()
    root = check.mapping(document, "")
    frontmatter: dict[str, Any] = {}
    files: dict[str, dict[str, str]] = {}
    if root is not None:
        value = check.json_value(root.get("frontmatter", {}), "frontmatter")
        if isinstance(value, dict):
            frontmatter = value
        elif value is not None:
            check.fail("frontmatter", "expected a mapping")
        files = read_extra_files(check, root.get("files", {}), "files")
    _prefix_issues(check, name)
    if check.issues:
        raise PackageError(check.issues)
    return SkillExtras(frontmatter=frontmatter, files=files)


def read_extra_files(check: Checker, value: object, path: str) -> dict[str, dict[str, str]]:
    """A skill's extra files, ``{relative path: {"text": ...} | {"base64": ...}}``, bounded."""
    mapping = check.mapping(value, path)
    out: dict[str, dict[str, str]] = {}
    if mapping is None:
        return out
    total = 0
    for rel, item in mapping.items():
        where = join_path(path, rel)
        if not _ENTRY_NAME.match(rel) or any(part in (".", "..") for part in rel.split("/")):
            check.fail(where, "not a safe relative path")
            continue
        entry = check.mapping(item, where)
        if entry is None:
            continue
        if set(entry) == {"text"} and isinstance(entry["text"], str):
            total += len(entry["text"])
        elif set(entry) == {"base64"} and isinstance(entry["base64"], str):
            try:
                total += len(base64.b64decode(entry["base64"], validate=True))
            except ValueError:
                check.fail(where, "base64 content is not valid")
                continue
        else:
            check.fail(where, 'expected {"text": ...} or {"base64": ...}')
            continue
        out[rel] = dict(entry)
    if total > MAX_EXTRA_FILES_BYTES:
        check.fail(path, f"files hold {total} bytes, at most {MAX_EXTRA_FILES_BYTES}")
    return out


__all__ = [
    "FORMAT_VERSION",
    "MANIFEST",
    "RESOURCE",
    "Package",
    "PackageMeta",
    "PackagedSkill",
    "average_confidence",
    "build_manifest",
    "check_meta",
    "default_package_name",
    "export_package",
    "fingerprint",
    "load_json",
    "read_extra_files",
    "read_package",
    "skill_stem",
    "workshop_vdf",
]
