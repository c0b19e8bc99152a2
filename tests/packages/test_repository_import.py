"""The repository methods imports use: get_many, import_skills, extras, prune's trash action."""

from __future__ import annotations

from dataclasses import replace

import pytest

from skillstudio.store import ConflictError, ImportItem, InvalidSkillData, SkillExtras, SkillRepository
from tests import factories
from tests.packages.helpers import library_state


def test_get_many_equals_get(repository: SkillRepository) -> None:
    first = factories.ai_skill()
    second = factories.ai_skill(composable_with=(first.id,))
    third = factories.content_skill()
    repository.create_many([first, second, third])
    ids = [third.id, first.id, second.id]
    assert repository.get_many(ids) == [repository.get(i) for i in ids]


def test_import_skills_writes_everything_in_one_transaction(repository: SkillRepository) -> None:
    old = factories.ai_skill()
    gone = factories.content_skill()
    repository.create_many([old, gone])
    stored = repository.get(old.id)
    new = factories.example_skill()
    extras = SkillExtras(
        origin="workshop:p/n@1.0.0",
        frontmatter={"license": "MIT"},
        files={"scripts/a.py": {"text": "x"}},
        warnings=("w",),
    )
    changed = replace(stored, description="changed", quality=replace(stored.quality, success_rate=0.99))
    repository.import_skills([ImportItem(new, extras)], [ImportItem(changed, extras)], [gone.id], message="import")
    assert repository.get(new.id) == replace(new, version=repository.get(new.id).version)
    assert repository.get(old.id).description == "changed"
    assert repository.get(old.id).quality.success_rate == 0.99  # an import brings its quality
    assert repository.extras.get(new.id) == extras and repository.extras.get(old.id) == extras
    assert [e.skill_id for e in repository.trash.entries()] == [gone.id]
    assert repository.history.revisions(old.id)[-1].action == "import"
    assert {e.action for e in repository.history.audit()} >= {"skill.import"}
    assert repository.extras.ids_with_origin("workshop:p/n@") == sorted([new.id, old.id])
    repository.trash.empty()
    repository.trash.delete(new.id)
    repository.trash.empty()
    assert repository.extras.get(new.id) is None


def test_import_skills_refuses_stale_versions_and_changes_nothing(repository: SkillRepository) -> None:
    skill = factories.ai_skill()
    repository.create(skill)
    before = library_state(repository)
    with pytest.raises(ConflictError):
        repository.import_skills([ImportItem(factories.content_skill())], [ImportItem(replace(skill, version=99))])
    with pytest.raises(InvalidSkillData):
        repository.import_skills([ImportItem(factories.content_skill(composable_with=("missing",)))])
    assert library_state(repository) == before
