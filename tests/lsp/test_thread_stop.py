"""Stopping a call in another thread (lsp/thread_stop.py): the call named stops, a stop
that comes after it ended does nothing, and the thread goes on with its next call."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from shadowtab.lsp.thread_stop import StoppableCalls, Stopped


def spin(seconds: float) -> float:
    """Python work for `seconds` (a jedi call, as far as stopping goes)."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        sum(range(100))
    return time.monotonic() - started


def test_a_running_call_is_stopped_and_its_thread_runs_the_next_one() -> None:
    calls = StoppableCalls()
    pool = ThreadPoolExecutor(1)
    try:
        first = calls.new_id()
        started = threading.Event()

        def long_call() -> float:
            with calls.running(first):
                started.set()
                return spin(30.0)

        job = pool.submit(long_call)
        assert started.wait(5)
        assert calls.stop(first)
        with pytest.raises(Stopped):
            job.result(timeout=5)

        second = calls.new_id()

        def short_call() -> float:
            with calls.running(second):
                return spin(0.2)

        assert pool.submit(short_call).result(timeout=5) >= 0.2
        assert not calls.stop(first)  # long gone: nothing is asked of the thread
        assert pool.submit(spin, 0.2).result(timeout=5) >= 0.2
    finally:
        pool.shutdown()


def test_a_stop_after_the_call_ended_does_not_reach_the_threads_later_work() -> None:
    calls = StoppableCalls()
    pool = ThreadPoolExecutor(1)
    try:
        call = calls.new_id()

        def quick() -> int:
            with calls.running(call):
                return 1

        assert pool.submit(quick).result(timeout=5) == 1
        assert not calls.stop(call)
        assert pool.submit(spin, 0.3).result(timeout=5) >= 0.3
    finally:
        pool.shutdown()
