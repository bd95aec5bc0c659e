"""Where the daemon's memory is held, for finding a leak: when the daemon runs with
Python's allocation tracing on (PYTHONTRACEMALLOC=1 in its environment), `stats` lists
the source lines holding the most memory. Off (the default), it costs nothing."""

from __future__ import annotations

import tracemalloc
from typing import Any

TOP_SITES = 40  # lines reported, by memory held


def top_allocations(limit: int = TOP_SITES) -> list[dict[str, Any]] | None:
    """The `limit` source lines holding the most traced memory now: "where"
    (file:line), "kb", "blocks"; None when tracing is off."""
    if not tracemalloc.is_tracing():
        return None
    snapshot = tracemalloc.take_snapshot().filter_traces(
        (tracemalloc.Filter(False, tracemalloc.__file__),)
    )
    return [
        {
            "where": f"{stat.traceback[0].filename}:{stat.traceback[0].lineno}",
            "kb": round(stat.size / 1024, 1),
            "blocks": stat.count,
        }
        for stat in snapshot.statistics("lineno")[:limit]
    ]
