"""The cache-aware prompt for ghost text (inline completion); next-edit prompts are
the formats in `formats/`.

The KV cache reuses the longest common token prefix between consecutive requests, so
the prompt is a file header and the file up to the cursor: each keystroke only appends.
Its window into the file starts on a line number rounded down to a fixed step, so the
start of the prompt does not move while the user types inside one window.
"""

from __future__ import annotations

from ..text_spans import line_of, line_starts

# Where a window into the file may start: multiples of this many lines. A start that
# moved with every keystroke would invalidate the whole cached prefix.
WINDOW_STEP_LINES = 32
COMPLETION_CONTEXT_LINES = 96


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
