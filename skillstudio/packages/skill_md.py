"""The Agent Skills format: a folder tree of ``<name>/SKILL.md`` skills, in and out.

A ``SKILL.md`` is YAML frontmatter between ``---`` lines, then a markdown body (which may be
empty). It becomes an ``Instructions`` skill: ``name`` -> name, ``description`` -> description,
the body -> instructions, ``allowed-tools`` -> tools, ``model`` -> model. ``license``,
``compatibility``, ``metadata`` and (leniently) unknown keys are kept in the skill's import
extras (``studio_skill_extras.frontmatter``), and so is every other file of the skill folder, at
any depth (``studio_skill_extras.files``), except dot entries (``.git/``, ``.DS_Store``,
``.env``...); export writes the files back byte for byte. See docs/packages.md.

SkillStudio keys in ``metadata`` make the round trip exact: ``skillstudio-id``,
``ic-domain`` and ``ic-game-module``.

What a tree is found to hold (``Violations``): hard errors (refused in every mode: symlinks,
special files, invalid UTF-8, invalid YAML, duplicate frontmatter keys, YAML aliases beyond a
few, non-core tags, files beyond the size and count limits), spec violations (warnings in lenient
mode, the default; strict mode refuses them), warnings that are no spec violation (a file whose
name cannot be kept) and notes (information only: an empty body, dot entries skipped).
"""

from __future__ import annotations

import base64
import json
import os
import re
import stat
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from skillstudio.model import (
    Domain,
    Instructions,
    Issue,
    Skill,
    parse_skill,
    utc_now,
)
from skillstudio.model.validation import MAX_DESCRIPTION, MAX_LONG_TEXT, MAX_NAME, ValidationError
from skillstudio.packages.errors import PackageError, path_name
from skillstudio.packages.importer import Incoming
from skillstudio.packages.safe_yaml import decode_utf8, load_yaml
from skillstudio.store import SkillExtras

NAMESPACE = uuid.UUID("6f1f0d0e-5b6c-4f51-9a57-5d0c1f0e4b57")
SPEC_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
SPEC_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
KEPT_DIRS = ("scripts", "references", "assets")  # the spec's optional folders; every file is kept
OUR_METADATA = ("skillstudio-id", "ic-domain", "ic-game-module")
MAX_SKILL_MD = 1024 * 1024
MAX_FILE = 2 * 1024 * 1024
MAX_FILES_PER_SKILL = 500
MAX_FILES_BYTES = 8 * 1024 * 1024
MAX_SKILLS = 20_000
MAX_FILE_DEPTH = 16  # folder levels below a skill folder
MAX_ENTRIES_SCANNED = 10 * MAX_FILES_PER_SKILL  # files and folders looked at per skill (empty folders too)
MAX_FRONTMATTER_ALIASES = 5  # real files use none; a few cannot blow up
# A kept file's path: the names a Workshop package may hold (icpkg._ENTRY_NAME), no dot entries.
KEPT_NAME = re.compile(r"[A-Za-z0-9_\-][A-Za-z0-9._\-]*")


@dataclass
class Violations:
    """What reading a tree found. ``spec``: spec violations (warnings in lenient mode, errors in
    strict); ``errors``: refused in every mode; ``warnings``: no spec violation, but something
    was not kept (shown and kept with the skill); ``notes``: information only."""

    spec: list[Issue] = field(default_factory=list)
    errors: list[Issue] = field(default_factory=list)
    warnings: list[Issue] = field(default_factory=list)
    notes: list[Issue] = field(default_factory=list)


def spec_name_problem(name: object) -> str | None:
    if not isinstance(name, str):
        return f"expected text, got {type(name).__name__}"
    if not 1 <= len(name) <= 64:
        return f"is {len(name)} characters, the spec allows 1-64"
    if not SPEC_NAME.match(name):
        return f"{name!r} must be lowercase letters, digits and single hyphens, not starting or ending with one"
    return None


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """(frontmatter text or None, body)."""
    if not text.startswith("---"):
        return None, text
    lines = text.split("\n")
    if lines[0].strip() != "---":
        return None, text
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :])
    return None, text


