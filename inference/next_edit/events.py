"""Edit events: the user's recent edits as the prompt formats see them.

The language server converts the shadow workspace's history into `Edit`s (plain data:
inference never imports the shadow workspace). Here they are coalesced (edits close in
time that touch the same text are one edit, as Zed's Zeta merges edits within a
second), kept newest last inside a budget, and split into the completed edits
(`PastEdit`) and the one still being typed (`EditInProgress`, the last one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from .situation import EditInProgress, PastEdit
from .text_spans import line_end_after, line_start_before

COALESCE_WINDOW_S = 1.0
MAX_EVENTS = 16
MAX_EVENT_CHARS = 2000  # old + new text of the kept events, newest first
# Past edits of files up to this size carry the whole file before/after (exact line
# numbers in their diffs); in larger files an excerpt keeps the work per request bounded.
WHOLE_FILE_CHARS = 64 * 1024
EXCERPT_LINES = 3
# The last edit is still in progress while the cursor is on its lines (or this many
# lines around them): a cursor moved elsewhere means the user finished it.
IN_PROGRESS_LINE_SLACK = 1


@dataclass(frozen=True)
class Edit:
    """One change: at `offset` of the text as it was just before, `old_text` became
    `new_text`. `time` in seconds (any clock, the same for all edits)."""

    path: str
    time: float
    offset: int
    old_text: str
    new_text: str


@dataclass(frozen=True)
class EditContext:
    past: tuple[PastEdit, ...] = ()  # oldest first
    in_progress: EditInProgress | None = None


def merge(previous: Edit, edit: Edit) -> Edit | None:
    """`previous` then `edit` as one edit, or None when `edit` does not touch the text
    `previous` produced. `edit.offset` refers to the text after `previous`."""
    p, new = previous.offset, previous.new_text
    s, e = edit.offset, edit.offset + len(edit.old_text)
    if previous.path != edit.path or e < p or s > p + len(new):
        return None
    left = edit.old_text[: max(0, p - s)]  # removed text left of previous's result
    right = edit.old_text[max(0, p + len(new) - s) :]  # and right of it
    merged_new = new[: max(0, s - p)] + edit.new_text + new[max(0, e - p) :]
    return replace(
        previous,
        time=edit.time,
        offset=min(s, p),
        old_text=left + previous.old_text + right,
        new_text=merged_new,
    )


def coalesce(edits: Sequence[Edit], window_s: float = COALESCE_WINDOW_S) -> list[Edit]:
    """Consecutive edits within `window_s` of each other on adjacent text merged; no-op
    edits (old == new) dropped. Order kept (oldest first)."""
    merged: list[Edit] = []
    for edit in edits:
        last = merged[-1] if merged else None
        if last is not None and 0 <= edit.time - last.time <= window_s:
            joined = merge(last, edit)
            if joined is not None:
                merged[-1] = joined
                continue
        merged.append(edit)
    return [edit for edit in merged if edit.old_text != edit.new_text]


def within_budget(
    edits: Sequence[Edit], max_events: int = MAX_EVENTS, max_chars: int = MAX_EVENT_CHARS
) -> list[Edit]:
    """The newest edits that fit: at most `max_events`, their old + new text at most
    `max_chars` (the newest is always kept, cut to the budget)."""
    kept: list[Edit] = []
    used = 0
    for edit in reversed(edits[-max_events:] if max_events > 0 else []):
        size = len(edit.old_text) + len(edit.new_text)
        if kept and used + size > max_chars:
            break
        kept.append(edit)
        used += size
    return list(reversed(kept))


def edit_context(
    edits: Sequence[Edit],
    path: str,
    text: str,
    cursor: int,
    texts: Mapping[str, str] | None = None,
    window_s: float = COALESCE_WINDOW_S,
    max_events: int = MAX_EVENTS,
    max_chars: int = MAX_EVENT_CHARS,
) -> EditContext:
    """The edits (oldest first; offsets as recorded) as a format's past edits and edit
    in progress. `text` is `path`'s text now; `texts` the other files' texts now (a
    file missing there gets excerpts of its edits only). Edits that do not fit the
    text they claim to describe (a stale history) end the reconstruction: older ones
    are dropped rather than shown wrong."""
    events = within_budget(coalesce(edits, window_s), max_events, max_chars)
    now = dict(texts or {})
    now[path] = text
    past: list[PastEdit] = []
    in_progress: EditInProgress | None = None
    # Walk newest first, undoing each edit to recover the text before it.
    for index in range(len(events) - 1, -1, -1):
        edit = events[index]
        after = now.get(edit.path)
        if after is not None and not _fits(after, edit):
            break
        if index == len(events) - 1 and edit.path == path and _cursor_on(text, edit, cursor):
            in_progress = EditInProgress(edit.offset, edit.old_text, edit.new_text)
        else:
            past.append(_past_edit(edit, after))
        if after is not None:
            now[edit.path] = _undo(after, edit)
    return EditContext(tuple(reversed(past)), in_progress)


def _fits(text: str, edit: Edit) -> bool:
    end = edit.offset + len(edit.new_text)
    return edit.offset >= 0 and end <= len(text) and text[edit.offset : end] == edit.new_text


def _undo(text: str, edit: Edit) -> str:
    return text[: edit.offset] + edit.old_text + text[edit.offset + len(edit.new_text) :]


def _cursor_on(text: str, edit: Edit, cursor: int) -> bool:
    """The cursor is on the edit's lines, give or take IN_PROGRESS_LINE_SLACK lines."""
    cursor = min(max(cursor, 0), len(text))
    end = edit.offset + len(edit.new_text)
    if cursor < edit.offset:
        gap = text.count("\n", cursor, edit.offset)
    else:
        gap = text.count("\n", end, cursor) if cursor > end else 0
    return gap <= IN_PROGRESS_LINE_SLACK


def _past_edit(edit: Edit, after: str | None) -> PastEdit:
    """The whole file before/after in a small file; lines around the edit otherwise
    (then the diff's line numbers count from the excerpt)."""
    if after is None:
        return PastEdit(edit.path, edit.old_text, edit.new_text)
    before = _undo(after, edit)
    if len(after) <= WHOLE_FILE_CHARS:
        return PastEdit(edit.path, before, after)
    start = line_start_before(after, edit.offset, EXCERPT_LINES)
    end = line_end_after(after, edit.offset + len(edit.new_text), EXCERPT_LINES)
    before_end = len(before) - (len(after) - end)
    return PastEdit(edit.path, before[start:before_end], after[start:end])
