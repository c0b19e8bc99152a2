"""Where chunks of games are played: in this process, in local worker processes, or on Dask.

Every executor runs the same function, :func:`play_chunk`, on the same chunks; a game's seed
derives from (batch seed, skill id, game index) only (``skillstudio.engine.derive_seeds``), so
results are identical whichever executor played them and however games were chunked.

Spellings (``--executor``): ``inprocess``; ``processes`` or ``processes:N`` (N worker processes,
default: CPU count); ``dask-local:N`` (starts a ``LocalCluster`` of N single-threaded worker
processes, no dashboard); ``dask://HOST:PORT`` or ``tcp://HOST:PORT`` (an existing Dask scheduler;
its workers need SkillStudio installed). Dask is optional: ``pip install skillstudio[cluster]``.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, Protocol, Self, TypeVar

from skillstudio.gc_pause import gc_paused
from skillstudio.model import GamePhase, Skill
from skillstudio.store.runs import GameRow

if TYPE_CHECKING:  # an optional dependency (the cluster extra)
    from distributed import Future as DaskFuture

Cancel = Callable[[], bool]


class ExecutorError(ValueError):
    """An executor spelling that is not valid, or one that cannot start (Dask not installed)."""


# --- the work -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Piece:
    """Games ``first_game .. first_game + games - 1`` of one skill's batch.

    ``baseline``: the module's default plan plays them in the skill's place (same seeds and
    situation, so game i pairs with the skill's game i); ``then``: a composition, ``(game time
    in seconds or a GamePhase, skill)`` switches to later plans (docs/reference-engine.md)."""

    skill: Skill
    module: str
    first_game: int
    games: int
    baseline: bool = False
    then: tuple[tuple[float | GamePhase, Skill], ...] = ()


@dataclass(frozen=True)
class Chunk:
    index: int
    opponent: str
    seed: int
    pieces: tuple[Piece, ...]
    engine: tuple[str, ...] = ()  # argv of an engine speaking the protocol; () = built-in engine
    timeout_s: float = 60.0

    @property
    def games(self) -> int:
        return sum(piece.games for piece in self.pieces)


@dataclass(frozen=True)
class ChunkResult:
    index: int
    rows: tuple[GameRow, ...]
    engine_version: str
    elapsed_s: float
    worker: str = field(default="", compare=False)


@gc_paused()
def play_chunk(chunk: Chunk) -> ChunkResult:
    """Play a chunk; every game gets a row (a failure becomes error rows naming the reason)."""
    started = time.perf_counter()
    if chunk.engine:
        rows: list[GameRow] = []
        version = ""
        for piece in chunk.pieces:
            piece_rows, piece_version = _play_external(chunk, piece)
            rows.extend(piece_rows)
            version = version or piece_version
    else:
        rows, version = _play_builtin(chunk)
    return ChunkResult(chunk.index, tuple(rows), version, time.perf_counter() - started, f"pid {os.getpid()}")


def _error_rows(piece: Piece, reason: str, version: str = "") -> list[GameRow]:
    return [
        GameRow(piece.skill.id, game, "error", error=reason[:2000], engine_version=version)
        for game in range(piece.first_game, piece.first_game + piece.games)
    ]


def _play_builtin(chunk: Chunk) -> tuple[list[GameRow], str]:
    """Every piece of the chunk in one call of the reference engine: its games are played
    together, a piece that cannot be played gets error rows and the others are played."""
    from skillstudio.engine.batch import OUTCOME_NAMES, BatchError, BatchRequest, run_batches

    requests = [
        BatchRequest(
            piece.skill,
            chunk.opponent,
            piece.games,
            chunk.seed,
            piece.module,
            first_game=piece.first_game,
            baseline=piece.baseline,
            then=piece.then,
        )
        for piece in chunk.pieces
    ]
    rows: list[GameRow] = []
    version = ""
    for piece, batch in zip(chunk.pieces, run_batches(requests), strict=True):
        if isinstance(batch, BatchError):  # unknown module or opponent, not a StrategicPattern
            rows.extend(_error_rows(piece, batch.reason))
            continue
        skill_id, engine_version = piece.skill.id, batch.engine_version
        rows.extend(
            GameRow(
                skill_id, game, OUTCOME_NAMES[outcome], seed, duration, resources, army, control, None, engine_version
            )
            for game, outcome, seed, duration, resources, army, control in zip(
                batch.game.tolist(),
                batch.outcome.tolist(),
                batch.seed.tolist(),
                batch.duration_s.tolist(),
                batch.resource_delta.tolist(),
                batch.army_value_delta.tolist(),
                batch.map_control.tolist(),
                strict=True,
            )
        )
        version = version or engine_version
    return rows, version


def _play_external(chunk: Chunk, piece: Piece) -> tuple[list[GameRow], str]:
    from skillstudio.engine import Job, ProcessEngine

    if piece.baseline or piece.then:  # the protocol's jobs carry one skill's plan, nothing else
        what = "a baseline (default plan)" if piece.baseline else "a composition"
        return _error_rows(piece, f"the engine protocol cannot play {what}; use the built-in engine"), ""
    engine = ProcessEngine(list(chunk.engine), chunk.timeout_s)
    try:
        job = Job.for_skill(
            piece.skill, chunk.opponent, piece.games, chunk.seed, module=piece.module, first_game=piece.first_game
        )
        results = list(engine.run(job))
    except (ValueError, OSError) as error:
        return _error_rows(piece, f"{type(error).__name__}: {error}"), ""
    version = engine.info.engine_version
    rows = [
        GameRow(
            piece.skill.id,
            r.game,
            r.outcome,
            r.seed,
            r.duration_s,
            r.resource_delta,
            r.army_value_delta,
            r.map_control,
            r.error if r.is_error else None,
            version,
        )
        for r in results
    ]
    return rows, version


# --- executors ------------------------------------------------------------------------------------


class Executor:
    """Plays chunks and yields their results as they complete (in any order)."""

    spec = "inprocess"
    window = 1  # chunks it plays at once, at most (a run reads enough skills first to fill them)

    def map_unordered(
        self, fn: Callable[[Chunk], ChunkResult], chunks: Iterable[Chunk], cancel: Cancel
    ) -> Iterator[ChunkResult]:
        for chunk in chunks:
            if cancel():
                return
            yield fn(chunk)

    def close(self) -> None:
        pass

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class InProcessExecutor(Executor):
    spec = "inprocess"


class _Submitted(Protocol):
    """A chunk in flight: a concurrent.futures or a Dask future."""

    def result(self) -> ChunkResult: ...

    def cancel(self) -> object: ...


F = TypeVar("F", bound=_Submitted)


class _Windowed(Executor, Generic[F]):
    """Keeps at most ``window`` chunks in flight, so cancelling stops soon and memory stays flat."""

    window = 4

    def _submit(self, fn: Callable[[Chunk], ChunkResult], chunk: Chunk) -> F:
        raise NotImplementedError

    def _wait_any(self, pending: set[F]) -> tuple[set[F], set[F]]:
        raise NotImplementedError

    def _cancel(self, pending: set[F]) -> None:
        for future in pending:
            future.cancel()

    def map_unordered(
        self, fn: Callable[[Chunk], ChunkResult], chunks: Iterable[Chunk], cancel: Cancel
    ) -> Iterator[ChunkResult]:
        source = iter(chunks)
        pending: set[F] = set()
        try:
            while True:
                while len(pending) < self.window and not cancel():
                    chunk = next(source, None)
                    if chunk is None:
                        break
                    pending.add(self._submit(fn, chunk))
                if not pending:
                    return
                done, pending = self._wait_any(pending)
                for future in done:
                    yield future.result()
                if cancel():
                    return
        finally:
            self._cancel(pending)


def _exit_with_parent(parent: int, interval: float = 0.5) -> None:
    """In a worker: end when the process that started the pool is gone. A `kill -9` of `verify`
    runs no cleanup, and the workers would otherwise live on, waiting for chunks forever."""

    def watch() -> None:
        while True:
            time.sleep(interval)
            if os.getppid() != parent:  # re-parented: our parent died
                os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _one_blas_thread() -> None:
    """In a worker: numpy's BLAS (OpenBLAS) on one thread. A worker process is already one per
    core; BLAS's own pool, one thread per core by default, made a worker's matrix products
    fight the other workers and the process applying results for the same cores (a 10k-skill
    verify on 2 cores: 8.2 s with it, 6.5 s without; issue 17). Dask's workers do the same."""
    import numpy  # noqa: F401  BLAS is loaded with numpy; only a loaded library's pool can be limited
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)


