"""``verify --baseline``, ``--until-decided [--max-games N]``, ``--sequence A,B[,C] [--switch-at T]``.

The options, their checks, and what runs of these kinds add to ``verify``'s output, ``runs show``
and the ``runs`` list (text and JSON; docs/cli.md). :mod:`skillstudio.cli.verification` calls
in here; the work itself is in :mod:`skillstudio.verification.lift`, ``.sequential`` and
``.compositions``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from skillstudio.cli.arguments import MANY, whole_number
from skillstudio.store import Database, JsonInput, SkillRepository, body_hash
from skillstudio.store.paired_runs import DecisionRecord, LiftRecord, PairedRuns, PairRecord
from skillstudio.store.runs import RunInfo, RunSkill
from skillstudio.verification import lift, sequential
from skillstudio.verification.compositions import KIND as SEQUENCE
from skillstudio.verification.compositions import PHASES, clock, plan_sequence, start_sequence
from skillstudio.verification.executors import DEFAULT_EXECUTOR
from skillstudio.verification.policy import VerificationPolicy
from skillstudio.verification.runner import DEFAULT_CHUNK_GAMES
from skillstudio.verification.stats import wilson

EXIT_USAGE = 2
SELECTION = ("skill", "domain", "confidence", "game_module")


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value < 0.5:
        raise argparse.ArgumentTypeError(f"must be between 0 and 0.5, got {value}")
    return value


def add_arguments(verify: argparse.ArgumentParser) -> None:
    verify.add_argument(
        "--baseline",
        action="store_true",
        help="also play the module's default plan on the same seeds; report each skill's lift over it",
    )
    verify.add_argument(
        "--until-decided",
        action="store_true",
        help="play in rounds; stop a skill once a sequential test places it above or below its next tier's bar",
    )
    verify.add_argument(
        "--max-games",
        type=whole_number("--max-games", 1, MANY),
        metavar="N",
        help=f"with --until-decided: games per skill at most (default {sequential.DEFAULT_MAX_GAMES})",
    )
    verify.add_argument(
        "--delta",
        type=_fraction,
        metavar="D",
        help=f"with --until-decided: the indifference margin around the bar (default {sequential.DEFAULT_DELTA})",
    )
    verify.add_argument(
        "--sequence", metavar="A,B[,C]", help="play skill A's plan, then B's (then C's): a composition run"
    )
    verify.add_argument(
        "--switch-at",
        metavar="T[,T]",
        help="with --sequence: when each next skill takes over (12:00, 720s, mid, late; default: its game phase)",
    )


def prepare(args: argparse.Namespace) -> int | None:
    """Check how the options combine (an exit code to stop with, after saying why) and fill in
    ``--games`` from ``--max-games``. Nothing is written."""

    def usage(message: str) -> int:
        print(f"skillstudio: {message}", file=sys.stderr)
        return EXIT_USAGE

    until = getattr(args, "until_decided", False)
    sequence = getattr(args, "sequence", None)
    if args.resume and (until or sequence or args.baseline):
        return usage("--resume continues a run as it was started; leave out --baseline, --until-decided, --sequence")
    if not until and (args.max_games is not None or args.delta is not None):
        return usage("--max-games and --delta go with --until-decided")
    if args.switch_at and not sequence:
        return usage("--switch-at goes with --sequence")
    if sequence:
        if until or args.baseline:
            return usage("--sequence runs on its own (no --baseline or --until-decided)")
        chosen = [name for name in SELECTION if getattr(args, name, None)]
        if chosen:
            return usage(f"--sequence names its skills; leave out --{chosen[0].replace('_', '-')}")
        if not args.games or not args.opponent:
            return usage("verify --sequence needs --games N and --opponent NAME")
        return None
    if until:
        if args.games:
            return usage("--until-decided plays as many games as the test needs: use --max-games N, not --games")
        args.games = args.max_games or sequential.DEFAULT_MAX_GAMES
        if args.chunk is None:
            args.chunk = sequential.DEFAULT_ROUND_GAMES
        # --delta is checked against the library's own bars when the run is set up (run_options)
    if args.baseline and args.engine:
        print(
            "skillstudio: --baseline needs the built-in engine: the engine protocol has no default-plan job",
            file=sys.stderr,
        )
        return 1
    return None


def run_options(args: argparse.Namespace, policy: VerificationPolicy) -> dict[str, JsonInput] | None:
    """What the new run records about these modes (None for a plain batch); ValueError, naming
    ``--delta``, if the sequential design does not fit this library's bars."""
    options: dict[str, JsonInput] = {}
    if getattr(args, "baseline", False):
        options["baseline"] = True
    if getattr(args, "until_decided", False):
        try:
            options.update(sequential.options(delta=args.delta or sequential.DEFAULT_DELTA, policy=policy))
        except ValueError as error:
            raise ValueError(f"--delta: {error}") from None
    return options or None


