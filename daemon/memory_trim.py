"""Hands the heap's free pages back to the OS now and then.

glibc keeps the memory of freed objects in its per-thread arenas, and the daemon's
request threads free a little with every keystroke: in a 30-minute typing soak
(benchmarks/torture_soak.py) the daemon's RSS grew 16.7% while the Python heap stayed
flat, and `malloc_trim(0)` brought RSS back below where it started. A no-op where the C
library has no malloc_trim (musl, macOS)."""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
from collections.abc import Callable

logger = logging.getLogger(__name__)

TRIM_INTERVAL_S = 60.0


def _load_malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        trim = libc.malloc_trim
    except (OSError, AttributeError, TypeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_MALLOC_TRIM = _load_malloc_trim()


def trim_once() -> bool:
    """Release free heap pages; False where the C library cannot."""
    if _MALLOC_TRIM is None:
        return False
    _MALLOC_TRIM(0)
    return True


async def trim_periodically(interval_s: float = TRIM_INTERVAL_S) -> None:
    """Until cancelled: trim every `interval_s` (in a thread: a big heap takes a while)."""
    if _MALLOC_TRIM is None:
        logger.debug("no malloc_trim in this C library: the heap is not trimmed")
        return
    while True:
        await asyncio.sleep(interval_s)
        await asyncio.to_thread(trim_once)
