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
from .token_confidence import candidates_to_ask, trace_of

NAME = "completion"
MAX_TOKENS = 24
# Token healing at the cursor (Engine.complete's `heal`); benchmarks/ghost_confidence.py
# decodes the same request.
HEAL = True


class CompletionSource:
    """`shared_prompt`: the prompt that begins as the next-edit prompt does (escaped as
    it is), or None; then the file's own (prompts.completion_prompt).
    `token_threshold`: decoding stops before the first token less likely than it (the
    suggestion is cut there, and so costs only the sure tokens' decode steps); 0: never.
    The engine is asked to heal the prompt's end (Engine.complete's `heal`): the cursor
    is often inside a word being typed (`self.na|`), a prompt the model would otherwise
    continue unsure, and so cut to nothing.
    """

    name = NAME

    def __init__(
        self,
        engine_getter: Callable[[], Engine | None],
        shared_prompt: Callable[[Query], str | None] | None = None,
        token_threshold: float = 0.0,
    ) -> None:
        self._engine_getter = engine_getter
        self._shared_prompt = shared_prompt
        self.token_threshold = token_threshold

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
            n=candidates_to_ask(query.n, self.token_threshold, MAX_CANDIDATES),
            cancel=cancel,
            min_token_p=self.token_threshold,
            heal=HEAL,
        )
        rest = rest_of_line(s.text, s.cursor)
        found = []
        for index in range(len(completion.texts)):
            candidate = ghost_candidate(completion, index, rest, s.cursor, self.token_threshold)
            if candidate is not None:
                found.append(candidate)
        return found


def ghost_candidate(
    completion: Completion, index: int, rest: str, cursor: int, threshold: float
) -> Candidate | None:
    """Candidate `index` as ghost text before `rest` (the line after the cursor): cut
    at its first token below `threshold`, re-joined (rejoin.py); None: nothing to show.
    Without probabilities (an engine that reports none) it is not cut."""
    generated = completion.texts[index]
    reasons = completion.finish_reasons
    reason = reasons[index] if index < len(reasons) else "unknown"
    trace = trace_of(completion, index)
    if trace is not None and threshold > 0 and trace.sure_length(threshold) < len(generated):
        # the engine stops there already; a completion decoded without the cut is cut here
        generated, reason = generated[: trace.sure_length(threshold)], "unsure"
    # cut where the model stopped being sure: what it did write is a finished prefix
    finished = reason in ("eos", "stop", "unsure")
    text = rejoined(unescape(generated), rest, finished)
    if text is None or not text.strip():
        return None
    score = _mean_probability(completion, index, len(text))
    kept = trace.upto(len(text)) if trace is not None else None
    return Candidate(
        (TextEdit(cursor, cursor, text),),
        score,
        NAME,
        NAME,
        kind="inline",
        token_probs=kept.probs if kept is not None else None,
        token_margins=kept.margins if kept is not None else None,
    )


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
