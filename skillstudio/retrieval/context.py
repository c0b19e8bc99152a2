"""What the LLM receives: D057's ``format_as_context``, and seed 002's catalog and skill tool.

``format_as_context`` turns ranked skills into "Previously successful approach:" blocks
(situation, plan, outcome with its Wilson interval), one form per body type, and fits them into
a character budget (seed 004's 4,000 by default): a skill that does not fit is left out whole,
never cut, and the result names it. ``catalog`` is progressive disclosure: one
``- name: description`` line per skill, with its size beside the size of the full content, and
``skill_content`` is the skill tool's answer for one name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from skillstudio.model import (
    Domain,
    EncounterPattern,
    Instructions,
    SituationSignature,
    Skill,
    StrategicPattern,
    VerifiedExample,
)
from skillstudio.verification.stats import wilson

DEFAULT_BUDGET = 4000  # characters (seed 004)
AI_HEADER = "Previously successful strategies in similar situations:"
CONTENT_HEADER = "Encounter patterns that players enjoyed:"
CATALOG_HEADER = "Available skills (call the skill tool with a name for its full content):"


@dataclass(frozen=True)
class LeftOut:
    skill_id: str
    name: str
    size: int  # characters its block would have taken


@dataclass(frozen=True)
class PromptContext:
    text: str
    budget: int
    included: tuple[str, ...]  # skill ids, in order
    left_out: tuple[LeftOut, ...]

    @property
    def size(self) -> int:
        return len(self.text)


@dataclass(frozen=True)
class Catalog:
    text: str
    full_size: int  # characters of every skill's full content, for comparison

    @property
    def size(self) -> int:
        return len(self.text)


def format_as_context(skills: Sequence[Skill], budget: int = DEFAULT_BUDGET) -> PromptContext:
    """The skills as prompt blocks, best first, within ``budget`` characters (header included)."""
    if budget < 0:
        raise ValueError("the budget must be a positive number of characters")
    header = _header(skills)
    parts: list[str] = []
    included: list[str] = []
    left_out: list[LeftOut] = []
    used = 0
    for skill in skills:
        block = format_skill(skill)
        # The header is paid for by the first block that goes in; blocks are separated by a blank line.
        cost = len(block) + (len(header) + 2 if not parts else 2)
        if used + cost <= budget:
            parts.append(block)
            included.append(skill.id)
            used += cost
        else:
            left_out.append(LeftOut(skill.id, skill.name, len(block)))
    text = header + "\n\n" + "\n\n".join(parts) if parts else ""
    return PromptContext(text, budget, tuple(included), tuple(left_out))


def format_skill(skill: Skill) -> str:
    """One skill's block, in the form its body type calls for."""
    body = skill.body
    if isinstance(body, StrategicPattern):
        lines = [
            f"Previously successful approach: {skill.name}",
            f"When: {_one_line(skill.description)}",
            f"Situation: {describe_situation(body.situation)}",
            f"Plan: {_plan(body)}",
        ]
    elif isinstance(body, EncounterPattern):
        lines = [
            f"Encounter pattern: {skill.name}",
            f"What: {_one_line(skill.description)}",
            f"Composition: {_composition(body)}",
        ]
        mission = _mission(body)
        if mission:
            lines.append(f"Mission: {mission}")
    elif isinstance(body, VerifiedExample):
        lines = [
            f"Verified example: {skill.name}",
            f"Prompt: {body.prompt_context.strip()}",
            f"Response: {body.response.strip()}",
        ]
    else:
        assert isinstance(body, Instructions)
        when = _one_line(skill.description)
        lines = [f"Instructions: {skill.name}", f"Use when: {when}"]
        # Instructions that open with the description (a Voyager skill's do) do not say it twice.
        instructions = _after_opening(body.instructions.strip(), when)
        if instructions:
            lines.append(instructions)
    lines.append(f"Outcome: {describe_outcome(skill)}")
    return "\n".join(lines)


def describe_situation(situation: SituationSignature) -> str:
    parts = [
        f"{situation.game_phase.value} game",
        f"economy {situation.economy_state.value}",
        f"threat {situation.threat_level.value}",
        f"map control {situation.map_control:.0%}",
    ]
    if situation.army_composition:
        parts.append("our army " + _shares(situation.army_composition))
    if situation.enemy_composition_estimate:
        parts.append("enemy " + _shares(situation.enemy_composition_estimate))
    if situation.active_tech:
        parts.append("tech " + ", ".join(situation.active_tech))
    return "; ".join(parts)


