"""Seed 001's skill tool for agents: search, create, update, and no delete.

``AgentSkillTool(repository, agent_id)`` is the Python API for in-process agents; the MCP
server (:mod:`skillstudio.agents.mcp_server`) exposes the same three operations over stdio.
Everything an agent sends is untrusted: types, sizes and characters are checked before the
model's own validation, ``created_by`` always comes from the tool's ``agent_id`` (never from the
payload), and every write lands ``pending`` for a person to review (docs/review.md).

``skill_search`` ranks with the retriever (docs/retrieval.md): keyword and embedding relevance,
tilted by evidence, each result with its real score and breakdown. ``skill_create`` and a
``skill_update`` that changes the description compute the new vector in the same call.

Guard rails (RFC 004): one create or update per agent per 30 seconds by default (configurable,
with an injectable clock), kept in the library (``studio_agent_writes``) so every process serving
one agent id shares the budget, and only successful writes count; SHA-256 dedup of identical content (a duplicate create returns the
existing skill and writes nothing), and size limits, the instructions within the 4000-character
prompt budget.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import time
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypedDict

from sqlalchemy import select

from skillstudio.model import (
    Domain,
    Instructions,
    Provenance,
    ReviewState,
    Skill,
    Source,
    ValidationError,
    new_skill_id,
    parse_skill,
    skill_to_document,
    utc_now,
)
from skillstudio.retrieval import EmbeddingProvider, Retriever, embed_now
from skillstudio.retrieval.retriever import MAX_K
from skillstudio.retrieval.settings import configured_provider
from skillstudio.review.linter import Linter
from skillstudio.review.serving import served_content
from skillstudio.review.workflow import SERVED_STATES
from skillstudio.store import (
    Actor,
    ConflictError,
    InvalidStoredSkill,
    LibraryBusy,
    LibraryError,
    SkillNotFound,
    SkillQuery,
    SkillRepository,
    SortKey,
    StorageError,
)
from skillstudio.store.orm import SkillRow

DEFAULT_RATE_LIMIT = 1  # writes ...
DEFAULT_RATE_WINDOW = 30.0  # ... per this many seconds, per agent (RFC 004)
PROMPT_BUDGET = 4000  # characters of instructions (RFC 004)


@dataclass(frozen=True)
class Limits:
    name: int = 120
    description: int = 1000
    instructions: int = PROMPT_BUDGET
    tags: int = 20
    tag: int = 48
    tools: int = 32
    tool: int = 64
    model: int = 120
    references: int = 20
    query: int = 500
    results: int = 20


class AgentToolError(Exception):
    """A refused call; ``code`` is one of invalid, rate_limited, not_found, not_allowed, conflict, busy."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code

    def to_dict(self) -> dict[str, str]:
        return {"error": self.code, "message": str(self)}


_AGENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@/-]{0,63}")
# Ids an agent may not take: they read as a person or as the library itself in created_by and
# the audit log (issue 13 point 17). The local OS user name is refused too (see reserved_agent_ids).
RESERVED_AGENT_IDS = frozenset({"root", "admin", "administrator", "system", "external", "unknown", "user"})


class InvalidAgentId(LibraryError, ValueError):
    """An agent id that is malformed or could be taken for a person; ``str()`` names the rule."""


def reserved_agent_ids() -> frozenset[str]:
    """The reserved ids, case-folded, with the local user name (Actor.current_user's)."""
    return RESERVED_AGENT_IDS | {Actor.current_user().id.casefold()}


def check_agent_id(agent_id: object) -> str:
    """``agent_id`` if an agent may use it, else InvalidAgentId (a ValueError and a LibraryError)."""
    if not isinstance(agent_id, str) or not _AGENT_ID.fullmatch(agent_id):
        raise InvalidAgentId(f"agent id {agent_id!r}: 1-64 characters of letters, digits and _.:@/-")
    if agent_id.casefold() in reserved_agent_ids():
        raise InvalidAgentId(
            f"agent id {agent_id!r} is reserved: an agent may not be named like a person or the library "
            f"({', '.join(sorted(RESERVED_AGENT_IDS))} or the local user name, in any case)"
        )
    return agent_id


_TAG = re.compile(r"[a-z0-9][a-z0-9_.:-]*")
_UPDATABLE = ("name", "description", "instructions", "tags", "tools", "model", "references")


