"""The protocol's JSON Schemas: loadable, enforced, and identical to the ones in the docs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from skillstudio.engine.protocol import parse_line
from skillstudio.engine.results import GameResult
from skillstudio.engine.schema import SCHEMA_NAMES, check, load_schema, validate
from skillstudio.model import ValidationError

DOC = Path(__file__).resolve().parents[2] / "docs" / "engine-protocol.md"

GOOD_GAME = {
    "type": "game",
    "game": 3,
    "seed": 12,
    "outcome": "win",
    "duration_s": 900.0,
    "resource_delta": -5.5,
    "army_value_delta": 1200.0,
    "map_control": 0.61,
    "timeline": {"t_s": [300.0, 600.0], "skill": [10.0, 20.0], "opponent": [5.0, 0.0]},
    "ignored_parameters": ["x"],
}


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_schemas_load(name: str) -> None:
    assert load_schema(name)["type"] == "object"


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_docs_show_the_shipped_schemas(name: str) -> None:
    text = DOC.read_text(encoding="utf-8")
    match = re.search(rf"<!-- schema: {name} -->\s*```json\n(.*?)\n```", text, re.DOTALL)
    assert match, f"docs/engine-protocol.md has no block for the {name} schema"
    assert json.loads(match.group(1)) == load_schema(name)


def test_a_good_game_line() -> None:
    assert check(GOOD_GAME, "game") == []
    result = GameResult.from_json(GOOD_GAME)
    assert result.outcome == "win" and result.timeline is not None and result.timeline.skill == (10.0, 20.0)
    assert GameResult.from_json(json.loads(json.dumps(result.to_json()))) == result


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"outcome": "victory"}, "not one of"),
        ({"map_control": 1.7}, "above the maximum"),
        ({"duration_s": -1}, "below the minimum"),
        ({"game": True}, "expected integer"),
        ({"game": 2.5}, "expected integer"),
        ({"resource_delta": "lots"}, "expected number"),
        ({"timeline": {"t_s": [1.0], "skill": [1.0, 2.0], "opponent": [1.0]}}, "same length"),
        ({"timeline": {"t_s": [2.0, 1.0], "skill": [1.0, 2.0], "opponent": [1.0, 1.0]}}, "must not decrease"),
        ({"timeline": {"t_s": [1.0], "skill": [-3.0], "opponent": [1.0]}}, "below the minimum"),
        ({"ignored_parameters": ["x" * 200]}, "at most 128"),
    ],
)
def test_bad_game_lines(change: dict, fragment: str) -> None:
    with pytest.raises(ValidationError) as caught:
        GameResult.from_json({**GOOD_GAME, **change})
    assert fragment in str(caught.value)


def test_outcome_decides_which_fields_are_required() -> None:
    missing = {k: v for k, v in GOOD_GAME.items() if k != "map_control"}
    assert any(issue.path == "map_control" for issue in check(missing, "game"))
    error_line = {"type": "game", "game": 1, "outcome": "error", "error": "map failed"}
    assert check(error_line, "game") == []
    assert any(issue.path == "error" for issue in check({**error_line, "error": 5}, "game"))
    assert any(issue.path == "error" for issue in check({"type": "game", "game": 1, "outcome": "error"}, "game"))


def test_nan_and_infinity_are_not_json() -> None:
    with pytest.raises(ValueError):
        parse_line(b'{"x": NaN}\n')
    with pytest.raises(ValueError):
        parse_line(b'{"x": -Infinity}\n')


def test_validator_basics() -> None:
    schema = {
        "type": "object",
        "required": ["a"],
        "properties": {"a": {"type": ["string", "null"], "pattern": "^x"}},
        "additionalProperties": False,
    }
    assert validate({"a": "xy"}, schema) == [] and validate({"a": None}, schema) == []
    assert [i.path for i in validate({"a": "y", "b": 1}, schema)] == ["a", "b"]
    assert [i.path for i in validate({}, schema)] == ["a"]
    assert validate(float("nan"), {"type": "number"})
