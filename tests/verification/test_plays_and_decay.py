"""`record` (idempotent play imports, content rules) and `revalidate` (skill decay)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillstudio.model import Confidence, Quality, ValidationError
from skillstudio.model.evidence import EvidenceKind, VerificationRecord
from skillstudio.store import Actor, Database, QualityOutcome, SkillRepository, body_hash
from skillstudio.store.runs import RunStore
from skillstudio.verification import VerificationPolicy
from skillstudio.verification.plays import record_plays
from skillstudio.verification.runner import collect, revalidation_candidates, verify
from tests.factories import ai_skill, content_skill
from tests.verification.helpers import playable_skills

HARD = "IC Default Hard"


def write_plays(path: Path, plays: list[dict]) -> Path:
    path.write_text("".join(json.dumps(play) + "\n" for play in plays), encoding="utf-8")
    return path


def play(skill_id: str, completed: bool = True, rating: float | None = 4, **extra) -> dict:
    return {"skill_id": skill_id, "completed": completed, "time": "2026-05-02T18:30:00Z", "rating": rating, **extra}


def test_record_is_idempotent_and_applies_the_content_rules(repository: SkillRepository, tmp_path: Path) -> None:
    skill = repository.create(content_skill(quality=Quality()))
    first = write_plays(tmp_path / "plays.jsonl", [play(skill.id, rating=3), play(skill.id, rating=3)])
    summary = record_plays(first, repository)
    [result] = summary.results
    assert (result.new_plays, result.after, result.action) == (2, "tentative", "skill.verify")
    assert "candidate" in result.reason
    again = record_plays(first, repository)
    assert (again.results, again.already_imported) == ((), 2)
    assert len(repository.evidence.verifications(skill.id)) == 1
    # the same two lines again plus two new plays (identical lines are distinct plays by position)
    second = write_plays(
        tmp_path / "more.jsonl",
        [
            play(skill.id, rating=3),
            play(skill.id, rating=3),
            play(skill.id, rating=5),
            play(skill.id, completed=False, rating=4),
        ],
    )
    [result] = record_plays(second, repository).results
    assert result.new_plays == 2
    stored = repository.get(skill.id)
    assert stored.quality.verification_count == 4 and stored.quality.average_rating == pytest.approx(3.75)
    assert stored.quality.confidence is Confidence.ESTABLISHED and result.action == "skill.promote"
    assert stored.quality.success_rate == pytest.approx(0.75)
    assert record_plays(second, repository).results == ()
    record = repository.evidence.verifications(skill.id)[-1]
    assert record.kind is EvidenceKind.PLAY and record.body_hash == body_hash(stored)
    assert repository.history.audit(skill_id=skill.id)[0].action == "skill.promote"
    assert RunStore(repository.database).interval(skill.id)[:2] == (3, 4)


def test_play_ids_make_keys(repository: SkillRepository, tmp_path: Path) -> None:
    skill = repository.create(content_skill(quality=Quality()))
    path = write_plays(tmp_path / "p.jsonl", [play(skill.id, play_id="a"), play(skill.id, play_id="a")])
    assert record_plays(path, repository).results[0].new_plays == 1


def test_invalid_files_are_refused_whole(repository: SkillRepository, tmp_path: Path) -> None:
    skill = repository.create(content_skill(quality=Quality()))
    ai = repository.create(ai_skill())
    path = write_plays(
        tmp_path / "bad.jsonl",
        [
            play(skill.id),
            play(skill.id, rating=6),
            play("ffffffff-0000-4000-8000-000000000000"),
            play(ai.id),
            {"skill_id": skill.id, "completed": "yes", "time": "2026-05-02T18:30:00Z"},
            play("\ud800abcd"),  # a lone surrogate: the database driver cannot even encode it
        ],
    )
    (tmp_path / "bad.jsonl").write_text(path.read_text() + "not json\n")
    with pytest.raises(ValidationError) as raised:
        record_plays(path, repository)
    text = str(raised.value)
    for where in (
        "line 2.rating",
        "line 3.skill_id",
        "line 4.skill_id",
        "line 5.completed",
        "line 6.skill_id",
        "line 7",
    ):
        assert where in text
    assert repository.evidence.verifications(skill.id) == []


@pytest.fixture
def proven_library(tmp_path: Path):
    with Database(tmp_path / "lib.db", create=True) as database:
        repository = SkillRepository(database, Actor("tester"))
        skills = playable_skills(3, Confidence.PROVEN)
        for skill in skills:
            old = VerificationRecord(
                "2026-01-01T00:00:00.000Z",
                EvidenceKind.HEADLESS,
                40,
                2,
                opponent=HARD,
                engine_version="0.9.0",
                body_hash=body_hash(skill),
            )
            repository.create(skill, verifications=[old])
        current = VerificationRecord(
            "2026-01-02T00:00:00.000Z",
            EvidenceKind.HEADLESS,
            40,
            2,
            opponent=HARD,
            engine_version="1.0.0+ra1.1.x",
            body_hash=body_hash(skills[2]),
        )
        repository.evidence.set_quality(
            skills[2].id, QualityOutcome(repository.get(skills[2].id).quality), record=current
        )
        yield database


def test_revalidation_selects_proven_skills_of_other_engines(proven_library: Database) -> None:
    repository = SkillRepository(proven_library)
    skills = [repository.get(s.id) for s in playable_skills(3)]
    assert [s.id for s in revalidation_candidates(repository, "1.0.0", skills)] == [s.id for s in skills[:2]]
    assert len(revalidation_candidates(repository, "2.0.0", skills)) == 3


@pytest.mark.parametrize(
    ("proven_rate", "after"), [(0.99, "tentative"), (-1.0, "proven")]
)  # -1.0: every rate is above it
def test_decay(proven_library: Database, proven_rate: float, after: str) -> None:
    repository = SkillRepository(proven_library)
    policy = VerificationPolicy(proven_rate=proven_rate)
    skills = revalidation_candidates(repository, "1.0.0", [repository.get(s.id) for s in playable_skills(3)])
    final = collect(verify(proven_library, skills, opponent=HARD, games=12, seed=4, kind="revalidate", policy=policy))
    for result in final.results:
        assert result.before == "proven" and result.after == after
        skill = repository.get(result.skill_id)
        assert skill.quality.confidence.value == after
        assert skill.quality.verification_count == 12  # only the new engine's games count
        assert len(repository.evidence.verifications(skill.id)) == 2  # nothing deleted
        assert repository.history.audit(skill_id=skill.id)[0].action == (
            "skill.demote" if after == "tentative" else "skill.verify"
        )
    # afterwards, a verify no longer credits the old engine's 42 games either
    [again] = collect(verify(proven_library, skills[:1], opponent=HARD, games=3, seed=9, policy=policy)).results
    assert again.verification_count == 15
