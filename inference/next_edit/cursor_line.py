"""Ghost text's early verdict: once a rewrite has written the cursor's line, does its best
candidate insert text at the cursor?

Ghost text is the rewrite's insertion at the cursor, else a plain continuation there
(predictor.py). The rewrite writes the region line by line, and the cursor's line comes
early: with the lines above an edit in progress given (given_lines.py) it is the first,
written at a median 0.37x of the whole rewrite's time (benchmarks/ghost_partial_rewrite.py).
Where that line is the line as it is (or changed otherwise than by an insertion at the
cursor), the best candidate is no ghost text, and the continuation need not wait for the
rest of the rewrite: the engine runs it between two of the rewrite's passes.

The verdict is read only when the answer so far is the region's text line for line up to
the cursor's line (the formats that write the region as it is); otherwise none is given
and ghost text waits for the whole rewrite, as before.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from .formats.base import unescape
from .situation import RenderedPrompt, Situation

RECENT_VERDICTS = 32  # keystroke states whose verdict a late ghost-text request may still read
StateKey = tuple[str, int, int]


def state_key(situation: Situation) -> StateKey:
    """One keystroke state of one document: (path, hash of its text, cursor)."""
    return situation.path, hash(situation.text), situation.cursor


class EarlyVerdict:
    """Set once: whether the best candidate inserts at the cursor."""

    def __init__(self) -> None:
        self.known = threading.Event()
        self.inserts = False

    def decide(self, inserts: bool) -> None:
        if not self.known.is_set():
            self.inserts = inserts
            self.known.set()

    def no_insertion(self) -> bool:
        return self.known.is_set() and not self.inserts


class EarlyVerdicts:
    """The verdicts of recent keystroke states: the rewrite (whoever runs it) decides one,
    the ghost-text request of the same state reads it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._recent: OrderedDict[StateKey, EarlyVerdict] = OrderedDict()

    def of(self, key: StateKey) -> EarlyVerdict:
        with self._lock:
            verdict = self._recent.get(key)
            if verdict is None:
                verdict = self._recent[key] = EarlyVerdict()
                while len(self._recent) > RECENT_VERDICTS:
                    self._recent.popitem(last=False)
            self._recent.move_to_end(key)
            return verdict


class CursorLineReader:
    """Fed the best candidate's answer piece by piece (Engine.rewrite's on_text); decides
    `verdict` once the cursor's line is written whole."""

    def __init__(self, situation: Situation, rendered: RenderedPrompt, verdict: EarlyVerdict):
        text, cursor = situation.text, situation.cursor
        line_start = text.rfind("\n", 0, cursor) + 1
        line_end = text.find("\n", cursor)
        self._above = text[rendered.region_start : line_start]  # the region up to the line
        self._before = text[line_start:cursor]
        self._after = text[cursor : line_end if line_end >= 0 else len(text)]
        self._readable = rendered.region_start <= line_start and line_end >= 0
        self._verdict = verdict
        self._written: list[str] = []
        self._newlines_needed = self._above.count("\n") + 1

    def feed(self, piece: str) -> None:
        if not self._readable or self._verdict.known.is_set():
            return
        self._written.append(piece)
        if "\n" not in piece:
            return
        answer = unescape("".join(self._written))
        if answer.count("\n") < self._newlines_needed:
            return
        if not answer.startswith(self._above):
            self._readable = False  # not the region line for line: no early verdict
            return
        line = answer[len(self._above) :].split("\n", 1)[0]
        self._verdict.decide(self._inserts(line))

    def _inserts(self, line: str) -> bool:
        """The line is the cursor's line with text inserted at the cursor."""
        before, after = self._before, self._after
        longer = len(line) > len(before) + len(after)
        return longer and line.startswith(before) and line.endswith(after)
