"""Ghost text for one keystroke: the rewrite's insertion at the cursor, else a plain
continuation there. The continuation does not wait for the whole rewrite: as soon as the
rewrite's best candidate is known not to insert at the cursor (cursor_line.py), it is
asked, and the engine runs it between two of the rewrite's passes. The rewrite goes on
for the next edit of the same keystroke; one that nobody waits for any more is stopped by
the next request for another state of the document."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import wait as wait_for

from .candidates import Query
from .cursor_line import EarlyVerdict, EarlyVerdicts, StateKey, state_key
from .pipeline import Suggestion

POLL_S = 0.005  # how often a waiting request checks its cancel event and the verdict
Source = Callable[[Query, threading.Event | None], list[Suggestion]]


class GhostText:
    """`rewrite`: the next-edit pipeline's suggestions (shared with the next edit of the
    same keystroke); `continuation`: plain continuations at the cursor."""

    def __init__(self, rewrite: Source, continuation: Source, verdicts: EarlyVerdicts) -> None:
        self._rewrite = rewrite
        self._continuation = continuation
        self._verdicts = verdicts
        self._lock = threading.Lock()
        self._running: dict[StateKey, threading.Event] = {}  # rewrites left running

    def suggestions(self, query: Query, cancel: threading.Event | None) -> list[Suggestion]:
        key = state_key(query.situation)
        verdict = self._verdicts.of(key)
        stop = threading.Event()
        rewrite = self._start(query, stop)
        try:
            if not self._rewrite_or_verdict(rewrite, verdict, cancel):
                return []  # cancelled
            if rewrite.done():
                return _inline(rewrite.result()) or self._continuation(query, cancel)
            found = self._continuation(query, cancel)  # runs between two rewrite passes
            if found:
                self._leave_running(key, stop, rewrite)
                return found
            if not self._rewrite_or_verdict(rewrite, None, cancel):
                return []
            return _inline(rewrite.result())
        finally:
            if not rewrite.done() and key not in self._running:
                stop.set()  # nobody waits for it

    def other_state(self, path: str, key: StateKey) -> None:
        """A request for `key`: rewrites left running for other states of `path` stop."""
        with self._lock:
            stale = [k for k in self._running if k[0] == path and k != key]
            for old in stale:
                self._running.pop(old).set()

    def _start(self, query: Query, stop: threading.Event) -> Future[list[Suggestion]]:
        future: Future[list[Suggestion]] = Future()

        def run() -> None:
            try:
                future.set_result(self._rewrite(query, stop))
            except BaseException as exc:  # the waiting request re-raises it
                future.set_exception(exc)

        threading.Thread(target=run, name="shadowtab-ghost-rewrite", daemon=True).start()
        return future

    def _leave_running(
        self, key: StateKey, stop: threading.Event, rewrite: Future[list[Suggestion]]
    ) -> None:
        with self._lock:
            self._running[key] = stop

        def forget(_: Future[list[Suggestion]]) -> None:
            with self._lock:
                if self._running.get(key) is stop:
                    del self._running[key]

        rewrite.add_done_callback(forget)

    @staticmethod
    def _rewrite_or_verdict(
        rewrite: Future[list[Suggestion]],
        verdict: EarlyVerdict | None,
        cancel: threading.Event | None,
    ) -> bool:
        """Wait until the rewrite ends or (with `verdict`) its best candidate is known
        not to insert at the cursor; False when `cancel` is set first."""
        while not wait_for([rewrite], POLL_S).done:
            if cancel is not None and cancel.is_set():
                return False
            if verdict is not None and verdict.no_insertion():
                return True
        return True


def _inline(found: list[Suggestion]) -> list[Suggestion]:
    return [s for s in found if s.kind == "inline"]
