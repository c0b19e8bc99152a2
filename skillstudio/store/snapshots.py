"""How a revision's snapshot is stored: the skill document as JSON, zlib-compressed.

Migration 14 moved ``studio_revisions.snapshot`` from JSON text to this (issue 17: snapshots
were half of a library's file). Everything that writes or reads a revision's snapshot goes
through :func:`encode_snapshot` and :func:`decode_snapshot`; zlib is in every Python and every
database stores the bytes as a BLOB (``bytea`` on PostgreSQL).
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from skillstudio.model.document import serde_body_to_json
from skillstudio.store.types import JsonObject

# zlib's fastest level: on skill documents (~2.7 KB of JSON, ~1.3 KB compressed) level 6 saves
# only ~4% more and takes about twice as long, and a bulk create compresses every new skill.
SNAPSHOT_COMPRESSION = 1


def encode_snapshot(document: Mapping[str, object], *, body_json: str | None = None) -> bytes:
    """A revision's stored snapshot: the document as JSON, compressed. Its keys are sorted,
    except that its ``body`` comes first, as D057's ``body_json`` writes it; ``body_json``: that
    text (:func:`~skillstudio.model.document.serde_body_to_json` of the body), when the caller
    made it already for the skill's row."""
    return _compress(_json(document, body_json))


def _compress(data: bytes) -> bytes:
    return zlib.compress(data, SNAPSHOT_COMPRESSION)


def _json(document: Mapping[str, object], body_json: str | None = None) -> bytes:
    # The body is most of a document, and a write serialises it for the row anyway (body_json):
    # the snapshot reuses that text, so an import of 10,000 skills serialises each body once.
    serde = document.get("body")
    if not isinstance(serde, Mapping):  # a raw row's snapshot (UnitOfWork.raw_revision)
        return json.dumps(document, ensure_ascii=False, sort_keys=True).encode("utf-8")
    body = serde_body_to_json(serde) if body_json is None else body_json
    rest = json.dumps(
        {key: value for key, value in document.items() if key != "body"}, ensure_ascii=False, sort_keys=True
    )
    return f'{{"body": {body}{", " if len(rest) > 2 else ""}{rest[1:]}'.encode()


# Below this many, snapshots are compressed on the calling thread: threads do not pay for a few.
PARALLEL_FROM = 256
_BATCH = 128  # snapshots per task: a task per snapshot cost as much as compressing it


def encode_snapshots(
    documents: Sequence[Mapping[str, object]],
    *,
    body_jsons: Sequence[str | None] | None = None,
    meanwhile: Callable[[], object] | None = None,
) -> list[bytes]:
    """:func:`encode_snapshot` of each document (with its ``body_json`` from ``body_jsons``, where
    given), in order. Many are compressed by a few threads
    (zlib releases the GIL while it works): a bulk create of 10,000 skills spent 0.4 s on it.
    ``meanwhile`` runs on this thread while they compress: work that leaves the GIL too, such as
    SQLite building an index, overlaps with them. (Encoding the JSON on the threads as well was
    slower: it holds the GIL.)"""
    bodies = [None] * len(documents) if body_jsons is None else body_jsons
    texts = [_json(document, body) for document, body in zip(documents, bodies, strict=True)]
    if len(texts) < PARALLEL_FROM:
        if meanwhile is not None:
            meanwhile()
        return _compress_all(texts)
    batches = [texts[start : start + _BATCH] for start in range(0, len(texts), _BATCH)]
    with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        compressed = pool.map(_compress_all, batches)  # every batch is submitted here
        if meanwhile is not None:
            meanwhile()
        return [snapshot for batch in compressed for snapshot in batch]


def _compress_all(texts: Sequence[bytes]) -> list[bytes]:
    return [_compress(text) for text in texts]


def compress_snapshot_text(text: str) -> bytes:
    """A snapshot already serialised as JSON text (how revisions were stored before migration 14)."""
    return _compress(text.encode("utf-8"))


def decode_snapshot(stored: bytes) -> JsonObject:
    """The document a stored snapshot holds: the one reader of ``studio_revisions.snapshot``."""
    document: JsonObject = json.loads(zlib.decompress(stored).decode("utf-8"))  # we wrote it: an object
    return document


__all__ = ["SNAPSHOT_COMPRESSION", "compress_snapshot_text", "decode_snapshot", "encode_snapshot", "encode_snapshots"]
