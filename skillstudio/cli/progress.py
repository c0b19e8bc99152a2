"""A progress line on stderr: a redrawn bar on a terminal, a plain line at most every 2 s otherwise."""

from __future__ import annotations

import time
from typing import TextIO

BAR_WIDTH = 28


class ProgressLine:
    def __init__(self, stream: TextIO, *, quiet: bool, unit: str) -> None:
        self.stream, self.quiet, self.unit = stream, quiet, unit
        self.tty = stream.isatty()
        self.last = 0.0
        self.started = time.monotonic()
        self.shown = False

    def show(self, done: int, total: int, detail: str = "") -> None:
        """Draw ``done`` of ``total``, throttled (10 a second on a terminal); the last one always."""
        if self.quiet:
            return
        now = time.monotonic()
        if done < total and now - self.last < (0.1 if self.tty else 2.0):
            return
        self.last = now
        fraction = done / total if total else 1.0
        if self.tty:
            filled = int(BAR_WIDTH * fraction)
            text = f"\r[{'#' * filled}{'-' * (BAR_WIDTH - filled)}] {done}/{total}  {detail}  {now - self.started:.0f}s"
            self.stream.write(text[:200])
            self.shown = True
        else:
            self.stream.write(f"{done}/{total} {self.unit} ({fraction:.0%})  {detail}\n")
        self.stream.flush()

    def done(self) -> None:
        """End a redrawn bar's line, so what is printed next starts on its own."""
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
            self.shown = False


__all__ = ["ProgressLine"]
