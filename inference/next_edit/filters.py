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
from typing import TypeVar

from .edits import TextEdit

logger = logging.getLogger(__name__)

# A rewrite less similar to the region than this is the model wandering off, not an edit.
MIN_REWRITE_SIMILARITY = 0.6


def is_noise(old: str, new: str) -> bool:
    """Edits not worth showing: whitespace-only changes, and rewrites that share too
    little with the region to be an edit of it."""
    if "".join(old.split()) == "".join(new.split()):
        return True
    return difflib.SequenceMatcher(None, old, new).ratio() < MIN_REWRITE_SIMILARITY


D = TypeVar("D")
Lint = Callable[[str], Awaitable[Sequence[D]]]  # the diagnostics of a whole text
# (text before, its diagnostics, the diagnostics after, the edit) -> adds an error?
AddsErrors = Callable[[str, Sequence[D], Sequence[D], TextEdit], bool]


async def lint_gate(
    text: str,
    edits: Sequence[TextEdit],
    lint: Lint[D],
    adds_errors: AddsErrors[D],
    lint_before: Lint[D] | None = None,
) -> list[bool]:
    """For each candidate's edit: True when applying it adds no error. `lint_before` lints the
    unchanged text (the same for every request between two keystrokes: callers cache
    it); a linter that fails lets every candidate through rather than hide them all."""
    if not edits:
        return []
    try:
        before, *after = await asyncio.gather(
            (lint_before or lint)(text), *(lint(edit.apply(text)) for edit in edits)
        )
    except Exception as exc:
        logger.warning("lint of predictions failed: %s", exc)
        return [True] * len(edits)
    return [
        not adds_errors(text, before, diagnostics, edit)
        for edit, diagnostics in zip(edits, after, strict=True)
    ]
