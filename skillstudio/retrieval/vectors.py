"""Vectors as D057 stores them (f32 BLOBs), and an in-memory index of one model's vectors.

The index holds every skill's search vector for one ``model_id`` (the normalised sum of its
description's and its label's directions, docs/retrieval.md) as one float32 matrix, loaded
once, plus the fields retrieval filters on. Before each search it replays the library's
change log (``studio_retrieval_changes``, written by triggers for any writer), so it stays
current after edits, imports, trash and engine writes without reloading 100k vectors.
Malformed vectors (wrong length, NaN, infinity, all zeros) are skipped and reported.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from skillstudio.store.embeddings import EmbeddingStore, VectorColumns

Vector = npt.NDArray[np.float32]
_SERVED_CONFIDENCE = {None, "tentative", "established", "proven"}
# Past this many changed skills a full reload is cheaper than patching rows one by one.
_PATCH_LIMIT = 2_000


def encode_vector(vector: npt.ArrayLike) -> bytes:
    """An f32 little-endian BLOB, D057's serialization."""
    return np.asarray(vector, dtype="<f4").tobytes()


def decode_vector(blob: bytes, dimensions: int) -> Vector | str:
    """The vector in ``blob``, or why it cannot be used."""
    if len(blob) % 4:
        return f"{len(blob)} bytes is not a whole number of f32 values"
    if len(blob) // 4 != dimensions:
        return f"{len(blob) // 4} dimensions, the model has {dimensions}"
    vector = np.frombuffer(blob, dtype="<f4").astype(np.float32)
    if not np.all(np.isfinite(vector)):
        return "contains NaN or infinity"
    if not np.any(vector):
        return "is all zeros"
    return vector


