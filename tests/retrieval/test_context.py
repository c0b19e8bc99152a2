"""What the LLM receives: format_as_context within a budget, one form per body type, the catalog
and the skill tool's answer."""

from __future__ import annotations

from dataclasses import replace

import pytest

from skillstudio.library.sample import load_sample
from skillstudio.model import Confidence, Domain, Instructions, Quality, Skill
from skillstudio.retrieval import catalog, format_as_context, format_skill, skill_content
from skillstudio.retrieval.context import AI_HEADER, CATALOG_HEADER, CONTENT_HEADER, describe_outcome
from skillstudio.verification.stats import wilson
from tests.factories import ai_skill, content_skill, example_skill, instructions_skill

UNPLAYED = Quality(0, 0.0, None, Confidence.TENTATIVE, None)


@pytest.fixture(scope="module")
def sample_skills() -> list[Skill]:
    return [item.skill for item in load_sample()]


def _header_for(skills: list[Skill]) -> str:
    return CONTENT_HEADER if {s.domain for s in skills} == {Domain.CONTENT_GENERATION} else AI_HEADER


# --- the budget -------------------------------------------------------------------------------


def test_budget_is_respected_for_every_budget(sample_skills: list[Skill]) -> None:
    blocks = {skill.id: format_skill(skill) for skill in sample_skills}
    header = _header_for(sample_skills)
    included_counts = set()
    for budget in range(0, 5001, 97):
        context = format_as_context(sample_skills, budget)
        assert context.size == len(context.text) <= budget, budget
        assert context.budget == budget
        # every skill is either in whole or named as left out, in the given order
        left = [item.skill_id for item in context.left_out]
        assert sorted([*context.included, *left]) == sorted(blocks)
        assert list(context.included) == [s.id for s in sample_skills if s.id in set(context.included)]
        for skill_id in context.included:
            assert blocks[skill_id] in context.text
        for item in context.left_out:
            assert item.size == len(blocks[item.skill_id])
            assert blocks[item.skill_id] not in context.text
            # left out only because it did not fit (greedy: it would not fit now either)
            cost = len(blocks[item.skill_id]) + (len(header) + 2 if not context.text else 2)
            assert context.size + cost > budget
        if context.included:
            expected = header + "\n\n" + "\n\n".join(blocks[i] for i in context.included)
            assert context.text == expected
        else:
            assert context.text == ""
        included_counts.add(len(context.included))
    assert 0 in included_counts and max(included_counts) >= 3  # the loop covered empty to several


def test_a_skill_that_does_not_fit_is_left_out_whole() -> None:
    big = ai_skill(name="Big plan", description="Long. " * 200)
    small = example_skill(name="Small example")
    big_block, small_block = format_skill(big), format_skill(small)
    assert len(big_block) > len(small_block)
    budget = len(AI_HEADER) + 2 + len(small_block)  # exactly the header and the small block
    context = format_as_context([big, small], budget)
    assert context.included == (small.id,)
    assert [(item.skill_id, item.name, item.size) for item in context.left_out] == [
        (big.id, "Big plan", len(big_block))
    ]
    assert context.size == budget
    assert "Big plan" not in context.text and "Long." not in context.text  # no half block
    assert small_block in context.text
    # one character less and nothing fits: an empty context, not a header alone
    empty = format_as_context([big, small], budget - 1)
    assert empty.text == "" and empty.included == () and len(empty.left_out) == 2


def test_zero_and_negative_budgets() -> None:
    context = format_as_context([ai_skill()], 0)
    assert context.text == "" and context.size == 0 and len(context.left_out) == 1
    with pytest.raises(ValueError):
        format_as_context([ai_skill()], -1)
    assert format_as_context([], 4000).text == ""


def test_default_budget_is_4000(sample_skills: list[Skill]) -> None:
    context = format_as_context(sample_skills)
    assert context.budget == 4000 and 0 < context.size <= 4000 and context.left_out


# --- one form per body type -------------------------------------------------------------------


def test_strategic_pattern_form() -> None:
    skill = ai_skill(quality=Quality(5, 0.6, None, Confidence.TENTATIVE, "2026-03-02T10:00:00.000Z"))
    block = format_skill(skill)
    lines = block.splitlines()
    assert lines[0] == f"Previously successful approach: {skill.name}"
    for label in ("When:", "Situation:", "Plan:", "Outcome:"):
        assert sum(line.startswith(label) for line in lines) == 1, label
    situation = next(line for line in lines if line.startswith("Situation:"))
    assert "early game" in situation and "heavy_tank 70%" in situation and "tier1" in situation
    plan = next(line for line in lines if line.startswith("Plan:"))
    assert "hold the ore field" in plan and "war_factory" in plan
    outcome = lines[-1]
    interval = wilson(3, 5)
    assert outcome.startswith("Outcome: succeeded in 60% of 5 games")
    assert f"95% Wilson interval {interval.low:.0%}-{interval.high:.0%}" in outcome
    assert "Composition:" not in block and "Prompt:" not in block


