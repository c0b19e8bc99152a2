"""How a revision's snapshot is stored: the skill document as JSON, zlib-compressed.

Migration 14 moved ``studio_revisions.snapshot`` from JSON text to this (issue 17: snapshots
were half of a library's file). Everything that writes or reads a revision's snapshot goes
through :func:`encode_snapshot` and :func:`decode_snapshot`; zlib is in every Python and every
database stores the bytes as a BLOB (``bytea`` on PostgreSQL).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping

from skillstudio.store.types import JsonObject

# zlib's fastest level: on skill documents (~2.7 KB of JSON, ~1.3 KB compressed) level 6 saves
# only ~4% more and takes about twice as long, and a bulk create compresses every new skill.
SNAPSHOT_COMPRESSION = 1


def encode_snapshot(document: Mapping[str, object]) -> bytes:
    """A revision's stored snapshot: the document as key-sorted JSON, compressed."""
    return compress_snapshot_text(json.dumps(document, ensure_ascii=False, sort_keys=True))


def compress_snapshot_text(text: str) -> bytes:
    """A snapshot already serialised as JSON text (how revisions were stored before migration 14)."""
    return zlib.compress(text.encode("utf-8"), SNAPSHOT_COMPRESSION)


def decode_snapshot(stored: bytes) -> JsonObject:
    """The document a stored snapshot holds: the one reader of ``studio_revisions.snapshot``."""
    document: JsonObject = json.loads(zlib.decompress(stored).decode("utf-8"))  # we wrote it: an object
    return document


__all__ = ["SNAPSHOT_COMPRESSION", "compress_snapshot_text", "decode_snapshot", "encode_snapshot"]
