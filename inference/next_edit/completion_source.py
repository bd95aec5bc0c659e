"""Plain continuation at the cursor as a candidate source (ghost text when the rewrite
offers none): the file up to the cursor, continued to the end of the line; in the middle
of a line, only what comes before the continuation re-joins the rest (rejoin.py).

Its prompt, where the next-edit format offers one (Format.continuation), begins as the
next-edit prompt does, so the context above the region comes from the KV cache: warming
prefills the next-edit prompt while the user types and, on a few cores, rarely reaches a
second prompt; only the region's lines up to the cursor are left to prefill."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable

from ..engines.api import Completion, Engine
from .candidates import MAX_CANDIDATES, Candidate, Query
from .edits import TextEdit
from .formats.base import unescape
from .prompts import completion_prompt
from .rejoin import rejoined, rest_of_line

NAME = "completion"
MAX_TOKENS = 24


class CompletionSource:
    """`shared_prompt`: the prompt that begins as the next-edit prompt does (escaped as
    it is), or None; then the file's own (prompts.completion_prompt)."""

    name = NAME

    def __init__(
        self,
        engine_getter: Callable[[], Engine | None],
        shared_prompt: Callable[[Query], str | None] | None = None,
    ) -> None:
        self._engine_getter = engine_getter
        self._shared_prompt = shared_prompt

    def prompt(self, query: Query) -> str:
        shared = self._shared_prompt(query) if self._shared_prompt is not None else None
        if shared is not None:
            return shared
        s = query.situation
        return completion_prompt(s.path, s.text, min(max(s.cursor, 0), len(s.text)))

    def candidates(self, query: Query, cancel: threading.Event | None = None) -> list[Candidate]:
        engine = self._engine_getter()
        s = query.situation
        if engine is None or not 0 <= s.cursor <= len(s.text):
            return []
        completion = engine.complete(
            self.prompt(query),
            MAX_TOKENS,
            stop=["\n"],
            n=max(1, min(query.n, MAX_CANDIDATES)),
            cancel=cancel,
        )
        rest = rest_of_line(s.text, s.cursor)
        reasons = completion.finish_reasons
        found = []
        for index, generated in enumerate(completion.texts):
            finished = index < len(reasons) and reasons[index] in ("eos", "stop")
            text = rejoined(unescape(generated), rest, finished)
            if text is None or not text.strip():
                continue
            score = _mean_probability(completion, index, len(text))
            found.append(Candidate((TextEdit(s.cursor, s.cursor, text),), score, NAME, NAME))
        return found


def _mean_probability(completion: Completion, index: int, length: int) -> float:
    """exp(mean log-probability) of the tokens that wrote the first `length` characters
    of candidate `index` (all of them when the engine reports no offsets)."""
    logprobs = completion.logprobs
    chosen = logprobs[index] if index < len(logprobs) else []
    offsets = completion.text_offsets[index] if index < len(completion.text_offsets) else []
    if offsets and len(offsets) == len(chosen):
        begins = [0, *offsets[:-1]]
        chosen = [p for p, begin in zip(chosen, begins, strict=True) if begin < length]
    return math.exp(sum(chosen) / len(chosen)) if chosen else 0.0
