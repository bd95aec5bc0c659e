"""Serializing engine calls: real requests go first, warming yields to them within one
batch; cancel events are checked before every forward pass."""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from ..api import Cancelled


class CancelFlag(Protocol):
    """threading.Event or anything with is_set()."""

    def is_set(self) -> bool: ...


class Preempted(Exception):
    """A warm-up stopped because a real request is waiting."""


class RequestGate:
    """One engine call at a time. Waiting real requests go in order of priority, then
    arrival: a plain continuation (ghost text's fallback, a few tokens) before a rewrite
    (a window), so it does not queue behind other editors' rewrites that came first (one
    already running is not interrupted). Warming runs only while no real request waits."""

    def __init__(self) -> None:
        self._turns = threading.Condition()
        self._busy = False
        self._waiting: list[tuple[int, int]] = []  # heap of (priority, arrival)
        self._arrivals = itertools.count()

    @contextmanager
    def real(self, urgent: bool = False) -> Iterator[None]:
        ticket = (0 if urgent else 1, next(self._arrivals))
        with self._turns:
            heapq.heappush(self._waiting, ticket)
            try:
                while self._busy or self._waiting[0] != ticket:
                    self._turns.wait()
            finally:
                self._waiting.remove(ticket)
                heapq.heapify(self._waiting)
            self._busy = True
        try:
            yield
        finally:
            self._release()

    @contextmanager
    def background(self) -> Iterator[None]:
        """Low priority: waits while real requests are queued."""
        with self._turns:
            while self._busy or self._waiting:
                self._turns.wait()
            self._busy = True
        try:
            yield
        finally:
            self._release()

    def real_waiting(self) -> bool:
        return bool(self._waiting)

    def busy(self) -> bool:
        """A call (real or warming) holds the engine now."""
        return self._busy

    def waiting(self) -> int:
        """Real requests waiting for their turn now."""
        return len(self._waiting)

    def _release(self) -> None:
        with self._turns:
            self._busy = False
            self._turns.notify_all()


def cancel_guard(cancel: CancelFlag | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled("request cancelled")


def warm_guard(gate: RequestGate, cancel: CancelFlag | None) -> None:
    cancel_guard(cancel)
    if gate.real_waiting():
        raise Preempted()
