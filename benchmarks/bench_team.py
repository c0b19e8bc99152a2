"""Many writers on one library: designers through the repository, agents through MCP.

``python -m benchmarks.bench_team [--db PATH_OR_URL] [--designers 4] [--agents 4] [--seconds 60]``

Designers (processes) read a random skill and save it with a unique token in its description,
trusting the repository's optimistic check. Agents (processes, each an MCP client session over
stdio against ``skillstudio mcp``, the SDK a real agent uses) create skills with ``skill_create``
and update their own with ``skill_update``, giving the version they last saw. Designers pick
among every skill, agents' included, so both kinds of writer collide.

Reported per kind: acknowledged writes, writes/s, p50/p95 latency of a write, conflicts, busy
refusals. Then every acknowledged token must be found in its skill's revision history (each
write records one revision in the same transaction); one that is not is a *lost update*.

The library is a fresh copy of the sample for a path (default: a temporary SQLite file), or the
team library at a ``postgresql+psycopg://`` URL (its roles set up, each writer logging in as a
member of its own: ``designer-N``, ``agent-N``; the server must let them in, e.g. through
``~/.pgpass``). The limit printed beside the figures
is the same number of processes doing bare single-row UPDATEs in their own transactions on the
same backend, with no checks: what the storage alone can acknowledge.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import random
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

TOKEN_MARK = " #"


def with_token(text: str, token: str) -> str:
    return f"{text.split(TOKEN_MARK)[0]}{TOKEN_MARK}{token}"


def save_token(repository: Any, skill: Any, token: str) -> str:
    """Save ``token`` into the skill's description as a person would: "saved", or "conflict"
    (someone saved it since it was read), or "busy" (the library stayed locked)."""
    from skillstudio.store import ConflictError, LibraryBusy

    try:
        repository.update(replace(skill, description=with_token(skill.description, token)))
    except ConflictError:
        return "conflict"
    except LibraryBusy:
        return "busy"
    return "saved"


def _as_member(db: str, name: str) -> str:
    """A team library's URL as its member ``name`` (the server records who writes); a path as it is."""
    if "://" not in db:
        return db
    from sqlalchemy.engine import make_url

    return make_url(db).set(username=name).render_as_string(hide_password=False)


def _designer(db: str, number: int, seconds: float, out: str) -> None:
    from skillstudio.store import Actor, Database, SkillRepository

    db = _as_member(db, f"designer-{number}")

    writes: list[tuple[str, str, float]] = []  # (skill id, token, seconds the save took)
    conflicts = busy = 0
    rng = random.Random(number)
    with Database(db) as database:
        repository = SkillRepository(database, Actor(f"designer-{number}"))
        deadline = time.monotonic() + seconds
        ids: list[str] = []
        refreshed = 0.0
        sequence = 0
        while time.monotonic() < deadline:
            if time.monotonic() - refreshed > 2:  # agents keep adding skills: pick among them too
                ids = list(repository.query().ids)
                refreshed = time.monotonic()
            skill = repository.get(rng.choice(ids[:16] + ids[-16:]))  # a small pool: writers collide
            sequence += 1
            token = f"d{number}-{sequence}"
            started = time.perf_counter()
            outcome = save_token(repository, skill, token)
            conflicts += outcome == "conflict"
            busy += outcome == "busy"
            if outcome == "saved":
                writes.append((skill.id, token, time.perf_counter() - started))
    Path(out).write_text(json.dumps({"writes": writes, "conflicts": conflicts, "busy": busy}))


