"""LSP base-protocol framing (Content-Length headers) over asyncio streams and stdio.

pygls' own loop (pygls.io_.run_async) drops malformed messages without a reply; we frame
here and let the session answer bad input with JSON-RPC errors.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import BinaryIO, Protocol

logger = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # a 50 MB document fits, with JSON escapes
# A client that stops reading: replies queue in the transport. Past this many unsent
# bytes the connection is dropped (that session only) instead of buffering without bound.
MAX_UNSENT_BYTES = 64 * 1024 * 1024
_CONTENT_LENGTH = re.compile(rb"^content-length:\s*(\d+)\s*$", re.IGNORECASE)
_MAX_HEADER_LINES = 32


class FramingError(Exception):
    """The byte stream is not LSP base protocol: the connection cannot continue."""


class AsyncLineReader(Protocol):
    async def readline(self) -> bytes: ...

    async def readexactly(self, n: int) -> bytes: ...


class ByteWriter(Protocol):
    def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class OversizedMessage:
    """A message whose Content-Length is over the limit: refused unread, and the stream
    ends there (a client announcing that much is broken; skipping it could take hours)."""

    length: int

    def describe(self) -> str:
        return f"message of {self.length} bytes refused: the limit is {MAX_MESSAGE_BYTES}"


async def read_messages(reader: AsyncLineReader) -> AsyncIterator[bytes | OversizedMessage]:
    """Yield message bodies until EOF; an oversized one is yielded as OversizedMessage,
    before a byte of its body is read, and ends the stream. FramingError on an
    unrecoverable stream."""
    while True:
        length = await _read_headers(reader)
        if length is None:
            return
        try:
            if length > MAX_MESSAGE_BYTES:
                yield OversizedMessage(length)  # refused now, before its body arrives
                return
            body = await reader.readexactly(length)
        except asyncio.IncompleteReadError:
            return
        yield body


async def _read_headers(reader: AsyncLineReader) -> int | None:
    """Content-Length of the next message, None at EOF."""
    length: int | None = None
    for _ in range(_MAX_HEADER_LINES):
        try:
            line = await reader.readline()
        except ValueError as exc:  # a header line longer than the stream's limit
            raise FramingError(f"unreadable header: {exc}") from exc
        if not line:
            return None
        if line.strip() == b"":
            if length is None:
                continue  # stray blank line between messages: tolerate it
            return length
        match = _CONTENT_LENGTH.match(line.strip())
        if match:
            length = int(match.group(1))
    raise FramingError("too many header lines without a message")


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class StreamWriterAdapter:
    """asyncio.StreamWriter with the sync write/close that pygls expects; a peer that
    leaves more than MAX_UNSENT_BYTES unread is cut off."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    def write(self, data: bytes) -> None:
        if self._writer.is_closing():
            return
        self._writer.write(data)
        unsent = self._writer.transport.get_write_buffer_size()
        if unsent > MAX_UNSENT_BYTES:
            logger.warning("client not reading (%d bytes unsent): connection dropped", unsent)
            self._writer.transport.abort()  # the read loop sees the connection end

    def close(self) -> None:
        self._writer.close()


class BinaryFileWriter:
    """A blocking binary file (stdout) as a pygls writer."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._closed = False

    def write(self, data: bytes) -> None:
        if self._closed:
            return
        try:
            self._stream.write(data)
            self._stream.flush()
        except (BrokenPipeError, ValueError, OSError):
            self._closed = True  # the client went away; the read loop ends on EOF

    def close(self) -> None:
        self._closed = True


class ThreadedReader:
    """Reads a blocking binary stream from a worker thread (stdin that is not a pipe)."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    async def readline(self) -> bytes:
        return await asyncio.to_thread(self._stream.readline)

    async def readexactly(self, n: int) -> bytes:
        data = await asyncio.to_thread(self._stream.read, n)
        if len(data) < n:
            raise asyncio.IncompleteReadError(data, n)
        return data


async def open_stdio(stdin: BinaryIO, stdout: BinaryIO) -> tuple[AsyncLineReader, BinaryFileWriter]:
    """Reader/writer over stdio; a pipe is read by the event loop, anything else by a thread."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_MESSAGE_BYTES)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    except (ValueError, OSError):
        return ThreadedReader(stdin), BinaryFileWriter(stdout)
    return reader, BinaryFileWriter(stdout)
