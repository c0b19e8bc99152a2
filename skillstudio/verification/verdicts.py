"""Why a batch left a skill's tier where it is, and what would move it (Qt-free).

After a batch, a tier that does not follow the skill's credited figures puzzles: three skills at
10-26% stay Established and the result says "Demoted: none". :func:`explain` says, for each skill
of a batch whose tier did not follow its figures (or whose session changed nothing), why and what
to do, from the batch's :class:`~skillstudio.verification.runner.SkillResult` and the skill's
:class:`~skillstudio.verification.standing.Standing` under the run's policy:

* ``contradicted``: the credited evidence contradicts the tier (the policy's
  :class:`~skillstudio.verification.policy.Contradiction`, its reason and advice);
* ``kept``: the figures no longer give the tier, and a verify batch lowers none while the
  policy's ``demote_on_verify`` is off (added to a contradiction, or on its own);
* ``capped``: the figures earn more than headless evidence may give (``headless_max_tier``);
* ``thin``: the rate clears a higher tier's bar, but on too few games;
* ``not_credited`` and ``unchanged``: the session gave no credit, or changed nothing (only error
  games, games already credited), in the runner's words.

The policy's own sentences (the cap, a tier's requirement, a contradiction's reason and advice,
the figures) are reused as they are; this module adds only the sentences that join them, and
the commands that change a setting. The dashboard renders these verdicts; nothing here is Qt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from skillstudio.model import Confidence, Domain
from skillstudio.store import SkillRepository
from skillstudio.store.runs import RunStore
from skillstudio.verification.policy import KindFigures, VerificationPolicy, headless_cap_note
from skillstudio.verification.runner import SkillResult, recorded_policy
from skillstudio.verification.standing import Standing, standings

CONTRADICTED, KEPT, CAPPED, THIN, NOT_CREDITED, UNCHANGED = (
    "contradicted",
    "kept",
    "capped",
    "thin",
    "not_credited",
    "unchanged",
)
CAUSES = {  # each cause in a few words, for a batch's count of them
    CONTRADICTED: "contradicted by the credited evidence",
    KEPT: "kept on too few games",
    CAPPED: "held back by headless_max_tier",
    THIN: "short of games for the next tier",
    NOT_CREDITED: "no credit from this batch",
    UNCHANGED: "unchanged by this batch",
}
KEPT_NOTE = "a verify batch lowers no tier while demote_on_verify is off"
# Said in the app's words and the CLI's: the same sentence reaches both.
DEMOTE_SETTING = "Edit › Settings, or skillstudio config set --library demote_on_verify true"
MORE_GAMES = "play more games: verify it again, or with Until decided (stops when the evidence decides)"


@dataclass(frozen=True)
class Verdict:
    """One skill's tier after a batch, why it is not what its figures suggest, and what to do."""

    skill_id: str
    name: str
    tier: Confidence  # as stored after the batch
    cause: str  # contradicted | kept | capped | thin | not_credited | unchanged
    why: str
    todo: str

    @property
    def contradicted(self) -> bool:
        return self.cause == CONTRADICTED

    def text(self) -> str:
        return f"{self.name} ({self.tier.value}): {self.why}. To do: {self.todo}."


def explain(result: SkillResult, standing: Standing | None, policy: VerificationPolicy) -> Verdict | None:
    """The verdict on one skill of a batch, or None when its tier followed its figures."""
    found = _unchanged(result, policy) if not result.action or not result.credited else None
    if found is None and result.action and result.credited and standing is not None:
        found = _judged(standing, Confidence.parse(result.after), result.before == result.after, policy)
    if found is None:
        return None
    cause, why, todo = found
    return Verdict(result.skill_id, result.name, Confidence.parse(result.after or result.before), cause, why, todo)


def _unchanged(result: SkillResult, policy: VerificationPolicy) -> tuple[str, str, str] | None:
    """A session that changed nothing, or gave no credit: the runner's reason, and the way out."""
    counts = result.counts
    if result.action:  # applied, yet not credited
        return NOT_CREDITED, result.reason, f"verify it against {policy.reference_opponent} with its current body"
    if counts.played and not counts.decided:
        return UNCHANGED, result.reason, "look at the engine's errors (the run's report) and verify again"
    if result.duplicates and result.duplicates >= counts.decided:
        return UNCHANGED, result.reason, "verify again with a new seed (Seed: new each batch)"
    if not counts.played:
        return UNCHANGED, result.reason, "verify it again"
    return None  # applied already by another runner: its figures are in


