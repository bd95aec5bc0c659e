"""Bad input over the wire: JSON-RPC errors per the specs, never a dead server."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from lsp_helpers import FIXED_SERVER, LspEnv
from lsp_raw_client import RawLspClient

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
SERVER_NOT_INITIALIZED = -32002


@pytest.fixture
async def raw(lsp_env: LspEnv) -> AsyncIterator[RawLspClient]:
    client = await RawLspClient.start([*FIXED_SERVER, "--inline", "x", "--no-lint"], lsp_env.env)
    try:
        yield client
    finally:
        await client.close()


async def alive(raw: RawLspClient) -> None:
    """The server still answers a valid request."""
    reply = await raw.call(
        "workspace/executeCommand", {"command": "shadowtab.lock.status", "arguments": []}
    )
    assert reply["result"]["holder"] == "user"


def inline_params(uri: str, line: int, character: int) -> dict[str, object]:
    return {
        "context": {"triggerKind": 1},
        "textDocument": {"uri": uri},
        "position": {"line": line, "character": character},
    }


def open_params(uri: str, text: str) -> dict[str, object]:
    return {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}


async def test_request_before_initialize_is_refused(raw: RawLspClient, lsp_env: LspEnv) -> None:
    reply = await raw.call("shutdown")
    assert reply["error"]["code"] == SERVER_NOT_INITIALIZED
    await raw.initialize(lsp_env.root)
    await alive(raw)


async def test_malformed_messages_get_spec_errors(raw: RawLspClient, lsp_env: LspEnv) -> None:
    await raw.initialize(lsp_env.root)
    raw.send_bytes(b'{"jsonrpc": "2.0", "id": 1, "method": ')
    reply = await raw.read()
    assert reply["id"] is None and reply["error"]["code"] == PARSE_ERROR
    raw.send_bytes(b"\xff\xfe not utf-8")
    assert (await raw.read())["error"]["code"] == PARSE_ERROR
    for body in ([1, 2], "text", 5, None, {"id": 3}, {"jsonrpc": "2.0"}):
        raw.send(body)
        reply = await raw.read()
        assert reply["error"]["code"] == INVALID_REQUEST
    raw.send({"jsonrpc": "1.0", "id": 9, "method": "shutdown"})
    reply = await raw.read()
    assert reply["id"] == 9 and reply["error"]["code"] == INVALID_REQUEST
    raw.send({"jsonrpc": "2.0", "id": {"x": 1}, "method": "shutdown"})
    reply = await raw.read()
    assert reply["id"] is None and reply["error"]["code"] == INVALID_REQUEST
    raw.send_bytes(b"")  # an empty body
    assert (await raw.read())["error"]["code"] == PARSE_ERROR
    await alive(raw)


async def test_unknown_methods(raw: RawLspClient, lsp_env: LspEnv) -> None:
    await raw.initialize(lsp_env.root)
    reply = await raw.call("textDocument/noSuchThing", {})
    assert reply["error"]["code"] == METHOD_NOT_FOUND
    raw.notify("textDocument/noSuchNotification", {"a": 1})
    raw.notify("$/setTrace", {"value": "off"})
    await alive(raw)


async def test_wrong_param_types(raw: RawLspClient, lsp_env: LspEnv) -> None:
    await raw.initialize(lsp_env.root)
    uri = (lsp_env.root / "a.py").as_uri()
    raw.notify("textDocument/didOpen", {"textDocument": {"uri": 5}})
    raw.notify("textDocument/didChange", "nonsense")
    raw.notify("textDocument/didOpen", open_params(uri, "x = 1\n"))
    for params in (
        {"textDocument": {"uri": uri}, "position": "here", "context": {"triggerKind": 1}},
        {"textDocument": {"uri": uri}, "position": {"line": "0", "character": 0}},
        None,
        [1, 2],
    ):
        reply = await raw.call("textDocument/inlineCompletion", params)
        assert reply["error"]["code"] == INVALID_PARAMS, reply
    reply = await raw.call("workspace/executeCommand", {"command": 7})
    assert reply["error"]["code"] == INVALID_PARAMS
    reply = await raw.call("workspace/executeCommand", {"command": "shadowtab.nope"})
    assert reply["error"]["code"] == INVALID_PARAMS
    await alive(raw)


async def test_positions_out_of_range_are_clamped(raw: RawLspClient, lsp_env: LspEnv) -> None:
    await raw.initialize(lsp_env.root)
    uri = (lsp_env.root / "a.py").as_uri()
    raw.notify("textDocument/didOpen", open_params(uri, "ab\ncd"))
    reply = await raw.call("textDocument/inlineCompletion", inline_params(uri, 99, 99))
    items = reply["result"]
    assert items[0]["range"]["start"] == {"line": 1, "character": 2}
    reply = await raw.call("textDocument/inlineCompletion", inline_params(uri, 0, 99))
    assert reply["result"][0]["range"]["start"] == {"line": 0, "character": 2}
    change = {
        "textDocument": {"uri": uri, "version": 2},
        "contentChanges": [
            {
                "range": {"start": {"line": 7, "character": 0}, "end": {"line": 9, "character": 1}},
                "text": "!",
            }
        ],
    }
    raw.notify("textDocument/didChange", change)
    reply = await raw.call(
        "workspace/executeCommand", {"command": "shadowtab.shadow.diff", "arguments": []}
    )
    assert "+cd!" in reply["result"]["diff"]


async def test_document_never_opened(raw: RawLspClient, lsp_env: LspEnv) -> None:
    await raw.initialize(lsp_env.root)
    uri = (lsp_env.root / "never.py").as_uri()
    reply = await raw.call("textDocument/inlineCompletion", inline_params(uri, 0, 0))
    assert reply["error"]["code"] == INVALID_PARAMS
    next_edit = {
        "textDocument": {"uri": uri, "version": 1},
        "position": {"line": 0, "character": 0},
    }
    reply = await raw.call("shadowtab/nextEdit", next_edit)
    assert reply["error"]["code"] == INVALID_PARAMS
    change = {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": "x"}]}
    raw.notify("textDocument/didChange", change)
    raw.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    raw.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    await alive(raw)


async def test_second_initialize_and_requests_after_shutdown(
    raw: RawLspClient, lsp_env: LspEnv
) -> None:
    await raw.initialize(lsp_env.root)
    reply = await raw.initialize(lsp_env.root)
    assert reply["error"]["code"] == INVALID_REQUEST
    assert (await raw.call("shutdown"))["result"] is None
    reply = await raw.call(
        "workspace/executeCommand", {"command": "shadowtab.lock.status", "arguments": []}
    )
    assert reply["error"]["code"] == INVALID_REQUEST
    raw.notify("exit")
    assert await raw.process.wait() == 0


async def test_exit_without_shutdown_exits_with_1(raw: RawLspClient, lsp_env: LspEnv) -> None:
    await raw.initialize(lsp_env.root)
    raw.notify("exit")
    assert await raw.process.wait() == 1


async def test_flood_of_did_change(raw: RawLspClient, lsp_env: LspEnv) -> None:
    await raw.initialize(lsp_env.root)
    uri = (lsp_env.root / "flood.py").as_uri()
    (lsp_env.root / "flood.py").write_text("")
    raw.notify("textDocument/didOpen", open_params(uri, ""))
    count = 3000
    for i in range(count):
        change = {
            "textDocument": {"uri": uri, "version": i + 2},
            "contentChanges": [
                {
                    "range": {
                        "start": {"line": 0, "character": i},
                        "end": {"line": 0, "character": i},
                    },
                    "text": "a",
                }
            ],
        }
        raw.notify("textDocument/didChange", change)
    reply = await raw.call("textDocument/inlineCompletion", inline_params(uri, 0, count))
    assert reply["result"][0]["range"]["start"] == {"line": 0, "character": count}
    reply = await raw.call(
        "workspace/executeCommand", {"command": "shadowtab.shadow.diff", "arguments": []}
    )
    assert "+" + "a" * count in reply["result"]["diff"]


async def test_stray_headers_are_tolerated(raw: RawLspClient, lsp_env: LspEnv) -> None:
    await raw.initialize(lsp_env.root)
    assert raw.process.stdin is not None
    raw.process.stdin.write(b"\r\nX-Unknown: 1\r\n\r\n")
    await alive(raw)
