"""Plain continuation at the cursor as a candidate source (ghost text when the rewrite
offers none): the file up to the cursor, continued to the end of the line; in the middle
of a line, only what comes before the continuation re-joins the rest (rejoin.py).

Its prompt, where the next-edit format offers one (Format.continuation), begins as the
next-edit prompt does, so the context above the region comes from the KV cache: warming
prefills the next-edit prompt while the user types and, on a few cores, rarely reaches a
second prompt; only the region's lines up to the cursor are left to prefill.

Where the learned gate (ghost_gate.py) was fitted for the loaded model, it chooses the
cut instead of the token threshold: decoding runs to the gate's lower floor, and the
gate keeps the longest cut it judges right, or nothing."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from pathlib import Path

from ...engines.api import Completion, Engine
from ..candidates import MAX_CANDIDATES, Candidate, Query
from ..edits import TextEdit
from ..formats.base import unescape
from ..token_confidence import TokenTrace, candidates_to_ask, trace_of
from .ghost_features import Surroundings
from .ghost_gate import GhostGate, gate_for
from .prompts import completion_prompt
from .rejoin import rejoined, rest_of_line

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
    `gate_path`: the learned gate's file (None: the token threshold alone); it is used
    only with the model it was fitted for.
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
        gate_path: Path | None = None,
    ) -> None:
        self._engine_getter = engine_getter
        self._shared_prompt = shared_prompt
        self.token_threshold = token_threshold
        self._gate_path = gate_path
        self._gate: tuple[Engine, GhostGate | None, str] | None = None

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
        gate = self.gate(engine)
        if gate is not None:
            return self._gated(engine, gate, query, cancel)
        completion = self.complete(engine, query, cancel, self.token_threshold)
        rest = rest_of_line(s.text, s.cursor)
        found = []
        for index in range(len(completion.texts)):
            candidate = ghost_candidate(completion, index, rest, s.cursor, self.token_threshold)
            if candidate is not None:
                found.append(candidate)
        return found

    def gate(self, engine: Engine) -> GhostGate | None:
        """The learned gate when it was fitted for `engine`'s model (looked up once per
        engine: the answer changes only when the model does)."""
        if self._gate_path is None:
            return None
        if self._gate is None or self._gate[0] is not engine:
            try:
                stats = engine.stats()
            except Exception:  # an engine that cannot describe itself gets no gate
                stats = {}
            gate, why = gate_for(stats, self._gate_path)
            self._gate = (engine, gate, why)
        return self._gate[1]

    @property
    def gate_state(self) -> str:
        """`daemon status`'s line: whether the gate decides ghost text, and why not."""
        if self._gate_path is None:
            return "off (next_edit.gate = false)"
        engine = self._engine_getter()
        if engine is None:
            return "waiting for the model"
        self.gate(engine)
        return self._gate[2] if self._gate is not None else "off"

    def _gated(
        self, engine: Engine, gate: GhostGate, query: Query, cancel: threading.Event | None
    ) -> list[Candidate]:
        s = query.situation
        completion = self.complete(engine, query, cancel, gate.decode_floor, n=1)
        rest = rest_of_line(s.text, s.cursor)
        trace = trace_of(completion, 0)
        if trace is None or not completion.texts:
            # no probabilities (an engine that reports none): the token threshold's rule
            found = ghost_candidate(completion, 0, rest, s.cursor, self.token_threshold)
            return [found] if found is not None else []
        others = {p: t for p, t in query.open_texts.items() if p != s.path}
        snippets = [snippet.text for snippet in s.context]
        around = Surroundings.of(s.text, s.cursor, s.path, others, snippets)
        finished = (
            completion.finish_reasons[0] in ("eos", "stop") if completion.finish_reasons else False
        )
        chosen = gate.choose(completion.texts[0], trace, rest, finished, around)
        if chosen is None:
            return []
        cut, probability = chosen
        kept = trace.upto(trace.offsets[cut.tokens - 1])
        return [inline_candidate(s.cursor, cut.text, probability, kept)]

    def complete(
        self,
        engine: Engine,
        query: Query,
        cancel: threading.Event | None,
        min_token_p: float,
        n: int | None = None,
    ) -> Completion:
        """The continuation to the end of the line, decoding stopped before the first
        token below `min_token_p` (0: never); `n` candidates (None: as many as the query
        asks and the threshold leaves worth asking)."""
        return engine.complete(
            self.prompt(query),
            MAX_TOKENS,
            stop=["\n"],
            n=n or candidates_to_ask(query.n, min_token_p, MAX_CANDIDATES),
            cancel=cancel,
            min_token_p=min_token_p,
            heal=HEAL,
        )


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
    text = rejoined(unescape(generated), rest, finished, cut=reason in ("unsure", "length"))
    if text is None or not text.strip():
        return None
    score = _mean_probability(completion, index, len(text))
    kept = trace.upto(len(text)) if trace is not None else None
    return inline_candidate(cursor, text, score, kept)


def inline_candidate(cursor: int, text: str, score: float, kept: TokenTrace | None) -> Candidate:
    """Ghost text `text` at the cursor, with the tokens that wrote it (None: unknown)."""
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
