"""Type-through: while the user types what a shown suggestion predicted, its remainder
stays shown without asking the model again; the first character that disagrees drops
it. Predictions computed but not shown are kept briefly, keyed by their context (the
path, the text and the cursor), for a request that comes back to the same state."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace

from .candidates import Candidate
from .edits import TextEdit

KEEP_S = 10.0
MAX_KEPT = 32


@dataclass(frozen=True)
class Shown:
    """A candidate shown as ghost text, and the state it was shown in: an insertion at
    `cursor` of `text`."""

    path: str
    text: str
    cursor: int
    candidate: Candidate


def remainder(shown: Shown, path: str, text: str, cursor: int) -> Candidate | None:
    """The shown candidate's rest when the user has typed a prefix of it since (and
    nothing else), else None."""
    (edit,) = shown.candidate.edits
    typed = cursor - shown.cursor
    if path != shown.path or typed <= 0 or typed >= len(edit.new_text):
        return None
    inserted = edit.new_text[:typed]
    if len(text) != len(shown.text) + typed or text[shown.cursor : cursor] != inserted:
        return None
    if text[: shown.cursor] != shown.text[: shown.cursor]:
        return None
    if text[cursor:] != shown.text[shown.cursor :]:
        return None
    rest = TextEdit(cursor, cursor, edit.new_text[typed:])
    return replace(shown.candidate, edits=(rest,), kind="inline", region=None)


class PredictionMemory:
    """The suggestions shown per path (for type-through) and recent unshown results."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._shown: dict[str, list[Shown]] = {}
        self._results: OrderedDict[tuple[str, int, int], tuple[float, list[Candidate]]] = (
            OrderedDict()
        )

    def show(self, path: str, text: str, cursor: int, candidates: list[Candidate]) -> None:
        self._shown[path] = [
            Shown(path, text, cursor, c)
            for c in candidates
            if len(c.edits) == 1 and c.edits[0].start == c.edits[0].end == cursor
        ]

    def type_through(self, path: str, text: str, cursor: int) -> list[Candidate]:
        """The shown suggestions' remainders; the ones the user typed against dropped."""
        shown_here = self._shown.get(path, [])
        if any(s.cursor == cursor and s.text == text for s in shown_here):
            return []  # nothing typed since (a second request for the same state)
        kept = []
        for shown in shown_here:
            rest = remainder(shown, path, text, cursor)
            if rest is not None:
                kept.append(rest)
        if not kept:
            self._shown.pop(path, None)
        return kept

    def forget_shown(self, path: str) -> None:
        self._shown.pop(path, None)

    def remember(self, path: str, text: str, cursor: int, found: list[Candidate]) -> None:
        key = (path, hash(text), cursor)
        self._results[key] = (self._clock(), found)
        self._results.move_to_end(key)
        while len(self._results) > MAX_KEPT:
            self._results.popitem(last=False)

    def recall(self, path: str, text: str, cursor: int) -> list[Candidate] | None:
        key = (path, hash(text), cursor)
        entry = self._results.get(key)
        if entry is None or self._clock() - entry[0] > KEEP_S:
            return None
        return entry[1]
