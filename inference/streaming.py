"""Streaming variants: run a blocking request in a worker thread and yield its text as it
is produced; abandoning the iterator cancels the request."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

from .text_output import Emit

_DONE = object()


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
