"""One event stream for a verification run of any kind: ``drive_run(database, run_id)``.

The CLI (``verify``, ``verify --resume``) and the GUI's batch worker iterate it:

* a composition run (kind ``sequence``): :func:`~skillstudio.verification.compositions.run_sequence`;
* any other run: the batch runner (:func:`~skillstudio.verification.runner.run_verification`,
  which also stops ``--until-decided`` skills), then, for a ``--baseline`` run, the default
  plan's games and each skill's lift (:func:`~skillstudio.verification.lift.play_baseline`).

The runner's :class:`RunFinished` is held back until the baseline is played, so it stays the
last event; a baseline cut short marks the run cancelled (``verify --resume`` finishes it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator
from dataclasses import replace

from skillstudio.store import Actor
from skillstudio.store.database import Database
from skillstudio.store.errors import LibraryError
from skillstudio.store.runs import RunStore
from skillstudio.verification.compositions import KIND as SEQUENCE
from skillstudio.verification.compositions import CompositionResult, run_sequence
from skillstudio.verification.executors import Executor, open_executor
from skillstudio.verification.lift import BaselineEvent, play_baseline, wants_baseline
from skillstudio.verification.policy import VerificationPolicy
from skillstudio.verification.runner import CancelToken, Event, RunFinished, run_verification

DriveEvent = Event | BaselineEvent | CompositionResult


def drive_run(
    database: Database,
    run_id: str,
    *,
    executor: Executor | str | None = None,
    policy: VerificationPolicy | None = None,
    cancel: CancelToken = None,
    actor: Actor | None = None,
) -> Generator[DriveEvent, None, None]:
    """Play what is missing of run ``run_id``, whatever its kind, and apply it; yields events.

    ``policy`` None: the one the runner applies by default."""
    info = RunStore(database).run(run_id)
    is_cancelled = _cancel_function(cancel)
    if info.kind == SEQUENCE:
        yield from run_sequence(database, run_id, executor=executor, policy=policy, cancel=is_cancelled, actor=actor)
        return
    if not wants_baseline(info):
        yield from _verification(database, run_id, executor, policy, cancel, actor)
        return
    owned = not isinstance(executor, Executor)
    runner = executor if isinstance(executor, Executor) else open_executor(executor or info.executor)
    try:
        finished: RunFinished | None = None
        for event in _verification(database, run_id, runner, policy, cancel, actor):
            if isinstance(event, RunFinished):
                finished = event
            else:
                yield event
        if finished is None:  # the runner always ends with it
            return
        if finished.status == "finished":
            finished = yield from _baseline(database, run_id, runner, is_cancelled, actor, finished)
        yield finished
    finally:
        if owned:
            runner.close()


def _verification(
    database: Database,
    run_id: str,
    executor: Executor | str | None,
    policy: VerificationPolicy | None,
    cancel: CancelToken,
    actor: Actor | None,
) -> Generator[Event, None, None]:
    if policy is None:  # the runner's own default (the library's settings, where it reads them)
        return run_verification(database, run_id, executor=executor, cancel=cancel, actor=actor)
    return run_verification(database, run_id, executor=executor, policy=policy, cancel=cancel, actor=actor)


def _baseline(
    database: Database,
    run_id: str,
    runner: Executor,
    cancel: Callable[[], bool],
    actor: Actor | None,
    finished: RunFinished,
) -> Generator[BaselineEvent, None, RunFinished]:
    """The default plan's games and the lifts; the RunFinished to end with."""
    store = RunStore(database)
    try:
        outcome = yield from play_baseline(database, run_id, executor=runner, cancel=cancel, actor=actor)
    except BaseException as error:
        if isinstance(error, GeneratorExit | KeyboardInterrupt):
            store.finish_run(run_id, cancelled=True, message="stopped while the default plan played")
        elif not isinstance(error, LibraryError):
            store.set_status(run_id, "failed", f"default plan: {type(error).__name__}: {error}"[:2000])
        raise
    if outcome.complete:
        return finished
    message = "cancelled while the default plan played: resume to finish the lift"
    store.finish_run(run_id, cancelled=True, message=message)
    return replace(finished, status="cancelled", message=message)


def _cancel_function(cancel: CancelToken) -> Callable[[], bool]:
    if cancel is None:
        return lambda: False
    if isinstance(cancel, threading.Event):
        return cancel.is_set
    return cancel


__all__ = ["DriveEvent", "drive_run"]
