"""Verified compositions (``verify --sequence A,B[,C]``; D057 ``skill_compositions``).

A composition run plays skill A's plan until a switch point, then B's (then C's): the engine's
``run_batch(A, ..., then=[(switch, B), (switch, C)])``, with A's seeds and A's situation. Its
games are recorded as a run of kind ``sequence`` (under A's id), and none of them is evidence
for A's, B's or C's own tier: they measure the sequence.

When the run's games are in, the policy's candidate rule decides whether the sequence counts,
exactly as it decides whether a skill is a candidate: played against the reference opponent,
with every skill's body unchanged since the run started, and a win rate **above** the candidate
bar (40%) over its decided games (error games count for nothing). If it counts, each adjacent
pair (A, B), (B, C) has the run's wins added to ``skill_compositions.success_count`` (a pair not
stored yet is created, which lists each skill in the other's ``composable_with``), with a
revision and a ``skill.compose`` audit entry per skill, in one transaction, once per run. A
sequence that does not pass adds nothing. Games that repeat games an earlier identical
composition run already credited (same skills and bodies, switches, opponent, engine version and
game seed) are not counted again.

Switch points (``--switch-at``): ``12:00`` (game clock), ``720`` or ``720s`` (seconds), or a game
phase (``mid``, ``late``: its start on the engine's clock, 8:00 and 18:00). By default each later
skill takes over at the start of its own SituationSignature's game phase; an early-game skill has
no such point, and the command asks for ``--switch-at``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import secrets
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass

from skillstudio.engine.tuning import DEFAULT_TUNING
from skillstudio.model import BodyKind, Domain, GamePhase, Skill
from skillstudio.store import (
    Actor,
    InvalidStoredSkill,
    RunSkillEntry,
    SkillNotFound,
    SkillRepository,
    body_hash,
)
from skillstudio.store.database import Database
from skillstudio.store.errors import LibraryError, RunClaimed
from skillstudio.store.paired_runs import PairedRuns, PairRecord
from skillstudio.store.runs import RunInfo, RunStore
from skillstudio.store.types import Counts, JsonInput
from skillstudio.verification.executors import Chunk, Executor, Piece, open_executor, play_chunk
from skillstudio.verification.policy import VerificationPolicy, policy_for
from skillstudio.verification.runner import (
    DEFAULT_CHUNK_GAMES,
    MAX_GAMES,
    MAX_SEED,
    Progress,
    RunFinished,
    RunStarted,
    VerificationError,
    canonical_opponent,
)
from skillstudio.verification.stats import Interval, wilson

KIND = "sequence"
MIN_SKILLS, MAX_SKILLS = 2, 4
SEED_RANGE = 2**31 - 1
PHASES = {"early": GamePhase.EARLY, "mid": GamePhase.MID, "late": GamePhase.LATE}


def phase_start_s(phase: GamePhase) -> float:
    """Where a game phase starts on the reference engine's clock (docs/reference-engine.md)."""
    return {
        GamePhase.EARLY: 0.0,
        GamePhase.MID: DEFAULT_TUNING.mid_game.start_s,
        GamePhase.LATE: DEFAULT_TUNING.late_game.start_s,
    }[phase]


