"""What every prompt format is, and the pieces they share: the window, escaping of
control strings in user text, and the changed lines of an edit.

A format renders a `Situation` into a prompt whose stable parts come first and whose
in-progress edit comes last (consecutive keystrokes then reuse the KV cache), and
parses the model's answer back into the updated region, failing closed: an answer
that did not end where the format says answers end, or that holds a stray marker, is
no answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from ..situation import EditInProgress, PastEdit, RenderedPrompt, Situation
from ..text_spans import common_prefix, common_suffix, line_of, line_starts

# Why a candidate stopped: the model's end-of-sequence token, a stop string, max_tokens,
# or anything else an engine reports (an unknown reason is not a complete answer).
FinishReason = Literal["eos", "stop", "length", "cancelled", "unknown"]

ESCAPE = "\u2063"  # INVISIBLE SEPARATOR, put after the `<` of a control string
# `<|...|>` is how ChatML, Qwen and Zeta spell their control strings and markers.
_BAR_CONTROL = re.compile(r"<(?=\|)")
# A region with more characters than this is not rewritten (a minified line, a 10 MB
# single-line file): no suggestion rather than an unbounded prompt and decode.
MAX_REGION_CHARS = 6000
MAX_CONTEXT_CHARS = 8000


class Format(Protocol):
    """A prompt layout for one model family."""

    @property
    def name(self) -> str: ...

    @property
    def stop(self) -> tuple[str, ...]:
        """Stop strings passed to the engine."""
        ...

    @property
    def complete_on(self) -> frozenset[FinishReason]:
        """The finish reasons of a complete answer."""
        ...

    def render(self, situation: Situation) -> RenderedPrompt | None:
        """The prompt, or None when the situation cannot be rendered faithfully."""
        ...

    def parse(self, answer: str, finish: FinishReason) -> str | None:
        """The updated region (user text, unescaped), or None: no suggestion."""
        ...

    def continuation(self, situation: Situation) -> str | None:
        """A prompt of plain code up to the cursor for ghost text's fallback
        continuation that begins as `render`'s prompt does (the two then share their KV
        cache), or None: the fallback uses its own prompt (prompts.completion_prompt)."""
        ...


def escape(text: str, controls: Sequence[str] = ()) -> str:
    """User text with every `<|` and every string of `controls` broken by ESCAPE, so
    that it cannot tokenize as a control token or read as a marker."""
    if "<" not in text:
        return text
    text = _BAR_CONTROL.sub("<" + ESCAPE, text)
    for control in controls:
        text = text.replace(control, control[0] + ESCAPE + control[1:])
    return text


def unescape(text: str) -> str:
    return text.replace("<" + ESCAPE, "<")


def has_marker(answer: str, markers: Sequence[str]) -> bool:
    """A marker the model should not have written (an escaped one is user text)."""
    return any(marker in answer for marker in markers) or _BAR_CONTROL.search(answer) is not None


@dataclass(frozen=True)
class Window:
    """The region the model rewrites and the context around it (str offsets)."""

    context_start: int
    region_start: int
    region_end: int
    context_end: int
    region_before: str  # the region as it was before the edit in progress
    region_now: str


def window(
    situation: Situation,
    lines_above: int,
    lines_below: int,
    context_above: int,
    context_below: int,
) -> Window | None:
    """Whole lines around the edit in progress (or the cursor): anchored to the edit,
    not the cursor, so the window stays put while the user types it. None when the
    region is too large to rewrite."""
    text = situation.text
    starts = line_starts(text)
    edit = usable_edit(situation)
    anchor = edit.start if edit is not None else min(max(situation.cursor, 0), len(text))
    first = line_of(starts, anchor)
    last = line_of(starts, edit.start + len(edit.new_text)) if edit is not None else first
    region_start, region_end = _span(text, starts, first - lines_above, last + lines_below)
    if region_end - region_start > MAX_REGION_CHARS:
        return None
    context_start = _span(text, starts, first - lines_above - context_above, first)[0]
    context_end = _span(text, starts, last, last + lines_below + context_below)[1]
    context_start = max(context_start, region_start - MAX_CONTEXT_CHARS)
    context_end = min(context_end, region_end + MAX_CONTEXT_CHARS)
    region_now = text[region_start:region_end]
    region_before = region_now
    if edit is not None:
        cut = edit.start - region_start
        region_before = region_now[:cut] + edit.old_text + region_now[cut + len(edit.new_text) :]
    return Window(context_start, region_start, region_end, context_end, region_before, region_now)


def _span(text: str, starts: Sequence[int], first: int, last: int) -> tuple[int, int]:
    first = max(0, first)
    last = min(len(starts) - 1, last)
    end = starts[last + 1] if last + 1 < len(starts) else len(text)
    return starts[first], end


def usable_edit(situation: Situation) -> EditInProgress | None:
    """The edit in progress when it lies in the text as described, else None."""
    edit = situation.in_progress
    if edit is None:
        return None
    end = edit.start + len(edit.new_text)
    if edit.start < 0 or end > len(situation.text):
        return None
    return edit if situation.text[edit.start : end] == edit.new_text else None


def edit_lines(text: str, edit: EditInProgress) -> tuple[str, str]:
    """The whole lines the edit in progress touches: (as they were, as they are)."""
    starts = line_starts(text)
    first = line_of(starts, edit.start)
    last = line_of(starts, edit.start + len(edit.new_text))
    start, end = _span(text, starts, first, last)
    now = text[start:end]
    cut = edit.start - start
    return now[:cut] + edit.old_text + now[cut + len(edit.new_text) :], now


def changed_lines(edit: PastEdit, max_chars: int = 800) -> tuple[str, str]:
    """The lines a completed edit changed: (old, new), common lines trimmed, each cut
    to `max_chars`. Linear in the file size, in C (slice comparisons)."""
    before, after = edit.before, edit.after
    prefix = common_prefix(before, after)
    suffix = common_suffix(before, after, prefix)
    start = before.rfind("\n", 0, prefix) + 1
    old_end = _line_end(before, len(before) - suffix)
    new_end = _line_end(after, len(after) - suffix)
    return before[start:old_end][:max_chars], after[start:new_end][:max_chars]


def _line_end(text: str, offset: int) -> int:
    if offset > 0 and text[offset - 1] == "\n":
        return offset
    found = text.find("\n", offset)
    return len(text) if found == -1 else found + 1


def ensure_newline(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"
