"""Sharing skills: Workshop packages (``.icpkg``), the Agent Skills ``SKILL.md`` format, seed 003's
JSON library, Voyager libraries, and D057's pruning. Qt-free; see docs/packages.md.

Everything read here comes from outside and is untrusted: readers validate a whole input before
anything touches the library, and :mod:`skillstudio.packages.importer` applies it in one
transaction.
"""

from skillstudio.packages.errors import PackageError
from skillstudio.packages.icpkg import PackageMeta, export_package, read_package
from skillstudio.packages.importer import ImportPlan, apply_plan, plan_import
from skillstudio.packages.privacy import Finding, redact_skill, scan_skill

__all__ = [
    "Finding",
    "ImportPlan",
    "PackageError",
    "PackageMeta",
    "apply_plan",
    "export_package",
    "plan_import",
    "read_package",
    "redact_skill",
    "scan_skill",
]
