"""One query's ids, packed: a million ids in about 50 MB instead of 160.

A list of a million ids holds a million ``str`` objects (85 bytes each for a UUID) and, to find
an id's row, a dict of them to a million ``int`` objects: about 160 MB in all. :class:`PackedIds`
keeps their UTF-8 text in one ``bytearray``, where each one ends in an ``array``, and finds an
id's row through its hash in a sorted ``numpy`` array: 52 MB for a million UUIDs, built
with a few MB more. An id becomes a ``str`` again only when it is asked for (a table asks for
the rows it paints).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate
from typing import TYPE_CHECKING, overload

if TYPE_CHECKING:
    import numpy as np

_ROW_BITS = 32
_LOW = (1 << _ROW_BITS) - 1


class PackedIds(Sequence[str]):
    """Ids in order (a sequence of ``str``), with :meth:`row_of` answering where one is.

    Built from the ids in chunks (:meth:`from_chunks`), so that nobody holds them all as ``str``
    at once. Ids are expected to be distinct, as a query's are; :meth:`row_of` finds the first."""

    __slots__ = ("_ends", "_index", "_text")

    def __init__(self, text: bytearray, ends: array[int], index: np.ndarray) -> None:
        self._text = text
        self._ends = ends  # id n is _text[_ends[n - 1]:_ends[n]] (from 0 for the first)
        # Per id, its hash's low 32 bits above its row number, sorted: one 8-byte number per id,
        # sorted in place, and an id's candidates are one binary search away.
        self._index = index

    @classmethod
    def from_chunks(cls, chunks: Iterable[Sequence[str]]) -> PackedIds:
        import numpy as np  # only once a large answer is packed: not at start-up

        text = bytearray()
        ends = array("Q")
        keys = array("Q")
        for chunk in chunks:
            encoded = [skill_id.encode() for skill_id in chunk]
            running = accumulate(map(len, encoded), initial=len(text))
            next(running)  # where the previous chunk ended: already there
            rows = np.arange(len(ends), len(ends) + len(chunk), dtype=np.uint64)
            ends.extend(running)
            text += b"".join(encoded)
            hashes = np.fromiter(map(hash, chunk), dtype=np.int64, count=len(chunk)).view(np.uint64)
            keys.frombytes(((hashes & _LOW) << _ROW_BITS | rows).tobytes())
        if len(ends) > _LOW:
            raise ValueError(f"{len(ends):,} ids: PackedIds numbers at most {_LOW:,} rows")
        index = np.frombuffer(keys, dtype=np.uint64)
        index.sort()
        return cls(text, ends, index)

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
        """Where ``skill_id`` is, or None: a binary search for its hash, then a comparison with
        each id of that hash (two ids sharing a hash's 32 bits is rare, not impossible)."""
        wanted = hash(skill_id) & _LOW
        position = int(self._index.searchsorted(self._index.dtype.type(wanted << _ROW_BITS), side="left"))
        while position < len(self._index):
            key = int(self._index[position])
            if key >> _ROW_BITS != wanted:
                break
            row = key & _LOW
            if self._at(row) == skill_id:
                return row
            position += 1
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
