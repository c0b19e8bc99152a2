"""The audit log as CSV (the CLI's ``audit --csv`` and the GUI's export)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence

from skillstudio.store import AuditEntry

AUDIT_COLUMNS = ("id", "at", "actor", "actor_kind", "action", "skill_id", "revision", "details")


def audit_csv(entries: Sequence[AuditEntry]) -> str:
    """The audit entries as CSV: one header row, then one row per entry, details as JSON."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(AUDIT_COLUMNS)
    for e in entries:
        writer.writerow(
            [
                e.id,
                e.at,
                e.actor,
                e.actor_kind,
                e.action,
                e.skill_id or "",
                "" if e.revision is None else e.revision,
                json.dumps(e.details, ensure_ascii=False, sort_keys=True),
            ]
        )
    return buffer.getvalue()
