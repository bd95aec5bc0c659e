"""Length-prefixed msgpack frames over a stream socket, as the daemon's control socket
frames its messages: a 4-byte big-endian length, then one msgpack map. Used from both
ends of the daemon <-> engine worker socketpair (blocking sockets, one reader thread,
any number of sending threads)."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from typing import Any

import msgpack

# Prompts carry whole documents (the daemon refuses documents over 50 MB by default);
# anything larger than this is a bug on the other side, refused before it is read whole.
MAX_FRAME_BYTES = 128 * 1024 * 1024
HEADER = struct.Struct(">I")


class FrameError(ValueError):
    """A frame that cannot be read as a msgpack map, or one over MAX_FRAME_BYTES."""


class ChannelClosed(ConnectionError):
    """The other end closed the socket (or died), before or in the middle of a frame."""


def _to_plain(value: Any) -> Any:
    # engine stats may hold Paths or sets: send text rather than fail the whole frame
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


def encode(message: dict[str, Any], limit: int = MAX_FRAME_BYTES) -> bytes:
    body = msgpack.packb(message, default=_to_plain, use_bin_type=True)
    if len(body) > limit:
        raise FrameError(f"a message of {len(body)} bytes is over the {limit}-byte frame limit")
    return HEADER.pack(len(body)) + body


def decode(body: bytes) -> dict[str, Any]:
    try:
        message = msgpack.unpackb(body, raw=False)
    except Exception as exc:  # msgpack raises several unrelated types for bad input
        raise FrameError(f"frame is not valid msgpack: {type(exc).__name__}") from None
    if not isinstance(message, dict):
        raise FrameError(f"frame must be a msgpack map, got {type(message).__name__}")
    return message


class FrameChannel:
    """One end of the socketpair. send() is thread-safe; recv() belongs to one thread."""

    def __init__(self, sock: socket.socket, limit: int = MAX_FRAME_BYTES) -> None:
        self.sock = sock
        self.limit = limit
        self._send_lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        """ChannelClosed when the other end is gone."""
        data = encode(message, self.limit)
        with self._send_lock:
            try:
                self.sock.sendall(data)
            except OSError as exc:  # EPIPE / ECONNRESET: the peer died
                raise ChannelClosed(f"the other end is gone ({exc})") from None

    def recv(self) -> dict[str, Any]:
        """The next message; ChannelClosed at EOF, FrameError for a bad frame."""
        (length,) = HEADER.unpack(self._exactly(HEADER.size))
        if length > self.limit:
            raise FrameError(f"a frame of {length} bytes is over the {self.limit}-byte limit")
        return decode(self._exactly(length))

    def _exactly(self, count: int) -> bytes:
        chunks = bytearray()
        while len(chunks) < count:
            try:
                chunk = self.sock.recv(min(count - len(chunks), 1 << 20))
            except OSError as exc:
                raise ChannelClosed(f"the socket failed ({exc})") from None
            if not chunk:
                raise ChannelClosed("the other end closed the connection")
            chunks.extend(chunk)
        return bytes(chunks)

    def close(self) -> None:
        with contextlib.suppress(OSError):  # already disconnected
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