def _read_regular(path: str, limit: int) -> bytes:
    """The bytes of a regular file, not following a symlink and not blocking on a FIFO swapped
    in after the walk looked; ValueError if it is no regular file or grew beyond ``limit``."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    handle = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise ValueError("is not a regular file; refused")
        chunks, size = [], 0
        while chunk := os.read(handle, 1024 * 1024):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise ValueError(f"grew beyond {limit} bytes while read")
        return b"".join(chunks)
    finally:
        os.close(handle)


def _files_of(folder: Path, where: str, found: Violations) -> dict[str, dict[str, str]]:
    """Every file of a skill folder but its SKILL.md, at any depth, as ``{relative path:
    {"text": ...} | {"base64": ...}}``. Dot entries are skipped (a note names them); symlinks,
    special files, deeper nesting and more files or bytes than the limits are errors."""
    files: dict[str, dict[str, str]] = {}
    dotted: list[str] = []
    total = scanned = 0
    pending: list[tuple[Path, int]] = [(folder, 0)]
    while pending:
        directory, depth = pending.pop()
        try:
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as error:
            found.errors.append(
                Issue(f"{where}/{directory.relative_to(folder).as_posix()}", f"cannot be read ({error.strerror})")
            )
            continue
        subfolders: list[Path] = []
        for entry in entries:
            if depth == 0 and entry.name == "SKILL.md":
                continue
            rel = Path(entry.path).relative_to(folder).as_posix()
            at = f"{where}/{rel}"
            scanned += 1
            if scanned > MAX_ENTRIES_SCANNED:
                found.errors.append(Issue(where, f"holds more than {MAX_ENTRIES_SCANNED} files and folders; refused"))
                return files
            try:
                if entry.name.startswith("."):
                    dotted.append(rel + ("/" if entry.is_dir(follow_symlinks=False) else ""))
                    continue
                if entry.is_symlink():
                    found.errors.append(Issue(at, "is a symbolic link; refused"))
                    continue
                is_dir = entry.is_dir(follow_symlinks=False)
                if not is_dir and not entry.is_file(follow_symlinks=False):
                    found.errors.append(Issue(at, "is not a regular file (a FIFO, socket or device); refused"))
                    continue
                if not KEPT_NAME.fullmatch(entry.name):
                    what = "folder" if is_dir else "file"
                    found.warnings.append(
                        Issue(at, f"{what} name has characters other than A-Z a-z 0-9 . _ -; not kept")
                    )
                    continue
                if is_dir:
                    if depth + 1 > MAX_FILE_DEPTH:
                        found.errors.append(Issue(at, f"nested deeper than {MAX_FILE_DEPTH} folders; refused"))
                    else:
                        subfolders.append(Path(entry.path))
                    continue
                size = entry.stat(follow_symlinks=False).st_size
                if size > MAX_FILE:
                    found.errors.append(Issue(at, f"is {size} bytes, at most {MAX_FILE} kept per file"))
                    continue
                if len(files) >= MAX_FILES_PER_SKILL:
                    found.errors.append(
                        Issue(
                            where,
                            f"holds more than {MAX_FILES_PER_SKILL} files (at most {MAX_FILES_PER_SKILL} kept per skill); refused",
                        )
                    )
                    return files
                if total + size > MAX_FILES_BYTES:
                    found.errors.append(
                        Issue(
                            where,
                            f"its files hold more than {MAX_FILES_BYTES} bytes (at most {MAX_FILES_BYTES} kept per skill); refused",
                        )
                    )
                    return files
                data = _read_regular(entry.path, min(MAX_FILE, MAX_FILES_BYTES - total))
            except ValueError as error:
                found.errors.append(Issue(at, str(error)))
                continue
            except OSError as error:
                found.errors.append(Issue(at, f"cannot be read ({error.strerror or error})"))
                continue
            total += len(data)
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                text = None
            if text is None or "\x00" in text:
                files[rel] = {"base64": base64.b64encode(data).decode("ascii")}
            else:
                files[rel] = {"text": text}
        pending.extend((sub, depth + 1) for sub in reversed(subfolders))
    if dotted:
        shown = ", ".join(dotted[:10]) + (f" and {len(dotted) - 10} more" if len(dotted) > 10 else "")
        found.notes.append(Issue(where, f"dot entries are not part of a skill; not kept: {shown}"))
    return files


def _frontmatter_key_line(node: yaml.Node) -> int:
    return node.start_mark.line + 2  # SKILL.md line: the frontmatter starts on line 2


def duplicate_keys(front_text: str, where: str) -> list[Issue]:
    """Keys given twice in one mapping of the frontmatter (at any depth). YAML requires unique
    keys, and PyYAML silently keeps the last one where other readers keep the first: the skill
    a reviewer reads must be the skill another tool runs. Call after ``load_yaml`` accepted the
    text (it bounds aliases, tags and depth); composing builds nodes only, never objects."""
    loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        root = yaml.compose(front_text, Loader=loader_class)
    except yaml.YAMLError:
        return []  # load_yaml reported it
    issues: list[tuple[int, Issue]] = []
    seen: set[int] = set()
    pending: list[tuple[yaml.Node | None, str]] = [(root, "")]
    while pending:
        node, path = pending.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))  # aliases may share (or nest) nodes
        if isinstance(node, yaml.MappingNode):
            first: dict[tuple[str, str], int] = {}
            for key_node, value_node in node.value:
                label = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
                if label is not None:
                    line = _frontmatter_key_line(key_node)
                    key = (key_node.tag, label)
                    if key in first:
                        issues.append(
                            (
                                line,
                                Issue(
                                    f"{where}: frontmatter" + (f": {path}" if path else ""),
                                    f"duplicate key {label!r} at line {line} (first at line {first[key]}); YAML keys must be unique",
                                ),
                            )
                        )
                    else:
                        first[key] = line
                pending.append((value_node, f"{path}.{label}" if path and label is not None else (label or path)))
        elif isinstance(node, yaml.SequenceNode):
            pending.extend((item, path) for item in node.value)
    return [issue for _line, issue in sorted(issues, key=lambda pair: pair[0])]


def read_skill_folder(
    folder: Path,
    *,
    root_label: str,
    where: str,
    domain: Domain,
    game_module: str,
    found: Violations,
) -> tuple[Skill, SkillExtras] | None:
    """One ``<folder>/SKILL.md``; violations go to ``found`` (the caller decides strictness)."""
    md = folder / "SKILL.md"
    spec, errors = found.spec, found.errors
    file_where = f"{where}/SKILL.md"
    if md.is_symlink():
        errors.append(Issue(file_where, "is a symbolic link; refused"))
        return None
    size = md.stat().st_size
    if size > MAX_SKILL_MD:
        errors.append(Issue(file_where, f"is {size} bytes, at most {MAX_SKILL_MD}"))
        return None
    try:
        text = decode_utf8(md.read_bytes(), file_where)
        front_text, body = split_frontmatter(text.replace("\r\n", "\n"))
        if front_text is None:
            errors.append(Issue(file_where, "has no YAML frontmatter between '---' lines"))
            return None
        front = load_yaml(front_text, f"{file_where}: frontmatter", max_aliases=MAX_FRONTMATTER_ALIASES)
    except PackageError as error:
        errors.extend(error.issues)
        return None
    duplicates = duplicate_keys(front_text, file_where)
    if duplicates:
        errors.extend(duplicates)
        return None
    if not isinstance(front, dict) or not all(isinstance(k, str) for k in front):
        errors.append(Issue(f"{file_where}: frontmatter", "expected a mapping with text keys"))
        return None

    def at(key: str) -> str:
        return f"{file_where}: {key}"

    name = front.get("name")
    folder_name = path_name(folder)
    problem = spec_name_problem(name)
    if name is None:
        spec.append(Issue(at("name"), "missing; the folder name is used"))
        name = folder_name
    elif problem:
        spec.append(Issue(at("name"), problem))
    if isinstance(name, str) and name != folder_name and not problem:
        spec.append(Issue(at("name"), f"{name!r} differs from its folder name {folder_name!r}"))
    if not isinstance(name, str) or not name.strip():
        name = folder_name
    name = str(name).strip()[:MAX_NAME]

    description = front.get("description")
    if description is None or (isinstance(description, str) and not description.strip()):
        spec.append(Issue(at("description"), "missing or empty (the spec requires 1-1024 characters)"))
        description = ""
    elif not isinstance(description, str):
        spec.append(Issue(at("description"), f"expected text, got {type(description).__name__}"))
        description = str(description)
    elif len(description) > 1024:
        spec.append(Issue(at("description"), f"is {len(description)} characters, the spec allows 1024"))
    if len(description) > MAX_DESCRIPTION:
        spec.append(Issue(at("description"), f"cut to {MAX_DESCRIPTION} characters"))
        description = description[:MAX_DESCRIPTION]

    kept: dict[str, Any] = {}
    if "license" in front:
        if isinstance(front["license"], str):
            kept["license"] = front["license"]
        else:
            spec.append(Issue(at("license"), "expected text"))
            kept["license"] = json.dumps(front["license"])
    if "compatibility" in front:
        compatibility = front["compatibility"]
        if not isinstance(compatibility, str):
            spec.append(Issue(at("compatibility"), "expected text (the spec allows 1-500 characters)"))
            compatibility = json.dumps(compatibility)
        elif not compatibility.strip():
            spec.append(
                Issue(at("compatibility"), "is empty; the spec allows 1-500 characters (or no compatibility key)")
            )
        elif len(compatibility) > 500:
            spec.append(Issue(at("compatibility"), f"is {len(compatibility)} characters, the spec allows 1-500"))
        kept["compatibility"] = compatibility
    metadata: dict[str, str] = {}
    raw_metadata = front.get("metadata", {})
    if raw_metadata is None:
        raw_metadata = {}
    if not isinstance(raw_metadata, dict):
        spec.append(Issue(at("metadata"), "expected a mapping of text to text"))
        raw_metadata = {"metadata": raw_metadata}
    for key, value in raw_metadata.items():
        if not isinstance(key, str) or not isinstance(value, str):
            spec.append(Issue(at(f"metadata.{key}"), "metadata values must be text"))
        metadata[str(key)] = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)

    tools: tuple[str, ...] = ()
    allowed = front.get("allowed-tools")
    if allowed is not None:
        if isinstance(allowed, list):
            spec.append(Issue(at("allowed-tools"), "is a list; the spec wants a space-separated string"))
            tools = tuple(str(item) for item in allowed)
        elif isinstance(allowed, str):
            if "," in allowed:
                spec.append(Issue(at("allowed-tools"), "is comma-separated; the spec wants spaces"))
            tools = tuple(part for part in re.split(r"[,\s]+", allowed) if part)
        else:
            spec.append(Issue(at("allowed-tools"), f"expected text, got {type(allowed).__name__}"))
    model = front.get("model")
    for key in front:
        if key not in SPEC_KEYS:
            spec.append(Issue(at(key), "not a key of the SKILL.md spec; kept under metadata"))
            if key != "model" or not isinstance(model, str):
                value = front[key]
                metadata[key] = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if not isinstance(model, str):
        model = None

    skill_id = metadata.pop("skillstudio-id", None) or str(uuid.uuid5(NAMESPACE, f"skill-md:{name}"))
    domain_text = metadata.pop("ic-domain", None)
    module_text = metadata.pop("ic-game-module", None)
    skill_domain = domain
    if domain_text:
        try:
            skill_domain = Domain.parse(domain_text)
        except ValueError as error:
            spec.append(Issue(at("metadata.ic-domain"), str(error)))
    if metadata:
        kept["metadata"] = metadata

    instructions = body.strip("\n")
    if len(instructions) > MAX_LONG_TEXT:
        errors.append(Issue(at("body"), f"is {len(instructions)} characters, at most {MAX_LONG_TEXT}"))
        return None
    if not instructions.strip():
        # The spec's own minimal example has no body: valid, so a note and not a violation.
        found.notes.append(Issue(at("body"), "is empty; the description is used as instructions"))
        instructions = description or name
    files = _files_of(folder, where, found)
    document = {
        "id": skill_id,
        "domain": skill_domain.value,
        "name": name,
        "description": description,
        "created_by": str(metadata.get("author", "unknown"))[:256],
        "created_at": utc_now(),
        "provenance": {"source": "hand_authored", "game_module": module_text or game_module},
        "body": {
            "Instructions": {"instructions": instructions, "tools": list(tools), "model": model, "references": []}
        },
        # Seed 004's SKILL.md carries tags (and roles, which stay in metadata for retrieval's
        # role filter); they become the skill's own tags, so tag filters and tag retrieval see them.
        "tags": _listed(front.get("tags")),
    }
    try:
        skill = parse_skill(document, context=file_where)
    except ValidationError as error:
        if document["tags"] and all(issue.path.startswith("tags") for issue in error.issues):
            spec.append(Issue(at("tags"), f"not usable as tags ({error.issues[0].message}); kept under metadata only"))
            document["tags"] = []
            try:
                skill = parse_skill(document, context=file_where)
            except ValidationError as again:
                error = again
            else:
                extras = SkillExtras(origin=f"skill-md:{root_label}", frontmatter=kept, files=files)
                return skill, extras
        errors.extend(Issue(f"{file_where}: {issue.path}", issue.message) for issue in error.issues)
        return None
    extras = SkillExtras(origin=f"skill-md:{root_label}", frontmatter=kept, files=files)
    return skill, extras


def _listed(value: object) -> list[str]:
    """A frontmatter list of words (``[a, b]`` or ``"a, b"``), as text items."""
    if isinstance(value, str):
        return [part for part in re.split(r"[,\s]+", value) if part]
    if isinstance(value, list):
        return [item.strip() for item in value if isinstance(item, str) and item.strip()]
    return []


def find_skill_folders(root: Path) -> list[Path]:
    """Folders holding a SKILL.md under ``root`` (itself included), not following symlinks and
    not looking inside a skill folder for more skills."""
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and not (Path(dirpath) / d).is_symlink())
        if "SKILL.md" in filenames:
            out.append(Path(dirpath))
            dirnames[:] = []
        if len(out) > MAX_SKILLS:
            break
    return out


def _scan_tree(root: Path, domain: Domain, game_module: str) -> tuple[list[Incoming], str, Violations]:
    """Every SKILL.md skill under ``root`` and what was found; raises PackageError only when
    the root itself is unusable."""
    if not root.is_dir():
        raise PackageError([Issue(str(root), "is not a folder")])
    folders = find_skill_folders(root)
    if len(folders) > MAX_SKILLS:
        raise PackageError([Issue(path_name(root), f"holds more than {MAX_SKILLS} skills")])
    if not folders:
        raise PackageError([Issue(path_name(root), "holds no SKILL.md")])
    label = root.resolve().name or "skills"
    found = Violations()
    incoming: list[Incoming] = []
    seen: dict[str, str] = {}
    for folder in folders:
        where = folder.relative_to(root).as_posix()
        where = label if where == "." else where
        spec_before, warnings_before = len(found.spec), len(found.warnings)
        result = read_skill_folder(
            folder, root_label=label, where=where, domain=domain, game_module=game_module, found=found
        )
        if result is None:
            continue
        skill, extras = result
        if skill.id in seen:
            found.errors.append(Issue(f"{where}/SKILL.md", f"same skill (id {skill.id}) as {seen[skill.id]}"))
            continue
        seen[skill.id] = f"{where}/SKILL.md"
        warnings = tuple(str(issue) for issue in found.spec[spec_before:] + found.warnings[warnings_before:])
        extras = SkillExtras(extras.origin, extras.frontmatter, extras.files, warnings)
        metadata = extras.frontmatter.get("metadata")
        attributed = isinstance(metadata, dict) and "author" in metadata
        incoming.append(Incoming(f"{where}/SKILL.md", skill, extras, warnings, attributed=attributed))
    return incoming, label, found


def read_skill_tree(
    root: str | Path, *, strict: bool = False, domain: Domain = Domain.AI_STRATEGY, game_module: str = "ra1"
) -> tuple[list[Incoming], str, Violations]:
    """Every SKILL.md skill under ``root``. Raises PackageError on hard errors, and in strict
    mode on any spec violation; otherwise returns the skills, the origin and the violations."""
    root = Path(root)
    incoming, label, found = _scan_tree(root, domain, game_module)
    if found.errors or (strict and found.spec):
        raise PackageError(found.errors + (found.spec if strict else []), context=f"{root} refused")
    return incoming, f"skill-md:{label}", found


def check_tree(root: str | Path) -> tuple[int, Violations]:
    """Everything ``validate`` reports about a SKILL.md tree, without importing anything:
    (skills read, what was found). Never raises for the tree's content."""
    try:
        incoming, _label, found = _scan_tree(Path(root), Domain.AI_STRATEGY, "ra1")
    except PackageError as error:
        return 0, Violations(errors=list(error.issues))
    return len(incoming), found


