"""Feedback counts: how often suggestions were shown, accepted, rejected, typed
through, and dropped by a filter (lint, reversal, a name that does not resolve), per
source and format (the hub's status shows them).
"unscored": model suggestions shown without token probabilities (an OpenAI-compatible
server that refuses `logprobs`), so the token threshold could not cut them."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any, Literal

Outcome = Literal[
    "shown",
    "accepted",
    "rejected",
    "typed_through",
    "dropped_lint",
    "dropped_reversal",
    "dropped_names",
    "unscored",
]
OUTCOMES: tuple[Outcome, ...] = (
    "shown",
    "accepted",
    "rejected",
    "typed_through",
    "dropped_lint",
    "dropped_reversal",
    "dropped_names",
    "unscored",
)


class FeedbackCounts:
    """Thread-safe counters keyed by (source, format, outcome)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[tuple[str, str, str]] = Counter()

    def add(self, outcome: Outcome, source: str, fmt: str = "", count: int = 1) -> None:
        with self._lock:
            self._counts[(source or "unknown", fmt or "-", outcome)] += count

    def to_dict(self) -> dict[str, Any]:
        """{"SOURCE/FORMAT": {outcome: count, ...}, ...}, every outcome present."""
        with self._lock:
            items = list(self._counts.items())
        table: dict[str, dict[str, int]] = {}
        for (source, fmt, outcome), count in items:
            row = table.setdefault(f"{source}/{fmt}", dict.fromkeys(OUTCOMES, 0))
            row[outcome] += count
        return table
