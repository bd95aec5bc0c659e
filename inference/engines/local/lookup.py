"""Prompt lookup: a draft for the stretches where a rewrite has left the original (the
draft cursor paused). The output often repeats text it has already seen: a line of the
context copied, the same change made again, its own previous line. The tokens after the
latest earlier occurrence of the output's last few tokens, in the prompt or the output,
are proposed for verification, as llama.cpp's `ngram-simple` speculation does."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# How far back the lookup searches: the prompt's recent part and the output (bounded, so
# a pass's lookup costs microseconds also after a long prompt).
SEARCH_TOKENS = 4096


def lookup_draft(history: Sequence[int], match_tokens: int, draft_tokens: int) -> list[int]:
    """Up to `draft_tokens` tokens that followed the latest earlier occurrence of the last
    `match_tokens` of `history`; [] when there is none (or either length is 0)."""
    if match_tokens <= 0 or draft_tokens <= 0 or len(history) <= match_tokens:
        return []
    window = np.asarray(history[-SEARCH_TOKENS:], dtype=np.int64)
    pattern = window[-match_tokens:]
    # where earlier occurrences may start: each leaves at least one token after it
    starts = np.flatnonzero(window[: len(window) - match_tokens] == pattern[0])
    for start in starts[::-1]:
        end = start + match_tokens
        if np.array_equal(window[start:end], pattern):
            return [int(t) for t in window[end : end + draft_tokens]]
    return []