def clock(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


@dataclass(frozen=True)
class Switch:
    """When the next skill takes over: a game time, or the start of a game phase."""

    seconds: float
    phase: GamePhase | None = None

    @property
    def label(self) -> str:
        return self.phase.value.lower() if self.phase is not None else clock(self.seconds)

    def when(self) -> float | GamePhase:
        return self.phase if self.phase is not None else self.seconds


_CLOCK = re.compile(r"^(?:(\d+):)?(\d+):(\d{1,2})$")


def parse_switch(text: str) -> Switch:
    """``12:00``, ``1:05:00``, ``720``, ``720s`` or a phase name; ValueError says what is wrong."""
    value = text.strip().lower()
    if value in PHASES:
        phase = PHASES[value]
        if phase is GamePhase.EARLY:
            raise ValueError("'early' starts at 0:00: the next skill would play from the start")
        return Switch(phase_start_s(phase), phase)
    match = _CLOCK.match(value)
    if match:
        hours, minutes, seconds = (int(part) if part else 0 for part in match.groups())
        if seconds >= 60:
            raise ValueError(f"{text!r}: seconds must be below 60")
        return Switch(float(hours * 3600 + minutes * 60 + seconds))
    try:
        number = float(value.removesuffix("s"))
    except ValueError:
        raise ValueError(f"{text!r} is not a game time (12:00, 720s) or a phase (mid, late)") from None
    if not math.isfinite(number) or number <= 0:
        raise ValueError(f"{text!r}: a switch must come after 0:00")
    return Switch(number)


@dataclass(frozen=True)
class SequencePlan:
    """A checked sequence: its skills and the switch before each skill after the first."""

    skills: tuple[Skill, ...]
    switches: tuple[Switch, ...]

    @property
    def pairs(self) -> list[tuple[str, str, str]]:
        return [(self.skills[i].id, self.skills[i + 1].id, switch.label) for i, switch in enumerate(self.switches)]

    def describe(self) -> str:
        parts = [self.skills[0].name]
        for skill, switch in zip(self.skills[1:], self.switches, strict=True):
            parts.append(f"from {clock(switch.seconds)} {skill.name}")
        return ", then ".join(parts)


def plan_sequence(
    repository: SkillRepository,
    refs: Sequence[str],
    switch_at: Sequence[str] | None = None,
    *,
    external_engine: bool = False,
) -> SequencePlan:
    """Check a ``--sequence`` and its ``--switch-at`` before anything is written; a
    VerificationError names the first problem (an unknown or unplayable skill, a switch that
    does not fit)."""
    if external_engine:
        raise VerificationError(
            "--sequence needs the built-in engine: the engine protocol has no composition job (no --engine)"
        )
    refs = [ref.strip() for ref in refs if ref.strip()]
    if not MIN_SKILLS <= len(refs) <= MAX_SKILLS:
        raise VerificationError(f"--sequence takes {MIN_SKILLS} to {MAX_SKILLS} skills (A,B[,C]), got {len(refs)}")
    skills: list[Skill] = []
    for ref in refs:
        try:
            skill = repository.get(repository.resolve_id(ref))
        except SkillNotFound:
            raise VerificationError(f"--sequence: no skill {ref!r} in this library") from None
        except InvalidStoredSkill as error:
            raise VerificationError(f"--sequence: {ref!r} cannot be played: {error.reason}") from None
        except LibraryError as error:  # an ambiguous prefix
            raise VerificationError(f"--sequence: {error}") from None
        if skill.domain is not Domain.AI_STRATEGY:
            raise VerificationError(f"--sequence: {skill.name!r} is a content skill; only AI skills play")
        if skill.body_kind is not BodyKind.STRATEGIC_PATTERN:
            raise VerificationError(
                f"--sequence: {skill.name!r} has a {skill.body_kind.value} body; the engine plays strategic_pattern"
            )
        if skills and skills[-1].id == skill.id:
            raise VerificationError(f"--sequence: {skill.name!r} follows itself; a switch needs another skill")
        skills.append(skill)
    modules = {s.provenance.game_module for s in skills}
    if len(modules) > 1:
        raise VerificationError(f"--sequence: the skills are of different game modules ({', '.join(sorted(modules))})")
    switches = _switches(skills, switch_at)
    return SequencePlan(tuple(skills), switches)


def _switches(skills: Sequence[Skill], switch_at: Sequence[str] | None) -> tuple[Switch, ...]:
    wanted = len(skills) - 1
    if switch_at:
        if len(switch_at) != wanted:
            raise VerificationError(
                f"--switch-at: {wanted} switch point(s) for {len(skills)} skills, got {len(switch_at)}"
            )
        try:
            switches = [parse_switch(text) for text in switch_at]
        except ValueError as error:
            raise VerificationError(f"--switch-at: {error}") from None
    else:
        switches = []
        for skill in skills[1:]:
            body = skill.body
            phase = getattr(getattr(body, "situation", None), "game_phase", GamePhase.EARLY)
            if phase is GamePhase.EARLY:
                raise VerificationError(
                    f"--sequence: {skill.name!r} is an early-game skill, so its phase gives no switch point; "
                    "say when it takes over with --switch-at (e.g. --switch-at 5:00)"
                )
            switches.append(Switch(phase_start_s(phase), phase))
    first = skills[0]
    start_phase = getattr(getattr(first.body, "situation", None), "game_phase", GamePhase.EARLY)
    start = phase_start_s(start_phase)
    limit = _time_limit(first)
    previous = start
    for index, switch in enumerate(switches):
        if switch.seconds <= previous:
            after = f"{skills[0].name!r} starts at {clock(start)}" if index == 0 else "the previous switch"
            raise VerificationError(
                f"--switch-at: {skills[index + 1].name!r} at {clock(switch.seconds)} does not come after {after}"
            )
        if limit is not None and switch.seconds >= limit:
            raise VerificationError(
                f"--switch-at: {clock(switch.seconds)} is at or after the game's time limit ({clock(limit)})"
            )
        previous = switch.seconds
    return tuple(switches)


def _time_limit(skill: Skill) -> float | None:
    from skillstudio.engine import load_module

    try:
        return load_module(skill.provenance.game_module).match.time_limit_s
    except (ValueError, LookupError, OSError):
        return None


# --- starting and playing a run ----------------------------------------------------------------


def config_key(plan: SequencePlan, opponent: str) -> str:
    """What makes two composition runs play the same games for the same seed."""
    document = {
        "skills": [[s.id, body_hash(s)] for s in plan.skills],
        "switches": [s.label for s in plan.switches],
        "opponent": opponent,
    }
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()[:24]


def start_sequence(
    database: Database,
    plan: SequencePlan,
    *,
    opponent: str,
    games: int,
    seed: int | None = None,
    executor: str = "inprocess",
    chunk_games: int = DEFAULT_CHUNK_GAMES,
    actor: Actor | None = None,
) -> str:
    """Write a composition run (nothing is played yet) and return its id. ``seed`` None draws
    a fresh one (recorded with the run, so it can be replayed)."""
    if not 1 <= games <= MAX_GAMES:
        raise VerificationError(f"--games must be 1..{MAX_GAMES}, got {games}")
    if seed is None:
        seed = secrets.randbelow(SEED_RANGE) + 1
    if not 0 <= seed <= MAX_SEED:
        raise VerificationError(f"--seed must be 0..{MAX_SEED}, got {seed}")
    lead = plan.skills[0]
    opponent = canonical_opponent(opponent, lead.provenance.game_module, external=False)
    store = RunStore(database)
    run_id = store.create_run(
        skills=[RunSkillEntry(lead.id, lead.provenance.game_module, body_hash(lead), lead.quality.confidence.value)],
        opponent=opponent,
        games=games,
        seed=seed,
        executor=executor,
        chunk_games=max(1, chunk_games),
        actor=(actor or Actor.current_user()).id,
        kind=KIND,
        options={
            "sequence": [s.id for s in plan.skills],
            "body_hashes": [body_hash(s) for s in plan.skills],
            "switch_at": [s.label for s in plan.switches],
            "switch_s": [s.seconds for s in plan.switches],
            "config": config_key(plan, opponent),
        },
    )
    PairedRuns(database, actor).create_pairs(run_id, plan.pairs)
    return run_id


@dataclass(frozen=True)
class CompositionResult:
    """A composition run applied: its figures, whether it counted, and the pairs' records."""

    run_id: str
    counts: Counts
    credited: bool
    successes: int  # added to each pair's success_count
    reason: str
    pairs: tuple[PairRecord, ...]

    @property
    def interval(self) -> Interval:
        return wilson(self.counts.wins, self.counts.decided)


SequenceEvent = RunStarted | Progress | CompositionResult | RunFinished


def run_sequence(
    database: Database,
    run_id: str,
    *,
    executor: Executor | str | None = None,
    policy: VerificationPolicy | None = None,
    cancel: Callable[[], bool] = lambda: False,
    actor: Actor | None = None,
) -> Generator[SequenceEvent, None, None]:
    """Play what is missing of composition run ``run_id`` and apply it (once); yields events."""
    policy = policy or policy_for(database)  # the library's settings, as every run
    store, paired = RunStore(database), PairedRuns(database, actor)
    try:
        claim = store.claim(run_id)
    except RunClaimed as error:
        raise VerificationError(str(error)) from None
    runner: Executor | None = None
    owned = not isinstance(executor, Executor)
    try:
        info = store.run(run_id)
        if info.kind != KIND:
            raise VerificationError(f"run {run_id} is a {info.kind} run, not a composition")
        entries = store.skills(run_id)
        if not entries:
            raise VerificationError(f"run {run_id} has no skills")
        lead = entries[0]
        if lead.applied_at is not None:
            counts = store.counts(run_id, lead.skill_id).get(lead.skill_id, Counts())
            yield RunFinished(run_id, "finished", info.games, counts.played, message="already applied")
            return
        store.set_status(run_id, "running")
        ids, hashes, switches = _recorded(info)
        if not paired.pairs(run_id):  # a run killed between its two first writes
            paired.create_pairs(run_id, [(ids[i], ids[i + 1], switches[i][1]) for i in range(len(switches))])
        skills, problem = _load(SkillRepository(database, actor or Actor.current_user()), ids, hashes)
        done = store.recorded_games(run_id).get(lead.skill_id, set())
        chunks = [] if problem else _plan(info, lead.game_module, skills, switches, done)
        runner = executor if isinstance(executor, Executor) else open_executor(executor or info.executor)
        yield RunStarted(run_id, 1, info.games, len(done), runner.spec)
        counts = store.counts(run_id, lead.skill_id).get(lead.skill_id, Counts())
        for result in runner.map_unordered(play_chunk, chunks, cancel):
            store.record_games(run_id, result.rows)
            for row in result.rows:
                counts = counts.adding(row.outcome)
            yield Progress(
                run_id,
                info.games,
                counts.played,
                counts.wins,
                counts.losses,
                counts.draws,
                counts.errors,
                len(result.rows),
                {lead.skill_id: counts},
            )
        if not problem and counts.played < info.games and cancel():
            store.finish_run(run_id, cancelled=True, message=f"cancelled with {info.games - counts.played} games left")
            yield RunFinished(run_id, "cancelled", info.games, counts.played, message="cancelled")
            return
        outcome = _apply(store, paired, policy, info, lead.skill_id, problem)
        if outcome is not None:
            yield outcome
        store.finish_run(run_id, message=problem or "")
        yield RunFinished(run_id, "finished", info.games, counts.played)
    except BaseException as error:
        if isinstance(error, GeneratorExit | KeyboardInterrupt):
            with contextlib.suppress(LibraryError):
                store.finish_run(run_id, cancelled=True, message="stopped")
        elif not isinstance(error, VerificationError):
            with contextlib.suppress(LibraryError):
                store.set_status(run_id, "failed", f"{type(error).__name__}: {error}"[:2000])
        raise
    finally:
        if owned and runner is not None:
            runner.close()
        with contextlib.suppress(LibraryError):
            store.release(claim)


def _recorded(info: RunInfo) -> tuple[list[str], list[str], list[tuple[float | GamePhase, str]]]:
    """The run's skills, their body hashes and its switches, as recorded when it started."""
    options = info.options
    listed = options.get("sequence")
    ids = [str(i) for i in listed] if isinstance(listed, list) else []
    hashes = options.get("body_hashes")
    labels = options.get("switch_at")
    seconds = options.get("switch_s")
    if (
        len(ids) < MIN_SKILLS
        or not isinstance(hashes, list)
        or not isinstance(labels, list)
        or not isinstance(seconds, list)
        or len(labels) != len(ids) - 1
        or len(seconds) != len(labels)
    ):
        raise VerificationError(f"run {info.id}'s sequence is not readable")
    switches: list[tuple[float | GamePhase, str]] = []
    for label, at in zip(labels, seconds, strict=True):
        phase = PHASES.get(str(label))
        if phase is not None:
            switches.append((phase, str(label)))
        elif isinstance(at, int | float) and not isinstance(at, bool):
            switches.append((float(at), str(label)))
        else:
            raise VerificationError(f"run {info.id}'s switch {label!r} is not readable")
    return ids, [str(h) for h in hashes], switches


def _load(repository: SkillRepository, ids: Sequence[str], hashes: Sequence[str]) -> tuple[list[Skill], str]:
    """The sequence's skills as stored now, and why no more games can be played ("" if they can)."""
    skills: list[Skill] = []
    for index, skill_id in enumerate(ids):
        try:
            skill = repository.get(skill_id)
        except SkillNotFound:
            return skills, f"skill {skill_id} was deleted since the run started: no more games"
        except InvalidStoredSkill as error:
            return skills, f"skill {skill_id} is no longer valid ({error.reason}): no more games"
        if index < len(hashes) and body_hash(skill) != hashes[index]:
            return skills, f"{skill.name!r}'s body changed since the run started: these games give no credit"
        skills.append(skill)
    return skills, ""


def _plan(
    info: RunInfo,
    module: str,
    skills: Sequence[Skill],
    switches: Sequence[tuple[float | GamePhase, str]],
    done: set[int],
) -> list[Chunk]:
    then = tuple((when, skill) for (when, _label), skill in zip(switches, skills[1:], strict=True))
    size = max(1, info.chunk_games)
    chunks: list[Chunk] = []
    game = 0
    while game < info.games:
        if game in done:
            game += 1
            continue
        start = game
        while game < info.games and game not in done and game - start < size:
            game += 1
        piece = Piece(skills[0], module, start, game - start, then=then)
        chunks.append(Chunk(len(chunks), info.opponent, info.seed, (piece,), info.engine))
    return chunks


def _apply(
    store: RunStore, paired: PairedRuns, policy: VerificationPolicy, info: RunInfo, lead: str, problem: str
) -> CompositionResult | None:
    counts = store.counts(info.id, lead).get(lead, Counts())
    fresh = _fresh_counts(store, paired, info, lead)
    credited, reason = judge(policy, info.opponent, fresh, problem)
    if credited and fresh.decided < counts.decided:
        reason += f" ({counts.decided - fresh.decided} games repeat an earlier run's and count once)"
    successes = fresh.wins if credited else 0
    details: dict[str, JsonInput] = {
        "run": info.id,
        "opponent": info.opponent,
        "wins": counts.wins,
        "losses": counts.losses,
        "draws": counts.draws,
        "errors": counts.errors,
        "counted_wins": fresh.wins,
        "counted_decided": fresh.decided,
        "wilson_95": wilson(fresh.wins, fresh.decided).as_list(),
        "reason": reason,
    }
    stored = paired.apply_sequence(
        info.id,
        lead,
        counts,
        credited=credited,
        successes=successes,
        note=reason,
        details=details,
    )
    if stored is None:
        return None
    return CompositionResult(info.id, counts, credited, successes, reason, tuple(stored))


def judge(policy: VerificationPolicy, opponent: str, counts: Counts, problem: str = "") -> tuple[bool, str]:
    """Whether a composition's games count, and why: the candidate rule applied to the sequence."""
    if problem:
        return False, problem
    if not policy.is_reference(opponent):
        return False, (
            f"played against {opponent}, not the reference opponent {policy.reference_opponent}: recorded, no credit"
        )
    if not counts.decided:
        return False, "no decided games: nothing changed"
    _tier, candidate, _why = policy.headless_tier(counts.wins, counts.decided)
    figures = f"{counts.wins}/{counts.decided} games won"
    if candidate:
        return True, f"the composition counts: {figures}, above the candidate bar {policy.candidate_rate:.0%}"
    return False, f"the composition does not count: {figures}, not above the candidate bar {policy.candidate_rate:.0%}"


def _fresh_counts(store: RunStore, paired: PairedRuns, info: RunInfo, lead: str) -> Counts:
    """The run's games that no earlier credited run of the same composition already counted."""
    key = info.options.get("config")
    seen: set[tuple[int | None, str]] = set()
    if key:
        for other in store.runs(limit=None):
            if other.id == info.id or other.kind != KIND or other.options.get("config") != key:
                continue
            if any(p.credited for p in paired.pairs(other.id)):
                seen.update((g.seed, g.engine_version) for g in store.games(other.id) if g.outcome != "error")
    counts = Counts()
    for game in store.games(info.id, lead):
        if game.outcome != "error" and (game.seed, game.engine_version) in seen:
            continue
        counts = counts.adding(game.outcome)
    return counts


# --- reading: what the dashboard and the detail pane show --------------------------------------


@dataclass(frozen=True)
class PartnerComposition:
    """A skill's composition with one partner: D057's count and the composition runs behind it."""

    partner_id: str
    partner_name: str
    success_count: int  # D057's skill_compositions.success_count (the pair's higher, either order)
    composable: bool  # a stored pair: the partner is in the skill's composable_with
    first: bool  # this skill plays first (skill_a) in the stored pair, or in the latest run
    runs: int  # applied composition runs of the pair, either order
    credited_runs: int
    wins: int  # over those runs' decided games
    decided: int

    @property
    def interval(self) -> Interval:
        return wilson(self.wins, self.decided)

    @property
    def rate(self) -> float | None:
        return self.wins / self.decided if self.decided else None


def compositions_of(repository: SkillRepository, skill_id: str) -> list[PartnerComposition]:
    """The skill's partners, stored pairs and verified runs together, most successful first."""
    stored = {c.partner_id: c for c in repository.evidence.compositions(skill_id)}
    runs: dict[str, list[PairRecord]] = {}
    for pair in PairedRuns(repository.database).pairs_of_skill(skill_id):
        if pair.applied_at is None:
            continue
        partner = pair.skill_b if pair.skill_a == skill_id else pair.skill_a
        runs.setdefault(partner, []).append(pair)
    partners = list(dict.fromkeys([*stored, *runs]))
    names = {s.id: s.name for s in repository.summaries(partners)}
    out = []
    for partner in partners:
        composition = stored.get(partner)
        pairs = runs.get(partner, [])
        first = composition.first if composition is not None else bool(pairs) and pairs[-1].skill_a == skill_id
        out.append(
            PartnerComposition(
                partner,
                names.get(partner, "(deleted)"),
                composition.success_count if composition is not None else 0,
                composition is not None,
                first,
                len(pairs),
                sum(1 for p in pairs if p.credited),
                sum(p.counts.wins for p in pairs),
                sum(p.counts.decided for p in pairs),
            )
        )
    return sorted(out, key=lambda c: (-c.success_count, -c.decided, c.partner_name))


__all__ = [
    "KIND",
    "CompositionResult",
    "PartnerComposition",
    "SequencePlan",
    "Switch",
    "compositions_of",
    "config_key",
    "judge",
    "parse_switch",
    "phase_start_s",
    "plan_sequence",
    "run_sequence",
    "start_sequence",
]
