"""Opponent names as D057 writes them (``"IC Default Hard"``: preset ``ic-default`` at difficulty
``hard``), plus the ``preset:difficulty`` spelling (``ic-default:hard``) and ``mirror``.

``mirror`` is a reference-engine extension: the skill's own plan on both sides, both at normal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from skillstudio.engine.module import GameModule, Mix

MIRROR = "mirror"


class UnknownOpponentError(ValueError):
    """The name matches no preset and difficulty of the module; the message lists valid ones."""


@dataclass(frozen=True)
class Opponent:
    preset: str  # a preset id, or "mirror"
    difficulty: str
    label: str
    # Test and experiment hook: replace the preset's unit mix (documented in reference-engine.md).
    unit_mix: Mix | None = None

    @property
    def is_mirror(self) -> bool:
        return self.preset == MIRROR

    @property
    def spec(self) -> str:
        """The canonical ``preset:difficulty`` spelling."""
        return MIRROR if self.is_mirror else f"{self.preset}:{self.difficulty}"


def _fold(text: str) -> str:
    return re.sub(r"[\s_\-]+", "", text).lower()


def display_name(module: GameModule, preset_id: str, difficulty_id: str) -> str:
    return f"{module.presets[preset_id].name} {difficulty_id.capitalize()}"


def opponent_names(module: GameModule) -> list[str]:
    """Every D057-style name the module offers, e.g. ``IC Default Hard``."""
    return [display_name(module, p, d) for p in module.presets for d in module.difficulties]


def parse_opponent(name: str, module: GameModule) -> Opponent:
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        raise UnknownOpponentError(_unknown(repr(name), module))
    text = name.strip()
    if _fold(text) == MIRROR:
        return Opponent(MIRROR, "normal", "Mirror")
    difficulties = {_fold(d): d for d in module.difficulties}
    presets: dict[str, str] = {}
    for known_id, preset in module.presets.items():
        presets[_fold(known_id)] = known_id
        presets[_fold(preset.name)] = known_id
    if ":" in text:  # ic-default:hard
        head, _, tail = text.partition(":")
        preset_id, difficulty = presets.get(_fold(head)), difficulties.get(_fold(tail))
        if preset_id and difficulty:
            return Opponent(preset_id, difficulty, display_name(module, preset_id, difficulty))
    else:  # "IC Default Hard": the last word is the difficulty
        words = text.split()
        if len(words) >= 2:
            preset_id = presets.get(_fold("".join(words[:-1])))
            difficulty = difficulties.get(_fold(words[-1]))
            if preset_id and difficulty:
                return Opponent(preset_id, difficulty, display_name(module, preset_id, difficulty))
    raise UnknownOpponentError(_unknown(repr(text), module))


def _unknown(shown: str, module: GameModule) -> str:
    return (
        f"unknown opponent {shown} for module {module.id}; valid names: {', '.join(opponent_names(module))}"
        f" (or preset:difficulty with presets {', '.join(module.presets)} and difficulties"
        f" {', '.join(module.difficulties)}, or {MIRROR})"
    )
