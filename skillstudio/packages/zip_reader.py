"""Reading every entry of an archive held in memory: checked as zipfile checks it, inflated on threads.

``zipfile`` reads an entry through a file object made for it (a shared handle with its lock,
seeks, and a decompressor fed in 64 KiB chunks). For the 10,000 small entries of a large
package that cost more than inflating them (issue 17: 0.24 s, of which zlib 0.14 s). Here
each entry's local header is checked as ``zipfile.ZipFile.open`` checks it, its data is sliced
from the archive's bytes, and one zlib call inflates it, never past one byte more than the
entry declares. Batches of entries go to a few threads (zlib leaves the GIL while it works)
while the caller waits. Whatever ``zipfile`` refuses to read is refused here too, and what
both read is the same bytes (a test compares them on damaged archives).

Only stored and deflated entries are read. The caller has checked the entries' names, declared
sizes and ratios (:func:`skillstudio.packages.icpkg.read_package`), so the bytes kept are bounded.
"""

from __future__ import annotations

import os
import zipfile
import zlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from skillstudio.model import Issue
from skillstudio.packages.zip_writer import LOCAL_HEADER, LOCAL_SIGNATURE

# The flags zipfile refuses to read an entry with (ZipFile.open), in the directory or the
# entry's local header: encrypted, "compressed patched data", "strong encryption".
_ENCRYPTED = 0x1
_PATCHED = 0x20
_STRONG_ENCRYPTION = 0x40
_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)  # the only compression methods read

# Below this many entries they are read on the calling thread: threads do not pay for a few.
PARALLEL_FROM = 64
# Entries go to the threads in batches of about this many compressed bytes: each result handed
# back waits for the GIL, so a task per small entry cost as much as inflating it.
_BATCH_BYTES = 256 * 1024

EntryResult = bytes | str  # the entry's bytes, or why it cannot be read


def read_entries(data: bytes, infos: Sequence[zipfile.ZipInfo]) -> tuple[dict[str, bytes], list[Issue]]:
    """Each entry's bytes by name, and an issue for each entry that cannot be read (named by
    the entry, in the order of ``infos``). ``data`` is the whole archive ``infos`` came from."""
    view = memoryview(data)
    if len(infos) < PARALLEL_FROM:
        results = _read_batch(view, infos)
    else:
        batches = _batches(infos)
        with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
            results = [result for batch in pool.map(_read_batch, [view] * len(batches), batches) for result in batch]
    contents: dict[str, bytes] = {}
    issues: list[Issue] = []
    for info, result in zip(infos, results, strict=True):
        if isinstance(result, bytes):
            contents[info.filename] = result
        else:
            issues.append(Issue(info.filename, result))
    return contents, issues


def _batches(infos: Sequence[zipfile.ZipInfo]) -> list[Sequence[zipfile.ZipInfo]]:
    batches: list[Sequence[zipfile.ZipInfo]] = []
    start = size = 0
    for index, info in enumerate(infos):
        size += info.compress_size
        if size >= _BATCH_BYTES:
            batches.append(infos[start : index + 1])
            start, size = index + 1, 0
    if start < len(infos):
        batches.append(infos[start:])
    return batches


def _read_batch(view: memoryview, infos: Sequence[zipfile.ZipInfo]) -> list[EntryResult]:
    return [_read_entry(view, info) for info in infos]


def _read_entry(view: memoryview, info: zipfile.ZipInfo) -> EntryResult:
    if info.compress_type not in _METHODS:
        return f"uses compression method {info.compress_type} (only stored and deflate are read)"
    offset = info.header_offset
    header = view[offset : offset + LOCAL_HEADER.size]
    if offset < 0 or len(header) != LOCAL_HEADER.size:
        return "is corrupt (its local header lies outside the archive)"
    signature, _version, _system, flags, _method, _time, _date, _crc, _compressed, _size, name_length, extra_length = (
        LOCAL_HEADER.unpack(header)
    )
    if signature != LOCAL_SIGNATURE:
        return "is corrupt (bad magic number for its local header)"
    if (info.flag_bits | flags) & _PATCHED:
        return "uses compressed patched data (flag bit 5), which is not read"
    if (info.flag_bits | flags) & (_ENCRYPTED | _STRONG_ENCRYPTION):
        return "is encrypted"
    name_start = offset + LOCAL_HEADER.size
    if view[name_start : name_start + name_length] != info.orig_filename.encode("utf-8"):
        return "is corrupt (its name in the directory and in its local header differ)"
    start = name_start + name_length + extra_length
    raw = view[start : start + info.compress_size]
    if len(raw) != info.compress_size:
        return "is corrupt (its data runs past the end of the archive)"
    if info.compress_type == zipfile.ZIP_STORED:
        content = raw.tobytes()
    else:
        inflater = zlib.decompressobj(-zlib.MAX_WBITS)
        try:
            content = inflater.decompress(raw, info.file_size + 1)  # one byte more shows an overrun
        except zlib.error as error:
            return f"is corrupt ({error})"
    if len(content) > info.file_size:
        return "decompresses to more than its declared size"
    if len(content) != info.file_size:
        return f"decompresses to {len(content)} bytes, {info.file_size} declared"
    if zlib.crc32(content) != info.CRC:
        return f"is corrupt (bad CRC-32 for file {info.filename!r})"
    return content


__all__ = ["PARALLEL_FROM", "read_entries"]
