"""The review workflow over the repository: the queue, the change to review, the decisions.

Qt-free; the GUI's review queue and the ``skillstudio review`` commands are thin layers on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import func, select

from skillstudio.model import ReviewState, Skill, SourceKind
from skillstudio.model.diff import unified_diff
from skillstudio.review.linter import Linter, lineage
from skillstudio.store import RiskFinding, SkillQuery, SkillRepository, SkillSummary, SortKey
from skillstudio.store.orm import RevisionRow
from skillstudio.store.reviews import UNDO_REVISION

# Everything that may be served or exported: rejected skills are kept, but never handed out.
SERVED_STATES: tuple[ReviewState | None, ...] = (
    None,
    ReviewState.PENDING,
    ReviewState.APPROVED,
    ReviewState.CHANGES_REQUESTED,
)


def is_served(skill: Skill) -> bool:
    return skill.review_state is not ReviewState.REJECTED


@dataclass(frozen=True)
class QueueItem:
    summary: SkillSummary
    changed_at: str  # when its newest revision was written (the change waiting for review)


def pending_queue(
    repository: SkillRepository,
    *,
    created_by: Sequence[str] = (),
    sources: Sequence[SourceKind] = (),
) -> list[QueueItem]:
    """Pending skills, newest change first, optionally only some creators and sources."""
    query = SkillQuery(
        review_states=(ReviewState.PENDING,),
        created_by=tuple(created_by),
        sources=tuple(sources),
        sort=SortKey.CREATED_AT,
        descending=True,
    )
    ids = repository.query(query).ids
    summaries = repository.summaries(ids)
    changed = _latest_change(repository, ids)
    items = [QueueItem(s, changed.get(s.id) or s.created_at) for s in summaries]
    items.sort(key=lambda item: (item.changed_at, item.summary.created_at), reverse=True)
    return items


def _latest_change(repository: SkillRepository, ids: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    with repository.database.read() as session:
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            rows = session.execute(
                select(RevisionRow.skill_id, func.max(RevisionRow.created_at))
                .where(RevisionRow.skill_id.in_(chunk), RevisionRow.action.not_in(("review", UNDO_REVISION)))
                .group_by(RevisionRow.skill_id)
            )
            out.update(rows.all())  # not the Result itself: it has keys(), so update would read it as a mapping
    return out


@dataclass(frozen=True)
class PendingChange:
    """What a reviewer judges: the skill now, what was last approved (None: never approved),
    and the unified diff between them (empty when never approved)."""

    current: Skill
    approved: Skill | None
    approved_revision: int | None
    diff: str


def change_since_approved(repository: SkillRepository, skill_id: str) -> PendingChange:
    current = repository.get(skill_id)
    revision = repository.reviews.last_approved_revision(skill_id)
    approved = revision.skill() if revision is not None else None
    number = None if revision is None else revision.number
    diff = (
        ""
        if approved is None
        else unified_diff(approved, current, old_label=f"approved (revision {number})", new_label="now")
    )
    return PendingChange(current, approved, number, diff)


def decide(repository: SkillRepository, skill_id: str, state: ReviewState, comment: str = "", *, version: int) -> Skill:
    """Record a reviewer's decision on the content ``version`` they saw (a person: the
    repository's actor must be human). ConflictError if the skill changed since."""
    return repository.reviews.review(skill_id, state, comment=comment, version=version)


def approve(repository: SkillRepository, skill_id: str, comment: str = "", *, version: int) -> Skill:
    return decide(repository, skill_id, ReviewState.APPROVED, comment, version=version)


def reject(repository: SkillRepository, skill_id: str, comment: str = "", *, version: int) -> Skill:
    return decide(repository, skill_id, ReviewState.REJECTED, comment, version=version)


def request_changes(repository: SkillRepository, skill_id: str, comment: str = "", *, version: int) -> Skill:
    return decide(repository, skill_id, ReviewState.CHANGES_REQUESTED, comment, version=version)


def undo(repository: SkillRepository, skill_id: str, state: ReviewState, *, version: int) -> Skill:
    """Take back the reviewer's newest decision on the skill (``state`` on content ``version``):
    the state before it comes back, audited as ``skill.review_undo``. ReviewRefused if that
    decision is no longer the newest, is someone else's, or the content changed since."""
    return repository.reviews.undo(skill_id, state, version=version)


def findings_for(repository: SkillRepository, skill: Skill, *, relint: bool = False) -> list[RiskFinding]:
    """Stored findings of ``skill``; lints (and stores) when none are stored, when they were
    computed for another content version (someone edited it since), when one names a refinement
    or the original of this skill (stored by an earlier linter), or when asked to."""
    stored = repository.findings.get(skill.id)
    if (
        stored
        and not relint
        and repository.findings.version(skill.id) == skill.version
        and not _points_at_a_relative(repository, skill, stored)
    ):
        return stored
    return Linter(repository=repository).lint_and_store(skill)


def _points_at_a_relative(repository: SkillRepository, skill: Skill, findings: Sequence[RiskFinding]) -> bool:
    """Whether a stored finding names a skill of the same lineage (a refinement or its original):
    linted before relatives stopped counting as near-duplicates, so linted again."""
    root = lineage(skill)
    relatives = {root, *repository.refinements_of(root)} - {skill.id}
    return any(finding.excerpt in relatives for finding in findings)


__all__ = [
    "SERVED_STATES",
    "PendingChange",
    "QueueItem",
    "approve",
    "change_since_approved",
    "decide",
    "findings_for",
    "is_served",
    "pending_queue",
    "reject",
    "request_changes",
    "undo",
]
