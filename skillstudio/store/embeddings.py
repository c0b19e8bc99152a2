"""D057's ``skill_embeddings``, read and written for retrieval (docs/retrieval.md).

Each skill has up to two vectors of one model: its description's, in D057's table exactly as
the engine reads it, and its label's (name and tags) in ``studio_label_embeddings``; retrieval
combines the two. Vectors are derived data: storing one writes no revision, and a whole batch writes one audit
entry. Freshness lives in ``studio_embedding_meta`` (the hash of the description a vector was
computed from; a trigger blanks it whenever any writer changes the description), and every
change that matters to an in-memory vector index is logged in ``studio_retrieval_changes`` by
triggers, so an index can catch up with writes from any process by reading a few rows.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, Row, text

from skillstudio.store.database import Database
from skillstudio.store.events import AuditAction
from skillstudio.store.orm import SkillEmbeddingRow
from skillstudio.store.query import id_lists
from skillstudio.store.skill_rows import load_skill
from skillstudio.store.types import Actor, EmbeddingInfo, EmbeddingStatus, JsonInput, PendingText, VectorColumns
from skillstudio.store.unit_of_work import unit_of_work

# The change log is pruned past this many rows; an index further behind reloads in full.
CHANGE_LOG_KEEP = 20_000


def description_hash(description: str) -> str:
    return hashlib.sha256(description.encode("utf-8", "surrogatepass")).hexdigest()


def label_text(name: object, tags_json: object) -> str:
    """What a label vector is computed from: the name, then the tags (read defensively)."""
    tags: list[str] = []
    if isinstance(tags_json, str):
        try:
            value = json.loads(tags_json)
        except ValueError:
            value = []
        if isinstance(value, list):
            tags = [tag for tag in value if isinstance(tag, str)]
    name_text = name if isinstance(name, str) else ""
    return f"{name_text}. {' '.join(tags)}".strip() if tags else name_text


_VECTOR_SQL = (
    "SELECT e.skill_id, e.embedding, s.domain, s.game_module, s.confidence, m.review_state,"
    " CASE WHEN l.model_id = e.model_id THEN l.embedding END"
    " FROM skill_embeddings e JOIN skills s ON s.id = e.skill_id"
    " LEFT JOIN studio_skill_meta m ON m.skill_id = e.skill_id"
    " LEFT JOIN studio_label_embeddings l ON l.skill_id = e.skill_id WHERE e.model_id = :model"
)


@dataclass(frozen=True)
class _Freshness:
    skill_id: str
    description: object  # as stored: an engine may have written anything
    label: str
    description_state: str  # current | stale | missing
    label_current: bool
    other_model: str | None  # the model of a description vector that is not this one


class EmbeddingStore:
    """``repository.embeddings``: reads and (batch) writes of vectors."""

    def __init__(self, database: Database, actor: Actor) -> None:
        self.database = database
        self.actor = actor

    # --- reading -------------------------------------------------------------------------------

    def get(self, skill_id: str) -> tuple[bytes, str] | None:
        """The skill's description vector (f32 blob) and its model, as D057's table holds them."""
        with self.database.read() as session:
            row = session.get(SkillEmbeddingRow, skill_id)
            return None if row is None else (row.embedding, row.model_id)

    def info(self, skill_id: str) -> EmbeddingInfo | None:
        with self.database.read() as session:
            row = session.execute(
                text(
                    "SELECT e.model_id, length(e.embedding), s.description, m.model_id, m.description_sha256,"
                    " m.embedded_at, s.name, s.tags, l.model_id, l.text_sha256"
                    " FROM skill_embeddings e JOIN skills s ON s.id = e.skill_id"
                    " LEFT JOIN studio_embedding_meta m ON m.skill_id = e.skill_id"
                    " LEFT JOIN studio_label_embeddings l ON l.skill_id = e.skill_id WHERE e.skill_id = :id"
                ),
                {"id": skill_id},
            ).first()
        if row is None:
            return None
        model_id, size, description, meta_model, digest, embedded_at, name, tags, label_model, label_digest = row
        size = int(size or 0)
        current = _is_current(str(model_id), description, meta_model, digest)
        label_current = label_model == model_id and label_digest == description_hash(label_text(name, tags))
        return EmbeddingInfo(
            str(model_id), size // 4 if size % 4 == 0 else None, current, embedded_at or None, label_current
        )

    def status(self, model_id: str) -> EmbeddingStatus:
        total = current = stale = 0
        others: dict[str, int] = {}
        for item in self._freshness(model_id):
            total += 1
            if item.description_state == "current" and item.label_current:
                current += 1
            elif item.description_state != "missing":
                stale += 1
            elif item.other_model is not None:
                others[item.other_model] = others.get(item.other_model, 0) + 1
        return EmbeddingStatus(model_id, total, current, stale, total - current - stale, dict(sorted(others.items())))

    def pending(
        self, model_id: str, *, everything: bool = False, ids: Sequence[str] | None = None
    ) -> list[PendingText]:
        """Skills whose vectors for ``model_id`` are missing or stale (all of them with
        ``everything``), by id, so an interrupted run resumes simply by asking again."""
        out = []
        for item in self._freshness(model_id, ids):
            needs_description = everything or item.description_state != "current"
            needs_label = everything or not item.label_current
            if needs_description or needs_label:
                description = item.description if isinstance(item.description, str) else ""
                out.append(PendingText(item.skill_id, description, item.label, needs_description, needs_label))
        return out

    def _freshness(self, model_id: str, ids: Sequence[str] | None = None) -> Iterator[_Freshness]:
        """How current each skill's vectors are for ``model_id`` (every skill, or these)."""
        sql = (
            "SELECT s.id, s.description, e.model_id, m.model_id, m.description_sha256, s.name, s.tags,"
            " l.model_id, l.text_sha256 FROM skills s"
            " LEFT JOIN skill_embeddings e ON e.skill_id = s.id"
            " LEFT JOIN studio_embedding_meta m ON m.skill_id = s.id"
            " LEFT JOIN studio_label_embeddings l ON l.skill_id = s.id"
        )
        rows: list[tuple[object, ...]] = []
        with self.database.read() as session:
            connection = session.connection()
            if ids is None:
                rows.extend(tuple(row) for row in connection.execute(text(sql + " ORDER BY s.id")))
            else:
                for marks, params in id_lists(sorted(set(ids))):
                    rows.extend(
                        tuple(row) for row in connection.execute(text(f"{sql} WHERE s.id IN ({marks})"), params)
                    )
        for skill_id, description, vector_model, meta_model, digest, name, tags, label_model, label_digest in rows:
            label = label_text(name, tags)
            label_current = label_model == model_id and label_digest == description_hash(label)
            other = None
            if vector_model is None:
                state = "missing"
            elif vector_model != model_id:
                state, other = "missing", str(vector_model)
            elif _is_current(model_id, description, meta_model, digest):
                state = "current"
            else:
                state = "stale"
            yield _Freshness(str(skill_id), description, label, state, label_current, other)

    def vector_columns(self, model_id: str, ids: Sequence[str] | None = None) -> VectorColumns:
        """The stored vectors of ``model_id`` (of these skills only, if given) as columns: the fast
        way to load 100k of them."""
        rows: list[Row[tuple[object, ...]]] = []
        with self.database.read() as session:
            connection = session.connection()
            if ids is None:
                rows = list(connection.execute(text(_VECTOR_SQL), {"model": model_id}).fetchall())
            else:
                for marks, params in id_lists(list(ids)):
                    sql = f"{_VECTOR_SQL} AND e.skill_id IN ({marks})"
                    rows.extend(connection.execute(text(sql), {**params, "model": model_id}).fetchall())
        if not rows:
            return VectorColumns([], [], [], [], [], [], [])
        ids, blobs, domains, modules, confidences, reviews, labels = (
            list(column) for column in zip(*rows, strict=True)
        )
        return VectorColumns(
            [str(i) for i in ids],
            [bytes(b) if isinstance(b, bytes | bytearray | memoryview) else b"" for b in blobs],
            [str(d) for d in domains],
            [str(m) for m in modules],
            [c if isinstance(c, str) else None for c in confidences],
            [r if isinstance(r, str) else None for r in reviews],
            [bytes(b) if isinstance(b, bytes | bytearray | memoryview) else None for b in labels],
        )

    def change_cursor(self) -> int:
        """The newest entry of the change log (0 when empty): where an index starts listening."""
        with self.database.read() as session:
            return int(session.execute(text("SELECT COALESCE(MAX(seq), 0) FROM studio_retrieval_changes")).scalar_one())

    def changed_since(self, cursor: int) -> tuple[int, list[str] | None]:
        """(new cursor, skills changed after ``cursor``), or None for the list when the log no longer
        reaches back that far (pruned), so the caller must reload everything."""
        with self.database.read() as session:
            lowest, highest = session.execute(text("SELECT MIN(seq), MAX(seq) FROM studio_retrieval_changes")).one()
            if highest is None or highest <= cursor:
                return cursor, []
            if lowest is not None and lowest > cursor + 1:
                return int(highest), None
            ids = (
                session.execute(
                    text("SELECT DISTINCT skill_id FROM studio_retrieval_changes WHERE seq > :c AND seq <= :h"),
                    {"c": cursor, "h": highest},
                )
                .scalars()
                .all()
            )
        return int(highest), list(ids)

    # --- writing -------------------------------------------------------------------------------

    def put(self, skill_id: str, embedding: bytes, model_id: str) -> None:
        """Store one description vector (f32 array) for the skill's current description.

        A vector is derived data: it writes an audit entry but no revision (docs/retrieval.md).
        SkillNotFound (or InvalidStoredSkill) if the skill cannot be read."""
        with self.database.read() as session:
            description = load_skill(session, skill_id).description
        self.put_many(model_id, [(skill_id, embedding, description_hash(description))])

    def put_many(
        self,
        model_id: str,
        items: Sequence[tuple[str, bytes, str]],
        labels: Sequence[tuple[str, bytes, str]] = (),
    ) -> int:
        """Store description vectors (skill id, f32 blob, description hash) and label vectors (skill
        id, f32 blob, label-text hash) in one transaction.

        Skills deleted meanwhile are skipped (the vector would point at nothing); the number of
        skills that got a vector is returned. One audit entry names the model and the count.
        """
        if not items and not labels:
            return 0
        with unit_of_work(self.database, self.actor, AuditAction.EMBED) as work:
            connection = work.session.connection()
            present = _present(connection, [item[0] for item in items] + [item[0] for item in labels])
            rows = [
                {"id": skill_id, "blob": blob, "model": model_id, "hash": digest, "at": work.now}
                for skill_id, blob, digest in items
                if skill_id in present
            ]
            label_rows = [
                {"id": skill_id, "blob": blob, "model": model_id, "hash": digest, "at": work.now}
                for skill_id, blob, digest in labels
                if skill_id in present
            ]
            if rows:
                connection.execute(
                    text(
                        "INSERT INTO skill_embeddings(skill_id, embedding, model_id) VALUES (:id, :blob, :model)"
                        " ON CONFLICT (skill_id) DO UPDATE SET embedding = excluded.embedding, model_id = excluded.model_id"
                    ),
                    rows,
                )
                connection.execute(
                    text(
                        "INSERT INTO studio_embedding_meta(skill_id, model_id, description_sha256, embedded_at)"
                        " VALUES (:id, :model, :hash, :at) ON CONFLICT (skill_id) DO UPDATE SET"
                        " model_id = excluded.model_id, description_sha256 = excluded.description_sha256,"
                        " embedded_at = excluded.embedded_at"
                    ),
                    rows,
                )
            if label_rows:
                connection.execute(
                    text(
                        "INSERT INTO studio_label_embeddings(skill_id, model_id, embedding, text_sha256, embedded_at)"
                        " VALUES (:id, :model, :blob, :hash, :at) ON CONFLICT (skill_id) DO UPDATE SET"
                        " model_id = excluded.model_id, embedding = excluded.embedding,"
                        " text_sha256 = excluded.text_sha256, embedded_at = excluded.embedded_at"
                    ),
                    label_rows,
                )
            stored = list(dict.fromkeys([str(row["id"]) for row in rows] + [str(row["id"]) for row in label_rows]))
            if stored:  # one entry for the batch, naming the skill when there is one
                details: dict[str, JsonInput] = {"model_id": model_id, "count": len(stored)}
                work.audit(AuditAction.EMBED, stored[0] if len(stored) == 1 else None, None, details)
                work.touch(stored)
            _prune_change_log(connection)
        return len(stored)


def _present(connection: Connection, ids: Sequence[str]) -> set[str]:
    present: set[str] = set()
    for marks, params in id_lists(list(dict.fromkeys(ids))):
        present.update(connection.execute(text(f"SELECT id FROM skills WHERE id IN ({marks})"), params).scalars())
    return present


def _is_current(model_id: str, description: object, meta_model: object, digest: object) -> bool:
    if meta_model is None:  # written by another program along with its description: trusted
        return True
    if meta_model != model_id or not isinstance(description, str):
        return False
    return digest == description_hash(description)


def _prune_change_log(connection: Connection) -> None:
    connection.execute(
        text(
            "DELETE FROM studio_retrieval_changes WHERE seq <= (SELECT MAX(seq) FROM studio_retrieval_changes) - :keep"
        ),
        {"keep": CHANGE_LOG_KEEP},
    )


__all__ = [
    "CHANGE_LOG_KEEP",
    # the result types live in types.py; importable from here as before
    "EmbeddingInfo",
    "EmbeddingStatus",
    "EmbeddingStore",
    "PendingText",
    "VectorColumns",
    "description_hash",
    "label_text",
]
