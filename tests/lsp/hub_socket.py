"""A Hub in this process serving sessions on a real unix socket, and a byte-level client
for it: for tests that need the hub's insides (sessions freed, files written, logs)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsp_helpers import initialize_params
from pygls.protocol import default_converter
from shadowtab.inference import EngineOptions
from shadowtab.inference.next_edit.predictor import FixedPredictor, Predictor
from shadowtab.lsp.hub import Hub, HubOptions
from shadowtab.lsp.settings import DebounceOptions, LimitsOptions
from shadowtab.shadow_workspace import LinterSpec


@dataclass
class HubOnSocket:
    hub: Hub
    base: Path
    root: Path
    socket_path: str

    async def client(self, root: Path | None = None, initialize: bool = True) -> HubClient:
        client = HubClient(*await asyncio.open_unix_connection(self.socket_path))
        if initialize:
            await client.initialize(self.root if root is None else root)
        return client


@contextlib.asynccontextmanager
async def hub_on_socket(
    predictor: Predictor | None = None,
    max_document_mb: float = 50,
    prediction_wait_s: float = 10.0,
    linters: dict[str, LinterSpec] | None = None,
    lint_max_mb: float | None = None,
) -> AsyncIterator[HubOnSocket]:
    """`linters`: none unless given; `lint_max_mb`: None, HubOptions' default."""
    base = Path(tempfile.mkdtemp(prefix="sthub-", dir="/tmp"))
    try:
        async with _serving(
            base, predictor, max_document_mb, prediction_wait_s, linters or {}, lint_max_mb
        ) as setup:
            yield setup
    finally:
        shutil.rmtree(base, ignore_errors=True)


@contextlib.asynccontextmanager
async def _serving(
    base: Path,
    predictor: Predictor | None,
    max_document_mb: float,
    prediction_wait_s: float,
    linters: dict[str, LinterSpec],
    lint_max_mb: float | None = None,
) -> AsyncIterator[HubOnSocket]:
    root = base / "proj"
    (root / ".git").mkdir(parents=True)
    limits = LimitsOptions(document_mb=max_document_mb, prediction_wait_s=prediction_wait_s)
    if lint_max_mb is not None:
        limits = dataclasses.replace(limits, lint_mb=lint_max_mb)
    options = HubOptions(
        state_dir=base / "state",
        engine=EngineOptions(kind="off"),
        linters=linters,
        debounce=DebounceOptions(lint_ms=50),
        limits=limits,
        predictor=predictor or FixedPredictor(inline_texts=["z"]),
    )
    hub = Hub(options)
    await hub.start()
    path = str(base / "lsp.sock")
    server = await asyncio.start_unix_server(hub.serve_connection, path)
    try:
        yield HubOnSocket(hub, base, root, path)
    finally:
        server.close()
        await hub.close()


class HubClient:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer, self.next_id = reader, writer, 0
        self.notifications: list[dict[str, Any]] = []

    def send_bytes(self, body: bytes) -> None:
        self.writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(json.dumps({"jsonrpc": "2.0", **message}).encode())

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: Any = None) -> int:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        return self.next_id

    async def read(self, timeout: float = 10.0) -> dict[str, Any]:
        length = 0
        while line := (await asyncio.wait_for(self.reader.readline(), timeout)).strip():
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        if not length:
            raise EOFError("the server closed the connection")
        message: dict[str, Any] = json.loads(await self.reader.readexactly(length))
        return message

    async def response(self, msg_id: Any, timeout: float = 10.0) -> dict[str, Any]:
        """Read until the reply to `msg_id`; the server's own requests get null."""
        while True:
            message = await self.read(timeout)
            if "method" in message and "id" in message:
                self.send({"id": message["id"], "result": None})
            elif "method" in message:
                self.notifications.append(message)
            elif message.get("id") == msg_id:
                return message

    async def call(self, method: str, params: Any = None) -> dict[str, Any]:
        return await self.response(self.request(method, params))

    async def command(self, name: str, *arguments: Any) -> dict[str, Any]:
        params = {"command": name, "arguments": list(arguments)}
        return await self.call("workspace/executeCommand", params)

    async def initialize(self, root: Path) -> None:
        params = default_converter().unstructure(initialize_params(root))
        assert "result" in await self.call("initialize", params)
        self.notify("initialized", {})

    def open(self, uri: str, text: str, version: int = 1) -> None:
        item = {"uri": uri, "languageId": "python", "version": version, "text": text}
        self.notify("textDocument/didOpen", {"textDocument": item})

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(Exception):
            await self.writer.wait_closed()


def insert_edit(uri: str, text: str) -> dict[str, Any]:
    """A WorkspaceEdit inserting `text` at the start of `uri`."""
    start = {"line": 0, "character": 0}
    return {"changes": {uri: [{"range": {"start": start, "end": start}, "newText": text}]}}
