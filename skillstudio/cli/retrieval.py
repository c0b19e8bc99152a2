"""``skillstudio embed``, ``retrieve`` and ``retrieval-eval``: what the LLM would receive (docs/retrieval.md)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from skillstudio.cli.arguments import whole_number
from skillstudio.cli.output import JSON_VERSION, dump_json
from skillstudio.cli.progress import ProgressLine
from skillstudio.model import Domain, Issue, SituationSignature, ValidationError, parse_situation
from skillstudio.retrieval import (
    DEFAULT_BUDGET,
    PROVIDER_KINDS,
    EmbeddingProvider,
    Mode,
    ProviderConfig,
    ProviderError,
    Retriever,
    catalog,
    embed_library,
    format_as_context,
    make_provider,
    result_to_json,
    skill_content,
)
from skillstudio.retrieval.evaluation import EVALUATED_MODES, evaluate, load_queries
from skillstudio.retrieval.retriever import MAX_K
from skillstudio.store import Database, SkillRepository

Handler = Callable[[argparse.Namespace, Database], int]
MAX_SITUATION_BYTES = 64 * 1024


def add_commands(
    commands: Any, common: argparse.ArgumentParser, as_json: argparse.ArgumentParser
) -> dict[str, Handler]:
    provider = argparse.ArgumentParser(add_help=False)
    group = provider.add_argument_group("embedding provider (default: the settings file, else local)")
    group.add_argument("--provider", choices=PROVIDER_KINDS, help="local (offline WordLlama), openai, ollama, none")
    group.add_argument("--model", metavar="M", help="the remote provider's model (its model_id)")
    group.add_argument("--base-url", metavar="URL", help="the remote provider's address")
    group.add_argument("--api-key-env", metavar="VAR", help="environment variable holding the API key (openai)")
    group.add_argument("--timeout", type=float, metavar="S", help="seconds per request to a remote provider")

    embed = commands.add_parser(
        "embed", parents=[common, as_json, provider], help="compute the vectors that are missing or stale"
    )
    embed.add_argument("--all", action="store_true", help="re-embed every skill, not only missing or stale ones")
    embed.add_argument(
        "--batch", type=whole_number("--batch", 1, 10_000), default=512, metavar="N", help="descriptions per batch"
    )
    embed.add_argument("--quiet", action="store_true", help="no progress output")

    retrieve = commands.add_parser(
        "retrieve", parents=[common, as_json, provider], help="the skills a query retrieves, and the prompt text"
    )
    retrieve.add_argument("query", metavar="QUERY", nargs="+")
    retrieve.add_argument("--domain", type=_domain, help="ai | content")
    retrieve.add_argument("--game-module", metavar="M", help="ra1, td, ...")
    retrieve.add_argument(
        "-k", type=whole_number("-k", 1, MAX_K), default=5, metavar="N", help="how many skills (default 5)"
    )
    retrieve.add_argument("--mode", type=_mode, default=Mode.HYBRID, help="hybrid (default) | fts | semantic | tags")
    retrieve.add_argument("--role", metavar="R", help="only skills for this role (SKILL.md roles), seed 004")
    retrieve.add_argument(
        "--budget",
        type=whole_number("--budget", 0, 1_000_000),
        default=DEFAULT_BUDGET,
        metavar="CHARS",
        help="prompt budget (4000)",
    )
    retrieve.add_argument(
        "--format", choices=("table", "context", "catalog"), default="table", help="what to print (default table)"
    )
    retrieve.add_argument(
        "--situation", metavar="JSON|@FILE", help="a SituationSignature to match StrategicPattern skills against"
    )
    retrieve.add_argument(
        "--content", metavar="NAME", help="seed 002's skill tool: the full content of one retrieved skill, by name"
    )

    evaluation = commands.add_parser(
        "retrieval-eval",
        parents=[common, as_json, provider],
        help="recall@k, MRR and nDCG of each mode on labelled queries",
    )
    evaluation.add_argument("queries", metavar="QUERIES", type=Path, help="a YAML or JSON file of labelled queries")
    evaluation.add_argument("-k", type=whole_number("-k", 1, MAX_K), default=5, metavar="N", help="cut-off (default 5)")
    return {"embed": _embed, "retrieve": _retrieve, "retrieval-eval": _evaluate}


# --- commands ------------------------------------------------------------------------------------


def _embed(args: argparse.Namespace, database: Database) -> int:
    repository = SkillRepository(database)
    provider = _provider(args)
    if provider is None:
        print("skillstudio: the provider is `none`: there is nothing to embed with", file=sys.stderr)
        return 1
    bar = ProgressLine(sys.stderr, quiet=args.quiet or args.json, unit="skills")
    last = None
    try:
        for progress in embed_library(repository, provider, everything=args.all, batch=args.batch):
            last = progress
            bar.show(progress.done + len(progress.skipped), progress.total, f"embedding with {provider.model_id}")
    except ProviderError as error:
        bar.done()
        stored = last.done if last else 0
        print(f"skillstudio: {error}", file=sys.stderr)
        print(
            f"skillstudio: {stored} vectors were stored before the failure; run `embed` again to resume",
            file=sys.stderr,
        )
        return 1
    except KeyboardInterrupt:
        bar.done()
        stored = last.done if last else 0
        print(f"skillstudio: interrupted; {stored} vectors stored; run `embed` again to resume", file=sys.stderr)
        return 130
    bar.done()
    status = repository.embeddings.status(provider.model_id)
    done = last.done if last else 0
    skipped = list(last.skipped) if last else []
    if args.json:
        print(
            dump_json(
                {
                    "format": "skillstudio.embed",
                    "version": JSON_VERSION,
                    "model_id": provider.model_id,
                    "embedded": done,
                    "skipped": [{"id": i, "reason": r} for i, r in skipped],
                    "status": _status_document(status),
                }
            )
        )
        return 0
    print(f"embedded {done} skills with {provider.model_id}")
    for skill_id, reason in skipped:
        print(f"  skipped {skill_id}: {reason}")
    print(_status_line(status))
    return 0


def _retrieve(args: argparse.Namespace, database: Database) -> int:
    repository = SkillRepository(database)
    situation = _situation(args.situation) if args.situation else None
    retriever = Retriever(repository, _provider(args))
    query = " ".join(args.query)
    result = retriever.retrieve(
        query,
        domain=args.domain,
        game_module=args.game_module,
        k=args.k,
        mode=args.mode,
        role=args.role,
        situation=situation,
    )
    skills = retriever.load(result)
    context = format_as_context(skills, args.budget)
    listing = catalog(skills)
    status = retriever.embedding_status()
    if args.json:
        document: dict[str, Any] = {"format": "skillstudio.retrieval", "version": JSON_VERSION}
        document.update(result_to_json(result))
        document.update(
            {
                "context": context.text,
                "context_size": context.size,
                "budget": context.budget,
                "included": list(context.included),
                "left_out": [{"id": item.skill_id, "name": item.name, "size": item.size} for item in context.left_out],
                "catalog": listing.text,
                "catalog_size": listing.size,
                "full_size": listing.full_size,
                "embeddings": _status_document(status) if status else None,
            }
        )
        print(dump_json(document))
        return 0
    if args.content is not None:
        answer = skill_content(skills, args.content)
        print(answer)
        return 1 if answer.startswith("Unknown skill:") else 0
    if args.format == "context":
        print(context.text)
        print(f"\n[{context.size} of {context.budget} characters{_left_out(context.left_out)}]", file=sys.stderr)
        return 0
    if args.format == "catalog":
        print(listing.text)
        print(f"\n[catalog {listing.size} characters; full content {listing.full_size}]", file=sys.stderr)
        return 0
    _print_table(result)
    for note in result.notes:
        print(f"note: {note}")
    if status is not None:
        print(_status_line(status))
    print(f"prompt: {context.size} of {context.budget} characters{_left_out(context.left_out)}")
    return 0


def _evaluate(args: argparse.Namespace, database: Database) -> int:
    repository = SkillRepository(database)
    queries = load_queries(args.queries, repository)
    retriever = Retriever(repository, _provider(args))
    started = time.perf_counter()
    scores = evaluate(retriever, queries, k=args.k, modes=EVALUATED_MODES)
    seconds = time.perf_counter() - started
    status = retriever.embedding_status()
    if args.json:
        print(
            dump_json(
                {
                    "format": "skillstudio.retrieval-eval",
                    "version": JSON_VERSION,
                    "queries": len(queries),
                    "k": args.k,
                    "model_id": retriever.model_id,
                    "embeddings": _status_document(status) if status else None,
                    "modes": [
                        {
                            "mode": s.mode.value,
                            "baseline": s.mode is Mode.RRF,
                            "recall": round(s.recall, 4),
                            "mrr": round(s.mrr, 4),
                            "ndcg": round(s.ndcg, 4),
                            "notes": sorted(s.notes),
                            "misses": [{"query": m.query, "expected": m.expected, "got": m.got} for m in s.misses],
                        }
                        for s in scores
                    ],
                }
            )
        )
        return 0
    print(f"{len(queries)} labelled queries, k={args.k}, embeddings: {retriever.model_id or 'none'} ({seconds:.1f} s)")
    if status is not None and status.lacking:
        print(_status_line(status))
    print(f"{'mode':<22}{'recall@' + str(args.k):>10}{'MRR':>8}{'nDCG@' + str(args.k):>9}{'misses':>8}")
    for s in scores:
        label = "rrf (baseline)" if s.mode is Mode.RRF else s.mode.value
        print(f"{label:<22}{s.recall:>10.3f}{s.mrr:>8.3f}{s.ndcg:>9.3f}{len(s.misses):>8}")
    for s in scores:
        for note in sorted(s.notes):
            print(f"note ({s.mode.value}): {note}")
    hybrid = next(s for s in scores if s.mode is Mode.HYBRID)
    if hybrid.misses:
        print(f"\nmissed by hybrid (nothing acceptable in the top {args.k}):")
        for miss in hybrid.misses:
            print(
                f"  {miss.query!r}\n    expected: {'; '.join(miss.expected)}\n    got: {'; '.join(miss.got) or '(nothing)'}"
            )
    return 0


def embed_written(repository: SkillRepository, ids: list[str]) -> str | None:
    """Vectors for skills a command just wrote (an import), with the configured provider, in
    batches. A message when it could not; the write stands either way."""
    if not ids:
        return None
    from skillstudio.retrieval import embed_now
    from skillstudio.retrieval.settings import configured_provider

    try:
        provider = configured_provider()
    except (ValidationError, ValueError) as error:
        return f"no vectors were computed: the retrieval settings are invalid ({error})"
    return embed_now(repository, provider, ids)


# --- pieces ------------------------------------------------------------------------------------


def _provider(args: argparse.Namespace) -> EmbeddingProvider | None:
    from skillstudio.retrieval.settings import config_from_options, load_provider_config

    base = load_provider_config()
    config: ProviderConfig = config_from_options(
        base,
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        api_key_env=args.api_key_env,
        timeout=args.timeout,
    )
    return make_provider(config)


def _situation(raw: str) -> SituationSignature:
    where = "--situation"
    if raw.startswith("@"):
        path = Path(raw[1:])
        where = str(path)
        try:
            if path.stat().st_size > MAX_SITUATION_BYTES:
                raise ValidationError([Issue("", f"larger than {MAX_SITUATION_BYTES} bytes")], context=str(path))
            raw = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ValidationError([Issue("", f"cannot be read ({error})")], context=str(path)) from None
    try:
        data = json.loads(raw)
    except ValueError as error:
        raise ValidationError([Issue("", f"not valid JSON ({error})")], context=where) from None
    try:
        return parse_situation(data)
    except ValidationError as error:
        raise ValidationError(error.issues, context=where) from None


def _print_table(result: Any) -> None:
    if not result.hits:
        print("no skills retrieved")
        return
    print(f"mode {result.used.value}" + (f" (asked {result.mode.value})" if result.used is not result.mode else ""))
    print(f"{'#':>2} {'score':>6} {'fts':>5} {'sem':>5} {'sit':>5} {'qual':>5}  {'confidence':<11} name")
    for rank, hit in enumerate(result.hits, start=1):
        s = hit.score
        print(
            f"{rank:>2} {s.final:>6.3f} {_cell(s.fts if s.tags is None else s.tags)} {_cell(s.semantic)}"
            f" {_cell(s.situation)} {_cell(s.quality)}  {hit.confidence:<11} {hit.name}  [{hit.skill_id[:8]}]"
        )


def _cell(value: float | None) -> str:
    return f"{'—':>5}" if value is None else f"{value:>5.2f}"


def _left_out(items: Any) -> str:
    return f"; left out: {', '.join(item.name for item in items)}" if items else ""


def _status_line(status: Any) -> str:
    if not status.lacking:
        return f"embeddings: all {status.total} skills have a current vector for {status.model_id}"
    return (
        f"embeddings: {status.lacking} of {status.total} skills lack a current vector for {status.model_id}"
        f" ({status.missing} missing, {status.stale} stale); run `skillstudio embed`"
    )


def _status_document(status: Any) -> dict[str, Any]:
    return {
        "model_id": status.model_id,
        "total": status.total,
        "current": status.current,
        "stale": status.stale,
        "missing": status.missing,
        "other_models": status.other_models,
    }


def _domain(text: str) -> Domain:
    try:
        return Domain.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _mode(text: str) -> Mode:
    try:
        mode = Mode.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    if mode is Mode.RRF:
        raise argparse.ArgumentTypeError("rrf is the evaluation baseline; choose hybrid, fts, semantic or tags")
    return mode


__all__ = ["add_commands", "embed_written"]
