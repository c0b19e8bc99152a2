"""D057 skill pruning, at the rules' boundaries."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from skillstudio.model import Confidence, Quality
from skillstudio.packages.prune import apply_prune, plan_prune, prune_candidates
from skillstudio.store import SkillRepository
from tests import factories

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def at(delta: timedelta) -> str:
    return (NOW - delta).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def skill(
    confidence=Confidence.ESTABLISHED,
    rate=0.6,
    verified=timedelta(days=1),
    created=timedelta(days=1),
    uses=3,
    last_used=None,
    **kw,
):
    return factories.ai_skill(
        quality=Quality(5, rate, None, confidence, at(verified)),
        created_at=at(created),
        use_count=uses,
        last_used=at(last_used) if last_used is not None else None,
        **kw,
    )


def reasons(skills, **kw) -> dict[str, str]:
    return {c.skill_id: c.reason for c in prune_candidates(skills, now=NOW, **kw)}


def test_tentative_stale_after_30_days_not_at_30() -> None:
    at_30 = skill(Confidence.TENTATIVE, verified=timedelta(days=30), created=timedelta(days=40))
    over = skill(Confidence.TENTATIVE, verified=timedelta(days=30, seconds=1), created=timedelta(days=40))
    established = skill(Confidence.ESTABLISHED, verified=timedelta(days=300), created=timedelta(days=300))
    found = reasons([at_30, over, established])
    assert at_30.id not in found and established.id not in found
    assert "tentative" in found[over.id]


def test_never_verified_tentative_counts_from_creation() -> None:
    fresh = replace(
        skill(Confidence.TENTATIVE, created=timedelta(days=29)), quality=Quality(confidence=Confidence.TENTATIVE)
    )
    old = replace(
        skill(Confidence.TENTATIVE, created=timedelta(days=31)), quality=Quality(confidence=Confidence.TENTATIVE)
    )
    assert set(reasons([fresh, old])) == {old.id}


def test_unused_after_90_days() -> None:
    at_90 = skill(uses=0, created=timedelta(days=90))
    over = skill(uses=0, created=timedelta(days=90, seconds=1))
    used = skill(uses=4, created=timedelta(days=400), last_used=timedelta(days=10))
    stale_use = skill(uses=4, created=timedelta(days=400), last_used=timedelta(days=91))
    found = reasons([at_90, over, used, stale_use])
    assert set(found) == {over.id, stale_use.id}


def test_superseded_needs_a_strictly_higher_rate_in_the_same_situation() -> None:
    best = skill(rate=0.8)
    worse = skill(rate=0.5)
    equal = skill(rate=0.8)
    from skillstudio.model import BuildFocus, GamePhase
    from tests.factories import strategic_body

    other_body = strategic_body()
    other_situation = replace(other_body, situation=replace(other_body.situation, game_phase=GamePhase.LATE))
    elsewhere = skill(rate=0.1, body=other_situation)
    lower_confidence_better = skill(Confidence.TENTATIVE, rate=0.99, verified=timedelta(days=1))
    found = reasons([best, worse, equal, elsewhere, lower_confidence_better])
    assert set(found) == {worse.id}
    # they share a name (as a refinement and its original do): the reason tells them apart by id
    assert found[worse.id].startswith(f"superseded by “{best.name}” ({best.id[:8]})")
    assert found[worse.id].endswith("(same situation, success rate 80% > 50%)")
    renamed = replace(best, name="Rocket screen, sharper")
    assert reasons([renamed, worse])[worse.id].startswith("superseded by “Rocket screen, sharper” (same situation")
    del BuildFocus


def test_max_size_keeps_proven_first_and_drops_tentative_duplicates_first() -> None:
    proven = skill(Confidence.PROVEN, rate=0.9)
    established = skill(Confidence.ESTABLISHED, rate=0.9, body=factories.example_skill().body)
    from skillstudio.model import BuildFocus
    from tests.factories import strategic_body

    unique_body = strategic_body(BuildFocus.NAVAL)
    unique_body = replace(unique_body, situation=replace(unique_body.situation, map_control=0.9))
    tentative_unique = skill(Confidence.TENTATIVE, rate=0.1, body=unique_body)
    tentative_duplicate = skill(Confidence.TENTATIVE, rate=0.95)  # same situation as proven, higher rate
    found = reasons([proven, established, tentative_unique, tentative_duplicate], max_size=2)
    assert set(found) == {tentative_unique.id, tentative_duplicate.id}
    found = reasons([proven, established, tentative_unique, tentative_duplicate], max_size=3)
    assert set(found) == {tentative_duplicate.id}
    assert set(reasons([proven, established], max_size=0)) == {proven.id, established.id}


def test_pruning_moves_to_the_trash(repository: SkillRepository) -> None:
    old = skill(Confidence.TENTATIVE, verified=timedelta(days=100), created=timedelta(days=100))
    keep = skill(Confidence.PROVEN)
    repository.create_many([old, keep])
    candidates = plan_prune(repository, now=NOW)
    assert [c.skill_id for c in candidates] == [old.id]
    assert apply_prune(repository, candidates) == 1
    assert [entry.skill_id for entry in repository.trash.entries()] == [old.id]
    assert repository.trash.restore(old.id) is not None
    assert "skill.prune" in {entry.action for entry in repository.history.audit()}


def test_planning_reports_its_read_of_every_skill_and_stops_when_told(repository: SkillRepository) -> None:
    skills = [skill(Confidence.TENTATIVE, verified=timedelta(days=100), created=timedelta(days=100))]
    skills += [skill(Confidence.PROVEN) for _ in range(1_100)]
    repository.create_many(skills)
    reports: list[tuple[int, int]] = []
    candidates = plan_prune(repository, now=NOW, progress=lambda done, total: reports.append((done, total)))
    assert [c.skill_id for c in candidates] == [skills[0].id]
    assert reports == [(0, 1_101), (500, 1_101), (1_000, 1_101), (1_101, 1_101)]  # before each 500, and done

    class Enough(Exception):
        pass

    def stop_after_first(done: int, total: int) -> None:
        if done:
            raise Enough

    with pytest.raises(Enough):  # a dialog closed meanwhile: the read ends at the next report
        plan_prune(repository, now=NOW, progress=stop_after_first)
