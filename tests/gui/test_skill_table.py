"""The table model shows a query's first screen first, then the rest of its ids below it."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("PySide6")

from skillstudio.gui import skill_table_model
from skillstudio.gui.browser_state import BrowserState
from skillstudio.gui.skill_table_model import FIRST_SCREEN, PAGE, SkillTableModel
from skillstudio.gui.skill_table_model import _all_ids as all_ids
from skillstudio.store import PackedIds, SkillQuery, SkillRepository, SortKey
from tests.factories import ai_skill


@pytest.mark.parametrize(
    "query",
    [
        SkillQuery(sort=SortKey.NAME, descending=True),
        SkillQuery(text="skill"),  # every skill matches: the first screen is ranked with a pool
        SkillQuery(text="rush", sort=SortKey.USE_COUNT, descending=True),
    ],
    ids=repr,
)
def test_the_first_screen_shows_first_and_the_rest_follows_below_it(
    qtbot, repository: SkillRepository, owner, query: SkillQuery
) -> None:
    repository.create_many(
        [ai_skill(name=f"skill {n:04d}", description="rush " * (n % 4 + 1)) for n in range(3 * PAGE + 7)]
    )
    state = BrowserState(repository, owner)
    model = SkillTableModel(state, owner)
    qtbot.waitUntil(lambda: not model.loading, timeout=10_000)
    first_screens: list[list[str]] = []
    inserted: list[tuple[int, int]] = []
    model.first_rows_shown.connect(lambda: first_screens.append(list(model.ids())))
    model.rowsInserted.connect(lambda _parent, first, last: inserted.append((first, last)))
    state.set_query(query)
    qtbot.waitUntil(lambda: not model.loading, timeout=10_000)
    expected = repository.query(query).ids
    assert len(expected) > PAGE
    assert first_screens == [expected[:FIRST_SCREEN]]
    assert inserted == [(FIRST_SCREEN, len(expected) - 1)]  # appended: the rows on screen stay where they are
    assert list(model.ids()) == expected and model.total == len(expected) == model.rowCount()
    assert model.library_size == 3 * PAGE + 7
    assert [model.row_of(skill_id) for skill_id in expected] == list(range(len(expected)))


def test_a_short_answer_is_complete_with_its_first_screen(qtbot, repository: SkillRepository, owner) -> None:
    repository.create_many([ai_skill(name=f"alpha {n}") for n in range(5)] + [ai_skill(name="beta")])
    state = BrowserState(repository, owner)
    model = SkillTableModel(state, owner)
    qtbot.waitUntil(lambda: not model.loading, timeout=10_000)
    finished: list[int] = []
    model.query_finished.connect(lambda: finished.append(model.rowCount()))
    state.set_query(SkillQuery(text="alpha"))
    qtbot.waitUntil(lambda: not model.loading, timeout=10_000)
    assert finished == [5] and model.total == 5 and model.library_size == 6


def test_a_new_query_shows_without_waiting_for_the_rest_of_the_last_one(
    qtbot, repository: SkillRepository, owner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 1M skills the rest of a common word takes seconds: the next keystroke must not queue
    behind it. Here the rest is held until the next query's first screen has shown."""
    repository.create_many([ai_skill(name=f"skill {n:04d}") for n in range(FIRST_SCREEN + 5)])
    state = BrowserState(repository, owner)
    model = SkillTableModel(state, owner)
    qtbot.waitUntil(lambda: not model.loading, timeout=10_000)
    release = threading.Event()
    reading_the_rest = threading.Event()

    def held_rest(repository: SkillRepository, query: SkillQuery, cancelled: threading.Event):
        reading_the_rest.set()
        release.wait(timeout=30)
        return all_ids(repository, query, cancelled)

    monkeypatch.setattr(skill_table_model, "_all_ids", held_rest)
    state.set_query(SkillQuery(text="skill"))
    qtbot.waitUntil(reading_the_rest.is_set, timeout=10_000)
    state.set_query(SkillQuery(text="skill 00"))
    try:
        with qtbot.waitSignal(model.first_rows_shown, timeout=10_000):
            pass
        assert all(model.summary_at(row).name.startswith("skill 00") for row in range(model.rowCount()))
    finally:
        release.set()
    qtbot.waitUntil(lambda: not model.loading, timeout=10_000)
    assert list(model.ids()) == repository.query(state.query).ids


def test_the_whole_answer_is_kept_packed_and_answers_as_the_query(qtbot, repository: SkillRepository, owner) -> None:
    """A million ids as strings, with a dict of their rows, took 160 MB of the window's memory."""
    repository.create_many([ai_skill(name=f"skill {n:04d}") for n in range(FIRST_SCREEN + 40)])
    state = BrowserState(repository, owner)
    model = SkillTableModel(state, owner)
    qtbot.waitUntil(lambda: not model.loading, timeout=10_000)
    expected = repository.query(state.query).ids
    assert isinstance(model.ids(), PackedIds)
    assert list(model.ids()) == expected and [model.id_at(row) for row in range(model.rowCount())] == expected
    assert [model.row_of(skill_id) for skill_id in expected] == list(range(len(expected)))
    assert model.row_of("not-a-skill") is None


def test_the_rest_is_read_after_the_first_screen_and_never_for_a_query_already_replaced(
    qtbot, repository: SkillRepository, owner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rest of the ids is asked for once the first screen's events have run (its repaint:
    reading the rest on another thread slowed it). A query replaced before then has no rest
    read at all."""
    repository.create_many([ai_skill(name=f"skill {n:04d}") for n in range(FIRST_SCREEN + 5)])
    state = BrowserState(repository, owner)
    model = SkillTableModel(state, owner)
    qtbot.waitUntil(lambda: not model.loading, timeout=10_000)
    read: list[SkillQuery] = []

    def recorded_rest(repository: SkillRepository, query: SkillQuery, cancelled: threading.Event):
        read.append(query)
        return all_ids(repository, query, cancelled)

    monkeypatch.setattr(skill_table_model, "_all_ids", recorded_rest)
    replaced, replacing = SkillQuery(sort=SortKey.NAME, descending=True), SkillQuery(sort=SortKey.USE_COUNT)
    asked_at_once: list[bool] = []

    def replace_it() -> None:  # runs inside the first screen's delivery, before any other event
        if model.query == replaced:
            asked_at_once.append(model._rest_loader.loading)
            state.set_query(replacing)

    model.first_rows_shown.connect(replace_it)
    state.set_query(replaced)
    qtbot.waitUntil(lambda: not model.loading and model.query == replacing, timeout=10_000)
    assert asked_at_once == [False] and read == [replacing]
    assert list(model.ids()) == repository.query(replacing).ids
