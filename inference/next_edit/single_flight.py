"""One computation per key at a time: an editor asks for ghost text and a next edit of
the same keystroke at once, and both need the same model rewrite; the second caller
waits for the first's result instead of computing it again."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

V = TypeVar("V")
POLL_S = 0.005  # how often a waiting caller checks its own cancel event


@dataclass
class _Flight(Generic[V]):
    done: threading.Event = field(default_factory=threading.Event)
    value: V | None = None
    ok: bool = False  # the leader finished without error or cancellation
    waiters: int = 0


class SingleFlight(Generic[V]):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[Hashable, _Flight[V]] = {}

    def run(
        self,
        key: Hashable,
        compute: Callable[[], V],
        cancel: threading.Event | None = None,
    ) -> V | None:
        """compute() unless another caller is computing `key`: then its result. None when
        `cancel` is set while waiting. A leader that failed or was cancelled hands the
        work to the next waiter (a cancelled ghost-text request must not starve the
        next-edit request of the same keystroke)."""
        while True:
            with self._lock:
                flight = self._running.get(key)
                leader = flight is None
                if flight is None:
                    flight = self._running[key] = _Flight()
                flight.waiters += 0 if leader else 1
            if leader:
                return self._lead(key, flight, compute, cancel)
            try:
                while not flight.done.wait(POLL_S):
                    if cancel is not None and cancel.is_set():
                        return None
            finally:
                with self._lock:
                    flight.waiters -= 1
            if flight.ok:
                return flight.value

    def waiting(self) -> int:
        """Callers waiting for another's computation now (for tests and status)."""
        with self._lock:
            return sum(flight.waiters for flight in self._running.values())

    def _lead(
        self,
        key: Hashable,
        flight: _Flight[V],
        compute: Callable[[], V],
        cancel: threading.Event | None,
    ) -> V:
        try:
            flight.value = compute()
            flight.ok = not (cancel is not None and cancel.is_set())
            return flight.value
        finally:
            with self._lock:
                self._running.pop(key, None)
            flight.done.set()
