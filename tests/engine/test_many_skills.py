"""Many skills' games in one vectorised batch (run_batches) are the games each skill's own batch
plays, bit for bit: against the digests of the engine before batches of many skills existed, and
against run_batch, whatever the order, split, grouping or block size."""

from __future__ import annotations

import json
import random
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from skillstudio.engine import batch as batch_module
from skillstudio.engine import sim
from skillstudio.engine.batch import BatchError, BatchRequest, BatchResult, run_batch, run_batches
from skillstudio.engine.situation import SituationError
from skillstudio.model import Domain, VerifiedExample
from tests.engine.multi_requests import digest, requests, strategy_skills
from tests.engine.plans import SENSIBLE, pattern, skill

REFERENCE = json.loads((Path(__file__).parent / "data" / "multi_reference.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def many() -> list[dict[str, Any]]:
    return requests()


@pytest.fixture(scope="module")
def played(many: list[dict[str, Any]]) -> list[BatchResult | BatchError]:
    return run_batches([BatchRequest(**r) for r in many])


def assert_same(a: BatchResult | BatchError, b: BatchResult) -> None:
    """Every field equal; arrays bit for bit (dtype, shape, bytes)."""
    assert isinstance(a, BatchResult), a
    for f in fields(BatchResult):
        left, right = getattr(a, f.name), getattr(b, f.name)
        if isinstance(left, np.ndarray):
            assert left.dtype == right.dtype and left.shape == right.shape, f.name
            assert left.tobytes() == right.tobytes(), f.name
        else:
            assert left == right, f.name


def test_every_game_is_the_one_the_engine_played_one_skill_at_a_time(played: list[BatchResult | BatchError]) -> None:
    assert len(played) == len(REFERENCE["digests"])
    assert [digest(result) for result in played] == REFERENCE["digests"]


def test_each_result_equals_its_own_run_batch(
    many: list[dict[str, Any]], played: list[BatchResult | BatchError]
) -> None:
    for request, result in list(zip(many, played, strict=True))[::3]:
        assert_same(result, run_batch(**request))


def test_order_and_split_do_not_matter(many: list[dict[str, Any]], played: list[BatchResult | BatchError]) -> None:
    order = list(range(len(many)))
    random.Random(5).shuffle(order)
    cuts = sorted(random.Random(6).sample(range(1, len(order)), 4))
    shuffled: dict[int, BatchResult | BatchError] = {}
    for lo, hi in zip([0, *cuts], [*cuts, len(order)], strict=True):
        part = order[lo:hi]
        shuffled.update(zip(part, run_batches([BatchRequest(**many[i]) for i in part]), strict=True))
    for i, result in enumerate(played):
        assert isinstance(result, BatchResult)
        assert_same(shuffled[i], result)


def test_small_blocks_inside_a_pass(
    many: list[dict[str, Any]], played: list[BatchResult | BatchError], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sim, "BLOCK", 23)  # blocks cut through requests
    monkeypatch.setattr(batch_module, "BLOCK", 40)  # passes of a few requests
    subset = list(range(0, len(many), 4))
    again = run_batches([BatchRequest(**many[i]) for i in subset])
    for i, result in zip(subset, again, strict=True):
        reference = played[i]
        assert isinstance(reference, BatchResult)
        assert_same(result, reference)


def test_a_library_of_one_opponent_plays_in_a_few_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The common case: every ra1 AI skill against one opponent, mixed situations: one pass per
    start step (the standard opening and the early, mid and late situations), not one per skill."""
    synthetic, _sample = strategy_skills()
    passes: list[int] = []
    original = batch_module.simulate_many

    def counting(setups: Any, seeds: Any) -> sim.RawResults:
        passes.append(len(setups))
        return original(setups, seeds)

    monkeypatch.setattr(batch_module, "simulate_many", counting)
    results = run_batches([BatchRequest(s, "IC Default Hard", 20, 1) for s in synthetic])
    assert all(isinstance(r, BatchResult) for r in results)
    assert len(passes) <= 3 and sum(passes) == len(synthetic)


def test_requests_that_cannot_be_played_come_back_in_place() -> None:
    example = replace(skill(), id="not-a-plan", body=VerifiedExample("prompt", "response"), domain=Domain.AI_STRATEGY)
    unreadable = replace(SENSIBLE, situation=replace(SENSIBLE.situation, map_control="lots"))  # type: ignore[arg-type]
    good = [BatchRequest(skill(skill_id=f"ok-{i}"), "IC Default Hard", 5, 9) for i in range(3)]
    bad = [
        BatchRequest(example, "IC Default Hard", 5, 9),
        BatchRequest(skill(), "IC Default Hard", 5, 9, module="no-such-module"),
        BatchRequest(skill(), "Skynet Hard", 5, 9),
        BatchRequest(unreadable, "IC Default Hard", 5, 9),
        BatchRequest(skill(), "IC Default Hard", -1, 9),
        BatchRequest(skill(), "IC Default Hard", "5", 9),  # type: ignore[arg-type]
        BatchRequest(skill(), "IC Default Hard", 5, 9, then=((600.0, "not a plan"),)),  # type: ignore[arg-type]
    ]
    mixed = [good[0], *bad[:3], good[1], *bad[3:], good[2]]
    results = run_batches(mixed)
    assert len(results) == len(mixed)
    for request, result in zip(mixed, results, strict=True):
        if request in good:
            assert_same(result, run_batch(request.skill_or_pattern, request.opponent, request.games, request.seed))
            continue
        assert isinstance(result, BatchError) and result.request is request
        with pytest.raises(Exception) as raised:  # the reason is what run_batch would raise
            run_batch(
                request.skill_or_pattern,
                request.opponent,
                request.games,
                request.seed,
                request.module,
                then=request.then,
            )
        assert result.reason == f"{type(raised.value).__name__}: {raised.value}"
    assert "NotAStrategySkill" in results[1].reason  # type: ignore[union-attr]
    assert isinstance(results[5].error, SituationError)  # type: ignore[union-attr]


def test_a_cached_match_up_is_never_served_to_another_body() -> None:
    """Compiled match-ups are reused by what they depend on: a body that differs in one binding,
    with the same skill id, is compiled anew."""
    base = skill(pattern(bindings=(("aggression", 20),)), skill_id="same-id")
    changed = skill(pattern(bindings=(("aggression", 90),)), skill_id="same-id")
    first, second = run_batches(
        [BatchRequest(base, "IC Default Hard", 40, 2), BatchRequest(changed, "IC Default Hard", 40, 2)]
    )
    assert isinstance(first, BatchResult) and isinstance(second, BatchResult)
    assert_same(first, run_batch(base, "IC Default Hard", 40, 2))
    assert_same(second, run_batch(changed, "IC Default Hard", 40, 2))
    assert first.duration_s.tobytes() != second.duration_s.tobytes()


def test_pass_affinity_names_the_pass_each_skill_joins() -> None:
    """Skills with one affinity share a pass of run_batches and skills with different ones never
    do, over a synthetic library's every module and phase (the runner sorts chunks by it)."""
    from benchmarks.synthetic import generate_skills
    from skillstudio.engine.batch import _prepare_request, pass_affinity
    from skillstudio.model import BodyKind

    passes: dict[tuple[str, str], set[tuple[int, int, int]]] = {}
    for s in generate_skills(400, seed=11):
        if s.domain is not Domain.AI_STRATEGY or s.body_kind is not BodyKind.STRATEGIC_PATTERN:
            continue
        module = s.provenance.game_module
        try:
            prepared = _prepare_request(BatchRequest(s, "IC Default Hard", 1, 1, module), {}, {})
        except batch_module.REQUEST_ERRORS:
            continue  # a module the reference engine lacks: an error, in no pass
        passes.setdefault(pass_affinity(s, module), set()).add(sim.group_key(prepared.setup))
    assert len(passes) >= 6  # two modules, three phases
    assert all(len(keys) == 1 for keys in passes.values()), passes
    every = [key for keys in passes.values() for key in keys]
    assert len(every) == len(set(every))
