"""The closed vocabularies of D057 and the IC formats it leans on.

Each enum's *value* is the snake_case spelling D057's SQL uses (and our documents use); its
``serde`` property is the PascalCase variant name Rust's serde writes into ``body_json``.
``parse`` accepts either spelling, any case, hyphens or underscores, plus the aliases listed
in docs/formats.md, so that text written by the engine, by an LLM or by hand all reads.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any, Self

_SEPARATORS = re.compile(r"[\s_\-]+")


def _fold(text: str) -> str:
    return _SEPARATORS.sub("", text).lower()


# A ClassVar on an Enum subclass would become a member, so the spelling tables live beside it.
_SPELLINGS: dict[type, dict[str, Any]] = {}
_SERDE: dict[str, str] = {}  # a value's serde spelling (it depends on the value alone)
# Spellings already read, as written, per enum: a library spells each value one way or two, and
# a stored body holds a dozen enum fields (folding each took a regex pass). Bounded, so a
# hostile file of made-up spellings cannot grow it without end.
_READ: dict[type, dict[str, Any]] = {}
_READ_LIMIT = 4096


class SpelledEnum(StrEnum):
    """A StrEnum that parses every reasonable spelling of its members."""

    @property
    def serde(self) -> str:
        spelled = _SERDE.get(self.value)
        if spelled is None:  # worked out once per value: every stored body spells many
            spelled = _SERDE[self.value] = "".join(part.capitalize() for part in self.value.split("_"))
        return spelled

    @property
    def label(self) -> str:
        """How a person reads it: "LLM discovered", "Anti air", "Changes requested"."""
        text = self.value.replace("_", " ").capitalize()
        return text.replace("Llm ", "LLM ").replace("Ai ", "AI ")

    @classmethod
    def label_of(cls, stored: str) -> str:
        """The label of a value as stored; one this version does not know (a newer SkillStudio,
        another program) is shown as stored."""
        try:
            return cls(stored).label
        except ValueError:
            return stored

    @classmethod
    def parse(cls, raw: object) -> Self:
        """Return the member ``raw`` spells, or raise ValueError naming the valid spellings."""
        if isinstance(raw, cls):
            return raw
        if not isinstance(raw, str):
            # ValueError, not TypeError: Checker.enum turns it into an issue for any value a file holds
            raise ValueError(f"expected one of {cls.choices()}, got {type(raw).__name__}")  # noqa: TRY004
        read = _READ.get(cls)
        if read is None:
            read = _READ[cls] = {}
        member = read.get(raw)
        if member is not None:
            return member  # type: ignore[no-any-return]
        folded = _fold(raw)
        member = cls._spellings().get(folded)
        if member is None:
            aliases = cls._aliases_map()
            if folded not in aliases:
                raise ValueError(f"{raw!r} is not one of {cls.choices()}")
            member = cls(aliases[folded])
        if len(read) < _READ_LIMIT:
            read[raw] = member
        return member

    @classmethod
    def _spellings(cls) -> dict[str, Self]:
        """Each member by its folded value and serde spellings (the first member wins a clash),
        built once: files hold tens of thousands of enum fields, parsed on every read."""
        table = _SPELLINGS.get(cls)
        if table is None:
            table = {}
            for member in cls:
                table.setdefault(_fold(member.value), member)
                table.setdefault(_fold(member.serde), member)
            _SPELLINGS[cls] = table
        return table

    @classmethod
    def choices(cls) -> str:
        return "|".join(member.value for member in cls)

    @classmethod
    def _aliases_map(cls) -> dict[str, str]:
        # A ClassVar on an Enum subclass would become a member, so aliases live in a side table.
        return _ALIASES.get(cls.__name__, {})


class Domain(SpelledEnum):
    AI_STRATEGY = "ai_strategy"
    CONTENT_GENERATION = "content_generation"

    @property
    def short(self) -> str:
        """The CLI spelling D057 uses: ``ai`` or ``content``."""
        return "ai" if self is Domain.AI_STRATEGY else "content"


class Confidence(SpelledEnum):
    TENTATIVE = "tentative"
    ESTABLISHED = "established"
    PROVEN = "proven"

    @property
    def rank(self) -> int:
        return _CONFIDENCE_RANK[self]

    @classmethod
    def parse_range(cls, raw: str) -> tuple[Confidence, ...]:
        """``established+`` means established or better, as in D057's ``ic skill export``."""
        text = raw.strip()
        if text.endswith("+"):
            floor = cls.parse(text[:-1])
            return tuple(member for member in cls if member.rank >= floor.rank)
        return (cls.parse(text),)


_CONFIDENCE_RANK = {Confidence.TENTATIVE: 0, Confidence.ESTABLISHED: 1, Confidence.PROVEN: 2}


class SourceKind(SpelledEnum):
    LLM_DISCOVERED = "llm_discovered"
    HAND_AUTHORED = "hand_authored"
    WORKSHOP = "workshop"
    HUMAN_REFINED = "human_refined"


class ReviewState(SpelledEnum):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    CHANGES_REQUESTED = "changes_requested"


class BodyKind(SpelledEnum):
    STRATEGIC_PATTERN = "strategic_pattern"
    ENCOUNTER_PATTERN = "encounter_pattern"
    VERIFIED_EXAMPLE = "verified_example"
    INSTRUCTIONS = "instructions"


class GamePhase(SpelledEnum):
    EARLY = "early"
    MID = "mid"
    LATE = "late"


class EconomyState(SpelledEnum):
    AHEAD = "ahead"
    EVEN = "even"
    BEHIND = "behind"


class ThreatLevel(SpelledEnum):
    """D057's five levels; D044's enum is the same without ``none`` (see docs/formats.md)."""

    NONE = "none"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"


class TargetType(SpelledEnum):
    ATTACK = "attack"
    DEFEND = "defend"
    SCOUT = "scout"
    EXPAND = "expand"
    HARASS = "harass"
    RETREAT = "retreat"


class BuildFocus(SpelledEnum):
    ANTI_ARMOR = "anti_armor"
    ANTI_AIR = "anti_air"
    NAVAL = "naval"
    ECONOMY = "economy"
    TECH = "tech"
    MIXED = "mixed"
    INFANTRY = "infantry"
    AIR_POWER = "air_power"


class TimePressure(SpelledEnum):
    NONE = "none"
    LOW = "low"
    MEDIUM = "medium"
    URGENT = "urgent"
    IMMEDIATE = "immediate"


# Spellings from other documents (D057 CLI, the [R] LLM wire schema, D018 profiles), folded.
_ALIASES: dict[str, dict[str, str]] = {
    "Domain": {
        "ai": "ai_strategy",
        "content": "content_generation",
        "generation": "content_generation",
        "contentgen": "content_generation",
    },
    "SourceKind": {"llm": "llm_discovered", "hand": "hand_authored", "human": "hand_authored"},
    "BuildFocus": {
        "infantrymass": "infantry",
        "balanced": "mixed",
        "air": "air_power",
        "antitank": "anti_armor",
        "armor": "anti_armor",
    },
    "TimePressure": {"moderate": "medium"},
    "ThreatLevel": {"moderate": "medium"},
    "GamePhase": {"earlygame": "early", "midgame": "mid", "lategame": "late"},
}
