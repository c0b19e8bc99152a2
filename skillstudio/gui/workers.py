"""The one way the GUI runs work off its thread, and the one way it reports a failure.

Long work is a plain function or generator in the Qt-free core. The GUI runs it in a superqt
worker (``create_worker``) and hears back through signals on its own thread:

- :class:`Tasks`: a view's background work (reads, batches, exports), started in the view's
  own thread pool so that the view can wait for it before its library closes, and so that a
  long batch never starves another view's queries (the global pool has one thread per core).
- :class:`LatestOnly`: a loader for queries. A newer request supersedes older ones, whose
  results are dropped; the view shows only the answer to its latest question.
- :class:`LibraryOp`: a write, as Anki's ``CollectionOp``: it runs in the background as the
  initiator, marks the browser busy, then calls ``success`` or ``failure`` on the GUI thread.
  The store announces what it changed (``LibraryChange``) to every view, typed and stamped with
  the initiator; the operation itself broadcasts nothing.
- :func:`show_error`: a readable dialog, the details (traceback) one click away.

Nothing else in the GUI subclasses ``QThread``/``QRunnable`` or calls ``processEvents``.
"""

from __future__ import annotations

import ctypes
import gc
import inspect
import logging
import sys
import threading
import time
import traceback
from collections.abc import Callable, Generator
from functools import cache
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from PySide6.QtCore import QCoreApplication, QObject, Qt, QThreadPool, QTimer
from PySide6.QtWidgets import QMessageBox, QWidget
from shiboken6 import isValid
from superqt.utils import FunctionWorker, GeneratorWorker, WorkerBase, create_worker

from skillstudio.store import LibraryError, initiated_by

if TYPE_CHECKING:
    from skillstudio.gui.browser_state import BrowserState
    from skillstudio.store import SkillRepository

log = logging.getLogger(__name__)

T = TypeVar("T")
Done = Callable[[Any], None]
Failed = Callable[[BaseException], None]
Progress = Callable[[Any], None]


class WorkFailed(Exception):
    """Carries an exception out of a generator worker.

    superqt reads a RuntimeError escaping a generator as "the worker was deleted" and drops it
    silently; wrapping every exception keeps real failures (numpy and SQLite raise
    RuntimeError subclasses) on the error path."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


def _unwrapped(error: BaseException) -> BaseException:
    return error.error if isinstance(error, WorkFailed) else error


def _guarded(func: Callable[..., Generator[Any, Any, Any]]) -> Callable[..., Generator[Any, Any, Any]]:
    def generator(*args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        try:
            return (yield from func(*args, **kwargs))
        except Exception as error:
            raise WorkFailed(error) from error

    return generator


def readable(error: BaseException) -> str:
    """A sentence a user can act on: the store's errors are written as such; others get their type."""
    error = _unwrapped(error)
    if isinstance(error, LibraryError | ValueError | OSError):
        return str(error) or type(error).__name__
    return f"{type(error).__name__}: {error}"


def show_error(parent: QWidget | None, title: str, error: BaseException) -> None:
    """The one error dialog: the readable message, with the traceback under Show Details."""
    error = _unwrapped(error)
    log.error("%s: %s", title, readable(error), exc_info=(type(error), error, error.__traceback__))
    box = QMessageBox(QMessageBox.Icon.Warning, title, readable(error), QMessageBox.StandardButton.Ok, parent)
    if not isinstance(error, LibraryError):  # the store's messages are complete; anything else is a bug
        box.setDetailedText("".join(traceback.format_exception(error)))
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # one box per failure, freed once read
    box.exec()


def _on_gui_thread(signal: Any, slot: Callable[..., object]) -> None:
    """Connect queued: the slot runs on the GUI thread, in emit order. (``signal`` is untyped
    because superqt's stubs type ``connect``'s second argument as a Python type.)"""
    signal.connect(slot, Qt.ConnectionType.QueuedConnection)


