"""Which predicted edits are worth showing: noise (whitespace-only changes, rewrites that
wander off; edits that undo the user are reversal.py's), and the lint gate (candidates
that add an error are dropped).

Plain data in, verdicts out. The gate lints through callables the caller passes in, so
inference never imports the shadow workspace (lsp/ wires it to the workspace's linters).
"""

from __future__ import annotations

import asyncio
import difflib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, TypeVar

logger = logging.getLogger(__name__)

# A rewrite less similar to the region than this is the model wandering off, not an edit.
MIN_REWRITE_SIMILARITY = 0.6


class Replacement(Protocol):
    """A candidate as the replacement of text[start:end] (an insertion when start == end)."""

    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...

    @property
    def new_text(self) -> str: ...


def applied(text: str, candidate: Replacement) -> str:
    return text[: candidate.start] + candidate.new_text + text[candidate.end :]


def is_noise(old: str, new: str) -> bool:
    """Edits not worth showing: whitespace-only changes, and rewrites that share too
    little with the region to be an edit of it."""
    if "".join(old.split()) == "".join(new.split()):
        return True
    return difflib.SequenceMatcher(None, old, new).ratio() < MIN_REWRITE_SIMILARITY


D = TypeVar("D")
Lint = Callable[[str], Awaitable[Sequence[D]]]  # the diagnostics of a whole text
# (text before, its diagnostics, the diagnostics after, the candidate) -> adds an error?
AddsErrors = Callable[[str, Sequence[D], Sequence[D], Replacement], bool]


async def lint_gate(
    text: str,
    candidates: Sequence[Replacement],
    lint: Lint[D],
    adds_errors: AddsErrors[D],
    lint_before: Lint[D] | None = None,
) -> list[bool]:
    """For each candidate: True when applying it adds no error. `lint_before` lints the
    unchanged text (the same for every request between two keystrokes: callers cache
    it); a linter that fails lets every candidate through rather than hide them all."""
    if not candidates:
        return []
    try:
        before, *after = await asyncio.gather(
            (lint_before or lint)(text), *(lint(applied(text, c)) for c in candidates)
        )
    except Exception as exc:
        logger.warning("lint of predictions failed: %s", exc)
        return [True] * len(candidates)
    return [
        not adds_errors(text, before, diagnostics, candidate)
        for candidate, diagnostics in zip(candidates, after, strict=True)
    ]
