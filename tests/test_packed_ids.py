"""PackedIds answers as the list and dict it replaces: the same ids in order, the same rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillstudio.model import Confidence, Domain
from skillstudio.store import Actor, Database, PackedIds, SkillQuery, SkillRepository, SortKey
from tests.factories import ai_skill

ids_lists = st.lists(st.text(max_size=40), unique=True, max_size=300)


@given(ids_lists, st.lists(st.integers(min_value=0, max_value=50), max_size=12), st.text(max_size=40))
def test_packed_ids_answer_as_the_list_and_its_row_dict(ids: list[str], sizes: list[int], absent: str) -> None:
    chunks, start = [], 0
    for size in [*sizes, len(ids)]:  # any chunking, empty chunks too; the last takes the rest
        chunks.append(ids[start : start + size])
        start += size
    packed = PackedIds.from_chunks(chunks)
    rows = {skill_id: row for row, skill_id in enumerate(ids)}  # the old path

    assert len(packed) == len(ids) and list(packed) == ids
    assert [packed[row] for row in range(len(ids))] == ids
    assert [packed[-row] for row in range(1, len(ids) + 1)] == [ids[-row] for row in range(1, len(ids) + 1)]
    assert packed[3:40] == ids[3:40] and packed[::-7] == ids[::-7]
    assert [packed.row_of(skill_id) for skill_id in ids] == [rows[skill_id] for skill_id in ids]
    assert [packed.index(skill_id) for skill_id in ids] == [ids.index(skill_id) for skill_id in ids]
    assert packed.row_of(absent) == rows.get(absent) and (absent in packed) == (absent in rows)
    with pytest.raises(IndexError):
        packed[len(ids)]


class _Colliding(str):
    """An id whose hash is every other one's: row_of must compare the ids themselves."""

    def __hash__(self) -> int:
        return 7


def test_ids_whose_hashes_collide_are_told_apart() -> None:
    ids = [_Colliding(f"id-{n}") for n in range(20)]
    packed = PackedIds.of(ids)
    assert [packed.row_of(_Colliding(f"id-{n}")) for n in range(20)] == list(range(20))
    assert packed.row_of(_Colliding("id-20")) is None


@pytest.mark.parametrize(
    "query",
    [
        SkillQuery(),
        SkillQuery(sort=SortKey.SUCCESS_RATE, descending=True),
        SkillQuery(text="rush"),
        SkillQuery(confidences=(Confidence.TENTATIVE,), domains=(Domain.AI_STRATEGY,), sort=SortKey.USE_COUNT),
        SkillQuery(sort=SortKey.NAME, offset=5, limit=30),
        SkillQuery(text="zzzz"),
    ],
    ids=repr,
)
def test_query_ids_reads_what_query_lists(tmp_path: Path, query: SkillQuery) -> None:
    with Database(tmp_path / "lib.db", create=True) as database:
        repository = SkillRepository(database, Actor("tester"))
        repository.create_many(
            [ai_skill(name=f"skill {n % 37:03d}", description="rush " * (n % 3)) for n in range(250)]
        )
        assert list(repository.query_ids(query)) == repository.query(query).ids
