"""The dashboard's tier and success-rate counts, counted by SQLite, equal counting the rows in
Python (the old path) on the same data, odd values an engine may write included; its
contradicted tiers, judged a chunk at a time, equal judging them all at once."""

from __future__ import annotations

import random
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from skillstudio.library import create_library
from skillstudio.model import Confidence, Domain, Provenance, Quality, Source
from skillstudio.store import Actor, Database, SkillQuery, SkillRepository
from skillstudio.verification import dashboard_data as dd
from skillstudio.verification.standing import contradictions
from tests.factories import ai_skill, content_skill

QUERIES = [
    SkillQuery(),
    SkillQuery(text="rush"),
    SkillQuery(text="rush", sort=dd.SortKey.USE_COUNT, descending=True, limit=3),  # order and paging dropped
    SkillQuery(confidences=(Confidence.PROVEN, Confidence.TENTATIVE), game_modules=("td",)),
    SkillQuery(domains=(Domain.CONTENT_GENERATION,)),
    SkillQuery(tags=("early-game",)),
]


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory):
    rng = random.Random(17)
    path: Path = tmp_path_factory.mktemp("counts") / "lib.db"
    # Rates on and beside every bin's edge (0.7 * 10 is 7.000000000000001, 0.3 * 10 is 3.0000...4).
    edges = [k / 10 for k in range(11)] + [k / 10 - 1e-12 for k in range(1, 11)] + [0.7, 0.29999999999999993]
    skills = [
        (content_skill if n % 5 == 0 else ai_skill)(
            name=f"skill {n}",
            description="rush" if n % 3 else "hold",
            tags=("early-game",) if n % 4 else (),
            provenance=Provenance(Source.hand_authored(), rng.choice(["ra1", "td"]), "0.5.0"),
            quality=Quality(
                rng.choice([0, 0, 1, 7, 40]),
                edges[n % len(edges)] if n % 2 else rng.random(),
                None,
                rng.choice(list(Confidence)),
                None,
            ),
        )
        for n in range(240)
    ]
    with Database(path, create=True) as database:
        SkillRepository(database, Actor("tester")).create_many(skills)
    # What an engine may write: no count, a rate beyond [0, 1], none at all, no tier.
    with sqlite3.connect(path) as raw:
        ids = [row[0] for row in raw.execute("SELECT id FROM skills ORDER BY id LIMIT 8")]
        raw.execute("UPDATE skills SET verification_count = NULL WHERE id = ?", (ids[0],))
        raw.execute("UPDATE skills SET success_rate = 1.5, verification_count = 3 WHERE id = ?", (ids[1],))
        raw.execute("UPDATE skills SET success_rate = -0.25, verification_count = 3 WHERE id = ?", (ids[2],))
        raw.execute("UPDATE skills SET success_rate = NULL, verification_count = 3 WHERE id = ?", (ids[3],))
        raw.execute("UPDATE skills SET confidence = NULL WHERE id = ?", (ids[4],))
    with Database(path) as database:
        yield SkillRepository(database, Actor("tester"))


def _rows(repository: SkillRepository, query: SkillQuery) -> list[tuple[object, ...]]:
    with sqlite3.connect(repository.database.path) as raw:
        ids = repository.query(replace(query, offset=0, limit=None)).ids
        marks = ", ".join("?" * len(ids))
        return raw.execute(
            f"SELECT domain, game_module, confidence, success_rate, verification_count FROM skills WHERE id IN ({marks})",
            ids,
        ).fetchall()


@pytest.mark.parametrize("query", QUERIES, ids=repr)
def test_the_histogram_counts_as_binning_every_row_in_python(library: SkillRepository, query: SkillQuery) -> None:
    rows = _rows(library, query)
    counts = [0] * dd.HISTOGRAM_BINS
    verified = 0
    for *_, rate, games in rows:  # the old path, as it was
        if not games or rate is None:
            continue
        verified += 1
        counts[min(dd.HISTOGRAM_BINS - 1, max(0, int(float(rate) * dd.HISTOGRAM_BINS)))] += 1
    found = dd.success_rate_histogram(library, query)
    assert (found.counts, found.verified, found.unverified) == (tuple(counts), verified, len(rows) - verified)


@pytest.mark.parametrize("query", QUERIES, ids=repr)
def test_the_tiers_count_as_counting_every_row_in_python(library: SkillRepository, query: SkillQuery) -> None:
    expected: dict[tuple[str, str], dict[str, int]] = {}
    for domain, module, confidence, _rate, _games in _rows(library, query):
        counts = expected.setdefault((domain, module), dict.fromkeys(dd.TIERS, 0))
        counts[confidence or Confidence.TENTATIVE.value] += 1
    found = {(g.domain, g.game_module): g.counts for g in dd.tier_distribution(library, query)}
    assert found == expected


def test_contradicted_tiers_judged_a_few_at_a_time_are_those_judged_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with create_library(tmp_path / "sample.db", sample=True) as database:
        repository = SkillRepository(database, Actor("tester"))
        at_once = contradictions(repository, repository.query(SkillQuery()).ids)
        assert len(at_once) > 1, "the sample holds contradicted tiers (IC Default balanced opening)"
        monkeypatch.setattr(dd, "_JUDGED_AT_ONCE", 1)
        assert dd.snapshot(repository, SkillQuery(), []).contradicted == at_once
