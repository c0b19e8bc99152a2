"""One verification batch as a generator the dashboard runs off the GUI thread (``Tasks.run``).

:func:`batch_events` drives the core batch runner (``skillstudio.verification.runner``) and
yields what the dashboard shows: the run's :class:`RunStarted`, then :class:`BatchUpdate` s,
throttled here, in the worker (at most one per ``THROTTLE_S``, plus one at the end), so a
10,000-game batch posts a few dozen events per second at most whatever the chunk size. It
returns the :class:`BatchOutcome`. Nothing here touches Qt.

Cancelling sets the runner's own ``threading.Event``: the runner stops between chunks, marks the
run cancelled (every game already recorded is kept), releases its claim and closes its executor,
and this generator returns the outcome as usual. Quitting the worker instead would leave the
generator suspended mid-way, its cleanup deferred to whenever it is garbage-collected.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field

from skillstudio.store import Actor, Database, JsonInput, SkillRepository
from skillstudio.store.paired_runs import PairedRuns
from skillstudio.store.runs import RunStore
from skillstudio.verification import sequential
from skillstudio.verification.drive import DriveEvent, drive_run
from skillstudio.verification.executors import DEFAULT_EXECUTOR
from skillstudio.verification.lift import BaselineProgress, LiftResult
from skillstudio.verification.policy import policy_for
from skillstudio.verification.runner import (
    Progress,
    RunFinished,
    RunStarted,
    SkillResult,
    VerificationError,
    chunk_games_for,
    select_playable,
    start_run,
)
from skillstudio.verification.verdicts import Verdict, explain_run

THROTTLE_S = 0.1


@dataclass(frozen=True)
class BatchOptions:
    """What a batch plays; what ``verify`` takes on the command line, and the same core runs it."""

    opponent: str = "IC Default Hard"
    games: int = 20  # per skill; with ``until_decided``, at most (``--max-games``)
    seed: int | None = None  # None: a fresh seed per batch (recorded with the run)
    executor: str = DEFAULT_EXECUTOR  # worker processes for a large batch (executors.open_executor)
    engine: tuple[str, ...] = ()
    chunk_games: int | None = None  # None: chosen for a live plot (runner.chunk_games_for)
    baseline: bool = False  # also play the default plan on the same seeds: each skill's lift
    until_decided: bool = False  # rounds, each skill stopped once the sequential test decides

    def check(self) -> None:
        """ValueError if these options do not go together (the dialog shows it, nothing starts)."""
        if self.baseline and self.engine:
            raise ValueError("the default plan (lift) needs the built-in engine: leave the engine command empty")

    def run_options(self, database: Database) -> dict[str, JsonInput] | None:
        """What the new run records about its modes (``verify --baseline``, ``--until-decided``)."""
        recorded: dict[str, JsonInput] = {}
        if self.baseline:
            recorded["baseline"] = True
        if self.until_decided:
            recorded.update(sequential.options(policy=policy_for(database)))
        return recorded or None

    def games_per_chunk(self, skills: int) -> int:
        """Until decided, a chunk is a round of one skill (the CLI's default round)."""
        if self.until_decided:
            return sequential.DEFAULT_ROUND_GAMES
        return self.chunk_games or chunk_games_for(skills * self.games)


@dataclass(frozen=True)
class BatchUpdate:
    """What happened since the last update: the latest progress (None if no chunk returned) and
    the skills applied meanwhile."""

    progress: Progress | None
    results: tuple[SkillResult, ...] = ()
    baseline: BaselineProgress | None = None  # the default plan's games (played after the skills')


@dataclass(frozen=True)
class BatchOutcome:
    """What the GUI needs once a batch has ended: the runner's last event, and the distinct
    error texts of its error games (read on the worker thread)."""

    finished: RunFinished
    errors: int = 0
    error_texts: tuple[str, ...] = field(default=())
    lifts: tuple[LiftResult, ...] = ()
    # The skills whose tier did not follow their figures (or whose session changed nothing): why, what to do.
    verdicts: tuple[Verdict, ...] = ()
    # Until decided: skills per decision (above, below, undecided), and the games the run could have played.
    decisions: dict[str, int] = field(default_factory=dict)
    games_at_most: int = 0


def batch_events(
    database: Database,
    actor: Actor,
    cancel: threading.Event,
    *,
    skill_ids: Sequence[str] = (),
    options: BatchOptions | None = None,
    run_id: str | None = None,
    executor: str | None = None,
) -> Generator[RunStarted | BatchUpdate, None, BatchOutcome]:
    """One batch: new (``skill_ids`` + ``options``) or resumed (``run_id``); stops when ``cancel`` is set."""
    events: Iterator[DriveEvent]
    if run_id is not None:
        events = drive_run(database, run_id, executor=executor, cancel=cancel, actor=actor)
    else:
        o = options or BatchOptions()
        o.check()
        # The CLI's selection: skills the engine cannot play (content, or bodies the built-in
        # engine does not play) and rows holding no valid skill are left out and reported.
        skills, skipped = select_playable(SkillRepository(database, actor), skill_ids, engine=o.engine)
        new_run = start_run(
            database,
            skills,
            opponent=o.opponent,
            games=o.games,
            seed=o.seed,
            executor=o.executor,
            engine=o.engine,
            chunk_games=o.games_per_chunk(len(skills)),
            actor=actor,
            skipped=skipped,
            options=o.run_options(database),
        )
        events = drive_run(database, new_run, executor=o.executor, cancel=cancel, actor=actor)
    last_update = 0.0
    latest: Progress | None = None
    results: list[SkillResult] = []
    lifts: list[LiftResult] = []
    baseline: BaselineProgress | None = None
    finished: RunFinished | None = None
    for event in events:
        if isinstance(event, Progress):
            latest = event
        elif isinstance(event, BaselineProgress):
            baseline = event
        elif isinstance(event, LiftResult):
            lifts.append(event)
        elif isinstance(event, SkillResult):
            results.append(event)
        elif isinstance(event, RunStarted):
            yield event
        elif isinstance(event, RunFinished):
            finished = event
        now = time.monotonic()
        if (latest is not None or results or baseline is not None) and now - last_update >= THROTTLE_S:
            yield BatchUpdate(latest, tuple(results), baseline)
            latest, results, baseline, last_update = None, [], None, now
    if latest is not None or results or baseline is not None:
        yield BatchUpdate(latest, tuple(results), baseline)
    if finished is None:  # the runner ended without its last event: should not happen
        raise VerificationError("the batch ended without a result")
    errors, texts = _error_texts(database, finished.run_id)
    verdicts = explain_run(SkillRepository(database, actor), finished.run_id, finished.results)
    decisions, at_most = _decisions(database, finished.run_id)
    return BatchOutcome(finished, errors, texts, tuple(lifts), tuple(verdicts), decisions, at_most)


def _decisions(database: Database, run_id: str) -> tuple[dict[str, int], int]:
    """An until-decided run's skills per decision, and the games it could have played (none else)."""
    info = RunStore(database).run(run_id)
    if sequential.design_of(info) is None:
        return {}, 0
    counts: dict[str, int] = {}
    for record in PairedRuns(database).decisions(run_id).values():
        counts[record.decision] = counts.get(record.decision, 0) + 1
    return counts, info.games_asked


def _error_texts(database: Database, run_id: str, limit: int = 12) -> tuple[int, tuple[str, ...]]:
    store = RunStore(database)
    if not sum(c.errors for c in store.counts(run_id).values()):
        return 0, ()
    games = [g for g in store.games(run_id) if g.outcome == "error"]
    texts = list(dict.fromkeys((g.error or "unknown error").strip() for g in games))
    return len(games), tuple(texts[:limit])


__all__ = ["THROTTLE_S", "BatchOptions", "BatchOutcome", "BatchUpdate", "batch_events"]
