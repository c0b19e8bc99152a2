"""``skillstudio review``, ``audit`` and ``mcp``: reviewing without a screen, and the agent server.

Registered by :mod:`skillstudio.cli.main` (``add_commands``), like the verification commands.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from skillstudio.cli import output
from skillstudio.cli.arguments import MANY, iso_time, whole_number
from skillstudio.model import ReviewState, SourceKind
from skillstudio.review import change_since_approved, findings_for, pending_queue
from skillstudio.review.audit import AUDIT_COLUMNS, audit_csv, audit_sentence, named_ids
from skillstudio.review.linter import findings_document
from skillstudio.store import ConflictError, Database, ReviewNotAllowed, ReviewRefused, SkillRepository

Handler = Callable[[argparse.Namespace, Database], int]
EXIT_OK, EXIT_FAILED = 0, 1


def add_commands(
    commands: Any, common: argparse.ArgumentParser, as_json: argparse.ArgumentParser
) -> dict[str, Handler]:
    review = commands.add_parser("review", parents=[common], help="the review queue: list, show, approve, reject")
    verbs = review.add_subparsers(dest="review_command", metavar="VERB", required=True)
    listing = verbs.add_parser("list", parents=[common, as_json], help="pending skills, newest change first")
    listing.add_argument("--created-by", metavar="WHO", action="append", help="only this creator (repeatable)")
    listing.add_argument("--source", type=SourceKind.parse, action="append", help=SourceKind.choices())
    show = verbs.add_parser(
        "show", parents=[common, as_json], help="a skill with its risk findings and change since approval"
    )
    show.add_argument("skill_id", metavar="ID")
    show.add_argument("--relint", action="store_true", help="run the risk linter again")
    for verb, help_text in (
        ("approve", "approve a skill"),
        ("reject", "reject a skill (kept, never exported or served)"),
        ("request-changes", "ask for changes"),
    ):
        decide = verbs.add_parser(verb, parents=[common, as_json], help=help_text)
        decide.add_argument("skill_id", metavar="ID")
        decide.add_argument("--comment", "-m", default="", metavar="TEXT", help="why (recorded with the decision)")
        decide.add_argument(
            "--version",
            type=whole_number("--version", 1, 2**62),
            metavar="N",
            help="the content version you reviewed (as `review show` prints it); default: the version shown now",
        )

    undo = verbs.add_parser(
        "undo", parents=[common, as_json], help="take back your newest decision on a skill (audited)"
    )
    undo.add_argument("skill_id", metavar="ID")

    false_positive = verbs.add_parser(
        "false-positive",
        parents=[common, as_json],
        help="mark one export privacy finding of a skill a false positive (it then blocks no export)",
    )
    false_positive.add_argument("skill_id", metavar="ID")
    false_positive.add_argument(
        "--finding",
        type=whole_number("--finding", 1, MANY),
        metavar="N",
        help="the finding's number, as `review show` lists privacy findings (1 is the first)",
    )
    false_positive.add_argument("--note", default="", metavar="TEXT", help="why it is not private data (audited)")
    false_positive.add_argument("--undo", action="store_true", help="take the mark back")

    audit = commands.add_parser("audit", parents=[common, as_json], help="the audit log, newest first")
    audit.add_argument("--actor", metavar="A", help="only this actor (user or agent id)")
    audit.add_argument("--action", metavar="ACTION", help="only this action, e.g. skill.review")
    audit.add_argument("--skill", metavar="ID", help="only this skill (id or unique prefix)")
    audit.add_argument(
        "--since",
        type=iso_time("--since"),
        metavar="T",
        help="from this time (ISO 8601, e.g. 2026-05-01 or 2026-05-01T10:00Z)",
    )
    audit.add_argument("--until", type=iso_time("--until", end_of_day=True), metavar="T", help="up to this time")
    audit.add_argument("--limit", type=whole_number("--limit", 1, MANY), metavar="N", help="at most N entries")
    audit.add_argument("--csv", action="store_true", help="CSV on stdout")

    mcp = commands.add_parser("mcp", parents=[common], help="serve the skill tool to an agent over MCP stdio")
    from skillstudio.agents.mcp_server import add_arguments

    add_arguments(mcp)
    return {"review": _review, "audit": _audit, "mcp": _mcp}


def _review(args: argparse.Namespace, database: Database) -> int:
    repository = SkillRepository(database)
    verb = args.review_command
    if verb == "list":
        items = pending_queue(repository, created_by=args.created_by or (), sources=args.source or ())
        risks = repository.findings.many([item.summary.id for item in items])
        if args.json:
            document = {
                "total": len(items),
                "skills": [
                    {
                        **output.summary_document(item.summary),
                        "changed_at": item.changed_at,
                        "risk_findings": len(risks.get(item.summary.id, [])),
                    }
                    for item in items
                ],
            }
            print(output.dump_json(document))
        else:
            for item in items:
                s = item.summary
                risk = risks.get(s.id, [])
                worst = max((f.severity for f in risk), key=_severity_rank, default="-")
                print(
                    f"{s.id[:8]}  {item.changed_at[:16]}  {s.created_by[:18]:18}  {s.source:14}  risk {len(risk)} ({worst:6})  {s.name}"
                )
            print(f"{len(items)} pending")
        return EXIT_OK
    skill_id = repository.resolve_id(args.skill_id)
    if verb == "false-positive":
        return _false_positive(args, repository, skill_id)
    if verb == "undo":
        return _undo(args, repository, skill_id)
    if verb == "show":
        change = change_since_approved(repository, skill_id)
        findings = findings_for(repository, change.current, relint=args.relint)
        decisions = repository.reviews.decisions(skill_id)
        details: output.SkillDetails = {
            "refinements": repository.refinements_of(skill_id),
            "revisions": repository.history.revisions(skill_id),
            "verifications": repository.evidence.verifications(skill_id),
        }
        if args.json:
            document = output.skill_document(change.current, **details)
            document.update(
                risk_findings=findings_document(findings),
                approved_revision=change.approved_revision,
                diff_since_approved=change.diff,
                decisions=[d.__dict__ for d in decisions],
                content_version=change.current.version,  # what `review approve --version` takes
                privacy_findings=[
                    {"number": n, "field": f.path, "kind": f.kind, "text": f.text, "false_positive": marked}
                    for n, (f, marked) in enumerate(_privacy_findings(repository, change.current), 1)
                ],
            )
            print(output.dump_json(document))
            return EXIT_OK
        print(output.skill_text(change.current, **details))
        print(
            f"\nContent version: {change.current.version}  (decide on it: review approve {skill_id[:8]} --version {change.current.version})"
        )
        print("\nRisk findings:" if findings else "\nRisk findings: none")
        for f in findings:
            print(f"  [{f.severity}] {f.rule}: {f.reason}  ({f.field} {f.start}-{f.end}) {f.excerpt!r}")
        privacy = _privacy_findings(repository, change.current)
        print("\nExport privacy findings:" if privacy else "\nExport privacy findings: none")
        _print_privacy(privacy)
        if decisions:
            print("\nReview decisions:")
            for d in decisions:
                print(f"  {d.at}  {d.state:17}  {d.reviewer}  {d.comment}")
        if change.approved is None:
            print("\nNever approved: the whole skill is new to review.")
        elif change.diff:
            print(f"\nChange since the last approval (revision {change.approved_revision}):\n{change.diff}")
        else:
            print("\nNo content change since the last approval.")
        return EXIT_OK
    state = {
        "approve": ReviewState.APPROVED,
        "reject": ReviewState.REJECTED,
        "request-changes": ReviewState.CHANGES_REQUESTED,
    }[verb]
    # The decision is on a content version: the one given, or the one read and shown here.
    shown = repository.get(skill_id)
    version = shown.version if args.version is None else args.version
    if not args.json:
        print(f"{shown.id}  {shown.name}  (version {version}): {state.value}")
    try:
        stored = repository.reviews.review(skill_id, state, comment=args.comment, version=version)
    except ConflictError as error:
        print(
            f"skillstudio: {skill_id} changed since version {version} (the library now holds version "
            f"{error.theirs.version}); nothing was recorded. See the change with "
            f"`skillstudio review show {skill_id}` and decide again.",
            file=sys.stderr,
        )
        return EXIT_FAILED
    if args.json:
        print(
            output.dump_json(
                {
                    "id": stored.id,
                    "review_state": state.value,
                    "reviewer": repository.actor.id,
                    "comment": args.comment,
                    "version": version,
                }
            )
        )
    else:
        print(f"{stored.id}  {stored.name}: {state.value} by {repository.actor.id}")
    return EXIT_OK


def _undo(args: argparse.Namespace, repository: SkillRepository, skill_id: str) -> int:
    """``review undo ID``: the newest decision, if it is this user's and nothing changed since."""
    decisions = repository.reviews.decisions(skill_id)
    current = repository.get(skill_id)
    if not decisions or not decisions[-1].state:
        print(f"skillstudio: {skill_id} has no review decision to take back", file=sys.stderr)
        return EXIT_FAILED
    undone = ReviewState(decisions[-1].state)
    try:
        stored = repository.reviews.undo(skill_id, undone, version=current.version)
    except ReviewRefused as error:
        print(f"skillstudio: {error}", file=sys.stderr)
        return EXIT_FAILED
    now = stored.review_state.label.lower() if stored.review_state else "not reviewed"
    if args.json:
        print(
            output.dump_json(
                {
                    "id": stored.id,
                    "undid": undone.value,
                    "review_state": stored.review_state.value if stored.review_state else None,
                    "reviewer": repository.actor.id,
                }
            )
        )
    else:
        print(f"{stored.id}  {stored.name}: took back “{undone.label}”; now {now}")
    return EXIT_OK


