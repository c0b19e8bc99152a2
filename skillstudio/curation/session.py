"""An editing session: one person editing one skill, or writing a new one, without Qt.

:class:`EditSession` holds what an editor needs to know and decide, so that views only show it:

* the **base**: the skill as read (with its version), or a blank hand-authored skill;
* the **form** (:class:`~skillstudio.curation.form.FormState`), validated at every change with
  the core's parser (:class:`Validation`: issues with field paths), and whether it is **dirty**
  (differs from what the library holds);
* **raw YAML**: the form as text, and text read back into the form (:meth:`EditSession.apply_yaml`
  answers :class:`YamlApplied` or :class:`YamlRejected`, whose problems carry line and column);
* **saving** by D057's provenance rules (:mod:`skillstudio.curation.edits`: an LLM-discovered or
  Workshop skill is refined into a new *human-refined* skill, a person's own is updated in
  place), answered as a :data:`SaveOutcome`: saved, refined, unchanged, conflict (theirs and
  yours), invalid, gone (the skill left the library) or failed;
* the **library** changing underneath (:meth:`EditSession.follow`): the skill left it (trash,
  prune, an import's trash), came back, or was changed by someone else.

It is evented with plain callbacks, as napari's models are (:class:`Emitter`): views subscribe
to ``session.events`` and show what changed. Its writes name the session as their initiator,
so it can tell its own saves from other people's changes.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, auto
from typing import Any, Generic, TypeVar

import yaml

from skillstudio.curation.edits import edit_becomes_refinement, new_skill, save_edit
from skillstudio.curation.form import KIND_ORDER, FormState, default_body, form_document
from skillstudio.model import (
    Domain,
    Issue,
    Provenance,
    Skill,
    Source,
    ValidationError,
    new_skill_id,
    parse_skill,
    skill_to_document,
    utc_now,
)
from skillstudio.model.yaml_form import MAX_YAML, document_to_yaml, skill_to_yaml
from skillstudio.store import (
    AuditAction,
    ChangeKind,
    ConflictError,
    LibraryChange,
    LibraryError,
    SkillNotFound,
    SkillRepository,
    initiated_by,
)

T = TypeVar("T")

# Fields the raw YAML shows but the form does not edit: applying text that changes them leaves
# them as they were (the label says which, so the user knows).
READ_ONLY_LABELS = {
    "id": "id",
    "created_by": "created by",
    "created_at": "created",
    "last_used": "last used",
    "use_count": "use count",
    "quality": "quality",
    "provenance.source": "source",
    "provenance.source_id": "Workshop package",
    "provenance.author": "Workshop author",
    "provenance.original_id": "original",
    "provenance.model_id": "model id",
}
# What saving is refused with, by the write that took the skill away.
_LEFT_BY = {
    AuditAction.DELETE: "was moved to the trash by {actor}",
    AuditAction.PRUNE: "was pruned (moved to the trash) by {actor}",
    AuditAction.IMPORT: "was moved to the trash by an import ({actor})",
    AuditAction.PURGE: "was deleted for good by {actor}",
}
MISSING = "is no longer in this library (it may be in the trash)"
# The changes that can alter what an editor shows of its skill (not embeddings, not run records).
_SHOWN = ChangeKind.CONTENT | ChangeKind.QUALITY | ChangeKind.REVIEW | ChangeKind.MEMBERSHIP


class Emitter(Generic[T]):
    """Plain callbacks for one kind of event. A bound method is held weakly, so a view that
    goes away stops listening; ``connect`` returns the function that disconnects."""

    def __init__(self) -> None:
        self._listeners: list[Callable[[T], None] | weakref.WeakMethod[Any]] = []

    def connect(self, listener: Callable[[T], None]) -> Callable[[], None]:
        held: Callable[[T], None] | weakref.WeakMethod[Any] = (
            weakref.WeakMethod(listener) if inspect.ismethod(listener) else listener
        )
        self._listeners.append(held)

        def disconnect() -> None:
            if held in self._listeners:
                self._listeners.remove(held)

        return disconnect

    def emit(self, value: T) -> None:
        for held in list(self._listeners):
            listener = held() if isinstance(held, weakref.WeakMethod) else held
            if listener is None:
                if held in self._listeners:  # a listener may have disconnected it meanwhile
                    self._listeners.remove(held)
                continue
            listener(value)


# --- what the session announces ------------------------------------------------------------------


@dataclass(frozen=True)
class FormChange:
    """The form went from ``before`` to ``after``. ``key`` is the field path edited (or
    ``raw``, ``reload``, ``load``); edits with the same ``merge`` token are one undo step.
    ``undoable`` is False for loads and for undo and redo themselves."""

    before: FormState
    after: FormState
    key: str
    merge: str | None = None
    undoable: bool = True


@dataclass(frozen=True)
class Validation:
    issues: tuple[Issue, ...]
    skill: Skill | None  # what the form describes, when it has no issues


@dataclass(frozen=True)
class SessionStatus:
    departure: str | None = None  # why the skill left the library ("was pruned (...) by mira")
    stale_by: str | None = None  # who changed the stored skill since it was read, while the form has edits
    closed: str | None = None  # why the session's library is gone (another one was opened)


class SessionEvents:
    def __init__(self) -> None:
        self.base: Emitter[Skill | None] = Emitter()  # the skill as read: opened, saved, reloaded, refreshed
        self.form: Emitter[FormChange] = Emitter()
        self.validated: Emitter[Validation] = Emitter()
        self.dirty: Emitter[bool] = Emitter()
        self.status: Emitter[SessionStatus] = Emitter()


class Followed(Enum):
    """What a library change meant for the session (:meth:`EditSession.follow`)."""

    IGNORED = auto()  # not about its skill, or its own save
    LEFT = auto()  # the skill left the library: saving it is refused
    RETURNED = auto()  # it is back (restored)
    REFRESHED = auto()  # its quality or review state changed; the form is as it was
    RELOADED = auto()  # changed elsewhere; the form had no edits and shows the new version
    STALE = auto()  # changed elsewhere while the form has edits: saving will show a conflict


# --- raw YAML -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class YamlProblem:
    """Why YAML text was not applied: a syntax error at ``line``/``column`` (1-based), or a field
    (``path``) that does not hold a valid value."""

    message: str
    path: str = ""
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        if self.line is not None:
            return f"line {self.line}, column {self.column}: {self.message}"
        return f"{self.path}: {self.message}" if self.path else self.message


@dataclass(frozen=True)
class YamlApplied:
    changed: bool  # False: the text said what the form already held
    ignored: tuple[str, ...] = ()  # read-only fields the text changed, left as they were


@dataclass(frozen=True)
class YamlRejected:
    problems: tuple[YamlProblem, ...]


YamlResult = YamlApplied | YamlRejected


def read_yaml(text: str) -> Skill | tuple[YamlProblem, ...]:
    """The skill YAML text describes, or every problem with it (typed, with line and column)."""
    if len(text) > MAX_YAML:
        return (YamlProblem(f"text is larger than {MAX_YAML} characters"),)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or str(error)
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
        return (YamlProblem(f"not valid YAML: {problem}", line=line, column=column),)
    try:
        return parse_skill(data)
    except ValidationError as error:
        return tuple(YamlProblem(issue.message, path=issue.path) for issue in error.issues)


# --- saving -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Saved:
    skill: Skill  # what the library holds now
    created: bool = False  # a new skill


@dataclass(frozen=True)
class Refined:
    skill: Skill  # the new human-refined skill; the session edits it from now on
    original: Skill  # unchanged in the library


@dataclass(frozen=True)
class Unchanged:
    skill: Skill  # the edit changed nothing; nothing was written


@dataclass(frozen=True)
class Conflict:
    theirs: Skill  # what the library holds now
    yours: Skill  # what the form describes; nothing was written
    message: str


@dataclass(frozen=True)
class Invalid:
    issues: tuple[Issue, ...]


@dataclass(frozen=True)
class Gone:
    reason: str  # "was pruned (moved to the trash) by mira"


@dataclass(frozen=True)
class Failed:
    error: LibraryError  # refused by the store for another reason (a partner skill is gone, ...)


SaveOutcome = Saved | Refined | Unchanged | Conflict | Invalid | Gone | Failed


# --- the session --------------------------------------------------------------------------------


class EditSession:
    """One skill being edited (``skill`` as read, with its version), or a new one (None)."""

    def __init__(self, skill: Skill | None = None, *, author: str = "unknown") -> None:
        self.events = SessionEvents()
        self._base = skill
        shown = skill if skill is not None else blank_skill(author)
        self._base_document = skill_to_document(shown)
        self._form = self._saved = FormState.of(shown)
        self._validation = self._check(self._form)
        self._departure: str | None = None
        self._closed: str | None = None
        self._stale_by: str | None = None

    # --- reading ---------------------------------------------------------------------------------

    @property
    def skill(self) -> Skill | None:
        """The skill as the library held it when read (None for a new skill not saved yet)."""
        return self._base

    @property
    def is_new(self) -> bool:
        return self._base is None

    @property
    def skill_id(self) -> str:
        """The id the skill has, or will have once a new one is saved."""
        return str(self._base_document["id"])

    @property
    def base_document(self) -> dict[str, Any]:
        """The document of the skill as read (the read-only fields); do not change it."""
        return self._base_document

    @property
    def form(self) -> FormState:
        return self._form

    @property
    def saved_form(self) -> FormState:
        """The form of what the library holds: the form is dirty when it differs."""
        return self._saved

    @property
    def dirty(self) -> bool:
        return self._form != self._saved

    @property
    def validation(self) -> Validation:
        return self._validation

    @property
    def issues(self) -> tuple[Issue, ...]:
        return self._validation.issues

    @property
    def valid_skill(self) -> Skill | None:
        return self._validation.skill

    @property
    def becomes_refinement(self) -> bool:
        """Saving creates a new human-refined skill (the base is an agent's or Workshop's)."""
        return self._base is not None and edit_becomes_refinement(self._base)

    @property
    def status(self) -> SessionStatus:
        return SessionStatus(self._departure, self._stale_by, self._closed)

    def document(self, form: FormState | None = None) -> dict[str, Any]:
        """The skill document ``form`` (default: the form) describes, valid or not."""
        return form_document(self._form if form is None else form, self._base_document, [])

    def yaml_text(self) -> str:
        """The form as YAML: canonical when valid, else the document as it stands."""
        if self.valid_skill is not None:
            return skill_to_yaml(self.valid_skill)
        shown = {key: value for key, value in self.document().items() if key not in ("review_state", "version")}
        return document_to_yaml(shown)

    # --- editing ---------------------------------------------------------------------------------

    def set_form(self, form: FormState, key: str = "edit", *, merge: str | None = None) -> bool:
        """A person's edit; False if ``form`` is what the session holds already."""
        return self._replace_form(form, FormChange(self._form, form, key, merge))

    def restore(self, form: FormState, key: str) -> None:
        """Put an earlier form back (undo, redo): not itself an undoable edit."""
        self._replace_form(form, FormChange(self._form, form, key, undoable=False))

    def apply_yaml(self, text: str) -> YamlResult:
        """Read YAML text into the form (one edit); read-only fields stay as they were read."""
        read = read_yaml(text)
        if isinstance(read, tuple):
            return YamlRejected(read)
        ignored = self._read_only_changes(read)
        changed = self.set_form(FormState.of(read), "raw")
        return YamlApplied(changed, ignored)

    def reload(self, skill: Skill) -> None:
        """Show ``skill``, the library's version read now (a conflict's "reload theirs"). The
        form's edit is one undo step away, to be saved again on top of theirs."""
        before, was_dirty = self._form, self.dirty
        self._set_base(skill)
        self._stale_by = None
        self._departure = None
        self._form = self._saved = FormState.of(skill)
        self._validation = self._check(self._form)
        change = FormChange(before, self._form, "reload") if before != self._form else None
        self._announce(base=True, change=change, was_dirty=was_dirty, status=True)

    def set_author(self, author: str) -> None:
        """A new skill's author (the user renamed themselves); saving records the actor anyway."""
        if self._base is None and self._base_document["created_by"] != author:
            self._base_document = {**self._base_document, "created_by": author}
            self._validation = self._check(self._form)
            self._announce(base=True, validated=True)

    # --- the library -----------------------------------------------------------------------------

    def follow(self, change: LibraryChange, repository: SkillRepository) -> Followed:
        """Take a committed change to the library into account (another window's save, a prune,
        an import, a restore); ``repository`` reads the skill as it is now."""
        base = self._base
        if base is None or self._closed is not None or change.started_by(self):
            return Followed.IGNORED
        if change.removes(base.id):
            self._departure = _LEFT_BY.get(change.action, "left the library by {actor}").format(actor=change.actor)
            self._announce(status=True)
            return Followed.LEFT
        if base.id not in change.skill_ids or not change.touches(_SHOWN):
            return Followed.IGNORED
        try:
            current = repository.get(base.id)
        except LibraryError:
            return Followed.IGNORED  # still gone, or unreadable: keep what the form shows
        returned = self._departure is not None
        self._departure = None
        # Quality, review state, a restore: what the form edits is as it was read, so the session
        # takes the new version as its base, and a save does not conflict with a non-change.
        if current.version == base.version or FormState.of(current) == FormState.of(base):
            self._set_base(current)
            self._validation = self._check(self._form)
            self._announce(base=True, validated=True, status=returned)
            return Followed.RETURNED if returned else Followed.REFRESHED
        if not self.dirty:
            self._load(current)
            return Followed.RELOADED
        self._stale_by = change.actor
        self._announce(status=True)
        return Followed.STALE

    def detach(self, reason: str) -> None:
        """The session's library was closed (another one opened): nothing can be saved now."""
        self._closed = reason
        self._announce(status=True)

    def save(self, repository: SkillRepository, *, message: str = "") -> SaveOutcome:
        """Store the form as ``repository``'s actor; the session then edits what was stored."""
        if self._closed is not None:
            return Gone(self._closed)
        edited = self._validation.skill
        if edited is None:
            return Invalid(self._validation.issues)
        base = self._base
        outcome: Saved | Refined
        try:
            with initiated_by(self):
                if base is None:
                    outcome = Saved(new_skill(repository, edited, message=message), created=True)
                else:
                    stored = save_edit(repository, base, edited, message=message)
                    if not stored.changed:
                        was_dirty, self._saved = self.dirty, self._form  # nothing to save: not dirty
                        self._announce(was_dirty=was_dirty)
                        return Unchanged(base)
                    outcome = Refined(stored.skill, base) if stored.refined_from else Saved(stored.skill)
        except ConflictError as error:
            return Conflict(error.theirs, edited, str(error))
        except SkillNotFound as error:
            if base is None or error.skill_id != base.id:
                return Failed(error)
            self._departure = self._departure or MISSING
            self._announce(status=True)
            return Gone(self._departure)
        except LibraryError as error:
            return Failed(error)
        self._load(outcome.skill)
        return outcome

    # --- internals -------------------------------------------------------------------------------

    def _check(self, form: FormState) -> Validation:
        issues: list[Issue] = []
        document = form_document(form, self._base_document, issues)
        skill = None
        try:
            skill = parse_skill(document)
        except ValidationError as error:
            issues.extend(error.issues)
        unique = tuple(dict.fromkeys(issues))
        return Validation(unique, skill if not unique else None)

    def _replace_form(self, form: FormState, change: FormChange) -> bool:
        if form == self._form:
            return False
        was_dirty = self.dirty
        self._form = form
        self._validation = self._check(form)
        self._announce(change=change, was_dirty=was_dirty)
        return True

    def _set_base(self, skill: Skill) -> None:
        self._base = skill
        self._base_document = skill_to_document(skill)

    def _load(self, skill: Skill) -> None:
        before, was_dirty = self._form, self.dirty
        self._set_base(skill)
        self._departure = self._stale_by = None
        self._form = self._saved = FormState.of(skill)
        self._validation = self._check(self._form)
        change = FormChange(before, self._form, "load", undoable=False)
        self._announce(base=True, change=change, was_dirty=was_dirty, status=True)

    def _announce(
        self,
        *,
        base: bool = False,
        change: FormChange | None = None,
        validated: bool | None = None,
        was_dirty: bool | None = None,
        status: bool = False,
    ) -> None:
        # One order for every change: what was read, then the form, its problems, dirtiness
        # and the session's status; a view that shows several sees a consistent session.
        if base:
            self.events.base.emit(self._base)
        if change is not None:
            self.events.form.emit(change)
        if validated or (validated is None and change is not None):
            self.events.validated.emit(self._validation)
        if was_dirty is not None and was_dirty != self.dirty:
            self.events.dirty.emit(self.dirty)
        if status:
            self.events.status.emit(self.status)

    def _read_only_changes(self, skill: Skill) -> tuple[str, ...]:
        theirs = skill_to_document(skill, local=False)
        ours = self._base_document
        changed = []
        for key, label in READ_ONLY_LABELS.items():
            if "." in key:
                head, tail = key.split(".", 1)
                if theirs[head].get(tail) != ours[head].get(tail):
                    changed.append(label)
            elif theirs.get(key) != ours.get(key):
                changed.append(label)
        return tuple(changed)


def blank_skill(author: str) -> Skill:
    """What a new skill starts as: hand-authored by ``author``, for ra1, a complete plan."""
    return Skill(
        id=new_skill_id(),
        domain=Domain.AI_STRATEGY,
        name="",
        description="",
        body=default_body(KIND_ORDER[0]),
        provenance=Provenance(Source.hand_authored(), "ra1", ""),
        created_at=utc_now(),
        created_by=author,
    )


__all__ = [
    "READ_ONLY_LABELS",
    "Conflict",
    "EditSession",
    "Emitter",
    "Failed",
    "Followed",
    "FormChange",
    "Gone",
    "Invalid",
    "Refined",
    "SaveOutcome",
    "Saved",
    "SessionEvents",
    "SessionStatus",
    "Unchanged",
    "Validation",
    "YamlApplied",
    "YamlProblem",
    "YamlRejected",
    "YamlResult",
    "blank_skill",
    "read_yaml",
]
