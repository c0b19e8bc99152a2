"""Run a batch of reference-engine games in process: ``run_batch(skill, opponent, games, seed)``.

This is what the verification runner calls (directly, or through the process protocol with
``python -m skillstudio.engine``). A batch is one match-up, N games; each game's seed derives from
(batch seed, skill id, game index), so results are identical however a batch is split.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from skillstudio.engine import rng, tables
from skillstudio.engine.doctrine import (
    Doctrine,
    default_plan,
    doctrine_from_pattern,
    doctrine_from_preset,
    with_difficulty,
)
from skillstudio.engine.module import GameModule, Mix, load_module
from skillstudio.engine.opponents import Opponent, parse_opponent
from skillstudio.engine.results import GameResult, Timeline
from skillstudio.engine.sim import (
    BLOCK,
    OUTCOME_DRAW,
    OUTCOME_LOSS,
    OUTCOME_WIN,
    RawResults,
    group_key,
    simulate,
    simulate_many,
)
from skillstudio.engine.situation import (
    Situation,
    compile_start,
    situation_from_signature,
    start_tiers,
    with_composition,
)
from skillstudio.engine.tables import CompiledModule, MatchSetup, PlanSwitch, compile_match, compile_module
from skillstudio.engine.tuning import DEFAULT_TUNING
from skillstudio.model.enums import GamePhase
from skillstudio.model.skill import SituationSignature, Skill, StrategicPattern

ENGINE_NAME = "skillstudio-reference"
ENGINE_VERSION = "1.1.0"  # 1.1: games start from the skill's SituationSignature
MAX_GAMES = 1_000_000
OUTCOME_NAMES = {OUTCOME_WIN: "win", OUTCOME_LOSS: "loss", OUTCOME_DRAW: "draw"}


class NotAStrategySkill(ValueError):
    """The reference engine plays StrategicPattern bodies only."""


def engine_version(module: GameModule) -> str:
    """What the engine reports (and a skill's provenance may record): code and data versions."""
    return f"{ENGINE_VERSION}+{module.id}.{module.data_version}.{module.fingerprint[:8]}"


@dataclass(frozen=True)
class BatchResult:
    """One batch: a numpy array per field, one entry per game, in game order."""

    module: str
    engine_version: str
    opponent: str  # the opponent's D057 name, e.g. "IC Default Hard"
    skill_id: str
    batch_seed: int
    game: np.ndarray  # int64 game indices
    seed: np.ndarray  # uint64 per-game seeds
    outcome: np.ndarray  # int8: 1 win, 0 draw, -1 loss (the skill's side)
    duration_s: np.ndarray
    resource_delta: np.ndarray
    army_value_delta: np.ndarray
    map_control: np.ndarray
    timeline_t: np.ndarray  # [samples] seconds
    timeline: np.ndarray  # [games, samples, 2]: army value of the skill's side, then the opponent's
    ignored_parameters: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())
    situation: Situation | None = None  # where the games started; None: the standard opening
    start_s: float = 0.0  # the game clock at the start (duration_s and timeline_t are on that clock, from 0:00)
    baseline: bool = False  # the module's default plan played in the skill's place
    switches: tuple[tuple[float, str], ...] = ()  # a composition: (game time, plan) of each later plan

    def __len__(self) -> int:
        return int(self.game.shape[0])

    @property
    def wins(self) -> int:
        return int(np.count_nonzero(self.outcome == OUTCOME_WIN))

    @property
    def losses(self) -> int:
        return int(np.count_nonzero(self.outcome == OUTCOME_LOSS))

    @property
    def draws(self) -> int:
        return int(np.count_nonzero(self.outcome == OUTCOME_DRAW))

    @property
    def win_rate(self) -> float:
        return self.wins / len(self) if len(self) else 0.0

    def result(self, i: int) -> GameResult:
        return GameResult(
            game=int(self.game[i]),
            seed=int(self.seed[i]),
            outcome=OUTCOME_NAMES[int(self.outcome[i])],
            duration_s=float(self.duration_s[i]),
            resource_delta=float(self.resource_delta[i]),
            army_value_delta=float(self.army_value_delta[i]),
            map_control=float(self.map_control[i]),
            timeline=Timeline(
                t_s=tuple(float(t) for t in self.timeline_t),
                skill=tuple(float(v) for v in self.timeline[i, :, 0]),
                opponent=tuple(float(v) for v in self.timeline[i, :, 1]),
            ),
            ignored_parameters=self.ignored_parameters,
        )

    def __iter__(self) -> Iterator[GameResult]:
        return (self.result(i) for i in range(len(self)))

    @classmethod
    def concatenate(cls, parts: Sequence[BatchResult]) -> BatchResult:
        """Join chunks of one batch (in order)."""
        if not parts:
            raise ValueError("nothing to concatenate")
        first = parts[0]

        def join(name: str) -> np.ndarray:
            return np.concatenate([getattr(part, name) for part in parts])

        return cls(
            module=first.module,
            engine_version=first.engine_version,
            opponent=first.opponent,
            skill_id=first.skill_id,
            batch_seed=first.batch_seed,
            game=join("game"),
            seed=join("seed"),
            outcome=join("outcome"),
            duration_s=join("duration_s"),
            resource_delta=join("resource_delta"),
            army_value_delta=join("army_value_delta"),
            map_control=join("map_control"),
            timeline_t=first.timeline_t,
            timeline=join("timeline"),
            ignored_parameters=first.ignored_parameters,
            notes=first.notes,
            situation=first.situation,
            start_s=first.start_s,
            baseline=first.baseline,
            switches=first.switches,
        )


