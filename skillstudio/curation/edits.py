"""Saving a person's edit of a skill, by D057's provenance rules.

An LLM-discovered or Workshop skill is evidence of what an agent or another author found; a
human edit must not rewrite it. Saving such an edit creates a *refinement*: a new skill with
source ``human_refined {original_id}``, made by the editing person, with no verification
evidence (its body changed, so the original's record does not carry over). The original stays,
superseded by its refinement (``SkillRepository.refinements_of``). Hand-authored and
human-refined skills are the editors' own: edits update them in place, as a new revision.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from skillstudio.model import Provenance, Quality, Skill, Source, SourceKind, new_skill_id, utc_now
from skillstudio.store import SkillRepository

# Sources whose skills are records of someone else's discovery: edits become refinements.
PRESERVED_SOURCES = frozenset({SourceKind.LLM_DISCOVERED, SourceKind.WORKSHOP})
# Curation metadata: how the library files and links a skill, not what the skill says. Changing
# only these never makes a refinement (a bulk retag of agent skills must not fork them).
METADATA_FIELDS = ("tags", "composable_with")


@dataclass(frozen=True)
class StoredEdit:
    skill: Skill  # what the library now holds
    refined_from: str | None = None  # the original's id, when the edit became a refinement
    changed: bool = True  # False when the edit changed nothing and nothing was written


def edit_becomes_refinement(original: Skill) -> bool:
    return original.source_kind in PRESERVED_SOURCES


def save_edit(repository: SkillRepository, original: Skill, edited: Skill, *, message: str = "") -> StoredEdit:
    """Store ``edited``, a person's edit of ``original`` (as read, with its version).

    Raises ConflictError if the stored skill changed since ``original`` was read.
    """
    if replace(edited, version=original.version) == original:
        return StoredEdit(original, changed=False)
    if not edit_becomes_refinement(original) or _only_metadata_changed(original, edited):
        return StoredEdit(repository.update(replace(edited, version=original.version), message=message))
    refinement = replace(
        edited,
        id=new_skill_id(),
        provenance=replace(edited.provenance, source=Source.human_refined(original.id)),
        created_by=repository.actor.id,
        created_at=utc_now(),
        quality=Quality(),  # tentative, no verifications: the body is not the one that was verified
        last_used=None,
        use_count=0,
        review_state=None,
        version=0,
    )
    note = message or f"refined from {original.name!r}"
    stored = repository.create(refinement, message=note, based_on=original)
    return StoredEdit(stored, refined_from=original.id)


def _only_metadata_changed(original: Skill, edited: Skill) -> bool:
    carried = {field: getattr(original, field) for field in METADATA_FIELDS}
    return replace(edited, version=original.version, **carried) == original


def retag(
    repository: SkillRepository, skill_ids: Sequence[str], *, add: Iterable[str] = (), remove: Iterable[str] = ()
) -> list[Skill]:
    """Add and remove tags on many skills in one transaction (tags are metadata: in place)."""
    adding, removing = tuple(dict.fromkeys(add)), set(remove)
    changed = []
    for skill in repository.get_many(skill_ids):  # one read, not one per skill
        tags = tuple(tag for tag in dict.fromkeys((*skill.tags, *adding)) if tag not in removing)
        if tags != skill.tags:
            changed.append(replace(skill, tags=tags))
    if not changed:
        return []
    summary = ", ".join([*(f"+{tag}" for tag in adding), *(f"-{tag}" for tag in sorted(removing))])
    return repository.update_many(changed, message=f"tags {summary}")


def new_skill(repository: SkillRepository, skill: Skill, *, message: str = "") -> Skill:
    """A skill a person wrote from scratch: hand-authored, by them, dated now."""
    authored = replace(
        skill,
        provenance=Provenance(Source.hand_authored(), skill.game_module, skill.provenance.engine_version, None),
        created_by=repository.actor.id,
        created_at=utc_now(),
        quality=Quality(),
        version=0,
    )
    return repository.create(authored, message=message or "new skill")


def revert_to_revision(repository: SkillRepository, skill_id: str, number: int, *, message: str = "") -> Skill:
    """Make the skill's content what revision ``number`` shows, as a new revision.

    Quality, use count and review state stay as they are now: a revert changes what the skill
    says, not the evidence gathered about it.
    """
    target = repository.history.revision(skill_id, number).skill()
    current = repository.get(skill_id)
    return repository.update(
        replace(target, version=current.version), message=message or f"revert to revision {number}"
    )
