"""Risk findings (migration 5, docs/review.md): what the linter found in a skill, stored with the
content version it linted. Computed data: storing them writes no revision, no audit entry and
announces nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, insert, select

from skillstudio.model import utc_now
from skillstudio.store.database import Database
from skillstudio.store.orm import RiskFindingRow
from skillstudio.store.query import chunks
from skillstudio.store.types import RiskFinding


class Findings:
    """``repository.findings``: each skill's stored risk findings."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def set(self, skill_id: str, findings: Sequence[RiskFinding], *, version: int = 0) -> None:
        """Replace the skill's stored findings with these, computed for content ``version``."""
        now = utc_now()
        with self.database.write() as session:
            session.execute(delete(RiskFindingRow).where(RiskFindingRow.skill_id == skill_id))
            rows = [
                {
                    "skill_id": skill_id,
                    "position": position,
                    "rule": f.rule,
                    "severity": f.severity,
                    "reason": f.reason,
                    "field": f.field,
                    "start": f.start,
                    "end": f.end,
                    "excerpt": f.excerpt,
                    "version": version,
                    "linted_at": now,
                }
                for position, f in enumerate(findings)
            ]
            if rows:
                session.execute(insert(RiskFindingRow), rows)

    def version(self, skill_id: str) -> int | None:
        """The content version the stored findings were computed for (None: none stored)."""
        with self.database.read() as session:
            return session.scalar(select(RiskFindingRow.version).where(RiskFindingRow.skill_id == skill_id).limit(1))

    def get(self, skill_id: str) -> list[RiskFinding]:
        return self.many([skill_id]).get(skill_id, [])

    def many(self, ids: Sequence[str]) -> dict[str, list[RiskFinding]]:
        """The stored findings of these skills, by id, in the linter's order; skills without
        any are left out."""
        out: dict[str, list[RiskFinding]] = {}
        with self.database.read() as session:
            for chunk in chunks(ids):
                rows = session.scalars(
                    select(RiskFindingRow)
                    .where(RiskFindingRow.skill_id.in_(chunk))
                    .order_by(RiskFindingRow.skill_id, RiskFindingRow.position)
                )
                for r in rows:
                    out.setdefault(r.skill_id, []).append(
                        RiskFinding(r.rule, r.severity, r.reason, r.field, r.start, r.end, r.excerpt)
                    )
        return out


__all__ = ["Findings"]
