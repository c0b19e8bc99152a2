"""The audit log for people: each entry's details as one readable sentence (the GUI's audit log
and ``skillstudio audit``), and the log as CSV (the CLI's ``audit --csv`` and the GUI's export).

The details an entry stores are the writer's (``{"state": "rejected", "comment": ""}``); the
sentence says what happened ("Rejected (content version 3), no reason given"). Skills the
details name by id are named by their names where the caller knows them.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping, Sequence

from skillstudio.model import Confidence, ReviewState
from skillstudio.model.naming import SHORT_ID, counted, listed
from skillstudio.store import AuditAction, AuditEntry, JsonValue

AUDIT_COLUMNS = ("id", "at", "actor", "actor_kind", "action", "skill_id", "revision", "details")

# What the fields an update lists (skill document keys) are called in a sentence.
_FIELDS = {
    "composable_with": "links to other skills",
    "created_by": "creator",
    "created_at": "creation time",
    "use_count": "use count",
    "last_used": "last use",
}

Names = Mapping[str, str]


def audit_csv(entries: Sequence[AuditEntry]) -> str:
    """The audit entries as CSV: one header row, then one row per entry, details as JSON."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(AUDIT_COLUMNS)
    for e in entries:
        writer.writerow(
            [
                e.id,
                e.at,
                e.actor,
                e.actor_kind,
                e.action,
                e.skill_id or "",
                "" if e.revision is None else e.revision,
                json.dumps(e.details, ensure_ascii=False, sort_keys=True),
            ]
        )
    return buffer.getvalue()


def audit_sentence(entry: AuditEntry, names: Names | None = None) -> str:
    """What the entry records, as a sentence ("Rejected (content version 3): “unsafe”").

    ``names`` maps skill ids to names for the skills the details name by id; an id not in it is
    shown short. Empty values are left out; an action or details this version does not know
    (a newer SkillStudio, another program) are said as their fields."""
    details = entry.details
    known = names or {}
    try:
        action = AuditAction(entry.action)
    except ValueError:
        return _fields_sentence(details)
    say = _SENTENCES.get(action)
    sentence = say(details, known) if say is not None else ""
    return sentence or _fields_sentence(details)


def named_ids(entries: Sequence[AuditEntry]) -> set[str]:
    """The skills the entries are about or name in their details: whose names the sentences
    and the log's Skill column want."""
    ids = {entry.skill_id for entry in entries if entry.skill_id}
    for entry in entries:
        details = entry.details
        ids.update(value for key in ("first", "then") if isinstance(value := details.get(key), str))
        worse = details.get("worse_than_default_plan")
        if isinstance(worse, list):
            ids.update(value for value in worse if isinstance(value, str))
    return ids


# --- one wording per action -----------------------------------------------------------------------


def _created(verb: str) -> Callable[[Mapping[str, JsonValue], Names], str]:
    def say(details: Mapping[str, JsonValue], _names: Names) -> str:
        name = _text(details.get("name"))
        if name:
            return f"{verb} “{name}”"
        changed = details.get("changed")
        if isinstance(changed, list):  # an import that replaced a stored skill
            return f"Replaced by an import: {_changed(changed).lower()}"
        return verb

    return say


def _updated(details: Mapping[str, JsonValue], _names: Names) -> str:
    changed = details.get("changed")
    return _changed(changed) if isinstance(changed, list) else ""


def _changed(fields: list[JsonValue]) -> str:
    named = [_FIELDS.get(str(field), str(field).replace("_", " ")) for field in fields]
    return f"Changed the {listed(named)}" if named else "Saved with no field changed"


def _trashed(verb: str) -> Callable[[Mapping[str, JsonValue], Names], str]:
    def say(details: Mapping[str, JsonValue], _names: Names) -> str:
        name = _text(details.get("name"))
        return f"{verb} “{name}” to the trash" if name else f"{verb} to the trash"

    return say


def _reviewed(details: Mapping[str, JsonValue], _names: Names) -> str:
    state = state_label(details.get("state"))
    version = details.get("version")
    said = f"{state} (content version {version})" if isinstance(version, int) else state
    comment = _text(details.get("comment"))
    if comment:
        return f"{said}: “{comment}”"
    return f"{said}, no reason given" if details.get("state") == ReviewState.REJECTED.value else f"{said}, no comment"


def _review_undone(details: Mapping[str, JsonValue], _names: Names) -> str:
    undid = state_label(details.get("undid"))
    comment = _text(details.get("comment"))
    why = f" (its comment: “{comment}”)" if comment else ""
    return f"Took back the decision “{undid}”{why}; back to {state_label(details.get('state')).lower()}"