def _agent(db: str, number: int, seconds: float, out: str) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    agent_id = f"agent-{number}"
    db = _as_member(db, agent_id)
    writes: list[tuple[str, str, float]] = []
    refused: dict[str, int] = {}
    rng = random.Random(1000 + number)

    async def call(session: ClientSession, tool: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        result = await session.call_tool(tool, arguments)
        data = result.structured_content or {}
        if result.is_error:
            code = str(data.get("error", "error"))
            refused[code] = refused.get(code, 0) + 1
            return None
        return data

    async def work(session: ClientSession) -> None:
        own: dict[str, tuple[int | None, str]] = {}  # id -> (version last seen, description)
        deadline = time.monotonic() + seconds
        sequence = 0
        while time.monotonic() < deadline:
            sequence += 1
            token = f"a{number}-{sequence}"
            started = time.perf_counter()
            if not own or rng.random() < 0.25:
                description = f"What agent {number} found in game {sequence}{TOKEN_MARK}{token}"
                data = await call(
                    session,
                    "skill_create",
                    {
                        "name": f"Agent {number} tactic {sequence}",
                        "description": description,
                        "instructions": f"Open with scouting, then expand ({token}).",
                        "tags": ["bench", f"agent-{number}"],
                    },
                )
                if data is not None and data.get("status") == "created":
                    own[data["id"]] = (None, description)
                    writes.append((data["id"], token, time.perf_counter() - started))
                continue
            skill_id = rng.choice(list(own))
            version, description = own[skill_id]
            description = with_token(description, token)
            arguments: dict[str, Any] = {"id": skill_id, "description": description}
            if version is not None:
                arguments["version"] = version
            data = await call(session, "skill_update", arguments)
            if data is None:  # a conflict: a designer saved it meanwhile; read it again next time
                own[skill_id] = (None, description)
                continue
            own[skill_id] = (data.get("version"), description)
            writes.append((skill_id, token, time.perf_counter() - started))

    async def main() -> None:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "skillstudio", "mcp", "--db", db, "--agent-id", agent_id, "--rate-limit", "1000000"],
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await work(session)

    asyncio.run(main())
    Path(out).write_text(
        json.dumps(
            {
                "writes": writes,
                "conflicts": refused.pop("conflict", 0),
                "busy": refused.pop("busy", 0),
                "refused": refused,
            }
        )
    )


