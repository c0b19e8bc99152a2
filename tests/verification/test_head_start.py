"""A fresh run of many skills hands the first skills' chunks to the executor while it reads the
rest (``runner._head_start``). It must store and report exactly what a run that reads every
skill first stores and reports: the same games, evidence, quality, revisions and audit entries,
the same results for skills changed or deleted since the run started, and the same games
after a cancel and a resume."""

from __future__ import annotations

import re
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
    # in process, one chunk at a time of one skill: one skill is read first, then the rest
    assert reads[0] == 1 and len(reads) == 2 * len(RUNS)
    # the same results and announcements; in another order, as the chunks' order differs
    assert [sorted(run) for run in results_first] == [sorted(run) for run in results_while_playing]
    stored_first, stored_while_playing = (
        _without_run_versions(_stored(first)),
        _without_run_versions(_stored(while_playing)),
    )
    for table, rows in stored_first.items():
        assert rows == stored_while_playing[table], table


_ENGINE_VERSION = re.compile(r"'\d+\.\d+\.\d+\+[^']*'")


def _without_run_versions(stored: dict[str, list[tuple[object, ...]]]) -> dict[str, list[tuple[object, ...]]]:
    """The run rows' own engine version is the first returned chunk's (chunks return in any order,
    and each module has its version): blanked there. Every skill's rows keep theirs."""
    return {**stored, "runs": [(_ENGINE_VERSION.sub("<version>", str(row[0])),) for row in stored["runs"]]}


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
    assert reads == [1, 11]  # skills 8 and 10 are in the second read
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
    assert reads[:2] == [1, 11] and reads[2] < 12  # the head first; the resumed run, all it lacks at once
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
    assert runner._head_start(info, InProcessExecutor(), ids, {}) == 200  # one chunk at a time
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
        window = 4  # the head: four chunks of one skill

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


def test_a_revalidation_of_two_modules_credits_each_skill_against_its_own_module_s_version(tmp_path: Path) -> None:
    """A run's own engine version is its first returned chunk's; each module plays with its own
    version. A td skill revalidated in a run whose first chunk was ra1's keeps td's version as
    the one its later evidence must match, and its next verify is credited."""
    from skillstudio.engine.batch import engine_version as module_version
    from skillstudio.engine.module import load_module
    from skillstudio.store.runs import RunStore

    def engine_version(module: str) -> str:
        return module_version(load_module(module))

    ra1, td = playable_skills(2)
    td = replace(td, provenance=replace(td.provenance, game_module="td"))
    with Database(tmp_path / "lib.db", create=True) as database:
        repository = SkillRepository(database, ACTOR)
        repository.create_many([ra1, td])
        skills = repository.get_many([ra1.id, td.id])
        first = collect(run_verification(database, start_run(database, skills, opponent=HARD, games=6, seed=1)))
        assert all(result.credited for result in first.results)
        revalidation = start_run(
            database,
            repository.get_many([ra1.id, td.id]),
            opponent=HARD,
            games=6,
            seed=2,
            kind="revalidate",
            chunk_games=6,
        )
        assert collect(run_verification(database, revalidation, actor=ACTOR)).status == "finished"
        store = RunStore(database)
        assert store.run(revalidation).engine_version == engine_version("ra1")  # the first chunk's: ra1 plays first
        assert store.revalidated_engines([ra1.id, td.id]) == {
            ra1.id: engine_version("ra1"),
            td.id: engine_version("td"),
        }
        assert store.revalidated_engine(td.id) == engine_version("td")
        again = collect(
            run_verification(database, start_run(database, [repository.get(td.id)], opponent=HARD, games=6, seed=3))
        )
        [result] = again.results
        assert result.credited, result.reason
