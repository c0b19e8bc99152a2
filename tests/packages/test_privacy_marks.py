"""A reviewer marks one export privacy finding a false positive (issue 13 point 9): the mark is
stored with the skill and audited, the finding then blocks no export and is not redacted, and
editing the flagged text makes the mark lapse."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from skillstudio.cli.main import main as cli
from skillstudio.model import Instructions
from skillstudio.packages.export import load_selection
from skillstudio.store import Database, ReviewNotAllowed, SkillRepository
from skillstudio.store.repository import Actor
from tests.factories import instructions_skill
from tests.packages.helpers import entries_of

CODE = "reader = PdfReader('in.pdf', password=mypassword)"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def pdf_library(library_target: str) -> tuple[str, str]:
    with Database(library_target) as database:
        skill = SkillRepository(database, Actor("kessler")).create(
            instructions_skill(name="pdf", body=Instructions(CODE, (), None, ()))
        )
    return library_target, skill.id


def test_marked_finding_no_longer_refuses_a_package_and_is_not_redacted(capsys, pdf_library, tmp_path: Path) -> None:
    db, skill_id = pdf_library
    package = tmp_path / "pdf.icpkg"
    code, _, err = run(capsys, "export", "--db", str(db), "-o", str(package))
    assert code == 1 and err.startswith("skillstudio: privacy check refused") and not package.exists()

    code, _, err = run(capsys, "review", "false-positive", "--db", str(db), skill_id)  # no --finding: the list
    assert code == 1 and "1. body.Instructions" in err and "password=mypassword" in err
    code, _, err = run(capsys, "review", "false-positive", "--db", str(db), skill_id, "--finding", "2")
    assert code == 1 and "there is no finding 2" in err
    code, text, _ = run(
        capsys, "review", "false-positive", "--db", str(db), skill_id, "--finding", "1", "--note", "example code"
    )
    assert code == 0 and "false positive" in text

    code, text, _ = run(capsys, "export", "--db", str(db), "-o", str(package), "--dry-run")
    assert code == 0 and "0 privacy findings" in text
    code, text, err = run(capsys, "export", "--db", str(db), "-o", str(package))
    assert code == 0 and "exported 1 skills" in text, err
    assert any(b"password=mypassword" in data for data in entries_of(package.read_bytes()).values())  # not redacted

    with Database(db) as database:
        repository = SkillRepository(database)
        preview = load_selection(repository, [skill_id])
        assert preview.findings == [] and [f.text for f in preview.dismissed] == ["password=mypassword)"]
        entries = repository.history.audit(action="skill.privacy_mark", skill_id=skill_id)
        assert len(entries) == 1 and entries[0].details["note"] == "example code"
        assert entries[0].details["kind"] == "api_key" and entries[0].actor_kind == "human"

    # --undo brings the refusal back, and is audited too.
    code, _, _ = run(
        capsys, "review", "false-positive", "--db", str(db), skill_id, "--finding", "1", "--undo", "--json"
    )
    assert code == 0
    assert run(capsys, "export", "--db", str(db), "-o", str(tmp_path / "again.icpkg"))[0] == 1
    code, text, _ = run(capsys, "audit", "--db", str(db), "--action", "skill.privacy_unmark", "--json")
    assert json.loads(text)["total"] == 1


def test_editing_the_flagged_text_makes_the_mark_lapse(pdf_library) -> None:
    db, skill_id = pdf_library
    with Database(db) as database:
        repository = SkillRepository(database, Actor("kessler"))
        finding = load_selection(repository, [skill_id]).findings[0]
        assert repository.privacy_marks.mark(skill_id, finding.path, finding.kind, finding.text)
        assert load_selection(repository, [skill_id]).findings == []
        skill = repository.get(skill_id)
        edited = CODE.replace("mypassword", "otherpassword")
        repository.update(replace(skill, body=Instructions(edited, (), None, ())))
        preview = load_selection(repository, [skill_id])
        assert [f.text for f in preview.findings] == ["password=otherpassword)"] and preview.dismissed == []


def test_only_a_person_may_mark(pdf_library) -> None:
    db, skill_id = pdf_library
    with Database(db) as database:
        agent = SkillRepository(database, Actor("agent-3", "agent"))
        finding = load_selection(agent, [skill_id]).findings[0]
        with pytest.raises(ReviewNotAllowed):
            agent.privacy_marks.mark(skill_id, finding.path, finding.kind, finding.text)
        with pytest.raises(ReviewNotAllowed):
            agent.privacy_marks.unmark(skill_id, finding.path, finding.kind, finding.text)
        assert agent.privacy_marks.marked_many([skill_id]) == {}
        assert load_selection(agent, [skill_id]).findings == [finding]
        assert agent.history.audit(action="skill.privacy_mark") == []


def test_redaction_keeps_dismissed_findings() -> None:
    from skillstudio.packages.privacy import redact_skill, scan_skill

    skill = instructions_skill(body=Instructions(CODE + "\nmail bob@example.com", (), None, ()))
    findings = scan_skill(skill, user_names=())
    password = [f for f in findings if f.kind == "api_key"]
    out = redact_skill(skill, user_names=(), keep=password)
    assert isinstance(out.body, Instructions)
    assert "password=mypassword" in out.body.instructions and "bob@example.com" not in out.body.instructions
