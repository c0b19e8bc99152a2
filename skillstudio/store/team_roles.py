"""Who may do what in a team library on PostgreSQL, enforced by the server itself.

Two group roles hold the privileges; people and agents log in as their own roles, members of
one group (``skillstudio team grant``). The server then decides, whatever a client claims:

* identity: ``created_by``, the audit actor, a revision's author, a reviewer and a run's actor
  are set by triggers from ``current_user``, and ``created_by`` never changes afterwards;
* an agent may read everything and create and update skills, but it holds no DELETE on
  ``skills`` (nor on history, audit or reviews), and cannot record a review decision nor set a
  review state: only "pending", which its own update sends a skill back to (seed 001's
  boundary), even with its own SQL client.

``docs/team-library.md`` lists each role's privileges; :data:`PRIVILEGES` is that list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import Connection, text

from skillstudio.store.errors import TeamRoleError

if TYPE_CHECKING:
    from skillstudio.store.database import Database

HUMAN_ROLE = "skillstudio_human"
AGENT_ROLE = "skillstudio_agent"
KINDS = {"human": HUMAN_ROLE, "agent": AGENT_ROLE}

# What an agent's skill_create / skill_update writes besides the skill itself; everything else
# is read-only to agents. Tables not named here (trash, settings, review decisions, verification
# runs and their games, play imports, team bookkeeping) stay read-only to them.
_AGENT_WRITES = {
    "skills": "INSERT, UPDATE",
    "studio_skill_meta": "INSERT, UPDATE",
    "studio_skill_versions": "INSERT, UPDATE",
    "studio_revisions": "INSERT",
    "studio_audit_log": "INSERT",
    "studio_skill_extras": "INSERT, UPDATE",
    "skill_embeddings": "INSERT, UPDATE, DELETE",  # a changed text replaces its embedding
    "studio_risk_findings": "INSERT, UPDATE, DELETE",  # a changed text replaces its findings
    "studio_agent_writes": "INSERT, UPDATE, DELETE",  # the agents' rate limit: slots taken and expired
    "studio_tag_counts": "INSERT, UPDATE, DELETE",  # kept by triggers that run as the writer
    "studio_creator_counts": "INSERT, UPDATE, DELETE",
    # Derived data that triggers keep as the writer (PL/pgSQL runs with the writer's rights).
    # Sending its own skill back to pending is logged as a "pending" entry; the guard below
    # refuses an agent any other state.
    "studio_review_decisions": "INSERT",
    "studio_skill_search": "INSERT, UPDATE, DELETE",
    "studio_retrieval_changes": "INSERT, UPDATE, DELETE",
    "studio_embedding_meta": "INSERT, UPDATE, DELETE",
    "studio_label_embeddings": "INSERT, UPDATE, DELETE",
    "studio_changes": "UPDATE",
}


@dataclass(frozen=True)
class Privilege:
    role: str
    tables: str
    grants: str


PRIVILEGES = (
    Privilege(HUMAN_ROLE, "every table", "SELECT, INSERT, UPDATE, DELETE; sequences"),
    Privilege(AGENT_ROLE, "every table", "SELECT; sequences"),
    *(Privilege(AGENT_ROLE, table, grants) for table, grants in _AGENT_WRITES.items()),
)

# (table, column set to current_user on INSERT); created_by is also kept on UPDATE.
_IDENTITY_COLUMNS = (
    ("studio_skill_meta", "created_by"),
    ("studio_audit_log", "actor"),
    ("studio_revisions", "author"),
    ("studio_review_decisions", "reviewer"),
    ("studio_verification_runs", "actor"),
    ("studio_trash", "deleted_by"),
)

_ROLE_NAME = re.compile(r"[a-z_][a-z0-9_.-]{0,62}")


def _is_agent() -> str:
    # Direct membership, not pg_has_role: a superuser "has" every role, and is no agent.
    return (
        "EXISTS (SELECT 1 FROM pg_auth_members AS m JOIN pg_roles AS g ON g.oid = m.roleid"
        f" JOIN pg_roles AS r ON r.oid = m.member WHERE g.rolname = '{AGENT_ROLE}' AND r.rolname = current_user)"
    )


def _identity_function() -> str:
    # TG_ARGV[0] names the column: one function serves every table (to_jsonb/jsonb_populate_record
    # set a column chosen at run time without dynamic SQL).
    return f"""
CREATE OR REPLACE FUNCTION studio_server_identity() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    column_name text := TG_ARGV[0];
    actor_kind text := CASE WHEN {_is_agent()} THEN 'agent' ELSE 'human' END;
    patch jsonb;
BEGIN
    IF TG_OP = 'UPDATE' THEN
        patch := jsonb_build_object(column_name, to_jsonb(OLD) -> column_name);
    ELSE
        patch := jsonb_build_object(column_name, current_user::text);
        IF TG_TABLE_NAME = 'studio_audit_log' THEN
            patch := patch || jsonb_build_object('actor_kind', actor_kind);
        ELSIF TG_TABLE_NAME = 'studio_review_decisions' THEN
            patch := patch || jsonb_build_object('reviewer_kind', actor_kind);
        END IF;
    END IF;
    NEW := jsonb_populate_record(NEW, patch);
    RETURN NEW;
END $$"""


def _review_guard_function() -> str:
    # One function for both tables: a skill's review state and the review decisions' log.
    return f"""