_COMPILED: dict[tuple[str, str, str], CompiledModule] = {}


def _compiled(module: GameModule) -> CompiledModule:
    key = (module.id, module.path, module.fingerprint)
    if key not in _COMPILED:
        if len(_COMPILED) >= 8:
            _COMPILED.clear()
        _COMPILED[key] = compile_module(module)
    return _COMPILED[key]


def pattern_of(skill_or_pattern: Skill | StrategicPattern) -> tuple[StrategicPattern, str]:
    """The StrategicPattern to play and the skill id to seed with ("" for a bare pattern)."""
    if isinstance(skill_or_pattern, StrategicPattern):
        return skill_or_pattern, ""
    if not isinstance(skill_or_pattern, Skill):
        raise NotAStrategySkill(f"{type(skill_or_pattern).__name__} is neither a skill nor a StrategicPattern")
    body = skill_or_pattern.body
    if not isinstance(body, StrategicPattern):
        raise NotAStrategySkill(
            f"skill {skill_or_pattern.id} has a {body.kind.serde} body; the reference engine plays StrategicPattern skills"
        )
    return body, skill_or_pattern.id


def opponent_doctrine(opponent: Opponent, module: GameModule, pattern: StrategicPattern) -> Doctrine:
    if opponent.is_mirror:
        return with_difficulty(doctrine_from_pattern(pattern, module, label="mirror"), module, opponent.difficulty)
    return doctrine_from_preset(
        module, opponent.preset, opponent.difficulty, unit_mix=opponent.unit_mix, label=opponent.label
    )


def prepare(
    skill_or_pattern: Skill | StrategicPattern,
    opponent: str | Opponent,
    module: str | GameModule = "ra1",
    *,
    opponent_mix: Mix | None = None,
    situation: SituationSignature | Situation | None = None,
    baseline: bool = False,
    then: Sequence[tuple[float | GamePhase, Skill | StrategicPattern]] = (),
) -> tuple[MatchSetup, Opponent, str, tuple[str, ...], tuple[str, ...]]:
    """Compile a match-up once: (setup, opponent, skill id, ignored parameters, notes).

    The games start from ``situation``, by default the pattern's own SituationSignature
    (``STANDARD`` forces the standard opening). Raises SituationError for a situation that cannot
    be read at all; anything merely out of range is clamped or left out, and noted.
    ``baseline``: the skill's side plays the module's :func:`default_plan` instead of the pattern,
    from the same situation against the same opponent (for the whole match: ``then`` is not used).
    ``then``: a composition, ``(time, plan)`` pairs in increasing time: from that game time (in
    seconds, or the start of a GamePhase) the skill's side plays that plan instead."""
    game_module = module if isinstance(module, GameModule) else load_module(module)
    pattern, skill_id = pattern_of(skill_or_pattern)
    rival = opponent if isinstance(opponent, Opponent) else parse_opponent(opponent, game_module)
    if opponent_mix is not None:
        rival = Opponent(rival.preset, rival.difficulty, rival.label + " (custom mix)", opponent_mix)
    place = situation_from_signature(pattern.situation if situation is None else situation, game_module)
    skill_side = default_plan(game_module) if baseline else doctrine_from_pattern(pattern, game_module)
    rival_side = opponent_doctrine(rival, game_module, pattern)
    if place.enemy and opponent_mix is None:  # the estimate is what the opponent builds
        rival_side = with_composition(rival_side, place.enemy, game_module)
    first_tiers, _why = start_tiers(place, game_module, DEFAULT_TUNING)
    setup = compile_match(game_module, skill_side, rival_side, _compiled(game_module), first_tiers=first_tiers)
    notes = tuple(skill_side.notes) + tuple(note for side in setup.sides for note in side.notes)
    ignored = skill_side.ignored_parameters
    if not place.is_standard:
        setup.start, start_notes = compile_start(setup, place)
        setup.situation = place
        notes += (f"situation: {place.describe()}", *start_notes)
    if then and not baseline:
        setup.switches, plan_notes, plan_ignored = _compile_switches(setup, then, rival_side, first_tiers)
        notes += plan_notes
        ignored = tuple(dict.fromkeys((*ignored, *plan_ignored)))
    return setup, rival, skill_id, ignored, notes + place.notes


