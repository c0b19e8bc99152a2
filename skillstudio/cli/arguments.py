"""Argument types the commands share: a bad value is a usage error naming the flag (exit 2)."""

from __future__ import annotations

import argparse
from collections.abc import Callable


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


__all__ = ["whole_number"]
