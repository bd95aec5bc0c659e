"""Backpressure: a client that stops reading is dropped past a limit (the others are
served on), an oversized message is refused before its body is read, and a document
over the size limit is refused with a message to the user."""

from __future__ import annotations

import pytest
from hub_socket import HubClient, hub_on_socket, insert_edit
from lsp_helpers import eventually
from shadowtab.lsp import transport

INVALID_REQUEST, INVALID_PARAMS = -32600, -32602


async def alive(client: HubClient) -> None:
    reply = await client.command("shadowtab.lock.status")
    assert "result" in reply, reply


async def test_a_client_that_stops_reading_is_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transport, "MAX_UNSENT_BYTES", 2 * 1024 * 1024)
    async with hub_on_socket() as setup:
        other = await setup.client()
        stalled = await setup.client()
        await stalled.command("shadowtab.lock.release")
        big = (setup.root / "big.py").as_uri()
        reply = await stalled.command("shadowtab.shadow.applyEdit", insert_edit(big, "x" * 300_000))
        assert reply["result"]["applied"]
        for _ in range(100):  # ~30 MB of diffs that are never read
            stalled.request("workspace/executeCommand", {"command": "shadowtab.shadow.diff"})
        await eventually(lambda: len(setup.hub.sessions) == 1, timeout=20)
        await alive(other)
        assert setup.hub.workspaces.all()[0].has_pending()  # the shadow kept the edit


async def test_an_oversized_message_is_refused_before_it_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(transport, "MAX_MESSAGE_BYTES", 1024 * 1024)
    async with hub_on_socket() as setup:
        other = await setup.client()
        client = await setup.client()
        client.writer.write(b"Content-Length: 3000000\r\n\r\n" + b"x" * 1000)
        reply = await client.read()  # before the other 2,999,000 bytes were sent
        assert reply["id"] is None and reply["error"]["code"] == INVALID_REQUEST
        assert "3000000 bytes refused" in reply["error"]["message"]
        with pytest.raises(EOFError):  # that stream is over: the session ended
            await client.read()
        await eventually(lambda: len(setup.hub.sessions) == 1)
        await alive(other)


async def test_a_document_over_the_size_limit_is_refused() -> None:
    async with hub_on_socket(max_document_mb=0.01) as setup:  # ~10 KB
        client = await setup.client()
        big = (setup.root / "big.py").as_uri()
        client.open(big, "x" * 20_000)
        reply = await client.call("textDocument/inlineCompletion", inline(big))
        assert reply["error"]["code"] == INVALID_PARAMS  # not open: refused
        assert any("does not follow" in n["params"]["message"] for n in client.notifications)
        (setup.root / "disk.py").write_text("y" * 20_000)
        edit = insert_edit((setup.root / "disk.py").as_uri(), "z")
        reply = await client.command("shadowtab.shadow.applyEdit", edit)
        assert reply["error"]["code"] == INVALID_PARAMS
        assert "document limit" in reply["error"]["message"]
        small = (setup.root / "small.py").as_uri()
        client.open(small, "a\n")
        client.notify("textDocument/didChange", grow(small, 15_000))
        await alive(client)
        reply = await client.call("textDocument/inlineCompletion", inline(small))
        assert reply["error"]["code"] == INVALID_PARAMS  # no longer followed
        refusals = [n for n in client.notifications if "does not follow" in str(n["params"])]
        assert len(refusals) == 2


def inline(uri: str) -> dict[str, object]:
    position = {"line": 0, "character": 0}
    return {"textDocument": {"uri": uri}, "position": position, "context": {"triggerKind": 1}}


def grow(uri: str, size: int) -> dict[str, object]:
    position = {"line": 0, "character": 0}
    change = {"range": {"start": position, "end": position}, "text": "g" * size}
    return {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [change]}