MAX_SWITCHES = 8


def _compile_switches(
    setup: MatchSetup,
    then: Sequence[tuple[float | GamePhase, Skill | StrategicPattern]],
    rival: Doctrine,
    first_tiers: tuple[int, int],
) -> tuple[tuple[PlanSwitch, ...], tuple[str, ...], tuple[str, ...]]:
    """The later plans of a composition; ValueError for a schedule that cannot be played."""
    module, tuning = setup.module, setup.tuning
    if isinstance(then, str | bytes) or not isinstance(then, Sequence) or len(then) > MAX_SWITCHES:
        raise ValueError(f"then: expected at most {MAX_SWITCHES} (time, plan) pairs")
    phase_start = {
        GamePhase.EARLY: 0.0,
        GamePhase.MID: tuning.mid_game.start_s,
        GamePhase.LATE: tuning.late_game.start_s,
    }
    start_s = setup.start.start_step * module.match.step_s if setup.start is not None else 0.0
    switches: list[PlanSwitch] = []
    notes: list[str] = []
    ignored: list[str] = []
    previous = -math.inf
    for i, entry in enumerate(then):
        if not isinstance(entry, tuple | list) or len(entry) != 2:
            raise ValueError(f"then[{i}]: expected a (time, plan) pair")
        when, plan = entry
        at = phase_start[when] if isinstance(when, GamePhase) else when
        if isinstance(at, bool) or not isinstance(at, int | float) or not math.isfinite(at) or at <= previous:
            raise ValueError(f"then[{i}]: {when!r} is not a game time after the previous switch")
        previous = float(at)
        pattern, plan_id = pattern_of(plan)
        label = plan_id or f"plan {i + 2}"
        if at >= module.match.time_limit_s:
            notes.append(f"composition: {label} at {at:g} s is after the time limit; not played")
            continue
        if at <= start_s:
            notes.append(f"composition: {label} at {at:g} s, before the situation's start; plays from the start")
        doctrine = doctrine_from_pattern(pattern, module)
        sides = compile_match(module, doctrine, rival, setup.cm, tuning=tuning, first_tiers=first_tiers).sides
        switches.append(PlanSwitch(round(at / module.match.step_s), sides, label))
        notes.extend(doctrine.notes)
        ignored.extend(doctrine.ignored_parameters)
        notes.append(f"composition: from {at:g} s the skill's side plays {label}")
    return tuple(switches), tuple(notes), tuple(ignored)


def run_batch(
    skill_or_pattern: Skill | StrategicPattern,
    opponent: str | Opponent,
    games: int,
    seed: int,
    module: str | GameModule = "ra1",
    *,
    first_game: int = 0,
    skill_id: str | None = None,
    opponent_mix: Mix | None = None,
    seeds: np.ndarray | None = None,
    situation: SituationSignature | Situation | None = None,
    baseline: bool = False,
    then: Sequence[tuple[float | GamePhase, Skill | StrategicPattern]] = (),
) -> BatchResult:
    """Play games ``first_game .. first_game + games - 1`` of a batch.

    ``opponent`` is a D057 name (``"IC Default Hard"``, ``"ic-default:hard"``, ``"mirror"``).
    ``skill_id`` overrides the id used for seeding (a bare pattern seeds with ""); ``seeds``
    overrides the derived per-game seeds (the protocol passes them explicitly).
    ``opponent_mix`` replaces the opponent's production mix (experiments and tests).
    ``situation`` replaces the pattern's own SituationSignature as the games' start
    (``situation.STANDARD``: the standard opening); SituationError if it cannot be read.
    ``baseline=True`` plays the module's default plan (:func:`default_plan`) in the skill's place:
    the same seeds, situation and opponent, so its games pair with the skill's one by one.
    ``then=[(600.0, skill_b), (GamePhase.LATE, skill_c)]`` plays a composition: the skill's plan
    until 600 s of game time, then skill_b's, from the late game on skill_c's (seeds and
    situation from the first); ValueError for times that do not increase or are not numbers.
    """
    request = BatchRequest(
        skill_or_pattern,
        opponent,
        games,
        seed,
        module,
        first_game=first_game,
        skill_id=skill_id,
        opponent_mix=opponent_mix,
        seeds=seeds,
        situation=situation,
        baseline=baseline,
        then=then,
    )
    prepared = _prepare_request(request, {}, {})
    return _batch_result(prepared, simulate(prepared.setup, prepared.seeds), 0)


