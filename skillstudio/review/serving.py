"""What a skill serves while a change to it waits for review (docs/review.md, "What is served").

One place, used by :meth:`skillstudio.retrieval.Retriever.load` (prompt context, ``skillstudio
retrieve``, the GUI preview) and by the agents' ``skill_search``:

* rejected: nothing;
* pending or changes requested, with an approved revision earlier: that **last approved
  revision** (its snapshot), never the content waiting for review;
* pending or changes requested, never approved: the skill itself when ``serve_unapproved``
  (the default, so an agent's fresh candidate can be found), else nothing;
* approved, or outside review (no review state: written by a person or imported): the skill.
"""

from __future__ import annotations

from collections.abc import Sequence

from skillstudio.model import ReviewState, Skill, ValidationError
from skillstudio.store import InvalidStoredSkill, SkillRepository

AWAITING_REVIEW = (ReviewState.PENDING, ReviewState.CHANGES_REQUESTED)


def served_content(repository: SkillRepository, skill: Skill, *, serve_unapproved: bool = True) -> Skill | None:
    """The content ``skill`` serves, or None when it is withheld."""
    state = skill.review_state
    if state is ReviewState.REJECTED:
        return None
    if state not in AWAITING_REVIEW:
        return skill
    approved = repository.reviews.last_approved_revision(skill.id)
    if approved is None:
        return skill if serve_unapproved else None
    try:
        return approved.skill()
    except (ValidationError, InvalidStoredSkill):  # an unreadable snapshot: serve nothing rather than the pending text
        return None


def served_many(repository: SkillRepository, skills: Sequence[Skill], *, serve_unapproved: bool = True) -> list[Skill]:
    """:func:`served_content` of each, in order, the withheld ones left out."""
    out = []
    for skill in skills:
        served = served_content(repository, skill, serve_unapproved=serve_unapproved)
        if served is not None:
            out.append(served)
    return out
