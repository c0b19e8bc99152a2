"""Deterministic synthetic skill libraries for benchmarks: ``generate_skills(count, seed)``.

The skills are plausible rather than random noise, so that SQLite, FTS5 and the GUI see the data
shapes a real library would give them:

* both domains (about 60% ai_strategy, 40% content_generation), game modules ra1/td/ra2 and
  every body kind a domain allows, with ``body_json`` between roughly 1 and 3 KB;
* every confidence tier with quality figures that fit it (D057: tentative < 3 verifications,
  established 3-10, proven 10+), every source kind; a ``human_refined`` skill always points at a
  skill earlier in the list (so inserting in list order never refers forward), and so do
  ``composable_with`` partners and ``Instructions.references``;
* 0-6 tags from a vocabulary of about 200, Zipf-distributed (a few tags are on many skills,
  most on few), and names and descriptions built from Zipf-weighted word pools, so FTS5 sees
  common terms (``tank``), rare ones, and prefixes such as ``anti`` / ``ar``.

The same ``(count, seed)`` always gives the same skills (ids, timestamps and all); a prefix of a
larger library is *not* the smaller library, because timestamps spread over the whole count.
"""

from __future__ import annotations

import random
import uuid
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from itertools import accumulate
from typing import Any

from skillstudio.model import (
    BodyKind,
    BuildFocus,
    Confidence,
    Domain,
    EconomicGuidance,
    EconomyState,
    EncounterPattern,
    GamePhase,
    Instructions,
    MissionStructureHints,
    Provenance,
    Quality,
    ReviewState,
    RiskAssessment,
    SceneInstance,
    SituationSignature,
    Skill,
    SkillBody,
    Source,
    SourceKind,
    StrategicPattern,
    StrategicPlan,
    StrategicTarget,
    TargetType,
    ThreatLevel,
    TimePressure,
    VerifiedExample,
    WorldPos,
    body_to_json,
    normalize_timestamp,
)

DEFAULT_SEED = 57

# Queries the store benchmark runs; the vocabulary below makes sure they match a realistic share.
PREFIX_QUERY = "anti ar"  # two prefixes: anti-air / anti-armor ... with armor, army, artillery
COMMON_TERM = "tank"  # one word that many names and descriptions use
COMMON_TAG = "early-game"  # a popular tag (exact match, as the tag filter needs)

BODY_MIN_BYTES = 1_000
BODY_MAX_BYTES = 3_000
BODY_MODE_BYTES = 1_700

# --- distributions -----------------------------------------------------------------------------

_DOMAINS = ((Domain.AI_STRATEGY, 60), (Domain.CONTENT_GENERATION, 40))
_MODULES = (("ra1", 60), ("td", 25), ("ra2", 15))
_BODY_KINDS = {
    Domain.AI_STRATEGY: (
        (BodyKind.STRATEGIC_PATTERN, 60),
        (BodyKind.VERIFIED_EXAMPLE, 20),
        (BodyKind.INSTRUCTIONS, 20),
    ),
    Domain.CONTENT_GENERATION: (
        (BodyKind.ENCOUNTER_PATTERN, 60),
        (BodyKind.VERIFIED_EXAMPLE, 20),
        (BodyKind.INSTRUCTIONS, 20),
    ),
}
_CONFIDENCES = ((Confidence.TENTATIVE, 55), (Confidence.ESTABLISHED, 30), (Confidence.PROVEN, 15))
_SOURCES = (
    (SourceKind.LLM_DISCOVERED, 60),
    (SourceKind.HAND_AUTHORED, 15),
    (SourceKind.WORKSHOP, 15),
    (SourceKind.HUMAN_REFINED, 10),
)
_REVIEW_STATES = (
    (None, 70),
    (ReviewState.PENDING, 12),
    (ReviewState.APPROVED, 12),
    (ReviewState.REJECTED, 3),
    (ReviewState.CHANGES_REQUESTED, 3),
)
_TAG_COUNTS = ((0, 8), (1, 14), (2, 22), (3, 22), (4, 16), (5, 10), (6, 8))

_LLM_MODELS = (
    "claude-sonnet-4-5",
    "gpt-4o-2024-08-06",
    "llama3.1:70b",
    "qwen2.5:32b-instruct",
    "mistral-large-2411",
    "gemini-1.5-pro-002",
    "deepseek-v3",
)
_ENGINE_VERSIONS = ("0.5.0", "0.5.3", "0.6.0", "0.6.1", "0.7.0-rc1", "0.7.0", "0.7.2")
_HUMANS = (
    "alice",
    "bjorn",
    "carmen",
    "dmitri",
    "eun-ji",
    "farah",
    "gustavo",
    "hana",
    "ivan",
    "jules",
    "kofi",
    "lena",
    "mateo",
    "nadia",
    "oskar",
    "priya",
)
_AGENTS = ("agent:orchestrator", "agent:mission-gen", "agent:curator", "agent:verifier")
_PUBLISHERS = (
    "tesla-lab",
    "chrono-works",
    "ion-cannon-club",
    "mammoth-guild",
    "nod-brotherhood",
    "allied-command",
    "red-dawn",
    "harvester-union",
    "tiberium-sun-fans",
    "soviet-tactics",
)

