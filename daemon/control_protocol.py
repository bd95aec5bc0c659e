"""Framing of the control socket: the msgpack frames of inference/msgpack_frames.py (a
4-byte big-endian length, then a msgpack map; the engine worker's socketpair uses the
same codec), read here from an asyncio stream (the server) or a blocking socket (the
client), with the control socket's own limit.

Requests are `{"cmd": str, ...args}`; replies `{"ok": true, ...}` or
`{"ok": false, "error": str}`.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from shadowtab.inference.msgpack_frames import HEADER, check_length, decode, encode

MAX_FRAME_BYTES = 16 * 1024 * 1024


class ConnectionClosed(ConnectionError):
    """The peer closed the connection, before or in the middle of a frame."""


def encode_frame(message: dict[str, Any]) -> bytes:
    """FrameTooLarge over MAX_FRAME_BYTES."""
    return encode(message, MAX_FRAME_BYTES)


async def read_frame(reader: asyncio.StreamReader, timeout: float) -> dict[str, Any]:
    """One message. TimeoutError when the peer is silent for `timeout` seconds;
    FrameError (FrameTooLarge) for a frame that is no msgpack map (over the limit)."""
    try:
        header = await asyncio.wait_for(reader.readexactly(HEADER.size), timeout)
        (length,) = HEADER.unpack(header)
        check_length(length, MAX_FRAME_BYTES)
        body = await asyncio.wait_for(reader.readexactly(length), timeout)
    except asyncio.IncompleteReadError:
        raise ConnectionClosed("peer closed the connection") from None
    return decode(body)


def _recv_exactly(sock: socket.socket, count: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < count:
        chunk = sock.recv(min(count - len(chunks), 1 << 20))
        if not chunk:
            raise ConnectionClosed("the daemon closed the connection")
        chunks.extend(chunk)
    return bytes(chunks)


def recv_frame(sock: socket.socket) -> dict[str, Any]:
    """Blocking read of one message (the socket's own timeout applies)."""
    (length,) = HEADER.unpack(_recv_exactly(sock, HEADER.size))
    check_length(length, MAX_FRAME_BYTES)
    return decode(_recv_exactly(sock, length))