class AgentSkillTool:
    """The skill tool of one agent. No delete: there is no method for it, by design (seed 001)."""

    def __init__(
        self,
        repository: SkillRepository,
        agent_id: str,
        *,
        rate_limit: int = DEFAULT_RATE_LIMIT,
        rate_window: float = DEFAULT_RATE_WINDOW,
        clock: Callable[[], float] = time.time,  # wall clock: compared across processes
        limits: Limits = Limits(),
        game_module: str = "ra1",
        domain: Domain = Domain.AI_STRATEGY,
        provider: EmbeddingProvider | str | None = "configured",
        serve_unapproved: bool = True,
    ) -> None:
        self.agent_id = check_agent_id(agent_id)
        self.repository = repository.as_actor(Actor(agent_id, "agent"))
        self.rate_limit, self.rate_window, self.clock = rate_limit, rate_window, clock
        self.limits, self.game_module, self.domain = limits, game_module, domain
        if isinstance(provider, str):  # the provider the user configured (retrieval.yaml), else local
            provider = configured_provider()
        # Searches rank with the retriever (FTS5 + embeddings + evidence); the vector index it holds
        # loads once per tool, so a long-lived MCP server pays for it once.
        # What a hit serves (skillstudio.review.serving): a skill awaiting review its last approved
        # revision; one never approved only when serve_unapproved (docs/review.md).
        self.retriever = Retriever(self.repository, provider, serve_unapproved=serve_unapproved)
        # The write budget lives in the library (studio_agent_writes), one per agent id, shared by
        # every tool and every process serving that agent (docs/review.md).

    # --- search --------------------------------------------------------------------------------

    def skill_search(
        self,
        query: str,
        *,
        domain: str | None = None,
        game_module: str | None = None,
        tags: list[str] | None = None,
        limit: int = 5,
    ) -> list[dict[str, Any]]:
        """Skills for ``query``, best first, ranked by the retriever (docs/retrieval.md) with their real
        scores; never rejected ones. ``tags`` keeps only skills carrying all of them.

        Each hit's content is what it serves (:func:`skillstudio.review.serving.served_content`):
        for a skill whose change awaits review, its last approved revision (``served_version``
        is that revision's version; ``version`` and ``review_state`` stay the skill's current ones, as
        ``skill_update`` compares against them); a withheld hit is left out."""
        query = _text(query, "query", self.limits.query, required=False)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= self.limits.results:
            raise AgentToolError("invalid", f"limit: an integer in 1..{self.limits.results}")
        domain_value = _domain(domain) if domain is not None else None
        module = _text(game_module, "game_module", 32) if game_module is not None else None
        tag_filter = set(_tags(tags, self.limits)) if tags else set()
        if not query.strip():  # nothing to rank on: the served skills by name, as a listing
            listed = self.repository.query(
                SkillQuery(
                    domains=(domain_value,) if domain_value else (),
                    game_modules=(module,) if module else (),
                    tags=tuple(sorted(tag_filter)),
                    review_states=SERVED_STATES,
                    sort=SortKey.NAME,
                    limit=limit,
                )
            )
            scored: list[tuple[str, float | None, dict[str, float | None] | None]] = [
                (i, None, None) for i in listed.ids
            ]
        else:
            result = self.retriever.retrieve(
                query, domain=domain_value, game_module=module, k=limit if not tag_filter else MAX_K
            )
            scored = [(hit.skill_id, hit.score.final, hit.score.as_dict()) for hit in result.hits]
        out: list[dict[str, Any]] = []
        for skill_id, score, breakdown in scored:
            try:
                current = self.repository.get(skill_id)
            except (SkillNotFound, InvalidStoredSkill):
                continue  # removed meanwhile, or a malformed engine row: never served
            skill = served_content(self.repository, current, serve_unapproved=self.retriever.serve_unapproved)
            if skill is None:
                continue  # withheld: rejected, or never approved with serve_unapproved=False
            if tag_filter and not tag_filter <= set(skill.tags):
                continue
            body = skill.body
            out.append(
                {
                    "id": skill.id,
                    "version": current.version,  # pass it to skill_update: a stale read is refused
                    "name": skill.name,
                    "score": None if score is None else round(score, 4),
                    "score_breakdown": breakdown,
                    "tags": list(skill.tags),
                    "confidence": skill.confidence.value,
                    "created_by": skill.created_by,
                    "review_state": current.review_state.value if current.review_state else None,
                    **({"served_version": skill.version} if skill is not current else {}),
                    "description": skill.description,
                    **(
                        {"instructions": body.instructions}
                        if isinstance(body, Instructions)
                        else {"body": skill_to_document(skill)["body"]}
                    ),
                }
            )
            if len(out) >= limit:
                break
        return out

    # --- create --------------------------------------------------------------------------------

    def skill_create(
        self,
        name: str,
        description: str,
        instructions: str,
        *,
        tags: list[str] | None = None,
        tools: list[str] | None = None,
        model: str | None = None,
        references: list[str] | None = None,
    ) -> dict[str, Any]:
        """Create an Instructions skill, pending review, created by this agent."""
        lim = self.limits
        fields: _Content = {
            "name": _text(name, "name", lim.name, single_line=True),
            "description": _text(description, "description", lim.description),
            "instructions": _text(instructions, "instructions", lim.instructions),
            "tags": _tags(tags, lim),
            "tools": _names(tools, "tools", lim.tools, lim.tool),
            "model": None if model is None else _text(model, "model", lim.model, single_line=True),
            "references": self._references(references),
        }
        digest = content_hash(self.domain, self.game_module, fields)
        existing = self._find_hash(digest, fields["name"])
        if existing is not None:
            return {"id": existing, "status": "duplicate", "review_state": self._state(existing), "sha256": digest}
        skill = Skill(
            id=new_skill_id(),
            domain=self.domain,
            name=fields["name"],
            description=fields["description"],
            body=Instructions(
                fields["instructions"], tuple(fields["tools"]), fields["model"], tuple(fields["references"])
            ),
            provenance=Provenance(Source.llm_discovered(), self.game_module, "", fields["model"]),
            created_at=utc_now(),
            tags=tuple(fields["tags"]),
            created_by=self.agent_id,  # from the caller's identity, never the payload
            review_state=ReviewState.PENDING,
        )
        skill = _validated(skill)
        stored = self._write(lambda: self.repository.create(skill, message=f"created by agent {self.agent_id}"))
        answer: dict[str, Any] = {"id": stored.id, "status": "created", "review_state": "pending", "sha256": digest}
        return self._embedded(self._linted(answer, stored), stored)

    # --- update --------------------------------------------------------------------------------

    def skill_update(self, id: str, *, version: int | None = None, **changes: Any) -> dict[str, Any]:
        """Partial update: only the given fields change. The skill goes (back) to pending.

        ``version`` is the content version the agent read (``skill_search`` gives it): if the
        skill changed since, nothing is written and the answer is a ``conflict`` naming the
        current version. Without it, the fields are applied to the skill as it is now."""
        unknown = sorted(set(changes) - set(_UPDATABLE))
        if unknown:
            raise AgentToolError("invalid", f"unknown or read-only fields: {', '.join(unknown)}")
        changes = {key: value for key, value in changes.items() if value is not None}
        if not changes:
            raise AgentToolError("invalid", "nothing to update: give at least one field")
        skill_id = _text(id, "id", 64, single_line=True)
        if version is not None and (not isinstance(version, int) or isinstance(version, bool) or version < 0):
            raise AgentToolError("invalid", "version: the skill's version as skill_search gave it (an integer >= 0)")
        try:
            current = self.repository.get(skill_id)
        except SkillNotFound:
            raise AgentToolError("not_found", f"no skill with id {skill_id!r}") from None
        if current.review_state is ReviewState.REJECTED:  # not served, so not there for agents
            raise AgentToolError("not_found", f"no skill with id {skill_id!r}")
        if version is not None and version != current.version:
            raise _conflict(skill_id, version, current.version)
        lim, edited = self.limits, current
        if "name" in changes:
            edited = replace(edited, name=_text(changes["name"], "name", lim.name, single_line=True))
        if "description" in changes:
            edited = replace(edited, description=_text(changes["description"], "description", lim.description))
        if "tags" in changes:
            edited = replace(edited, tags=tuple(_tags(changes["tags"], lim)))
        body_changes = {key: changes[key] for key in ("instructions", "tools", "model", "references") if key in changes}
        if body_changes:
            if not isinstance(current.body, Instructions):
                raise AgentToolError("invalid", f"{', '.join(body_changes)}: only Instructions skills have these")
            body = current.body
            if "instructions" in body_changes:
                body = replace(body, instructions=_text(body_changes["instructions"], "instructions", lim.instructions))
            if "tools" in body_changes:
                body = replace(body, tools=tuple(_names(body_changes["tools"], "tools", lim.tools, lim.tool)))
            if "model" in body_changes:
                body = replace(body, model=_text(body_changes["model"], "model", lim.model, single_line=True))
            if "references" in body_changes:
                body = replace(body, references=tuple(self._references(body_changes["references"])))
            edited = replace(edited, body=body)
        if current.created_by != self.agent_id:  # the edit policy (docs/review.md): own skills only;
            # after the arguments' checks, before any write or rate-limit slot
            raise AgentToolError(
                "not_allowed",
                f"skill {skill_id!r} was created by {current.created_by or 'someone else'!r}: an agent may update only "
                "the skills it created (no field, name and tags included, of anyone else's); nothing was written. "
                "Create your own variant with skill_create instead",
            )
        if edited == current:
            return {"id": current.id, "status": "unchanged", "review_state": self._state(current.id), "changed": []}
        edited = _validated(edited)
        try:
            # update_pending: the content change and "back to pending" in one transaction (the only
            # review change an agent makes; the repository refuses it any other).
            stored = self._write(
                lambda: self.repository.reviews.update_pending(edited, message=f"updated by agent {self.agent_id}")
            )
        except ConflictError as error:
            raise _conflict(skill_id, edited.version, error.theirs.version) from None
        except SkillNotFound:
            raise AgentToolError("not_found", f"no skill with id {skill_id!r} (deleted meanwhile)") from None
        changed = [key for key in _UPDATABLE if key in changes]
        answer: dict[str, Any] = {
            "id": stored.id,
            "status": "updated",
            "version": stored.version,
            "review_state": "pending",
            "changed": changed,
        }
        # Only the vectors whose text changed are recomputed: the description's only when the
        # description changed (seed 001), the label's when the name or tags did.
        return self._embedded(self._linted(answer, stored), stored)

    # --- guard rails ---------------------------------------------------------------------------

    def _write(self, store: Callable[[], Skill]) -> Skill:
        """Take a rate-limit slot (in the library, one transaction), then write; a write that fails
        gives the slot back, so only stored writes count. Lock timeouts become ``busy``."""
        try:
            slot = self.repository.agent_writes.take(
                self.agent_id, self.clock(), limit=self.rate_limit, window=self.rate_window
            )
        except StorageError as error:
            raise _busy(error) if _is_busy(error) else error from None
        if isinstance(slot, float):
            raise AgentToolError(
                "rate_limited",
                f"at most {self.rate_limit} create/update per {self.rate_window:g} s; retry in {slot:.0f} s",
            )
        try:
            return store()
        except BaseException as error:
            with contextlib.suppress(LibraryError):  # the lock again: the slot stays taken, at worst one write too few
                self.repository.agent_writes.release(slot)
            if isinstance(error, StorageError) and _is_busy(error):
                raise _busy(error) from None
            raise

    def _linted(self, answer: dict[str, Any], skill: Skill) -> dict[str, Any]:
        """Lint the stored skill and store its findings. The write already committed, so a failure
        here (the library's lock) is a warning in the answer, never an error."""
        try:
            answer["risk_findings"] = len(Linter(repository=self.repository).lint_and_store(skill))
        except LibraryError as error:
            answer["risk_findings"] = None
            answer.setdefault("warnings", []).append(f"risk findings not stored: {error}; a reviewer will lint it")
        return answer

    def _find_hash(self, digest: str, name: str) -> str | None:
        """A served skill with exactly this content (same content means same name: look there)."""
        with self.repository.database.read() as session:
            ids = list(session.scalars(select(SkillRow.id).where(SkillRow.name == name).limit(200)))
        for skill in self.repository.get_many(ids):
            if not isinstance(skill.body, Instructions) or skill.review_state is ReviewState.REJECTED:
                continue
            fields: _Content = {
                "name": skill.name,
                "description": skill.description,
                "instructions": skill.body.instructions,
                "tags": list(skill.tags),
                "tools": list(skill.body.tools),
                "model": skill.body.model,
                "references": list(skill.body.references),
            }
            if content_hash(skill.domain, skill.game_module, fields) == digest:
                return skill.id
        return None

    def _references(self, value: object) -> list[str]:
        refs = _names(value, "references", self.limits.references, 64)
        for ref in refs:
            if not self.repository.exists(ref):
                raise AgentToolError("invalid", f"references: no skill {ref!r}")
        return refs

    def _state(self, skill_id: str) -> str | None:
        state = self.repository.get(skill_id).review_state
        return state.value if state else None

    def _embedded(self, answer: dict[str, Any], skill: Skill) -> dict[str, Any]:
        """The answer, after computing the new description's vector. The write already stands, so a
        provider failure is reported in the answer, not raised as if nothing had been stored."""
        try:
            problem = embed_now(self.repository, self.retriever.provider, [skill.id])
        except LibraryError as error:  # the lock: the skill stands, its vector comes later
            problem = f"no vectors were stored ({error}); run `skillstudio embed` later"
            answer.setdefault("warnings", []).append(f"embedding not stored: {error}")
        if self.retriever.provider is not None:
            answer["embedding"] = problem or f"stored ({self.retriever.provider.model_id})"
        return answer


