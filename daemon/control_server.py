"""The daemon's control socket: an asyncio unix server that reads framed msgpack
requests and answers each one. Bad input gets an error reply or a closed connection,
never an exception that reaches the daemon."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from shadowtab.daemon.control_protocol import ConnectionClosed, encode_frame, read_frame
from shadowtab.daemon.runtime_files import MAX_SOCKET_PATH_BYTES
from shadowtab.inference.msgpack_frames import FrameError, FrameTooLarge

logger = logging.getLogger(__name__)

# A request handler: (cmd, args) -> reply fields. UnknownCommand, KeyError and
# ValueError (bad arguments) become error replies.
Handler = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]

# A client that connects and sends nothing (or stops mid-frame) is dropped after this.
DEFAULT_READ_TIMEOUT_S = 5.0


async def bind_unix_socket(
    path: Path, on_connection: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Any]
) -> asyncio.Server:
    """Listen on `path` with mode 0600 (the runtime dir is 0700 as well). A leftover
    socket file is replaced: callers hold the daemon lock, so nobody else owns it."""
    if len(os.fsencode(path)) > MAX_SOCKET_PATH_BYTES:
        raise OSError(f"socket path too long for a unix socket (max 107 bytes): {path}")
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    server = await asyncio.start_unix_server(on_connection, path=str(path))
    path.chmod(0o600)
    return server


class UnknownCommand(KeyError):
    """The handler does not know this command."""


class ControlServer:
    def __init__(
        self, socket_path: Path, handler: Handler, read_timeout: float = DEFAULT_READ_TIMEOUT_S
    ) -> None:
        self.socket_path = socket_path
        self.handler = handler
        self.read_timeout = read_timeout
        self._server: asyncio.Server | None = None
        self._clients: set[asyncio.Task[Any]] = set()

    async def start(self) -> None:
        self._server = await bind_unix_socket(self.socket_path, self._serve_client)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()
        await cancel_and_wait(self._clients)

    async def _serve_client(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        try:
            while await self._serve_one(reader, writer):
                pass
        except (ConnectionError, TimeoutError) as exc:
            logger.debug("control client dropped: %s", exc)
        except Exception:
            logger.exception("control connection failed")
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; False when the connection should close."""
        try:
            request = await read_frame(reader, self.read_timeout)
        except (ConnectionClosed, TimeoutError):
            return False
        except FrameTooLarge as exc:
            await _send(writer, error_reply(str(exc)))
            return False  # the rest of the oversized body is unread: the stream is lost
        except FrameError as exc:
            await _send(writer, error_reply(str(exc)))
            return True
        reply = await self.dispatch(request)
        await _send(writer, reply)
        return True

    async def dispatch(self, request: dict[str, Any]) -> dict[str, Any]:
        cmd = request.get("cmd")
        if not isinstance(cmd, str):
            return error_reply("request needs a string 'cmd'")
        args = {key: value for key, value in request.items() if key != "cmd"}
        try:
            result = await self.handler(cmd, args)
        except UnknownCommand:
            return error_reply(f"unknown command: {cmd!r}")
        except KeyError as exc:  # the hub's way to say: no such root, lock, ...
            return error_reply(f"{cmd}: not found: {exc.args[0] if exc.args else exc}")
        except ValueError as exc:
            return error_reply(f"{cmd}: {exc}")
        except Exception as exc:
            logger.exception("control command %r failed", cmd)
            return error_reply(f"{cmd}: internal error: {type(exc).__name__}: {exc}")
        return {**result, "ok": True}


@contextlib.contextmanager
def track_current_task(tasks: set[asyncio.Task[Any]]) -> Iterator[None]:
    """Keep the running task in `tasks` while the block runs (for cancel_and_wait)."""
    task = asyncio.current_task()
    assert task is not None
    tasks.add(task)
    try:
        yield
    finally:
        tasks.discard(task)


async def cancel_and_wait(tasks: set[asyncio.Task[Any]]) -> None:
    """Cancel connection handlers and let them finish, so none is left to be cancelled
    by asyncio.run at exit (which logs a traceback for each)."""
    pending = [task for task in tasks if task is not asyncio.current_task()]
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)


def error_reply(message: str) -> dict[str, Any]:
    return {"ok": False, "error": message}


async def _send(writer: asyncio.StreamWriter, reply: dict[str, Any]) -> None:
    try:
        frame = encode_frame(reply)
    except Exception as exc:  # a reply the hub built that msgpack cannot carry
        logger.exception("cannot encode a control reply")
        frame = encode_frame(error_reply(f"reply could not be encoded: {exc}"))
    writer.write(frame)
    await writer.drain()