CREATE OR REPLACE FUNCTION studio_agent_review_guard() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    state text := to_jsonb(NEW) ->> TG_ARGV[0];
    before text := CASE WHEN TG_OP = 'UPDATE' THEN to_jsonb(OLD) ->> TG_ARGV[0] END;
BEGIN
    IF {_is_agent()} AND state IS DISTINCT FROM 'pending' AND (TG_OP = 'INSERT' OR state IS DISTINCT FROM before) THEN
        RAISE EXCEPTION 'an agent cannot set a review state (%): only a reviewer decides', coalesce(state, 'none')
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END $$"""


def governance_statements() -> list[str]:
    """Idempotent DDL: the two group roles, their privileges and the identity triggers.

    Run by the library's owner after the schema exists (``skillstudio team init``)."""
    statements = [
        *(
            f"DO $$ BEGIN CREATE ROLE {role} NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$"
            for role in (HUMAN_ROLE, AGENT_ROLE)
        ),
        f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {HUMAN_ROLE}, {AGENT_ROLE}",
        f"GRANT USAGE ON SCHEMA public TO {HUMAN_ROLE}, {AGENT_ROLE}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {HUMAN_ROLE}",
        f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {AGENT_ROLE}",
        f"GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO {HUMAN_ROLE}, {AGENT_ROLE}",
        *(f"GRANT {grants} ON {table} TO {AGENT_ROLE}" for table, grants in _AGENT_WRITES.items()),
        _identity_function(),
        _review_guard_function(),
    ]
    for table, column in _IDENTITY_COLUMNS:
        operations = "INSERT OR UPDATE" if column == "created_by" else "INSERT"
        statements += [
            f"DROP TRIGGER IF EXISTS studio_identity ON {table}",
            (
                f"CREATE TRIGGER studio_identity BEFORE {operations} ON {table}"
                f" FOR EACH ROW EXECUTE FUNCTION studio_server_identity('{column}')"
            ),
        ]
    for table, column in (("studio_skill_meta", "review_state"), ("studio_review_decisions", "state")):
        statements += [
            f"DROP TRIGGER IF EXISTS studio_agent_review_guard ON {table}",
            (
                f"CREATE TRIGGER studio_agent_review_guard BEFORE INSERT OR UPDATE ON {table}"
                f" FOR EACH ROW EXECUTE FUNCTION studio_agent_review_guard('{column}')"
            ),
        ]
    return statements


def checked_role_name(name: str) -> str:
    """A login role name SkillStudio will create: lower case, no quoting needed."""
    if not _ROLE_NAME.fullmatch(name or "") or name.startswith("pg_") or name in KINDS.values():
        raise TeamRoleError(
            f"{name!r} cannot be a team member's role: use 1-63 lower-case letters, digits, '_', '.' or '-',"
            " starting with a letter or '_', not 'pg_...' nor a group role's name"
        )
    return name


def grant_statements(name: str, kind: str) -> list[str]:
    """Make ``name`` a login role in exactly one group (a person moved to agents leaves humans).

    No password is set: the administrator sets one with ``ALTER ROLE`` or uses the server's
    own authentication (peer, certificates); SkillStudio never handles it."""
    if kind not in KINDS:
        raise TeamRoleError(f"unknown member kind {kind!r}; use one of {', '.join(KINDS)}")
    role = '"' + checked_role_name(name) + '"'
    other = KINDS["agent" if kind == "human" else "human"]
    return [
        f"DO $$ BEGIN CREATE ROLE {role} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$",
        f"REVOKE {other} FROM {role}",
        f"GRANT {KINDS[kind]} TO {role}",
    ]


def apply(connection: Connection, statements: list[str]) -> None:
    for statement in statements:
        connection.execute(text(statement))


def set_up(database: Database) -> None:
    """The group roles, privileges and identity triggers of a team library, in one transaction."""
    with database.write() as session:
        apply(session.connection(), governance_statements())


def grant(database: Database, name: str, kind: str) -> None:
    with database.write() as session:
        apply(session.connection(), grant_statements(name, kind))


def member_list(database: Database) -> list[tuple[str, str]]:
    with database.read() as session:
        return members(session.connection())


def identity(database: Database) -> tuple[str, str] | None:
    """(role, "human" | "agent") this connection is to a team library; None on a file, or for a
    role in neither group (an administrator). The server records this role, whatever a client says."""
    if database.dialect != "postgresql":
        return None
    with database.read() as session:
        connection = session.connection()
        me = connection.execute(text("SELECT current_user")).scalar_one()
        kinds = dict(members(connection))
    return (me, kinds[me]) if me in kinds else None


def members(connection: Connection) -> list[tuple[str, str]]:
    """(role, kind) of every member of the two groups, by name."""
    rows = connection.execute(
        text(
            "SELECT m.rolname, g.rolname FROM pg_auth_members a JOIN pg_roles m ON m.oid = a.member"
            " JOIN pg_roles g ON g.oid = a.roleid WHERE g.rolname IN (:human, :agent) ORDER BY m.rolname"
        ),
        {"human": HUMAN_ROLE, "agent": AGENT_ROLE},
    )
    kind_of = {role: kind for kind, role in KINDS.items()}
    return [(member, kind_of[group]) for member, group in rows]
