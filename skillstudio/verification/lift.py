"""A skill's lift over the module's default plan (``verify --baseline``; docs/verification.md).

After a run's own games, the default plan (``default_plan(module)``, the stock AI) plays each
game the skill played, from the same situation, against the same opponent, with the same seed
(``run_batch(..., baseline=True)``): game *i* of the baseline pairs with the skill's game *i*.
The **lift** is the skill's win rate minus the default plan's over the pairs, with Newcombe's
95% interval for paired proportions (:func:`~skillstudio.verification.stats.newcombe_paired`).

How outcomes enter: a pair counts only when both games were decided; a pair with an error game
on either side is left out (and counted in ``excluded``), so an engine failure never reads as a
loss for one side only. A decided game is a success when it is a win; a draw is decided and not
a win, as in every success rate D057 stores. A skill whose interval lies wholly below zero is
flagged **worse than the default plan**. The lift decides no tier (D057's tiers are about the
win rate against the reference opponent); it is stored with the run and shown beside it.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass

from skillstudio.model import Skill
from skillstudio.store import Actor, InvalidStoredSkill, SkillNotFound, SkillRepository, body_hash
from skillstudio.store.database import Database
from skillstudio.store.errors import LibraryError, RunClaimed
from skillstudio.store.paired_runs import LiftRecord, PairedRuns
from skillstudio.store.runs import RunInfo, RunStore, session_engine_version
from skillstudio.store.types import Counts, GameRow
from skillstudio.verification.executors import Chunk, Executor, Piece, open_executor, play_chunk
from skillstudio.verification.stats import Interval, PairedCounts, newcombe_paired

WORSE = "worse than the default plan"


# --- the statistics ------------------------------------------------------------------------------


def paired_counts(skill_games: Iterable[GameRow], baseline_games: Iterable[GameRow]) -> tuple[PairedCounts, int]:
    """The 2x2 table of the pairs both of whose games were decided (win vs not a win), and how
    many games of the skill were left out because either side's game was an error (a skill's
    error game gets no default-plan partner: the pair could not count). A decided game of the
    skill whose partner is not played yet is neither."""
    skill = {g.game: g.outcome for g in skill_games}
    baseline = {g.game: g.outcome for g in baseline_games}
    both = first = second = neither = excluded = 0
    for game, mine in skill.items():
        if mine == "error":
            excluded += 1
            continue
        if game not in baseline:
            continue
        theirs = baseline[game]
        if theirs == "error":
            excluded += 1
        elif mine == "win" and theirs == "win":
            both += 1
        elif mine == "win":
            first += 1
        elif theirs == "win":
            second += 1
        else:
            neither += 1
    return PairedCounts(both, first, second, neither), excluded


def lift_of(
    info: RunInfo, skill_id: str, skill_hash: str, skill_games: Sequence[GameRow], baseline_games: Sequence[GameRow]
) -> LiftRecord:
    table, excluded = paired_counts(skill_games, baseline_games)
    interval = newcombe_paired(table)
    # The skill's own games' version: a run's is its first returned chunk's, and each game
    # module plays with its own.
    played = Counter(g.engine_version for g in skill_games if g.engine_version)
    return LiftRecord(
        run_id=info.id,
        skill_id=skill_id,
        body_hash=skill_hash,
        opponent=info.opponent,
        engine_version=session_engine_version(played, info.engine_version),
        both_won=table.both,
        skill_only=table.first_only,
        baseline_only=table.second_only,
        neither=table.neither,
        excluded=excluded,
        low=interval.low,
        high=interval.high,
    )


def describe(record: LiftRecord) -> str:
    """``+12.0% [+1.5%, +22.4%] over 40 pairs (skill 55%, default plan 43%)``, flagged if worse."""
    if not record.pairs:
        return f"no decided pairs ({record.excluded} left out for error games)" if record.excluded else "no pairs"
    assert record.lift is not None and record.skill_rate is not None and record.baseline_rate is not None
    text = (
        f"{record.lift:+.1%} [{record.low:+.1%}, {record.high:+.1%}] over {record.pairs} pairs "
        f"(skill {record.skill_rate:.0%}, default plan {record.baseline_rate:.0%})"
    )
    if record.excluded:
        text += f", {record.excluded} left out (error games)"
    return text + (f": {WORSE}" if record.worse else "")


def lift_document(record: LiftRecord | None, current_hash: str | None = None) -> dict[str, object] | None:
    """The lift as JSON (docs/cli.md); ``current_body`` False when measured with another body."""
    if record is None:
        return None
    return {
        "run": record.run_id,
        "pairs": record.pairs,
        "both_won": record.both_won,
        "skill_only": record.skill_only,
        "baseline_only": record.baseline_only,
        "neither": record.neither,
        "excluded": record.excluded,
        "skill_rate": None if record.skill_rate is None else round(record.skill_rate, 4),
        "baseline_rate": None if record.baseline_rate is None else round(record.baseline_rate, 4),
        "lift": None if record.lift is None else round(record.lift, 4),
        "newcombe_95": [round(record.low, 4), round(record.high, 4)],
        "worse_than_default_plan": record.worse,
        "current_body": None if current_hash is None else record.body_hash == current_hash,
    }


# --- playing the baseline ----------------------------------------------------------------------


@dataclass(frozen=True)
class BaselineStarted:
    run_id: str
    games_total: int  # default-plan games this run pairs with the skills' games
    games_done: int  # already recorded (a resumed run)


@dataclass(frozen=True)
class BaselineProgress:
    run_id: str
    games_total: int
    games_done: int
    counts: Counts  # the default plan's W/L/D/E so far, all skills


@dataclass(frozen=True)
class LiftResult:
    skill_id: str
    name: str
    lift: LiftRecord


@dataclass(frozen=True)
class BaselineFinished:
    run_id: str
    complete: bool  # every skill's games are paired and its lift stored
    lifts: tuple[LiftResult, ...] = ()


BaselineEvent = BaselineStarted | BaselineProgress | LiftResult | BaselineFinished


def wants_baseline(info: RunInfo) -> bool:
    return bool(info.options.get("baseline")) and info.kind == "verify"


def play_baseline(
    database: Database,
    run_id: str,
    *,
    executor: Executor | str | None = None,
    cancel: Callable[[], bool] = lambda: False,
    actor: Actor | None = None,
) -> Generator[BaselineEvent, None, BaselineFinished]:
    """Play the default plan on every game the run's skills played that has no partner yet,
    then store each skill's lift; yields events and returns the last one. Claims the run while
    it plays (one runner per run); cancelled, it stores the games so far and no lift of a skill
    whose pairs are incomplete (``verify --resume`` finishes them)."""
    store, paired = RunStore(database), PairedRuns(database, actor)
    try:
        claim = store.claim(run_id)
    except RunClaimed as error:
        raise LibraryError(str(error)) from None
    owned = not isinstance(executor, Executor)
    runner: Executor | None = None
    try:
        info = store.run(run_id)
        repository = SkillRepository(database, actor or Actor.current_user())
        skills: dict[str, Skill] = {}
        for entry in store.skills(run_id):
            with contextlib.suppress(SkillNotFound, InvalidStoredSkill):
                skills[entry.skill_id] = repository.get(entry.skill_id)
        played = {s: games for s, games in _played(store, run_id).items() if s in skills}
        done = paired.recorded_baseline_games(run_id)
        chunks = _plan(info, skills, played, done)
        total = sum(len(games) for games in played.values())
        already = sum(len(done.get(s, set()) & set(g)) for s, g in played.items())
        yield BaselineStarted(run_id, total, already)
        counts = Counts()
        if chunks:
            runner = executor if isinstance(executor, Executor) else open_executor(executor or info.executor)
            for result in runner.map_unordered(play_chunk, chunks, cancel):
                paired.record_baseline_games(run_id, result.rows)
                for row in result.rows:
                    counts = counts.adding(row.outcome)
                already += len(result.rows)
                yield BaselineProgress(run_id, total, already, counts)
        results: list[LiftResult] = []
        complete = True
        recorded = paired.recorded_baseline_games(run_id)
        info = store.run(run_id)
        hashes = {entry.skill_id: entry.body_hash for entry in store.skills(run_id)}
        for skill_id, games in played.items():
            if not set(games) <= recorded.get(skill_id, set()):
                complete = False
                continue
            mine, theirs = store.games(run_id, skill_id), paired.baseline_games(run_id, skill_id)
            # The body the games were played with (the run's record), else the current one.
            record = lift_of(info, skill_id, hashes.get(skill_id) or body_hash(skills[skill_id]), mine, theirs)
            results.append(LiftResult(skill_id, skills[skill_id].name, record))
        paired.write_lifts(run_id, [r.lift for r in results])
        yield from results
        finished = BaselineFinished(run_id, complete, tuple(results))
        yield finished
        return finished
    finally:
        if owned and runner is not None:
            runner.close()
        with contextlib.suppress(LibraryError):
            store.release(claim)


def _played(store: RunStore, run_id: str) -> dict[str, list[int]]:
    """The decided games each skill of the run played: the games the default plan must pair
    (an error game's pair could not count, so it is not played)."""
    out: dict[str, list[int]] = {}
    for game in store.games(run_id):
        games = out.setdefault(game.skill_id, [])
        if game.outcome != "error":
            games.append(game.game)
    return out


def _plan(
    info: RunInfo, skills: dict[str, Skill], played: dict[str, list[int]], done: dict[str, set[int]]
) -> list[Chunk]:
    """One chunk per contiguous range (at most ``chunk_games`` games) of unpaired games."""
    size = max(1, info.chunk_games)
    chunks: list[Chunk] = []
    for skill_id, games in played.items():
        missing = sorted(set(games) - done.get(skill_id, set()))
        start = 0
        while start < len(missing):
            end = start + 1
            while end < len(missing) and missing[end] == missing[end - 1] + 1 and end - start < size:
                end += 1
            skill = skills[skill_id]
            piece = Piece(skill, skill.provenance.game_module, missing[start], end - start, baseline=True)
            chunks.append(Chunk(len(chunks), info.opponent, info.seed, (piece,), info.engine))
            start = end
    return chunks


# --- reading -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SkillLift:
    """The dashboard's and the detail pane's view of one skill's latest lift."""

    skill_id: str
    name: str
    lift: LiftRecord
    current_body: bool  # measured with the skill's current body

    @property
    def interval(self) -> Interval:
        return Interval(self.lift.low, self.lift.high)


def latest_lifts(repository: SkillRepository, skill_ids: Sequence[str]) -> list[SkillLift]:
    """The latest lift of each of these skills that has one, in the given order."""
    found = PairedRuns(repository.database).latest_lifts(list(skill_ids))
    out: list[SkillLift] = []
    for skill_id in skill_ids:
        record = found.get(skill_id)
        if record is None:
            continue
        try:
            skill = repository.get(skill_id)
        except (SkillNotFound, InvalidStoredSkill):
            continue
        out.append(SkillLift(skill_id, skill.name, record, record.body_hash == body_hash(skill)))
    return out


__all__ = [
    "WORSE",
    "BaselineEvent",
    "BaselineFinished",
    "BaselineProgress",
    "BaselineStarted",
    "LiftResult",
    "SkillLift",
    "describe",
    "latest_lifts",
    "lift_document",
    "lift_of",
    "paired_counts",
    "play_baseline",
    "wants_baseline",
]
