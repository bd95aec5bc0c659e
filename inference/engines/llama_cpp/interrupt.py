"""Stopping a llama.cpp forward pass part-way, from another thread.

Warming prefills in passes of WARM_CHUNK tokens; a real request that arrives meanwhile
would wait for the pass in flight to end, often most of a ghost text answer's time (a
pass of 64 tokens takes 150-350 ms on 2 cores). llama.cpp checks an abort callback
before each graph node (ggml-cpu's first thread); on abort it removes the batch's
positions from the KV memory and llama_decode returns 2, so the sequence is as it was
before the pass.

The callback is libc's strlen over a two-byte flag buffer: "\\x01\\0" has length 1
(true: abort), "\\0" length 0 (false). strlen returns 0 or 1, which reads the same as
the C bool the callback type declares. A C function, so the compute thread never takes
the GIL: a Python callback would, hundreds of times a pass, and in the inline process
wait behind the daemon's own threads each time.

What a stopped pass computed is lost, so the engine asks for a stop only when the
waiting request does not need the pass's tokens (local/engine.py, WarmPass)."""

from __future__ import annotations

import ctypes
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import llama_cpp

logger = logging.getLogger(__name__)

ABORTED = 2  # llama_decode's status after the abort callback stopped the pass


class PassInterrupt:
    """One context's interrupt: armed around interruptible passes only, so a real
    request's own pass is never stopped."""

    def __init__(self) -> None:
        self._flag = ctypes.create_string_buffer(2)
        self._lock = threading.Lock()
        self._armed = False
        self._owner: object | None = None
        self._callback = _strlen_callback()

    @property
    def available(self) -> bool:
        """False where libc's strlen could not be found (interrupt() does nothing)."""
        return self._callback is not None

    def install(self, ctx: ctypes.c_void_p) -> None:
        if self._callback is not None:
            data = ctypes.cast(self._flag, ctypes.c_void_p)
            llama_cpp.llama_set_abort_callback(ctx, self._callback, data)

    @contextmanager
    def armed(self, owner: object | None = None) -> Iterator[None]:
        """`owner`: who may stop these passes (interrupt's `owner`); None: anyone."""
        with self._lock:
            self._flag[0] = b"\x00"
            self._armed, self._owner = True, owner
        try:
            yield
        finally:
            with self._lock:
                self._armed, self._owner = False, None
                self._flag[0] = b"\x00"

    def interrupt(self, owner: object | None = None) -> None:
        """Stop the armed pass; with `owner`, only if that owner armed it (a request's
        late cancel never stops the next request's pass)."""
        with self._lock:
            if self._armed and (owner is None or owner is self._owner):
                self._flag[0] = b"\x01"


def _strlen_callback() -> object | None:
    try:
        strlen = ctypes.CDLL(None).strlen
    except (OSError, AttributeError, TypeError):  # no C library to look it up in
        logger.info("no libc strlen: warming passes cannot be interrupted")
        return None
    return ctypes.cast(strlen, llama_cpp.ggml_abort_callback)