def _bare_updater(db: str, number: int, seconds: float, out: str) -> None:
    """The limit: single-row UPDATEs of the same pool, each its own transaction, no checks."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.exc import OperationalError

    url = db if "://" in db else f"sqlite:///{db}"
    engine = create_engine(url)
    rng = random.Random(number)
    latencies: list[float] = []
    with engine.connect() as connection:
        ids = [row[0] for row in connection.execute(text("SELECT id FROM skills ORDER BY id LIMIT 32"))]
        connection.commit()
        deadline = time.monotonic() + seconds
        sequence = 0
        while time.monotonic() < deadline:
            sequence += 1
            started = time.perf_counter()
            try:
                connection.execute(
                    text("UPDATE skills SET description = :d WHERE id = :i"),
                    {"d": f"bare {number}-{sequence}", "i": rng.choice(ids)},
                )
                connection.commit()
            except OperationalError:  # busy: part of what the limit measures
                connection.rollback()
                continue
            latencies.append(time.perf_counter() - started)
    engine.dispose()
    Path(out).write_text(json.dumps({"writes": [["", "", s] for s in latencies], "conflicts": 0, "busy": 0}))


def _run(target: Any, db: str, count: int, seconds: float, folder: Path, kind: str) -> list[dict[str, Any]]:
    context = multiprocessing.get_context("spawn")
    outputs = [folder / f"{kind}-{n}.json" for n in range(count)]
    processes = [context.Process(target=target, args=(db, n, seconds, str(outputs[n]))) for n in range(count)]
    for process in processes:
        process.start()
    return [{"process": process, "out": out} for process, out in zip(processes, outputs, strict=True)]


def _collect(started: list[dict[str, Any]]) -> list[dict[str, Any]]:
    results = []
    for item in started:
        item["process"].join()
        out = item["out"]
        results.append(
            json.loads(out.read_text()) if out.exists() else {"writes": [], "conflicts": 0, "busy": 0, "failed": True}
        )
    return results


def lost_updates(db: str, writes: list[tuple[str, str, float]]) -> int:
    """How many acknowledged (skill id, token, ...) writes no revision of their skill holds."""
    from skillstudio.store import Database, SkillRepository

    by_skill: dict[str, set[str]] = {}
    for skill_id, token, _seconds in writes:
        by_skill.setdefault(skill_id, set()).add(token)
    lost = 0
    with Database(db) as database:
        repository = SkillRepository(database)
        for skill_id, tokens in by_skill.items():
            seen = {
                str(revision.snapshot.get("description", "")).rsplit(TOKEN_MARK, 1)[-1]
                for revision in repository.history.revisions(skill_id)
            }
            lost += len(tokens - seen)
    return lost


def _percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def _summary(kind: str, results: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    latencies = [w[2] for r in results for w in r["writes"]]
    return {
        "kind": kind,
        "processes": len(results),
        "acknowledged": len(latencies),
        "writes_per_s": len(latencies) / seconds,
        "p50_ms": _percentile(latencies, 0.50) * 1000,
        "p95_ms": _percentile(latencies, 0.95) * 1000,
        "conflicts": sum(r["conflicts"] for r in results),
        "busy": sum(r["busy"] for r in results),
        "failed_processes": sum(1 for r in results if r.get("failed")),
    }


def _prepare(db: str | None, folder: Path, designers: int, agents: int) -> str:
    if db and "://" in db:  # a team library: each writer logs in as a member of its own
        from skillstudio.store import Database, team_roles

        with Database(db) as database:
            team_roles.set_up(database)
            for number in range(designers):
                team_roles.grant(database, f"designer-{number}", "human")
            for number in range(agents):
                team_roles.grant(database, f"agent-{number}", "agent")
        return db
    from skillstudio.library import create_library

    path = Path(db) if db else folder / "team.db"
    if not path.exists():
        create_library(path, sample=True).close()
    return str(path)


def run(db: str | None, designers: int, agents: int, seconds: float) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="skillstudio-team-"))
    target = _prepare(db, folder, designers, agents)
    started = time.monotonic()
    running = _run(_designer, target, designers, seconds, folder, "designer") + _run(
        _agent, target, agents, seconds, folder, "agent"
    )
    results = _collect(running)
    elapsed = time.monotonic() - started
    designer_results, agent_results = results[:designers], results[designers:]
    writes = [tuple(w) for r in results for w in r["writes"]]
    summary = {
        "library": target if "://" not in target else target.split("@")[-1],
        "seconds": seconds,
        "wall_seconds": round(elapsed, 1),
        "designers": _summary("designers", designer_results, seconds),
        "agents": _summary("agents", agent_results, seconds),
        "refused": {k: v for r in agent_results for k, v in r.get("refused", {}).items()},
        "lost_updates": lost_updates(target, writes),  # type: ignore[arg-type]
    }
    limit = _collect(_run(_bare_updater, target, designers + agents, min(seconds, 10.0), folder, "bare"))
    summary["limit"] = _summary("bare UPDATE", limit, min(seconds, 10.0))
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_team", description=__doc__.splitlines()[0])
    parser.add_argument("--db", help="a library path (copied from the sample when missing) or a team library URL")
    parser.add_argument("--designers", type=int, default=4)
    parser.add_argument("--agents", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--quick", action="store_true", help="1 designer, 1 agent, 3 s")
    parser.add_argument("--sizes", nargs="*", help=argparse.SUPPRESS)  # benchmarks.run passes it to all
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out")
    args, _unknown = parser.parse_known_args(argv)
    if args.quick:
        args.designers, args.agents, args.seconds = 1, 1, 3.0
    result = run(args.db, args.designers, args.agents, args.seconds)
    print(f"library: {result['library']}, {result['seconds']:.0f} s of writing ({result['wall_seconds']} s wall)")
    print(
        f"{'writers':<14}{'procs':>6}{'acked':>8}{'writes/s':>10}{'p50 ms':>9}{'p95 ms':>9}{'conflicts':>10}{'busy':>6}"
    )
    for kind in ("designers", "agents", "limit"):
        row = result[kind]
        print(
            f"{row['kind']:<14}{row['processes']:>6}{row['acknowledged']:>8}{row['writes_per_s']:>10.1f}"
            f"{row['p50_ms']:>9.1f}{row['p95_ms']:>9.1f}{row['conflicts']:>10}{row['busy']:>6}"
        )
    if result["refused"]:
        print(f"agents' other refusals: {result['refused']}")
    print(f"lost updates: {result['lost_updates']}")
    args.out.mkdir(parents=True, exist_ok=True)
    backend = "postgresql" if "://" in str(args.db or "") else "sqlite"
    (args.out / f"team-{backend}.json").write_text(json.dumps(result, indent=2))
    return 1 if result["lost_updates"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
