"""A fresh run of many skills hands the first skills' chunks to the executor while it reads the
rest (``runner._head_start``). It must store and report exactly what a run that reads every
skill first stores and reports: the same games, evidence, quality, revisions and audit entries,
the same results for skills changed or deleted since the run started, and the same games
after a cancel and a resume."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from skillstudio.store import Actor, Database, SkillRepository
from skillstudio.verification import runner
from skillstudio.verification.runner import Progress, RunFinished, collect, run_verification, start_run
from tests.factories import strategic_body
from tests.verification.helpers import make_library, playable_skills
from tests.verification.test_batched_apply import RUNS, _fields, _library, _spelled, _stored, _verify_all

HARD = "IC Default Hard"
ACTOR = Actor("tester")


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many skills each of the runner's reads of a run's skills asked for."""
    sizes: list[int] = []
    original = runner.load_many

    def load_many(session: Any, ids: Sequence[str], parse: Any = None) -> Any:
        sizes.append(len(ids))
        return original(session, ids, parse)

    monkeypatch.setattr(runner, "load_many", load_many)
    return sizes


def test_a_run_that_reads_while_it_plays_stores_what_reading_first_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reads: list[int]
) -> None:
    first = _library(tmp_path / "first.db")
    while_playing = _library(tmp_path / "while-playing.db")
    results_first = _verify_all(first, {})
    assert reads and all(size > 4 for size in reads)  # below HEAD_START_FROM: one read per run
    reads.clear()
    monkeypatch.setattr(runner, "HEAD_START_FROM", 1)
    results_while_playing = _verify_all(while_playing, {})
    # one skill per chunk, four chunks in flight: four skills are read first, then the rest
    assert reads[:2][0] == 4 and len(reads) >= 2 * len(RUNS)
    # the same results and announcements; in another order, as the chunks' order differs
    assert [sorted(run) for run in results_first] == [sorted(run) for run in results_while_playing]
    stored_first, stored_while_playing = _stored(first), _stored(while_playing)
    for table, rows in stored_first.items():
        assert rows == stored_while_playing[table], table


def _changed_and_deleted_run(path: Path) -> tuple[list[tuple[object, ...]], dict[str, list[tuple[object, ...]]]]:
    """A run of twelve skills, three games each in chunks of four (a skill's games may span two
    chunks); after it starts, skill 8's body is edited and skill 10 deleted. Its results and
    stored rows, run ids spelled by position."""
    with Database(path) as database:
        repository = SkillRepository(database, ACTOR)
        skills = repository.get_many([s.id for s in playable_skills(12)])
        run_id = start_run(database, skills, opponent=HARD, games=3, seed=9, chunk_games=4)
        edited = repository.get(skills[8].id)
        other_focus = playable_skills(12)[9].body.plan.build_focus
        repository.update(replace(edited, body=strategic_body(other_focus)))
        repository.trash.delete(skills[10].id)
        final = collect(run_verification(database, run_id, actor=ACTOR))
        assert final.status == "finished"
        results = sorted(_spelled(_fields(result), {run_id: "run"}) for result in final.results)
        by_id = {result.skill_id: result for result in final.results}
        changed = by_id[skills[8].id]
        assert not changed.credited and "body changed" in changed.reason and changed.counts.played == 0
        assert skills[10].id not in by_id
    return results, _stored(path)


def test_skills_changed_or_deleted_after_the_first_read_are_treated_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reads: list[int]
) -> None:
    expected = _changed_and_deleted_run(make_library(tmp_path / "first.db", 12))
    assert reads == [12]
    reads.clear()
    monkeypatch.setattr(runner, "HEAD_START_FROM", 1)
    found = _changed_and_deleted_run(make_library(tmp_path / "while-playing.db", 12))
    assert reads[0] == 4 and reads[1] == 8  # skills 8 and 10 are in the second read
    assert found == expected


