"""Pausing Python's cyclic garbage collector around bulk work.

Reading or importing a 10,000-skill package, a bulk create and a verification chunk each
allocate millions of small objects that live until the work ends. Every few hundred
allocations the collector runs, and its older generations walk every live object, the work's
own and the library's loaded skills alike: 15-20% of an import, 10% of a verification run.
Reference counting still frees everything acyclic at once; the few cycles made meanwhile are
collected once the last pause ends.

Pauses nest and may overlap across threads (the collector is one per process): it is switched
off by the first and back on by the last, and only if it was on before the first.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """The collector is off inside (see the module's docstring for why and how it nests)."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()


__all__ = ["gc_paused"]
