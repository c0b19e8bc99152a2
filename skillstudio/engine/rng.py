"""Counter-based randomness: every random number of a game is a hash of (game seed, stream,
counter), so a game's randomness depends only on its own seed, never on which other games share
its batch or chunk. Integer arithmetic only: bit-identical on every platform.
"""

from __future__ import annotations

import hashlib

import numpy as np
import numpy.typing as npt

U64Array = npt.NDArray[np.uint64]

SEED_BITS = 53  # per-game seeds fit a JSON number exactly (and a JavaScript one)
SEED_LIMIT = 2**SEED_BITS
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_STREAM = np.uint64(0xD1B54A32D192ED03)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_TO_UNIT = 2.0**-53


def mix64(x: U64Array) -> U64Array:
    """SplitMix64's finaliser over a uint64 array (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = x + _GOLDEN
        z = (z ^ (z >> _S30)) * _M1
        z = (z ^ (z >> _S27)) * _M2
        return z ^ (z >> _S31)


def batch_key(batch_seed: int, skill_id: str) -> int:
    """A stable 64-bit key for (batch seed, skill id): blake2b, never Python's hash()."""
    digest = hashlib.blake2b(f"skillstudio-engine/1|{int(batch_seed)}|{skill_id}".encode(), digest_size=8)
    return int.from_bytes(digest.digest(), "little")


def derive_seeds(batch_seed: int, skill_id: str, first_game: int, games: int) -> U64Array:
    """Per-game seeds (uint64 values below 2**53) for games ``first_game .. first_game+games-1``."""
    if games < 0 or first_game < 0:
        raise ValueError("games and first_game must not be negative")
    key = np.uint64(batch_key(batch_seed, skill_id))
    index = np.arange(first_game, first_game + games, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return mix64(key ^ mix64(index * _STREAM)) >> np.uint64(64 - SEED_BITS)


def uniform(seeds: U64Array, stream: int, counter: int | npt.NDArray[np.integer] = 0) -> npt.NDArray[np.float64]:
    """One uniform number in [0, 1) per seed for (stream, counter); ``counter`` may be an array
    that broadcasts against ``seeds`` (e.g. shape [P, 1] for P draws per seed)."""
    tag = np.uint64((stream & 0xFFFFFFFF) << 32) | (np.asarray(counter, dtype=np.uint64) & np.uint64(0xFFFFFFFF))
    with np.errstate(over="ignore"):
        h = mix64(mix64(seeds * _STREAM + tag) ^ tag)
    return (h >> _S11).astype(np.float64) * _TO_UNIT


def symmetric(seeds: U64Array, stream: int, counter: int | npt.NDArray[np.integer] = 0) -> npt.NDArray[np.float64]:
    """A triangular number in (-1, 1), mean 0: the sum of two uniforms minus one."""
    return uniform(seeds, 2 * stream, counter) + uniform(seeds, 2 * stream + 1, counter) - 1.0