def test_a_run_cancelled_while_it_reads_resumes_to_the_same_games(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reads: list[int]
) -> None:
    def run(path: Path, *, cancel_after_first: bool) -> dict[str, list[tuple[object, ...]]]:
        with Database(make_library(path, 12)) as database:
            skills = SkillRepository(database).get_many([s.id for s in playable_skills(12)])
            run_id = start_run(database, skills, opponent=HARD, games=3, seed=4, chunk_games=4)
            if cancel_after_first:
                seen: list[Progress] = []
                for event in run_verification(database, run_id, cancel=lambda: bool(seen)):
                    if isinstance(event, Progress):
                        seen.append(event)
                assert isinstance(event, RunFinished) and event.status == "cancelled"
            assert collect(run_verification(database, run_id)).status == "finished"
        return _stored(path)

    uninterrupted = run(tmp_path / "uninterrupted.db", cancel_after_first=False)
    monkeypatch.setattr(runner, "HEAD_START_FROM", 1)
    reads.clear()
    resumed = run(tmp_path / "resumed.db", cancel_after_first=True)
    assert reads[0] == 4  # the cancelled run read its head first; the resumed one reads all at once
    for table in ("games", "evidence", "quality", "intervals"):
        assert resumed[table] == uninterrupted[table], table


def test_only_a_fresh_long_run_without_a_stopping_rule_reads_a_head_first(tmp_path: Path) -> None:
    from skillstudio.store.runs import RunStore
    from skillstudio.verification.executors import InProcessExecutor, ProcessExecutor

    with Database(make_library(tmp_path / "lib.db", 3)) as database:
        skills = SkillRepository(database).get_many([s.id for s in playable_skills(3)])
        info = RunStore(database).run(start_run(database, skills, opponent=HARD, games=20, seed=1, chunk_games=4000))
    ids = [f"skill-{index}" for index in range(5 * runner.HEAD_START_FROM)]
    pool = ProcessExecutor.__new__(ProcessExecutor)  # its window only: no workers started
    pool.window = 6
    assert runner._head_start(info, pool, ids, {}) == 200 * 6  # six chunks of 200 skills' games
    assert runner._head_start(info, InProcessExecutor(), ids, {}) == 200 * 4
    short = ids[: runner.HEAD_START_FROM - 1]
    assert runner._head_start(info, pool, short, {}) == len(short)  # a short run: all at once
    assert runner._head_start(info, pool, ids, {"skill-0": {0}}) == len(ids)  # resumed: all at once
    until_decided = replace(info, options={"until_decided": {"delta": 0.1}})
    assert runner._head_start(until_decided, pool, ids, {}) == len(ids)  # its rule needs every skill
    assert runner._head_start(replace(info, chunk_games=10), pool, ids, {}) == 6  # a skill per chunk at least


def test_a_cancel_once_the_head_is_applied_leaves_the_run_cancelled_not_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reads: list[int]
) -> None:
    """An executor that asks whether to stop before it takes the next chunk (a windowed one
    whose head chunks all came back at once) may stop before the rest of the skills is read:
    the run is then cancelled, not finished, and a resume plays the rest."""
    from skillstudio.verification.executors import Executor
    from skillstudio.verification.runner import SkillResult

    class AsksFirst(Executor):
        def map_unordered(self, fn: Any, chunks: Any, cancel: Any) -> Any:
            source = iter(chunks)
            while not cancel():
                chunk = next(source, None)
                if chunk is None:
                    return
                yield fn(chunk)

    monkeypatch.setattr(runner, "HEAD_START_FROM", 1)
    with Database(make_library(tmp_path / "lib.db", 12)) as database:
        skills = SkillRepository(database).get_many([s.id for s in playable_skills(12)])
        run_id = start_run(database, skills, opponent=HARD, games=3, seed=4, chunk_games=3)
        applied: list[SkillResult] = []
        events = run_verification(database, run_id, executor=AsksFirst(), cancel=lambda: len(applied) >= 4)
        for event in events:
            if isinstance(event, SkillResult):
                applied.append(event)
        assert reads == [4] and len(applied) == 4  # the head alone was read and played
        assert isinstance(event, RunFinished) and event.status == "cancelled"
        final = collect(run_verification(database, run_id))
        assert final.status == "finished" and len(final.results) == 8 and final.games_done == 36
