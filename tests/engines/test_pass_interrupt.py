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