def validate_tree(root: str | Path) -> list[Issue]:
    """Hard errors and spec violations of a SKILL.md tree (not warnings or notes): empty when
    ``validate --strict`` passes."""
    _count, found = check_tree(root)
    return found.errors + found.spec


# --- export ---------------------------------------------------------------------------------------


def spec_name(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:64].strip("-")
    return slug or "skill"


def has_skill_md_form(skill: Skill) -> bool:
    """Whether a skill can be written as a SKILL.md: the spec's skills are instructions, and
    export_skill_tree leaves the other kinds out."""
    return isinstance(skill.body, Instructions)


def export_skill_tree(
    skills: list[Skill], target: str | Path, extras: dict[str, SkillExtras] | None = None
) -> list[str]:
    """Write each Instructions skill as ``target/<name>/SKILL.md`` (spec-valid) with its kept
    files. Returns warnings (skills skipped, names or descriptions changed to fit the spec)."""
    target = Path(target)
    target.mkdir(parents=True, exist_ok=True)
    warnings: list[str] = []
    used: set[str] = {entry.name for entry in target.iterdir()}
    for skill in sorted(skills, key=lambda s: (s.name, s.id)):
        if not has_skill_md_form(skill):
            warnings.append(f"{skill.id}: a {skill.body_kind.value} skill has no SKILL.md form; skipped")
            continue
        body = skill.body
        assert isinstance(body, Instructions)  # has_skill_md_form
        extra = (extras or {}).get(skill.id) or SkillExtras()
        name = skill.name if spec_name_problem(skill.name) is None else spec_name(skill.name)
        if name != skill.name:
            warnings.append(
                f"{skill.id}: name {skill.name!r} written as {name!r} (spec names are lowercase-hyphenated)"
            )
        base, counter = name, 2
        while name in used:
            name = f"{base[:60]}-{counter}"
            counter += 1
        used.add(name)
        description = skill.description.strip() or skill.name
        if len(description) > 1024:
            warnings.append(f"{skill.id}: description cut to 1024 characters")
            description = description[:1021] + "..."
        front: dict[str, Any] = {"name": name, "description": description}
        if isinstance(extra.frontmatter.get("license"), str):
            front["license"] = extra.frontmatter["license"]
        compatibility = extra.frontmatter.get("compatibility")
        if isinstance(compatibility, str):
            if not compatibility.strip():
                warnings.append(f"{skill.id}: empty compatibility left out (the spec allows 1-500 characters)")
            elif len(compatibility) > 500:
                warnings.append(f"{skill.id}: compatibility cut to 500 characters")
                front["compatibility"] = compatibility[:497] + "..."
            else:
                front["compatibility"] = compatibility
        # extras from a package or another program may hold anything under "metadata"
        kept_metadata = extra.frontmatter.get("metadata")
        metadata = {str(k): str(v) for k, v in kept_metadata.items()} if isinstance(kept_metadata, dict) else {}
        metadata.update(
            {"skillstudio-id": skill.id, "ic-domain": skill.domain.value, "ic-game-module": skill.game_module}
        )
        front["metadata"] = metadata
        if body.tools:
            front["allowed-tools"] = " ".join(body.tools)
        folder = target / name
        folder.mkdir()
        head = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1000)
        (folder / "SKILL.md").write_text(f"---\n{head}---\n{body.instructions}\n", encoding="utf-8")
        for rel, content in sorted(extra.files.items()):
            problem = _unwritable(rel, content)
            if problem:
                warnings.append(f"{skill.id}: file {rel!r} not written ({problem})")
                continue
            path = folder.joinpath(*rel.split("/"))
            # Bytes, never text mode: what was imported is written back byte for byte
            # (no newline translation, a BOM stays).
            data = content["text"].encode("utf-8") if "text" in content else base64.b64decode(content["base64"])
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                with open(path, "xb") as stream:  # never over another kept file or SKILL.md
                    stream.write(data)
            except OSError as error:
                warnings.append(f"{skill.id}: file {rel!r} not written ({error.strerror or error})")
    return warnings


