"""Building packages, valid and hostile, for the package tests."""

from __future__ import annotations

import hashlib
import io
import stat
import warnings
import zipfile
from collections.abc import Callable, Iterable
from typing import Any

import yaml

from skillstudio.packages.icpkg import PackageMeta, export_package
from skillstudio.store import SkillRepository
from tests import factories

META = PackageMeta("ra1-naval", "kessler", "1.2.0", description="Naval patterns")


def sample_skills() -> list:
    return [factories.ai_skill(), factories.content_skill(), factories.example_skill(), factories.instructions_skill()]


def entries_of(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def rezip(
    entries: Iterable[tuple[str, bytes]] | dict[str, bytes],
    *,
    info: Callable[[zipfile.ZipInfo], None] | None = None,
    compress: int = zipfile.ZIP_DEFLATED,
) -> bytes:
    items = list(entries.items()) if isinstance(entries, dict) else list(entries)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names are the point of some tests
        with zipfile.ZipFile(buffer, "w") as archive:
            for name, data in items:
                zinfo = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                zinfo.compress_type = compress
                zinfo.external_attr = (stat.S_IFREG | 0o644) << 16
                if info is not None:
                    info(zinfo)
                archive.writestr(zinfo, data)
    return buffer.getvalue()


def manifest_of(entries: dict[str, bytes]) -> dict[str, Any]:
    return yaml.safe_load(entries["manifest.yaml"])


def with_manifest(
    entries: dict[str, bytes], change: Callable[[dict[str, Any]], None], *, rehash: bool = True
) -> dict[str, bytes]:
    """Entries with the manifest changed; ``rehash`` recomputes ``files`` for the other entries."""
    out = dict(entries)
    manifest = manifest_of(out)
    if rehash:
        manifest["package"]["files"] = {
            name: {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
            for name, data in sorted(out.items())
            if name != "manifest.yaml"
        }
    change(manifest)
    out["manifest.yaml"] = yaml.safe_dump(manifest, sort_keys=False).encode()
    return out


def valid_package(skills: list | None = None) -> bytes:
    return export_package(skills or sample_skills(), META)


def library_state(repository: SkillRepository) -> tuple:
    """Everything an import could change, to prove a refused import changed nothing."""
    with repository.database.read() as session:
        connection = session.connection()
        tables = (
            "skills",
            "studio_skill_meta",
            "studio_revisions",
            "studio_audit_log",
            "studio_trash",
            "studio_skill_extras",
            "studio_verifications",
            "skill_compositions",
        )
        return tuple(
            tuple(map(tuple, connection.exec_driver_sql(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()))
            for table in tables
        )
