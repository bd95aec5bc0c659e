"""A byte-level LSP client for bad-input tests: it sends exactly the bytes a test wants
(malformed JSON, wrong shapes) and reads the server's framed replies."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

from lsp_helpers import initialize_params


class RawLspClient:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.notifications: list[dict[str, Any]] = []
        self._ids = itertools.count(1)

    @classmethod
    async def start(
        cls, command: list[str], env: dict[str, str], capture_stderr: bool = False
    ) -> RawLspClient:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE if capture_stderr else asyncio.subprocess.DEVNULL,
            env=env,
            limit=2**24,
        )
        return cls(process)

    def send_bytes(self, body: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def send(self, message: Any) -> None:
        self.send_bytes(json.dumps(message).encode())

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def next_id(self) -> int:
        return next(self._ids)

    async def read(self, timeout: float = 10.0) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = None
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), timeout)
            if not line:
                raise EOFError("the server closed its stdout")
            if line.strip() == b"":
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        assert length is not None
        body = await asyncio.wait_for(self.process.stdout.readexactly(length), timeout)
        message: dict[str, Any] = json.loads(body)
        return message

    async def response(self, msg_id: Any, timeout: float = 10.0) -> dict[str, Any]:
        """Read until the response to `msg_id`; answers server requests with null."""
        while True:
            message = await self.read(timeout)
            if "method" in message and "id" in message:
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif "method" in message:
                self.notifications.append(message)
            elif message.get("id") == msg_id:
                return message

    async def call(self, method: str, params: Any = None) -> dict[str, Any]:
        msg_id = self.next_id()
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return await self.response(msg_id)

    async def initialize(self, root: Any) -> dict[str, Any]:
        from pygls.protocol import default_converter

        params = default_converter().unstructure(initialize_params(root))
        reply = await self.call("initialize", params)
        self.notify("initialized", {})
        return reply

    async def close(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
        await self.process.wait()
