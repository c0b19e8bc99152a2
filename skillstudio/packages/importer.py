"""Planning and applying an import: validate everything first, then one transaction.

Policy (docs/packages.md), for a skill whose id is already in the library:

* same content (everything but quality figures, use count and last use) -> **skipped**
  (so importing the same package twice adds nothing);
* different content, and the stored skill came from the same origin (the same package at any
  version, or the same folder/file) -> **updated** (quality figures included, except for a
  package: see "Claimed quality" below);
* different content from another origin -> **conflict**: reported and skipped (``--merge``) or
  **updated** (``--replace``);
* the id is in the trash -> skipped: restore it or empty the trash first.

Creation times are not content: an updated skill keeps the ``created_at`` it was stored with.
An input that names no author (``Incoming.attributed``) is recorded as created by the person
importing it; a skill already stored keeps its creator.
Nor is the package version: a skill a newer version of its package re-states unchanged is
skipped and keeps the ``source_id`` of the version that brought it.

``--replace`` also moves to the trash the skills an earlier version of the same package brought
that this version no longer has. ``composable_with`` partners that are neither in the import nor
in the library are dropped with a warning naming the skills (D057's foreign keys would refuse them).

Content is compared normalised: ``composable_with`` as a set, after the store's symmetric
closure (a link one skill of the package states is a link of both), and leaving out links to
skills outside the package that the library made itself (those are kept on update). So
importing the same package again changes nothing, and review decisions stay.

Claimed quality (docs/packages.md): a package's quality figures (tier, verification count,
success rate, rating) are the package's claim, not this library's evidence. A new skill from a
package is stored ``tentative`` with no verifications, and the claim is kept in its import
extras (``frontmatter["claimed_quality"]``, with the package it came from); an update keeps
the stored quality. Only this library's own verifications promote or demote it. The same holds
for an engine's figures (``skillstudio pull``, origin ``engine:``; docs/team-library.md).

Package identity (``publisher/name``, docs/packages.md "Package identity and trust"): the
library remembers the key that first brought a signed identity; a package of that identity
signed by another key, or unsigned, is refused (:class:`signing.UntrustedPackage`) unless the
user trusts its key (``trust_key``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Literal

from skillstudio.gc_pause import gc_paused
from skillstudio.model import Quality, Skill, Source, SourceKind, skill_to_document
from skillstudio.model.claims import CLAIMED_QUALITY
from skillstudio.model.naming import SHORT_ID, listed, skill_labels
from skillstudio.packages.icpkg import Package
from skillstudio.packages.signing import Signer, check_trust, known_key
from skillstudio.store import ImportItem, LibraryError, SkillExtras, SkillRepository
from skillstudio.store.imports import content_key, present_ids, stored_content_keys

Mode = Literal["merge", "replace"]
Action = Literal["add", "update", "skip", "conflict", "trash"]


@dataclass(frozen=True)
class Incoming:
    """One skill read from outside, validated, with where it came from in the input."""

    entry: str  # skills/x.json, my-skill/SKILL.md, skills.json:foo ...
    skill: Skill
    extras: SkillExtras
    warnings: tuple[str, ...] = ()
    history: tuple[Skill, ...] = ()  # earlier versions, oldest first (becomes revision history)
    signer: Signer | None = None  # the verified key of the package it came in (None: unsigned)
    # False: the input names no author (a SKILL.md without one, a JSON or Voyager library); the
    # import then records the person importing it as the creator (plan_import).
    attributed: bool = True


@dataclass(frozen=True)
class PlannedSkill:
    action: Action
    skill_id: str
    name: str
    entry: str
    reason: str = ""

    def __str__(self) -> str:
        reason = f" ({self.reason})" if self.reason else ""
        return f"{self.action:8} {self.name} [{self.skill_id}] {self.entry}{reason}"

    def to_json(self) -> dict[str, str]:
        """The step as ``--json`` prints it (import and pull)."""
        return {
            "action": self.action,
            "id": self.skill_id,
            "name": self.name,
            "entry": self.entry,
            "reason": self.reason,
        }


@dataclass
class ImportPlan:
    source: str  # what was read, for messages
    origin: str  # workshop:publisher/name@version, skill-md:<folder>, ...
    mode: Mode
    steps: list[PlannedSkill] = field(default_factory=list)
    added: list[ImportItem] = field(default_factory=list)
    replaced: list[ImportItem] = field(default_factory=list)
    trashed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    identity: str = ""  # publisher/name of a package import
    signer: Signer | None = None
    key_action: Literal["keep", "record", "replace"] = "keep"  # what to remember of the signer

    def count(self, action: str) -> int:
        return sum(1 for step in self.steps if step.action == action)

    @property
    def changes(self) -> int:
        return len(self.added) + len(self.replaced) + len(self.trashed)

    def summary(self) -> str:
        return (
            f"{self.count('add')} added, {self.count('update')} updated, {self.count('skip')} skipped, "
            f"{self.count('conflict')} conflicts, {self.count('trash')} trashed"
        )


# Origins whose quality figures are a claim, never this library's evidence: a Workshop package,
# and an engine's gameplay.db brought in by ``skillstudio pull`` (packages/gameplay_db.py).
CLAIMING_ORIGINS = ("workshop:", "engine:")


def claims_quality(origin: str) -> bool:
    return origin.startswith(CLAIMING_ORIGINS)


def origin_family(origin: str) -> str:
    """The origin without its version: every version of a package is the same origin."""
    return origin.rsplit("@", 1)[0] if origin.startswith("workshop:") else origin


@gc_paused()
def incoming_from_package(package: Package) -> tuple[list[Incoming], str]:
    """Package skills with provenance rewritten: ``workshop {publisher/name@version, publisher}``.

    A skill that already is a workshop skill keeps its source: re-sharing a package must not
    take its original author's credit."""
    meta = package.meta
    origin = f"workshop:{meta.package_id}"
    out = []
    source = Source.workshop(meta.package_id, meta.publisher)
    for packaged in package.skills:
        skill = packaged.skill
        base = packaged.extras or SkillExtras()
        claim = _quality_claim(skill.quality, origin)
        # one replace per object: dataclasses.replace reads every field (0.1 s per 10,000 skills each)
        changes: dict[str, Any] = {"review_state": None, "version": 0}
        if skill.source_kind is not SourceKind.WORKSHOP:
            changes["provenance"] = replace(skill.provenance, source=source)
        if claim is not None:
            changes["quality"] = Quality()
        skill = replace(skill, **changes)
        warnings = tuple(f"{note.path}: {note.message}" for note in packaged.notes)
        frontmatter = base.frontmatter if claim is None else {**base.frontmatter, CLAIMED_QUALITY: claim}
        extras = replace(base, origin=origin, warnings=tuple(base.warnings) + warnings, frontmatter=frontmatter)
        out.append(Incoming(packaged.entry, skill, extras, warnings, signer=package.signer))
    return out, origin


