"""Framing of the control socket: a 4-byte big-endian length, then a msgpack map.

Requests are `{"cmd": str, ...args}`; replies `{"ok": true, ...}` or
`{"ok": false, "error": str}`. Both the asyncio server and the blocking client use it.
"""

from __future__ import annotations

import asyncio
import socket
import struct
from typing import Any

import msgpack

MAX_FRAME_BYTES = 16 * 1024 * 1024
HEADER = struct.Struct(">I")


class ProtocolError(ValueError):
    """A frame that cannot be read as a msgpack map; the framing itself is still intact."""


class FrameTooLarge(ProtocolError):
    """The announced length is over MAX_FRAME_BYTES; the stream cannot be resynchronised."""


class ConnectionClosed(ConnectionError):
    """The peer closed the connection, before or in the middle of a frame."""


def _to_plain(value: Any) -> Any:
    # Replies may carry Paths, sets or tuples-in-dataclasses from the hub: send text
    # rather than fail the whole reply.
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    return str(value)


def encode_frame(message: dict[str, Any]) -> bytes:
    body = msgpack.packb(message, default=_to_plain, use_bin_type=True)
    if len(body) > MAX_FRAME_BYTES:
        raise FrameTooLarge(f"message of {len(body)} bytes is over {MAX_FRAME_BYTES}")
    return HEADER.pack(len(body)) + body


def check_length(length: int) -> None:
    if length > MAX_FRAME_BYTES:
        raise FrameTooLarge(f"frame of {length} bytes is over the {MAX_FRAME_BYTES}-byte limit")


def decode_body(body: bytes) -> dict[str, Any]:
    try:
        message = msgpack.unpackb(body, raw=False)
    except Exception as exc:  # msgpack raises several unrelated types for bad input
        raise ProtocolError(f"frame is not valid msgpack: {type(exc).__name__}") from None
    if not isinstance(message, dict):
        raise ProtocolError(f"frame must be a msgpack map, got {type(message).__name__}")
    return message


async def read_frame(reader: asyncio.StreamReader, timeout: float) -> dict[str, Any]:
    """One message. TimeoutError when the peer is silent for `timeout` seconds."""
    try:
        header = await asyncio.wait_for(reader.readexactly(HEADER.size), timeout)
        (length,) = HEADER.unpack(header)
        check_length(length)
        body = await asyncio.wait_for(reader.readexactly(length), timeout)
    except asyncio.IncompleteReadError:
        raise ConnectionClosed("peer closed the connection") from None
    return decode_body(body)


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
    check_length(length)
    return decode_body(_recv_exactly(sock, length))
