"""What a skill serves while a change to it waits for review (docs/review.md, "What is served").

One place, used by :meth:`skillstudio.retrieval.Retriever.retrieve` (its hits: prompt context,
``skillstudio retrieve``, the GUI preview) and by the agents' ``skill_search``:

* rejected: nothing;
* pending or changes requested, with an approved revision earlier: that **last approved
  revision** (its snapshot), never the content waiting for review;
* pending or changes requested, never approved: the skill itself when ``serve_unapproved``
  (the default, so an agent's fresh candidate can be found), else nothing;
* approved, or outside review (no review state: written by a person or imported): the skill.
"""

from __future__ import annotations

from skillstudio.model import ReviewState, Skill, ValidationError
from skillstudio.store import InvalidStoredSkill, SkillRepository

AWAITING_REVIEW = (ReviewState.PENDING, ReviewState.CHANGES_REQUESTED)


def serve(repository: SkillRepository, skill: Skill, *, serve_unapproved: bool = True) -> Skill | str:
    """The content ``skill`` serves, or why it is withheld."""
    state = skill.review_state
    if state is ReviewState.REJECTED:
        return "withheld: rejected by review"
    if state not in AWAITING_REVIEW:
        return skill
    approved = repository.reviews.last_approved_revision(skill.id)
    if approved is None:
        return skill if serve_unapproved else "withheld: awaiting its first review approval"
    try:
        return approved.skill()
    except (ValidationError, InvalidStoredSkill):  # an unreadable snapshot: serve nothing rather than the pending text
        return f"withheld: its last approved revision (r{approved.number}) cannot be read"


def served_content(repository: SkillRepository, skill: Skill, *, serve_unapproved: bool = True) -> Skill | None:
    """The content ``skill`` serves, or None when it is withheld (:func:`serve` says why)."""
    served = serve(repository, skill, serve_unapproved=serve_unapproved)
    return served if isinstance(served, Skill) else None
