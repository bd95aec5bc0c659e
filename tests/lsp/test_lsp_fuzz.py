"""Hypothesis sends random valid-shaped and invalid messages to one server process: every
request gets exactly one JSON-RPC response, and the server keeps answering."""

from __future__ import annotations

import itertools
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsp_helpers import FIXED_SERVER, base_env, initialize_params

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
METHODS = [
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didClose",
    "textDocument/didSave",
    "textDocument/inlineCompletion",
    "textDocument/copilotInlineEdit",
    "shadowtab/nextEdit",
    "workspace/executeCommand",
    "initialize",
    "$/cancelRequest",
    "textDocument/hover",
    "no/such/method",
]
COMMANDS = [
    "shadowtab.lock.status",
    "shadowtab.lock.take",
    "shadowtab.lock.release",
    "shadowtab.lock.toggle",
    "shadowtab.shadow.applyEdit",
    "shadowtab.shadow.diff",
    "shadowtab.shadow.pending",
    "nope",
]


class SyncServer:
    """A blocking LSP connection to one server process."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.ids = itertools.count(1)
        self._buffer = b""

    def send_bytes(self, body: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_bytes(json.dumps(message).encode())

    def request(self, method: str, params: Any) -> int:
        msg_id = next(self.ids)
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return msg_id

    def read(self, timeout: float = 10.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in self._buffer:
            self._fill(deadline)
        header, _, rest = self._buffer.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in header.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
        while len(rest) < length:
            self._buffer = header + b"\r\n\r\n" + rest
            self._fill(deadline)
            header, _, rest = self._buffer.partition(b"\r\n\r\n")
        self._buffer = rest[length:]
        message: dict[str, Any] = json.loads(rest[:length])
        return message

    def _fill(self, deadline: float) -> None:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise TimeoutError("the server did not answer")
        chunk = os.read(fd, 65536)
        if not chunk:
            raise EOFError("the server closed stdout")
        self._buffer += chunk

    def answers(self, ids: set[int]) -> dict[Any, dict[str, Any]]:
        """Read until every id in `ids` is answered; server requests get null results."""
        replies: dict[Any, dict[str, Any]] = {}
        while not ids <= replies.keys():
            message = self.read()
            if "method" in message:
                if "id" in message:
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                continue
            replies[message.get("id")] = message
        return replies

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture
def server() -> Iterator[tuple[SyncServer, Path]]:
    base = Path(tempfile.mkdtemp(prefix="stfuzz-", dir="/tmp"))
    root = base / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "a.py").write_text("x = 1\n")
    connection = SyncServer([*FIXED_SERVER, "--inline", "y", "--no-lint"], base_env(base))
    from pygls.protocol import default_converter

    params = default_converter().unstructure(initialize_params(root))
    init_id = connection.request("initialize", params)
    assert "result" in connection.answers({init_id})[init_id]
    connection.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    try:
        yield connection, root
    finally:
        connection.close()
        shutil.rmtree(base, ignore_errors=True)


def uris(root: Path) -> st.SearchStrategy[Any]:
    return (
        st.sampled_from(
            [
                (root / "a.py").as_uri(),
                (root / "b.py").as_uri(),
                "untitled:1",
                "file:///no/such/x.py",
            ]
        )
        | JSON
    )


def positions() -> st.SearchStrategy[Any]:
    number = st.integers(min_value=-2, max_value=50) | JSON
    return st.fixed_dictionaries({"line": number, "character": number}) | JSON


def params_for(root: Path) -> st.SearchStrategy[Any]:
    document = st.fixed_dictionaries(
        {"uri": uris(root), "version": st.integers(-1, 100)},
        optional={"languageId": st.just("python"), "text": st.text(max_size=30)},
    )
    rng = st.fixed_dictionaries({"start": positions(), "end": positions()})
    return st.one_of(
        JSON,
        st.fixed_dictionaries({"textDocument": document, "position": positions()}),
        st.fixed_dictionaries(
            {
                "textDocument": document,
                "contentChanges": st.lists(
                    st.fixed_dictionaries({"text": st.text(max_size=10)}, optional={"range": rng}),
                    max_size=3,
                ),
            }
        ),
        st.fixed_dictionaries(
            {"command": st.sampled_from(COMMANDS), "arguments": st.lists(JSON, max_size=2)}
        ),
    )


def messages(root: Path) -> st.SearchStrategy[Any]:
    request = st.fixed_dictionaries(
        {"method": st.sampled_from(METHODS) | st.text(max_size=10), "params": params_for(root)}
    ).map(lambda m: ("request", m))
    notification = st.fixed_dictionaries(
        {"method": st.sampled_from(METHODS), "params": params_for(root)}
    ).map(lambda m: ("notification", m))
    garbage = st.binary(max_size=40).map(lambda b: ("bytes", b))
    odd = JSON.map(lambda j: ("json", j))
    return st.one_of(request, notification, garbage, odd)


def test_random_messages_never_kill_the_server(server: tuple[SyncServer, Path]) -> None:
    connection, root = server
    exchanged: list[int] = []

    @settings(
        max_examples=150,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(batch=st.lists(messages(root), min_size=1, max_size=6))
    def exchange(batch: list[tuple[str, Any]]) -> None:
        expected: set[int] = set()
        for kind, message in batch:
            if kind == "request":
                expected.add(connection.request(message["method"], message["params"]))
            elif kind == "notification":
                connection.send({"jsonrpc": "2.0", **message})
            elif kind == "bytes":
                connection.send_bytes(message)
            else:
                connection.send(message)
        ping = connection.request(
            "workspace/executeCommand", {"command": "shadowtab.lock.status", "arguments": []}
        )
        replies = connection.answers(expected | {ping})
        exchanged.append(len(expected))
        assert "result" in replies[ping], replies[ping]
        for msg_id in expected:
            reply = replies[msg_id]
            assert reply["jsonrpc"] == "2.0"
            assert ("result" in reply) != ("error" in reply), reply
            if "error" in reply:
                assert isinstance(reply["error"]["code"], int)
                assert isinstance(reply["error"]["message"], str)

    exchange()
    assert len(exchanged) >= 100 and sum(exchanged) >= 40
    assert connection.process.poll() is None
