"""The one msgpack frame codec: a 4-byte big-endian length, then one msgpack map. The
daemon's control socket (daemon/control_protocol.py) and the engine worker's socketpair
(engines/worker/frames.py) both frame their messages with it; each reads the bytes its
own way (asyncio, blocking socket). It lives here, not in daemon/, because inference may
import nothing from daemon, lsp or shadow_workspace, and each caller passes its own limit."""

from __future__ import annotations

import struct
from typing import Any

import msgpack

HEADER = struct.Struct(">I")


class FrameError(ValueError):
    """A frame that cannot be read as a msgpack map (the framing itself is still intact)."""


class FrameTooLarge(FrameError):
    """A message or an announced length over the limit: a stream that announced one
    cannot be resynchronised."""


def _to_plain(value: Any) -> Any:
    # Replies and engine stats may hold Paths or sets: send text (sets: sorted lists)
    # rather than fail the whole frame.
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    return str(value)


def encode(message: dict[str, Any], limit: int) -> bytes:
    """The frame of `message`: its header and body. FrameTooLarge over `limit` bytes."""
    body = msgpack.packb(message, default=_to_plain, use_bin_type=True)
    if len(body) > limit:
        raise FrameTooLarge(f"a message of {len(body)} bytes is over the {limit}-byte frame limit")
    return HEADER.pack(len(body)) + body


def check_length(length: int, limit: int) -> None:
    """A header's announced length; FrameTooLarge before a byte of the body is read."""
    if length > limit:
        raise FrameTooLarge(f"a frame of {length} bytes is over the {limit}-byte limit")


def decode(body: bytes) -> dict[str, Any]:
    """A frame's body; FrameError unless it is one msgpack map."""
    try:
        message = msgpack.unpackb(body, raw=False)
    except Exception as exc:  # msgpack raises several unrelated types for bad input
        raise FrameError(f"frame is not valid msgpack: {type(exc).__name__}") from None
    if not isinstance(message, dict):
        raise FrameError(f"frame must be a msgpack map, got {type(message).__name__}")
    return message
