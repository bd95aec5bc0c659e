"""Token-level confidence: the probability of each token a candidate writes (and the
top-1/top-2 margin), and where a suggestion stops being sure. A short suggestion is
right far more often than a long one, so ghost text is cut at the first token whose
probability is below the threshold, and a next edit that changes text through such a
token is not shown."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..engines.api import Completion
from .confidence import changed_spans, changed_tokens

# [next_edit] token_threshold's default: chosen on the dev split's line completions
# (benchmarks/ghost_confidence.py prints the curve it came from).
DEFAULT_TOKEN_THRESHOLD = 0.8


@dataclass(frozen=True)
class TokenTrace:
    """One candidate's tokens as the engine reported them: the probability of each,
    the text's length after each, and each one's top-1/top-2 probability margin (None
    when the engine did not compute margins)."""

    probs: tuple[float, ...]
    offsets: tuple[int, ...]
    margins: tuple[float, ...] | None = None

    def sure_length(self, threshold: float) -> int:
        """How many characters the tokens before the first unsure one wrote (the whole
        text's length when none is unsure; offsets are in the engine's text)."""
        end = 0
        for prob, offset in zip(self.probs, self.offsets, strict=True):
            if prob < threshold:
                return end
            end = offset
        return self.offsets[-1] if self.offsets else 0

    def upto(self, length: int) -> TokenTrace:
        """The tokens that wrote the first `length` characters."""
        count = sum(1 for begin in (0, *self.offsets[:-1]) if begin < length)
        margins = self.margins[:count] if self.margins is not None else None
        return TokenTrace(self.probs[:count], self.offsets[:count], margins)

    def picked(self, indices: Sequence[int]) -> tuple[tuple[float, ...], tuple[float, ...] | None]:
        """(probabilities, margins) of the tokens at `indices`."""
        probs = tuple(self.probs[i] for i in indices)
        margins = tuple(self.margins[i] for i in indices) if self.margins is not None else None
        return probs, margins


def candidates_to_ask(asked: int, threshold: float, limit: int) -> int:
    """How many candidates to ask the engine for: an alternative starts with a token other
    than the model's first choice, so none is above a threshold of 0.5 or more (it would
    be cut, or dropped as an unsure change): then one."""
    return 1 if threshold >= 0.5 else max(1, min(asked, limit))


def trace_of(completion: Completion, index: int) -> TokenTrace | None:
    """Candidate `index`'s tokens, or None when the engine reported no probabilities
    (an OpenAI-compatible server that refuses `logprobs`): then no cut can run."""
    logprobs = completion.logprobs[index] if index < len(completion.logprobs) else []
    offsets = completion.text_offsets[index] if index < len(completion.text_offsets) else []
    if not logprobs or len(logprobs) != len(offsets):
        return None
    gaps = completion.token_margins[index] if index < len(completion.token_margins) else []
    probs = tuple(math.exp(p) for p in logprobs)
    margins = (
        tuple(probability_margin(p, g) for p, g in zip(probs, gaps, strict=True))
        if len(gaps) == len(probs)
        else None
    )
    return TokenTrace(probs, tuple(offsets), margins)


def probability_margin(prob: float, gap: float) -> float:
    """p(top-1) - p(top-2) from the chosen token's probability and its logit gap to the
    runner-up (negative when another token was likelier: a forced first token)."""
    runner_up = prob * math.exp(min(-gap, 50.0))
    return prob - min(runner_up, 1.0)


def unsure_change(draft: str, answer: str, trace: TokenTrace, threshold: float) -> bool:
    """A rewrite changes `draft` into `answer` through a token below `threshold`."""
    indices = changed_tokens(changed_spans(draft, answer), trace.offsets)
    return any(trace.probs[i] < threshold for i in indices)
