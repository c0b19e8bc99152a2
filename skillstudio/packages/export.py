"""Exporting a selection: privacy check first, then the package (or another format) on disk.

Rows other programs wrote are untrusted: a selected row that does not hold a valid skill is left
out of the export and named in :attr:`ExportPreview.skipped` (and told to the ``on_skip``
reporter), so one bad row never stops the rest from being exported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skillstudio.files import write_atomically
from skillstudio.gc_pause import gc_paused
from skillstudio.model import Issue, ReviewState, Skill
from skillstudio.model.naming import SHORT_ID, listed, skill_labels
from skillstudio.packages.errors import PackageError, refuse
from skillstudio.packages.icpkg import PackageMeta, check_meta, export_package, workshop_vdf
from skillstudio.packages.privacy import Finding, redact_skill, scan_skill, split_marked
from skillstudio.packages.signing import SigningKey, load_or_create_key
from skillstudio.store import SkillExtras, SkillRepository
from skillstudio.store.backends.sqlite import sqlite_file_kind

Progress = Callable[[int, int], None]
SkipReporter = Callable[[str, str], None]  # (skill id, reason)


class PrivacyError(PackageError):
    """The selection holds what looks like player data; nothing was written."""

    def __init__(self, findings: Sequence[Finding]) -> None:
        self.findings = tuple(findings)
        issues = [Issue(f"{f.skill_id}: {f.path}", f"{f.kind} {f.text!r}") for f in findings]
        super().__init__(issues, context="privacy check refused the export (use --redact to remove these)")


@dataclass
class ExportPreview:
    skills: list[Skill]
    findings: list[Finding] = field(default_factory=list)
    extras: dict[str, SkillExtras] = field(default_factory=dict)
    # Selected but left out: rejected by a reviewer (issue 8; kept in the library, never exported).
    rejected: list[str] = field(default_factory=list)
    # Selected but left out: (id, reason) for rows that are gone or hold no valid skill.
    skipped: list[tuple[str, str]] = field(default_factory=list)
    # Findings a reviewer marked false positives (``review false-positive``, migration 10): they
    # block no export and are not redacted; shown apart from ``findings``.
    dismissed: list[Finding] = field(default_factory=list)
    # Links (composable_with) from an exported skill to skills not exported, by id, with the
    # names this library knows them by: a library without those skills drops the links.
    links_out: dict[str, list[str]] = field(default_factory=dict)
    partner_names: dict[str, str] = field(default_factory=dict)

    def as_written(self, *, redact: bool) -> list[Skill]:
        """The skills as an export writes them: with ``redact``, each flagged skill with what
        the privacy check found replaced by ``[redacted]`` (findings marked false positives kept)."""
        flagged = {finding.skill_id for finding in self.findings} if redact else set()
        return [redact_skill(skill, keep=self.dismissed) if skill.id in flagged else skill for skill in self.skills]

    def link_warnings(self) -> list[str]:
        """One sentence per exported skill that links to skills left out, naming both."""
        # one naming for both sides: a refinement and its original share a name
        labels = skill_labels({**self.partner_names, **{skill.id: skill.name for skill in self.skills}})
        out = []
        for skill_id, partner_ids in self.links_out.items():
            named = [labels.get(p, f"skill {p[:SHORT_ID]} (not in this library)") for p in partner_ids]
            them = "it" if len(named) == 1 else "them"
            out.append(
                f"{labels[skill_id]} links to {listed(named)}, not in this export: "
                f"a library without {them} drops the link{'s' if len(named) > 1 else ''} on import"
            )
        return out


@gc_paused()
def load_selection(
    repository: SkillRepository,
    ids: Sequence[str],
    progress: Progress | None = None,
    *,
    on_skip: SkipReporter | None = None,
) -> ExportPreview:
    """The selected skills, their extras, and what the privacy check finds in them (findings a
    reviewer marked false positives go to ``dismissed``, not ``findings``).

    Rows that are gone or invalid are skipped, not raised on: each is in ``skipped`` and told to
    ``on_skip`` as it is found.
    """
    report = on_skip
    skills: list[Skill] = []
    findings: list[Finding] = []
    rejected: list[str] = []
    skipped: list[tuple[str, str]] = []
    ids = list(ids)
    for start in range(0, len(ids), 500):
        if progress is not None:
            progress(start, len(ids))
        valid, bad = repository.get_many_valid(ids[start : start + 500])
        skipped.extend(bad)
        if report is not None:
            for skill_id, reason in bad:
                report(skill_id, reason)
        for skill in valid:
            if skill.review_state is ReviewState.REJECTED:
                rejected.append(skill.id)
                continue
            skills.append(skill)
            findings.extend(scan_skill(skill))
    extras = repository.extras.many([skill.id for skill in skills])
    dismissed: list[Finding] = []
    if findings:
        marks = repository.privacy_marks.marked_many(list(dict.fromkeys(f.skill_id for f in findings)))
        findings, dismissed = split_marked(findings, marks)
    exported = {skill.id for skill in skills}
    links_out = {
        skill.id: outside
        for skill in skills
        if (outside := [partner for partner in skill.composable_with if partner not in exported])
    }
    partners = sorted({partner for outside in links_out.values() for partner in outside})
    partner_names = {summary.id: summary.name for summary in repository.summaries(partners)}
    if progress is not None:
        progress(len(ids), len(ids))
    return ExportPreview(skills, findings, extras, rejected, skipped, dismissed, links_out, partner_names)


def refuse_replacing(out: str | Path, *, folder: bool = False) -> None:
    """PackageError if writing an export at ``out`` would replace what is not an export: a
    SQLite database (the library itself, or another one: ``export -o library.db`` once
    overwrote the library with a package), a folder when a file is written (``folder``
    False), or a file when a folder of SKILL.md skills is. An earlier export is replaced."""
    path = Path(out)
    if not path.exists():
        return
    if folder:
        if not path.is_dir():
            raise refuse(str(path), "is a file; a SKILL.md export writes a folder")
        return
    if path.is_dir():
        raise refuse(str(path), "is a folder; this export writes a file")
    try:
        kind = sqlite_file_kind(path)
    except OSError as error:
        raise refuse(str(path), f"cannot be read ({error.strerror or error})") from None
    if kind == "database":
        raise refuse(str(path), "is a SQLite database (a library?); an export never replaces one: choose another name")
    if kind is not None:  # a library's -wal file: its newest transactions
        raise refuse(str(path), f"is a SQLite {kind}; an export never replaces one")


@gc_paused()
def export_selection(
    preview: ExportPreview,
    meta: PackageMeta,
    out: str | Path,
    *,
    redact: bool = False,
    readme: str | None = None,
    vdf: bool = False,
    sign: bool = True,
    signing_key: SigningKey | None = None,
) -> list[Skill]:
    """Write the package; refuse (PrivacyError) if the check found anything and ``redact`` is
    off. Returns the skills as written (redacted ones changed). The manifest is signed with
    ``signing_key``, by default the publisher's key (made on first use, ``signing``); ``sign=False``
    writes an unsigned package."""
    if preview.findings and not redact:
        raise PrivacyError(preview.findings)
    check_meta(meta)
    refuse_replacing(out)
    if sign and signing_key is None:
        signing_key = load_or_create_key(meta.publisher)
    skills = preview.as_written(redact=True)
    data = export_package(skills, meta, readme=readme, extras=preview.extras, signing_key=signing_key if sign else None)
    path = Path(out)
    write_atomically(path, data)
    if vdf:
        text = workshop_vdf(meta, str(path.resolve().parent))
        write_atomically(path.with_suffix(".vdf"), text.encode("utf-8"))
    return skills


__all__ = [
    "ExportPreview",
    "PrivacyError",
    "export_selection",
    "load_selection",
    "refuse_replacing",
]
