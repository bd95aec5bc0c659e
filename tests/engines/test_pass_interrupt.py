"""Stopping a warming pass part-way (llama_cpp/interrupt.py): only armed passes, and the
flag the native callback reads is what decides. Whether a pass is stopped at all (the
waiting request does not need its tokens) is the engine's: test_inference_cache.py."""

from __future__ import annotations

import ctypes

from shadowtab.inference.engines.llama_cpp.interrupt import PassInterrupt


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


def test_an_owned_pass_is_interrupted_by_its_owner_or_anyone_only() -> None:
    """A request's late cancel must not stop the pass of the request after it."""
    passes = PassInterrupt()
    first, second = object(), object()
    with passes.armed(second):
        passes.interrupt(first)
        assert not aborts(passes)
        passes.interrupt(second)
        assert aborts(passes)
    with passes.armed(second):
        passes.interrupt()  # no owner named: a warm's interrupt stops any pass
        assert aborts(passes)


def test_a_cancel_event_calls_its_watchers_until_they_stop_watching() -> None:
    from shadowtab.inference.engines.api import CancelEvent

    event, calls = CancelEvent(), []
    stop = event.when_set(lambda: calls.append("first"))
    event.when_set(lambda: calls.append("second"))
    stop()
    event.set()
    assert calls == ["second"] and event.is_set()
    event.when_set(lambda: calls.append("late"))  # set already: called at once
    assert calls == ["second", "late"]
