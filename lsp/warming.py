"""Warming runs in one thread of its own, the newest warm per document only.

A warm is a prefill of the prompt the next request will send. There are two kinds:
a *full* warm (the cursor came to rest at a new place, or typing paused) prefills ghost
text's prompt and then the next-edit prompt, hundreds of tokens at a new place; a
*follow* (each keystroke) appends the few tokens typed to ghost text's prompt.

While the model serves real requests a warm waits (it is preempted within one batch),
and the user keeps typing: each pause would queue one more warm, holding its request
(the document's text and recent edits) until the thread got to it, and that queue would
grow without bound while the model stays busy. So a document has at most one full warm
and one follow waiting. A newer full warm replaces both and tells the one running to
stop after its current batch (what it prefilled is the prefix of the newer prompt, which
continues from there). A follow does not stop a full warm: it waits behind it. The first
keys at a new place would otherwise stop the prefill of the prompt's stable part (the
file's far text, the project's context) that their own next request needs."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

logger = logging.getLogger(__name__)

Warm = Callable[[threading.Event], None]  # warm(cancel): blocks until done or cancelled


@dataclass
class _Entry:
    warm: Warm
    follow: bool
    cancel: threading.Event = field(default_factory=threading.Event)


class WarmRunner:
    def __init__(self, is_cancellation: Callable[[BaseException], bool]) -> None:
        self._is_cancellation = is_cancellation
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="shadowtab-warm")
        self._lock = threading.Lock()
        self._waiting: dict[str, list[_Entry]] = {}  # by key: a full warm, then a follow
        self._running: dict[str, _Entry] = {}

    def submit(self, key: str, warm: Warm, follow: bool = False) -> None:
        """Run warm(cancel) in the warm thread. A full warm replaces what of `key` waits
        and asks the one running to stop after its current batch; a follow does the same
        to a follow, and waits behind a full warm."""
        entry = _Entry(warm, follow)
        with self._lock:
            queue = self._waiting.setdefault(key, [])
            before = len(queue)  # a job is scheduled per entry queued
            running = self._running.get(key)
            if follow and _holds_full(queue, running):
                replaced = [e for e in queue if e.follow]
                queue[:] = [*(e for e in queue if not e.follow), entry]
            else:
                replaced = [*queue, *([running] if running is not None else [])]
                queue[:] = [entry]
            for old in replaced:
                old.cancel.set()
            added = len(queue) > before
        if added:
            self._executor.submit(self._run_next, key)

    def waiting(self) -> int:
        """Warms queued, not running (at most a full warm and a follow per key)."""
        with self._lock:
            return sum(len(queue) for queue in self._waiting.values())

    def _run_next(self, key: str) -> None:
        with self._lock:
            queue = self._waiting.get(key)
            if not queue:  # closed, or replaced by fewer warms meanwhile
                return
            entry = queue.pop(0)
            if not queue:
                del self._waiting[key]
            self._running[key] = entry
        try:
            if not entry.cancel.is_set():
                entry.warm(entry.cancel)
        except Exception as exc:
            if not self._is_cancellation(exc):
                logger.info("warm failed: %s", exc)
        finally:
            with self._lock:
                if self._running.get(key) is entry:
                    del self._running[key]

    def close(self) -> None:
        with self._lock:
            for queue in self._waiting.values():
                for entry in queue:
                    entry.cancel.set()
            for entry in self._running.values():
                entry.cancel.set()
            self._waiting.clear()
        self._executor.shutdown(wait=False, cancel_futures=True)


def _holds_full(queue: list[_Entry], running: _Entry | None) -> bool:
    """A full warm of the key waits, or runs and was not asked to stop."""
    if any(not e.follow for e in queue):
        return True
    return running is not None and not running.follow and not running.cancel.is_set()
