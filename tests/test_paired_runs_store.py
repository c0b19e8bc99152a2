"""Migration 11's store part: baseline games, lifts, sequential decisions, composition runs."""

from __future__ import annotations

from skillstudio.store import Actor, ChangeKind, Counts, Database, GameRow, RunSkillEntry, SkillRepository
from skillstudio.store.paired_runs import DecisionRecord, LiftRecord, PairedRuns
from skillstudio.store.runs import RunStore
from tests.factories import ai_skill


def _run(database: Database, lead: str, kind: str = "sequence") -> str:
    return RunStore(database).create_run(
        skills=[RunSkillEntry(lead, "ra1", "hash", "tentative")],
        opponent="IC Default Hard",
        games=4,
        seed=1,
        executor="inprocess",
        chunk_games=4,
        actor="t",
        kind=kind,
    )


def test_baseline_games_lifts_and_decisions_round_trip(database: Database) -> None:
    paired = PairedRuns(database)
    run = _run(database, "s1", "verify")
    rows = [GameRow("s1", i, outcome, seed=i) for i, outcome in enumerate(["win", "loss", "error"])]
    assert paired.record_baseline_games(run, rows) == 3
    assert paired.record_baseline_games(run, rows[:1]) == 0  # a replayed chunk adds nothing
    assert paired.recorded_baseline_games(run) == {"s1": {0, 1, 2}}
    assert [g.outcome for g in paired.baseline_games(run, "s1")] == ["win", "loss", "error"]
    record = LiftRecord(run, "s1", "h", "IC Default Hard", "1.1.0", 1, 2, 7, 10, 1, -0.5, -0.01)
    announced = []
    database.changes.subscribe(announced.append)
    paired.write_lifts(run, [record])
    [change] = announced  # views showing runs reload (the dashboard, the detail pane)
    assert change.touches(ChangeKind.RUNS) and change.skill_ids == ("s1",)
    [entry] = SkillRepository(database).history.audit(skill_id="s1")
    assert entry.details == {"run": run, "lifts": 1, "worse_than_default_plan": ["s1"]}
    [stored] = paired.lifts(run).values()
    assert (stored.pairs, stored.lift, stored.worse) == (20, -0.25, True)
    assert paired.latest_lifts(["s1", "other"])["s1"].run_id == run
    assert paired.lift_counts([run]) == {run: (1, 1)}
    paired.write_decisions([DecisionRecord(run, "s1", "candidate", 0.4, 0.1, 0.05, 0.05, 1, "pending", 0, 0, 0.0)])
    paired.write_decisions([DecisionRecord(run, "s1", "candidate", 0.4, 0.1, 0.05, 0.05, 1, "above", 9, 10, 3.1)])
    assert paired.decisions(run)["s1"].decision == "above"  # replaced, not added
    assert paired.decision_counts([run]) == {run: {"above": 1}}


def test_a_composition_run_is_applied_once_with_history(database: Database) -> None:
    repository = SkillRepository(database, Actor("mira"))
    a, b, c = (repository.create(ai_skill(name=name)) for name in ("A", "B", "C"))
    paired = PairedRuns(database, Actor("mira"))
    run = _run(database, a.id)
    paired.create_pairs(run, [(a.id, b.id, "8:00"), (b.id, c.id, "late")])
    counts = Counts(6, 3, 1, 2)
    applied = paired.apply_sequence(run, a.id, counts, credited=True, successes=6, note="counts", details={"run": run})
    assert applied is not None and [p.successes for p in applied] == [6, 6]
    assert {x.partner_id: x.success_count for x in repository.evidence.compositions(b.id)} == {a.id: 6, c.id: 6}
    assert b.id in repository.get(a.id).composable_with and b.id in repository.get(c.id).composable_with
    assert [e.action for e in repository.history.audit(skill_id=b.id)][:2] == ["skill.compose", "skill.compose"]
    [lead] = RunStore(database).skills(run)
    assert (lead.applied_at is not None, lead.wins, lead.errors, lead.confidence_after) == (True, 6, 2, "tentative")
    # Applied once: a second call (a resumed runner, a crash after commit) writes nothing.
    assert paired.apply_sequence(run, a.id, counts, credited=True, successes=6, note="", details={}) is None
    assert {x.partner_id: x.success_count for x in repository.evidence.compositions(a.id)} == {b.id: 6}


def test_a_composition_that_does_not_count_adds_no_partner(database: Database) -> None:
    repository = SkillRepository(database, Actor("mira"))
    a, b = (repository.create(ai_skill(name=name)) for name in ("A", "B"))
    paired = PairedRuns(database)
    run = _run(database, a.id)
    paired.create_pairs(run, [(a.id, b.id, "8:00")])
    revisions = len(repository.history.revisions(a.id))
    [pair] = paired.apply_sequence(run, a.id, Counts(1, 9), credited=False, successes=0, note="below", details={})
    assert (pair.credited, pair.successes, pair.note, pair.counts.wins) == (False, 0, "below", 1)
    assert repository.evidence.compositions(a.id) == [] and repository.get(a.id).composable_with == ()
    assert len(repository.history.revisions(a.id)) == revisions  # nothing about the skill changed
    assert [p.run_id for p in paired.pairs_of_skill(b.id)] == [run]
