"""Where the model's pending edits are in a shadow text, so that a discard can drop them
and nothing else: non-overlapping spans (start, end, original) in current str offsets,
where text[start:end] is what the model wrote and `original` what was there before.

Model edits that overlap or touch a span merge into it; user edits shift the spans after
them, and a user edit inside a span makes that span the user's (it leaves the set). An
insertion exactly at a span's start or end stays outside it. Every update is O(number of
spans) list work plus the text of the edit itself, never O(file)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Any

from .line_text import position_in
from .model import Author, Position, Range, TextChange


@dataclass(frozen=True, slots=True)
class ModelSpan:
    start: int
    end: int
    original: str

    def shifted(self, delta: int) -> ModelSpan:
        return ModelSpan(self.start + delta, self.end + delta, self.original)


@dataclass(frozen=True, slots=True)
class Splice:
    """One replacement in str offsets: text[offset : offset + len(old)] was `old`, is `new`."""

    offset: int
    old: str
    new: str

    @property
    def end(self) -> int:
        return self.offset + len(self.old)

    @property
    def delta(self) -> int:
        return len(self.new) - len(self.old)


def common_prefix_length(a: str, b: str) -> int:
    """Length of the common prefix, by halving slices (C-speed compares, no char loop)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def narrowed(splice: Splice) -> Splice:
    """The same splice cut to the part that really changed (a full-text change that only
    retyped one line is a one-line splice). O(text): only used for full-text changes."""
    old, new = splice.old, splice.new
    head = common_prefix_length(old, new)
    limit = min(len(old), len(new)) - head
    tail = common_prefix_length(old[::-1][:limit], new[::-1][:limit])
    return Splice(splice.offset + head, old[head : len(old) - tail], new[head : len(new) - tail])


def minimal_change(old: str, new: str) -> TextChange | None:
    """One change turning `old` into `new`, covering only what differs (None: equal).
    O(text) at C speed: for pushing a whole new text to an editor (model edits, a
    discard, an editor that opened a stale copy), never per keystroke."""
    if old == new:
        return None
    splice = narrowed(Splice(0, old, new))
    start = Position(*position_in(old, splice.offset))
    end = Position(*position_in(old, splice.offset + len(splice.old)))
    return TextChange(Range(start, end), splice.new)


class ModelSpans:
    def __init__(self, spans: list[ModelSpan] | None = None) -> None:
        self.spans: list[ModelSpan] = sorted(spans or [], key=lambda span: span.start)
        self.taken_over = 0  # spans the user edited into their own since the last clear

    def __bool__(self) -> bool:
        return bool(self.spans)

    def __len__(self) -> int:
        return len(self.spans)

    def __repr__(self) -> str:
        return f"ModelSpans({self.spans!r}, taken_over={self.taken_over})"

    def clear(self) -> None:
        self.spans = []
        self.taken_over = 0

    def record(self, splice: Splice, author: Author) -> None:
        if author == "model":
            self.model_edit(splice)
        elif self.spans:
            self.user_edit(splice)

    def model_edit(self, splice: Splice) -> None:
        """Merge the edit with every span it overlaps or touches; shift those after it."""
        start, end = splice.offset, splice.end
        first = bisect_left(self.spans, start, key=_end_of)  # the first span reaching it
        stop = first
        while stop < len(self.spans) and self.spans[stop].start <= end:
            stop += 1
        touched = self.spans[first:stop]
        merged_start = min([start, *(span.start for span in touched)])
        merged_end = max([end, *(span.end for span in touched)])
        original = _original_of(touched, splice, merged_start, merged_end)
        new_end = merged_end + splice.delta
        merged = [ModelSpan(merged_start, new_end, original)]
        if new_end == merged_start and not original:
            merged = []  # nothing written over nothing: no span
        self.spans[first:] = merged + [span.shifted(splice.delta) for span in self.spans[stop:]]

    def user_edit(self, splice: Splice) -> None:
        """Spans before the edit stay, spans after it shift, spans it cuts into become the
        user's. A span ending where the edit starts is before it (so is an empty span at
        an insertion point); one starting where the edit ends is after it."""
        start, end = splice.offset, splice.end
        first = bisect_right(self.spans, start, key=_end_of)
        stop = first
        while stop < len(self.spans) and self.spans[stop].start < end:
            stop += 1
        self.taken_over += stop - first
        self.spans[first:] = [span.shifted(splice.delta) for span in self.spans[stop:]]

    def last_first(self) -> list[ModelSpan]:
        """The spans in descending order: reverting them in this order keeps the offsets
        of those not reverted yet valid."""
        return self.spans[::-1]

    def to_records(self) -> list[list[Any]]:
        return [[span.start, span.end, span.original] for span in self.spans]

    @classmethod
    def from_records(cls, records: list[Any]) -> ModelSpans:
        spans = [ModelSpan(int(start), int(end), str(original)) for start, end, original in records]
        return cls(spans)

    def check(self, length: int) -> None:
        """ValueError unless the spans are ordered, disjoint and inside a text of `length`."""
        previous_end = 0
        for span in self.spans:
            if not previous_end <= span.start <= span.end <= length:
                raise ValueError(f"model span {span.start}..{span.end} is out of place")
            previous_end = span.end


def _end_of(span: ModelSpan) -> int:
    return span.end


def _original_of(touched: list[ModelSpan], splice: Splice, start: int, end: int) -> str:
    """The text of [start, end) before the model touched it: span originals inside spans,
    the replaced text (`splice.old`) between them. Every gap lies inside the splice, since
    each touched span reaches into [splice.offset, splice.end]."""
    pieces: list[str] = []
    cursor = start
    for span in touched:
        pieces.append(_old_between(splice, cursor, span.start))
        pieces.append(span.original)
        cursor = span.end
    pieces.append(_old_between(splice, cursor, end))
    return "".join(pieces)


def _old_between(splice: Splice, start: int, end: int) -> str:
    if start >= end:
        return ""
    return splice.old[start - splice.offset : end - splice.offset]