@dataclass(frozen=True)
class BatchRequest:
    """The arguments of one :func:`run_batch` call, as a value (for :func:`run_batches`)."""

    skill_or_pattern: Skill | StrategicPattern
    opponent: str | Opponent
    games: int
    seed: int
    module: str | GameModule = "ra1"
    first_game: int = 0
    skill_id: str | None = None
    opponent_mix: Mix | None = None
    seeds: np.ndarray | None = None
    situation: SituationSignature | Situation | None = None
    baseline: bool = False
    then: Sequence[tuple[float | GamePhase, Skill | StrategicPattern]] = ()


# What a request that cannot be played raises: not a StrategicPattern, an unknown module or
# opponent, a situation or composition that cannot be read, a module file that cannot be read.
REQUEST_ERRORS: tuple[type[Exception], ...] = (ValueError, LookupError, OSError)


@dataclass(frozen=True)
class BatchError:
    """A request :func:`run_batches` could not play, in its place; ``reason`` names why."""

    request: BatchRequest
    reason: str  # "ExceptionType: message", as the exception would have said it
    error: Exception = field(compare=False)


def pass_affinity(skill_or_pattern: Skill | StrategicPattern, module: str) -> tuple[str, str]:
    """Which of :func:`run_batches`' vectorised passes a skill's games will probably join: its
    module and its situation's game phase (a pass is one module and one start step). Every pass
    plays its whole step loop, so a caller cutting many skills' games into chunks sorts by this
    to give each chunk few passes. A hint only: no result depends on it, and it never raises."""
    body = skill_or_pattern.body if isinstance(skill_or_pattern, Skill) else skill_or_pattern
    situation = body.situation if isinstance(body, StrategicPattern) else None
    phase = situation.game_phase if isinstance(situation, SituationSignature) else None
    return module, phase.value if isinstance(phase, GamePhase) else ""


def run_batches(requests: Sequence[BatchRequest]) -> list[BatchResult | BatchError]:
    """Play many batches, the games of many requests together in a few vectorised passes.

    The result holds, in the requests' order, what ``run_batch(**request)`` returns (bit for bit,
    whatever the grouping, order or split), or a :class:`BatchError` for a request that cannot be
    played (the others are played all the same). Requests that share a module and a start step
    (the situation's phase) share a pass; each game carries its own plan's numbers."""
    results: list[BatchResult | BatchError | None] = [None] * len(requests)
    modules: dict[str, GameModule] = {}
    opponents: dict[tuple[str, str], Opponent] = {}
    groups: dict[tuple[int, int, int], list[tuple[int, _Prepared]]] = {}
    for i, request in enumerate(requests):
        try:
            prepared = _prepare_request(request, modules, opponents)
        except REQUEST_ERRORS as error:
            results[i] = BatchError(request, f"{type(error).__name__}: {error}", error)
            continue
        groups.setdefault(group_key(prepared.setup), []).append((i, prepared))
    for members in groups.values():
        for part in _parts(members):
            raw = simulate_many([p.setup for _, p in part], [p.seeds for _, p in part])
            start = 0
            for i, prepared in part:
                results[i] = _batch_result(prepared, raw, start)
                start += len(prepared.seeds)
    return [result for result in results if result is not None]


def _parts(members: list[tuple[int, _Prepared]]) -> Iterator[list[tuple[int, _Prepared]]]:
    """A group in passes of about one simulation block: the tables of a pass hold the plans of
    its requests only."""
    part: list[tuple[int, _Prepared]] = []
    games = 0
    for member in members:
        size = len(member[1].seeds)
        if part and games + size > BLOCK:
            yield part
            part, games = [], 0
        part.append(member)
        games += size
    if part:
        yield part


@dataclass(frozen=True)
class _Prepared:
    setup: MatchSetup
    rival: Opponent
    key: str  # the id the seeds derive from
    seed: int
    first_game: int
    seeds: np.ndarray
    ignored: tuple[str, ...]
    notes: tuple[str, ...]
    baseline: bool


