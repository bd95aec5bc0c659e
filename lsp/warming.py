"""Warming runs in one thread of its own, the newest warm per document only.

A warm is a prefill of the prompt the next request will send, started when typing
pauses. While the model serves real requests a warm waits (it is preempted within one
batch), and the user keeps typing: each pause would queue one more warm, holding its
request (the document's text and recent edits) until the thread got to it, and that
queue would grow without bound while the model stays busy. So a document has at most
one warm waiting: a newer one replaces
it, and tells the one running to stop after its current batch (what it prefilled is
the prefix of the newer prompt, which continues from there)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

logger = logging.getLogger(__name__)

Warm = Callable[[threading.Event], None]  # warm(cancel): blocks until done or cancelled


class WarmRunner:
    def __init__(self, is_cancellation: Callable[[BaseException], bool]) -> None:
        self._is_cancellation = is_cancellation
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="shadowtab-warm")
        self._lock = threading.Lock()
        self._waiting: dict[str, tuple[Warm, threading.Event]] = {}
        self._newest: dict[str, threading.Event] = {}  # cancel of the newest warm per key

    def submit(self, key: str, warm: Warm) -> None:
        """Run warm(cancel) in the warm thread; a warm of `key` still waiting is replaced,
        one running is asked to stop after its current batch."""
        cancel = threading.Event()
        with self._lock:
            previous = self._newest.get(key)
            if previous is not None:
                previous.set()
            self._newest[key] = cancel
            queued = key in self._waiting
            self._waiting[key] = (warm, cancel)
        if not queued:
            self._executor.submit(self._run_newest, key)

    def waiting(self) -> int:
        """Warms queued, not running (at most one per key)."""
        with self._lock:
            return len(self._waiting)

    def _run_newest(self, key: str) -> None:
        with self._lock:
            entry = self._waiting.pop(key, None)
        if entry is None:  # closed meanwhile
            return
        warm, cancel = entry
        try:
            if not cancel.is_set():
                warm(cancel)
        except Exception as exc:
            if not self._is_cancellation(exc):
                logger.info("warm failed: %s", exc)
        finally:
            with self._lock:
                if self._newest.get(key) is cancel:
                    del self._newest[key]

    def close(self) -> None:
        with self._lock:
            for cancel in self._newest.values():
                cancel.set()
            self._waiting.clear()
        self._executor.shutdown(wait=False, cancel_futures=True)