def describe_outcome(skill: Skill) -> str:
    """Success rate with its Wilson 95% interval and the number of games (or plays)."""
    quality = skill.quality
    games = max(0, quality.verification_count)
    noun = "plays" if skill.domain is Domain.CONTENT_GENERATION else "games"
    verb = "completed" if skill.domain is Domain.CONTENT_GENERATION else "succeeded"
    if games == 0:
        return f"not yet verified; confidence {quality.confidence.value}"
    rate = min(1.0, max(0.0, quality.success_rate))
    interval = wilson(round(rate * games), games)
    text = (
        f"{verb} in {rate:.0%} of {games} {noun} (95% Wilson interval {interval.low:.0%}-{interval.high:.0%}); "
        f"confidence {quality.confidence.value}"
    )
    if quality.average_rating is not None:
        text += f"; average rating {quality.average_rating:.1f} of 5"
    return text


def catalog(skills: Sequence[Skill]) -> Catalog:
    """Seed 002's catalog: names and descriptions only, and what the full content would cost."""
    lines = [CATALOG_HEADER] + [f"- {skill.name}: {_one_line(skill.description)}" for skill in skills]
    full = sum(len(format_skill(skill)) for skill in skills)
    return Catalog("\n".join(lines) if skills else "", full)


def skill_content(skills: Sequence[Skill], name: str) -> str:
    """The skill tool's answer: one skill's full content by name (case-insensitive), or seed 002's
    "Unknown skill: X. Available: ..." message."""
    wanted = name.strip().casefold()
    for skill in skills:
        if skill.name.casefold() == wanted or skill.id == name.strip():
            return format_skill(skill)
    available = ", ".join(dict.fromkeys(skill.name for skill in skills))
    return f"Unknown skill: {name}. Available: {available}"


# --- pieces ------------------------------------------------------------------------------------


def _header(skills: Sequence[Skill]) -> str:
    domains = {skill.domain for skill in skills}
    if domains == {Domain.CONTENT_GENERATION}:
        return CONTENT_HEADER
    return AI_HEADER


def _plan(body: StrategicPattern) -> str:
    plan = body.plan
    parts = [f"build focus {plan.build_focus.serde}"]
    targets = sorted(plan.priority_targets, key=lambda t: -t.priority)
    if targets:
        parts.append(
            "targets: "
            + "; ".join(
                f"{t.target_type.serde} (priority {t.priority})"
                + (f" {_one_line(t.description)}" if t.description else "")
                for t in targets
            )
        )
    guidance = plan.economic_guidance
    economy = [f"expand {'yes' if guidance.expand else 'no'}", f"{guidance.harvester_target} harvesters"]
    if guidance.priority_builds:
        economy.append("build first " + ", ".join(guidance.priority_builds))
    if guidance.sell_structures:
        economy.append("sell " + ", ".join(guidance.sell_structures))
    parts.append("economy: " + ", ".join(economy))
    risk = plan.risk_assessment
    risk_parts = [f"threat {risk.threat_level.value}", f"time pressure {risk.time_pressure.value}"]
    if risk.expected_attack_direction:
        risk_parts.append(f"attack expected from {risk.expected_attack_direction}")
    if risk.recommended_defense:
        risk_parts.append(f"defense: {_one_line(risk.recommended_defense)}")
    parts.append("risk: " + ", ".join(risk_parts))
    if plan.reasoning:
        parts.append(f"reasoning: {_one_line(plan.reasoning)}")
    return ". ".join(parts)


def _composition(body: EncounterPattern) -> str:
    scenes = []
    for scene in body.scene_composition:
        values = ", ".join(f"{key}={value}" for key, value in scene.values.items())
        scenes.append(f"{scene.template} ({values})" if values else scene.template)
    return " -> ".join(scenes)


def _mission(body: EncounterPattern) -> str:
    hints = body.mission_structure
    parts = []
    if hints.mission_type:
        parts.append(hints.mission_type)
    if hints.player_faction:
        parts.append(f"player faction {hints.player_faction}")
    if hints.difficulty:
        parts.append(f"difficulty {hints.difficulty}")
    if hints.estimated_minutes:
        parts.append(f"about {hints.estimated_minutes} minutes")
    if hints.objectives:
        parts.append("objectives: " + "; ".join(hints.objectives))
    return ", ".join(parts)


def _shares(pairs: tuple[tuple[str, int], ...]) -> str:
    return ", ".join(f"{unit} {share}%" for unit, share in pairs)


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _after_opening(text: str, opening: str) -> str:
    """``text`` without its first paragraph when that paragraph says ``opening`` (whitespace
    aside), else ``text``."""
    first, _, rest = text.partition("\n\n")
    return rest.lstrip() if opening and _one_line(first) == opening else text


__all__ = [
    "AI_HEADER",
    "CATALOG_HEADER",
    "CONTENT_HEADER",
    "DEFAULT_BUDGET",
    "Catalog",
    "LeftOut",
    "PromptContext",
    "catalog",
    "describe_outcome",
    "describe_situation",
    "format_as_context",
    "format_skill",
    "skill_content",
]