def claim_quality(skill: Skill, extras: SkillExtras, origin: str) -> tuple[Skill, SkillExtras]:
    """The skill with no quality of its own (tentative, no verifications), its package's figures
    moved to ``extras.frontmatter["claimed_quality"]``. A skill that claims nothing keeps any
    claim its extras already carry (a re-shared package passes the first claim on)."""
    claim = _quality_claim(skill.quality, origin)
    if claim is None:
        return skill, extras
    frontmatter = {**extras.frontmatter, CLAIMED_QUALITY: claim}
    return replace(skill, quality=Quality()), replace(extras, frontmatter=frontmatter)


def _quality_claim(quality: Quality, origin: str) -> dict[str, Any] | None:
    """What ``claimed_quality`` records of these figures; None for no figures (nothing claimed)."""
    if quality == Quality():
        return None
    return {
        "by": origin.removeprefix("workshop:"),
        "confidence": quality.confidence.value,
        "verification_count": quality.verification_count,
        "success_rate": quality.success_rate,
        "average_rating": quality.average_rating,
        "last_verified": quality.last_verified,
    }


def _content(skill: Skill, partners: set[str] | None = None) -> dict[str, Any]:
    """What an import compares: no quality figures, use, creation time, library-local fields
    (review state, version), nor package version; ``partners`` (composable_with) as a set."""
    document = skill_to_document(skill, local=False)
    for key in ("quality", "use_count", "last_used", "created_at"):
        document.pop(key, None)
    document["composable_with"] = sorted(set(skill.composable_with) if partners is None else partners)
    source_id = document["provenance"].get("source_id")
    if source_id:  # a new version of a package re-stating a skill does not change it
        document["provenance"]["source_id"] = source_id.rsplit("@", 1)[0]
    return document


_FROM_INCOMING: Any = object()


def _planned(skill: Skill, entry: str, action: Action, reason: str = "") -> PlannedSkill:
    return PlannedSkill(action, skill.id, skill.name, entry, reason)


