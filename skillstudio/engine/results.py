"""One game's result, shared by the in-process engine and the process protocol."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from skillstudio.engine.schema import check
from skillstudio.model.validation import Issue, ValidationError

OUTCOMES = ("win", "loss", "draw", "error")


@dataclass(frozen=True)
class Timeline:
    """Army value per side at times ``t_s`` (for plots)."""

    t_s: tuple[float, ...]
    skill: tuple[float, ...]
    opponent: tuple[float, ...]

    def to_json(self) -> dict[str, list[float]]:
        return {"t_s": list(self.t_s), "skill": list(self.skill), "opponent": list(self.opponent)}


@dataclass(frozen=True)
class GameResult:
    """A game from the skill's side. ``outcome == "error"`` means the game was not played (the
    engine failed); such games are evidence of nothing, neither wins nor losses."""

    game: int
    outcome: str  # win | loss | draw | error
    seed: int | None = None
    duration_s: float | None = None
    resource_delta: float | None = None
    army_value_delta: float | None = None
    map_control: float | None = None
    timeline: Timeline | None = None
    ignored_parameters: tuple[str, ...] = ()
    error: str | None = None  # why the game is an error
    stderr_tail: str | None = None  # the engine's last stderr output, for error games
    extra: dict[str, Any] = field(default_factory=dict, compare=False)  # fields we do not know

    @property
    def is_error(self) -> bool:
        return self.outcome == "error"

    @classmethod
    def failed(cls, game: int, reason: str, *, seed: int | None = None, stderr_tail: str | None = None) -> GameResult:
        return cls(game=game, outcome="error", seed=seed, error=reason, stderr_tail=stderr_tail or None)

    def to_json(self) -> dict[str, Any]:
        """The protocol's game line (``stderr_tail`` is SkillStudio's own annotation and not sent)."""
        out: dict[str, Any] = {"type": "game", "game": self.game}
        if self.seed is not None:
            out["seed"] = self.seed
        out["outcome"] = self.outcome
        for key in ("duration_s", "resource_delta", "army_value_delta", "map_control"):
            value = getattr(self, key)
            if value is not None:
                out[key] = round(float(value), 3)
        if self.timeline is not None:
            out["timeline"] = {
                "t_s": [round(t, 3) for t in self.timeline.t_s],
                "skill": [round(v, 1) for v in self.timeline.skill],
                "opponent": [round(v, 1) for v in self.timeline.opponent],
            }
        out["ignored_parameters"] = list(self.ignored_parameters)
        if self.error is not None:
            out["error"] = self.error
        return out

    @classmethod
    def from_json(cls, data: Any) -> GameResult:
        """A game line from an engine, validated (schema, then cross-field rules)."""
        issues = check(data, "game")
        timeline = None
        if not issues and "timeline" in data:
            raw = data["timeline"]
            lengths = {len(raw["t_s"]), len(raw["skill"]), len(raw["opponent"])}
            if len(lengths) != 1:
                issues.append(Issue("timeline", "t_s, skill and opponent must have the same length"))
            elif any(b < a for a, b in zip(raw["t_s"], raw["t_s"][1:], strict=False)):
                issues.append(Issue("timeline.t_s", "times must not decrease"))
            else:
                timeline = Timeline(
                    tuple(float(t) for t in raw["t_s"]),
                    tuple(float(v) for v in raw["skill"]),
                    tuple(float(v) for v in raw["opponent"]),
                )
        if issues:
            raise ValidationError(issues)
        known = {
            "type",
            "game",
            "seed",
            "outcome",
            "duration_s",
            "resource_delta",
            "army_value_delta",
            "map_control",
            "timeline",
            "ignored_parameters",
            "error",
        }

        def number(key: str) -> float | None:
            return None if key not in data else float(data[key])

        return cls(
            game=data["game"],
            outcome=data["outcome"],
            seed=data.get("seed"),
            duration_s=number("duration_s"),
            resource_delta=number("resource_delta"),
            army_value_delta=number("army_value_delta"),
            map_control=number("map_control"),
            timeline=timeline,
            ignored_parameters=tuple(data.get("ignored_parameters", ())),
            error=data.get("error"),
            extra={key: value for key, value in data.items() if key not in known},
        )
