"""Edit history: every change as an EditEvent; consecutive events by the same author on
the same document, close in time and touching the same place, merge into one (typing a
word is one event, as Zed's edit prediction merges edits within a second)."""

from __future__ import annotations

from collections import deque
from dataclasses import replace

from .document import advance
from .model import EditEvent

COALESCE_WINDOW_S = 1.0
HISTORY_LIMIT = 256


def coalesce(previous: EditEvent, event: EditEvent) -> EditEvent | None:
    """One event equal to `previous` then `event`, or None when they do not touch.

    Offsets: `previous` replaced old at p by new, so its result spans [p, p + len(new));
    `event` replaced [s, e) of that later text."""
    p, new = previous.offset, previous.new_text
    s, e = event.offset, event.offset + len(event.old_text)
    if e < p or s > p + len(new):
        return None
    before = event.old_text[: max(0, p - s)]  # text left of the previous result
    after_start = max(0, p + len(new) - s)
    after = event.old_text[after_start:]  # text right of the previous result
    merged_new = new[: max(0, s - p)] + event.new_text + new[max(0, e - p) :]
    merged_old = before + previous.old_text + after
    start = min(s, p)
    start_pos = event.range.start if s < p else previous.range.start
    return replace(
        previous,
        time=event.time,
        range=type(previous.range)(start_pos, advance(start_pos, merged_old)),
        old_text=merged_old,
        new_text=merged_new,
        offset=start,
    )


class EditHistory:
    def __init__(self, window_s: float = COALESCE_WINDOW_S, limit: int = HISTORY_LIMIT) -> None:
        self.window_s = window_s
        self._events: deque[EditEvent] = deque(maxlen=limit)

    def record(self, event: EditEvent) -> None:
        last = self._events[-1] if self._events else None
        if (
            last is not None
            and last.uri == event.uri
            and last.author == event.author
            and event.time - last.time <= self.window_s
        ):
            merged = coalesce(last, event)
            if merged is not None:
                self._events[-1] = merged
                return
        self._events.append(event)

    def recent(self, uri: str | None = None, limit: int = 16) -> list[EditEvent]:
        """The latest events, oldest first; no-op events (old == new) left out."""
        chosen = [
            event
            for event in reversed(self._events)
            if (uri is None or event.uri == uri) and event.old_text != event.new_text
        ]
        return list(reversed(chosen[:limit]))

    def forget(self, uri: str) -> None:
        self._events = deque((e for e in self._events if e.uri != uri), maxlen=self._events.maxlen)
