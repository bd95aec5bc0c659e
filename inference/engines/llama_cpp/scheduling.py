"""Serializing engine calls: real requests go first, warming yields to them within one
batch; cancel events are checked before every forward pass."""

from __future__ import annotations

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
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count_lock = threading.Lock()
        self._real_waiting = 0

    @contextmanager
    def real(self) -> Iterator[None]:
        with self._count_lock:
            self._real_waiting += 1
        try:
            self._lock.acquire()
        finally:
            with self._count_lock:
                self._real_waiting -= 1
        try:
            yield
        finally:
            self._lock.release()

    @contextmanager
    def background(self) -> Iterator[None]:
        """Low priority: waits while real requests are queued."""
        while True:
            self._lock.acquire()
            if not self.real_waiting():
                break
            self._lock.release()
            threading.Event().wait(0.002)  # let the waiting real request take the lock
        try:
            yield
        finally:
            self._lock.release()

    def real_waiting(self) -> bool:
        return self._real_waiting > 0


def cancel_guard(cancel: CancelFlag | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled("request cancelled")


def warm_guard(gate: RequestGate, cancel: CancelFlag | None) -> None:
    cancel_guard(cancel)
    if gate.real_waiting():
        raise Preempted()
