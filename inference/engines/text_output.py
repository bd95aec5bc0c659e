"""Turning generated token pieces into text: incremental UTF-8, stop strings, and an
optional `emit` of the text as it grows that holds back just enough to never emit part
of a stop string (benchmarks/ghost_partial_rewrite.py reads a rewrite's partial output
through it)."""

from __future__ import annotations

import codecs
from collections.abc import Callable, Sequence

Emit = Callable[[str], None]


class TextAssembler:
    def __init__(self, stop: Sequence[str], emit: Emit | None = None) -> None:
        self._stop = [s for s in stop if s]
        self._hold = max((len(s) for s in self._stop), default=1) - 1
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._emit = emit
        self._emitted = 0
        self.text = ""
        self.stopped = False

    def add(self, piece: bytes) -> bool:
        """Append a token's bytes; True once a stop string has appeared (text cut before it)."""
        if self.stopped:
            return True
        self.text += self._decoder.decode(piece)
        cut = self._first_stop(max(0, len(self.text) - len(piece) - self._hold - 8))
        if cut is not None:
            self.text = self.text[:cut]
            self.stopped = True
        self._flush(final=self.stopped)
        return self.stopped

    def finish(self) -> str:
        if not self.stopped:
            self.text += self._decoder.decode(b"", final=True)
        self._flush(final=True)
        return self.text

    def _first_stop(self, start: int) -> int | None:
        hits = [i for i in (self.text.find(s, start) for s in self._stop) if i >= 0]
        return min(hits) if hits else None

    def _flush(self, final: bool) -> None:
        if self._emit is None:
            return
        end = len(self.text) if final else max(self._emitted, len(self.text) - self._hold)
        if end > self._emitted:
            self._emit(self.text[self._emitted : end])
            self._emitted = end
