"""Writes garbage for some games: not JSON (game 1), out of range (3), NaN (5), wrong index (7)."""

import sys

import _fake


def before(game, line):
    if game == 1:
        sys.stdout.write("Segmentation fault? no: just garbage %%% {\n")
        sys.stdout.flush()
        return None
    if game == 3:
        line["map_control"] = 1.7
    if game == 5:
        sys.stdout.write(
            '{"type": "game", "game": 5, "outcome": "win", "duration_s": NaN, '
            '"resource_delta": 0, "army_value_delta": 0, "map_control": 0.5}\n'
        )
        sys.stdout.flush()
        return None
    if game == 7:
        line["game"] = 70
    return line


sys.stderr.write("fake engine: printing garbage\n")
sys.stderr.flush()
_fake.hello()
_fake.play(_fake.read_job(), before)
