"""Review decisions (migration 5, docs/review.md): the one path that records them.

:meth:`Reviews.review` is how a person decides (approve, reject, request changes, pending). The
only other decisions are "back to pending" when content changes under a decision: an agent's
update (:meth:`Reviews.update_pending`) and an import that replaces changed content
(:mod:`skillstudio.store.imports`). Every decision row of the library is written by
:func:`record_decision`, here.
"""

from __future__ import annotations

from sqlalchemy import func, select, update

from skillstudio.model import ReviewState, Skill
from skillstudio.store.errors import ConflictError
from skillstudio.store.events import AuditAction
from skillstudio.store.history import revision_of
from skillstudio.store.orm import ReviewDecisionRow, RevisionRow, SkillMetaRow
from skillstudio.store.skill_writes import update_one
from skillstudio.store.types import ReviewDecision, Revision
from skillstudio.store.unit_of_work import StorePart, UnitOfWork


class Reviews(StorePart):
    """``repository.reviews``: review decisions and what reviewers compare against."""

    def review(self, skill_id: str, state: ReviewState, *, comment: str = "", version: int) -> Skill:
        """Record a review decision on the content ``version`` the reviewer saw, with its
        comment, in one transaction with the review state, a revision and the audit entry.

        Every review change is a person's: any other actor (agent, system) gets ReviewNotAllowed.
        A ``version`` that is no longer the stored one raises ConflictError naming both versions:
        the reviewer decided on content the library no longer holds."""
        value = ReviewState(state).value
        self._require_human(f"set a skill {value}")
        if not isinstance(version, int) or isinstance(version, bool):
            raise TypeError(f"version: the content version the reviewer saw (an int), not {version!r}")
        with self._work(AuditAction.REVIEW) as work:
            work.touch((skill_id,))
            current = work.load(skill_id)
            if current.version != version:
                raise ConflictError(yours=current, theirs=current, read_version=version)
            work.record_untracked(skill_id, current)
            set_review_state(work, skill_id, ReviewState(value))
            stored = work.load(skill_id)
            number = work.revision(stored, "review", comment)
            record_decision(work, skill_id, ReviewState(value), comment, number)
            work.audit(AuditAction.REVIEW, skill_id, number, {"state": value, "comment": comment, "version": version})
        return stored

    def update_pending(self, skill: Skill, *, message: str = "") -> Skill:
        """Store an edit (as ``repository.update``) and send the skill back to ``pending`` in the
        same transaction, with a decision row saying so: an agent's update, which a reviewer
        must look at again.

        The one review change a non-human actor makes, and only as part of its own content
        change (``skill.version`` must be current, else ConflictError)."""
        with self._work(AuditAction.UPDATE) as work:
            work.touch((skill.id,))
            set_review_state(work, skill.id, ReviewState.PENDING)  # first, so the revision shows it
            stored = update_one(work, skill, message)
            back_to_pending(work, skill.id, message or "updated by an agent")
        return stored

    def decisions(self, skill_id: str) -> list[ReviewDecision]:
        """The skill's review decisions, oldest first."""
        with self.database.read() as session:
            rows = session.scalars(
                select(ReviewDecisionRow).where(ReviewDecisionRow.skill_id == skill_id).order_by(ReviewDecisionRow.id)
            )
            return [
                ReviewDecision(r.skill_id, r.state, r.reviewer, r.reviewer_kind, r.at, r.comment, r.revision)
                for r in rows
            ]

    def last_approved_revision(self, skill_id: str) -> Revision | None:
        """The newest revision whose snapshot was approved (what a reviewer last accepted)."""
        with self.database.read() as session:
            number = session.scalar(
                select(func.max(RevisionRow.number)).where(
                    RevisionRow.skill_id == skill_id,
                    func.json_extract(RevisionRow.snapshot, "$.review_state") == "approved",
                )
            )
            return None if number is None else revision_of(session, skill_id, number)


def set_review_state(work: UnitOfWork, skill_id: str, state: ReviewState) -> None:
    """The skill's review state column (its metadata row is added for a skill an engine wrote)."""
    session = work.session
    if session.get(SkillMetaRow, skill_id) is None:
        session.add(SkillMetaRow(skill_id=skill_id, created_by="unknown", engine_version="", review_state=state.value))
        session.flush()
    else:
        session.execute(update(SkillMetaRow).where(SkillMetaRow.skill_id == skill_id).values(review_state=state.value))


def back_to_pending(work: UnitOfWork, skill_id: str, why: str) -> None:
    """The decision row of content that changed under a decision, at the revision that changed it
    (the state itself was written with that revision)."""
    record_decision(work, skill_id, ReviewState.PENDING, why, work.latest_revision(skill_id))


def record_decision(work: UnitOfWork, skill_id: str, state: ReviewState, comment: str, revision: int | None) -> None:
    """A row of studio_review_decisions, by the unit's actor: the library's one writer of them."""
    work.session.add(
        ReviewDecisionRow(
            skill_id=skill_id,
            state=state.value,
            reviewer=work.actor.id,
            reviewer_kind=work.actor.kind,
            at=work.now,
            comment=comment,
            revision=revision,
        )
    )
    work.session.flush()


__all__ = ["Reviews", "back_to_pending", "record_decision", "set_review_state"]