def _privacy_findings(repository: SkillRepository, skill: Any) -> list[tuple[Any, bool]]:
    """The skill's export privacy findings in the order ``export --dry-run`` lists them, each
    with whether a reviewer marked it a false positive."""
    from skillstudio.packages.privacy import scan_skill

    findings = scan_skill(skill)
    marks = repository.privacy_marks.marked_many([skill.id]).get(skill.id, set()) if findings else set()
    return [(f, f.mark_key in marks) for f in findings]


def _print_privacy(privacy: Sequence[tuple[Any, bool]], file: Any = None) -> None:
    for number, (f, marked) in enumerate(privacy, 1):
        flag = "  (false positive)" if marked else ""
        print(f"  {number}. {f.path}: {f.kind} {f.text!r}{flag}", file=file)


def _false_positive(args: argparse.Namespace, repository: SkillRepository, skill_id: str) -> int:
    """``review false-positive ID --finding N [--note T] [--undo]``: one finding, by its number."""
    privacy = _privacy_findings(repository, repository.get(skill_id))
    if args.finding is None or not 1 <= args.finding <= len(privacy):
        if not privacy:
            print(f"skillstudio: {skill_id} has no export privacy findings", file=sys.stderr)
        else:
            given = "give --finding N" if args.finding is None else f"there is no finding {args.finding}"
            print(f"skillstudio: {given}; the privacy findings of {skill_id} are:", file=sys.stderr)
            _print_privacy(privacy, file=sys.stderr)
        return EXIT_FAILED
    finding, _marked = privacy[args.finding - 1]
    marks = repository.privacy_marks
    try:
        if args.undo:
            changed = marks.unmark(skill_id, finding.path, finding.kind, finding.text, note=args.note)
        else:
            changed = marks.mark(skill_id, finding.path, finding.kind, finding.text, note=args.note)
    except ReviewNotAllowed as error:
        print(f"skillstudio: {error}", file=sys.stderr)
        return EXIT_FAILED
    state = "not a false positive" if args.undo else "false positive"
    if args.json:
        print(
            output.dump_json(
                {
                    "id": skill_id,
                    "finding": args.finding,
                    "field": finding.path,
                    "kind": finding.kind,
                    "false_positive": not args.undo,
                    "changed": changed,
                    "by": repository.actor.id,
                    "note": args.note,
                }
            )
        )
    else:
        already = "" if changed else " (already so)"
        print(
            f"{skill_id}  finding {args.finding} ({finding.path}: {finding.kind} {finding.text!r}): {state}{already} by {repository.actor.id}"
        )
    return EXIT_OK


