"""What the CLI prints: the stable ``--json`` documents (docs/cli.md) and terminal tables."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from skillstudio.model import Issue, Skill, Source, SourceKind, skill_to_document
from skillstudio.model.evidence import VerificationRecord, record_to_document
from skillstudio.store import LibraryStats, Revision, SkillSummary
from skillstudio.verification.explain import evidence_text
from skillstudio.verification.standing import Standing

JSON_VERSION = 1


def dump_json(document: dict[str, Any]) -> str:
    return json.dumps(document, ensure_ascii=False, indent=2, sort_keys=False)


def issues_document(issues: Sequence[Issue]) -> list[dict[str, str]]:
    return [{"path": issue.path, "message": issue.message} for issue in issues]


def summary_document(summary: SkillSummary, standing: Standing | None = None) -> dict[str, Any]:
    """One listed skill. A column holding a value of the wrong type or range (another program
    wrote the row) is null here, and ``invalid`` lists each such field path with the reason;
    the key is present only then, so valid rows keep the documented shape. ``contradicted``
    says whether the credited evidence contradicts the tier (null when it does not, or when
    the row holds no valid skill)."""
    document: dict[str, Any] = {
        "id": summary.id,
        "name": summary.name,
        "domain": summary.domain,
        "game_module": summary.game_module,
        "confidence": summary.confidence,
        "success_rate": summary.success_rate,
        "verification_count": summary.verification_count,
        "average_rating": summary.average_rating,
        "use_count": summary.use_count,
        "source": summary.source,
        "created_by": summary.created_by,
        "created_at": summary.created_at,
        "last_verified": summary.last_verified,
        "last_used": summary.last_used,
        "tags": list(summary.tags),
        "review_state": summary.review_state,
        "contradicted": _contradicted(standing),
    }
    if summary.issues:
        document["invalid"] = issues_document(summary.issues)
    return document


def list_document(
    summaries: Sequence[SkillSummary], total: int, standings: Mapping[str, Standing] | None = None
) -> dict[str, Any]:
    found = standings or {}
    return {
        "format": "skillstudio.skill-list",
        "version": JSON_VERSION,
        "total": total,
        "count": len(summaries),
        "skills": [summary_document(summary, found.get(summary.id)) for summary in summaries],
    }


def _contradicted(standing: Standing | None) -> dict[str, object] | None:
    return None if standing is None or standing.contradiction is None else standing.contradiction.as_document()


class SkillDetails(TypedDict):
    """What ``show`` and ``review show`` report beside the skill itself."""

    refinements: Sequence[str]
    revisions: Sequence[Revision]
    verifications: Sequence[VerificationRecord]


def skill_document(
    skill: Skill,
    *,
    refinements: Sequence[str],
    revisions: Sequence[Revision],
    verifications: Sequence[VerificationRecord],
    standing: Standing | None = None,
) -> dict[str, Any]:
    return {
        "format": "skillstudio.skill",
        "version": JSON_VERSION,
        "skill": skill_to_document(skill),
        "refined_by": list(refinements),
        "revision_count": len(revisions),
        "verifications": [record_to_document(record) for record in verifications],
        "evidence": None if standing is None else standing.evidence_document(),
        "contradicted": _contradicted(standing),
    }


def invalid_skill_document(
    skill_id: str, issues: Sequence[Issue], summary: SkillSummary | None = None
) -> dict[str, Any]:
    """``show --json`` of a row that does not hold a valid skill: what could be read, and why not."""
    return {
        "format": "skillstudio.invalid-skill",
        "version": JSON_VERSION,
        "id": skill_id,
        "name": summary.name if summary is not None and "name" not in summary.invalid else None,
        "valid": False,
        "issues": issues_document(issues),
        "row": summary_document(summary) if summary is not None else None,
    }


def invalid_skill_text(skill_id: str, issues: Sequence[Issue], summary: SkillSummary | None = None) -> str:
    name = f" ({summary.name})" if summary is not None and "name" not in summary.invalid else ""
    problems = "problem" if len(issues) == 1 else "problems"
    lines = [f"skill {skill_id!r}{name} in the library is not valid ({len(issues)} {problems}):"]
    lines += [f"  {issue}" for issue in issues]
    return "\n".join(lines)


def stats_document(stats: LibraryStats, path: str) -> dict[str, Any]:
    return {
        "format": "skillstudio.stats",
        "version": JSON_VERSION,
        "library": path,
        "total": stats.total,
        "in_trash": stats.in_trash,
        "by_domain": stats.by_domain,
        "by_confidence": stats.by_confidence,
        "by_game_module": stats.by_game_module,
        "by_source": stats.by_source,
    }


# --- terminal -----------------------------------------------------------------------------------


def _rate(value: float | None, invalid: bool = False) -> str:
    return "?" if invalid else "-" if value is None else f"{value * 100:.0f}%"


def _count(value: int | None, invalid: bool = False) -> str:
    return "?" if invalid else "-" if value is None else str(value)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 1)] + "…"


def summary_table(
    summaries: Sequence[SkillSummary], total: int, standings: Mapping[str, Standing] | None = None
) -> str:
    width = shutil.get_terminal_size((120, 24)).columns
    name_width = max(20, min(48, width - 78))
    header = (
        f"{'ID':<8}  {'NAME':<{name_width}}  {'DOMAIN':<7}  {'MODULE':<6}  {'CONFIDENCE':<12}  "
        f"{'RATE':>4}  {'N':>5}  SOURCE"
    )
    lines = [header]
    invalid_rows = contradicted = 0
    found = standings or {}
    for s in summaries:
        bad = set(s.invalid)
        invalid_rows += bool(bad)
        flagged = s.id in found and found[s.id].contradicted
        contradicted += flagged
        tier = s.confidence + ("!" if flagged else "")
        domain = {"ai_strategy": "ai", "content_generation": "content"}.get(s.domain, s.domain)
        lines.append(
            f"{s.id[:8]:<8}  {_cut(s.name, name_width):<{name_width}}  {_cut(domain, 7):<7}  "
            f"{_cut(s.game_module, 6):<6}  {_cut(tier, 12):<12}  "
            f"{_rate(s.success_rate, 'success_rate' in bad):>4}  "
            f"{_count(s.verification_count, 'verification_count' in bad):>5}  {s.source}"
            + ("  (invalid: " + ", ".join(dict.fromkeys(s.invalid)) + ")" if bad else "")
        )
    lines.append(f"{len(summaries)} of {total} matching skills" if len(summaries) != total else f"{total} skills")
    if invalid_rows:
        lines.append(f"{invalid_rows} with invalid values shown as ?; `skillstudio show ID` names the problems")
    if contradicted:
        lines.append(
            f"{contradicted} tier{'s' if contradicted != 1 else ''} (!) contradicted by the credited evidence; "
            "`skillstudio show ID` says why and what would settle it"
        )
    return "\n".join(lines)


def skill_text(
    skill: Skill,
    *,
    refinements: Sequence[str],
    revisions: Sequence[Revision],
    verifications: Sequence[VerificationRecord],
    standing: Standing | None = None,
) -> str:
    import yaml

    quality = skill.quality
    source = skill.provenance.source
    lines = [
        f"{skill.name}",
        f"  id            {skill.id}",
        f"  domain        {skill.domain.value}    module {skill.game_module}    body {skill.body_kind.value}",
        f"  confidence    {quality.confidence.value}    success {_rate(quality.success_rate)} over "
        f"{quality.verification_count} verifications"
        + (f"    rating {quality.average_rating:.2f}" if quality.average_rating is not None else ""),
        f"  source        {source.kind.value}{source_details(source)}",
        f"  created       {skill.created_at} by {skill.created_by}"
        + (f" with {skill.provenance.model_id}" if skill.provenance.model_id else ""),
        f"  engine        {skill.provenance.engine_version or '-'}    used {skill.use_count} times"
        + (f", last {skill.last_used}" if skill.last_used else ""),
        f"  tags          {', '.join(skill.tags) if skill.tags else '(untagged)'}",
    ]
    if standing is not None:
        lines.append(f"  evidence      {evidence_text(standing)}")
        if standing.contradiction is not None:
            flag = standing.contradiction
            lines.append(f"  CONTRADICTED  {flag.reason}")
            lines.append(f"  to settle     {flag.advice}")
    if skill.review_state:
        lines.append(f"  review        {skill.review_state.value}")
    if skill.composable_with:
        lines.append(f"  composes with {', '.join(skill.composable_with)}")
    if refinements:
        lines.append(f"  refined by    {', '.join(refinements)}")
    lines.append(f"  revisions     {len(revisions)}")
    lines += ["", skill.description, ""]
    if verifications:
        lines.append("Verification history:")
        for record in verifications:
            against = f" vs {record.opponent}" if record.opponent else ""
            rating = f", rating {record.rating:.2f} ({record.rated})" if record.rating is not None else ""
            errors = f", {record.errors} errors" if record.errors else ""
            lines.append(
                f"  {record.recorded_at[:10]}  {record.kind.value:<8} {record.wins}W {record.losses}L "
                f"{record.draws}D{errors}{rating}{against}  [{record.engine_version or '-'}]"
            )
        lines.append("")
    lines.append("Body:")
    body = skill_to_document(skill)["body"]
    lines.append(yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=100).rstrip())
    return "\n".join(lines)


def source_details(source: Source) -> str:
    """A Workshop package and author, or a refinement's original; "unknown" where an engine's
    row (D057 has no column for them) left them out, never a made-up value."""
    if source.kind is SourceKind.WORKSHOP:
        return f" ({source.source_id or 'package unknown'} by {source.author or 'unknown author'})"
    if source.kind is SourceKind.HUMAN_REFINED:
        return f" (refines {source.original_id or 'an unknown original'})"
    return ""


def stats_text(stats: LibraryStats, path: str) -> str:
    lines = [f"Library {path}", f"  {stats.total} skills, {stats.in_trash} in the trash"]
    for title, counts in (
        ("domain", stats.by_domain),
        ("confidence", stats.by_confidence),
        ("game module", stats.by_game_module),
        ("source", stats.by_source),
    ):
        parts = ", ".join(f"{key} {count}" for key, count in sorted(counts.items()))
        lines.append(f"  by {title + ':':<13}{parts or '-'}")
    return "\n".join(lines)
