"""A cache model of the prompt, mixed with the model at each decoding step (issue 42,
Build 4). Code repeats itself within a project: where the last few tokens written
(prompt and output together) occurred before in the prompt, the tokens that followed
them there are a second opinion on the next token. The two distributions are mixed,
p = (1 - lam) * p_model + lam * p_cache, with lam growing with the evidence (how often
the context recurred) as in the nested cache models of code (Hellendoorn and Devanbu,
2017). The mixed probability is what the sink reports and what the cut judges: a token
both the model and the project's code agree on is surer than either says alone.

The prompt is the scope: the file's window and, with `[next_edit] context_tokens`, the
project's similar windows before it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Logits = npt.NDArray[np.float32]

# How far back the cache looks (the prompt's recent part and the output): bounded, so a
# step's lookup costs microseconds also after a long prompt.
SEARCH_TOKENS = 4096


@dataclass(frozen=True)
class CacheMix:
    """`weight`: the cache's share when its evidence is unbounded; `evidence`: the count
    of earlier occurrences at which it has half of it; `min_match`/`max_match`: the
    context's length in tokens (the longest that recurs is used)."""

    weight: float = 0.5
    evidence: float = 1.0
    min_match: int = 3
    max_match: int = 8


class PromptCache:
    """The cache model over one candidate's history (the prompt, then its output)."""

    def __init__(self, prompt: Sequence[int], mix: CacheMix) -> None:
        self.history = list(prompt[-SEARCH_TOKENS:])
        self.mix = mix

    def push(self, token: int) -> None:
        self.history.append(token)

    def followers(self) -> Counter[int]:
        """The tokens that followed the earlier occurrences of the longest recurring
        context (min_match to max_match tokens); empty when none recurs."""
        window = np.asarray(self.history[-SEARCH_TOKENS:], dtype=np.int64)
        m = self.mix.min_match
        if m <= 0 or len(window) <= m:
            return Counter()
        pattern = window[-m:]
        # earlier occurrences: each has a token after it
        starts = np.flatnonzero(window[: len(window) - m] == pattern[0])
        found: dict[int, list[int]] = {}
        for start in starts:
            end = start + m
            if not np.array_equal(window[start:end], pattern):
                continue
            length = m
            while (
                length < self.mix.max_match
                and start - (length - m) - 1 >= 0
                and window[start - (length - m) - 1] == window[len(window) - length - 1]
            ):
                length += 1
            found.setdefault(length, []).append(int(window[end]))
        if not found:
            return Counter()
        return Counter(found[max(found)])

    def mixed(self, row: Logits) -> Logits:
        """`row` (logits) as the log of the mixed distribution; `row` itself where no
        context recurs."""
        followers = self.followers()
        if not followers:
            return row
        total = sum(followers.values())
        lam = self.mix.weight * total / (total + self.mix.evidence)
        peak = float(row.max())
        probs = np.exp(row - peak)
        probs *= (1.0 - lam) / probs.sum()
        for token, count in followers.items():
            probs[token] += lam * count / total
        return np.log(np.maximum(probs, 1e-30)).astype(np.float32)
