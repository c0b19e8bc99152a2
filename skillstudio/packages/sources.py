"""Which reader a path needs (detected, or forced with ``--format``), and reading it."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from skillstudio.model import Domain
from skillstudio.packages.errors import path_name, refuse
from skillstudio.packages.icpkg import Package, read_package
from skillstudio.packages.importer import Incoming, incoming_from_package
from skillstudio.store import SkillRepository

Format = Literal["icpkg", "skill-md", "json", "voyager"]
FORMATS: tuple[str, ...] = ("icpkg", "skill-md", "json", "voyager")


@dataclass
class Source:
    """What an import will bring, before it is planned against a library."""

    label: str
    format: str
    origin: str
    incoming: list[Incoming]
    package: Package | None = None
    warnings: list[str] = field(default_factory=list)


DEFAULT_GAME_MODULE = "ra1"


@dataclass(frozen=True)
class ImportDefaults:
    """What an import gives skills whose input states no game module or domain (SKILL.md, JSON,
    Voyager): the library's most common ones, and the modules it knows to choose from."""

    game_modules: list[str]  # most common first; the default first
    domain: Domain


def import_defaults(repository: SkillRepository) -> ImportDefaults:
    """The library's game modules, most common first, and its most common domain (an empty
    library: ra1, AI strategy)."""
    stats = repository.facets.stats()
    modules = [
        module
        for module, _count in sorted(stats.by_game_module.items(), key=lambda item: (-item[1], item[0]))
        if module and module != "(none)"
    ]
    domains = []
    for value, count in stats.by_domain.items():
        try:
            domains.append((count, Domain.parse(value)))
        except ValueError:  # a row another program wrote
            continue
    domain = max(domains, key=lambda item: item[0])[1] if domains else Domain.AI_STRATEGY
    return ImportDefaults(modules or [DEFAULT_GAME_MODULE], domain)


def detect_format(path: Path) -> str:
    if path.is_dir():
        if (path / "skills.json").is_file() and ((path / "code").is_dir() or not (path / "SKILL.md").exists()):
            return "voyager"
        return "skill-md"
    if path.suffix.lower() == ".json":
        return "json"
    if path.suffix.lower() in (".icpkg", ".zip") or zipfile.is_zipfile(path):
        return "icpkg"
    raise refuse(path_name(path), "format not recognised; use --format icpkg|skill-md|json|voyager")


def read_source(
    path: str | Path,
    *,
    fmt: str | None = None,
    strict: bool = False,
    domain: Domain = Domain.AI_STRATEGY,
    game_module: str = DEFAULT_GAME_MODULE,
    progress: Callable[[int, int], None] | None = None,
) -> Source:
    """Read and validate everything at ``path``; PackageError if it is refused.
    ``progress(done, total)`` reports validation of a package's skills."""
    path = Path(path)
    if not path.exists():
        raise refuse(str(path), "does not exist")
    fmt = fmt or detect_format(path)
    if fmt == "icpkg":
        package = read_package(path, progress=progress)
        incoming, origin = incoming_from_package(package)
        return Source(
            path_name(path), fmt, origin, incoming, package, [f"{n.path}: {n.message}" for n in package.notes]
        )
    if fmt == "skill-md":
        from skillstudio.packages.skill_md import read_skill_tree

        incoming, origin, _found = read_skill_tree(path, strict=strict, domain=domain, game_module=game_module)
        return Source(path_name(path), fmt, origin, incoming)
    if fmt == "json":
        from skillstudio.packages.json_library import read_json_library

        incoming, origin = read_json_library(path, domain=domain, game_module=game_module)
        return Source(path_name(path), fmt, origin, incoming)
    if fmt == "voyager":
        from skillstudio.packages.voyager import read_voyager

        incoming, origin = read_voyager(path, domain=domain, game_module=game_module)
        return Source(path_name(path), fmt, origin, incoming)
    raise refuse(str(path), f"unknown format {fmt!r}")


__all__ = [
    "DEFAULT_GAME_MODULE",
    "FORMATS",
    "ImportDefaults",
    "Source",
    "detect_format",
    "import_defaults",
    "read_source",
]
