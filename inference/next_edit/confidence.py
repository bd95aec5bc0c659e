"""A model candidate's confidence: the model's probability of the tokens it changed
(the geometric mean over the tokens that wrote the changed characters), so copying the
rest of the region faithfully neither raises nor lowers it."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .edits import minimal_edits


def changed_spans(draft: str, answer: str) -> list[tuple[int, int]]:
    """The spans of `answer` that differ from `draft` (empty spans mark deletions)."""
    spans = []
    shift = 0
    for edit in minimal_edits(draft, answer):
        start = edit.start + shift
        spans.append((start, start + len(edit.new_text)))
        shift += len(edit.new_text) - (edit.end - edit.start)
    return spans


def changed_tokens(spans: Sequence[tuple[int, int]], offsets: Sequence[int]) -> list[int]:
    """Indices of the tokens that wrote a changed span; for a deletion at p, the token
    written at p (the one the model chose instead of the deleted text)."""
    chosen: set[int] = set()
    for low, high in spans:
        begin = 0
        for index, end in enumerate(offsets):
            overlaps = begin < high and end > low
            at_deletion = low == high and begin <= low < end
            if overlaps or at_deletion:
                chosen.add(index)
            begin = end
        if low == high and offsets and low >= offsets[-1]:
            chosen.add(len(offsets) - 1)
    return sorted(chosen)


def confidence(draft: str, answer: str, logprobs: Sequence[float], offsets: Sequence[int]) -> float:
    """exp(mean log-probability of the changed tokens); 0.0 when the engine reported
    no log-probabilities (unknown is not confident)."""
    if not logprobs or len(logprobs) != len(offsets):
        return 0.0
    tokens = changed_tokens(changed_spans(draft, answer), offsets)
    if not tokens:
        return 0.0
    return math.exp(sum(logprobs[i] for i in tokens) / len(tokens))
