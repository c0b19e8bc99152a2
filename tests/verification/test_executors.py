"""Local worker processes and a real Dask LocalCluster give results identical to in-process."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from skillstudio.engine import run_batch
from skillstudio.model import Domain, GamePhase, VerifiedExample
from skillstudio.store import Database
from skillstudio.store.runs import GameRow, RunStore
from skillstudio.verification import executors as executors_module
from skillstudio.verification.executors import (
    AUTO_PROCESSES_GAMES,
    Chunk,
    ExecutorError,
    InProcessExecutor,
    Piece,
    ProcessExecutor,
    open_executor,
    parse_executor,
    play_chunk,
)
from skillstudio.verification.runner import collect, verify
from tests.engine.multi_requests import strategy_skills
from tests.verification.helpers import make_library
from tests.verification.test_runner import HARD, outcomes, skills_of

GAMES, SEED = 9, 21


def run_with(tmp_path: Path, name: str, executor, chunk: int):
    with Database(make_library(tmp_path / f"{name}.db", 3)) as database:
        final = collect(
            verify(
                database,
                skills_of(database),
                opponent=HARD,
                games=GAMES,
                seed=SEED,
                executor=executor,
                chunk_games=chunk,
            )
        )
        assert final.status == "finished"
        rows = RunStore(database).games(final.run_id)
        detail = [
            (g.skill_id, g.game, g.outcome, g.seed, round(g.duration_s, 6), round(g.map_control, 6)) for g in rows
        ]
        return outcomes(database, final.run_id), detail, [(r.skill_id, r.counts, r.after) for r in final.results]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory):
    return run_with(tmp_path_factory.mktemp("ref"), "inprocess", InProcessExecutor(), 9)


def _same(a, b) -> None:
    assert a[0] == b[0] and a[1] == b[1]
    assert sorted(a[2]) == sorted(b[2])


def test_processes_match_inprocess(tmp_path: Path, reference) -> None:
    _same(run_with(tmp_path, "processes", "processes:2", 4), reference)


def test_dask_local_cluster_matches_inprocess(tmp_path: Path, reference) -> None:
    """``dask-local:2``: a real LocalCluster (2 worker processes, 1 thread each, no dashboard)."""
    pytest.importorskip("dask.distributed")
    from skillstudio.verification.executors import open_executor

    with open_executor("dask-local:2") as executor:
        assert executor.spec == "dask-local:2"
        assert executor.cluster is not None and len(executor.client.nthreads()) == 2
        assert set(executor.client.nthreads().values()) == {1}
        _same(run_with(tmp_path, "dask", executor, 5), reference)


def test_dask_scheduler_address_matches_inprocess(tmp_path: Path, reference) -> None:
    """``dask://HOST:PORT``: connect to a scheduler SkillStudio did not start (a LocalCluster
    started here, on loopback, stands in for a studio's cluster)."""
    distributed = pytest.importorskip("dask.distributed")
    from skillstudio.verification.executors import open_executor

    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
    ) as cluster:
        address = "dask://" + cluster.scheduler_address.removeprefix("tcp://")
        with open_executor(address) as executor:
            assert executor.spec == address and executor.cluster is None  # we did not start it
            _same(run_with(tmp_path, "dask-remote", executor, 3), reference)


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        ("inprocess", ("inprocess", None, None)),
        ("processes:3", ("processes", None, 3)),
        ("processes", ("processes", None, None)),
        ("dask-local:2", ("dask-local", None, 2)),
        ("dask://10.0.0.5:8786", ("dask", "tcp://10.0.0.5:8786", None)),
    ],
)
def test_executor_spellings(spec: str, parsed) -> None:
    assert parse_executor(spec) == parsed


@pytest.mark.parametrize("spec", ["threads", "processes:0", "dask://nohost", "dask-local:x"])
def test_bad_executor_spellings(spec: str) -> None:
    with pytest.raises(ExecutorError):
        parse_executor(spec)