def verify_sequence(args: argparse.Namespace, database: Database, drive: Callable[[str], int]) -> int:
    """``verify --sequence``: check it all (an unknown or unplayable skill is refused, nothing is
    written), start the composition run, and play it."""
    repository = SkillRepository(database)
    plan = plan_sequence(
        repository,
        args.sequence.split(","),
        args.switch_at.split(",") if args.switch_at else None,
        external_engine=bool(args.engine),
    )
    run_id = start_sequence(
        database,
        plan,
        opponent=args.opponent,
        games=args.games,
        seed=args.seed,
        executor=args.executor or DEFAULT_EXECUTOR,
        chunk_games=args.chunk or DEFAULT_CHUNK_GAMES,
        actor=repository.actor,
    )
    return drive(run_id)


def progress_text(event: object) -> tuple[int, int, str] | None:
    """The default plan's progress (--baseline) as (done, total, figures), else None."""
    if isinstance(event, lift.BaselineProgress):
        c = event.counts
        return event.games_done, event.games_total, f"default plan: W{c.wins} L{c.losses} D{c.draws} E{c.errors}"
    return None


# --- what these runs add to the run's document and text ----------------------------------------------


class RunExtras:
    """The lifts, sequential decisions and composition pairs of one run, read once."""

    def __init__(self, database: Database, info: RunInfo) -> None:
        paired = PairedRuns(database)
        self.info = info
        self.lifts: dict[str, LiftRecord] = paired.lifts(info.id)
        self.decisions: dict[str, DecisionRecord] = paired.decisions(info.id)
        self.pairs: list[PairRecord] = paired.pairs(info.id) if info.kind == SEQUENCE else []
        self.names = (
            {
                s.id: s.name
                for s in SkillRepository(database).summaries(
                    [p.skill_a for p in self.pairs] + [p.skill_b for p in self.pairs]
                )
            }
            if self.pairs
            else {}
        )
        self.hashes: dict[str, str] = {}
        if self.lifts:
            for skill in SkillRepository(database).get_many_valid(list(self.lifts))[0]:
                self.hashes[skill.id] = body_hash(skill)

    @property
    def baseline(self) -> bool:
        return lift.wants_baseline(self.info)

    @property
    def until_decided(self) -> bool:
        return sequential.design_of(self.info) is not None

    def entry(self, skill_id: str) -> dict[str, Any]:
        """Fields added to a skill's entry in the run document."""
        decision = self.decisions.get(skill_id)
        return {
            "lift": lift.lift_document(self.lifts.get(skill_id), self.hashes.get(skill_id)),
            "sequential": None if decision is None else _decision_document(decision),
        }

    def document(self) -> dict[str, Any]:
        """Fields added to the run document."""
        design = sequential.design_of(self.info)
        return {
            "baseline": self.baseline,
            "until_decided": design,
            "sequence": self._sequence_document() if self.info.kind == SEQUENCE else None,
        }

    def _sequence_document(self) -> dict[str, Any]:
        options = self.info.options
        return {
            "skills": options.get("sequence"),
            "switch_at": options.get("switch_at"),
            "pairs": [
                {
                    "first": p.skill_a,
                    "then": p.skill_b,
                    "switch_at": p.switch_at,
                    "wins": p.counts.wins,
                    "losses": p.counts.losses,
                    "draws": p.counts.draws,
                    "errors": p.counts.errors,
                    "credited": p.credited,
                    "success_count_added": p.successes,
                    "note": p.note,
                    "applied": p.applied_at is not None,
                }
                for p in self.pairs
            ],
        }

    def lines(self, skills: Sequence[RunSkill], names: dict[str, str]) -> list[str]:
        """Lines added to the run's text after its table."""
        lines: list[str] = []
        if self.info.kind == SEQUENCE:
            lines.extend(self._sequence_lines())
        if self.until_decided:
            design = sequential.design_of(self.info) or {}
            played = sum(s.played for s in skills)
            lines.append(
                f"Sequential test (SPRT, delta {design.get('delta', 0):.0%}, alpha {design.get('alpha', 0):.0%}, "
                f"beta {design.get('beta', 0):.0%}): {played:,} games played of {self.info.games * len(skills):,} at most"
            )
            for entry in skills:
                decision = self.decisions.get(entry.skill_id)
                if decision is not None:
                    lines.append(
                        f"  {entry.skill_id[:8]}  {_name(names, entry.skill_id)}  {sequential.describe(decision)}"
                    )
        if self.baseline:
            lines.append(
                "Lift over the default plan (same seeds, situation and opponent; Newcombe 95% for paired rates):"
            )
            if not self.lifts:
                lines.append("  not measured yet: resume the run to play the default plan")
            for entry in skills:
                record = self.lifts.get(entry.skill_id)
                if record is not None:
                    lines.append(f"  {entry.skill_id[:8]}  {_name(names, entry.skill_id)}  {lift.describe(record)}")
            worse = sum(1 for r in self.lifts.values() if r.worse)
            if worse:
                lines.append(f"{worse} skill{'s' if worse != 1 else ''} {lift.WORSE}")
        return lines

    def _sequence_lines(self) -> list[str]:
        if not self.pairs:
            return []
        first = self.pairs[0]
        steps = [self.names.get(first.skill_a, first.skill_a[:8])]
        seconds = self.info.options.get("switch_s")
        for pair in self.pairs:
            at = pair.switch_at
            if at in PHASES and isinstance(seconds, list) and pair.position < len(seconds):
                value = seconds[pair.position]
                if isinstance(value, int | float) and not isinstance(value, bool):
                    at = f"{at} ({clock(float(value))})"  # a phase: where it starts on the clock
            steps.append(f"from {at} {self.names.get(pair.skill_b, pair.skill_b[:8])}")
        lines = ["Sequence: " + ", then ".join(steps)]
        if first.applied_at is None:
            lines.append("  not applied yet: resume the run to finish it")
            return lines
        c = first.counts
        rate = f"{c.wins / c.decided:.0%} {wilson(c.wins, c.decided)}" if c.decided else "-"
        lines.append(f"  {c.wins}/{c.decided} won ({rate}), {c.errors} error games; {first.note}")
        for pair in self.pairs:
            a, b = self.names.get(pair.skill_a, pair.skill_a[:8]), self.names.get(pair.skill_b, pair.skill_b[:8])
            added = f"success_count +{pair.successes}" if pair.credited else "nothing added"
            lines.append(f"  {a} -> {b}: {added}")
        return lines