@gc_paused()
def plan_import(
    repository: SkillRepository,
    incoming: Sequence[Incoming],
    *,
    origin: str,
    source: str,
    mode: Mode = "merge",
    signer: Signer | None = _FROM_INCOMING,
    trust_key: str | None = None,
) -> ImportPlan:
    """Decide, without writing, what an import would do (``--dry-run`` prints this).

    A package import (``workshop:`` origin) is first checked against the key the library
    remembers for its identity: ``signer`` is the package's verified key (default: the one the
    incoming skills carry), ``trust_key`` a fingerprint the user trusts. Raises
    ``UntrustedPackage`` (a PackageError) naming both fingerprints when refused."""
    plan = ImportPlan(source=source, origin=origin, mode=mode)
    if origin.startswith("workshop:"):
        if signer is _FROM_INCOMING:
            signer = next((item.signer for item in incoming), None)
        plan.identity = origin_family(origin)[len("workshop:") :]
        plan.signer = signer
        plan.key_action = check_trust(known_key(repository, plan.identity), plan.identity, signer, trust_key)
        if signer is None:
            plan.warnings.append(f"{plan.identity}: the package is unsigned: who made it cannot be checked")
    ids = [item.skill.id for item in incoming]
    present = present_ids(repository.database, ids)
    in_trash = {entry.skill_id for entry in repository.trash.entries()} if len(present) < len(ids) else set()
    family = origin_family(origin)
    stale: list[str] = []
    if mode == "replace" and origin.startswith("workshop:"):
        wanted = set(ids)
        stale = [skill_id for skill_id in repository.extras.ids_with_origin(family + "@") if skill_id not in wanted]
    # partners: what will exist after the import
    after = (present | {i for i in ids if i not in in_trash}) - set(stale)
    missing_partners = sorted({p for item in incoming for p in item.skill.composable_with} - after)
    if missing_partners:
        found = {summary.id for summary in repository.summaries(missing_partners)}
        after |= found - set(stale)
    incoming_ids = set(ids)
    # The store's compositions are symmetric: a link one skill states is a link of both.
    linked_from: dict[str, set[str]] = {}
    for item in incoming:
        if item.skill.id in after:
            for partner in item.skill.composable_with:
                if partner in after:
                    linked_from.setdefault(partner, set()).add(item.skill.id)
    unchanged = _unchanged_by_key(repository, incoming, present, after, linked_from)
    stored = _stored_skills(repository, sorted(present - unchanged))
    # where a changed stored skill came from decides update or conflict; unchanged ones are skipped
    existing_extras = repository.extras.many(sorted(present - unchanged))
    dangling = {partner for item in incoming for partner in item.skill.composable_with if partner not in after}
    labels, where = _dangling_names(repository, incoming, dangling) if dangling else ({}, {})
    for item in incoming:
        skill = item.skill
        if not item.attributed:  # whoever brought it is its creator; a stored skill keeps its own
            known = stored.get(skill.id)
            skill = replace(skill, created_by=known.created_by if known else repository.actor.id)
        dropped = [partner for partner in skill.composable_with if partner not in after]
        extras = item.extras
        if dropped:
            skill = replace(skill, composable_with=tuple(p for p in skill.composable_with if p in after))
            warning = _dropped_links(dropped, labels, where)
            extras = replace(extras, warnings=(*extras.warnings, warning))
            plan.warnings.append(f"{labels[skill.id]}: {warning}")
        closure = _closure(skill.id, skill.composable_with, linked_from)
        plan.warnings.extend(w if w.startswith(f"{item.entry}:") else f"{item.entry}: {w}" for w in item.warnings)
        step = partial(_planned, skill, item.entry)
        if skill.id not in present:
            if skill.id in in_trash:
                plan.steps.append(step("skip", "in the trash: restore it or empty the trash first"))
            else:
                plan.steps.append(step("add"))
                history = tuple(replace(old, created_by=skill.created_by) for old in item.history)
                plan.added.append(ImportItem(skill, extras, history=history))
            continue
        if skill.id in unchanged:
            plan.steps.append(step("skip", "unchanged"))
            continue
        current = stored.get(skill.id)
        if current is None:
            plan.steps.append(step("conflict", "the stored skill is not valid (written outside SkillStudio); kept"))
            continue
        stored_partners = set(current.composable_with)
        # links the library made to skills outside the package are not the package's content
        local = {p for p in stored_partners if p not in incoming_ids and p not in closure}
        if _content(current, stored_partners - local) == _content(skill, closure):
            plan.steps.append(step("skip", "unchanged"))
            continue
        stored_origin = existing_extras.get(skill.id, SkillExtras()).origin
        same = bool(stored_origin) and origin_family(stored_origin) == family
        if same or mode == "replace":
            reason = (
                "newer from the same origin"
                if same
                else f"replaces the stored skill from {stored_origin or 'this library'}"
            )
            plan.steps.append(step("update", reason))
            kept = replace(
                skill,
                version=current.version,
                created_at=current.created_at,
                composable_with=tuple(sorted(closure | local)),
            )
            if claims_quality(origin):  # a package's or an engine's figures are a claim: keep our own
                kept = replace(kept, quality=current.quality)
            plan.replaced.append(ImportItem(kept, extras))
        else:
            plan.steps.append(
                step("conflict", f"id exists with other content from {stored_origin or 'this library'}; kept")
            )
    names = {summary.id: summary.name for summary in repository.summaries(stale)}
    for skill_id in stale:
        plan.steps.append(
            PlannedSkill("trash", skill_id, names.get(skill_id, skill_id), "", "no longer in this package")
        )
        plan.trashed.append(skill_id)
    return plan


