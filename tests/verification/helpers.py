"""Libraries of playable AI skills with fixed ids, so two files hold the same skills."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from skillstudio.model import BuildFocus, Confidence, EconomyState, GamePhase, Quality, SituationSignature
from skillstudio.store import Actor, Database, SkillRepository
from tests.factories import ai_skill, strategic_body

FOCUSES = (BuildFocus.ANTI_ARMOR, BuildFocus.ANTI_AIR, BuildFocus.INFANTRY, BuildFocus.MIXED, BuildFocus.ECONOMY)


def playable_skills(count: int, confidence: Confidence = Confidence.TENTATIVE):
    return [
        ai_skill(
            id=f"5a000000-0000-4000-8000-{index:012d}",
            name=f"Playable plan {index}",
            # the standard opening: these tests pin outcomes the situated start (engine 1.1) would change
            body=replace(
                strategic_body(FOCUSES[index % len(FOCUSES)]),
                situation=SituationSignature(GamePhase.EARLY, EconomyState.EVEN),
            ),
            quality=Quality(0, 0.0, None, confidence, None),
        )
        for index in range(count)
    ]


def make_library(path: Path, count: int, confidence: Confidence = Confidence.TENTATIVE) -> Path:
    with Database(path, create=True) as database:
        SkillRepository(database, Actor("tester")).create_many(playable_skills(count, confidence))
    return path


def with_quality(skill, confidence: Confidence):
    return replace(skill, quality=Quality(0, 0.0, None, confidence, None))


def fill_library(target: str, count: int, confidence: Confidence = Confidence.TENTATIVE) -> str:
    """``make_library`` on a library that exists already (a test's, on its backend)."""
    with Database(target) as database:
        SkillRepository(database, Actor("tester")).create_many(playable_skills(count, confidence))
    return target
