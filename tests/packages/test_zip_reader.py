"""The package entry reader reads what zipfile reads, and refuses whatever zipfile refuses.

Read on threads or not, whole or damaged: for every entry of an archive, the reader either gives
exactly the bytes ``zipfile`` gives, or refuses it with a message, and it refuses every entry
``zipfile`` cannot read.
"""

from __future__ import annotations

import io
import random
import struct
import zipfile
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillstudio.packages import zip_reader
from skillstudio.packages.zip_reader import read_entries
from tests.packages.helpers import rezip, valid_package

_ZIPFILE_REFUSALS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, NotImplementedError, RuntimeError)


def zipfile_reads(data: bytes) -> dict[str, bytes | None]:
    """Each entry as zipfile reads it, or None where it refuses to."""
    out: dict[str, bytes | None] = {}
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            try:
                out[info.filename] = archive.read(info)
            except _ZIPFILE_REFUSALS:
                out[info.filename] = None
    return out


def infos_of(data: bytes) -> list[zipfile.ZipInfo]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return archive.infolist()


def assert_agrees_with_zipfile(data: bytes) -> dict[str, str]:
    """The reader's bytes equal zipfile's wherever it reads an entry; it refuses each entry
    zipfile refuses. Returns the reader's refusals by entry."""
    infos = infos_of(data)
    expected = zipfile_reads(data)
    contents, issues = read_entries(data, infos)
    refused = {issue.path: issue.message for issue in issues}
    assert set(contents) | set(refused) == {info.filename for info in infos}
    for name, read in contents.items():
        assert expected[name] == read, name
    for name, read in expected.items():
        if read is None:
            assert name in refused, f"{name}: zipfile refuses it, the reader read it"
    return refused


def mixed_archive(seed: int, count: int = 12) -> bytes:
    """Stored and deflated entries of many sizes (around a thread batch's too)."""
    chance = random.Random(seed)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for index in range(count):
            size = chance.choice([0, 1, 200, 5000, 70_000])
            data = chance.randbytes(size // 2) + b"skill " * (size // 12)
            method = chance.choice([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
            archive.writestr(zipfile.ZipInfo(f"skills/{index:03d}.json"), data, compress_type=method)
    return buffer.getvalue()


@pytest.mark.parametrize("threads", [False, True])
def test_a_package_reads_as_zipfile_reads_it(threads: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zip_reader, "PARALLEL_FROM", 1 if threads else 10**9)
    monkeypatch.setattr(zip_reader, "_BATCH_BYTES", 1000)  # many batches, on every thread
    for data in (valid_package(), mixed_archive(1, count=200)):
        contents, issues = read_entries(data, infos_of(data))
        assert issues == []
        assert contents == zipfile_reads(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32), st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)), min_size=1, max_size=6))
def test_damaged_archives_read_as_zipfile_reads_them_or_are_refused(seed: int, damage: list[tuple[float, int]]) -> None:
    data = bytearray(mixed_archive(seed, count=4))
    for where, value in damage:
        data[min(int(where * len(data)), len(data) - 1)] = value
    try:
        names = [info.filename for info in infos_of(bytes(data))]
    except Exception:  # zipfile cannot even list it: read_package refuses it first
        return
    if len(set(names)) < len(names):  # read_package refuses duplicate names before reading
        return
    assert_agrees_with_zipfile(bytes(data))


def entry_offset(data: bytes, name: str) -> int:
    return next(info.header_offset for info in infos_of(data) if info.filename == name)


def damaged(data: bytes, name: str, change) -> bytes:
    copy = bytearray(data)
    change(copy, entry_offset(data, name))
    return bytes(copy)


def one_entry(content: bytes = b'{"skill": "text text text text"}' * 20, method: int = zipfile.ZIP_DEFLATED) -> bytes:
    return rezip({"skills/a.json": content}, compress=method)


def refusal(data: bytes) -> str:
    refused = assert_agrees_with_zipfile(data)
    assert "skills/a.json" in refused
    return refused["skills/a.json"]


def test_a_local_header_that_names_another_file_is_refused() -> None:
    data = damaged(one_entry(), "skills/a.json", lambda copy, at: copy.__setitem__(at + 30 + 7, ord("b")))
    assert "name in the directory and in its local header differ" in refusal(data)


def test_a_bad_local_header_signature_is_refused() -> None:
    data = damaged(one_entry(), "skills/a.json", lambda copy, at: copy.__setitem__(at + 3, 0))
    assert "bad magic number" in refusal(data)


@pytest.mark.parametrize("bit", [0x1, 0x20, 0x40])
def test_flags_zipfile_does_not_read_are_refused_in_the_local_header(bit: int) -> None:
    def flag(copy: bytearray, at: int) -> None:
        flags = struct.unpack_from("<H", copy, at + 6)[0]
        struct.pack_into("<H", copy, at + 6, flags | bit)

    data = damaged(one_entry(), "skills/a.json", flag)
    contents, issues = read_entries(data, infos_of(data))
    assert contents == {} and len(issues) == 1


def test_an_entry_whose_data_is_cut_off_is_refused() -> None:
    data = one_entry()
    (info,) = infos_of(data)
    info.compress_size += 10**6  # its data would run past the end of the archive
    contents, issues = read_entries(data, [info])
    assert contents == {} and "runs past the end of the archive" in issues[0].message


def test_an_entry_that_inflates_past_its_declared_size_is_refused() -> None:
    data = one_entry()
    (info,) = infos_of(data)
    info.file_size -= 1
    contents, issues = read_entries(data, [info])
    assert contents == {} and issues[0].message == "decompresses to more than its declared size"


def test_an_entry_that_inflates_short_of_its_declared_size_is_refused() -> None:
    data = one_entry()
    (info,) = infos_of(data)
    info.file_size += 1
    contents, issues = read_entries(data, [info])
    assert contents == {} and "declared" in issues[0].message


@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_a_crc_that_does_not_match_is_refused(method: int) -> None:
    data = one_entry(method=method)
    (info,) = infos_of(data)
    info.CRC ^= 1
    contents, issues = read_entries(data, [info])
    assert contents == {} and "bad CRC-32" in issues[0].message


def test_a_corrupt_deflate_stream_is_refused() -> None:
    data = one_entry(content=b"")
    (info,) = infos_of(data)
    start = info.header_offset + 30 + len(info.filename)
    corrupt = data[:start] + b"\xff" * info.compress_size + data[start + info.compress_size :]
    contents, issues = read_entries(corrupt, [info])
    assert contents == {} and issues[0].message.startswith("is corrupt")


def test_other_compression_methods_are_refused() -> None:
    data = one_entry()
    (info,) = infos_of(data)
    info.compress_type = zipfile.ZIP_BZIP2
    contents, issues = read_entries(data, [info])
    assert contents == {} and "compression method 12" in issues[0].message


def test_a_header_offset_outside_the_archive_is_refused() -> None:
    data = one_entry()
    for offset in (len(data), -5):
        (info,) = infos_of(data)
        info.header_offset = offset
        contents, issues = read_entries(data, [info])
        assert contents == {} and "outside the archive" in issues[0].message
