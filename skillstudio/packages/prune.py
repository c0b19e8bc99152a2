"""D057 "Skill pruning": which skills to move to the trash, and why.

The limits are studio settings (``prune.stale_days``, ``prune.unused_days``, ``prune.max_size``;
:mod:`skillstudio.store.settings`), D057's 30 and 90 days by default. A skill is pruned when it is

* **stale**: ``tentative`` and not verified for more than 30 days (its last verification, or its
  creation if never verified, is more than 30 days old);
* **unused**: ``use_count == 0`` and created more than 90 days ago, or last used more than 90
  days ago;
* **superseded**: another skill of the same domain and game module answers the same situation
  (an equal StrategicPattern situation signature, or the same sequence of scene templates for
  an EncounterPattern) with a strictly higher success rate and at least the same confidence.

With ``max_size``, more skills go until the library fits: tentative before established before
proven; within a tier, skills that duplicate another's situation first, then lower success
rate, fewer uses, older. Pruned skills go to the trash (restorable), never straight away.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from skillstudio.gc_pause import gc_paused
from skillstudio.model import Confidence, EncounterPattern, Skill, StrategicPattern
from skillstudio.model.naming import skill_labels
from skillstudio.store import AuditAction, SkillQuery, SkillRepository
from skillstudio.store.settings import DEFAULTS, PruneLimits, effective_settings


@dataclass(frozen=True)
class PruneCandidate:
    skill_id: str
    name: str
    confidence: str
    reason: str

    def __str__(self) -> str:
        return f"{self.name} [{self.skill_id}] ({self.confidence}): {self.reason}"


def _time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text).astimezone(UTC)
    except ValueError:
        return None


def situation_key(skill: Skill) -> tuple[Hashable, ...] | None:
    body = skill.body
    if isinstance(body, StrategicPattern):
        return ("strategic", skill.domain.value, skill.game_module, body.situation)
    if isinstance(body, EncounterPattern):
        templates = tuple(scene.template for scene in body.scene_composition)
        return ("encounter", skill.domain.value, skill.game_module, templates)
    return None


def prune_candidates(
    skills: Sequence[Skill],
    *,
    now: datetime | None = None,
    max_size: int | None = None,
    limits: PruneLimits = DEFAULTS.prune,
) -> list[PruneCandidate]:
    """The skills D057's rules would prune, each once, with its first reason. ``max_size``
    given overrides ``limits.max_size``."""
    now = now or datetime.now(UTC)
    stale_days, unused_days = limits.stale_days, limits.unused_days
    max_size = limits.max_size if max_size is None else max_size
    if max_size is not None and max_size < 0:  # "down to -1 skills" would prune every one
        raise ValueError(f"a library cannot be pruned down to {max_size} skills")
    chosen: dict[str, PruneCandidate] = {}

    def add(skill: Skill, reason: str) -> None:
        if skill.id not in chosen:
            chosen[skill.id] = PruneCandidate(skill.id, skill.name, skill.confidence.value, reason)

    for skill in skills:
        created = _time(skill.created_at) or now
        verified = _time(skill.quality.last_verified) or created
        if skill.confidence is Confidence.TENTATIVE and now - verified > timedelta(days=stale_days):
            add(skill, f"tentative with no verification for more than {stale_days} days")
            continue
        last_used = _time(skill.last_used)
        if skill.use_count == 0 and last_used is None and now - created > timedelta(days=unused_days):
            add(skill, f"never used in more than {unused_days} days")
        elif last_used is not None and now - last_used > timedelta(days=unused_days):
            add(skill, f"not used for more than {unused_days} days")

    groups: dict[tuple[Hashable, ...], list[Skill]] = {}
    for skill in skills:
        key = situation_key(skill)
        if key is not None:
            groups.setdefault(key, []).append(skill)
    duplicates: set[str] = set()
    labels: dict[str, str] = {}  # named once, if a skill is superseded
    for members in groups.values():
        if len(members) < 2:
            continue
        duplicates.update(skill.id for skill in members)
        for skill in members:
            better = [
                other
                for other in members
                if other.id != skill.id
                and other.quality.success_rate > skill.quality.success_rate
                and other.confidence.rank >= skill.confidence.rank
            ]
            if better:
                best = max(better, key=lambda o: (o.quality.success_rate, o.confidence.rank, o.id))
                labels = labels or skill_labels({s.id: s.name for s in skills})
                add(
                    skill,
                    f"superseded by {labels[best.id]} (same situation, success rate "
                    f"{best.quality.success_rate:.0%} > {skill.quality.success_rate:.0%})",
                )

    if max_size is not None:
        remaining = [skill for skill in skills if skill.id not in chosen]
        excess = len(remaining) - max(max_size, 0)
        if excess > 0:
            remaining.sort(
                key=lambda s: (
                    s.confidence.rank,
                    0 if s.id in duplicates else 1,
                    s.quality.success_rate,
                    s.use_count,
                    s.created_at,
                    s.id,
                )
            )
            for skill in remaining[:excess]:
                dup = ", a duplicate situation" if skill.id in duplicates else ""
                add(skill, f"library above {max_size} skills ({skill.confidence.value}{dup})")
    order = {skill.id: index for index, skill in enumerate(skills)}
    return sorted(chosen.values(), key=lambda c: order[c.skill_id])


@gc_paused()  # every skill is read and kept: the collector's passes over them doubled the time
def plan_prune(
    repository: SkillRepository,
    *,
    max_size: int | None = None,
    now: datetime | None = None,
    limits: PruneLimits | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[PruneCandidate]:
    """What pruning the library would remove; ``limits`` default: the library's settings.
    ``progress(done, total)`` follows the read of every skill, which is most of the time."""
    limits = limits or effective_settings(repository.database).settings.prune
    # an invalid row an engine wrote is not ours to prune
    skills, _invalid = repository.get_many_valid(repository.query(SkillQuery()).ids, progress=progress)
    return prune_candidates(skills, now=now, max_size=max_size, limits=limits)


def apply_prune(repository: SkillRepository, candidates: Sequence[PruneCandidate]) -> int:
    """Move the candidates to the trash in one transaction."""
    if not candidates:
        return 0
    return repository.trash.delete_many(
        [c.skill_id for c in candidates], message="pruned (D057 skill pruning)", action=AuditAction.PRUNE
    )


__all__ = ["PruneCandidate", "apply_prune", "plan_prune", "prune_candidates", "situation_key"]