def rows_piece_by_piece(chunk: Chunk) -> list[GameRow]:
    """What play_chunk did before it played a chunk's pieces together: one run_batch per piece."""
    rows: list[GameRow] = []
    for piece in chunk.pieces:
        try:
            batch = run_batch(
                piece.skill,
                chunk.opponent,
                piece.games,
                chunk.seed,
                piece.module,
                first_game=piece.first_game,
                baseline=piece.baseline,
                then=piece.then,
            )
        except (ValueError, LookupError, OSError) as error:
            reason = f"{type(error).__name__}: {error}"
            rows.extend(
                GameRow(piece.skill.id, game, "error", error=reason)
                for game in range(piece.first_game, piece.first_game + piece.games)
            )
            continue
        rows.extend(
            GameRow(
                piece.skill.id,
                int(batch.game[i]),
                {1: "win", -1: "loss", 0: "draw"}[int(batch.outcome[i])],
                int(batch.seed[i]),
                float(batch.duration_s[i]),
                float(batch.resource_delta[i]),
                float(batch.army_value_delta[i]),
                float(batch.map_control[i]),
                None,
                batch.engine_version,
            )
            for i in range(len(batch))
        )
    return rows


def test_a_chunk_of_many_pieces_plays_as_its_pieces_one_by_one() -> None:
    """The built-in engine plays a chunk's pieces in one vectorised call: the same rows, in the
    same order, as one batch per piece; a piece that cannot be played gets its error rows."""
    synthetic, sample = strategy_skills()
    not_a_plan = replace(synthetic[0], id="not-a-plan", body=VerifiedExample("p", "r"), domain=Domain.AI_STRATEGY)
    pieces = [
        *(Piece(skill, "ra1", 20 * (i % 3), 4 + i % 4) for i, skill in enumerate(synthetic[:40])),
        Piece(not_a_plan, "ra1", 0, 3),
        Piece(synthetic[40], "no-such-module", 0, 3),
        *(Piece(skill, "ra1", 0, 5, baseline=True) for skill in synthetic[41:44]),
        Piece(synthetic[44], "ra1", 5, 5, then=((GamePhase.MID, synthetic[45]), (1200.0, synthetic[46]))),
        *(Piece(skill, skill.provenance.game_module, 0, 3) for skill in sample[:6]),
    ]
    chunk = Chunk(7, HARD, SEED, tuple(pieces))
    result = play_chunk(chunk)
    expected = rows_piece_by_piece(chunk)
    assert list(result.rows) == expected and result.index == 7
    assert result.engine_version == next(row.engine_version for row in expected if row.outcome != "error")
    errors = {row.skill_id: row.error for row in result.rows if row.outcome == "error"}
    assert set(errors) == {"not-a-plan", synthetic[40].id}
    assert "NotAStrategySkill" in (errors["not-a-plan"] or "")


def blas_threads() -> int:
    """The threads numpy's BLAS uses in this process (1 if it has no thread pool)."""
    import numpy  # noqa: F401  loads BLAS, whose pool threadpoolctl then reads
    from threadpoolctl import threadpool_info

    return max((pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"), default=1)


def test_a_worker_process_runs_blas_on_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    # A worker inherits this; BLAS alone would start four threads in every worker.
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    executor = ProcessExecutor(1)
    try:
        assert executor.pool.submit(blas_threads).result(timeout=120) == 1
    finally:
        executor.close()


@pytest.mark.parametrize(
    ("games", "cpus", "chosen"),
    [
        (AUTO_PROCESSES_GAMES, 2, ProcessExecutor),
        (AUTO_PROCESSES_GAMES - 1, 2, InProcessExecutor),
        (10 * AUTO_PROCESSES_GAMES, 1, InProcessExecutor),
        (10 * AUTO_PROCESSES_GAMES, None, InProcessExecutor),  # os.cpu_count() may not know
    ],
)
def test_auto_plays_a_large_run_on_worker_processes(games, cpus, chosen, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executors_module.os, "cpu_count", lambda: cpus)
    executor = open_executor("auto", games=games)
    try:
        assert type(executor) is chosen
    finally:
        executor.close()
    assert parse_executor("AUTO") == ("auto", None, None)
