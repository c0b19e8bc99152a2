"""Big chunks apply many skills per transaction; they must store exactly what one skill per
transaction stores: evidence, run rows, games, quality, intervals, revisions, audit entries.

The same synthetic library (every kind of outcome: promotions, contradictions, error-only
sessions of a module the engine lacks, games repeating games already credited, a revalidation,
a row changed outside SkillStudio) is verified twice through the same runs and seeds: once with
``chunk_games`` equal to the games per skill (each chunk completes one skill: one skill per
transaction), once with every run in one chunk (all skills in one transaction)."""

from __future__ import annotations

import itertools
import re
import sqlite3
from pathlib import Path

from benchmarks.synthetic import generate_skills
from skillstudio.model import BodyKind, Domain
from skillstudio.store import Actor, Database, LibraryChange, SkillRepository
from skillstudio.store.snapshots import decode_snapshot
from skillstudio.verification.runner import Progress, RunFinished, SkillResult, collect, run_verification, start_run

HARD = "IC Default Hard"
# (kind, games per skill, seed): the third run repeats the first one's seed, so its first 12
# games of each skill are games already credited, and the fourth repeats the first.
RUNS = (("verify", 12, 7), ("revalidate", 6, 8), ("verify", 16, 7), ("verify", 12, 7))
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?")


def _library(path: Path) -> Path:
    skills = generate_skills(60, seed=5)
    with Database(path, create=True) as database:
        SkillRepository(database, Actor("tester")).create_many(skills)
    outside = next(s for s in skills if s.domain is Domain.AI_STRATEGY and s.body_kind is BodyKind.STRATEGIC_PATTERN)
    with sqlite3.connect(path) as connection:  # another program's write: history records it first
        connection.execute("UPDATE skills SET description = 'changed elsewhere' WHERE id = ?", (outside.id,))
    return path


def _verify_all(path: Path, chunk_of: dict[int, int]) -> list[list[tuple[object, ...]]]:
    """Every run of RUNS over the library's playable skills; each run's SkillResults, the run id
    spelled by its position."""
    results = []
    with Database(path) as database:
        heard: list[LibraryChange] = []
        database.changes.subscribe(heard.append)
        repository = SkillRepository(database, Actor("tester"))
        skills = [
            s
            for s in repository.get_many([s.id for s in generate_skills(60, seed=5)])
            if s.domain is Domain.AI_STRATEGY and s.body_kind is BodyKind.STRATEGIC_PATTERN
        ]
        assert len(skills) > 10
        for index, (kind, games, seed) in enumerate(RUNS):
            run_id = start_run(
                database,
                skills,
                opponent=HARD,
                games=games,
                seed=seed,
                kind=kind,
                chunk_games=chunk_of.get(games, games),
                actor=Actor("tester"),
            )
            final = collect(run_verification(database, run_id, actor=Actor("tester")))
            assert final.status == "finished"
            results.append([_spelled(_fields(r), {run_id: f"run#{index}"}) for r in final.results])
            # Announced as one transaction per skill would: one change per applied skill, its action.
            results.append([_spelled((c.action, c.skill_ids, c.actor), {}) for c in heard])
            heard.clear()
    return results


def _fields(result: SkillResult) -> tuple[object, ...]:
    return (
        result.skill_id,
        result.counts,
        result.success_rate,
        result.interval,
        result.before,
        result.after,
        result.action,
        result.reason,
        result.credited,
        result.quality_rate,
        result.quality_interval,
        result.verification_count,
        result.duplicates,
        result.contradiction,
    )


def _spelled(value: object, names: dict[str, str]) -> tuple[object, ...]:
    """``value`` with run ids replaced by their position and timestamps blanked."""
    text = repr(value)
    for run_id, name in names.items():
        text = text.replace(run_id, name)
    return (_TIME.sub("<time>", text),)


