"""llama.cpp's own log lines go to Python logging (the daemon's log file), not to the
terminal: llama-cpp-python's callback prints them to stderr, and maps ggml's levels from
an older numbering, so warnings such as a context sized past the training length reached
every user's terminal. Native warnings are logged at INFO and errors at WARNING: they
are llama.cpp's view, and the engine reports what matters to the user itself."""

from __future__ import annotations

import ctypes
import logging

import llama_cpp

logger = logging.getLogger("shadowtab.llama_cpp.native")

# ggml_log_level (ggml.h): NONE 0, DEBUG 1, INFO 2, WARN 3, ERROR 4, CONT 5 (continues
# the previous message)
LEVELS = {0: logging.DEBUG, 1: logging.DEBUG, 2: logging.DEBUG, 3: logging.INFO, 4: logging.WARNING}
CONTINUATION = 5
# What llama.cpp says when a pass is stopped on purpose (interrupt.py: a real request
# interrupts warming), at its error and warning levels: debug lines for us.
INTERRUPTED_PASS = (
    "failed with error 1",  # GGML_STATUS_ABORTED
    "compute status: 1",
    "removing memory module entries",  # the stopped pass's positions
    "failed to decode, ret = 2",
)
_pending: list[str] = []  # a message arrives in pieces; it is logged once a line ends
_level = logging.DEBUG


@llama_cpp.llama_log_callback
def _on_native_log(level: int, text: bytes, _user_data: ctypes.c_void_p) -> None:
    global _level
    if level != CONTINUATION:
        _level = LEVELS.get(level, logging.DEBUG)
    _pending.append(text.decode("utf-8", errors="replace"))
    if _pending[-1].endswith("\n"):
        message = "".join(_pending).rstrip()
        _pending.clear()
        if message:
            interrupted = any(marker in message for marker in INTERRUPTED_PASS)
            logger.log(logging.DEBUG if interrupted else _level, "%s", message)


def route_native_logs() -> None:
    """From now on llama.cpp logs through `logger` (the callback object stays referenced
    at module level: llama.cpp keeps only its address)."""
    llama_cpp.llama_log_set(_on_native_log, ctypes.c_void_p(0))