class Tasks(QObject):
    """The background work of one view, run in the view's own thread pool."""

    def __init__(self, parent: QObject, *, threads: int = 1) -> None:
        super().__init__(parent)
        collect_on_gui_thread()
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(threads)
        self._workers: set[WorkerBase[Any]] = set()

    def run(
        self,
        func: Callable[..., Any],
        *args: Any,
        done: Done | None = None,
        failed: Failed | None = None,
        progress: Progress | None = None,
        finished: Callable[[], None] | None = None,
    ) -> WorkerBase[Any]:
        """Run ``func(*args)`` off the GUI thread; a generator's yields go to ``progress``.

        The callbacks run on the GUI thread, and only while this view exists. Without
        ``failed``, a failure is logged (a view that loads in the background shows its
        own state instead of a dialog per keystroke)."""
        if inspect.isgeneratorfunction(func):
            func = _guarded(func)
        worker = create_worker(func, *args, _start_thread=False, _ignore_errors=True)
        alive = self._alive

        if done is not None:
            _on_gui_thread(worker.returned, lambda value: alive() and done(value))
        if progress is not None and isinstance(worker, GeneratorWorker):
            _on_gui_thread(worker.yielded, lambda value: alive() and progress(value))

        def on_error(error: BaseException) -> None:
            if not alive():
                return
            if failed is not None:
                failed(_unwrapped(error))
            else:
                log.warning("background work failed: %s", readable(error))

        _on_gui_thread(worker.errored, on_error)

        def on_finished() -> None:
            self._workers.discard(worker)
            if finished is not None and alive():
                finished()

        _on_gui_thread(worker.finished, on_finished)
        self._workers.add(worker)
        self._pool.start(worker)
        return worker

    def _alive(self) -> bool:
        return isValid(self)

    @property
    def running(self) -> bool:
        return bool(self._workers)

    def wait(self, timeout_ms: int = 30_000) -> bool:
        """Block until this view's work is done and its results delivered (library switch, close).

        Waiting happens only where the library is about to close under the work, so blocking
        the GUI thread briefly is the lesser evil; returns whether everything finished."""
        finished = self._pool.waitForDone(timeout_ms)
        QCoreApplication.sendPostedEvents()  # deliver the finished workers' queued results now
        return finished and not self._workers

    def cancel_pending(self) -> None:
        """Drop work that has not started yet (it answers a question nobody asks any more)."""
        self._pool.clear()
        started = {worker for worker in self._workers if worker.is_running}
        self._workers = started


class LatestOnly(Tasks):
    """Answers a view's latest question only: every request supersedes the earlier ones."""

    def __init__(self, parent: QObject, done: Done, failed: Failed | None = None) -> None:
        super().__init__(parent, threads=1)
        self._done = done
        self._failed = failed
        self._generation = 0
        self._pending = 0

    def request(self, func: Callable[..., Any], *args: Any) -> None:
        self._generation += 1
        generation = self._generation
        self.cancel_pending()
        self._pending += 1

        def current() -> bool:
            return generation == self._generation

        def done(value: Any) -> None:
            if current():
                self._done(value)

        def failed(error: BaseException) -> None:
            if not current():
                return
            if self._failed is not None:
                self._failed(error)
            else:
                log.warning("loading failed: %s", readable(error))

        def settled() -> None:
            self._pending = max(0, self._pending - 1)

        self.run(func, *args, done=done, failed=failed, finished=settled)

    def discard(self) -> None:
        """Forget the requests in flight: their answers are about a library no longer shown."""
        self._generation += 1
        self.cancel_pending()

    @property
    def loading(self) -> bool:
        return self.running


class LibraryOp(Generic[T]):
    """A write that runs in the background, as the browser's busy work (Anki's CollectionOp).

    ``op(repository)`` runs on a worker thread against the library open when the operation
    starts, inside :func:`initiated_by` so every change it commits names ``initiator``. A
    generator ``op`` yields progress values for :meth:`progress`. Then ``success(result)`` or
    ``failure(error)`` runs on the GUI thread; without ``failure``, :func:`show_error` does.
    """

    def __init__(self, state: BrowserState, parent: QWidget, op: Callable[[SkillRepository], Any], *, title: str):
        self.state = state
        self.parent = parent
        self.op = op
        self.title = title
        self._success: Callable[[T], None] | None = None
        self._failure: Failed | None = None
        self._progress: Progress | None = None

    def success(self, callback: Callable[[T], None]) -> LibraryOp[T]:
        self._success = callback
        return self

    def failure(self, callback: Failed) -> LibraryOp[T]:
        self._failure = callback
        return self

    def progress(self, callback: Progress) -> LibraryOp[T]:
        self._progress = callback
        return self

    def run_in_background(self, *, initiator: object | None = None) -> WorkerBase[Any]:
        repository = self.state.require_repository()
        op = self.op
        who = initiator if initiator is not None else self.parent
        if inspect.isgeneratorfunction(op):

            def work_generator() -> Generator[Any, Any, Any]:
                with initiated_by(who):
                    return (yield from op(repository))

            work: Callable[[], Any] = work_generator
        else:

            def work_function() -> Any:
                with initiated_by(who):
                    return op(repository)

            work = work_function

        token = self.state.begin_busy(self.title)
        parent = self.parent

        def done(result: Any) -> None:
            if self._success is not None:
                self._success(result)

        def failed(error: BaseException) -> None:
            if self._failure is not None:
                self._failure(error)
            else:
                show_error(parent if isValid(parent) else None, self.title, error)

        return self.state.operations.run(
            work,
            done=done,
            failed=failed,
            progress=self._progress,
            finished=lambda: self.state.end_busy(token),
        )


COLLECT_INTERVAL_MS = 100
# How long nothing must have held the collector before what was set aside is looked at: a
# series of bulk operations (retag, then undo) pays for one pass, not one each, and not at once.
SET_ASIDE_IDLE_S = 2.0