def _start_worker(parent: int) -> None:
    _exit_with_parent(parent)
    _one_blas_thread()


def _load_engine() -> None:
    """A worker's first task: import the built-in engine before the first chunk comes."""
    import skillstudio.engine.batch  # noqa: F401


class ProcessExecutor(_Windowed["Future[ChunkResult]"]):
    """N local worker processes (``concurrent.futures``, spawned: safe beside threads and Qt)."""

    def __init__(self, workers: int | None = None) -> None:
        import multiprocessing

        self.workers = max(1, workers or os.cpu_count() or 1)
        self.window = 2 * self.workers
        self.spec = f"processes:{self.workers}"
        self.pool = ProcessPoolExecutor(
            self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker,
            initargs=(os.getpid(),),
        )
        # Start every worker now (the pool starts one per task submitted): a verify opens its
        # executor before it reads its skills, and the workers start meanwhile (0.4 s each).
        for _ in range(self.workers):
            self.pool.submit(_load_engine)

    def _submit(self, fn: Callable[[Chunk], ChunkResult], chunk: Chunk) -> Future[ChunkResult]:
        return self.pool.submit(fn, chunk)

    def _wait_any(self, pending: set[Future[ChunkResult]]) -> tuple[set[Future[ChunkResult]], set[Future[ChunkResult]]]:
        done, rest = wait(pending, return_when=FIRST_COMPLETED)
        return set(done), set(rest)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor(_Windowed["DaskFuture[ChunkResult]"]):
    """A Dask ``distributed`` cluster: an existing scheduler, or a LocalCluster started here."""

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise ExecutorError(
                "the Dask executors need Dask's distributed scheduler: pip install 'skillstudio[cluster]'"
            ) from None
        self.cluster = None
        if address is None:
            n = max(1, workers or os.cpu_count() or 1)
            self.cluster = LocalCluster(
                n_workers=n, processes=True, threads_per_worker=1, dashboard_address=None, silence_logs=40
            )
            self.client = Client(self.cluster)
            self.spec = f"dask-local:{n}"
        else:
            self.client = Client(address, timeout="20s")
            self.spec = f"dask://{address.removeprefix('tcp://')}"
        threads = sum(self.client.nthreads().values()) or 1
        self.window = max(2, 2 * threads)

    def _submit(self, fn: Callable[[Chunk], ChunkResult], chunk: Chunk) -> DaskFuture[ChunkResult]:
        return self.client.submit(fn, chunk, pure=False)

    def _wait_any(
        self, pending: set[DaskFuture[ChunkResult]]
    ) -> tuple[set[DaskFuture[ChunkResult]], set[DaskFuture[ChunkResult]]]:
        from dask.distributed import wait as dask_wait

        done, rest = dask_wait(list(pending), return_when="FIRST_COMPLETED")
        return set(done), set(rest)

    def _cancel(self, pending: set[DaskFuture[ChunkResult]]) -> None:
        if pending:
            self.client.cancel(list(pending))

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def parse_executor(spec: str) -> tuple[str, str | None, int | None]:
    """(kind, address, workers) for an ``--executor`` value; ExecutorError names valid forms."""
    text = (spec or "inprocess").strip()
    lower = text.lower()
    try:
        if lower == "auto":
            return "auto", None, None
        if lower in ("inprocess", "in-process", "local"):
            return "inprocess", None, None
        if lower == "processes":
            return "processes", None, None
        if lower.startswith("processes:"):
            return "processes", None, _positive(text.split(":", 1)[1])
        if lower == "dask-local":
            return "dask-local", None, None
        if lower.startswith("dask-local:"):
            return "dask-local", None, _positive(text.split(":", 1)[1])
        if lower.startswith(("dask://", "tcp://")):
            address = "tcp://" + text.split("://", 1)[1]
            host, _, port = address[6:].rpartition(":")
            if host and port.isdigit():
                return "dask", address, None
    except ValueError:
        pass
    raise ExecutorError(
        f"unknown executor {spec!r}; use auto, inprocess, processes[:N], dask-local[:N] or dask://HOST:PORT"
    )


def _positive(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 1024:
        raise ValueError(text)
    return value


# What verify plays on when nobody chose an executor (the CLI, the verify dialog, a batch's
# options): ``auto``, below.
DEFAULT_EXECUTOR = "auto"
# ``auto`` plays a run of at least this many games on worker processes (one per CPU): while
# they play, the calling process stores results (10k benchmark, 71,060 games on 2 CPUs: 6.2 s
# against 8.8 s in process). Starting the workers costs about 0.4 s, hidden while a run reads
# its skills; below some 10,000 games it is not won back.
AUTO_PROCESSES_GAMES = 10_000


def open_executor(spec: str, *, games: int = 0) -> Executor:
    """The executor ``spec`` names; ``games``: how many the run will play, for ``auto``."""
    kind, address, workers = parse_executor(spec)
    if kind == "auto":
        many = games >= AUTO_PROCESSES_GAMES and (os.cpu_count() or 1) > 1
        return ProcessExecutor() if many else InProcessExecutor()
    if kind == "inprocess":
        return InProcessExecutor()
    if kind == "processes":
        return ProcessExecutor(workers)
    if kind == "dask-local":
        return DaskExecutor(None, workers)
    return DaskExecutor(address)
