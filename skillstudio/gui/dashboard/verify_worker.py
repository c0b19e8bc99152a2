"""Runs the core batch runner (``skillstudio.verification.runner``) on a QThread.

The thread never touches a widget: it iterates the runner's event generator and reports through
queued signals. Progress is throttled here, in the worker (at most one ``progress`` signal per
``THROTTLE_S``, plus one at the end), so a 10,000-game batch posts a few dozen events per second
at most whatever the chunk size. Cancelling sets the runner's ``threading.Event``; the runner
stops between chunks, marks the run cancelled and keeps every game already recorded.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field

from PySide6.QtCore import QThread, Signal

from skillstudio.store import Actor, Database, LibraryError, SkillRepository
from skillstudio.store.runs import RunStore
from skillstudio.verification.runner import (
    Progress,
    RunFinished,
    RunStarted,
    SkillResult,
    VerificationError,
    run_verification,
    verify,
)

THROTTLE_S = 0.1


@dataclass(frozen=True)
class BatchOptions:
    opponent: str = "IC Default Hard"
    games: int = 20
    seed: int = 0
    executor: str = "inprocess"
    engine: tuple[str, ...] = ()
    chunk_games: int = 20


@dataclass(frozen=True)
class BatchOutcome:
    """What the GUI needs once a batch has ended: the runner's last event, and the distinct
    error texts of its error games (read on the worker thread)."""

    finished: RunFinished
    errors: int = 0
    error_texts: tuple[str, ...] = field(default=())


class VerifyThread(QThread):
    """One batch: new (``skill_ids`` + ``options``) or resumed (``run_id``)."""

    run_started = Signal(object)  # RunStarted
    progress = Signal(object, object)  # latest Progress or None, list[SkillResult] since the last signal
    outcome = Signal(object)  # BatchOutcome
    failed = Signal(str, str)  # readable message, details (the traceback)

    def __init__(
        self,
        database: Database,
        actor: Actor,
        *,
        skill_ids: Sequence[str] = (),
        options: BatchOptions | None = None,
        run_id: str | None = None,
        executor: str | None = None,
        parent=None,  # type: ignore[no-untyped-def]
    ) -> None:
        super().__init__(parent)
        self.database, self.actor = database, actor
        self.skill_ids, self.options, self.run_id, self.executor = (
            list(skill_ids),
            options or BatchOptions(),
            run_id,
            executor,
        )
        self.cancel_event = threading.Event()

    def cancel(self) -> None:
        self.cancel_event.set()

    def run(self) -> None:  # on the worker thread
        try:
            if self.run_id is not None:
                events = run_verification(
                    self.database, self.run_id, executor=self.executor, cancel=self.cancel_event, actor=self.actor
                )
            else:
                skills = SkillRepository(self.database, self.actor).get_many(self.skill_ids)
                o = self.options
                events = verify(
                    self.database,
                    skills,
                    opponent=o.opponent,
                    games=o.games,
                    seed=o.seed,
                    executor=o.executor,
                    engine=o.engine,
                    chunk_games=o.chunk_games,
                    cancel=self.cancel_event,
                    actor=self.actor,
                )
            self._pump(events)
        except (VerificationError, LibraryError, ValueError, OSError) as error:
            self.failed.emit(_readable(error), traceback.format_exc())
        except Exception as error:  # noqa: BLE001 - shown as a message, never as a traceback dialog
            self.failed.emit(f"The batch stopped: {_readable(error)}", traceback.format_exc())

    def _pump(self, events) -> None:  # type: ignore[no-untyped-def]
        last_emit = 0.0
        latest: Progress | None = None
        results: list[SkillResult] = []
        finished: RunFinished | None = None
        for event in events:
            if isinstance(event, Progress):
                latest = event
            elif isinstance(event, SkillResult):
                results.append(event)
            elif isinstance(event, RunStarted):
                self.run_id = event.run_id
                self.run_started.emit(event)
            elif isinstance(event, RunFinished):
                finished = event
            now = time.monotonic()
            if (latest is not None or results) and now - last_emit >= THROTTLE_S:
                self.progress.emit(latest, results)
                latest, results, last_emit = None, [], now
        if latest is not None or results:
            self.progress.emit(latest, results)
        if finished is None:  # the generator ended without its last event: should not happen
            raise VerificationError("the batch ended without a result")
        errors, texts = _error_texts(self.database, finished.run_id)
        self.outcome.emit(BatchOutcome(finished, errors, texts))


def _error_texts(database: Database, run_id: str, limit: int = 12) -> tuple[int, tuple[str, ...]]:
    store = RunStore(database)
    if not sum(c.errors for c in store.counts(run_id).values()):
        return 0, ()
    games = [g for g in store.games(run_id) if g.outcome == "error"]
    texts = list(dict.fromkeys((g.error or "unknown error").strip() for g in games))
    return len(games), tuple(texts[:limit])


def _readable(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text if len(text) < 600 else text[:600] + "…"
