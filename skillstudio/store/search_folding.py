"""The accents SQLite's keyword search ignores, for PostgreSQL's search to ignore them too.

FTS5's unicode61 tokenizer (D057's ``skills_fts``, ``remove_diacritics=1``) finds "café" for
"cafe": it folds Latin letters with one diacritic to their base letter and drops the common
combining marks (so a decomposed "cafe" + U+0301 is "cafe" too). PostgreSQL has no such
tokenizer, so a team library folds the same letters itself (``studio_search_words``,
migration 15) and the query's words are folded here. The table is read from SQLite's own
tokenizer, not written out: SQLite is the reference whose behaviour the two backends share.
"""

from __future__ import annotations

import sqlite3
import unicodedata
from dataclasses import dataclass
from functools import cache

# The Latin letters with diacritics (Latin-1 Supplement, Extended-A and -B, Extended
# Additional) and the combining diacritical marks: where unicode61 folds or drops characters.
_LATIN_RANGES = ((0x00C0, 0x024F), (0x1E00, 0x1EFF))
_COMBINING_MARKS = (0x0300, 0x036F)


@dataclass(frozen=True)
class Folding:
    """Each folded letter with its base letter (``letters`` to ``bases``, one for one), and
    the combining marks dropped; as ``translate`` takes them, in Python and PostgreSQL."""

    letters: str
    bases: str
    dropped_marks: str

    def fold(self, text: str) -> str:
        """``text`` lower-cased, accents folded as unicode61 folds them."""
        return text.lower().translate(_table(self))


@cache
def _table(folding: Folding) -> dict[int, int | None]:
    table: dict[int, int | None] = {ord(a): ord(b) for a, b in zip(folding.letters, folding.bases, strict=True)}
    table.update(dict.fromkeys(map(ord, folding.dropped_marks)))
    return table


def _tokens(samples: list[str]) -> dict[int, list[str]]:
    """unicode61's tokens of each sample, by the sample's position."""
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute("CREATE VIRTUAL TABLE sample USING fts5(text)")
        connection.execute("CREATE VIRTUAL TABLE sample_terms USING fts5vocab(sample, 'instance')")
        connection.executemany("INSERT INTO sample(rowid, text) VALUES (?, ?)", enumerate(samples, start=1))
        out: dict[int, list[str]] = {}
        for row, term in connection.execute("SELECT doc, term FROM sample_terms ORDER BY doc, offset"):
            out.setdefault(row - 1, []).append(term)
        return out
    finally:
        connection.close()


@cache
def unicode61_folding() -> Folding:
    """What unicode61 folds, read from SQLite: each letter it turns into another single letter
    than its lower case (``É`` and ``é`` to ``e``), and each combining mark it drops from inside
    a word (the other marks separate words, as PostgreSQL's word pattern does already)."""
    letters = [
        chr(code)
        for first, last in _LATIN_RANGES
        for code in range(first, last + 1)
        if unicodedata.category(chr(code)).startswith("L")
    ]
    marks = [chr(code) for code in range(_COMBINING_MARKS[0], _COMBINING_MARKS[1] + 1)]
    tokens = _tokens(letters + [f"q{mark}q" for mark in marks])
    folded: dict[str, str] = {}
    for index, letter in enumerate(letters):
        token = tokens.get(index, [])
        if len(token) == 1 and len(token[0]) == 1 and token[0] != letter.lower():
            folded[letter] = token[0]
            if len(letter.lower()) == 1:
                folded.setdefault(letter.lower(), token[0])
    dropped = "".join(mark for index, mark in enumerate(marks) if tokens.get(len(letters) + index) == ["qq"])
    return Folding("".join(folded), "".join(folded.values()), dropped)


def fold(text: str) -> str:
    """``text`` as unicode61 reads it before splitting words: lower case, accents folded."""
    return unicode61_folding().fold(text)


__all__ = ["Folding", "fold", "unicode61_folding"]