def _name(names: dict[str, str], skill_id: str) -> str:
    name = names.get(skill_id, "(deleted)")
    return f"{name if len(name) <= 32 else name[:31] + '…':<32}"


def _decision_document(record: DecisionRecord) -> dict[str, Any]:
    return {
        "decision": record.decision,
        "bar": record.bar_name,
        "bar_rate": record.bar,
        "delta": record.delta,
        "alpha": record.alpha,
        "beta": record.beta,
        "min_games": record.min_games,
        "wins": record.wins,
        "decided": record.decided,
        "llr": record.llr,
    }


def runs_extras(database: Database, runs: Sequence[RunInfo]) -> dict[str, dict[str, Any]]:
    """Per run, what the ``runs`` list adds: lift counts, decisions, the sequence."""
    paired = PairedRuns(database)
    ids = [r.id for r in runs]
    lifts, decisions = paired.lift_counts(ids), paired.decision_counts(ids)
    out: dict[str, dict[str, Any]] = {}
    for run in runs:
        measured, worse = lifts.get(run.id, (0, 0))
        out[run.id] = {
            "lift": {"skills": measured, "worse_than_default_plan": worse} if lift.wants_baseline(run) else None,
            "until_decided": decisions.get(run.id) if sequential.design_of(run) is not None else None,
            "sequence": run.options.get("sequence") if run.kind == SEQUENCE else None,
        }
    return out


def runs_note(extras: dict[str, Any]) -> str:
    """The ``runs`` list's last column for one run."""
    parts = []
    if extras.get("lift") is not None:
        lifted = extras["lift"]
        parts.append(f"lift of {lifted['skills']}, {lifted['worse_than_default_plan']} worse than the default plan")
    if extras.get("until_decided") is not None:
        counts = extras["until_decided"]
        parts.append(", ".join(f"{n} {d}" for d, n in sorted(counts.items())) or "until decided")
    if extras.get("sequence"):
        parts.append(f"sequence of {len(extras['sequence'])}")
    return "; ".join(parts)


__all__ = [
    "RunExtras",
    "add_arguments",
    "prepare",
    "progress_text",
    "run_options",
    "runs_extras",
    "runs_note",
    "verify_sequence",
]
