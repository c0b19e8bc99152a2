"""How the store is put together: one home for its errors, one path for review decisions, parts
bound to the repository's actor."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import sqlite3
import sys
import types
from dataclasses import replace
from pathlib import Path

import pytest

import skillstudio.store
from skillstudio.agents.tool import AgentSkillTool
from skillstudio.cli.main import main as cli
from skillstudio.model import ReviewState
from skillstudio.review.workflow import decide
from skillstudio.store import Actor, Database, ImportItem, LibraryError, SkillRepository, reviews
from tests.factories import ai_skill

PACKAGE = Path(skillstudio.__file__).resolve().parent


def store_modules() -> list[str]:
    return [f"skillstudio.store.{info.name}" for info in pkgutil.iter_modules(skillstudio.store.__path__)]


def exceptions_defined_in(module_name: str) -> list[type[BaseException]]:
    module = importlib.import_module(module_name)
    return [
        value
        for value in vars(module).values()
        if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module_name
    ]


def test_every_store_error_lives_in_errors_and_derives_from_library_error() -> None:
    defined = {name: exceptions_defined_in(name) for name in store_modules()}
    elsewhere = {name: classes for name, classes in defined.items() if classes and name != "skillstudio.store.errors"}
    assert elsewhere == {}
    errors = defined["skillstudio.store.errors"]
    assert {"ReviewNotAllowed", "RunClaimed", "RunNotFound", "LibraryBusy"} <= {e.__name__ for e in errors}
    assert [e.__name__ for e in errors if not issubclass(e, LibraryError)] == []


def test_the_error_check_sees_an_exception_defined_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guard against a checker that cannot fail."""
    probe = types.ModuleType("skillstudio.store._probe")
    exec("from skillstudio.store.errors import LibraryError\nclass Oops(ValueError):\n    pass\n", vars(probe))
    monkeypatch.setitem(sys.modules, probe.__name__, probe)
    assert [e.__name__ for e in exceptions_defined_in(probe.__name__)] == ["Oops"]  # not the imported one


# --- one review path -----------------------------------------------------------------------------


def decision_writers(path: Path) -> list[int]:
    """Lines of ``path`` that write review decision rows: ORM rows built, inserts, raw SQL."""
    source = path.read_text(encoding="utf-8")
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            arguments = [ast.unparse(a) for a in node.args]
            if name.endswith("ReviewDecisionRow") or (name.endswith("insert") and "ReviewDecisionRow" in arguments):
                lines.append(node.lineno)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and "insert into studio_review_decisions" in " ".join(node.value.lower().split())
        ):
            lines.append(node.lineno)
    return lines


def test_only_the_reviews_module_writes_decisions() -> None:
    writers = {
        str(path.relative_to(PACKAGE.parent)): found
        for path in sorted(PACKAGE.rglob("*.py"))
        if (found := decision_writers(path))
    }
    assert list(writers) == ["skillstudio/store/reviews.py"]


def test_the_decision_check_sees_each_way_of_writing_a_row(tmp_path: Path) -> None:
    """Guard against a checker that cannot fail."""
    sample = tmp_path / "x.py"
    for code in (
        "session.add(ReviewDecisionRow(skill_id='a'))",
        "session.execute(insert(ReviewDecisionRow), rows)",
        "connection.execute(text('INSERT INTO  studio_review_decisions VALUES (1)'))",
    ):
        sample.write_text(code + "\n")
        assert decision_writers(sample) == [1], code


def test_people_agents_imports_and_the_cli_all_decide_through_one_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every decision row the library gains, whoever causes it, comes from record_decision."""
    path = tmp_path / "library.db"
    calls: list[str] = []
    real = reviews.record_decision

    def spy(work, skill_id, state, comment, revision) -> None:
        calls.append(state.value)
        real(work, skill_id, state, comment, revision)

    monkeypatch.setattr(reviews, "record_decision", spy)

    def rows() -> int:
        with sqlite3.connect(path) as connection:
            return int(connection.execute("SELECT COUNT(*) FROM studio_review_decisions").fetchone()[0])

    with Database(path, create=True) as database:
        person = SkillRepository(database, Actor("rhea"))
        skill = person.create(ai_skill())
        decide(person, skill.id, ReviewState.APPROVED, "ok", version=skill.version)  # the GUI's queue
        agent = AgentSkillTool(person, "agent-7", provider=None, rate_limit=2)
        made = agent.skill_create("Scout", "Send a scout.", "Send one scout first.")
        agent.skill_update(made["id"], version=person.get(made["id"]).version, name="Scout early")
        changed = replace(person.get(skill.id), name="Imported over")
        person.import_skills([], [ImportItem(changed)])
    assert cli(["review", "reject", made["id"], "--comment", "no", "--db", str(path)]) == 0
    capsys.readouterr()
    assert calls == ["approved", "pending", "pending", "rejected"]
    assert rows() == len(calls)


# --- parts of the repository -------------------------------------------------------------------


def test_as_actor_binds_every_part_to_the_new_actor(repository: SkillRepository) -> None:
    skill = repository.create(ai_skill())
    other = repository.as_actor(Actor("agent-2", "agent"))
    assert {
        part.actor
        for part in (other, other.reviews, other.trash, other.evidence, other.embeddings, other.privacy_marks)
    } == {Actor("agent-2", "agent")}
    other.evidence.record_composition(skill.id, repository.create(ai_skill()).id)
    other.embeddings.put(skill.id, b"\x00\x00\x80\x3f" * 2, "embed-1")
    latest = {entry.action: entry.actor for entry in repository.history.audit()}
    assert latest["skill.compose"] == latest["skill.embed"] == "agent-2"
    assert repository.actor == Actor("tester")  # the repository it came from is unchanged