_PREPARED: dict[object, tuple[MatchSetup, Opponent, tuple[str, ...], tuple[str, ...]]] = {}
PREPARED_CACHE = 4096  # match-ups kept compiled (a library's skills against one opponent)


def forget_compiled() -> None:
    """Drop the compiled match-ups and sides kept for reuse (benchmarks measure from scratch)."""
    _PREPARED.clear()
    tables.forget_sides()


def _prepare_request(
    request: BatchRequest, modules: dict[str, GameModule], opponents: dict[tuple[str, str], Opponent]
) -> _Prepared:
    """Check a request and compile its match-up; a match-up compiled before is reused (the
    setup is never changed once made, and depends only on what the key holds)."""
    try:
        games = operator.index(request.games)
    except TypeError:
        raise ValueError(f"games must be a whole number 0..{MAX_GAMES}, got {request.games!r}") from None
    if not 0 <= games <= MAX_GAMES:
        raise ValueError(f"games must be 0..{MAX_GAMES}, got {games}")
    module = request.module
    if isinstance(module, str):
        if module not in modules:
            modules[module] = load_module(module)
        module = modules[module]
    pattern, own_id = pattern_of(request.skill_or_pattern)
    opponent = request.opponent
    if isinstance(opponent, str):  # read once per name and module
        if (opponent, module.id) not in opponents:
            opponents[opponent, module.id] = parse_opponent(opponent, module)
        opponent = opponents[opponent, module.id]
    cached = None
    key = _cache_key(request, module, pattern)
    if key is not None:
        cached = _PREPARED.get(key)
    if cached is None:
        setup, rival, _id, ignored, notes = prepare(
            pattern,
            opponent,
            module,
            opponent_mix=request.opponent_mix,
            situation=request.situation,
            baseline=request.baseline,
            then=request.then,
        )
        cached = setup, rival, ignored, notes
        if key is not None:
            if len(_PREPARED) >= PREPARED_CACHE:
                _PREPARED.clear()
            _PREPARED[key] = cached
    setup, rival, ignored, notes = cached
    seed_key = own_id if request.skill_id is None else request.skill_id
    if request.seeds is None:
        seeds = rng.derive_seeds(request.seed, seed_key, request.first_game, games)
    else:
        seeds = np.asarray(request.seeds, dtype=np.uint64)
        if seeds.shape != (games,):
            raise ValueError(f"expected {games} seeds, got {seeds.shape[0] if seeds.ndim else 0}")
    return _Prepared(
        setup, rival, seed_key, int(request.seed), request.first_game, seeds, ignored, notes, request.baseline
    )


def _cache_key(request: BatchRequest, module: GameModule, pattern: StrategicPattern) -> object | None:
    """What a compiled match-up depends on, or None when part of it cannot be hashed (a list in
    a hand-made situation, a custom mix): such requests are compiled every time."""
    then = request.then
    if isinstance(then, str | bytes) or not isinstance(then, Sequence):
        return None  # prepare says what is wrong with it
    if not all(isinstance(entry, tuple | list) and len(entry) == 2 for entry in then):
        return None
    key = (
        (module.id, module.path, module.fingerprint),
        pattern,
        request.opponent,
        request.opponent_mix,
        request.situation,
        request.baseline,
        tuple(tuple(entry) for entry in then),  # the later plans' ids name them in notes
    )
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _batch_result(prepared: _Prepared, raw: RawResults, start: int) -> BatchResult:
    """A request's games, ``start ..`` in ``raw``."""
    setup, games = prepared.setup, len(prepared.seeds)
    end = start + games
    return BatchResult(
        module=setup.module.id,
        engine_version=engine_version(setup.module),
        opponent=prepared.rival.label,
        skill_id=prepared.key,
        batch_seed=prepared.seed,
        game=np.arange(prepared.first_game, prepared.first_game + games, dtype=np.int64),
        seed=prepared.seeds,
        outcome=raw.outcome[start:end],
        duration_s=raw.duration_s[start:end],
        resource_delta=raw.resource_delta[start:end],
        army_value_delta=raw.army_value_delta[start:end],
        map_control=raw.map_control[start:end],
        timeline_t=raw.timeline_t,
        timeline=raw.timeline[start:end],
        ignored_parameters=prepared.ignored,
        notes=prepared.notes,
        situation=setup.situation,
        start_s=setup.start.start_step * setup.module.match.step_s if setup.start is not None else 0.0,
        baseline=prepared.baseline,
        switches=tuple((s.at_step * setup.module.match.step_s, s.label) for s in setup.switches),
    )