# --- game vocabulary (actor codes as the engines spell them) -----------------------------------

_UNITS = {
    "ra1": (
        "e1",
        "e2",
        "e3",
        "e4",
        "e6",
        "e7",
        "spy",
        "dog",
        "medi",
        "1tnk",
        "2tnk",
        "3tnk",
        "4tnk",
        "v2rl",
        "arty",
        "jeep",
        "apc",
        "harv",
        "mcv",
        "mnly",
        "ttnk",
        "ctnk",
        "qtnk",
        "dtrk",
        "shok",
        "yak",
        "mig",
        "heli",
        "hind",
        "tran",
        "ss",
        "dd",
        "ca",
        "pt",
        "lst",
        "msub",
    ),
    "td": (
        "e1",
        "e2",
        "e3",
        "e4",
        "e5",
        "e6",
        "rmbo",
        "jeep",
        "bggy",
        "bike",
        "ltnk",
        "mtnk",
        "htnk",
        "arty",
        "msam",
        "mlrs",
        "stnk",
        "ftnk",
        "apc",
        "harv",
        "mcv",
        "orca",
        "heli",
        "tran",
        "boat",
    ),
    "ra2": (
        "e1",
        "e2",
        "ggi",
        "flakt",
        "shk",
        "deso",
        "engineer",
        "tanya",
        "boris",
        "mtnk",
        "htnk",
        "apoc",
        "fv",
        "sref",
        "mrj",
        "v3",
        "drone",
        "ttnk",
        "lasher",
        "hover",
        "dest",
        "aegis",
        "carrier",
        "dred",
        "sub",
        "squid",
        "zep",
        "harv",
        "cmin",
        "orca",
    ),
}
_STRUCTURES = {
    "ra1": (
        "powr",
        "apwr",
        "proc",
        "weap",
        "barr",
        "tent",
        "dome",
        "fix",
        "atek",
        "stek",
        "gun",
        "agun",
        "sam",
        "tsla",
        "pbox",
        "hbox",
        "ftur",
        "gap",
        "iron",
        "pdox",
        "mslo",
        "silo",
        "hpad",
        "afld",
        "spen",
        "syrd",
        "kenn",
    ),
    "td": (
        "fact",
        "nuke",
        "nuk2",
        "proc",
        "silo",
        "pyle",
        "hand",
        "weap",
        "afld",
        "hq",
        "eye",
        "tmpl",
        "gtwr",
        "atwr",
        "obli",
        "gun",
        "sam",
        "hpad",
        "fix",
    ),
    "ra2": (
        "gapowr",
        "napowr",
        "garefn",
        "narefn",
        "gapile",
        "nahand",
        "gaweap",
        "naweap",
        "gaairc",
        "naradr",
        "gatech",
        "natech",
        "gapill",
        "nalasr",
        "atesla",
        "gacsph",
        "naclon",
        "gaweat",
        "namisl",
        "nairon",
    ),
}
_TECH = {
    "ra1": (
        "tier1",
        "tier2",
        "tier3",
        "radar",
        "tech_center",
        "air",
        "naval",
        "chronosphere",
        "iron_curtain",
        "nuke",
        "gps",
        "tesla",
    ),
    "td": ("tier1", "tier2", "tier3", "radar", "temple", "advanced_comm", "ion_cannon", "stealth", "obelisk"),
    "ra2": (
        "tier1",
        "tier2",
        "tier3",
        "radar",
        "battle_lab",
        "chronosphere",
        "weather_control",
        "iron_curtain",
        "nuclear_silo",
        "cloning_vats",
    ),
}
_FACTIONS = {"ra1": ("allies", "soviet"), "td": ("gdi", "nod"), "ra2": ("allies", "soviet", "yuri")}
_MAPS = (
    "coastal-influence",
    "north-by-northwest",
    "keep-off-the-grass",
    "bridgehead",
    "marooned",
    "ore-lord",
    "pitfall",
    "river-rampage",
    "central-conflict",
    "equal-opportunity",
    "isle-of-fury",
    "high-ground",
    "lake-blitz",
    "tundra-trouble",
    "green-acres",
    "tiberium-garden",
    "urban-rush",
    "dune-sea",
    "glacier-pass",
    "twin-peaks",
    "canyon-crossing",
    "volcanic-isle",
    "siberian-front",
    "paris-outskirts",
    "desert-storm",
    "fjord-fight",
    "salt-flats",
    "jungle-ruins",
)
_SCENES = (
    "ambush",
    "patrol",
    "convoy_escort",
    "defend_position",
    "bridge_ambush",
    "timed_extraction",
    "weather_escalation",
    "reinforcement_wave",
    "base_assault",
    "stealth_infiltration",
    "rescue_hostages",
    "naval_landing",
    "artillery_barrage",
    "sabotage",
    "hold_the_line",
    "evacuation",
    "scout_recon",
    "boss_encounter",
    "supply_raid",
    "air_strike_window",
)
_PARAMETERS = (
    "aggression",
    "tech_priority",
    "expansion_bias",
    "harvester_count",
    "scout_interval_ticks",
    "defense_ratio",
    "air_ratio",
    "naval_ratio",
    "retreat_threshold",
    "rally_distance",
    "attack_wave_size",
    "power_margin",
    "base_spread",
    "superweapon_priority",
)
_DIRECTIONS = (
    "north",
    "north-east",
    "east",
    "south-east",
    "south",
    "south-west",
    "west",
    "north-west",
    "the river ford",
    "the ore field",
    "the bridge",
    "the coast",
)
_TOOLS = (
    "skill_search",
    "get_game_state",
    "set_parameter",
    "issue_orders",
    "read_event_log",
    "place_scene",
    "validate_mission",
    "rate_mission",
    "web_fetch",
    "read_file",
)

