"""The lines above the cursor as one editor's prompts show them.

Where several editors type into one file (a shared file), each keystroke of theirs above
another editor's cursor changed that editor's prompt head (the format's context lines
above the region the model rewrites), and its next request prefilled everything from
there again: the last typist of a shared file paid for the others' text at each of its
keystrokes. A session now holds a copy of the lines above its cursor, taken when it
asks and retaken after HELD_MAX_AGE_S, with its own edits applied as it makes them: the
others' typing reaches its prompts when the copy is retaken, not at each of their keys.
Alone in a file, the copy is always the live text. The region itself, and so every
edit a suggestion makes, is always the live text."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from shadowtab.inference.next_edit.situation import HeldLines
from shadowtab.shadow_workspace import EditEvent

HELD_MAX_AGE_S = 5.0  # the others' lines above the cursor are at most this old in prompts
# Lines held above the cursor: the shipped format's context (24 lines above a region
# that starts 3 above the edit), with room for the cursor to move down meanwhile.
HELD_LINES_ABOVE = 40
HELD_COPIES = 64  # (session, document) pairs held; the least recently asked go first


class Lines(Protocol):
    """A document's lines (ShadowDocument's), each with its ending."""

    @property
    def line_count(self) -> int: ...

    def line(self, index: int) -> str: ...


@dataclass
class _Copy:
    first_line: int
    lines: list[str]
    total_lines: int  # the document's line count the copy is aligned with
    taken_at: float


class HeldAbove:
    """Per (session id, uri): the copy of the lines above that session's cursor."""

    def __init__(
        self, max_age_s: float = HELD_MAX_AGE_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.max_age_s = max_age_s
        self._clock = clock
        self._copies: OrderedDict[tuple[int, str], _Copy] = OrderedDict()

    def lines(self, key: tuple[int, str], document: Lines, cursor_line: int) -> HeldLines:
        """The held lines for a request at `cursor_line` of `document` now: the copy,
        retaken when it is too old, no longer aligned with the document's lines, or
        far from the cursor."""
        copy = self._copies.get(key)
        if copy is None or not self._usable(copy, document, cursor_line):
            copy = self._take(document, cursor_line)
            self._copies[key] = copy
        self._copies.move_to_end(key)
        while len(self._copies) > HELD_COPIES:
            self._copies.popitem(last=False)
        return HeldLines(copy.first_line, tuple(copy.lines))

    def own_edit(self, key: tuple[int, str], events: Sequence[EditEvent], document: Lines) -> None:
        """The session's own change (`events`, applied to `document`): the copy follows
        it, or is dropped where it cannot follow it exactly (retaken at the next ask)."""
        copy = self._copies.get(key)
        if copy is None:
            return
        if len(events) != 1 or not _follow(copy, events[0], document):
            del self._copies[key]

    def forget(self, key: tuple[int, str]) -> None:
        self._copies.pop(key, None)

    def _usable(self, copy: _Copy, document: Lines, cursor_line: int) -> bool:
        end = copy.first_line + len(copy.lines)
        return (
            self._clock() - copy.taken_at <= self.max_age_s
            and copy.total_lines == document.line_count
            and copy.first_line <= cursor_line <= end + HELD_LINES_ABOVE // 2
        )

    def _take(self, document: Lines, cursor_line: int) -> _Copy:
        cursor_line = min(max(cursor_line, 0), document.line_count)
        first = max(0, cursor_line - HELD_LINES_ABOVE)
        lines = [document.line(i) for i in range(first, cursor_line)]
        return _Copy(first, lines, document.line_count, self._clock())


def _follow(copy: _Copy, event: EditEvent, document: Lines) -> bool:
    """Apply one own edit (its range: lines before it) to the copy; False: it touches
    the copy's edges, which cannot be followed exactly."""
    start, end = event.range.start.line, event.range.end.line
    added = event.new_text.count("\n") - (end - start)
    first, count = copy.first_line, len(copy.lines)
    if end < first:  # above the copy: its lines move
        copy.first_line += added
    elif start >= first and end < first + count:  # inside: the new lines as they are now
        fresh = [document.line(i) for i in range(start, end + added + 1)]
        copy.lines[start - first : end - first + 1] = fresh
    elif start < first + count:  # across an edge of the copy
        return False
    copy.total_lines += added
    return True