def _unwritable(rel: str, content: object) -> str | None:
    """Why a kept file may not be written into its skill folder (extras can come from a package,
    so from anyone): only relative paths of safe names, no dot entries (``.git/config`` could
    make git run code), not the SKILL.md itself."""
    parts = rel.split("/")
    if not all(KEPT_NAME.fullmatch(part) for part in parts):
        return "unsafe path: names of A-Z a-z 0-9 . _ - only, no dot entries"
    if rel == "SKILL.md":
        return "it would replace the SKILL.md"
    if len(parts) > MAX_FILE_DEPTH + 1:
        return f"nested deeper than {MAX_FILE_DEPTH} folders"
    if not isinstance(content, dict) or not (
        (set(content) == {"text"} and isinstance(content["text"], str))
        or (set(content) == {"base64"} and isinstance(content["base64"], str))
    ):
        return 'expected {"text": ...} or {"base64": ...}'
    try:
        if "base64" in content:
            base64.b64decode(content["base64"], validate=True)
        else:
            content["text"].encode("utf-8")
    except ValueError:  # binascii.Error, UnicodeEncodeError (a lone surrogate)
        return "content is not valid base64 or Unicode"
    return None


__all__ = [
    "Violations",
    "check_tree",
    "duplicate_keys",
    "export_skill_tree",
    "has_skill_md_form",
    "read_skill_tree",
    "spec_name_problem",
    "split_frontmatter",
    "validate_tree",
]
