"""Stop when the evidence decides (``verify --until-decided``; docs/verification.md).

A run plays its skills in rounds (``round_games`` games per skill per round, round-robin) and
stops a skill as soon as a sequential probability ratio test places it clearly above or below
the bar that matters for its next tier (:func:`bar_for`), or at ``max_games``.

The test, per skill, on its wins among decided games (a draw is not a win; error games are not
observations): H0: p <= bar - delta against H1: p >= bar + delta, with the log-likelihood ratio
of H1 (p1 = bar + delta) to H0 (p0 = bar - delta) after w wins of n decided games

    LLR = w ln(p1/p0) + (n - w) ln((1 - p1)/(1 - p0)),

checked after every round. It decides **above** when LLR >= ln(1/alpha) (and the bar's minimum
number of games is reached) and **below** when LLR <= ln(beta). These are Ville's bounds, not
Wald's approximations: the likelihood ratio is a martingale under H0, so the probability that it
*ever* reaches 1/alpha is at most alpha however often it is looked at, and likewise for beta
under H1. Hence, whatever the number of looks, the round size and ``max_games``:

* a skill whose true rate is bar - delta or lower is called above with probability <= alpha;
* a skill whose true rate is bar + delta or higher is called below with probability <= beta.

(For a Bernoulli rate the error probabilities only fall as the true rate moves away from the
indifference zone (bar - delta, bar + delta), where either answer is acceptable.) Stopping at
``max_games`` without a decision is *undecided*. The test decides when to stop; the tier is then
set by the policy from the credited evidence as for any batch. The win rate of a sequentially
stopped sample leans slightly towards the side it was stopped on (as any optional stopping
does); the Wilson intervals shown are the fixed-sample ones.

Defaults: delta = 0.10, alpha = beta = 0.05, rounds of 10 games, at most 200 games per skill.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from skillstudio.model import Confidence, Skill
from skillstudio.model.evidence import VerificationRecord
from skillstudio.store import SkillRepository, body_hash
from skillstudio.store.database import Database
from skillstudio.store.paired_runs import DecisionRecord, PairedRuns
from skillstudio.store.runs import RunInfo, RunSkill, RunStore
from skillstudio.store.types import GameRow
from skillstudio.verification.executors import Chunk, ChunkResult, Piece
from skillstudio.verification.policy import DEFAULT_POLICY, VerificationPolicy

DEFAULT_DELTA = 0.10
DEFAULT_ALPHA = DEFAULT_BETA = 0.05
DEFAULT_ROUND_GAMES = 10
DEFAULT_MAX_GAMES = 200
ABOVE, BELOW, UNDECIDED, PENDING = "above", "below", "undecided", "pending"


@dataclass(frozen=True)
class Bar:
    """The threshold that matters for a skill's next tier: name, rate, and the decided games the
    tier needs (an "above" decision waits for them)."""

    name: str  # candidate | established | proven
    rate: float
    min_games: int = 0

    def describe(self) -> str:
        games = f", {self.min_games}+ games" if self.min_games > 1 else ""
        return f"{self.name} bar (>{self.rate:.0%}{games})"


def bar_for(
    skill: Skill,
    policy: VerificationPolicy,
    evidence: Sequence[VerificationRecord],
    *,
    max_tier: Confidence | None = None,
) -> Bar:
    """The bar for the tier above the skill's (a Proven skill: Proven's own, to hold it).

    A Tentative skill that is not yet a candidate faces the candidate bar; a candidate, the
    Established bar; an Established skill, Proven's. The bars are the policy's. Headless evidence
    never earns more than ``max_tier`` (the policy's ``headless_max_tier`` where it has one): a
    tier beyond it is not what the test can settle, so the highest bar within it is used."""
    bars = {
        "candidate": Bar("candidate", policy.candidate_rate, 1),
        "established": Bar("established", policy.established_rate, policy.established_games),
        "proven": Bar("proven", policy.proven_rate, policy.proven_games),
    }
    tier = skill.quality.confidence
    if tier in (Confidence.PROVEN, Confidence.ESTABLISHED):  # a Proven skill: the bar that holds it
        wanted = "proven"
    else:
        candidate = policy.assess(skill.domain, evidence, body_hash(skill), tier).candidate
        wanted = "established" if candidate else "candidate"
    # The policy branch's headless_max_tier caps what headless games can earn (D057: Tentative).
    cap = max_tier or getattr(policy, "headless_max_tier", None) or Confidence.PROVEN
    if not isinstance(cap, Confidence):
        cap = Confidence.PROVEN
    reachable = {Confidence.TENTATIVE: "candidate", Confidence.ESTABLISHED: "established", Confidence.PROVEN: "proven"}
    order = ("candidate", "established", "proven")
    if order.index(wanted) > order.index(reachable[cap]):
        wanted = reachable[cap]
    return bars[wanted]


@dataclass(frozen=True)
class Sprt:
    """Wald's sequential probability ratio test of a win rate, with Ville's bounds (above)."""

    bar: float
    delta: float = DEFAULT_DELTA
    alpha: float = DEFAULT_ALPHA
    beta: float = DEFAULT_BETA
    min_games: int = 0
    win_step: float = field(init=False)
    other_step: float = field(init=False)

    def __post_init__(self) -> None:
        for name, value in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0 < value < 0.5:
                raise ValueError(f"{name} must be in (0, 0.5), got {value}")
        if not 0 < self.delta < 0.5:
            raise ValueError(f"delta must be in (0, 0.5), got {self.delta}")
        if not 0 < self.p0 < self.p1 < 1:
            raise ValueError(
                f"the bar {self.bar:.0%} +/- {self.delta:.0%} must lie inside (0, 1): choose a smaller delta"
            )
        object.__setattr__(self, "win_step", math.log(self.p1 / self.p0))
        object.__setattr__(self, "other_step", math.log((1 - self.p1) / (1 - self.p0)))

    @property
    def p0(self) -> float:
        return self.bar - self.delta

    @property
    def p1(self) -> float:
        return self.bar + self.delta

    @property
    def upper(self) -> float:
        return math.log(1 / self.alpha)

    @property
    def lower(self) -> float:
        return math.log(self.beta)

    def llr(self, wins: int, decided: int) -> float:
        return wins * self.win_step + (decided - wins) * self.other_step

    def decide(self, wins: int, decided: int) -> str | None:
        """``above``, ``below``, or None (play on)."""
        value = self.llr(wins, decided)
        if value >= self.upper and decided >= self.min_games:
            return ABOVE
        if value <= self.lower:
            return BELOW
        return None


# --- simulation: the test's error rates on coins ---------------------------------------------------


@dataclass(frozen=True)
class Simulated:
    """Outcomes of ``runs`` simulated skills of true rate ``p`` under one stopping rule."""

    p: float
    runs: int
    above: int
    below: int
    undecided: int
    mean_games: float

    def rate(self, decision: str) -> float:
        return {ABOVE: self.above, BELOW: self.below, UNDECIDED: self.undecided}[decision] / self.runs


def simulate(
    sprt: Sprt,
    p: float,
    *,
    runs: int = 2_000,
    round_games: int = DEFAULT_ROUND_GAMES,
    max_games: int = DEFAULT_MAX_GAMES,
    seed: int = 0,
) -> Simulated:
    """Play ``runs`` seeded sequences of coin flips with win probability ``p`` through the test,
    looking after every round, and count its decisions (vectorised; a few ms per thousand)."""
    rng = np.random.default_rng(seed)
    wins = np.cumsum(rng.random((runs, max_games)) < p, axis=1)
    looks = np.arange(round_games, max_games + 1, round_games)
    if looks.size == 0 or looks[-1] != max_games:
        looks = np.append(looks, max_games)
    at_looks = wins[:, looks - 1]
    llr = at_looks * sprt.win_step + (looks - at_looks) * sprt.other_step
    up = (llr >= sprt.upper) & (looks >= sprt.min_games)
    down = llr <= sprt.lower
    first_up = np.where(up.any(axis=1), up.argmax(axis=1), looks.size)
    first_down = np.where(down.any(axis=1), down.argmax(axis=1), looks.size)
    first = np.minimum(first_up, first_down)
    decided_up = (first_up < first_down) & (first < looks.size)
    decided_down = (first_down < first_up) & (first < looks.size)
    games = np.where(first < looks.size, looks[np.minimum(first, looks.size - 1)], max_games)
    return Simulated(
        p,
        runs,
        int(decided_up.sum()),
        int(decided_down.sum()),
        int(runs - decided_up.sum() - decided_down.sum()),
        float(games.mean()),
    )


# --- the runner's hook -------------------------------------------------------------------------


def design_of(info: RunInfo) -> dict[str, float] | None:
    """The run's ``until_decided`` options (delta, alpha, beta), or None for a fixed-N run."""
    design = info.options.get("until_decided")
    if not isinstance(design, dict):
        return None
    out: dict[str, float] = {"delta": DEFAULT_DELTA, "alpha": DEFAULT_ALPHA, "beta": DEFAULT_BETA}
    for key in out:
        value = design.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[key] = float(value)
    return out


def options(
    delta: float = DEFAULT_DELTA,
    alpha: float = DEFAULT_ALPHA,
    beta: float = DEFAULT_BETA,
    policy: VerificationPolicy | None = None,
) -> dict[str, dict[str, float]]:
    """What ``start_run(options=...)`` records for ``verify --until-decided``; ValueError if the
    design does not fit every bar of the policy (each bar +/- delta must lie inside (0, 1))."""
    policy = policy or DEFAULT_POLICY
    for name, bar in (
        ("candidate", policy.candidate_rate),
        ("established", policy.established_rate),
        ("proven", policy.proven_rate),
    ):
        try:
            Sprt(bar, delta, alpha, beta)
        except ValueError as error:
            raise ValueError(f"the {name} bar: {error}") from None
    return {"until_decided": {"delta": delta, "alpha": alpha, "beta": beta}}


class Stopping:
    """``verify --until-decided`` inside the runner: plans games round by round, stops a skill
    when the test decides, and records where it left each skill. None of it for fixed-N runs."""

    def __init__(self, database: Database, info: RunInfo, tests: dict[str, tuple[Bar, Sprt]]) -> None:
        self.info = info
        self.paired = PairedRuns(database)
        self.tests = tests
        self.round = max(1, info.chunk_games)
        self.tally: dict[str, list[int]] = {s: [0, 0, 0] for s in tests}  # wins, decided, errors
        self.decided: dict[str, str] = {}

    @classmethod
    def for_run(
        cls,
        database: Database,
        info: RunInfo,
        skills: dict[str, Skill],
        policy: VerificationPolicy,
        evidence: dict[str, list[VerificationRecord]] | None = None,
    ) -> Stopping | None:
        """The run's stopping rule (None unless it was started with ``until_decided``). Each
        skill's bar is fixed when the run first plays, and kept on resume."""
        design = design_of(info)
        if design is None:
            return None
        paired = PairedRuns(database)
        stored = paired.decisions(info.id)
        tests: dict[str, tuple[Bar, Sprt]] = {}
        new: list[DecisionRecord] = []
        for skill_id, skill in skills.items():
            record = stored.get(skill_id)
            if record is not None:
                bar = Bar(record.bar_name, record.bar, record.min_games)
            else:
                if evidence is not None and skill_id in evidence:
                    records = evidence[skill_id]
                else:
                    records = SkillRepository(database).evidence.verifications(skill_id)
                bar = bar_for(skill, policy, records)
            sprt = Sprt(bar.rate, design["delta"], design["alpha"], design["beta"], bar.min_games)
            tests[skill_id] = (bar, sprt)
            if record is None:
                new.append(_record(info.id, skill_id, bar, sprt, PENDING, 0, 0))
        paired.write_decisions(new)
        return cls(database, info, tests)

    # --- the runner calls these ----------------------------------------------------------------

    def settle(self, store: RunStore, needs: dict[str, int]) -> int:
        """A resumed run: replay each skill's stored games round by round; a skill the test has
        decided needs no more games. Returns the games no longer needed."""
        saved = 0
        games: dict[str, list[GameRow]] = {}
        for row in store.games(self.info.id):
            games.setdefault(row.skill_id, []).append(row)
        for skill_id in needs:
            rows = sorted(games.get(skill_id, ()), key=lambda g: g.game)
            for start in range(0, len(rows), self.round):
                self._add(skill_id, rows[start : start + self.round])
                if self._check(skill_id, final=False):
                    break
            else:
                self._check(skill_id, final=needs[skill_id] <= 0)
            if skill_id in self.decided and needs[skill_id] > 0:
                saved += needs[skill_id]
                needs[skill_id] = 0
        return saved

    def keep(self, result: ChunkResult) -> ChunkResult:
        """Drop games a parallel executor played after their skill was decided: the sample is
        what the stopping rule saw (the skill's session is applied already)."""
        rows = tuple(row for row in result.rows if row.skill_id not in self.decided)
        return result if len(rows) == len(result.rows) else replace(result, rows=rows)

    def observe(self, rows: Sequence[GameRow], needs: dict[str, int]) -> int:
        """A chunk's games are in: a skill the test now decides needs no more. Returns the games
        no longer needed."""
        saved = 0
        by_skill: dict[str, list[GameRow]] = {}
        for row in rows:
            by_skill.setdefault(row.skill_id, []).append(row)
        for skill_id, skill_rows in by_skill.items():
            if skill_id not in self.tests or skill_id in self.decided:
                continue
            self._add(skill_id, skill_rows)
            self._check(skill_id, final=needs.get(skill_id, 0) <= 0)
            if skill_id in self.decided and needs.get(skill_id, 0) > 0:
                saved += needs[skill_id]
                needs[skill_id] = 0
        return saved

    def plan(
        self, info: RunInfo, pending: dict[str, RunSkill], skills: dict[str, Skill], done: dict[str, set[int]]
    ) -> Iterator[Chunk]:
        """Chunks of one round of one skill, round-robin over the skills still undecided; lazy,
        so a skill decided meanwhile gets no further round."""
        missing: dict[str, list[int]] = {}
        for skill_id, entry in sorted(pending.items(), key=lambda item: item[1].position):
            if body_hash(skills[skill_id]) != entry.body_hash:
                continue  # its body changed since the run started: no more games (they would mix bodies)
            have = done.get(skill_id, set())
            missing[skill_id] = [g for g in range(info.games) if g not in have]
        index = 0
        while True:
            issued = False
            for skill_id, games in missing.items():
                if not games or skill_id in self.decided:
                    continue
                start, count = games[0], 1
                while count < len(games) and count < self.round and games[count] == start + count:
                    count += 1
                del games[:count]
                skill = skills[skill_id]
                piece = Piece(skill, pending[skill_id].game_module, start, count)
                yield Chunk(index, info.opponent, info.seed, (piece,), info.engine)
                index += 1
                issued = True
            if not issued:
                return

    # --- internals -----------------------------------------------------------------------------

    def _add(self, skill_id: str, rows: Sequence[GameRow]) -> None:
        tally = self.tally.setdefault(skill_id, [0, 0, 0])
        for row in rows:
            if row.outcome == "error":
                tally[2] += 1
            else:
                tally[0] += row.outcome == "win"
                tally[1] += 1

    def _check(self, skill_id: str, *, final: bool) -> bool:
        bar, sprt = self.tests[skill_id]
        wins, decided, errors = self.tally[skill_id]
        decision = sprt.decide(wins, decided)
        if decision is None and not decided and errors >= self.round:
            decision = UNDECIDED  # only error games so far: playing on would only repeat them
        if decision is None and final:
            decision = UNDECIDED
        if decision is None:
            return False
        self.decided[skill_id] = decision
        self.paired.write_decisions([_record(self.info.id, skill_id, bar, sprt, decision, wins, decided)])
        return True


def _record(run_id: str, skill_id: str, bar: Bar, sprt: Sprt, decision: str, wins: int, decided: int) -> DecisionRecord:
    return DecisionRecord(
        run_id,
        skill_id,
        bar.name,
        bar.rate,
        sprt.delta,
        sprt.alpha,
        sprt.beta,
        bar.min_games,
        decision,
        wins,
        decided,
        round(sprt.llr(wins, decided), 6),
    )


def describe(record: DecisionRecord) -> str:
    """``above the candidate bar (>40%, +/-10%) after 23 games (15 won)``."""
    where = f"the {record.bar_name} bar (>{record.bar:.0%}, +/-{record.delta:.0%})"
    after = f"after {record.decided} decided games ({record.wins} won)"
    if record.decision in (ABOVE, BELOW):
        return f"{record.decision} {where} {after}"
    if record.decision == PENDING:
        return f"testing against {where}, {after}"
    return f"undecided against {where} {after}"


__all__ = [
    "ABOVE",
    "BELOW",
    "DEFAULT_ALPHA",
    "DEFAULT_BETA",
    "DEFAULT_DELTA",
    "DEFAULT_MAX_GAMES",
    "DEFAULT_ROUND_GAMES",
    "PENDING",
    "UNDECIDED",
    "Bar",
    "Simulated",
    "Sprt",
    "Stopping",
    "bar_for",
    "describe",
    "design_of",
    "options",
    "simulate",
]