def _stored(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row verification wrote, without ids, timestamps, chunk sizes and claims; run ids
    spelled by the runs' order."""
    with sqlite3.connect(path) as connection:
        runs = [run_id for (run_id,) in connection.execute("SELECT id FROM studio_verification_runs ORDER BY rowid")]
        names = {run_id: f"run#{index}" for index, run_id in enumerate(runs)}
        queries = {
            "runs": "SELECT id, kind, status, opponent, engine, engine_version, executor, seed, games, actor, "
            "options, policy, message FROM studio_verification_runs",
            "run_skills": "SELECT run_id, skill_id, position, game_module, body_hash, confidence_before, "
            "confidence_after, wins, losses, draws, errors, success_rate, wilson_low, wilson_high, note, duplicates, "
            "applied_at IS NULL FROM studio_run_skills",
            "games": "SELECT run_id, skill_id, game, seed, outcome, duration_s, resource_delta, army_value_delta, "
            "map_control, error, engine_version FROM studio_run_games",
            "evidence": "SELECT skill_id, run_id, kind, opponent, wins, losses, draws, errors, rating, rated, "
            "engine_version, body_hash, note FROM studio_verifications",
            "quality": "SELECT id, verification_count, success_rate, average_rating, confidence, last_verified "
            "FROM skills",
            "intervals": "SELECT skill_id, successes, trials, wilson_low, wilson_high FROM studio_skill_intervals",
            "revisions": "SELECT skill_id, number, version, action, author, message, snapshot FROM studio_revisions",
            "audit": "SELECT actor, actor_kind, action, skill_id, revision, details FROM studio_audit_log",
        }
        return {
            table: sorted(_spelled(_readable(table, row), names) for row in connection.execute(query))
            for table, query in queries.items()
        }


def _readable(table: str, row: tuple[object, ...]) -> tuple[object, ...]:
    """A revision's snapshot as the document it holds (compressed bytes hide its timestamps)."""
    if table != "revisions":
        return row
    *columns, snapshot = row
    assert isinstance(snapshot, bytes)
    return (*columns, decode_snapshot(snapshot))


def test_many_skills_per_transaction_store_what_one_per_transaction_stores(tmp_path: Path) -> None:
    one_each = _library(tmp_path / "one-each.db")
    all_at_once = _library(tmp_path / "all-at-once.db")
    results_one_each = _verify_all(one_each, {})
    results_all_at_once = _verify_all(all_at_once, {games: 10_000 for _, games, _ in RUNS})
    assert results_one_each == results_all_at_once
    stored_one_each, stored_all_at_once = _stored(one_each), _stored(all_at_once)
    for table, rows in stored_one_each.items():
        assert rows == stored_all_at_once[table], table
    # What the comparison covers: every path of applying a session was taken.
    actions = {action for (text,) in stored_one_each["audit"] for action in re.findall(r"'skill\.\w+'", text)}
    assert {"'skill.verify'", "'skill.promote'"} <= actions
    reasons = " ".join(text for run in results_one_each for (text,) in run)
    assert "only error games" in reasons and "repeat games already credited" in reasons
    assert any("'external'" in text for (text,) in stored_one_each["revisions"])


def test_chunks_are_filled_with_many_skills_and_cancel_stops_within_one(more_libraries, tmp_path: Path) -> None:
    from tests.verification.helpers import fill_library, playable_skills

    with Database(fill_library(more_libraries("lib"), 5)) as database:
        skills = SkillRepository(database).get_many([s.id for s in playable_skills(5)])
        run_id = start_run(database, skills, opponent=HARD, games=7, seed=3, chunk_games=10)
        events = list(run_verification(database, run_id))
        assert [e.chunk_games for e in events if isinstance(e, Progress)] == [10, 10, 10, 5]
        # A skill is applied after the chunk that brings its last game: the first chunk holds
        # skill 0's seven games and three of skill 1's.
        order = [type(e).__name__ for e in events[1:]]
        assert order[:3] == ["Progress", "SkillResult", "Progress"]

        stop = start_run(database, skills, opponent=HARD, games=7, seed=3, chunk_games=20)
        seen: list[Progress] = []
        for event in run_verification(database, stop, cancel=lambda: bool(seen)):
            if isinstance(event, Progress):
                seen.append(event)
        assert isinstance(event, RunFinished) and event.status == "cancelled"
        assert [p.games_done for p in seen] == [20]
        assert collect(run_verification(database, stop)).games_done == 35


def test_a_plan_keeps_the_skills_of_one_engine_pass_together(tmp_path: Path) -> None:
    """Each of the engine's passes plays a whole step loop, so the plan puts skills of one
    module and phase next to each other: a 4,000-game chunk of a library held six passes in run
    order, and one when sorted. Every missing game is still planned exactly once."""
    from skillstudio.engine.batch import pass_affinity
    from skillstudio.store.runs import RunStore
    from skillstudio.verification.runner import _plan

    with Database(_library(tmp_path / "lib.db")) as database:
        skills = [
            s
            for s in SkillRepository(database).get_many([s.id for s in generate_skills(60, seed=5)])
            if s.domain is Domain.AI_STRATEGY and s.body_kind is BodyKind.STRATEGIC_PATTERN
        ]
        run_id = start_run(database, skills, opponent=HARD, games=5, seed=1, chunk_games=12)
        store = RunStore(database)
        entries = {entry.skill_id: entry for entry in store.skills(run_id)}
        done = {skills[0].id: {1, 3}}  # a resumed run: two of one skill's games are in
        chunks = _plan(store.run(run_id), entries, {s.id: s for s in skills}, done)

    def changes(passes: list[tuple[str, str]]) -> int:
        return sum(a != b for a, b in itertools.pairwise(passes))

    planned = [pass_affinity(p.skill, p.module) for chunk in chunks for p in chunk.pieces]
    in_run_order = [
        pass_affinity(s, entries[s.id].game_module) for s in sorted(skills, key=lambda s: entries[s.id].position)
    ]
    assert len(set(planned)) >= 4
    assert changes(planned) == len(set(planned)) - 1 < changes(in_run_order)
    games = sorted(
        (p.skill.id, g) for chunk in chunks for p in chunk.pieces for g in range(p.first_game, p.first_game + p.games)
    )
    assert games == sorted((s.id, g) for s in skills for g in range(5) if not (s is skills[0] and g in (1, 3)))
    assert all(sum(p.games for p in chunk.pieces) == 12 for chunk in chunks[:-1])