def _judged(
    standing: Standing, tier: Confidence, unmoved: bool, policy: VerificationPolicy
) -> tuple[str, str, str] | None:
    """A credited session: does the stored tier follow the credited figures, and if not, why."""
    headless, gameplay = standing.headless, standing.gameplay
    cap = policy.headless_max_tier
    earned = _highest(headless.tier, gameplay.tier)  # on the figures alone
    given = _highest(_lowest(headless.tier, cap), gameplay.tier)  # what the rules give (the cap applied)
    kept = unmoved and tier.rank > given.rank and not policy.demote_on_verify
    stays = f"; {tier.value} stays ({KEPT_NOTE})" if kept else ""
    figures = "; ".join(k.describe() for k in (headless, gameplay) if k.decided) or "no decided games"
    if standing.contradiction is not None:
        c = standing.contradiction
        demote = f"; a batch demotes once demote_on_verify is on ({DEMOTE_SETTING})" if kept else ""
        return CONTRADICTED, c.reason + stays, c.advice + demote
    if headless.tier.rank > cap.rank and headless.tier.rank > tier.rank:
        why = f"{headless_cap_note(cap, headless.tier)}; the credited evidence: {figures}{stays}"
        return CAPPED, why, _raise_cap(headless.tier)
    if kept and tier.rank > earned.rank:  # above what the figures earn, not contradicted: too few games
        why = f"{tier.value} needs {policy.requirement(Domain.AI_STRATEGY, tier)}; the credited evidence: {figures}"
        return KEPT, why + stays, f"{MORE_GAMES}; or, to let batches lower it, {DEMOTE_SETTING}"
    # The rates (the cap applied) would earn a higher tier, only the games are too few: name the next step.
    within_reach = _highest(_lowest(_rate_earns(headless, policy), cap), _rate_earns(gameplay, policy))
    step = next((t for t in Confidence if t.rank == max(tier.rank, earned.rank) + 1), None)
    if step is not None and within_reach.rank >= step.rank:
        needs = policy.requirement(Domain.AI_STRATEGY, step)
        return THIN, f"{step.value} needs {needs}; the credited evidence: {figures}", MORE_GAMES
    return None


def explain_run(repository: SkillRepository, run_id: str, results: Sequence[SkillResult]) -> list[Verdict]:
    """The verdicts on a batch's skills, in the batch's order, under the policy its run recorded."""
    policy = recorded_policy(repository.database, RunStore(repository.database).run(run_id))
    return explain_all(results, standings(repository, [r.skill_id for r in results], policy), policy)


def explain_all(
    results: Sequence[SkillResult], found: Mapping[str, Standing], policy: VerificationPolicy
) -> list[Verdict]:
    out = (explain(result, found.get(result.skill_id), policy) for result in results)
    return [verdict for verdict in out if verdict is not None]


def summarize(verdicts: Sequence[Verdict]) -> str:
    """ "3 skills to look at: 2 contradicted by the credited evidence, 1 held back by headless_max_tier"."""
    if not verdicts:
        return "Every tier follows its credited figures."
    counts: dict[str, int] = {}
    for verdict in verdicts:
        counts[verdict.cause] = counts.get(verdict.cause, 0) + 1
    noun = "skill" if len(verdicts) == 1 else "skills"
    return f"{len(verdicts):,} {noun} to look at: " + ", ".join(
        f"{counts[cause]:,} {CAUSES[cause]}" for cause in CAUSES if cause in counts
    )


def _raise_cap(earned: Confidence) -> str:
    return (
        "record gameplay matches from real games (skillstudio record MATCHES.jsonl); or, if the studio trusts "
        f"its headless engine, set headless_max_tier to {earned.value} (Edit › Settings, or "
        f"skillstudio config set --library headless_max_tier {earned.value})"
    )


def _rate_earns(figures: KindFigures, policy: VerificationPolicy) -> Confidence:
    """The tier a kind's rate would earn with enough games: the policy's own rule, asked about
    the same rate over as many games as its highest bar needs."""
    if not figures.decided:
        return Confidence.TENTATIVE
    enough = max(policy.established_games, policy.proven_games, figures.decided)
    scale = -(-enough // figures.decided)  # ceiling
    tier, _candidate, _reason = policy.headless_tier(figures.wins * scale, figures.decided * scale)
    return tier


def _lowest(*tiers: Confidence) -> Confidence:
    return min(tiers, key=lambda tier: tier.rank)


def _highest(*tiers: Confidence) -> Confidence:
    return max(tiers, key=lambda tier: tier.rank)


__all__ = ["CAUSES", "Verdict", "explain", "explain_all", "explain_run", "summarize"]