# --- tags: about 200, most popular first (Zipf weights follow this order) ----------------------

_CORE_AI_TAGS = (
    "early-game",
    "anti-armor",
    "mid-game",
    "anti-air",
    "defense",
    "rush",
    "economy",
    "late-game",
    "harass",
    "expansion",
    "naval",
    "tank-rush",
    "counter-attack",
    "scouting",
    "tech-rush",
    "anti-infantry",
    "turtle",
    "air",
    "base-defense",
    "fast-expand",
    "flank",
    "macro",
    "micro",
    "all-in",
    "timing-attack",
    "superweapon",
    "infantry-spam",
    "engineer-rush",
    "tesla",
    "artillery",
    "mines",
    "walling",
    "chronosphere",
    "iron-curtain",
    "nuke",
    "ion-cannon",
    "paratroopers",
    "spy-plane",
    "stealth",
    "air-superiority",
    "ore-control",
    "harvester-raid",
    "power-snipe",
    "comeback",
    "cheese",
    "containment",
    "team-game",
    "1v1",
    "ffa",
    "vs-hard-ai",
    "vs-brutal-ai",
    "low-power",
    "high-econ",
    "tech-switch",
    "mass-tanks",
)
_CORE_CONTENT_TAGS = (
    "ambush",
    "escort",
    "defend-position",
    "convoy",
    "extraction",
    "patrol",
    "base-assault",
    "rescue",
    "siege",
    "evacuation",
    "recon",
    "hold-the-line",
    "wave-defense",
    "capture",
    "destroy-base",
    "survival",
    "sabotage",
    "infiltration",
    "commando",
    "boss",
    "timed",
    "night",
    "weather",
    "bridge",
    "river",
    "island",
    "urban",
    "snow",
    "desert",
    "jungle",
    "coop",
    "campaign",
    "skirmish",
    "tutorial",
    "puzzle",
    "story",
    "branching",
    "onslaught",
    "naval-landing",
    "air-strike",
    "easy",
    "normal",
    "hard",
    "brutal",
    "short",
    "long",
    "player-favorite",
    "replayable",
    "cinematic",
    "sandbox",
)
_FACTION_TAGS = ("allies", "soviet", "gdi", "nod", "yuri")
_MAP_TAGS = tuple(f"map-{name}" for name in _MAPS)
_UNIT_TAGS = tuple(
    f"unit-{code}"
    for code in dict.fromkeys(
        (
            "3tnk",
            "4tnk",
            "v2rl",
            "ttnk",
            "1tnk",
            "2tnk",
            "arty",
            "e3",
            "e1",
            "yak",
            "mig",
            "heli",
            "ss",
            "dd",
            "ca",
            "htnk",
            "mtnk",
            "ltnk",
            "orca",
            "stnk",
            "ftnk",
            "msam",
            "apoc",
            "mrj",
            "v3",
            "deso",
            "ggi",
            "flakt",
            "dred",
            "carrier",
            "harv",
            "mcv",
            "spy",
            "dog",
            "shok",
            "ctnk",
            "qtnk",
            "dtrk",
            "jeep",
            "apc",
            "bggy",
            "bike",
            "rmbo",
            "tanya",
            "boris",
        )
    )
)
_EXTRA_TAGS = (
    "engine-0.7",
    "needs-review",
    "from-tournament",
    "league-s3",
    "league-s4",
    "experimental",
    "deprecated",
    "community-pick",
    "balance-patch-2",
    "handcrafted",
)
AI_TAGS = _CORE_AI_TAGS + _FACTION_TAGS + _UNIT_TAGS + _MAP_TAGS + _EXTRA_TAGS
CONTENT_TAGS = _CORE_CONTENT_TAGS + _FACTION_TAGS + _MAP_TAGS + _UNIT_TAGS[:20] + _EXTRA_TAGS
TAG_VOCABULARY: tuple[str, ...] = tuple(dict.fromkeys(AI_TAGS + CONTENT_TAGS))

# --- words for names, descriptions and bodies (most common first within each pool) --------------

