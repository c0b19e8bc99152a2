"""The verification batch runner: a plain generator of progress events.

``start_run`` writes the run (which skills, opponent, engine, executor, seed, games) and returns
its id; ``run_verification(database, run_id)`` plays every game not yet recorded and yields
events as chunks return. The CLI iterates it; the GUI runs it in a worker thread. It stops
cleanly when ``cancel`` (a ``threading.Event`` or a callable) is set: the run is marked
``cancelled`` and ``verify --resume RUN_ID`` completes it later. A chunk holds many skills'
games; its games are stored as it returns, in one transaction, so a killed process loses at
most the chunks in flight.

When all of a skill's games are in, its session becomes a :class:`VerificationRecord`, and the
policy (:mod:`skillstudio.verification.policy`) recomputes its quality from the evidence that
counts; ``SkillRepository.evidence.apply_sessions`` stores it with a revision and an audit entry,
together with the other skills the same chunk completed (one transaction, the same rows).
"""

from __future__ import annotations

import contextlib
import itertools
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from skillstudio.model import BodyKind, Confidence, Domain, Skill, ValidationError, utc_now
from skillstudio.model.evidence import EvidenceKind, VerificationRecord
from skillstudio.store import (
    Actor,
    AuditAction,
    InvalidStoredSkill,
    JsonInput,
    QualityOutcome,
    RunSkillResult,
    SkillNotFound,
    SkillRepository,
    SuccessInterval,
    body_hash,
)
from skillstudio.store.database import Database
from skillstudio.store.errors import LibraryError
from skillstudio.store.evidence import RunSession
from skillstudio.store.runs import (
    CLAIM_HEARTBEAT_S,
    Claim,
    Counts,
    GameRow,
    RunClaimed,
    RunInfo,
    RunSkill,
    RunSkillEntry,
    RunStore,
    session_engine_version,
)
from skillstudio.store.skill_rows import RowParser, load_many
from skillstudio.store.types import SessionApplied
from skillstudio.verification.executors import Chunk, Executor, Piece, open_executor, play_chunk
from skillstudio.verification.policy import (
    Assessment,
    Contradiction,
    VerificationPolicy,
    audit_action,
    policy_for,
)
from skillstudio.verification.sequential import Stopping, design_of
from skillstudio.verification.stats import Interval, wilson

# Games per chunk: many skills' games, enough for the engine to play them as one vectorised
# batch (measured on 20-game skills: 2,000 games per call reach ~70% of the engine's speed in
# one 10,000-game batch, 4,000 ~80%), few enough that progress comes about twice a second and a
# cancel is honoured within one chunk (half a second at the reference engine's speed).
DEFAULT_CHUNK_GAMES = 4_000
# A window's live plot wants a point every few percent of a batch; smaller chunks cost speed.
PROGRESS_POINTS = 25
MIN_CHUNK_GAMES = 20


