"""Stopping a call that runs in another thread: for jedi, which has no way to cancel.

A name check's jedi call can run for a minute and take a gigabyte: a completion after
`AutoTokenizer.` in a project that uses transformers has jedi look the name up through
the package's hundreds of star imports, parsing each module. The check's deadline only
stops waiting for it. This stops the call itself: CPython raises an exception in a
thread at its next bytecode when asked (PyThreadState_SetAsyncExc), and jedi and parso
are Python. The request is made only while the call it names runs, and withdrawn when
the call ends, under one lock, so it cannot land in the thread's next call or in the
thread pool's own loop: `stop` forgets the call as it asks, so an exception that lands
while the call is ending finds nothing left to undo."""

from __future__ import annotations

import ctypes
import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Stopped(Exception):
    """Raised in a call's thread when the call was stopped from another thread."""


def _raise_in(thread_id: int, exception: type[BaseException] | None) -> None:
    """Ask CPython to raise `exception` in the thread (None: withdraw the request)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exception) if exception else None
    )


class StoppableCalls:
    """Calls, one thread each at a time, that another thread may stop by their id."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[int, int] = {}  # call id -> its thread
        self._ids = itertools.count()

    def new_id(self) -> int:
        return next(self._ids)

    @contextmanager
    def running(self, call: int) -> Iterator[None]:
        """The body is call `call`; `stop(call)` raises Stopped in it."""
        with self._lock:
            self._running[call] = threading.get_ident()
        try:
            yield
        finally:
            with self._lock:
                self._running.pop(call, None)
                _raise_in(threading.get_ident(), None)  # stopped as it ended: not later

    def stop(self, call: int) -> bool:
        """Stop call `call` if it is still running: True when asked."""
        with self._lock:
            thread = self._running.pop(call, None)
            if thread is None:
                return False
            _raise_in(thread, Stopped)
            return True