_TACTICS = (
    "rush",
    "push",
    "defense",
    "harass",
    "expansion",
    "containment",
    "raid",
    "timing attack",
    "counter-push",
    "turtle",
    "flank",
    "siege",
    "boom",
    "tech switch",
    "air raid",
    "blockade",
    "drop",
    "feint",
    "pincer",
    "breakout",
    "ambush",
    "escort",
    "retreat",
    "trade",
    "snipe",
    "sweep",
    "bait",
    "screen",
    "hold",
    "overrun",
)
_SUBJECTS = (
    "tank",
    "heavy tank",
    "light tank",
    "Tesla coil",
    "Mammoth tank",
    "V2 rocket",
    "MiG",
    "Longbow",
    "infantry",
    "rocket soldier",
    "engineer",
    "APC",
    "artillery",
    "armor",
    "army",
    "harvester",
    "submarine",
    "destroyer",
    "cruiser",
    "Chrono tank",
    "Tesla tank",
    "flame tank",
    "Orca",
    "Obelisk",
    "stealth tank",
    "commando",
    "paratrooper",
    "Yak",
    "Hind",
    "gunboat",
    "spy",
    "attack dog",
    "medic",
    "mine layer",
    "demolition truck",
    "Apocalypse tank",
    "Kirov airship",
    "Prism tank",
    "Desolator",
    "GI",
    "Rhino tank",
    "Grizzly tank",
)
_FOCUS_WORDS = (
    "anti-armor",
    "anti-air",
    "early",
    "fast",
    "aggressive",
    "defensive",
    "late",
    "naval",
    "economic",
    "mixed",
    "mass",
    "tech",
    "mobile",
    "stealthy",
    "layered",
    "anti-infantry",
    "opportunistic",
    "safe",
    "greedy",
    "coordinated",
    "staggered",
    "two-pronged",
    "sustained",
    "armored",
    "artillery-backed",
)
_CONTEXTS = (
    "when behind on economy",
    "against an early expansion",
    "on island maps",
    "after losing the ore field",
    "versus turtling AI",
    "in the mid game",
    "against air-heavy armies",
    "with low power",
    "on narrow maps",
    "when ahead",
    "versus Soviet armor",
    "versus Allied navy",
    "in team games",
    "before the enemy techs up",
    "under artillery fire",
    "on open desert maps",
    "after a failed rush",
    "against stealth units",
    "near the bridge",
    "around the ore field",
    "during a superweapon countdown",
    "in snow maps",
    "with a single war factory",
    "against mass infantry",
    "when the enemy expands",
)
_MISSION_NOUNS = (
    "mission",
    "encounter",
    "scenario",
    "operation",
    "defense",
    "escort",
    "assault",
    "extraction",
    "ambush",
    "raid",
    "siege",
    "rescue",
    "evacuation",
    "holdout",
    "crossing",
    "landing",
)
_MISSION_ADJECTIVES = (
    "timed",
    "night",
    "desperate",
    "stealth",
    "bridge",
    "convoy",
    "coastal",
    "winter",
    "urban",
    "two-phase",
    "escalating",
    "branching",
    "surprise",
    "last-stand",
    "behind-the-lines",
    "storm",
    "jungle",
    "desert",
    "river",
    "mountain",
)
_VERBS = (
    "use",
    "build",
    "send",
    "hold",
    "scout",
    "attack",
    "defend",
    "expand",
    "protect",
    "mass",
    "counter",
    "raid",
    "deny",
    "delay",
    "switch to",
    "keep",
    "add",
    "spread",
    "bait",
    "punish",
    "repair",
    "escort",
    "reinforce",
    "trigger",
    "spawn",
    "place",
    "reveal",
    "ambush",
    "stagger",
)
_GOALS = (
    "break the enemy line",
    "secure the ore field",
    "stop the air threat",
    "protect harvesters",
    "win the tank battle",
    "survive the first wave",
    "deny the expansion",
    "kill the war factory",
    "keep map control",
    "reach the tech tier",
    "force the enemy to turtle",
    "trade efficiently",
    "build a lead",
    "punish greedy play",
    "hold the chokepoint",
    "keep the player busy",
    "raise tension before the finale",
    "give the player a breather",
    "reward scouting",
    "teach the new unit",
    "end the mission in time",
)
_FILLER = (
    "the",
    "and",
    "to",
    "a",
    "of",
    "with",
    "enemy",
    "base",
    "before",
    "after",
    "when",
    "then",
    "while",
    "early",
    "late",
    "unit",
    "units",
    "support",
    "pressure",
    "position",
    "player",
    "wave",
    "map",
    "timing",
    "power",
    "ore",
    "tech",
    "cover",
    "flank",
    "front",
    "line",
    "group",
    "area",
    "route",
    "arrival",
    "artillery",
    "army",
    "armor",
    "area",
    "objective",
    "radar",
    "bridge",
    "cliff",
    "forest",
    "shore",
    "retreat",
    "reinforcements",
    "threat",
    "cost",
    "value",
    "minutes",
    "seconds",
    "ticks",
    "priority",
    "orders",
    "defenses",
    "production",
)

