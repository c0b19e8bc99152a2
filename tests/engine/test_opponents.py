"""Opponents are named as D057 names them; unknown names list the valid ones."""

from __future__ import annotations

import pytest

from skillstudio.engine.module import load_module
from skillstudio.engine.opponents import UnknownOpponentError, opponent_names, parse_opponent


@pytest.fixture(scope="module")
def ra1():
    return load_module("ra1")


@pytest.mark.parametrize(
    ("name", "preset", "difficulty", "label"),
    [
        ("IC Default Hard", "ic-default", "hard", "IC Default Hard"),
        ("ic-default:hard", "ic-default", "hard", "IC Default Hard"),
        ("  ic default   HARD ", "ic-default", "hard", "IC Default Hard"),
        ("Classic RA Normal", "classic-ra", "normal", "Classic RA Normal"),
        ("classic-ra:normal", "classic-ra", "normal", "Classic RA Normal"),
        ("OpenRA Brutal", "openra", "brutal", "OpenRA Brutal"),
        ("openra:sandbox", "openra", "sandbox", "OpenRA Sandbox"),
        ("IC_Default:Easy", "ic-default", "easy", "IC Default Easy"),
    ],
)
def test_names(ra1, name: str, preset: str, difficulty: str, label: str) -> None:
    opponent = parse_opponent(name, ra1)
    assert (opponent.preset, opponent.difficulty, opponent.label) == (preset, difficulty, label)
    assert opponent.spec == f"{preset}:{difficulty}"


def test_mirror(ra1) -> None:
    assert parse_opponent("Mirror", ra1).is_mirror


@pytest.mark.parametrize("name", ["IC Default Nightmare", "Skynet Hard", "ic-default", "hard", "", "x:y:z"])
def test_unknown_names_list_the_valid_ones(ra1, name: str) -> None:
    with pytest.raises(UnknownOpponentError) as caught:
        parse_opponent(name, ra1)
    message = str(caught.value)
    for valid in ("IC Default Hard", "Classic RA Normal", "OpenRA Brutal", "ic-default", "brutal"):
        assert valid in message


def test_every_listed_name_parses(ra1) -> None:
    names = opponent_names(ra1)
    assert len(names) == 15
    for name in names:
        assert parse_opponent(name, ra1).label == name