def _closure(skill_id: str, partners: Sequence[str], linked_from: dict[str, set[str]]) -> set[str]:
    """The skill's partners after the import: those it states and those that state it."""
    return (set(partners) | linked_from.get(skill_id, set())) - {skill_id}


def _unchanged_by_key(
    repository: SkillRepository,
    incoming: Sequence[Incoming],
    present: set[str],
    after: set[str],
    linked_from: dict[str, set[str]],
) -> set[str]:
    """The stored skills an import would skip as unchanged, known without reading them: the
    stored columns it compares equal the incoming skill's as the store would write them, and
    the stored links equal the links after the import, but the library's own links to skills
    outside the import. The rest are compared in full (``_content``); an unattributed input's
    creator depends on the stored skill, so it is always compared in full."""
    candidates = [item.skill for item in incoming if item.attributed and item.skill.id in present]
    stored = stored_content_keys(repository.database, [skill.id for skill in candidates])
    incoming_ids = {item.skill.id for item in incoming}
    out: set[str] = set()
    for skill in candidates:
        known = stored.get(skill.id)
        if known is None:
            continue
        key, stored_partners = known
        closure = _closure(skill.id, [p for p in skill.composable_with if p in after], linked_from)
        local = {p for p in stored_partners if p not in incoming_ids and p not in closure}
        if stored_partners - local == closure and key == content_key(skill):
            out.add(skill.id)
    return out


def _dangling_names(
    repository: SkillRepository, incoming: Sequence[Incoming], dangling: set[str]
) -> tuple[dict[str, str], dict[str, str]]:
    """How the warnings about links to ``dangling`` skills name them: labels of the incoming
    skills and of the dangling ones this library knows, and where each known one is."""
    names = {entry.skill_id: entry.name for entry in repository.trash.entries() if entry.skill_id in dangling}
    where = dict.fromkeys(names, "in this library's trash")
    for summary in repository.summaries(sorted(dangling)):  # in the library, trashed by this import
        names[summary.id] = summary.name
        where[summary.id] = "moved to the trash by this import"
    names.update((item.skill.id, item.skill.name) for item in incoming)
    return skill_labels(names), where


def _dropped_links(dropped: Sequence[str], labels: dict[str, str], where: dict[str, str]) -> str:
    """The warning of a skill whose links to ``dropped`` are not imported (D057's foreign keys
    would refuse a link to a skill the library does not hold)."""
    named = [
        f"{labels[partner]} ({where[partner]})"
        if partner in where
        else f"skill {partner[:SHORT_ID]} (in neither the import nor this library)"
        for partner in dropped
    ]
    many = len(named) > 1
    return f"its link{'s' if many else ''} to {listed(named)} {'were' if many else 'was'} dropped"


def _stored_skills(repository: SkillRepository, ids: list[str]) -> dict[str, Skill]:
    """The stored skills by id; one that does not validate is left out (and so not touched)."""
    out: dict[str, Skill] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        try:
            out.update((skill.id, skill) for skill in repository.get_many(chunk))
        except LibraryError:
            for skill_id in chunk:
                try:
                    out[skill_id] = repository.get(skill_id)
                except LibraryError:
                    continue
    return out


@gc_paused()
def apply_plan(repository: SkillRepository, plan: ImportPlan) -> ImportPlan:
    """Write the plan in one transaction; on any error the library is left as it was."""
    package_key = None
    if plan.key_action != "keep" and plan.signer is not None:
        package_key = (plan.identity, plan.signer.fingerprint, plan.signer.public_key_b64, plan.key_action == "replace")
    if plan.changes or package_key is not None:
        repository.import_skills(
            plan.added, plan.replaced, plan.trashed, message=f"import from {plan.origin}", package_key=package_key
        )
    return plan


__all__ = [
    "CLAIMED_QUALITY",
    "ImportPlan",
    "Incoming",
    "PlannedSkill",
    "apply_plan",
    "claim_quality",
    "claims_quality",
    "incoming_from_package",
    "origin_family",
    "plan_import",
]
