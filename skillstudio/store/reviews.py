"""Review decisions (migration 5, docs/review.md): the one path that records them.

:meth:`Reviews.review` is how a person decides (approve, reject, request changes, pending), and
:meth:`Reviews.undo` how they take their newest decision back. The only other decisions are "back to pending" when content changes under a decision: an agent's
update (:meth:`Reviews.update_pending`) and an import that replaces changed content
(:mod:`skillstudio.store.imports`). Every decision row of the library is written by
:func:`record_decision`, here.
"""

from __future__ import annotations

from sqlalchemy import select, update

from skillstudio.model import ReviewState, Skill
from skillstudio.store.errors import ConflictError, ReviewRefused
from skillstudio.store.events import AuditAction
from skillstudio.store.history import History
from skillstudio.store.orm import ReviewDecisionRow, RevisionRow, SkillMetaRow
from skillstudio.store.skill_writes import update_one
from skillstudio.store.snapshots import decode_snapshot
from skillstudio.store.types import JsonInput, ReviewDecision, Revision
from skillstudio.store.unit_of_work import StorePart, UnitOfWork

# The action of the revision an undo writes (a decision's is "review"): an undo is not undone.
UNDO_REVISION = "review_undo"


class Reviews(StorePart):
    """``repository.reviews``: review decisions and what reviewers compare against."""

    def review(self, skill_id: str, state: ReviewState, *, comment: str = "", version: int) -> Skill:
        """Record a review decision on the content ``version`` the reviewer saw, with its
        comment, in one transaction with the review state, a revision and the audit entry.

        Every review change is a person's: any other actor (agent, system) gets ReviewNotAllowed.
        A ``version`` that is no longer the stored one raises ConflictError naming both versions:
        the reviewer decided on content the library no longer holds. The app asks a reviewer
        for a rejection's reason; the store records what it is given, an empty comment too."""
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

    def undo(self, skill_id: str, state: ReviewState, *, version: int) -> Skill:
        """Take back this person's newest decision on the skill, the one that set ``state`` on
        content ``version``: the review state goes back to what it was before that decision (no
        state at all for a skill never reviewed), with a decision row, a ``review`` revision and
        a ``skill.review_undo`` audit entry of its own. The decision itself stays on record.

        ReviewRefused, with nothing written, when that decision is no longer the skill's newest
        (someone decided since, or an edit or an import sent it back to pending), when it was
        someone else's, or when the content changed since: then decide again instead."""
        decided = ReviewState(state)
        self._require_human(f"take back a {decided.value} decision")
        with self._work(AuditAction.REVIEW_UNDO) as work:
            work.touch((skill_id,))
            current = work.load(skill_id)
            last = work.session.scalar(
                select(ReviewDecisionRow)
                .where(ReviewDecisionRow.skill_id == skill_id)
                .order_by(ReviewDecisionRow.id.desc())
                .limit(1)
            )
            why = _why_not_undoable(work, last, current, decided, version)
            if why or last is None:
                raise ReviewRefused(
                    f"the decision “{decided.label}” on “{current.name}” cannot be undone: {why}; nothing was changed"
                )
            previous = _state_before(work, skill_id, last.revision)
            set_review_state(work, skill_id, previous)
            stored = work.load(skill_id)
            said = f"took back {decided.label.lower()}"
            number = work.revision(stored, UNDO_REVISION, said)
            record_decision(work, skill_id, previous, said, number)
            details: dict[str, JsonInput] = {
                "state": previous.value if previous else None,
                "undid": decided.value,
                "comment": last.comment,
                "version": version,
            }
            work.audit(AuditAction.REVIEW_UNDO, skill_id, number, details)
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
        # Snapshots are compressed (snapshots.encode_snapshot): decoded here, not searched in SQL.
        revisions = History(self.database).revisions(skill_id)
        return next((r for r in reversed(revisions) if r.snapshot.get("review_state") == "approved"), None)


def set_review_state(work: UnitOfWork, skill_id: str, state: ReviewState | None) -> None:
    """The skill's review state column (its metadata row is added for a skill an engine wrote);
    None: no review state (never reviewed)."""
    session = work.session
    value = None if state is None else state.value
    if session.get(SkillMetaRow, skill_id) is None:
        session.add(SkillMetaRow(skill_id=skill_id, created_by="unknown", engine_version="", review_state=value))
        session.flush()
    else:
        session.execute(update(SkillMetaRow).where(SkillMetaRow.skill_id == skill_id).values(review_state=value))


def _why_not_undoable(
    work: UnitOfWork, last: ReviewDecisionRow | None, current: Skill, decided: ReviewState, version: int
) -> str:
    """Why the newest decision ``last`` is not the one to take back; empty when it is."""
    if last is None:
        return "it has no review decision"
    if last.state != decided.value or current.review_state is not decided:
        return "it was decided again since, or sent back to review"
    written = work.session.execute(
        select(RevisionRow.action, RevisionRow.version).where(
            RevisionRow.skill_id == current.id, RevisionRow.number == last.revision
        )
    ).first()
    if written is not None and written.action == UNDO_REVISION:
        return "its newest decision is an undo; decide again instead"
    if last.reviewer != work.actor.id:
        return f"the decision is {last.reviewer}'s; decide again instead"
    decided_on = version if written is None else written.version
    if current.version != decided_on:
        return f"its content changed since (the decision was on version {decided_on}, now version {current.version})"
    if version != decided_on:
        return f"that decision was on version {decided_on}, not {version}"
    return ""


def _state_before(work: UnitOfWork, skill_id: str, revision: int | None) -> ReviewState | None:
    """The review state the skill had before the decision that wrote ``revision``: the one its
    previous revision recorded (None: never reviewed, or no earlier revision to tell)."""
    if revision is None:
        return None
    snapshot = work.session.scalar(
        select(RevisionRow.snapshot)
        .where(RevisionRow.skill_id == skill_id, RevisionRow.number < revision)
        .order_by(RevisionRow.number.desc())
        .limit(1)
    )
    value = None if snapshot is None else decode_snapshot(snapshot).get("review_state")
    return None if value is None else ReviewState(str(value))


def back_to_pending(work: UnitOfWork, skill_id: str, why: str) -> None:
    """The decision row of content that changed under a decision, at the revision that changed it
    (the state itself was written with that revision)."""
    record_decision(work, skill_id, ReviewState.PENDING, why, work.latest_revision(skill_id))


def record_decision(
    work: UnitOfWork, skill_id: str, state: ReviewState | None, comment: str, revision: int | None
) -> None:
    """A row of studio_review_decisions, by the unit's actor: the library's one writer of them.
    ``state`` None (an undo back to never reviewed) is stored as an empty state."""
    work.session.add(
        ReviewDecisionRow(
            skill_id=skill_id,
            state="" if state is None else state.value,
            reviewer=work.actor.id,
            reviewer_kind=work.actor.kind,
            at=work.now,
            comment=comment,
            revision=revision,
        )
    )
    work.session.flush()


__all__ = ["UNDO_REVISION", "Reviews", "back_to_pending", "record_decision", "set_review_state"]
