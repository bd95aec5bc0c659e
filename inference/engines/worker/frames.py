"""Msgpack frames (inference/msgpack_frames.py, the daemon's control socket's codec too)
over the daemon <-> engine worker socketpair, used from both ends: blocking sockets, one
reader thread, any number of sending threads."""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import Any

from ...msgpack_frames import HEADER, check_length, decode, encode

# Prompts carry whole documents (the daemon refuses documents over 50 MB by default);
# anything larger than this is a bug on the other side, refused before it is read whole.
MAX_FRAME_BYTES = 128 * 1024 * 1024


class ChannelClosed(ConnectionError):
    """The other end closed the socket (or died), before or in the middle of a frame."""


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
        """The next message; ChannelClosed at EOF, FrameError for a bad frame (FrameTooLarge
        over the limit)."""
        (length,) = HEADER.unpack(self._exactly(HEADER.size))
        check_length(length, self.limit)
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