def normalise(matrix: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Rows scaled to unit length (zero rows stay zero)."""
    norms: npt.NDArray[np.float32] = np.sqrt(np.einsum("...i,...i->...", matrix, matrix))[..., None]
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32, copy=False)


@dataclass(frozen=True)
class Similarities:
    """Cosines of a query against every served vector that passes the filters.

    Holds row numbers into the index's id list rather than ids: naming 100k ids would cost more
    than the search itself, and only the top few are ever named."""

    rows: npt.NDArray[np.intp]  # ascending
    cosines: npt.NDArray[np.float32]
    all_ids: list[str]
    # skill id -> its row in all_ids: the index's own map, which later refreshes only append to,
    # so a row it gives is one of these rows or one past them (and then not among ``rows``)
    row_of: Mapping[str, int]

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def ids(self) -> list[str]:
        return [self.all_ids[row] for row in self.rows]

    def of(self, skill_ids: Iterable[str]) -> dict[str, float]:
        """The cosines of those of ``skill_ids`` that have a vector and pass the filters."""
        found: dict[str, float] = {}
        for skill_id in skill_ids:
            row = self.row_of.get(skill_id)
            if row is None:
                continue
            at = int(np.searchsorted(self.rows, row))
            if at < len(self.rows) and self.rows[at] == row:
                found[skill_id] = float(self.cosines[at])
        return found

    def top(self, k: int) -> list[tuple[str, float]]:
        """The ``k`` most similar, best first; equal cosines in id order."""
        if k <= 0 or not len(self.rows):
            return []
        k = min(k, len(self.rows))
        part = np.argpartition(-self.cosines, k - 1)[:k]
        names = np.array([self.all_ids[self.rows[i]] for i in part])
        order = part[np.lexsort((names, -self.cosines[part]))]
        return [(self.all_ids[self.rows[i]], float(self.cosines[i])) for i in order]


class VectorIndex:
    """Every stored vector of one model, normalised, with domain/module/served flags."""

    def __init__(self, store: EmbeddingStore, model_id: str, dimensions: int) -> None:
        self.store, self.model_id, self.dimensions = store, model_id, dimensions
        self._lock = threading.Lock()
        self._loaded = False
        self._cursor = 0
        self._data_version = -1
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        self._matrix = np.zeros((0, dimensions), dtype=np.float32)
        self._codes: dict[str, int] = {}  # domain and module names as small integers
        self._domain = np.zeros(0, dtype=np.int32)
        self._module = np.zeros(0, dtype=np.int32)
        self._live = np.zeros(0, dtype=bool)  # present, valid and served
        self.invalid: dict[str, str] = {}  # skill id -> why its vector was skipped

    def __len__(self) -> int:
        with self._lock:
            self._refresh()
            return int(self._live.sum())

    def similarities(self, query: Vector, *, domain: str | None = None, game_module: str | None = None) -> Similarities:
        """Cosine of ``query`` with every live vector in the domain and module."""
        if query.shape != (self.dimensions,):
            raise ValueError(f"query has shape {query.shape}, the index holds {self.dimensions} dimensions")
        with self._lock:
            self._refresh()
            mask = self._live.copy()
            if domain is not None:
                mask &= self._domain == self._codes.get(domain, -1)
            if game_module is not None:
                mask &= self._module == self._codes.get(game_module, -1)
            rows = np.flatnonzero(mask)
            unit = (query / (np.linalg.norm(query) or 1.0)).astype(np.float32)
            # One product over the whole matrix, then the rows wanted: slicing the matrix first
            # would copy it (100 MB at 100k skills).
            cosines = (self._matrix @ unit)[rows] if len(rows) else np.zeros(0, np.float32)
            all_ids, row_of = self._ids, self._row
        return Similarities(rows, cosines.astype(np.float32, copy=False), all_ids, row_of)

    def has(self, skill_id: str) -> bool:
        with self._lock:
            self._refresh()
            row = self._row.get(skill_id)
            return row is not None and bool(self._live[row])

    # --- keeping current -----------------------------------------------------------------------

    def _refresh(self) -> None:
        if not self._loaded:
            self._full_load()
            return
        # PRAGMA data_version is a few microseconds; the change log is read only after a commit.
        version = self.store.database.data_version()
        if version == self._data_version:
            return
        self._data_version = version
        cursor, changed = self.store.changed_since(self._cursor)
        if changed is None or len(changed) > _PATCH_LIMIT:
            self._full_load()
        elif changed:
            self._patch(changed)
            self._cursor = cursor

    def _full_load(self) -> None:
        """Every vector of the model at once, as columns (per-row Python would take seconds at 100k)."""
        self._data_version = self.store.database.data_version()
        cursor = self.store.change_cursor()  # first: a write racing the load is replayed later
        table = self.store.vector_columns(self.model_id)
        kept, matrix, self.invalid = _search_vectors(table, self.dimensions)
        self._ids = [table.skill_ids[n] for n in kept]
        self._row = {skill_id: i for i, skill_id in enumerate(self._ids)}
        self._matrix = matrix
        self._domain = np.array([self._code(table.domains[n]) for n in kept], dtype=np.int32)
        self._module = np.array([self._code(table.game_modules[n]) for n in kept], dtype=np.int32)
        self._live = np.array([_served(table, n) for n in kept], dtype=bool)
        self._cursor, self._loaded = cursor, True

    def _patch(self, changed: list[str]) -> None:
        """Re-read just these skills' vectors, the same way a full load reads them all."""
        table = self.store.vector_columns(self.model_id, changed)
        kept, matrix, invalid = _search_vectors(table, self.dimensions)
        for skill_id in changed:
            self.invalid.pop(skill_id, None)
        self.invalid.update(invalid)
        fresh = {table.skill_ids[n]: (n, i) for i, n in enumerate(kept)}
        appended: list[tuple[int, int]] = []
        for skill_id in changed:
            at = self._row.get(skill_id)
            if skill_id not in fresh:  # gone, another model's now, or malformed
                if at is not None:
                    self._live[at] = False
                continue
            n, i = fresh[skill_id]
            if at is None:
                appended.append((n, i))
                continue
            self._matrix[at] = matrix[i]
            self._domain[at], self._module[at] = self._code(table.domains[n]), self._code(table.game_modules[n])
            self._live[at] = _served(table, n)
        if appended:
            for n, _i in appended:
                self._row[table.skill_ids[n]] = len(self._ids)
                self._ids.append(table.skill_ids[n])
            self._matrix = np.vstack([self._matrix, matrix[[i for _n, i in appended]]])
            domains = np.array([self._code(table.domains[n]) for n, _i in appended], dtype=np.int32)
            modules = np.array([self._code(table.game_modules[n]) for n, _i in appended], dtype=np.int32)
            self._domain = np.concatenate([self._domain, domains])
            self._module = np.concatenate([self._module, modules])
            self._live = np.concatenate([self._live, np.array([_served(table, n) for n, _i in appended], dtype=bool)])

    def _code(self, name: str) -> int:
        return self._codes.setdefault(name, len(self._codes))


def _search_vectors(table: VectorColumns, dimensions: int) -> tuple[list[int], npt.NDArray[np.float32], dict[str, str]]:
    """(positions in ``table`` of the usable vectors, their search vectors, why the others were skipped).

    A skill's search vector is its description's direction plus its label's (name and tags) when
    that one is usable too, normalised; checked row-wise by numpy over one buffer."""
    invalid: dict[str, str] = {}
    width = 4 * dimensions
    sized = [n for n, blob in enumerate(table.blobs) if len(blob) == width]
    for n, blob in enumerate(table.blobs):
        if len(blob) != width:
            invalid[table.skill_ids[n]] = str(decode_vector(blob, dimensions))
    described = _matrix([table.blobs[n] for n in sized], dimensions)
    usable: list[bool] = np.asarray(np.isfinite(described).all(axis=1) & described.any(axis=1)).tolist()
    for n, ok in zip(sized, usable, strict=True):
        if not ok:
            invalid[table.skill_ids[n]] = str(decode_vector(table.blobs[n], dimensions))
    kept = [n for n, ok in zip(sized, usable, strict=True) if ok]
    matrix = normalise(described[np.asarray(usable, dtype=bool)]) if kept else described[:0]
    labelled = [i for i, n in enumerate(kept) if len(table.label_blobs[n] or b"") == width]
    if labelled:
        labels = _matrix([table.label_blobs[kept[i]] or b"" for i in labelled], dimensions)
        fine = np.isfinite(labels).all(axis=1) & labels.any(axis=1)
        matrix[np.asarray(labelled)[fine]] += normalise(labels[fine])
    return kept, normalise(matrix), invalid


def _matrix(blobs: list[bytes], dimensions: int) -> npt.NDArray[np.float32]:
    """Equal-length f32 blobs as one (n, dimensions) matrix."""
    if not blobs:
        return np.zeros((0, dimensions), np.float32)
    return np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), dimensions).astype(np.float32)


def _served(table: VectorColumns, n: int) -> bool:
    return table.review_states[n] != "rejected" and table.confidences[n] in _SERVED_CONFIDENCE


__all__ = ["Similarities", "Vector", "VectorIndex", "decode_vector", "encode_vector", "normalise"]
