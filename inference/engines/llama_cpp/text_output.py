"""Turning generated token pieces into text: incremental UTF-8, stop strings, and streaming
that holds back just enough to never emit part of a stop string; the streaming variants
run a blocking request in a worker thread and yield its text as it is produced
(abandoning the iterator cancels the request)."""

from __future__ import annotations

import codecs
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

Emit = Callable[[str], None]
_DONE = object()


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


class EitherEvent:
    """Set when the caller's cancel event or the stream's own stop event is set."""

    def __init__(self, *events: threading.Event | None) -> None:
        self._events = [e for e in events if e is not None]

    def is_set(self) -> bool:
        return any(e.is_set() for e in self._events)


def stream_in_thread(
    run: Callable[[Emit, EitherEvent], Any], cancel: threading.Event | None
) -> Iterator[str]:
    stop = threading.Event()
    either = EitherEvent(cancel, stop)
    pieces: queue.Queue[object] = queue.Queue()

    def work() -> None:
        try:
            run(pieces.put, either)
            pieces.put(_DONE)
        except BaseException as exc:  # handed to the consumer, raised there
            pieces.put(exc)

    worker = threading.Thread(target=work, name="shadowtab-engine-stream", daemon=True)
    worker.start()
    return _drain(pieces, stop, worker)


def _drain(
    pieces: queue.Queue[object], stop: threading.Event, worker: threading.Thread
) -> Iterator[str]:
    try:
        while True:
            item = pieces.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            assert isinstance(item, str)
            yield item
    finally:
        stop.set()
        worker.join()