def chunk_games_for(total_games: int) -> int:
    """Games per chunk for a batch someone watches: about PROGRESS_POINTS progress events, never
    fewer than MIN_CHUNK_GAMES games per chunk nor more than DEFAULT_CHUNK_GAMES."""
    return max(MIN_CHUNK_GAMES, min(DEFAULT_CHUNK_GAMES, -(-total_games // PROGRESS_POINTS)))


MAX_GAMES = 100_000
MAX_SEED = 2**63 - 1
# Fresh seeds stay below 2**31 so a person can type them back into the verify dialog.
FRESH_SEED_MAX = 2**31 - 1

CancelToken = threading.Event | Callable[[], bool] | None


class VerificationError(ValueError):
    """A run that cannot start or continue; the message says why."""


class ClaimLost(VerificationError):
    """Another runner took this run over (our claim went stale); we stop without touching it."""


# --- events -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Skipped:
    """A skill a batch was asked to verify but cannot play, and why."""

    skill_id: str
    name: str
    reason: str

    def as_document(self) -> dict[str, str]:
        return {"id": self.skill_id, "name": self.name, "reason": self.reason}


@dataclass(frozen=True)
class RunStarted:
    run_id: str
    skills: int
    games_total: int
    games_done: int  # already recorded (a resumed run)
    executor: str
    skipped: tuple[Skipped, ...] = ()  # asked for but not playable (recorded with the run)
    seed: int = 0


@dataclass(frozen=True)
class Progress:
    run_id: str
    games_total: int
    games_done: int
    wins: int
    losses: int
    draws: int
    errors: int
    chunk_games: int
    per_skill: dict[str, Counts]  # running figures per skill id (a copy: safe to keep or hand to a thread)


@dataclass(frozen=True)
class SkillResult:
    """One skill's session applied to the library."""

    skill_id: str
    name: str
    counts: Counts
    success_rate: float  # of this session: wins / decided
    interval: Interval  # Wilson 95% of success_rate
    before: str
    after: str
    action: str  # skill.verify | skill.promote | skill.demote | "" (nothing applied)
    reason: str
    credited: bool  # the session counts as evidence for the skill's tier
    quality_rate: float | None = None  # the skill's success_rate over all evidence that counts
    quality_interval: Interval | None = None
    verification_count: int | None = None
    duplicates: int = 0  # games identical to games already credited: played, not counted again
    contradiction: Contradiction | None = None  # the tier after, if the credited evidence contradicts it


@dataclass(frozen=True)
class RunFinished:
    run_id: str
    status: str  # finished | cancelled | failed
    games_total: int
    games_done: int
    results: tuple[SkillResult, ...] = field(default=())
    message: str = ""
    skipped: tuple[Skipped, ...] = ()


Event = RunStarted | Progress | SkillResult | RunFinished


# --- starting a run -----------------------------------------------------------------------------


def fresh_seed() -> int:
    """A new batch's seed: a batch run twice must not replay (and count) the same games."""
    return secrets.randbelow(FRESH_SEED_MAX) + 1


def playable(skills: Sequence[Skill], *, external_engine: bool) -> tuple[list[Skill], list[Skipped]]:
    """The skills a batch can play, and the others with why: content skills (plays verify them)
    and, with the built-in engine, bodies other than a StrategicPattern."""
    kept: list[Skill] = []
    skipped: list[Skipped] = []
    for skill in skills:
        if skill.domain is not Domain.AI_STRATEGY:
            skipped.append(Skipped(skill.id, skill.name, "not an AI skill: plays verify content skills (record)"))
        elif not external_engine and skill.body_kind is not BodyKind.STRATEGIC_PATTERN:
            kind = skill.body_kind.value
            why = f"{'an' if kind[0] in 'aeiou' else 'a'} {kind} body; the built-in engine plays strategic_pattern"
            skipped.append(Skipped(skill.id, skill.name, why))
        else:
            kept.append(skill)
    return kept, skipped


def select_playable(
    repository: SkillRepository, skill_ids: Sequence[str], *, engine: Sequence[str] = ()
) -> tuple[list[Skill], list[Skipped]]:
    """The skills among ``skill_ids`` a batch with ``engine`` can play, and the others with why
    (rows that hold no valid skill too): what the CLI and the GUI both verify."""
    skills, invalid = repository.get_many_valid(list(dict.fromkeys(skill_ids)))
    kept, skipped = playable(skills, external_engine=bool(engine))
    return kept, [Skipped(skill_id, "?", reason) for skill_id, reason in invalid] + skipped


def start_run(
    database: Database,
    skills: Sequence[Skill],
    *,
    opponent: str,
    games: int,
    seed: int | None = None,
    executor: str = "inprocess",
    engine: Sequence[str] = (),
    chunk_games: int = DEFAULT_CHUNK_GAMES,
    actor: Actor | None = None,
    kind: str = "verify",
    options: dict[str, Any] | None = None,
    policy: VerificationPolicy | None = None,
    skipped: Sequence[Skipped] = (),
) -> str:
    """Write a run for the playable ``skills`` (nothing is played yet) and return its id.

    ``seed`` None draws a fresh one (recorded with the run, so it can be replayed). Skills the
    engine cannot play are left out and recorded with the run beside ``skipped`` (what the
    caller already left out); with none left, VerificationError says why. ``policy`` (default:
    the library's settings) is recorded with the run and applied to it."""
    if not 1 <= games <= MAX_GAMES:
        raise VerificationError(f"--games must be 1..{MAX_GAMES}, got {games}")
    if seed is None:
        seed = fresh_seed()
    if not 0 <= seed <= MAX_SEED:
        raise VerificationError(f"--seed must be 0..{MAX_SEED}, got {seed}")
    if chunk_games < 1:
        raise VerificationError("chunk size must be at least one game")
    kept, left_out = playable(skills, external_engine=bool(engine))
    left_out = [*skipped, *left_out]
    if not kept:
        why = "; ".join(f"{s.name}: {s.reason}" for s in left_out[:3]) + ("; …" if len(left_out) > 3 else "")
        raise VerificationError("no skills to verify" + (f" ({len(left_out)} skipped: {why})" if left_out else ""))
    policy = policy or policy_for(database)
    opponent = canonical_opponent(opponent, kept[0].provenance.game_module, external=bool(engine))
    entries = [
        RunSkillEntry(skill.id, skill.provenance.game_module, body_hash(skill), skill.quality.confidence.value)
        for skill in kept
    ]
    recorded = dict(options or {})
    if left_out:
        recorded["skipped"] = [s.as_document() for s in left_out]
    return RunStore(database).create_run(
        skills=entries,
        opponent=opponent,
        games=games,
        seed=seed,
        executor=executor,
        chunk_games=chunk_games,
        actor=(actor or Actor.current_user()).id,
        engine=engine,
        kind=kind,
        options=recorded,
        policy=policy.values(),
    )


def skipped_of(info: RunInfo) -> tuple[Skipped, ...]:
    """The skills a run was asked for but could not play, as recorded with it."""
    entries = info.options.get("skipped")
    if not isinstance(entries, list):
        return ()
    return tuple(
        Skipped(str(e.get("id", "?")), str(e.get("name", "?")), str(e.get("reason", "")))
        for e in entries
        if isinstance(e, dict)
    )


def canonical_opponent(name: str, module: str, *, external: bool) -> str:
    """The D057 label of an opponent the built-in engine knows ("IC Default Hard"); an external
    engine's opponent names are its own and are passed on as given."""
    from skillstudio.engine import UnknownOpponentError, load_module, parse_opponent

    try:
        return parse_opponent(name, load_module(module)).label
    except UnknownOpponentError as error:
        if external:
            return name.strip()
        raise VerificationError(str(error)) from None
    except (ValueError, LookupError, OSError):
        return name.strip()


# --- running it ---------------------------------------------------------------------------------


def run_verification(
    database: Database,
    run_id: str,
    *,
    executor: Executor | str | None = None,
    policy: VerificationPolicy | None = None,
    cancel: CancelToken = None,
    actor: Actor | None = None,
) -> Generator[Event, None, None]:
    """Play what is missing of run ``run_id`` and apply each skill's result; yields events.

    ``executor``: an open :class:`Executor` (left open), a spelling (opened and closed here),
    or None for the one the run was started with. ``policy``: None for the one the run
    recorded when it started (a resumed run keeps its rules); the one applied is recorded.
    """
    store = RunStore(database)
    if store.run(run_id).kind == "sequence":  # a composition's games are no evidence for its first skill
        raise VerificationError(f"run {run_id} is a composition run: play it with drive_run (verify --resume)")
    try:
        claim = store.claim(run_id)  # one runner per run: a second resume fails here, fast
    except RunClaimed as error:
        raise VerificationError(str(error)) from None
    heartbeat = _Heartbeat(store, claim)
    heartbeat.start()
    try:
        yield from _run_claimed(database, store, run_id, executor, policy, cancel, actor, heartbeat)
    finally:
        heartbeat.stop()
        with contextlib.suppress(LibraryError):  # the file is busy or gone: the claim goes stale with this process
            store.release(claim)


def _run_claimed(
    database: Database,
    store: RunStore,
    run_id: str,
    executor: Executor | str | None,
    chosen: VerificationPolicy | None,
    cancel: CancelToken,
    actor: Actor | None,
    heartbeat: _Heartbeat,
) -> Iterator[Event]:
    """``run_verification``'s body, run while holding the run's claim."""
    repository = SkillRepository(database, actor or Actor.current_user())
    info = store.run(run_id)
    skipped = skipped_of(info)
    policy = chosen or recorded_policy(database, info)
    if policy.values() != info.policy:
        store.set_policy(run_id, policy.values())
    is_cancelled = _cancel_function(cancel)
    run_skills = store.skills(run_id)
    total = info.games * len(run_skills)
    counts = store.counts(run_id)
    done_games = store.recorded_games(run_id)
    results: list[SkillResult] = []
    if info.status == "finished":
        played = sum(c.played for c in counts.values())
        yield RunFinished(run_id, "finished", total, played, message="already finished", skipped=skipped)
        return
    store.set_status(run_id, "running")
    owned = not isinstance(executor, Executor)  # a spelling (or None) is opened here, and closed here
    # Opened before the skills are read: a pool's workers start, and import the engine, meanwhile.
    runner = executor if isinstance(executor, Executor) else open_executor(executor or info.executor, games=total)
    try:
        # Which skills still need games, and with which body.
        pending: dict[str, RunSkill] = {}
        skills: dict[str, Skill] = {}
        hashes: dict[str, str] = {}  # each skill's body hash as loaded: once per skill and run
        changed: set[str] = set()
        entries = {entry.skill_id: entry for entry in run_skills if entry.applied_at is None}
        parse = RowParser()  # each skill is parsed once, unless its row changes before it is applied
        needs: dict[str, int] = {}  # games each pending skill still lacks

        def load(ids: list[str]) -> dict[str, RunSkill]:
            """Read these skills (one batched read); the ones that play, with their entries."""
            with database.read() as session:
                loaded = load_many(session, ids, parse)
            playing: dict[str, RunSkill] = {}
            for skill_id, skill in loaded:
                if isinstance(skill, SkillNotFound):
                    store.skip_skill(run_id, skill_id, "skill deleted before its games were applied")
                elif isinstance(skill, InvalidStoredSkill):  # the row went bad (another writer) since the run began
                    store.skip_skill(run_id, skill_id, skill.reason)
                else:
                    skills[skill_id] = skill
                    pending[skill_id] = entries[skill_id]
                    needs[skill_id] = info.games - len(done_games.get(skill_id, ()))
                    hashes[skill_id] = body_hash(skill)
                    # A skill whose body changed since the run started plays no more games (they
                    # would mix bodies).
                    if hashes[skill_id] == entries[skill_id].body_hash:
                        playing[skill_id] = entries[skill_id]
                    else:
                        changed.add(skill_id)
            return playing

        ids = list(entries)
        head = _head_start(info, runner, ids, done_games)
        head_playing = load(ids[:head])
        unread = ids[head:]  # read when the executor first wants more chunks than the head's
        if unread:
            # A fresh run of many skills: the workers get the first skills' chunks while the rest
            # are read and parsed (a 3,553-skill run took 0.8 s to read before any game began).
            # Chunking never changes a result; only the head's last chunk may be smaller.
            stopping = None
            head_chunks = _plan(info, head_playing, skills, done_games)

            def plan_the_rest() -> list[Chunk]:
                rest = load(unread)
                unread.clear()
                return _plan(info, rest, skills, done_games, first=len(head_chunks))

            chunks: Iterable[Chunk] = itertools.chain(head_chunks, _planned_later(plan_the_rest))
        else:
            stopping = Stopping.for_run(database, info, skills, policy)  # verify --until-decided, else None
            chunks = (
                _plan(info, head_playing, skills, done_games)
                if stopping is None
                else stopping.plan(info, pending, skills, done_games)
            )
        played = sum(c.played for c in counts.values())
        yield RunStarted(run_id, len(run_skills), total, played, runner.spec, skipped, info.seed)
        if stopping is not None:  # a resumed run: skills its stored games decide need no more
            total -= stopping.settle(store, needs)
        # Skills whose games are all in already (a run killed while applying them).
        ready = [s for s, n in needs.items() if n <= 0 or s in changed]
        for applied in _apply(
            store, repository, policy, info, parse, hashes, [(pending.pop(s), skills[s]) for s in ready]
        ):
            results.append(applied)
            yield applied
        version_known = bool(info.engine_version)
        for result in runner.map_unordered(play_chunk, chunks, is_cancelled):
            heartbeat.check()
            if stopping is not None:  # games played past their skill's decision are not kept
                result = stopping.keep(result)
            store.record_games(run_id, result.rows)
            if not version_known and result.engine_version:
                store.set_engine_version(run_id, result.engine_version)
                info = store.run(run_id)
                version_known = True
            chunk_counts = _tally(result.rows)
            for skill_id, added in chunk_counts.items():
                counts[skill_id] = counts.get(skill_id, Counts()) + added
                needs[skill_id] = needs.get(skill_id, 0) - added.played
            if stopping is not None:  # a skill the sequential test decides needs no more games
                total -= stopping.observe(result.rows, needs)
            played = sum(c.played for c in counts.values())
            yield _progress(run_id, total, played, counts, len(result.rows))
            # The chunk's skills whose games are all in: applied together, one transaction.
            ready = [s for s in chunk_counts if s in pending and needs.get(s, 0) <= 0]
            for applied in _apply(
                store, repository, policy, info, parse, hashes, [(pending.pop(s), skills[s]) for s in ready]
            ):
                results.append(applied)
                yield applied
        if (pending or unread) and is_cancelled():  # unread: stopped before the rest was read
            store.finish_run(run_id, cancelled=True, message=f"cancelled with {total - played} games left")
            yield RunFinished(run_id, "cancelled", total, played, tuple(results), "cancelled", skipped)
            return
        # Skills no chunk played: those a run reading its skills while it plays found changed
        # (they play no more games); any other would be a chunk returned with games missing.
        for applied in _apply(
            store, repository, policy, info, parse, hashes, [(pending.pop(s), skills[s]) for s in list(pending)]
        ):
            results.append(applied)
            yield applied
    except BaseException as error:
        if isinstance(error, ClaimLost) or heartbeat.lost.is_set():
            raise  # the run is another runner's now: leave its status alone
        if isinstance(error, GeneratorExit | KeyboardInterrupt):
            store.finish_run(run_id, cancelled=True, message="stopped")
        else:
            store.set_status(run_id, "failed", f"{type(error).__name__}: {error}"[:2000])
        raise
    finally:
        if owned:
            runner.close()
    store.finish_run(run_id)
    yield RunFinished(run_id, "finished", total, played, tuple(results), skipped=skipped)


def verify(
    database: Database,
    skills: Sequence[Skill],
    *,
    opponent: str,
    games: int,
    seed: int | None = None,
    executor: Executor | str = "inprocess",
    engine: Sequence[str] = (),
    chunk_games: int = DEFAULT_CHUNK_GAMES,
    policy: VerificationPolicy | None = None,
    cancel: CancelToken = None,
    actor: Actor | None = None,
    kind: str = "verify",
    skipped: Sequence[Skipped] = (),
) -> Generator[Event, None, None]:
    """``start_run`` then ``run_verification``: the whole batch as one event stream."""
    spec = executor if isinstance(executor, str) else executor.spec
    run_id = start_run(
        database,
        skills,
        opponent=opponent,
        games=games,
        seed=seed,
        executor=spec,
        engine=engine,
        chunk_games=chunk_games,
        actor=actor,
        kind=kind,
        policy=policy,
        skipped=skipped,
    )
    yield from run_verification(database, run_id, executor=executor, policy=policy, cancel=cancel, actor=actor)


def collect(events: Iterator[Event]) -> RunFinished:
    """Run an event stream to its end and return the final event."""
    last: Event | None = None
    for event in events:
        last = event
    assert isinstance(last, RunFinished)
    return last


# --- internals ----------------------------------------------------------------------------------


class _Heartbeat:
    """Refreshes a run's claim at most every ``CLAIM_HEARTBEAT_S``, from the runner's own loop
    (between chunks), so a live runner's claim never looks stale.

    No thread of its own: a Python thread beside the GUI's worker QThread, both writing, was seen
    to deadlock the interpreter under PySide6. A single chunk longer than the stale bound could
    let another resume take the run over; the evidence's unique key still keeps it from counting
    twice, and this runner stops at its next check."""

    def __init__(self, store: RunStore, claim: Claim, interval: float = CLAIM_HEARTBEAT_S) -> None:
        self.store, self.claim, self.interval = store, claim, interval
        self.lost = threading.Event()
        self._last = time.monotonic()

    def start(self) -> None:
        self._last = time.monotonic()

    def stop(self) -> None:
        pass

    def check(self) -> None:
        now = time.monotonic()
        if not self.lost.is_set() and now - self._last >= self.interval:
            self._last = now
            try:
                if not self.store.heartbeat(self.claim):
                    self.lost.set()
            except LibraryError:  # busy, say: try again at the next check
                pass
        if self.lost.is_set():
            raise ClaimLost(f"run {self.claim.run_id} was taken over by another runner (our claim went stale)")


def _cancel_function(cancel: CancelToken) -> Callable[[], bool]:
    if cancel is None:
        return lambda: False
    if isinstance(cancel, threading.Event):
        return cancel.is_set
    return cancel


def _tally(rows: Sequence[GameRow]) -> dict[str, Counts]:
    """A chunk's games as Counts per skill, skills in the order their games came."""
    tally: dict[str, Counter[str]] = {}
    for row in rows:
        tally.setdefault(row.skill_id, Counter())[row.outcome] += 1
    return {skill_id: Counts.of(t) for skill_id, t in tally.items()}


def _progress(run_id: str, total: int, played: int, counts: dict[str, Counts], chunk: int) -> Progress:
    return Progress(
        run_id,
        total,
        played,
        sum(c.wins for c in counts.values()),
        sum(c.losses for c in counts.values()),
        sum(c.draws for c in counts.values()),
        sum(c.errors for c in counts.values()),
        chunk,
        dict(counts),
    )


# A run plays its first skills while it reads the rest only when it has at least this many
# skills to read: below it, reading them all first costs little.
HEAD_START_FROM = 1_000


def _head_start(info: RunInfo, runner: Executor, ids: Sequence[str], done: dict[str, set[int]]) -> int:
    """How many of the run's skills to read before the first chunks go out: all of them, unless
    the run is fresh (nothing recorded: no skill is complete and waiting to be applied), has no
    stopping rule (which needs every skill first) and is long; then enough to fill the
    executor's window of chunks."""
    if done or design_of(info) is not None or len(ids) < HEAD_START_FROM:
        return len(ids)
    per_chunk = max(1, info.chunk_games // max(info.games, 1))
    return min(len(ids), per_chunk * max(runner.window, 1))


def _planned_later(plan: Callable[[], list[Chunk]]) -> Iterator[Chunk]:
    """``plan()``'s chunks, planned when the first of them is wanted."""
    yield from plan()


def _plan(
    info: RunInfo, pending: dict[str, RunSkill], skills: dict[str, Skill], done: dict[str, set[int]], *, first: int = 0
) -> list[Chunk]:
    """Chunks of ``chunk_games`` games (the last one may hold fewer) covering every missing game
    of the ``pending`` skills, in run order within each of the reference engine's passes.

    A chunk holds as many skills' games as fit, and a skill's games may continue in the next
    chunk: big chunks let the engine play many skills at once, and chunking never changes a
    result (per-game seeds). For the built-in engine, skills that share a vectorised pass (one
    module, one game phase) come together: each pass in a chunk costs a whole step loop, and a
    library mixes several (a 4,000-game chunk of a synthetic library held six; sorted, one).
    """

    from skillstudio.engine.batch import pass_affinity  # the engine loads when a run plans, as executors load it

    def order(item: tuple[str, RunSkill]) -> tuple[tuple[str, str], int]:
        skill_id, entry = item
        affinity = ("", "") if info.engine else pass_affinity(skills[skill_id], entry.game_module)
        return affinity, entry.position

    size = info.chunk_games
    chunks: list[Chunk] = []
    current: list[Piece] = []
    room = size
    for skill_id, entry in sorted(pending.items(), key=order):
        skill = skills[skill_id]
        have = done.get(skill_id, set())
        game = 0
        while game < info.games:
            if game in have:
                game += 1
                continue
            start = game
            while game < info.games and game not in have and game - start < room:
                game += 1
            current.append(Piece(skill, entry.game_module, start, game - start))
            room -= game - start
            if room == 0:
                chunks.append(Chunk(first + len(chunks), info.opponent, info.seed, tuple(current), info.engine))
                current, room = [], size
    if current:
        chunks.append(Chunk(first + len(chunks), info.opponent, info.seed, tuple(current), info.engine))
    return chunks


def recorded_policy(database: Database, info: RunInfo) -> VerificationPolicy:
    """The policy the run recorded (a resumed run keeps its rules), else the library's."""
    if info.policy:
        try:
            return VerificationPolicy.from_values(info.policy)
        except ValidationError:
            pass  # a record another program wrote: apply the library's settings, and record them
    return policy_for(database)


def _apply(
    store: RunStore,
    repository: SkillRepository,
    policy: VerificationPolicy,
    info: RunInfo,
    parse: RowParser,
    hashes: dict[str, str],
    entries: Sequence[tuple[RunSkill, Skill]],
) -> list[SkillResult]:
    """Turn each skill's recorded games into a session record and apply the policy: one
    transaction for all of them, the same rows per skill as one transaction each. Results in
    the order of ``entries``; ``hashes``: each skill's body hash as loaded."""
    if not entries:
        return []
    ids = [entry.skill_id for entry, _ in entries]
    counts = store.counts_of(info.id, ids)
    versions = store.engine_versions_of(info.id, ids)
    revalidated = _RevalidatedEngines(store, ids)
    results: dict[str, SkillResult] = {}
    judged: list[tuple[Skill, Counts, RunSession, list[_Decision]]] = []
    for entry, skill in entries:
        played = counts.get(skill.id, Counts())
        if played.played == 0:
            why = "no games played" + (
                "; the skill's body changed since the run started" if hashes[skill.id] != entry.body_hash else ""
            )
            store.skip_skill(info.id, entry.skill_id, why)
            before = skill.quality.confidence.value
            results[skill.id] = SkillResult(
                skill.id, skill.name, played, 0.0, wilson(0, 0), before, before, "", why, False
            )
            continue
        session = _session(
            policy, info, entry, (skill, hashes[skill.id]), played, versions.get(skill.id, {}), revalidated
        )
        judged.append((skill, played, *session))
    applied = repository.evidence.apply_sessions(info.id, [session for _, _, session, _ in judged], parse=parse)
    parse.forget(ids)
    for (skill, played, _, decisions), outcome in zip(judged, applied, strict=True):
        results[skill.id] = _result(skill, played, outcome, decisions, info.id)
    return [results[skill_id] for skill_id in ids]


class _RevalidatedEngines:
    """The engine of each skill's latest revalidation, read for the whole batch at its first
    use: inside the write transaction (recompute runs there), so no earlier read is trusted."""

    def __init__(self, store: RunStore, skill_ids: Sequence[str]) -> None:
        self.store, self.skill_ids = store, skill_ids
        self._engines: dict[str, str] | None = None

    def __call__(self, skill_id: str) -> str | None:
        if self._engines is None:
            self._engines = self.store.revalidated_engines(self.skill_ids)
        return self._engines.get(skill_id)


def _session(
    policy: VerificationPolicy,
    info: RunInfo,
    entry: RunSkill,
    loaded: tuple[Skill, str],
    counts: Counts,
    versions: dict[str, int],
    revalidated_engine: Callable[[str], str | None],
) -> tuple[RunSession, list[_Decision]]:
    """A skill's session record and the recompute that judges it; the recompute appends what it
    decided to the list (inside the write transaction; the last one is stored). ``loaded``: the
    skill as the run loaded it, and its body hash."""
    session_rate = counts.wins / counts.decided if counts.decided else 0.0
    session_interval = wilson(counts.wins, counts.decided)
    engine_version = session_engine_version(versions, info.engine_version)
    record = VerificationRecord(
        recorded_at=utc_now(),
        kind=EvidenceKind.HEADLESS,
        wins=counts.wins,
        losses=counts.losses,
        draws=counts.draws,
        errors=counts.errors,
        opponent=info.opponent,
        engine_version=engine_version,
        body_hash=entry.body_hash,
        note=f"run {info.id}" + (" (revalidation)" if info.kind == "revalidate" else ""),
    )
    decisions: list[_Decision] = []

    def recompute(current: Skill, evidence: list[VerificationRecord], stored: VerificationRecord) -> QualityOutcome:
        """Inside the write transaction: the skill as stored now, all its evidence and this
        session's record as stored (without games already credited), so concurrent batches of
        one skill add up."""
        before = current.quality.confidence
        current_hash = loaded[1] if current is loaded[0] else body_hash(current)  # the same object: unchanged
        duplicates = record.decided - stored.decided
        revalidated = None if info.kind == "revalidate" else revalidated_engine(current.id)
        if info.kind == "revalidate":
            assessment = policy.decayed(evidence, current.domain, current_hash, engine_version)
        else:
            assessment = policy.assess(current.domain, evidence, current_hash, before, engine_version=revalidated)
        credited = policy.credits(stored, current.domain, current_hash, revalidated)
        note = "" if credited else _why_not_credited(policy, stored, current, current_hash)
        after = assessment.confidence
        if not credited:
            # Evidence that credits nothing is recorded for the history and changes no figure:
            # recomputing here would rewrite figures the session has nothing to do with.
            after = before
            assessment = replace(
                assessment,
                confidence=before,
                quality=current.quality,
                reason=note,
            )
        elif after.rank < before.rank and info.kind != "revalidate" and not policy.demote_on_verify:
            after = before
            assessment = replace(
                assessment,
                confidence=before,
                quality=replace(assessment.quality, confidence=before),
                reason=assessment.reason + f"; {before.value} kept (demote_on_verify is off)",
            )
        # assess() judged the tier it was given; a tier the evidence moved is the one it supports.
        contradiction = assessment.contradiction if after is before else None
        overall = assessment.interval
        details: dict[str, JsonInput] = {
            "run": info.id,
            "opponent": info.opponent,
            "engine_version": engine_version,
            "wins": counts.wins,
            "losses": counts.losses,
            "draws": counts.draws,
            "errors": counts.errors,
            "duplicates": duplicates,
            "success_rate": round(session_rate, 4),
            "wilson_95": session_interval.as_list(),
            "credited": credited,
            "before": before.value,
            "after": after.value,
            "reason": assessment.reason,
            "verification_count": assessment.quality.verification_count,
            "overall_success_rate": round(assessment.quality.success_rate, 4),
            "overall_wilson_95": overall.as_list(),
            "contradicted": None if contradiction is None else contradiction.reason,
        }
        message = f"{'revalidated' if info.kind == 'revalidate' else 'verified'} in run {info.id}: {assessment.reason}"
        decisions.append(_Decision(before, after, assessment, credited, note, duplicates, contradiction))
        return QualityOutcome(
            assessment.quality,
            AuditAction(audit_action(before, after)),
            message,
            details,
            interval=SuccessInterval(assessment.wins, assessment.decided, overall.low, overall.high)
            if credited
            else None,
            run_result=RunSkillResult(
                run_id=info.id,
                counts=counts,
                confidence_after=after.value,
                success_rate=session_rate if counts.decided else None,
                low=session_interval.low,
                high=session_interval.high,
                note=note or assessment.reason,
                duplicates=duplicates,
            ),
        )

    return RunSession(entry.skill_id, record, recompute), decisions


def _result(
    skill: Skill, counts: Counts, applied: SessionApplied, decisions: list[_Decision], run_id: str
) -> SkillResult:
    """What applying a skill's session did, as the event the runner yields."""
    session_rate = counts.wins / counts.decided if counts.decided else 0.0
    session_interval = wilson(counts.wins, counts.decided)
    before = skill.quality.confidence
    if applied.status != "applied":
        if applied.status == "already":  # this run's session is stored already (another runner, a crash)
            why = f"already applied: run {run_id}'s games for this skill are stored once"
        elif applied.duplicates.decided:
            why = f"all {applied.duplicates.decided} decided games repeat games already credited: nothing changed"
        else:
            why = f"only error games ({counts.errors}): nothing changed"
        return SkillResult(
            skill.id,
            skill.name,
            counts,
            session_rate,
            session_interval,
            before.value,
            before.value,
            "",
            why,
            False,
            duplicates=applied.duplicates.decided,
        )
    decided = decisions[-1]
    assessment = decided.assessment
    return SkillResult(
        skill.id,
        skill.name,
        counts,
        session_rate,
        session_interval,
        decided.before.value,
        decided.after.value,
        audit_action(decided.before, decided.after),
        decided.note or assessment.reason,
        decided.credited,
        assessment.quality.success_rate,
        assessment.interval if decided.credited else None,
        assessment.quality.verification_count,
        decided.duplicates,
        decided.contradiction,
    )


@dataclass(frozen=True)
class _Decision:
    """What _apply's recompute decided inside the write transaction."""

    before: Confidence
    after: Confidence
    assessment: Assessment
    credited: bool
    note: str
    duplicates: int = 0
    contradiction: Contradiction | None = None


def _why_not_credited(policy: VerificationPolicy, record: VerificationRecord, skill: Skill, current_hash: str) -> str:
    if record.body_hash != current_hash:
        return "the skill's body changed since the run started: these games give no credit"
    if skill.domain is not Domain.AI_STRATEGY:
        return "headless games are not evidence for a content skill"
    if not policy.is_reference(record.opponent):
        return f"played against {record.opponent}, not the reference opponent {policy.reference_opponent}: recorded, no credit"
    return "recorded with another engine version than the skill's revalidation: no credit"


__all__ = [
    "DEFAULT_CHUNK_GAMES",
    "Event",
    "Progress",
    "RunFinished",
    "RunStarted",
    "SkillResult",
    "Skipped",
    "VerificationError",
    "chunk_games_for",
    "collect",
    "fresh_seed",
    "playable",
    "recorded_policy",
    "run_verification",
    "select_playable",
    "start_run",
    "verify",
]


# --- decay ----------------------------------------------------------------------------------------


def engine_matches(recorded: str, wanted: str) -> bool:
    """``1.0.0+ra1.1.c5cbef37`` (the built-in engine's code+data version) matches ``1.0.0``."""
    recorded, wanted = recorded.strip(), wanted.strip()
    return bool(recorded) and (
        recorded == wanted or recorded.split("+", 1)[0] == wanted or recorded == wanted.split("+", 1)[0]
    )


def revalidation_candidates(repository: SkillRepository, engine_version: str, skills: Sequence[Skill]) -> list[Skill]:
    """The Proven AI skills among ``skills`` whose evidence was recorded with another engine
    version: the engine of their latest headless record, else their provenance's engine_version."""
    out = []
    for skill in skills:
        if skill.domain is not Domain.AI_STRATEGY or skill.quality.confidence.value != "proven":
            continue
        headless = [r for r in repository.evidence.verifications(skill.id) if r.kind is EvidenceKind.HEADLESS]
        recorded = headless[-1].engine_version if headless else skill.provenance.engine_version
        if not engine_matches(recorded, engine_version):
            out.append(skill)
    return out
