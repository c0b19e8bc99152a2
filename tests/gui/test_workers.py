"""The GUI's one worker mechanism: results on the GUI thread, latest-only loading, operations."""

from __future__ import annotations

import gc
import threading

import pytest

from skillstudio.gui.browser_state import BrowserState
from skillstudio.gui.workers import FullCollectionsHeld, LatestOnly, LibraryOp, Tasks, WorkFailed, readable
from skillstudio.store import AuditAction, ChangeKind, LibraryError, SkillNotFound
from tests.factories import ai_skill

pytestmark = pytest.mark.gui


def test_results_and_progress_arrive_on_the_gui_thread(qtbot, qapp):
    owner_thread = threading.get_ident()
    tasks = Tasks(qapp)
    seen: list[tuple[str, object, bool]] = []

    def counting(n):
        yield from range(n)
        return "done"

    tasks.run(
        counting,
        3,
        progress=lambda value: seen.append(("progress", value, threading.get_ident() == owner_thread)),
        done=lambda value: seen.append(("done", value, threading.get_ident() == owner_thread)),
    )
    qtbot.waitUntil(lambda: not tasks.running, timeout=5_000)
    assert seen == [("progress", 0, True), ("progress", 1, True), ("progress", 2, True), ("done", "done", True)]


def test_a_runtime_error_in_a_generator_reaches_the_failure_path(qtbot, qapp):
    # superqt alone would read a RuntimeError from a generator as "worker deleted" and drop it
    tasks = Tasks(qapp)
    failures: list[BaseException] = []

    def broken():
        yield 1
        raise RuntimeError("numpy said no")

    tasks.run(broken, failed=failures.append)
    qtbot.waitUntil(lambda: bool(failures), timeout=5_000)
    assert isinstance(failures[0], RuntimeError) and str(failures[0]) == "numpy said no"
    assert readable(WorkFailed(failures[0])) == "RuntimeError: numpy said no"
    assert readable(SkillNotFound("x")) == str(SkillNotFound("x"))


def test_latest_only_delivers_only_the_newest_answer(qtbot, qapp):
    answers: list[int] = []
    loader = LatestOnly(qapp, answers.append)
    gate = threading.Event()

    def slow(value):
        gate.wait(5)
        return value

    loader.request(slow, 1)  # starts and blocks on the gate
    loader.request(slow, 2)  # queued, then superseded before it starts
    loader.request(slow, 3)
    gate.set()
    qtbot.waitUntil(lambda: not loader.loading, timeout=5_000)
    assert answers == [3]


def test_wait_delivers_the_finished_results(qapp):
    answers: list[int] = []
    loader = LatestOnly(qapp, answers.append)
    loader.request(lambda: 7)
    assert loader.wait(5_000)
    assert answers == [7]


def test_an_operation_writes_in_the_background_and_names_its_initiator(qtbot, qapp, repository):
    state = BrowserState(repository)
    changes = []
    state.library_changed.connect(changes.append)
    busy: list[bool] = []
    state.busy_changed.connect(busy.append)
    results = []
    initiator = object()
    writer_threads = []

    def create(repo):
        writer_threads.append(threading.get_ident())
        repo.create(ai_skill(name="made in the background"))
        return "stored"

    LibraryOp(state, None, create, title="Create").success(results.append).run_in_background(initiator=initiator)
    qtbot.waitUntil(lambda: bool(results), timeout=5_000)
    assert results == ["stored"]
    assert writer_threads[0] != threading.get_ident()
    qtbot.waitUntil(lambda: bool(changes), timeout=5_000)
    assert changes[0].action is AuditAction.CREATE
    assert changes[0].touches(ChangeKind.MEMBERSHIP)
    assert changes[0].started_by(initiator)
    # The change is announced from the writer's thread; the busy state ends on the GUI thread.
    qtbot.waitUntil(lambda: not state.busy, timeout=5_000)
    assert busy == [True, False]


def test_a_failed_operation_goes_to_its_failure_handler_and_ends_busy(qtbot, qapp, repository):
    state = BrowserState(repository)
    failures: list[BaseException] = []

    def missing(repo):
        return repo.get("no-such-skill")

    LibraryOp(state, None, missing, title="Read").failure(failures.append).run_in_background()
    qtbot.waitUntil(lambda: bool(failures), timeout=5_000)
    assert isinstance(failures[0], LibraryError)
    qtbot.waitUntil(lambda: not state.busy, timeout=5_000)


def test_trash_announces_the_skills_that_left(qtbot, qapp, repository):
    state = BrowserState(repository)
    skill = repository.create(ai_skill(name="short-lived"))
    changes = []
    state.library_changed.connect(changes.append)
    repository.trash.delete(skill.id)
    # the create's change may still be on its way (queued): look for the trash's own
    qtbot.waitUntil(lambda: any(c.action is AuditAction.DELETE for c in changes), timeout=5_000)
    trashed = next(c for c in changes if c.action is AuditAction.DELETE)
    assert trashed.removes(skill.id) and trashed.touches(ChangeKind.MEMBERSHIP)
    assert not any(c.removes(skill.id) for c in changes if c.action is AuditAction.CREATE)


def test_cycles_made_in_a_worker_are_collected_on_the_gui_thread(qtbot, qapp):
    gui_thread = threading.get_ident()
    freed_on: list[int] = []

    class Cyclic:
        def __init__(self) -> None:
            self.me = self

        def __del__(self) -> None:
            freed_on.append(threading.get_ident())

    kept: list[list[object]] = []

    def make_garbage() -> None:
        Cyclic()  # unreachable at once, freeable only by the cycle collector
        # allocate (and keep) enough that an automatic collection would run here, on this thread
        kept.append([[] for _ in range(50_000)])

    tasks = Tasks(qapp)
    tasks.run(make_garbage)
    qtbot.waitUntil(lambda: bool(freed_on), timeout=5_000)
    assert freed_on == [gui_thread]


def test_while_large_work_holds_the_collector_what_outlives_a_young_pass_waits_for_one_pass_after_it(qtbot, qapp):
    """An older pass during held work walks all that the work made so far (with a 100,000-skill
    package: 140-560 ms stalls). While held, only the youngest passes run, and what outlives
    them is set aside; one pass after the last release looks at it."""
    Tasks(qapp)  # installs the GUI thread's collector
    freed: list[str] = []

    class Cyclic:
        def __init__(self, name: str) -> None:
            self.me = self
            self.name = name

        def __del__(self) -> None:
            freed.append(self.name)

    assert FullCollectionsHeld.holders() == 0
    held = FullCollectionsHeld()
    held.hold()
    try:
        frozen = gc.get_freeze_count()
        survivor = Cyclic("survivor")  # kept past young passes, then garbage
        kept = [[] for _ in range(5_000)]  # the youngest generation due on each tick
        qtbot.wait(350)
        Cyclic("young")  # garbage at once: a young pass frees it, held or not
        kept += [[] for _ in range(5_000)]
        del survivor
        qtbot.waitUntil(lambda: "young" in freed, timeout=2_000)
        for _ in range(15):  # more young passes than make an older one due
            kept += [[] for _ in range(2_000)]
            qtbot.wait(110)
        assert "survivor" not in freed  # set aside, not walked
        assert gc.get_freeze_count() >= frozen + len(kept)
    finally:
        held.release()
    qtbot.wait(300)
    assert "survivor" not in freed  # not at once: the pass waits until nothing has held a while
    qtbot.waitUntil(lambda: "survivor" in freed, timeout=5_000)  # the one pass after the release
    assert not FullCollectionsHeld.set_aside