_TEXT_POOL_SIZE = 3_000
_MAX_TEXT_CHARS = 4_000


def _zipf_cumulative(count: int, exponent: float = 1.05) -> list[float]:
    return list(accumulate(1.0 / (rank**exponent) for rank in range(1, count + 1)))


class _Picker:
    """Zipf-weighted choice over a fixed sequence (the first item is the most common)."""

    __slots__ = ("cumulative", "items", "last", "total")

    def __init__(self, items: Sequence[Any], exponent: float = 1.05) -> None:
        self.items = tuple(items)
        self.cumulative = _zipf_cumulative(len(self.items), exponent)
        self.total = self.cumulative[-1]
        self.last = len(self.items) - 1

    def one(self, rng: random.Random) -> Any:
        # random.choices(cum_weights=...) without its per-call overhead; this runs ~1M times.
        return self.items[min(bisect_right(self.cumulative, rng.random() * self.total), self.last)]

    def distinct(self, rng: random.Random, k: int) -> list[Any]:
        """Up to ``k`` different items, in the order drawn."""
        picked: dict[Any, None] = {}
        attempts = 0
        while len(picked) < min(k, len(self.items)) and attempts < 8 * k + 8:
            picked[self.one(rng)] = None
            attempts += 1
        return list(picked)


def _weighted(rng: random.Random, table: Sequence[tuple[Any, int]]) -> Any:
    """One item of a small ``((item, weight), ...)`` table."""
    point = rng.random() * sum(weight for _, weight in table)
    for item, weight in table:
        point -= weight
        if point < 0:
            return item
    return table[-1][0]


def _a(word: str) -> str:
    return f"an {word}" if word[0] in "aeiou" else f"a {word}"


