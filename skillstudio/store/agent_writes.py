"""Each agent's write budget (migration 7, docs/review.md): at most ``limit`` writes per
``window`` seconds, counted in the library itself so that every process of an agent shares it.
"""

from __future__ import annotations

from sqlalchemy import text

from skillstudio.store.database import Database


class AgentWriteBudget:
    """``repository.agent_writes``: slots of ``studio_agent_writes``, taken and given back."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def take(self, agent_id: str, now: float, *, limit: int, window: float) -> int | float:
        """Check and take one of ``agent_id``'s ``limit`` writes per ``window`` seconds, in one
        BEGIN IMMEDIATE transaction on the library.

        Returns the slot's id (give it to :meth:`release` if the write then fails), or, when the
        budget is spent, the seconds to wait as a float."""
        with self.database.write() as session:
            connection = session.connection()
            connection.execute(
                text("DELETE FROM studio_agent_writes WHERE agent_id = :a AND at <= :old"),
                {"a": agent_id, "old": now - window},
            )
            recent = (
                connection.execute(
                    text(
                        "SELECT at FROM studio_agent_writes WHERE agent_id = :a AND at > :old AND at <= :now ORDER BY at"
                    ),
                    {"a": agent_id, "old": now - window, "now": now},
                )
                .scalars()
                .all()
            )
            if len(recent) >= limit:
                return float(window - (now - recent[0]))
            return int(
                connection.execute(
                    text("INSERT INTO studio_agent_writes(agent_id, at) VALUES (:a, :now) RETURNING id"),
                    {"a": agent_id, "now": now},
                ).scalar_one()
            )

    def release(self, slot: int) -> None:
        """Give back a slot whose write failed (nothing was stored: it must not count)."""
        with self.database.write() as session:
            session.connection().execute(text("DELETE FROM studio_agent_writes WHERE id = :id"), {"id": slot})


__all__ = ["AgentWriteBudget"]
