"""Libraries of playable AI skills with fixed ids, so two files hold the same skills."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from skillstudio.model import BuildFocus, Confidence, Quality
from skillstudio.store import Actor, Database, SkillRepository
from tests.factories import ai_skill, strategic_body

FOCUSES = (BuildFocus.ANTI_ARMOR, BuildFocus.ANTI_AIR, BuildFocus.INFANTRY, BuildFocus.MIXED, BuildFocus.ECONOMY)


def playable_skills(count: int, confidence: Confidence = Confidence.TENTATIVE):
    return [
        ai_skill(
            id=f"5a000000-0000-4000-8000-{index:012d}",
            name=f"Playable plan {index}",
            body=strategic_body(FOCUSES[index % len(FOCUSES)]),
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
