"""Argument types the commands share: a bad value is a usage error naming the flag (exit 2)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from skillstudio.model import normalize_timestamp

# What a count of things may reach when nothing else bounds it (games, skills, entries).
MANY = 10**9


def whole_number(flag: str, low: int, high: int) -> Callable[[str], int]:
    """An argparse type for a whole number in low..high (huge or negative input included)."""

    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number {low}..{high}, got {text[:24]!r}") from None
        if not low <= value <= high:
            shown = text if len(text) <= 24 else text[:21] + "..."
            raise argparse.ArgumentTypeError(f"must be a whole number {low}..{high}, got {shown}")
        return value

    convert.__name__ = flag  # argparse names the type in its messages
    return convert


def iso_time(flag: str, *, end_of_day: bool = False) -> Callable[[str], str]:
    """An argparse type for a time, normalised as the store keeps them. A bare date means the
    whole day: its first moment, or with ``end_of_day`` its last."""

    def convert(text: str) -> str:
        moment = text + ("T23:59:59.999Z" if end_of_day else "T00:00:00.000Z") if len(text) == 10 else text
        try:
            return normalize_timestamp(moment)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text[:40]!r} is not an ISO 8601 time (e.g. 2026-05-01 or 2026-05-01T10:00Z)"
            ) from None

    convert.__name__ = flag
    return convert


__all__ = ["MANY", "iso_time", "whole_number"]
