"""Re-importing a package settles (issue 11): nothing changes the second time, and an import
never clears a review decision on a skill whose content did not change."""

from __future__ import annotations

from dataclasses import replace

from skillstudio.model import ReviewState
from skillstudio.packages.icpkg import PackageMeta, export_package, read_package
from skillstudio.packages.importer import apply_plan, incoming_from_package, plan_import
from skillstudio.store import SkillRepository
from tests import factories

META = PackageMeta("linked-library", "kessler", "1.0.0")


def one_way_skills() -> list:
    """A links to B and C one way only; the store keeps compositions symmetric."""
    b = factories.content_skill()
    c = factories.instructions_skill()
    a = factories.ai_skill(composable_with=(c.id, b.id))
    d = factories.example_skill()
    return [a, b, c, d]


def import_bytes(repository: SkillRepository, data: bytes, mode: str = "merge"):
    package = read_package(data)
    incoming, origin = incoming_from_package(package)
    plan = plan_import(repository, incoming, origin=origin, source="test", mode=mode)
    return apply_plan(repository, plan)


def test_reimporting_a_package_with_one_way_links_changes_nothing(repository: SkillRepository) -> None:
    data = export_package(one_way_skills(), META)
    first = import_bytes(repository, data)
    assert first.count("add") == 4
    for mode in ("merge", "replace", "merge"):
        again = import_bytes(repository, data, mode)
        assert again.count("update") == 0 and again.count("skip") == 4 and again.changes == 0, again.steps


def test_newer_version_with_the_same_links_updates_only_what_changed(repository: SkillRepository) -> None:
    skills = one_way_skills()
    import_bytes(repository, export_package(skills, META))
    changed = [replace(skills[0], description="Changed in 1.1.0"), *skills[1:]]
    plan = import_bytes(repository, export_package(changed, replace(META, version="1.1.0")))
    assert [s.skill_id for s in plan.steps if s.action == "update"] == [skills[0].id]
    stored = repository.get(skills[1].id)
    assert skills[0].id in stored.composable_with  # the symmetric link survives
    assert set(repository.get(skills[0].id).composable_with) == {skills[1].id, skills[2].id}


def test_library_local_links_are_not_content_and_survive_a_reimport(repository: SkillRepository) -> None:
    skills = one_way_skills()
    data = export_package(skills, META)
    import_bytes(repository, data)
    mine = factories.ai_skill(name="My own", composable_with=(skills[3].id,))
    repository.create(mine)
    again = import_bytes(repository, data)
    assert again.changes == 0
    assert mine.id in repository.get(skills[3].id).composable_with


def test_reimport_keeps_approvals_and_a_change_sends_only_that_skill_back_to_pending(
    repository: SkillRepository,
) -> None:
    skills = one_way_skills()
    data = export_package(skills, META)
    import_bytes(repository, data)
    for skill in skills:
        repository.reviews.review(
            skill.id, ReviewState.APPROVED, comment="ok", version=repository.get(skill.id).version
        )
    import_bytes(repository, data)
    import_bytes(repository, data, "replace")
    assert all(repository.get(s.id).review_state is ReviewState.APPROVED for s in skills)
    changed = [skills[0], replace(skills[1], description="Changed"), *skills[2:]]
    plan = import_bytes(repository, export_package(changed, replace(META, version="1.1.0")))
    assert plan.count("update") == 1
    states = {s.id: repository.get(s.id).review_state for s in skills}
    assert states[skills[1].id] is ReviewState.PENDING
    assert all(state is ReviewState.APPROVED for skill_id, state in states.items() if skill_id != skills[1].id)
    assert repository.reviews.decisions(skills[1].id)[-1].state == "pending"
