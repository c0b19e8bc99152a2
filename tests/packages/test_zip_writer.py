"""The package ZIP writer writes the bytes zipfile writes, whatever its threads and batches."""

from __future__ import annotations

import io
import random
import zipfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillstudio.packages import zip_writer
from skillstudio.packages.zip_writer import LEVEL, DeflatingZipWriter, entry_info


def zipfile_bytes(entries: dict[str, bytes], order: list[str]) -> bytes:
    """What the package writer wrote before it deflated on threads: zipfile, one entry at a time."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in order:
            archive.writestr(entry_info(name), entries[name], compress_type=zipfile.ZIP_DEFLATED, compresslevel=LEVEL)
    return buffer.getvalue()


def written(entries: dict[str, bytes], order: list[str], threads: int | None = None) -> tuple[bytes, int]:
    with DeflatingZipWriter(threads) as writer:
        for name, data in entries.items():
            writer.add(name, data)
        return writer.finish(order), writer.size()


def sample_entries(count: int, seed: int) -> dict[str, bytes]:
    chance = random.Random(seed)
    entries = {"manifest.yaml": b"package:\n  name: x\n", "README.md": b"", "skills/\u00fcber.json": b'{"a": 1}'}
    for index in range(count):
        # text that deflates, noise that does not, and sizes around a batch's
        size = chance.choice([0, 1, 300, 4096, 70_000, zip_writer._BATCH_BYTES + 1])
        data = chance.randbytes(size // 2) + b"skill " * (size // 12)
        entries[f"skills/{index:05d}.json"] = data
    return entries


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_the_archive_is_byte_for_byte_what_zipfile_writes(threads: int) -> None:
    entries = sample_entries(120, seed=threads)
    order = ["manifest.yaml", *sorted(name for name in entries if name != "manifest.yaml")]
    data, size = written(entries, order, threads)
    assert data == zipfile_bytes(entries, order)
    assert size == len(data)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.testzip() is None
        assert {info.filename: archive.read(info) for info in archive.infolist()} == entries


@settings(max_examples=40, deadline=None)
@given(
    st.dictionaries(
        st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), min_size=1, max_size=20),
        st.binary(max_size=3000),
        min_size=1,
        max_size=30,
    )
)
def test_any_names_and_contents_give_zipfile_s_bytes(entries: dict[str, bytes]) -> None:
    order = sorted(entries, reverse=True)
    data, size = written(entries, order, threads=2)
    assert data == zipfile_bytes(entries, order)
    assert size == len(data)


def test_infos_give_each_entry_s_sizes_and_checksum_in_the_order_added() -> None:
    entries = sample_entries(10, seed=7)
    with DeflatingZipWriter() as writer:
        for name, data in entries.items():
            writer.add(name, data)
        infos = writer.infos()
        archive = zipfile.ZipFile(io.BytesIO(writer.finish(list(entries))))
    assert [info.filename for info in infos] == list(entries)
    expected = {info.filename: (info.file_size, info.compress_size, info.CRC) for info in archive.infolist()}
    assert {info.filename: (info.file_size, info.compress_size, info.CRC) for info in infos} == expected


def test_an_entry_added_twice_or_an_order_that_is_not_every_entry_is_refused() -> None:
    with DeflatingZipWriter() as writer:
        writer.add("a", b"1")
        with pytest.raises(ValueError, match="added twice"):
            writer.add("a", b"2")
        writer.add("b", b"2")
        for order in (["a"], ["a", "b", "c"], ["a", "a"]):
            with pytest.raises(ValueError, match="every added entry exactly once"):
                writer.finish(order)
        assert zipfile.ZipFile(io.BytesIO(writer.finish(["b", "a"]))).namelist() == ["b", "a"]


@pytest.mark.parametrize("count", [zip_writer.ZIP32_ENTRIES, zip_writer.ZIP32_ENTRIES + 2])
def test_more_entries_than_the_classic_end_record_counts_get_zipfile_s_zip64_end_records(count: int) -> None:
    entries = {f"skills/{index:06d}.json": b"{}" if index % 2 else b"" for index in range(count)}
    order = sorted(entries)
    data, size = written(entries, order, threads=2)
    assert data == zipfile_bytes(entries, order)
    assert size == len(data)
    assert (b"PK\x06\x06" in data[-200:]) is (count > zip_writer.ZIP32_ENTRIES)  # only when needed
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert len(archive.infolist()) == count
        assert archive.read(order[-1]) == entries[order[-1]]