def collect_on_gui_thread() -> None:
    """Run Python's cycle collector only on the GUI thread, from a timer, once per process.

    The collector runs in whichever thread happens to allocate. Run in a worker, it may free a
    cycle holding a Qt object while the GUI thread is destroying widgets; each thread then
    waits for the other (seen as a hang in the dashboard tests). So automatic collection is
    turned off and a GUI-thread timer collects each generation when its count passes the
    threshold, read live so that FullCollectionsHeld still holds off the full passes."""
    global _collector
    app = QCoreApplication.instance()
    if _collector is not None or app is None:
        return
    gc.disable()
    timer = QTimer(app)
    timer.setInterval(COLLECT_INTERVAL_MS)
    timer.timeout.connect(_collect_due_generations)
    timer.start()
    _collector = timer


_collector: QTimer | None = None


def _collect_due_generations() -> None:
    thresholds = gc.get_threshold()
    if FullCollectionsHeld.holders():
        # Only the youngest pass, over what was made since the last tick; what outlives it
        # is set aside before an older pass would walk all that the held work made so far
        # (with a 100,000-skill package, such passes stalled the GUI for 140-560 ms).
        # gc.freeze moves lists, whatever their length.
        if gc.get_count()[0] > thresholds[0]:
            gc.collect(0)
        if gc.get_count()[1] > thresholds[1]:
            gc.freeze()
            FullCollectionsHeld.set_aside = True
        return
    if FullCollectionsHeld.set_aside and time.monotonic() - FullCollectionsHeld.released_at >= SET_ASIDE_IDLE_S:
        # Once nothing has held for a while: one full pass over what was set aside, with
        # start-up's frozen objects (their freeze is shared; 50-60 ms with a 10,000-skill
        # library open), then everything alive is out of reach again.
        FullCollectionsHeld.set_aside = False
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        return
    counts = gc.get_count()
    for generation in (2, 1, 0):  # the oldest due generation collects the younger ones too
        if counts[generation] > thresholds[generation]:
            gc.collect(generation)
            return


class FullCollectionsHeld:
    """Holds off the collector while large work runs (a dialog's read, a bulk write).

    Such work keeps every skill it reads or writes alive until it ends; a pass walks all of
    them holding the GIL, and at 10,000 skills each full one stalled the GUI thread for
    100-300 ms (benchmarks/bench_gui_stalls.py, bench_gui_import.py). While held, the GUI's
    collector makes only the youngest passes and sets aside what outlives them; one full pass
    looks at that once nothing holds, when the heap is small again (acyclic garbage is freed
    at once as ever). Without the GUI's collector, the full passes alone are held off. Holds
    nest, from any thread."""

    _lock = threading.Lock()
    _holders = 0
    _saved: tuple[int, int, int] | None = None
    set_aside = False  # objects were frozen while held: the full pass after release is due
    released_at = 0.0  # time.monotonic() when the last hold ended

    def __init__(self) -> None:
        self._held = False

    def hold(self) -> None:
        cls = FullCollectionsHeld
        with cls._lock:
            if self._held:
                return
            self._held = True
            if cls._holders == 0:
                cls._saved = gc.get_threshold()
                gc.set_threshold(cls._saved[0], cls._saved[1], 1_000_000_000)
            cls._holders += 1

    def release(self) -> None:
        cls = FullCollectionsHeld
        with cls._lock:
            if not self._held:
                return
            self._held = False
            cls._holders -= 1
            if cls._holders == 0:
                cls.released_at = time.monotonic()
                if cls._saved is not None:
                    gc.set_threshold(*cls._saved)
                    cls._saved = None

    @classmethod
    def holders(cls) -> int:
        """How many holds are taken now (the full passes run again at 0)."""
        return cls._holders


def without_full_collections(op: Callable[[T], Any]) -> Callable[[T], Any]:
    """``op`` (a function or a generator function of one argument) with full passes held
    off while it runs; for a LibraryOp's bulk write."""
    if inspect.isgeneratorfunction(op):

        def held_generator(argument: T) -> Generator[Any, Any, Any]:
            held = FullCollectionsHeld()
            held.hold()
            try:
                return (yield from op(argument))
            finally:
                held.release()

        return held_generator

    def held_function(argument: T) -> Any:
        held = FullCollectionsHeld()
        held.hold()
        try:
            return op(argument)
        finally:
            held.release()

    return held_function


def drain(*sequences: list[Any]) -> None:
    """Empty large lists one element at a time, so that freeing them lets other threads run in
    between (call it off the GUI thread)."""
    for items in sequences:
        while items:
            items.pop()


def give_back_freed_memory() -> None:
    """Return the C heap's free pages to the system, where the C library allows it (glibc).

    A large read on a worker thread (a million ids) frees tens of MB in that thread's malloc
    arena; glibc keeps them, and the window's resident memory with them, until it is trimmed:
    a million-skill library settled some 50 MB higher, and higher again after each query."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except AttributeError:  # another C library (musl) has no malloc_trim
        return None
    return trim


__all__ = [
    "FullCollectionsHeld",
    "FunctionWorker",
    "GeneratorWorker",
    "LatestOnly",
    "LibraryOp",
    "Tasks",
    "WorkFailed",
    "drain",
    "give_back_freed_memory",
    "readable",
    "show_error",
    "without_full_collections",
]
