"""Predictors: what the language server asks for ghost text and next edits.

They take and return plain data (text, str offsets), so the server can check a
candidate in the shadow workspace before it shows it. Calls block; the server runs them
in a worker thread and cancels them with a threading.Event when a newer keystroke comes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from ..engines.api import Engine
from .filters import deletes_just_typed, is_noise
from .prompts import RecentEdit, completion_prompt, next_edit_prompt

__all__ = [
    "EditCandidate",
    "EnginePredictor",
    "FixedPredictor",
    "InlineCandidate",
    "PredictionRequest",
    "Predictor",
    "RecentEdit",
    "checked_candidates",
]

INLINE_MAX_TOKENS = 24
MAX_CANDIDATES = 8  # the engine's limit on n
NEXT_EDIT_EXTRA_TOKENS = 48  # room for the rewrite to grow beyond the draft
T = TypeVar("T")


@dataclass(frozen=True)
class PredictionRequest:
    path: str
    language_id: str
    text: str
    cursor: int  # str offset into text
    recent_edits: Sequence[RecentEdit] = ()
    max_candidates: int = 1


@dataclass(frozen=True)
class InlineCandidate:
    text: str  # inserted at the cursor


@dataclass(frozen=True)
class EditCandidate:
    start: int  # str offsets into PredictionRequest.text
    end: int
    new_text: str


class Predictor(Protocol):
    def inline(
        self, request: PredictionRequest, cancel: threading.Event | None = None
    ) -> list[InlineCandidate]: ...

    def next_edit(
        self, request: PredictionRequest, cancel: threading.Event | None = None
    ) -> list[EditCandidate]: ...

    def warm(self, request: PredictionRequest, cancel: threading.Event | None = None) -> None: ...


def minimal_edit(old: str, new: str, offset: int) -> EditCandidate | None:
    """The smallest whole-line replacement turning `old` into `new`, `old` starting at
    `offset` of the document; None when they are equal."""
    if old == new:
        return None
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < min(len(old), len(new)) - prefix
        and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]
    ):
        suffix += 1
    # Widen to whole lines: editors render line-level next edits best.
    start = old.rfind("\n", 0, prefix) + 1
    old_end = old.find("\n", len(old) - suffix)
    old_end = len(old) if old_end == -1 else old_end
    tail = len(old) - old_end
    return EditCandidate(offset + start, offset + old_end, new[start : len(new) - tail])


class EnginePredictor:
    """Predicts with a language model through an inference Engine.

    `engine_getter` returns None while the model is loading: the predictor then has
    nothing to offer rather than blocking the editor.
    """

    def __init__(self, engine_getter: Callable[[], Engine | None]) -> None:
        self._engine_getter = engine_getter

    def inline(
        self, request: PredictionRequest, cancel: threading.Event | None = None
    ) -> list[InlineCandidate]:
        engine = self._engine_getter()
        if engine is None:
            return []
        prompt = completion_prompt(request.path, request.text, request.cursor)
        completion = engine.complete(
            prompt,
            INLINE_MAX_TOKENS,
            stop=["\n"],
            n=min(request.max_candidates, MAX_CANDIDATES),
            cancel=cancel,
        )
        seen: set[str] = set()
        candidates = []
        for text in completion.texts:
            if text.strip() and text not in seen:
                seen.add(text)
                candidates.append(InlineCandidate(text))
        return candidates

    def next_edit(
        self, request: PredictionRequest, cancel: threading.Event | None = None
    ) -> list[EditCandidate]:
        engine = self._engine_getter()
        if engine is None:
            return []
        layout = next_edit_prompt(request.path, request.text, request.cursor, request.recent_edits)
        draft_tokens = len(engine.tokenize(layout.draft))
        completion = engine.rewrite(
            layout.prompt,
            layout.draft,
            draft_tokens + NEXT_EDIT_EXTRA_TOKENS,
            stop=list(layout.stop),
            cancel=cancel,
        )
        old = request.text[layout.region_start : layout.region_end]
        candidates = []
        for text in completion.texts:
            new = text.removesuffix("\n")
            candidate = minimal_edit(old, new, layout.region_start)
            if candidate is None or is_noise(old, new):
                continue
            if not deletes_just_typed(candidate, request):
                candidates.append(candidate)
        return candidates

    def warm(self, request: PredictionRequest, cancel: threading.Event | None = None) -> None:
        engine = self._engine_getter()
        if engine is None:
            return
        engine.warm(completion_prompt(request.path, request.text, request.cursor), cancel=cancel)


@dataclass
class FixedPredictor:
    """Returns the candidates it was given: a stand-in for the model in tests of the
    server layer and in the server-overhead benchmark, never in the product.

    `delay_s` makes a call take that long (checking `cancel`), to test cancellation.
    """

    inline_texts: Sequence[str] = ()
    edits: Sequence[EditCandidate] = ()
    delay_s: float = 0.0
    calls: list[str] = field(default_factory=list)

    def _wait(self, cancel: threading.Event | None) -> bool:
        """Sleep `delay_s`; False when cancelled meanwhile."""
        deadline = time.monotonic() + self.delay_s
        while time.monotonic() < deadline:
            if cancel is not None and cancel.wait(0.01):
                return False
        return not (cancel is not None and cancel.is_set())

    def inline(
        self, request: PredictionRequest, cancel: threading.Event | None = None
    ) -> list[InlineCandidate]:
        self.calls.append("inline")
        if not self._wait(cancel):
            return []
        return [InlineCandidate(t) for t in self.inline_texts[: request.max_candidates]]

    def next_edit(
        self, request: PredictionRequest, cancel: threading.Event | None = None
    ) -> list[EditCandidate]:
        self.calls.append("next_edit")
        if not self._wait(cancel):
            return []
        size = len(request.text)
        return [e for e in self.edits if 0 <= e.start <= e.end <= size]

    def warm(self, request: PredictionRequest, cancel: threading.Event | None = None) -> None:
        self.calls.append("warm")


# Runs a blocking predictor call (given its cancel event) in a worker thread.
RunBlocking = Callable[[Callable[[threading.Event], T]], Awaitable[T]]
# The lint gate (filters.lint_gate with the caller's linters): a verdict per candidate.
Check = Callable[[str, Sequence[EditCandidate]], Awaitable[list[bool]]]


async def checked_candidates(
    predictor: Predictor,
    request: PredictionRequest,
    inline: bool,
    run: RunBlocking[list[EditCandidate]],
    check: Check | None = None,
) -> list[EditCandidate]:
    """The next-edit pipeline the editors and `shadowtab predict` share: ask the
    predictor (ghost text becomes an insertion at the cursor), then keep the candidates
    the lint gate passes, best first."""

    def call(cancel: threading.Event) -> list[EditCandidate]:
        if not inline:
            return predictor.next_edit(request, cancel)
        found = predictor.inline(request, cancel)
        return [EditCandidate(request.cursor, request.cursor, c.text) for c in found]

    candidates = await run(call)
    if check is None:
        return candidates
    verdicts = await check(request.text, candidates)
    return [c for c, ok in zip(candidates, verdicts, strict=True) if ok]
