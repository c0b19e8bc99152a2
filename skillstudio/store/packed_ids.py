"""One query's ids, packed: a million ids in tens of megabytes instead of hundreds.

A list of a million ids holds a million ``str`` objects (85 bytes each for a UUID) and, to find
an id's row, a dict of them to a million ``int`` objects: about 200 MB in all. :class:`PackedIds`
keeps their UTF-8 text in one ``bytes``, where each one ends in an ``array``, and finds an id's
row through its hash in a sorted ``numpy`` array: about 56 MB for a million UUIDs. An id becomes
a ``str`` again only when it is asked for (a table asks for the rows it paints).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate
from typing import TYPE_CHECKING, overload

if TYPE_CHECKING:
    import numpy as np


class PackedIds(Sequence[str]):
    """Ids in order (a sequence of ``str``), with :meth:`row_of` answering where one is.

    Built from the ids in chunks (:meth:`from_chunks`), so that nobody holds them all as ``str``
    at once. Ids are expected to be distinct, as a query's are; :meth:`row_of` finds the first."""

    __slots__ = ("_ends", "_hashes", "_rows", "_text")

    def __init__(self, text: bytes, ends: array[int], hashes: np.ndarray, rows: np.ndarray) -> None:
        self._text = text
        self._ends = ends  # id n is _text[_ends[n - 1]:_ends[n]] (from 0 for the first)
        self._hashes = hashes  # every id's hash(), sorted
        self._rows = rows  # the row of each of those hashes' ids

    @classmethod
    def from_chunks(cls, chunks: Iterable[Sequence[str]]) -> PackedIds:
        import numpy as np  # only once a large answer is packed: not at start-up

        parts: list[bytes] = []
        ends = array("Q")
        hashes = array("q")
        end = 0
        for chunk in chunks:
            encoded = [skill_id.encode() for skill_id in chunk]
            running = accumulate(map(len, encoded), initial=end)
            next(running)  # the previous chunk's end: already there
            ends.extend(running)
            end = ends[-1] if ends else 0
            parts.append(b"".join(encoded))
            hashes.extend(map(hash, chunk))
        by_hash = np.frombuffer(hashes, dtype=np.int64)
        rows = np.argsort(by_hash, kind="stable").astype(np.int32 if len(hashes) < 2**31 else np.int64)
        return cls(b"".join(parts), ends, by_hash[rows], rows)

    @classmethod
    def of(cls, ids: Iterable[str]) -> PackedIds:
        return cls.from_chunks([list(ids)])

    def __len__(self) -> int:
        return len(self._ends)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self._at(row) for row in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("id index out of range")
        return self._at(index)

    def _at(self, row: int) -> str:
        start = self._ends[row - 1] if row else 0
        return self._text[start : self._ends[row]].decode()

    def __iter__(self) -> Iterator[str]:
        start = 0
        for end in self._ends:
            yield self._text[start:end].decode()
            start = end

    def row_of(self, skill_id: str) -> int | None:
        """Where ``skill_id`` is, or None: a binary search among the hashes, then a comparison
        with each id of that hash (a collision of two ids' hashes is rare, not impossible)."""
        wanted = hash(skill_id)
        first = int(self._hashes.searchsorted(wanted, side="left"))
        for position in range(first, len(self._hashes)):
            if self._hashes[position] != wanted:
                break
            row = int(self._rows[position])
            if self._at(row) == skill_id:
                return row
        return None

    def __contains__(self, value: object) -> bool:
        return isinstance(value, str) and self.row_of(value) is not None

    def index(self, value: object, start: int = 0, stop: int | None = None) -> int:
        row = self.row_of(value) if isinstance(value, str) else None
        if row is None or row < start or (stop is not None and row >= stop):
            raise ValueError(f"{value!r} is not in the ids")
        return row

    def __repr__(self) -> str:
        return f"PackedIds({len(self):,} ids)"


__all__ = ["PackedIds"]
