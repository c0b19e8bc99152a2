"""Reports that game 2 failed (outcome "error"), then plays on."""

import _fake


def before(game, line):
    if game == 2:
        return {"type": "game", "game": 2, "outcome": "error", "error": "map failed to load"}
    return line


_fake.hello()
_fake.play(_fake.read_job(), before)