def test_encounter_pattern_form() -> None:
    skill = content_skill(quality=Quality(8, 0.75, 4.5, Confidence.ESTABLISHED, "2026-03-02T10:00:00.000Z"))
    block = format_skill(skill)
    assert block.startswith(f"Encounter pattern: {skill.name}")
    composition = next(line for line in block.splitlines() if line.startswith("Composition:"))
    assert "ambush (location=bridge_north, delay=30) -> extraction" in composition
    assert "Mission: escort" in block
    assert "completed in 75% of 8 plays" in block and "Wilson" in block and "average rating 4.5 of 5" in block
    assert "Previously successful approach:" not in block and "Situation:" not in block


def test_verified_example_form() -> None:
    skill = example_skill(quality=Quality(3, 1.0, None, Confidence.TENTATIVE, "2026-03-02T10:00:00.000Z"))
    block = format_skill(skill)
    assert block.startswith(f"Verified example: {skill.name}")
    assert "Prompt: Enemy gunboats raid the shore." in block
    assert 'Response: {"build_focus": "Naval"}' in block
    assert "Plan:" not in block and "Composition:" not in block


def test_instructions_form() -> None:
    skill = instructions_skill()
    block = format_skill(skill)
    assert block.startswith(f"Instructions: {skill.name}")
    assert "# Waves\n\nKeep the first wave small." in block
    assert f"Use when: {skill.description}" in block
    assert "Prompt:" not in block and "Plan:" not in block


def test_instructions_that_open_with_the_description_say_it_once() -> None:
    """A Voyager skill's instructions open with its description: the block says it once."""
    code = "```javascript\nasync function mineWoodLog(bot) {}\n```"
    said = "Mines one log of any wood\nit can find nearby."
    when = "Use when: Mines one log of any wood it can find nearby."

    def block_lines(instructions: str) -> list[str]:
        skill = replace(instructions_skill(), description=said, body=Instructions(instructions=instructions))
        lines = format_skill(skill).splitlines()
        assert lines[-1].startswith("Outcome: ")
        return lines[1:-1]  # between the name and the outcome

    assert block_lines(f"{said}\n\n{code}\n") == [when, *code.splitlines()]
    assert block_lines(said) == [when]
    # only a whole first paragraph that says the description is left out
    for kept in (f"{said} Then more.\n\n{code}", f"Before.\n\n{said}\n\n{code}", code):
        assert block_lines(kept) == [when, *kept.splitlines()]


@pytest.mark.parametrize("factory", [ai_skill, content_skill, example_skill, instructions_skill])
def test_never_verified_skill_says_so(factory) -> None:
    skill = factory(quality=UNPLAYED)
    outcome = describe_outcome(skill)
    assert outcome.startswith("not yet verified") and "Wilson" not in outcome
    assert format_skill(skill).endswith(f"Outcome: {outcome}")


def test_headers_follow_the_domains() -> None:
    assert format_as_context([content_skill(), instructions_skill()], 4000).text.startswith(CONTENT_HEADER + "\n\n")
    assert format_as_context([content_skill(), ai_skill()], 4000).text.startswith(AI_HEADER + "\n\n")


# --- catalog and the skill tool ---------------------------------------------------------------


def test_catalog_is_one_line_per_skill_and_smaller(sample_skills: list[Skill]) -> None:
    result = catalog(sample_skills)
    lines = result.text.splitlines()
    assert lines[0] == CATALOG_HEADER
    assert len(lines) == 1 + len(sample_skills)
    for line, skill in zip(lines[1:], sample_skills, strict=True):
        assert line.startswith(f"- {skill.name}: ")
        assert line == f"- {skill.name}: {' '.join(skill.description.split())}"
    assert result.full_size == sum(len(format_skill(skill)) for skill in sample_skills)
    assert result.size < result.full_size
    assert catalog([]).text == "" and catalog([]).size == 0


def test_catalog_keeps_multiline_descriptions_on_one_line() -> None:
    skill = ai_skill(description="First line.\n\nSecond   line.\tThird.")
    assert catalog([skill]).text.splitlines()[1] == f"- {skill.name}: First line. Second line. Third."


def test_skill_content_by_name_or_id(sample_skills: list[Skill]) -> None:
    skill = sample_skills[3]
    assert skill_content(sample_skills, skill.name) == format_skill(skill)
    assert skill_content(sample_skills, skill.name.upper()) == format_skill(skill)
    assert skill_content(sample_skills, f"  {skill.name.lower()} ") == format_skill(skill)
    assert skill_content(sample_skills, skill.id) == format_skill(skill)


def test_unknown_skill_message() -> None:
    skills = [ai_skill(name="Alpha"), example_skill(name="Beta"), ai_skill(name="Alpha")]
    assert skill_content(skills, "Gamma") == "Unknown skill: Gamma. Available: Alpha, Beta"
    assert skill_content([], "Gamma") == "Unknown skill: Gamma. Available: "


def test_context_of_retrieved_skills_in_rank_order() -> None:
    first, second = ai_skill(name="First"), replace(example_skill(), name="Second")
    context = format_as_context([first, second], 4000)
    assert context.included == (first.id, second.id)
    assert context.text.index("First") < context.text.index("Second")