class _Generator:
    def __init__(self, count: int, seed: int) -> None:
        self.count = count
        self.rng = random.Random(seed)
        self.tactics = _Picker(_TACTICS)
        self.subjects = _Picker(_SUBJECTS)
        self.focus = _Picker(_FOCUS_WORDS)
        self.contexts = _Picker(_CONTEXTS)
        self.mission_nouns = _Picker(_MISSION_NOUNS)
        self.mission_adjectives = _Picker(_MISSION_ADJECTIVES)
        self.verbs = _Picker(_VERBS)
        self.goals = _Picker(_GOALS)
        self.filler = _Picker(_FILLER, exponent=0.9)
        self.maps = _Picker(_MAPS, exponent=0.8)
        self.scenes = _Picker(_SCENES)
        self.ai_tags = _Picker(AI_TAGS, exponent=1.0)
        self.content_tags = _Picker(CONTENT_TAGS, exponent=1.0)
        self.units = {module: _Picker(codes, 0.9) for module, codes in _UNITS.items()}
        self.structures = {module: _Picker(codes, 0.9) for module, codes in _STRUCTURES.items()}
        self.tech = {module: _Picker(codes, 0.9) for module, codes in _TECH.items()}
        # Body prose comes from a pool of sentences built once: fast, and still varied.
        self.pool = [self._sentence() for _ in range(_TEXT_POOL_SIZE)]
        self.ids: list[str] = []
        self.ids_by_domain: dict[Domain, list[str]] = {domain: [] for domain, _ in _DOMAINS}
        self.start = datetime(2024, 1, 1, tzinfo=UTC)
        self.span_seconds = 700 * 24 * 3600.0

    # --- text ------------------------------------------------------------------------------

    def _sentence(self) -> str:
        rng = self.rng
        shape = rng.randrange(5)
        if shape == 0:
            words = [self.verbs.one(rng), self.focus.one(rng), self.subjects.one(rng), self.contexts.one(rng)]
            words += ["to", self.goals.one(rng)]
        elif shape == 1:
            words = ["If the", self.subjects.one(rng), self.filler.one(rng), self.filler.one(rng)]
            words += [self.contexts.one(rng) + ",", self.verbs.one(rng), self.filler.one(rng)]
            words += [self.subjects.one(rng), self.filler.one(rng), self.filler.one(rng)]
        elif shape == 2:
            words = ["The", self.focus.one(rng), self.tactics.one(rng), "works", self.contexts.one(rng)]
            words += ["because the", self.subjects.one(rng), self.filler.one(rng), self.filler.one(rng)]
        elif shape == 3:
            words = [self.verbs.one(rng), _a(self.tactics.one(rng)), "with", str(rng.randint(2, 12))]
            words += [self.subjects.one(rng) + "s", "at", f"{rng.randint(2, 25)}:{rng.randint(0, 59):02d}"]
            words += ["and", self.goals.one(rng)]
        else:
            words = [self.filler.one(rng) for _ in range(rng.randint(6, 14))]
            words[0:0] = ["Keep", "the"]
        text = " ".join(words)
        return text[0].upper() + text[1:] + "."

    def _prose(self, chars: int, *, paragraph: int = 4) -> str:
        """About ``chars`` characters of sentences from the pool (never empty)."""
        rng = self.rng
        chars = max(40, min(chars, _MAX_TEXT_CHARS))
        parts: list[str] = []
        length = 0
        while length < chars:
            sentence = rng.choice(self.pool)
            parts.append(sentence)
            length += len(sentence) + 1
            if len(parts) % paragraph == 0:
                parts.append("\n\n")
        return " ".join(parts).replace(" \n\n ", "\n\n").strip()

    def _name(self, domain: Domain, module: str) -> str:
        rng = self.rng
        if domain is Domain.AI_STRATEGY:
            shape = rng.randrange(4)
            focus, tactic, subject = self.focus.one(rng), self.tactics.one(rng), self.subjects.one(rng)
            if shape == 0:
                name = f"{focus} {subject} {tactic}"
            elif shape == 1:
                name = f"{subject} {tactic} {self.contexts.one(rng)}"
            elif shape == 2:
                name = f"{focus} {tactic} on {self.maps.one(rng).replace('-', ' ')}"
            else:
                name = f"{tactic} into {subject} {self.contexts.one(rng)}"
        else:
            adjective, noun = self.mission_adjectives.one(rng), self.mission_nouns.one(rng)
            shape = rng.randrange(3)
            if shape == 0:
                name = f"{adjective} {noun} with {self.scenes.one(rng).replace('_', ' ')}"
            elif shape == 1:
                name = f"{adjective} {noun}: {self.subjects.one(rng)} {self.tactics.one(rng)}"
            else:
                name = f"{noun} on {self.maps.one(rng).replace('-', ' ')} ({module.upper()})"
        return name[0].upper() + name[1:]

    def _description(self, domain: Domain) -> str:
        rng = self.rng
        first = (
            f"{self.verbs.one(rng).capitalize()} {self.focus.one(rng)} {self.subjects.one(rng)}s "
            f"{self.contexts.one(rng)} to {self.goals.one(rng)}."
            if domain is Domain.AI_STRATEGY
            else f"{_a(self.mission_adjectives.one(rng)).capitalize()} {self.mission_nouns.one(rng)} "
            f"where the player must {self.goals.one(rng)} {self.contexts.one(rng)}."
        )
        extra = [rng.choice(self.pool) for _ in range(rng.choices((0, 1, 2), (3, 5, 2))[0])]
        return " ".join([first, *extra])

    # --- bodies ----------------------------------------------------------------------------

    def _composition(self, module: str, parts: int) -> tuple[tuple[str, int], ...]:
        rng = self.rng
        units = self.units[module].distinct(rng, parts)
        shares = sorted((rng.randint(5, 60) for _ in units), reverse=True)
        total = sum(shares) or 1
        return tuple((unit, max(1, round(100 * share / total))) for unit, share in zip(units, shares, strict=True))

    def _strategic_pattern(self, module: str, prose_chars: int) -> StrategicPattern:
        rng = self.rng
        situation = SituationSignature(
            game_phase=rng.choice(tuple(GamePhase)),
            economy_state=rng.choice(tuple(EconomyState)),
            army_composition=self._composition(module, rng.randint(2, 5)),
            enemy_composition_estimate=self._composition(module, rng.randint(1, 4)),
            map_control=round(rng.uniform(0.05, 0.95), 2),
            threat_level=rng.choice(tuple(ThreatLevel)),
            active_tech=tuple(self.tech[module].distinct(rng, rng.randint(1, 4))),
        )
        targets = tuple(
            StrategicTarget(
                target_type=rng.choice(tuple(TargetType)),
                priority=rng.randint(1, 10),
                description=f"{self.verbs.one(rng).capitalize()} the {self.subjects.one(rng)} {self.contexts.one(rng)}",
                position=WorldPos(rng.randint(0, 131_072), rng.randint(0, 131_072), 0) if rng.random() < 0.6 else None,
            )
            for _ in range(rng.randint(1, 4))
        )
        plan = StrategicPlan(
            build_focus=rng.choice(tuple(BuildFocus)),
            priority_targets=targets,
            economic_guidance=EconomicGuidance(
                expand=rng.random() < 0.5,
                harvester_target=rng.randint(2, 8),
                sell_structures=tuple(self.structures[module].distinct(rng, rng.choice((0, 0, 1, 2)))),
                priority_builds=tuple(self.structures[module].distinct(rng, rng.randint(1, 4))),
            ),
            risk_assessment=RiskAssessment(
                threat_level=rng.choice(tuple(ThreatLevel)),
                time_pressure=rng.choice(tuple(TimePressure)),
                expected_attack_direction=rng.choice(_DIRECTIONS) if rng.random() < 0.7 else None,
                recommended_defense=rng.choice(self.pool)[:200] if rng.random() < 0.6 else None,
            ),
            confidence=rng.randint(300, 950),
            reasoning=self._prose(prose_chars),
        )
        bindings = tuple(
            (name, rng.randint(0, 100) if rng.random() < 0.8 else rng.randint(100, 5_000))
            for name in rng.sample(_PARAMETERS, rng.randint(1, 5))
        )
        return StrategicPattern(situation, plan, bindings)

    def _encounter_pattern(self, module: str, prose_chars: int) -> EncounterPattern:
        rng = self.rng
        scenes = []
        for template in self.scenes.distinct(rng, rng.randint(1, 4)):
            values: dict[str, Any] = {
                "trigger_zone": f"{rng.choice(_DIRECTIONS).replace(' ', '_')}_{rng.randint(1, 9)}",
                "units": [self.units[module].one(rng) for _ in range(rng.randint(2, 8))],
                "delay_seconds": rng.choice((0, 30, 45, 60, 90, 120, 180, 300)),
            }
            if rng.random() < 0.5:
                values["waves"] = rng.randint(1, 6)
            if rng.random() < 0.4:
                values["difficulty_scale"] = round(rng.uniform(0.5, 2.0), 2)
            if rng.random() < 0.3:
                values["position"] = {"x": rng.randint(0, 128), "y": rng.randint(0, 128)}
            if rng.random() < 0.3:
                values["briefing"] = rng.choice(self.pool)
            scenes.append(SceneInstance(template, values))
        hints = MissionStructureHints(
            mission_type=rng.choice(("defend", "escort", "assault", "extraction", "survival", "rescue")),
            player_faction=rng.choice(_FACTIONS[module]),
            difficulty=rng.choice(("easy", "normal", "normal", "hard", "brutal")),
            estimated_minutes=rng.randint(8, 60),
            objectives=tuple(
                f"{self.verbs.one(rng).capitalize()} the {self.subjects.one(rng)}" for _ in range(rng.randint(1, 4))
            ),
            outcomes=("victory", "defeat") if rng.random() < 0.7 else ("victory", "partial", "defeat"),
            notes=self._prose(prose_chars),
        )
        return EncounterPattern(tuple(scenes), hints)

    def _verified_example(self, domain: Domain, module: str, prose_chars: int) -> VerifiedExample:
        rng = self.rng
        header = (
            f"Game module: {module}. Phase: {rng.choice(tuple(GamePhase)).value}. "
            f"Economy: {rng.choice(tuple(EconomyState)).value}. Our army: "
            + ", ".join(f"{unit} {share}%" for unit, share in self._composition(module, 3))
            + ".\nRecent events:\n"
            if domain is Domain.AI_STRATEGY
            else f"Generate a {rng.choice(_FACTIONS[module])} mission for {module} "
            f"on {self.maps.one(rng)}.\nCampaign context:\n"
        )
        prompt = header + self._prose(int(prose_chars * 0.55), paragraph=3)
        response = self._prose(int(prose_chars * 0.45), paragraph=5)
        return VerifiedExample(prompt, response)

    def _instructions(self, domain: Domain, prose_chars: int) -> Instructions:
        rng = self.rng
        sections = []
        headings = ("When to use", "Steps", "Pitfalls")[: rng.randint(2, 3)]
        for heading in headings:
            share = max(120, prose_chars // len(headings))
            bullets = self._prose(share, paragraph=1_000).split(". ")
            body = "\n".join(f"- {bullet.rstrip('.')}." for bullet in bullets if bullet.strip())
            sections.append(f"## {heading}\n\n{body}")
        references = (
            tuple(rng.sample(self.ids_by_domain[domain], k=min(len(self.ids_by_domain[domain]), rng.randint(1, 2))))
            if self.ids_by_domain[domain] and rng.random() < 0.3
            else ()
        )
        return Instructions(
            instructions="\n\n".join(sections),
            tools=tuple(rng.sample(_TOOLS, rng.randint(1, 4))) if rng.random() < 0.6 else (),
            model=rng.choice(_LLM_MODELS) if rng.random() < 0.3 else None,
            references=references,
        )

    def _body(self, domain: Domain, kind: BodyKind, module: str) -> SkillBody:
        """A body whose body_json lands near a target size between 1 and 3 KB."""
        rng = self.rng
        target = int(rng.triangular(BODY_MIN_BYTES, BODY_MAX_BYTES, BODY_MODE_BYTES))
        state = rng.getstate()
        probe = self._make_body(domain, kind, module, 40)  # everything but the prose
        overhead = len(body_to_json(probe)) - 40
        rng.setstate(state)  # same structure again, now with prose sized to fit
        return self._make_body(domain, kind, module, max(80, target - overhead))

    def _make_body(self, domain: Domain, kind: BodyKind, module: str, prose_chars: int) -> SkillBody:
        if kind is BodyKind.STRATEGIC_PATTERN:
            return self._strategic_pattern(module, prose_chars)
        if kind is BodyKind.ENCOUNTER_PATTERN:
            return self._encounter_pattern(module, prose_chars)
        if kind is BodyKind.VERIFIED_EXAMPLE:
            return self._verified_example(domain, module, prose_chars)
        return self._instructions(domain, prose_chars)

    # --- the skill -------------------------------------------------------------------------

    def _timestamp(self, moment: datetime) -> str:
        return normalize_timestamp(moment)

    def _quality(self, domain: Domain, created: datetime) -> Quality:
        rng = self.rng
        confidence = _weighted(rng, _CONFIDENCES)
        if confidence is Confidence.TENTATIVE:
            count = rng.choice((0, 0, 1, 2))
            rate = round(rng.uniform(0.3, 0.8), 4) if count else 0.0
        elif confidence is Confidence.ESTABLISHED:
            count = rng.randint(3, 10)
            rate = round(rng.uniform(0.6, 0.9), 4)
        else:
            count = rng.randint(10, 40) if rng.random() < 0.8 else rng.randint(40, 400)
            rate = round(rng.uniform(0.7, 0.97), 4)
        rating = None
        if domain is Domain.CONTENT_GENERATION and count:
            rating = round(rng.uniform(2.5, 5.0), 2)
        last_verified = None
        if count:
            last_verified = self._timestamp(created + timedelta(seconds=rng.uniform(3_600, 60 * 86_400)))
        return Quality(count, rate, rating, confidence, last_verified)

    def _source(self, domain: Domain) -> Source:
        rng = self.rng
        kind = _weighted(rng, _SOURCES)
        if kind is SourceKind.HUMAN_REFINED:
            earlier = self.ids_by_domain[domain] or self.ids
            if earlier:
                return Source.human_refined(rng.choice(earlier))
            kind = SourceKind.LLM_DISCOVERED  # nothing to refine yet
        if kind is SourceKind.WORKSHOP:
            publisher = rng.choice(_PUBLISHERS)
            package = f"{self.maps.one(rng)}-{rng.choice(('pack', 'skills', 'library', 'set'))}"
            version = f"{rng.randint(0, 3)}.{rng.randint(0, 12)}.{rng.randint(0, 9)}"
            return Source.workshop(f"{publisher}/{package}@{version}", rng.choice(_HUMANS))
        return Source(kind)

    def skill(self, index: int) -> Skill:
        rng = self.rng
        skill_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        domain = _weighted(rng, _DOMAINS)
        module = _weighted(rng, _MODULES)
        kind = _weighted(rng, _BODY_KINDS[domain])
        offset = (index + rng.random()) / max(self.count, 1) * self.span_seconds
        created = self.start + timedelta(seconds=offset)
        source = self._source(domain)
        llm_made = source.kind in (SourceKind.LLM_DISCOVERED, SourceKind.HUMAN_REFINED)
        provenance = Provenance(
            source=source,
            game_module=module,
            engine_version=rng.choice(_ENGINE_VERSIONS),
            model_id=rng.choice(_LLM_MODELS) if llm_made or rng.random() < 0.1 else None,
        )
        quality = self._quality(domain, created)
        tag_picker = self.ai_tags if domain is Domain.AI_STRATEGY else self.content_tags
        tags = tuple(tag_picker.distinct(rng, _weighted(rng, _TAG_COUNTS)))
        use_count = 0 if rng.random() < 0.3 else min(50_000, int(rng.paretovariate(1.2)))
        last_used = self._timestamp(created + timedelta(seconds=rng.uniform(600, 90 * 86_400))) if use_count else None
        partners: tuple[str, ...] = ()
        same_domain = self.ids_by_domain[domain]
        if same_domain and rng.random() < 0.08:
            partners = tuple(rng.sample(same_domain, k=min(len(same_domain), rng.randint(1, 3))))
        if source.kind is SourceKind.LLM_DISCOVERED:
            created_by = rng.choice(_AGENTS[:2]) if rng.random() < 0.85 else rng.choice(_AGENTS)
        else:
            created_by = rng.choice(_HUMANS)
        skill = Skill(
            id=skill_id,
            domain=domain,
            name=self._name(domain, module),
            description=self._description(domain),
            body=self._body(domain, kind, module),
            provenance=provenance,
            created_at=self._timestamp(created),
            quality=quality,
            tags=tags,
            composable_with=partners,
            last_used=last_used,
            use_count=use_count,
            created_by=created_by,
            review_state=_weighted(rng, _REVIEW_STATES),
        )
        self.ids.append(skill_id)
        self.ids_by_domain[domain].append(skill_id)
        return skill


def generate_skills(count: int, seed: int = DEFAULT_SEED) -> list[Skill]:
    """``count`` plausible, varied skills; the same arguments always give the same skills."""
    return list(iter_skills(count, seed))


def iter_skills(count: int, seed: int = DEFAULT_SEED) -> Iterator[Skill]:
    """The skills of ``generate_skills(count, seed)`` one at a time: a 1M-skill library need not
    fit in memory as objects while it is written."""
    if count < 0:
        raise ValueError("count must not be negative")
    generator = _Generator(count, seed)
    return (generator.skill(index) for index in range(count))


__all__ = [
    "AI_TAGS",
    "COMMON_TAG",
    "COMMON_TERM",
    "CONTENT_TAGS",
    "DEFAULT_SEED",
    "PREFIX_QUERY",
    "TAG_VOCABULARY",
    "generate_skills",
    "iter_skills",
]
