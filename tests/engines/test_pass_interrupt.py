"""Stopping a warming pass part-way (llama_cpp/interrupt.py): only armed passes, only in
their first half, and the flag the native callback reads is what decides."""

from __future__ import annotations

import ctypes

import pytest
from shadowtab.inference.engines.llama_cpp import interrupt
from shadowtab.inference.engines.llama_cpp.interrupt import PassInterrupt


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def aborts(passes: PassInterrupt) -> bool:
    """What llama.cpp's abort callback answers now (the same C call it makes)."""
    callback = passes._callback
    assert callback is not None
    return bool(callback(ctypes.cast(passes._flag, ctypes.c_void_p)))  # type: ignore[operator]


def test_only_an_armed_pass_is_interrupted() -> None:
    passes = PassInterrupt()
    assert passes.available
    passes.interrupt()  # a real request's own pass: nothing
    assert not aborts(passes)
    with passes.armed():
        assert not aborts(passes)
        passes.interrupt()
        assert aborts(passes)
    assert not aborts(passes)  # disarmed: the flag is down for the next real pass


def test_a_pass_past_its_first_half_is_left_to_end(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    monkeypatch.setattr(interrupt.time, "perf_counter", clock)
    passes = PassInterrupt()
    with passes.armed():
        passes.pass_started(64)  # the first pass: nothing to go by, so interruptible
        clock.now += 0.160  # 2.5 ms a token
        passes.pass_ended(completed=True)
        passes.pass_started(64)
        clock.now += 0.100  # past half of the expected 160 ms: ending costs less
        passes.interrupt()
        assert not aborts(passes)
        passes.pass_ended(completed=True)
        passes.pass_started(32)
        clock.now += 0.020  # within half of the expected 50 ms (1.56 ms a token now)
        passes.interrupt()
        assert aborts(passes)
        passes.pass_ended(completed=False)  # aborted: its time says nothing of a pass


def test_a_stopped_pass_does_not_set_the_expected_time(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    monkeypatch.setattr(interrupt.time, "perf_counter", clock)
    passes = PassInterrupt()
    with passes.armed():
        passes.pass_started(64)
        clock.now += 0.160
        passes.pass_ended(completed=True)
        passes.pass_started(64)
        clock.now += 0.001
        passes.pass_ended(completed=False)  # stopped at once
        passes.pass_started(64)
        clock.now += 0.050  # a third of 160 ms: still interruptible
        passes.interrupt()
        assert aborts(passes)
