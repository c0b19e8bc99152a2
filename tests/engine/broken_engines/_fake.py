"""A minimal protocol-1 engine for the broken-engine scripts: plain Python, no SkillStudio.

Each script imports this, decides how to misbehave, and calls :func:`play` with a hook that can
replace or precede the line of any game. The games it plays are fake (alternating win/loss).
"""

import json
import sys


def hello(protocol=1):
    line = {"type": "hello", "engine": "fake-engine", "engine_version": "0.0.1"}
    if protocol is not None:
        line["protocol"] = protocol
    emit(line)


def emit(data):
    sys.stdout.write(json.dumps(data) + "\n")
    sys.stdout.flush()


def read_job():
    return json.loads(sys.stdin.readline())


def result(game, seed):
    return {
        "type": "game",
        "game": game,
        "seed": seed,
        "outcome": "win" if game % 2 == 0 else "loss",
        "duration_s": 600.0 + game,
        "resource_delta": 100.0,
        "army_value_delta": -50.0,
        "map_control": 0.5,
        "timeline": {"t_s": [300.0, 600.0], "skill": [1000.0, 2000.0], "opponent": [900.0, 1800.0]},
        "ignored_parameters": [],
    }


def play(job, before=None):
    """One line per game; ``before(game, line)`` may misbehave and return the line to write (or None)."""
    for i, seed in enumerate(job["seeds"]):
        game = job["first_game"] + i
        line = result(game, seed)
        if before is not None:
            line = before(game, line)
        if line is not None:
            emit(line)
    emit({"type": "summary", "games": len(job["seeds"]), "wins": 0, "losses": 0, "draws": 0, "errors": 0})
