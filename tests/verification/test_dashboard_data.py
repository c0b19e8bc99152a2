"""What the dashboard plots, computed without Qt (skillstudio.verification.dashboard_data)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from skillstudio.library import create_library
from skillstudio.model import Confidence, Domain
from skillstudio.model.evidence import EvidenceKind, VerificationRecord
from skillstudio.store import Actor, Database, QualityOutcome, SkillQuery, SkillRepository, body_hash
from skillstudio.verification import dashboard_data as dd
from skillstudio.verification.runner import collect, verify
from skillstudio.verification.standing import standings
from skillstudio.verification.stats import wilson
from tests.verification.helpers import make_library, playable_skills

HARD = "IC Default Hard"


@pytest.fixture
def sample(tmp_path: Path):
    with create_library(tmp_path / "sample.db", sample=True) as database:
        yield SkillRepository(database, Actor("tester"))


def test_tier_distribution_counts_every_filtered_skill_once(sample: SkillRepository) -> None:
    groups = dd.tier_distribution(sample)
    assert sum(g.total for g in groups) == sample.count()
    stats = sample.facets.stats()
    for tier in dd.TIERS:
        assert sum(g.counts[tier] for g in groups) == stats.by_confidence.get(tier, 0)
    td = dd.tier_distribution(sample, SkillQuery(game_modules=("td",), domains=(Domain.AI_STRATEGY,)))
    assert [(g.domain, g.game_module) for g in td] == [("ai_strategy", "td")]
    assert td[0].total == sample.query(SkillQuery(game_modules=("td",), domains=(Domain.AI_STRATEGY,))).total


def test_histogram_bins_success_rates_of_verified_skills(sample: SkillRepository) -> None:
    histogram = dd.success_rate_histogram(sample, SkillQuery(text="anti"))
    ids = sample.query(SkillQuery(text="anti")).ids
    rates = [s.success_rate for s in sample.summaries(ids) if s.verification_count]
    assert histogram.verified == len(rates) and histogram.unverified == len(ids) - len(rates)
    assert sum(histogram.counts) == len(rates) and len(histogram.edges) == dd.HISTOGRAM_BINS + 1
    for rate in rates:
        index = min(dd.HISTOGRAM_BINS - 1, int(rate * dd.HISTOGRAM_BINS))
        assert histogram.counts[index] >= 1


def test_success_history_is_cumulative_over_credited_sessions_with_wilson(tmp_path: Path) -> None:
    with Database(make_library(tmp_path / "lib.db", 1)) as database:
        repository = SkillRepository(database, Actor("tester"))
        skill = repository.get(playable_skills(1)[0].id)
        first = collect(verify(database, [skill], opponent=HARD, games=6, seed=1)).results[0]
        collect(
            verify(database, [repository.get(skill.id)], opponent="IC Default Easy", games=5, seed=2)
        )  # not credited
        second = collect(verify(database, [repository.get(skill.id)], opponent=HARD, games=4, seed=3)).results[0]
        history = dd.success_history(repository, skill.id)
        assert [p.session for p in history] == [1, 2]
        wins = first.counts.wins + second.counts.wins
        decided = first.counts.decided + second.counts.decided
        assert (history[-1].wins, history[-1].decided) == (wins, decided)
        assert history[-1].rate == pytest.approx(repository.get(skill.id).quality.success_rate)
        interval = wilson(wins, decided)
        assert (history[-1].low, history[-1].high) == (pytest.approx(interval.low), pytest.approx(interval.high))

        opponents = dd.win_rate_by_opponent(repository, [skill.id])
        assert {o.opponent for o in opponents} == {HARD, "IC Default Easy"}
        hard = next(o for o in opponents if o.opponent == HARD)
        assert (hard.wins, hard.decided) == (wins, decided)


def test_content_history_tracks_completion_and_mean_rating(sample: SkillRepository) -> None:
    skill = next(sample.get(i) for i in sample.query(SkillQuery(domains=(Domain.CONTENT_GENERATION,))).ids)
    records = [
        VerificationRecord(
            "2099-01-01T00:00:00.000Z", EvidenceKind.PLAY, 3, 1, rating=4.0, rated=4, body_hash=body_hash(skill)
        ),
        VerificationRecord(
            "2099-01-02T00:00:00.000Z", EvidenceKind.PLAY, 1, 1, rating=3.0, rated=1, body_hash=body_hash(skill)
        ),
    ]
    earlier = dd.content_history(sample, skill.id)
    for record in records:
        sample.evidence.set_quality(skill.id, QualityOutcome(sample.get(skill.id).quality), record=record)
    points = dd.content_history(sample, skill.id)
    assert points[: len(earlier)] == earlier and len(points) == len(earlier) + 2
    plays = (earlier[-1].plays if earlier else 0) + 4 + 2
    completed = (earlier[-1].completed if earlier else 0) + 3 + 1
    rated = (earlier[-1].rated if earlier else 0) + 4 + 1
    rating_sum = ((earlier[-1].average_rating or 0) * earlier[-1].rated if earlier else 0) + 4.0 * 4 + 3.0
    last = points[-1]
    assert (last.plays, last.completed, last.rated) == (plays, completed, rated)
    assert last.completion_rate == pytest.approx(completed / plays)
    assert last.average_rating == pytest.approx(rating_sum / rated)


def test_snapshot_and_csv(sample: SkillRepository, tmp_path: Path) -> None:
    ids = sample.query().ids[:3]
    shot = dd.snapshot(sample, SkillQuery(), ids)
    assert [s.skill_id for s in shot.skills] == ids
    assert shot.thresholds == {"candidate": 0.4, "established": 0.6, "proven": 0.7}
    path = dd.write_csv(tmp_path / "t.csv", ("a", "b"), [(1, None), ("x", 0.5)])
    assert list(csv.reader(path.open())) == [["a", "b"], ["1", ""], ["x", "0.5"]]
    assert Confidence.PROVEN.value in dd.TIERS


def test_past_a_handful_the_snapshot_draws_the_most_played_and_sums_up_the_others(sample: SkillRepository) -> None:
    ids = list(sample.query(SkillQuery(domains=(Domain.AI_STRATEGY,))).ids)
    credited = {
        skill_id: (
            standing.headless.wins + standing.gameplay.wins,
            standing.headless.decided + standing.gameplay.decided,
        )
        for skill_id, standing in standings(sample, ids).items()
    }
    shot = dd.snapshot(sample, SkillQuery(), ids, max_skills=5)
    assert shot.ranked and len(shot.skills) == 5
    drawn = [s.skill_id for s in shot.skills]
    assert all(series.history for series in shot.skills)  # each drawn skill has credited sessions to draw
    assert min(credited[i][1] for i in drawn) >= max(credited[i][1] for i in ids if i not in drawn)
    rest = [credited[i] for i in ids if i not in drawn]
    assert shot.others.skills == len(ids) - 5
    assert (shot.others.wins, shot.others.games) == (sum(w for w, _ in rest), sum(d for _, d in rest))
    # every selected skill's evidence is in the opponents plot, not only the drawn ones'
    assert sum(o.decided for o in shot.opponents) == sum(o.decided for o in dd.win_rate_by_opponent(sample, ids))
    # a handful keeps the selection's order, with nothing left over
    few = dd.snapshot(sample, SkillQuery(), ids[:3], max_skills=5)
    assert [s.skill_id for s in few.skills] == ids[:3] and not few.ranked and few.others == dd.Others()


def test_the_snapshot_flags_the_selected_skills_whose_tier_is_contradicted(sample: SkillRepository) -> None:
    ids = list(sample.query(SkillQuery(domains=(Domain.AI_STRATEGY,))).ids)
    shot = dd.snapshot(sample, SkillQuery(), ids, max_skills=5)
    assert shot.flagged, "the sample holds contradicted tiers (IC Default balanced opening)"
    assert [f.skill_id for f in shot.flagged] == [i for i in ids if i in shot.contradicted]
    names = {s.id: s.name for s in sample.summaries(ids)}
    assert all(f.name == names[f.skill_id] and f.contradiction.advice for f in shot.flagged)
    assert dd.snapshot(sample, SkillQuery(), [], max_skills=5).flagged == ()
