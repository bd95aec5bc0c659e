"""What a hostile or broken client found (issue 14): ended sessions are freed, malformed
messages never end a session, `shutdown` answers the requests in flight first, and
per-message logging stays at DEBUG."""

from __future__ import annotations

import asyncio
import gc
import logging
import weakref
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hub_socket import HubClient, HubOnSocket, hub_on_socket
from lsp_helpers import eventually
from pygls.exceptions import JsonRpcInternalError
from shadowtab.inference.next_edit.predictor import FixedPredictor
from shadowtab.lsp.predictions import PredictionCancelled, PredictionExpired

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS, REQUEST_CANCELLED = -32700, -32600, -32602, -32800


@pytest.fixture
async def setup() -> AsyncIterator[HubOnSocket]:
    async with hub_on_socket(FixedPredictor(inline_texts=["z"], delay_s=2.0)) as setup:
        yield setup


async def alive(client: HubClient) -> None:
    reply = await client.command("shadowtab.lock.status")
    assert reply["result"]["holder"] == "user", reply


def inline_params(uri: str) -> dict[str, object]:
    position = {"line": 0, "character": 0}
    return {"textDocument": {"uri": uri}, "position": position, "context": {"triggerKind": 1}}


async def test_an_ended_session_is_freed(setup: HubOnSocket) -> None:
    refs = []
    for _ in range(3):
        client = await setup.client()
        uri = (setup.root / "a.py").as_uri()
        client.open(uri, "a = 1\n")
        await alive(client)
        (session,) = setup.hub.sessions
        refs.append(weakref.ref(session))
        del session
        await client.close()  # vanished without shutdown
        await eventually(lambda: not setup.hub.sessions)
    await asyncio.sleep(0.1)
    gc.collect()
    assert [ref() for ref in refs] == [None, None, None]


async def test_a_long_session_keeps_no_futures_of_answered_requests(setup: HubOnSocket) -> None:
    """pygls files every step of its generator handlers (executeCommand) under a fresh
    uuid and never removed it: ~1.4 KB per command, the soak's RSS growth."""
    client = await setup.client()
    for _ in range(200):
        await alive(client)
    (session,) = setup.hub.sessions
    await eventually(lambda: not session.protocol._request_futures)
    await client.close()


async def test_bad_cancel_and_deep_nesting_keep_the_session(setup: HubOnSocket) -> None:
    client = await setup.client()
    bad_params: tuple[Any, ...] = ({"id": {}}, {"id": [1]}, {"id": None}, {}, "x", None)
    for params in bad_params:
        client.notify("$/cancelRequest", params)
        reply = await client.call("$/cancelRequest", params)  # as a request: refused
        assert reply["error"]["code"] in (INVALID_REQUEST, INVALID_PARAMS), reply
    await alive(client)
    client.send_bytes(b"[" * 100_000 + b"]" * 100_000)
    assert (await client.read())["error"]["code"] == PARSE_ERROR
    for depth in (5000, 900):  # past json's recursion limit, and past cattrs' only
        deep = b'{"a": ' * depth + b"1" + b"}" * depth
        body = b'{"jsonrpc": "2.0", "id": %d, "method": "%s", "params": %s}'
        client.send_bytes(body % (depth, b"textDocument/inlineCompletion", deep))
        reply = await client.read()
        assert reply["error"]["code"] in (PARSE_ERROR, INVALID_PARAMS), reply
    client.send({"id": {}, "result": 1})  # a "response" with an unhashable id
    client.send({"id": 9999, "error": {"code": 1, "message": "x"}})  # to nothing we sent
    await alive(client)
    assert len(setup.hub.sessions) == 1


async def test_shutdown_answers_the_requests_in_flight_first(setup: HubOnSocket) -> None:
    client = await setup.client()
    uri = (setup.root / "a.py").as_uri()
    client.open(uri, "a = 1\n")
    await alive(client)
    in_flight = [client.request("textDocument/inlineCompletion", inline_params(uri)) for _ in "123"]
    await asyncio.sleep(0.2)
    shutdown = client.request("shutdown")
    late = client.request("workspace/executeCommand", {"command": "shadowtab.lock.status"})
    answered: list[dict[str, Any]] = []
    while len(answered) < 5:
        message = await client.read()
        if "method" not in message:
            answered.append(message)
    (refused,) = [m for m in answered if m["id"] == late]  # after shutdown: refused
    assert refused["error"]["code"] == INVALID_REQUEST, refused
    answered.remove(refused)
    assert [m["id"] for m in answered[-1:]] == [shutdown]
    assert answered[-1] == {"jsonrpc": "2.0", "id": shutdown, "result": None}
    for message in answered[:-1]:
        assert message["id"] in in_flight
        assert "result" in message or message["error"]["code"] == REQUEST_CANCELLED, message


async def test_per_message_logging_is_debug(
    setup: HubOnSocket, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    client = await setup.client()
    caplog.clear()
    for _ in range(20):
        await alive(client)
        reply = await client.call("textDocument/inlineCompletion", {"bad": 1})
        assert reply["error"]["code"] == INVALID_PARAMS
    assert [r.getMessage()[:80] for r in caplog.records] == []


async def test_a_stale_prediction_is_logged_at_debug_and_a_bug_of_ours_warns(
    setup: HubOnSocket, caplog: pytest.LogCaptureFixture
) -> None:
    """Every superseded keystroke's request ends ContentModified (PredictionCancelled):
    routine, not a warning (a 30-minute soak's log was mostly such lines); an error that
    is neither the client's nor routine is still a warning."""
    caplog.set_level(logging.INFO)
    client = await setup.client()
    await alive(client)
    (session,) = setup.hub.sessions
    caplog.clear()
    for error in (PredictionCancelled("a.py changed; prediction dropped"), PredictionExpired("")):
        session.server.report_server_error(error, JsonRpcInternalError)
    assert [r.getMessage()[:80] for r in caplog.records if r.levelno >= logging.INFO] == []
    session.server.report_server_error(RuntimeError("a bug"), JsonRpcInternalError)
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