def _quality(details: Mapping[str, JsonValue], names: Names) -> str:
    parts: list[str] = []
    run = _text(details.get("run"))
    if "lifts" in details:  # a run's lift against the default plan
        worse = details.get("worse_than_default_plan")
        worse_names = [_skill(str(skill_id), names) for skill_id in worse] if isinstance(worse, list) else []
        parts.append(f"Lift measured in run {run} for {_count(details.get('lifts'), 'skill')}")
        parts.append(
            f"worse than the default plan: {', '.join(worse_names)}"
            if worse_names
            else "none worse than the default plan"
        )
        return "; ".join(parts)
    if "plays" in details:  # plays of a content skill
        parts.append(
            f"{_count(details.get('plays'), 'play')} recorded "
            f"({_number(details.get('completed'))} completed, {_number(details.get('rated'))} rated)"
        )
    else:
        games = ", ".join(
            _count(details.get(key), noun)
            for key, noun in (("wins", "win"), ("losses", "loss"), ("draws", "draw"), ("errors", "error"))
            if isinstance(details.get(key), int) and details.get(key)
        )
        if "matches" in details:
            games = f"{_count(details.get('matches'), 'match')} recorded" + (f" ({games})" if games else "")
        elif run:
            games = f"Run {run}" + (f": {games}" if games else "")
        opponent = _text(details.get("opponent"))
        if games:
            parts.append(games + (f" against {opponent}" if opponent else ""))
        if details.get("credited") is False:
            parts.append("not counted")
    before, after = _tier(details.get("before")), _tier(details.get("after"))
    if before and after:
        parts.append(f"stays {after}" if before == after else f"{before} → {after}")
    reason = _text(details.get("reason"))
    sentence = "; ".join(parts)
    return f"{sentence}: {reason}" if sentence and reason else sentence or reason


def _composed(details: Mapping[str, JsonValue], names: Names) -> str:
    first, then = _text(details.get("first")), _text(details.get("then"))
    pair = f"{_skill(first, names)} then {_skill(then, names)}" if first and then else "A composition"
    run = _text(details.get("run"))
    successes = details.get("successes")
    said = pair + (f" in run {run}" if run else "")
    if isinstance(successes, int):
        said += f": {_count(successes, 'success', 'successes')} credited"
    reason = _text(details.get("reason"))
    return f"{said} ({reason})" if reason else said


def _embedded(details: Mapping[str, JsonValue], _names: Names) -> str:
    model = _text(details.get("model_id"))
    count = details.get("count")
    what = f"Embedded {_count(count, 'skill')}" if isinstance(count, int) and count != 1 else "Embedded"
    return f"{what} with {model}" if model else what


def _privacy(marked: bool) -> Callable[[Mapping[str, JsonValue], Names], str]:
    def say(details: Mapping[str, JsonValue], _names: Names) -> str:
        kind = _text(details.get("kind")).replace("_", " ") or "privacy"
        where = _text(details.get("field"))
        finding = f"the {kind} finding" + (f" in {where}" if where else "")
        said = f"Marked {finding} a false positive" if marked else f"Took back the false-positive mark on {finding}"
        if details.get("changed") is False:
            said += " (it already was)" if marked else " (there was none)"
        note = _text(details.get("note"))
        return f"{said}: “{note}”" if note else said

    return say


def _settings(details: Mapping[str, JsonValue], _names: Names) -> str:
    changed = details.get("changed")
    if not isinstance(changed, dict) or not changed:
        return ""
    parts = []
    for key, change in changed.items():
        values = change if isinstance(change, dict) else {}
        if "from" in values and "to" in values:
            parts.append(f"{key} from {_value(values['from'])} to {_value(values['to'])}")
        elif "to" in values:
            parts.append(f"{key} set to {_value(values['to'])}")
        else:
            parts.append(f"{key} back to its default (was {_value(values.get('from'))})")
    return "Changed " + "; ".join(parts)


_SENTENCES: dict[AuditAction, Callable[[Mapping[str, JsonValue], Names], str]] = {
    AuditAction.CREATE: _created("Created"),
    AuditAction.IMPORT: _created("Imported"),
    AuditAction.UPDATE: _updated,
    AuditAction.DELETE: _trashed("Moved"),
    AuditAction.PRUNE: _trashed("Pruned: moved"),
    AuditAction.RESTORE: lambda _details, _names: "Restored from the trash",
    AuditAction.PURGE: lambda _details, _names: "Deleted for good (the trash was emptied)",
    AuditAction.REVIEW: _reviewed,
    AuditAction.REVIEW_UNDO: _review_undone,
    AuditAction.VERIFY: _quality,
    AuditAction.PROMOTE: _quality,
    AuditAction.DEMOTE: _quality,
    AuditAction.COMPOSE: _composed,
    AuditAction.EMBED: _embedded,
    AuditAction.PRIVACY_MARK: _privacy(marked=True),
    AuditAction.PRIVACY_UNMARK: _privacy(marked=False),
    AuditAction.SETTINGS: _settings,
}


# --- the pieces ---------------------------------------------------------------------------------


def _fields_sentence(details: Mapping[str, JsonValue]) -> str:
    """Details nothing here words: each non-empty field as "field value"."""
    return "; ".join(
        f"{key.replace('_', ' ')} {_value(value)}" for key, value in sorted(details.items()) if _value(value)
    )


def _text(value: JsonValue | None) -> str:
    return value.strip() if isinstance(value, str) else ""


def _value(value: JsonValue | None) -> str:
    if value is None or value == "" or value == [] or value == {}:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str | int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _number(value: JsonValue | None) -> str:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else "?"


def _count(value: JsonValue | None, noun: str, plural: str | None = None) -> str:
    return counted(value if isinstance(value, int) and not isinstance(value, bool) else 0, noun, plural)


def state_label(value: JsonValue | None) -> str:
    """A stored review state as a person reads it ("Changes requested"); none: never reviewed."""
    return ReviewState.label_of(str(value)) if value else "Not reviewed"


def _tier(value: JsonValue | None) -> str:
    return Confidence.label_of(str(value)) if value else ""


def _skill(skill_id: str, names: Names) -> str:
    name = names.get(skill_id)
    return f"“{name}”" if name else f"skill {skill_id[:SHORT_ID]}"


__all__ = ["AUDIT_COLUMNS", "audit_csv", "audit_sentence", "named_ids", "state_label"]
