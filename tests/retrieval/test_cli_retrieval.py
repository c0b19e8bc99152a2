"""`skillstudio embed`, `retrieve` and `retrieval-eval` on the sample library, with the real local model."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from skillstudio.cli.main import main as cli
from skillstudio.library import create_library
from skillstudio.paths import resource
from skillstudio.retrieval import LOCAL_MODEL_ID
from skillstudio.store import Database, SkillRepository
from tests.factories import ai_skill

SAMPLE_QUERIES = resource("retrieval", "sample_queries.yaml")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def embedded_sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli-retrieval") / "sample.db"
    with create_library(path, sample=True):
        pass
    assert cli(["embed", "--db", str(path), "--quiet"]) == 0
    return path


@pytest.fixture
def sample(embedded_sample: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "sample.db"
    with sqlite3.connect(embedded_sample) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    return copy


def test_embed_reports_status_and_resumes_only_what_changed(capsys, sample: Path) -> None:
    code, out, _ = run(capsys, "embed", "--db", str(sample), "--json")
    assert code == 0
    document = json.loads(out)
    assert document["format"] == "skillstudio.embed" and document["model_id"] == LOCAL_MODEL_ID
    assert document["embedded"] == 0  # everything was current already
    assert document["status"]["current"] == document["status"]["total"] == 47
    with Database(sample) as database:
        repository = SkillRepository(database)
        skill = repository.get(repository.query().ids[0])
        from dataclasses import replace

        repository.update(replace(skill, description=skill.description + " Also works on snow maps."))
    code, out, _ = run(capsys, "embed", "--db", str(sample), "--json")
    assert json.loads(out)["embedded"] == 1  # only the changed description (seed 001)
    code, out, _ = run(capsys, "embed", "--db", str(sample), "--all", "--json")
    assert json.loads(out)["embedded"] == 47


def test_retrieve_json_has_scores_breakdown_context_and_left_out(capsys, sample: Path) -> None:
    code, out, _ = run(
        capsys,
        "retrieve",
        "enemy",
        "aircraft",
        "keep",
        "hitting",
        "my",
        "ore",
        "trucks",
        "--db",
        str(sample),
        "--domain",
        "ai",
        "-k",
        "5",
        "--budget",
        "2500",
        "--json",
    )
    assert code == 0
    document = json.loads(out)
    assert document["format"] == "skillstudio.retrieval"
    assert document["mode"] == document["used_mode"] == "hybrid"
    assert document["model_id"] == LOCAL_MODEL_ID
    results = document["results"]
    assert 1 <= len(results) <= 5
    assert all(r["domain"] == "ai_strategy" for r in results)
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True)
    for result in results:
        breakdown = result["breakdown"]
        assert set(breakdown) >= {"fts", "semantic", "quality", "evidence", "relevance", "final"}
        assert breakdown["final"] == pytest.approx(breakdown["relevance"] * breakdown["evidence"], abs=1e-5)
    assert document["context_size"] <= 2500 == document["budget"]
    assert document["context"].startswith("Previously successful strategies in similar situations:")
    assert len(document["included"]) + len(document["left_out"]) == len(results)
    assert document["embeddings"]["missing"] == 0


def test_retrieve_formats(capsys, sample: Path) -> None:
    code, out, err = run(
        capsys, "retrieve", "mission", "with", "waves", "of", "attackers", "--db", str(sample), "--format", "context"
    )
    assert code == 0 and "Outcome:" in out and "characters" in err
    code, out, err = run(capsys, "retrieve", "mission", "waves", "--db", str(sample), "--format", "catalog")
    assert code == 0 and out.startswith("Available skills") and "\n- " in out and "full content" in err
    code, out, _ = run(capsys, "retrieve", "mission", "waves", "--db", str(sample))
    assert code == 0 and "score" in out and "embeddings: all 47 skills" in out


def test_retrieve_says_how_many_lack_a_vector(capsys, sample: Path) -> None:
    with Database(sample) as database:
        SkillRepository(database).create(ai_skill(name="A fresh skill nobody embedded"))
    code, out, _ = run(capsys, "retrieve", "fresh", "skill", "--db", str(sample))
    assert code == 0 and "1 of 48 skills lack a current vector" in out


def test_retrieve_with_provider_none_falls_back_to_fts(capsys, sample: Path) -> None:
    code, out, _ = run(capsys, "retrieve", "yak", "rush", "--db", str(sample), "--provider", "none", "--json")
    document = json.loads(out)
    assert code == 0 and document["used_mode"] == "fts" and document["model_id"] is None
    assert any("FTS5" in note for note in document["notes"])
    assert all(r["breakdown"]["semantic"] is None for r in document["results"])


def test_retrieve_unreachable_remote_provider_names_the_url_and_falls_back(capsys, sample: Path) -> None:
    with __import__("socket").socket() as probe:  # a free port with nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code, out, _ = run(
        capsys,
        "retrieve",
        "yak",
        "rush",
        "--db",
        str(sample),
        "--provider",
        "ollama",
        "--base-url",
        f"http://127.0.0.1:{port}",
        "--timeout",
        "2",
        "--json",
    )
    document = json.loads(out)
    assert code == 0 and document["used_mode"] == "fts"
    assert any(f"127.0.0.1:{port}" in note for note in document["notes"])
    assert document["results"]


@pytest.mark.parametrize(
    "query",
    ['"', "*", "NEAR", "-", ":", "((", 'a" OR "b', "col:value", "tags: yak", "x" * 100_000, "\x00nul", "🚀 🚀"],
)
def test_retrieve_never_fails_on_odd_queries(capsys, sample: Path, query: str) -> None:
    for mode in ("hybrid", "fts", "semantic", "tags"):
        code, out, err = run(capsys, "retrieve", query, "--db", str(sample), "--mode", mode, "--json")
        assert code == 0, err
        assert isinstance(json.loads(out)["results"], list)


def test_retrieve_situation_is_validated_with_its_path(capsys, sample: Path, tmp_path: Path) -> None:
    code, _, err = run(capsys, "retrieve", "air", "--db", str(sample), "--situation", '{"game_phase": "dawn"}')
    assert code == 1 and "game_phase" in err and "Traceback" not in err
    code, _, err = run(capsys, "retrieve", "air", "--db", str(sample), "--situation", "{not json")
    assert code == 1 and "not valid JSON" in err
    situation = tmp_path / "situation.json"
    situation.write_text(
        json.dumps(
            {
                "game_phase": "early",
                "economy_state": "even",
                "threat_level": "high",
                "enemy_composition_estimate": [["yak", 70], ["rifle_infantry", 30]],
            }
        )
    )
    code, out, _ = run(
        capsys, "retrieve", "defend", "the", "base", "--db", str(sample), "--situation", f"@{situation}", "--json"
    )
    assert code == 0
    assert any(r["breakdown"]["situation"] is not None for r in json.loads(out)["results"])


@pytest.mark.parametrize(
    "flags", [["-k", "0"], ["-k", "101"], ["--mode", "magic"], ["--budget", "-1"], ["-k", "9" * 30]]
)
def test_retrieve_usage_errors(capsys, sample: Path, flags: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli(["retrieve", "yak", "--db", str(sample), *flags])
    assert exit_info.value.code == 2


def test_retrieval_eval_prints_every_mode_and_the_baseline(capsys, sample: Path) -> None:
    code, out, _ = run(capsys, "retrieval-eval", str(SAMPLE_QUERIES), "--db", str(sample), "--json")
    assert code == 0
    document = json.loads(out)
    modes = {m["mode"]: m for m in document["modes"]}
    assert set(modes) == {"hybrid", "fts", "semantic", "tags", "rrf"} and modes["rrf"]["baseline"]
    for scores in modes.values():
        assert 0.0 <= scores["recall"] <= 1.0 and 0.0 <= scores["mrr"] <= 1.0 and 0.0 <= scores["ndcg"] <= 1.0
    code, out, _ = run(capsys, "retrieval-eval", str(SAMPLE_QUERIES), "--db", str(sample))
    assert code == 0 and "rrf (baseline)" in out and "recall@5" in out


def test_retrieval_eval_refuses_labels_that_name_nothing(capsys, sample: Path, tmp_path: Path) -> None:
    queries = tmp_path / "queries.yaml"
    queries.write_text(
        "version: 1\nqueries:\n  - query: air\n    relevant: [No such skill]\n  - query: ''\n    relevant: []\n"
    )
    code, _, err = run(capsys, "retrieval-eval", str(queries), "--db", str(sample))
    assert code == 1
    assert "queries[0].relevant[0]" in err and "No such skill" in err and "queries[1].query" in err


def test_retrieve_content_is_the_skill_tool(capsys, sample: Path) -> None:
    code, out, _ = run(capsys, "retrieve", "yak", "rush", "--db", str(sample), "-k", "3", "--json")
    name = json.loads(out)["results"][0]["name"]
    code, out, _ = run(capsys, "retrieve", "yak", "rush", "--db", str(sample), "-k", "3", "--content", name.upper())
    assert code == 0 and out.startswith(("Previously successful approach: ", "Verified example: ", "Instructions: "))
    assert name in out and "Outcome:" in out
    code, out, _ = run(capsys, "retrieve", "yak", "rush", "--db", str(sample), "-k", "3", "--content", "No such")
    assert code == 1 and out.startswith("Unknown skill: No such. Available: ") and name in out


def test_skill_md_roles_and_tags_reach_retrieval(capsys, tmp_path: Path) -> None:
    """Seed 004: SKILL.md tags become the skill's tags, its roles filter retrieval (--role)."""
    for name, roles, tags, text in (
        ("review-api", "[reviewer]", "[openapi, schema, api]", "Check that API schemas match the code."),
        ("build-api", "[builder]", "[openapi, schema, api]", "Generate API handlers from the schema."),
        ("any-role", None, "[api, docs]", "Write API documentation for every endpoint."),
    ):
        folder = tmp_path / "skills" / name
        folder.mkdir(parents=True)
        role_line = f"roles: {roles}\n" if roles else ""
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {text}\ntags: {tags}\n{role_line}---\n# {name}\nDo it.\n"
        )
    library = tmp_path / "skills.db"
    assert cli(["init", str(library)]) == 0
    assert cli(["import", str(tmp_path / "skills"), "--db", str(library), "--format", "skill-md"]) == 0
    capsys.readouterr()
    code, out, _ = run(
        capsys,
        "retrieve",
        "api",
        "schema",
        "openapi",
        "--db",
        str(library),
        "--mode",
        "tags",
        "--role",
        "reviewer",
        "--json",
    )
    names = [r["name"] for r in json.loads(out)["results"]]
    assert code == 0 and names[0] == "review-api" and "build-api" not in names and "any-role" in names
    assert all(r["tags"] is not None for r in json.loads(out)["results"])
