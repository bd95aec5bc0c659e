"""What the LSP fuzzers share: hypothesis strategies for hostile LSP messages, and a
blocking LSP connection over any byte stream. Used by the torture script
(torture_fuzz.py, the daemon's sockets) and the stand-alone server's fuzz
test (tests/lsp/test_lsp_fuzz.py, stdio)."""

from __future__ import annotations

import itertools
import json
import select
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)  # what msgpack can carry too
    | st.floats(allow_nan=False)
    | st.text(max_size=8),
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
    "shadowtab.shadow.commit",
    "shadowtab.shadow.discard",
    "nope",
]
# Broken framing: after one of these the stream is lost (the session ends or waits).
RAW = [
    b"Content-Length: abc\r\n\r\n{}",
    b"Content-Length: -5\r\n\r\n",
    b"Content-Length: 99999999999999\r\n\r\n{}",
    b'Content-Length: 100\r\n\r\n{"jsonrpc": "2.0"',
    b"\xff\xfe\xfd\r\n\r\n",
    b"X" * 70_000 + b"\r\n\r\n",
]


def lsp_params(root: Path) -> st.SearchStrategy[Any]:
    """Params of the right shapes with wrong types, near and extreme numbers, documents
    inside the workspace, never opened and outside it."""
    uris = st.sampled_from(
        [(root / "a.py").as_uri(), (root / "b.py").as_uri(), "untitled:1", "file:///no/x.py"]
    )
    number = st.integers(-2, 50) | st.integers(min_value=-(2**40), max_value=2**40) | JSON
    position = st.fixed_dictionaries({"line": number, "character": number}) | JSON
    document = st.fixed_dictionaries(
        {"uri": uris | JSON, "version": st.integers(-1, 100) | st.integers(-(2**40), 2**40)},
        optional={"languageId": st.just("python"), "text": st.text(max_size=30)},
    )
    change = st.fixed_dictionaries(
        {"text": st.text(max_size=10)},
        optional={"range": st.fixed_dictionaries({"start": position, "end": position})},
    )
    return st.one_of(
        JSON,
        st.fixed_dictionaries({"textDocument": document, "position": position}),
        st.fixed_dictionaries(
            {"textDocument": document, "contentChanges": st.lists(change, max_size=3)}
        ),
        st.fixed_dictionaries(
            {"command": st.sampled_from(COMMANDS), "arguments": st.lists(JSON, max_size=2)}
        ),
        st.fixed_dictionaries({"id": JSON}),
    )


def lsp_messages(
    root: Path, methods: list[str] = METHODS, raw: bool = False
) -> st.SearchStrategy[tuple[str, Any]]:
    """(kind, message): "request" / "notification" ({method, params}), "body" (bytes
    framed correctly), "json" (any JSON framed correctly) and, with `raw`, "raw" (bytes
    sent as they are: broken framing). Requests are drawn twice as often as the others."""
    kinds = lsp_kinds(root, methods, raw)
    return st.one_of([kinds["request"], *kinds.values()])


def lsp_kinds(
    root: Path, methods: list[str] = METHODS, raw: bool = False
) -> dict[str, st.SearchStrategy[tuple[str, Any]]]:
    """lsp_messages' kinds one by one, by name (a fuzzer can feed one kind at a time)."""
    method = st.sampled_from(methods) | st.text(max_size=10)
    message = st.fixed_dictionaries({"method": method, "params": lsp_params(root)})
    kinds: dict[str, st.SearchStrategy[tuple[str, Any]]] = {
        "request": message.map(lambda m: ("request", m)),
        "notification": message.map(lambda m: ("notification", m)),
        "body": st.binary(max_size=40).map(lambda b: ("body", b)),
        "json": JSON.map(lambda j: ("json", j)),
    }
    if raw:
        kinds["raw"] = st.sampled_from(RAW).map(lambda b: ("raw", b))
    return kinds


class LspWire:
    """A blocking LSP connection: `write` sends bytes, `fileno` is polled and `recv`
    returns what is there (b"" at the end of the stream)."""

    def __init__(
        self, write: Callable[[bytes], None], recv: Callable[[], bytes], fileno: int
    ) -> None:
        self.write, self.recv, self.fileno = write, recv, fileno
        self.ids = itertools.count(1)
        self.buffer = b""

    def send_body(self, body: bytes) -> None:
        self.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def send(self, message: Any) -> None:
        self.send_body(json.dumps(message).encode())

    def request(self, method: str, params: Any) -> int:
        msg_id = next(self.ids)
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return msg_id

    def read(self, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            header, found, rest = self.buffer.partition(b"\r\n\r\n")
            if found:
                length = next(
                    int(line.split(b":")[1])
                    for line in header.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
                if len(rest) >= length:
                    self.buffer = rest[length:]
                    message: dict[str, Any] = json.loads(rest[:length])
                    return message
            ready, _, _ = select.select(
                [self.fileno], [], [], max(0.0, deadline - time.monotonic())
            )
            if not ready:
                raise TimeoutError("no answer")
            chunk = self.recv()
            if not chunk:
                raise EOFError("the server closed the connection")
            self.buffer += chunk

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

    def call(self, method: str, params: Any) -> dict[str, Any]:
        msg_id = self.request(method, params)
        return self.answers({msg_id})[msg_id]
