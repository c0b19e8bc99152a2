"""The collector pause around bulk work: it nests, overlaps across threads, survives errors and
leaves a collector someone else switched off as it found it; and the bulk paths (package read,
import, export, bulk writes, a verification chunk and its apply) run without a collection."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from benchmarks.synthetic import generate_skills
from skillstudio.engine import batch
from skillstudio.gc_pause import gc_paused
from skillstudio.model import BodyKind, Domain
from skillstudio.packages.export import export_selection, load_selection
from skillstudio.packages.icpkg import read_package
from skillstudio.packages.importer import apply_plan, incoming_from_package, plan_import
from skillstudio.store import Actor, Database, SkillRepository, evidence
from skillstudio.store.query import SkillQuery
from skillstudio.verification.runner import collect, verify
from tests.packages.helpers import META


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_the_pause_switches_the_collector_off_inside_and_back_on_after_an_error() -> None:
    with pytest.raises(RuntimeError), gc_paused():
        assert not gc.isenabled()
        raise RuntimeError("the work failed")
    assert gc.isenabled()


def test_nested_pauses_end_with_the_outer_one() -> None:
    with gc_paused():
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_switched_off_before_stays_off() -> None:
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()


def test_overlapping_pauses_in_two_threads_end_with_the_last() -> None:
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with gc_paused():
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    with gc_paused():
        thread.start()
        assert inside.wait(10)
    assert not gc.isenabled()  # the other thread's pause is still on
    release.set()
    thread.join(10)
    assert gc.isenabled()


@pytest.fixture
def nothing_frozen() -> Iterator[None]:
    """No freeze held (a GUI test earlier in this process may hold one); held again after."""
    frozen = gc.get_freeze_count()
    gc.unfreeze()
    yield
    if frozen:
        gc.freeze()


class _Node:
    partner: object = None


def test_what_a_pause_made_is_in_the_oldest_generation_after_it(nothing_frozen: None) -> None:
    with gc_paused():
        made = [[index] for index in range(3)]
    # young, the next collections would walk it (and every other survivor of the pause)
    assert not any(tracked is made for tracked in gc.get_objects(generation=0))
    assert any(tracked is made for tracked in gc.get_objects(generation=2))
    assert gc.get_freeze_count() == 0


def test_a_cycle_made_in_a_pause_is_still_collected(nothing_frozen: None) -> None:
    with gc_paused():
        node = _Node()
        node.partner = node
        gone = weakref.ref(node)
        del node
    assert gone() is not None  # only the collector frees a cycle
    gc.collect()
    assert gone() is None


def test_a_freeze_someone_holds_is_left_as_it_was(nothing_frozen: None) -> None:
    held = [[1], [2]]
    gc.freeze()
    frozen = gc.get_freeze_count()
    try:
        with gc_paused():
            made = [[3]]
        assert gc.get_freeze_count() == frozen
        assert any(tracked is made for tracked in gc.get_objects(generation=0))
        assert held
    finally:
        gc.unfreeze()


# The one collection a pause ends with: the allocations it held back are counted then.
AFTER = 1


def _collections_during(action: Callable[[], object]) -> int:
    started: list[int] = []

    def heard(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.collect()  # counts start from zero: the few allocations before a pause begins never collect
    gc.callbacks.append(heard)
    try:
        action()
    finally:
        gc.callbacks.remove(heard)
    return len(started)


def test_bulk_work_runs_without_a_collection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    skills = generate_skills(300, seed=3)
    # What the test relies on: this much work collects many times with the collector on.
    assert _collections_during(lambda: [{"skill": s, "n": [i]} for i, s in enumerate(skills * 20)]) > 10

    package = tmp_path / "out.icpkg"
    with Database(tmp_path / "source.db", create=True) as database:
        repository = SkillRepository(database, Actor("tester"))
        assert _collections_during(lambda: repository.create_many(skills)) <= AFTER
        ids = repository.query(SkillQuery()).ids
        edited = repository.get_many(ids[:50])
        assert _collections_during(lambda: repository.update_many(edited)) <= AFTER
        preview = load_selection(repository, ids)
        assert _collections_during(lambda: load_selection(repository, ids)) <= AFTER
        assert _collections_during(lambda: export_selection(preview, META, package, sign=False)) <= AFTER
        playable = [s for s in repository.get_many(ids) if s.domain is Domain.AI_STRATEGY]
        playable = [s for s in playable if s.body_kind is BodyKind.STRATEGIC_PATTERN][:20]
        # A run's chunks are played, and their sessions applied, with the collector off; the
        # run's events are handled between them, with it on.
        collector_was: list[bool] = []

        def seen(inner: Callable[..., object]) -> Callable[..., object]:
            def call(*args: object, **kwargs: object) -> object:
                collector_was.append(gc.isenabled())
                return inner(*args, **kwargs)

            return call

        monkeypatch.setattr(batch, "run_batches", seen(batch.run_batches))
        monkeypatch.setattr(evidence, "_insert_records", seen(evidence._insert_records))
        run = collect(verify(database, playable, opponent="IC Default Hard", games=4, seed=1, chunk_games=20))
        assert run.status == "finished" and len(run.results) == len(playable)
        assert len(collector_was) >= 8 and not any(collector_was)

    assert _collections_during(lambda: read_package(package)) <= AFTER
    incoming, origin = incoming_from_package(read_package(package))
    with Database(tmp_path / "target.db", create=True) as database:
        repository = SkillRepository(database, Actor("tester"))
        plan = plan_import(repository, incoming, origin=origin, source=package.name)
        assert _collections_during(lambda: apply_plan(repository, plan)) <= AFTER
        assert repository.query(SkillQuery()).total == len(incoming)
    assert gc.isenabled()