def _conflict(skill_id: str, read: int, current: int) -> AgentToolError:
    return AgentToolError(
        "conflict",
        f"skill {skill_id!r} changed since you read it (you read version {read}, it is now version {current}); "
        "nothing was written: search it again and retry",
    )


def _is_busy(error: BaseException) -> bool:
    return isinstance(error, LibraryBusy) or (isinstance(error, StorageError) and "database is locked" in str(error))


def _busy(error: BaseException) -> AgentToolError:
    return AgentToolError(
        "busy", f"the library is busy (another program is writing); nothing was written, retry soon: {error}"
    )


class _Content(TypedDict):
    """What content_hash covers: the fields an agent writes."""

    name: str
    description: str
    instructions: str
    tags: list[str]
    tools: list[str]
    model: str | None
    references: list[str]


def content_hash(domain: Domain, game_module: str, fields: Mapping[str, Any]) -> str:
    """SHA-256 of the content and its scope (RFC 004): what makes two entries the same."""
    content = {
        key: fields[key] for key in ("name", "description", "instructions", "tags", "tools", "model", "references")
    }
    payload = json.dumps({"scope": [domain.value, game_module], "content": content}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


# --- validation of untrusted input --------------------------------------------------------------


def _text(value: object, name: str, limit: int, *, single_line: bool = False, required: bool = True) -> str:
    if not isinstance(value, str):
        raise AgentToolError("invalid", f"{name}: a string is required")
    value = unicodedata.normalize("NFC", value)
    if required and not value.strip():
        raise AgentToolError("invalid", f"{name}: must not be empty")
    if len(value) > limit:
        raise AgentToolError("invalid", f"{name}: {len(value)} characters, at most {limit}")
    for char in value:
        category = unicodedata.category(char)
        if category == "Cc" and (single_line or char not in "\n\t"):
            raise AgentToolError("invalid", f"{name}: control character U+{ord(char):04X}")
        if category in ("Cs", "Co", "Cn"):
            raise AgentToolError("invalid", f"{name}: invalid character U+{ord(char):04X}")
    return value.strip() if single_line else value


def _names(value: object, name: str, count: int, length: int) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > count:
        raise AgentToolError("invalid", f"{name}: a list of at most {count} strings")
    return list(dict.fromkeys(_text(item, f"{name}[{i}]", length, single_line=True) for i, item in enumerate(value)))


def _tags(value: object, limits: Limits) -> list[str]:
    tags = _names(value, "tags", limits.tags, limits.tag)
    for tag in tags:
        if not _TAG.fullmatch(tag):
            raise AgentToolError("invalid", f"tags: {tag!r} is not lower-case letters, digits and -_.:")
    return tags


def _domain(value: object) -> Domain:
    if not isinstance(value, str):
        raise AgentToolError("invalid", "domain: a string is required")
    try:
        return Domain.parse(value)
    except ValueError as error:
        raise AgentToolError("invalid", f"domain: {error}") from None


def _validated(skill: Skill) -> Skill:
    """The model's own validation, on the skill as a document (like any untrusted data)."""
    try:
        return replace(parse_skill(skill_to_document(skill)), review_state=skill.review_state, version=skill.version)
    except ValidationError as error:
        raise AgentToolError("invalid", str(error)) from None


__all__ = [
    "DEFAULT_RATE_LIMIT",
    "DEFAULT_RATE_WINDOW",
    "RESERVED_AGENT_IDS",
    "AgentSkillTool",
    "AgentToolError",
    "InvalidAgentId",
    "Limits",
    "check_agent_id",
    "content_hash",
    "reserved_agent_ids",
]