def _severity_rank(severity: str) -> int:
    return ("info", "low", "medium", "high").index(severity) if severity in ("info", "low", "medium", "high") else -1


def _audit(args: argparse.Namespace, database: Database) -> int:
    repository = SkillRepository(database)
    skill_id = repository.resolve_id(args.skill) if args.skill else None
    entries = repository.history.audit(
        actor=args.actor, action=args.action, skill_id=skill_id, since=args.since, until=args.until, limit=args.limit
    )
    if args.csv:
        sys.stdout.write(audit_csv(entries))
        return EXIT_OK
    names = {summary.id: summary.name for summary in repository.summaries(sorted(named_ids(entries)))}
    if args.json:
        documents = [{**entry.__dict__, "summary": audit_sentence(entry, names)} for entry in entries]
        print(output.dump_json({"total": len(entries), "entries": documents}))
        return EXIT_OK
    for e in entries:
        revision = f"r{e.revision}" if e.revision is not None else "-"
        sentence = audit_sentence(e, names)
        print(
            f"{e.at}  {e.actor} ({e.actor_kind})  {e.action:14}  {(e.skill_id or '-')[:8]}  {revision}"
            + (f"  {sentence}" if sentence else "")
        )
    print(f"{len(entries)} entries")
    return EXIT_OK


def _mcp(args: argparse.Namespace, database: Database) -> int:
    from skillstudio.agents.mcp_server import serve_database

    try:
        import mcp  # noqa: F401 - the official SDK, an optional dependency
    except ImportError:
        print('skillstudio: the MCP server needs the `mcp` package: pip install "skillstudio[agents]"', file=sys.stderr)
        return EXIT_FAILED
    serve_database(
        database, args.agent_id, rate_limit=args.rate_limit, rate_window=args.rate_window, game_module=args.game_module
    )
    return EXIT_OK


__all__ = ["AUDIT_COLUMNS", "add_commands", "audit_csv"]
