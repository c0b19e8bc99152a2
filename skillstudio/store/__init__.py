"""The library store: D057's SQLite tables, our extension tables, and the repository API."""

from skillstudio.store.database import Database
from skillstudio.store.errors import (
    ConflictError,
    InvalidSkillData,
    InvalidStoredSkill,
    LibraryBusy,
    LibraryError,
    LibraryNotFound,
    LibraryTooNew,
    NotALibrary,
    SkillExists,
    SkillNotFound,
    StorageError,
)
from skillstudio.store.events import ChangeBus, LibraryChange
from skillstudio.store.query import QueryResult, SkillQuery, SortKey, fts_expression
from skillstudio.store.repository import (
    Actor,
    AuditEntry,
    Composition,
    ImportItem,
    LibraryStats,
    ReviewDecision,
    ReviewNotAllowed,
    Revision,
    RiskFinding,
    SkillExtras,
    SkillRepository,
    SkillSummary,
    TrashEntry,
    body_hash,
)

__all__ = [
    "Actor", "AuditEntry", "ChangeBus", "LibraryChange", "Composition", "ConflictError", "ImportItem", "SkillExtras", "Database", "InvalidSkillData",
    "InvalidStoredSkill", "LibraryBusy", "LibraryError", "LibraryNotFound", "LibraryStats", "LibraryTooNew",
    "NotALibrary", "QueryResult", "ReviewDecision", "ReviewNotAllowed", "Revision", "RiskFinding", "SkillExists", "SkillNotFound", "SkillQuery",
    "SkillRepository", "SkillSummary", "SortKey", "StorageError", "TrashEntry", "body_hash", "fts_expression",
]  # fmt: skip
