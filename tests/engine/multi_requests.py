"""A varied set of batch requests (keyword arguments of ``run_batch``) for the multi-skill tests:
synthetic library skills with their own situations, the sample library's AI skills in their
modules, baselines, compositions, a mirror opponent, other opponents and odd game ranges.

``tests/engine/data/multi_reference.json`` holds each request's digest as engine 1.1.0 played it
one batch at a time, before batches of many skills existed (see test_many_skills.py)."""

from __future__ import annotations

import hashlib
from typing import Any

from benchmarks.synthetic import generate_skills
from skillstudio.library import load_sample
from skillstudio.model import GamePhase
from skillstudio.model.skill import Skill, StrategicPattern

FIELDS = ("game", "seed", "outcome", "duration_s", "resource_delta", "army_value_delta", "map_control", "timeline")


def strategy_skills() -> tuple[list[Skill], list[Skill]]:
    """(synthetic ra1-played AI skills, the sample library's AI skills)."""
    synthetic = [s for s in generate_skills(700, 57) if isinstance(s.body, StrategicPattern)]
    sample = [e.skill for e in load_sample() if isinstance(e.skill.body, StrategicPattern)]
    return synthetic, sample


def requests() -> list[dict[str, Any]]:
    synthetic, sample = strategy_skills()
    out: list[dict[str, Any]] = []
    for i, skill in enumerate(synthetic[:90]):  # the common case: one opponent, mixed situations
        out.append({"skill_or_pattern": skill, "opponent": "IC Default Hard", "games": 6 + i % 5, "seed": 7})
    for i, skill in enumerate(synthetic[90:100]):
        out.append(
            {"skill_or_pattern": skill, "opponent": "IC Default Hard", "games": 5, "seed": 7, "first_game": 3 * i}
        )
    for skill in synthetic[100:110]:
        out.append({"skill_or_pattern": skill, "opponent": "IC Default Hard", "games": 6, "seed": 7, "baseline": True})
    for i, skill in enumerate(synthetic[110:122]):  # compositions, switching at times and phases
        later = synthetic[122 + i], synthetic[140 + i]
        then: tuple[tuple[float | GamePhase, Skill], ...] = (
            ((600.0 + 30 * i, later[0]), (GamePhase.LATE, later[1])) if i % 2 else ((GamePhase.MID, later[0]),)
        )
        out.append({"skill_or_pattern": skill, "opponent": "IC Default Hard", "games": 5, "seed": 7, "then": then})
    for skill in synthetic[160:170]:
        out.append({"skill_or_pattern": skill, "opponent": "mirror", "games": 5, "seed": 3})
    for skill in synthetic[170:176]:
        out.append({"skill_or_pattern": skill, "opponent": "Classic RA Normal", "games": 4, "seed": 3})
    for skill in sample:
        module = skill.provenance.game_module
        opponent = "OpenRA Brutal" if module == "td" else "IC Default Hard"
        out.append({"skill_or_pattern": skill, "opponent": opponent, "games": 7, "seed": 11, "module": module})
    out.append({"skill_or_pattern": synthetic[0], "opponent": "IC Default Hard", "games": 0, "seed": 7})
    out.append({"skill_or_pattern": synthetic[1].body, "opponent": "IC Default Hard", "games": 4, "seed": 7})
    return out


def digest(batch: Any) -> str:
    h = hashlib.sha256()
    for name in (*FIELDS, "timeline_t"):
        h.update(getattr(batch, name).tobytes())
    return h.hexdigest()[:32]
