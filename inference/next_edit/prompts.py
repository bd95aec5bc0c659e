"""Cache-aware prompt layouts for inline completion and next-edit rewrites.

The KV cache reuses the longest common token prefix between consecutive requests, so
every layout puts what changes least first and what changes on every keystroke last:

    instructions -> file text above the editable region -> recent edits
      -> the editable region (also the speculative draft) -> the response

Windows into the file start on line numbers rounded down to a fixed step, so the start
of the prompt does not move while the user types inside one window.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# Where a window into the file may start: multiples of this many lines. A start that
# moved with every keystroke would invalidate the whole cached prefix.
WINDOW_STEP_LINES = 32
COMPLETION_CONTEXT_LINES = 96
REGION_LINES_ABOVE = 4
REGION_LINES_BELOW = 8
CONTEXT_LINES_ABOVE_REGION = 64
MAX_EDITS_SHOWN = 6
MAX_EDIT_CHARS = 400

FENCE = "```"
NEXT_EDIT_STOP = (FENCE, "\n###")


@dataclass(frozen=True)
class RecentEdit:
    """One change the user made recently: the text before and after, in one file."""

    path: str
    old_text: str
    new_text: str


@dataclass(frozen=True)
class NextEditPrompt:
    """A rewrite request: the model rewrites text[region_start:region_end]."""

    prompt: str
    draft: str  # what the model would write if it changed nothing: the speculative draft
    region_start: int
    region_end: int
    stop: tuple[str, ...] = NEXT_EDIT_STOP


def line_starts(text: str) -> list[int]:
    """Offsets where each line of `text` begins."""
    starts = [0]
    index = text.find("\n")
    while index != -1:
        starts.append(index + 1)
        index = text.find("\n", index + 1)
    return starts


def line_of(starts: Sequence[int], offset: int) -> int:
    """The 0-based line that holds `offset`."""
    low, high = 0, len(starts) - 1
    while low < high:
        middle = (low + high + 1) // 2
        if starts[middle] <= offset:
            low = middle
        else:
            high = middle - 1
    return low


def stable_window_start(cursor_line: int, context_lines: int) -> int:
    """First line of a window that reaches `context_lines` above the cursor, rounded
    down to WINDOW_STEP_LINES so it stays put while the cursor moves within a step."""
    wanted = max(0, cursor_line - context_lines)
    return wanted - wanted % WINDOW_STEP_LINES


def completion_prompt(path: str, text: str, cursor: int) -> str:
    """Prompt for ghost text at `cursor`: a file header, then the file up to the cursor.

    The model continues the text; each keystroke only appends to the prompt, so all but
    the last few tokens come from the cache.
    """
    starts = line_starts(text)
    first = stable_window_start(line_of(starts, cursor), COMPLETION_CONTEXT_LINES)
    return f"# File: {path}\n{text[starts[first] : cursor]}"


def editable_region(text: str, cursor: int) -> tuple[int, int]:
    """Offsets of the whole lines around the cursor that a next edit may rewrite."""
    starts = line_starts(text)
    cursor_line = line_of(starts, cursor)
    first = max(0, cursor_line - REGION_LINES_ABOVE)
    last = min(len(starts) - 1, cursor_line + REGION_LINES_BELOW)
    end = starts[last + 1] - 1 if last + 1 < len(starts) else len(text)
    return starts[first], end


def format_recent_edits(edits: Sequence[RecentEdit]) -> str:
    """The most recent edits as small before/after blocks, oldest first."""
    blocks = []
    for edit in list(edits)[-MAX_EDITS_SHOWN:]:
        old = edit.old_text[-MAX_EDIT_CHARS:]
        new = edit.new_text[-MAX_EDIT_CHARS:]
        blocks.append(f"In {edit.path}:\n- {old!r}\n+ {new!r}")
    return "\n".join(blocks) if blocks else "(none)"


def next_edit_prompt(
    path: str, text: str, cursor: int, recent_edits: Sequence[RecentEdit] = ()
) -> NextEditPrompt:
    """Prompt for rewriting the region around `cursor` (chat layout of SmolLM2/ChatML)."""
    region_start, region_end = editable_region(text, cursor)
    starts = line_starts(text)
    region_line = line_of(starts, region_start)
    context_first = stable_window_start(region_line, CONTEXT_LINES_ABOVE_REGION)
    context = text[starts[context_first] : region_start]
    region = text[region_start:region_end]
    # Plain sections rather than a chat template: the small default model copies the
    # region faithfully in this layout (and the copy is what speculative edits verify
    # in batches), where a chat layout set it off answering in prose.
    prompt = (
        f"# File: {path}\n{context}"
        f"### Recent edits\n{format_recent_edits(recent_edits)}\n"
        f"### Current code\n{FENCE}\n{region}\n{FENCE}\n"
        f"### Updated code\n{FENCE}\n"
    )
    return NextEditPrompt(
        prompt=prompt,
        draft=f"{region}\n{FENCE}",
        region_start=region_start,
        region_end=region_end,
    )
