"""The evaluation's editor: a framed JSON-RPC client over a socket pair into an
in-process Hub session (the real server, its real handlers and shadow sync, nothing
mocked), plus LSP positions and the edits an editor sends."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

from shadowtab.shadow_workspace.line_text import position_in, utf16_to_index

from training.eval_cases import Step


class LspClient:
    """Answers the server's own requests (progress tokens) with null, drops
    notifications, returns the reply to each call."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        self.writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def call(self, method: str, params: Any) -> dict[str, Any]:
        self.next_id += 1
        msg_id = self.next_id
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        while True:
            message = await self._read()
            if "method" in message and "id" in message:
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif message.get("id") == msg_id and "method" not in message:
                return message

    async def _read(self) -> dict[str, Any]:
        length = 0
        while line := (await self.reader.readline()).strip():
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        if not length:
            raise ConnectionError("the server closed the connection")
        message: dict[str, Any] = json.loads(await self.reader.readexactly(length))
        return message


async def connect(hub: Any, client_class: Any = None) -> tuple[Any, asyncio.Task[None]]:
    """A session of `hub` served over one end of a socket pair, the client on the other
    (an LspClient, or `client_class` built from the same streams)."""
    server_end, client_end = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=server_end, limit=2**26)
    session = asyncio.ensure_future(hub.serve_connection(reader, writer))
    client_reader, client_writer = await asyncio.open_connection(sock=client_end, limit=2**26)
    return (client_class or LspClient)(client_reader, client_writer), session


def position(text: str, offset: int) -> dict[str, int]:
    """The LSP position (UTF-16 code units) of a str offset."""
    line, character = position_in(text, offset)
    return {"line": line, "character": character}


def offset_of(text: str, pos: dict[str, int]) -> int:
    """The str offset of an LSP position (UTF-16 code units), clamped to its line and
    to the text."""
    line_start = 0
    for _ in range(pos["line"]):
        found = text.find("\n", line_start)
        if found == -1:
            return len(text)
        line_start = found + 1
    line_end = text.find("\n", line_start)
    line = text[line_start : len(text) if line_end == -1 else line_end]
    return line_start + utf16_to_index(line, pos["character"])


def change_params(uri: str, version: int, text: str, step: Step) -> dict[str, Any]:
    rng = {"start": position(text, step.start), "end": position(text, step.end)}
    return {
        "textDocument": {"uri": uri, "version": version},
        "contentChanges": [{"range": rng, "text": step.new_text}],
    }


CURSOR_MOVED = "shadowtab/cursorMoved"


def cursor_moved_params(uri: str, text: str, offset: int) -> dict[str, Any]:
    """What both editor clients send when the cursor comes to rest at `offset`."""
    return {"textDocument": {"uri": uri}, "position": position(text, offset)}


def initialize_params(root_uri: str) -> dict[str, Any]:
    return {
        "processId": None,
        "rootUri": root_uri,
        "workspaceFolders": [{"uri": root_uri, "name": "eval"}],
        "capabilities": {
            "general": {"positionEncodings": ["utf-16"]},
            "window": {"workDoneProgress": True},
            "textDocument": {"inlineCompletion": {}, "synchronization": {}},
        },
    }
