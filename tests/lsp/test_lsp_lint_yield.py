"""A lint waits for the prediction in flight (at most LINT_YIELD_MAX_S): on a machine of
a few cores the linter's processes and the model's threads slow each other, and the
user is waiting for the answer at the cursor, not for the squiggles."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from hub_socket import HubClient, hub_on_socket
from shadowtab.inference.next_edit.predictor import FixedPredictor
from shadowtab.lsp import diagnostics
from shadowtab.shadow_workspace import DEFAULT_LINTERS

SYNTAX_ONLY = {"python-syntax": DEFAULT_LINTERS["python-syntax"]}
BROKEN = "x = (\n"
PUBLISH = "textDocument/publishDiagnostics"


def ask_inline(client: HubClient, uri: str) -> int:
    params = {
        "textDocument": {"uri": uri},
        "position": {"line": 0, "character": 5},
        "context": {"triggerKind": 2},
    }
    return client.request("textDocument/inlineCompletion", params)


async def running(predictor: FixedPredictor) -> None:
    """Until the predictor's call has begun (the hub runs in this process)."""
    while "inline" not in predictor.calls:
        await asyncio.sleep(0.01)


async def published_for(
    client: HubClient, uri: str, replies: dict[int, Any], timeout: float = 10.0
) -> dict[str, Any]:
    """The first publishDiagnostics for `uri`; replies read meanwhile go to `replies`."""
    while True:
        for message in client.notifications:
            if message["method"] == PUBLISH and message["params"]["uri"] == uri:
                return message
        message = await client.read(timeout)
        if "method" not in message:
            replies[message["id"]] = message
        elif "id" in message:  # a request of the server's own
            client.send({"id": message["id"], "result": None})
        else:
            client.notifications.append(message)


async def reply(client: HubClient, msg_id: int, replies: dict[int, Any]) -> dict[str, Any]:
    return replies.pop(msg_id, None) or await client.response(msg_id)


async def lint_during_a_prediction(prediction_s: float) -> tuple[float, dict[str, Any]]:
    """Seconds from opening a broken file, while a `prediction_s` prediction of another
    file runs, to its diagnostics; and those diagnostics."""
    predictor = FixedPredictor(inline_texts=[" + 2"], delay_s=prediction_s)
    async with hub_on_socket(predictor, linters=SYNTAX_ONLY) as setup:
        client = await setup.client()
        replies: dict[int, Any] = {}
        typed, broken = (setup.root / "a.py").as_uri(), (setup.root / "b.py").as_uri()
        client.open(typed, "x = 1\n")
        await published_for(client, typed, replies)  # linted at once: nothing in flight
        asked = ask_inline(client, typed)
        await running(predictor)
        opened = time.monotonic()
        client.open(broken, BROKEN)  # its lint is due in 50 ms, during the prediction
        published = await published_for(client, broken, replies)
        waited = time.monotonic() - opened
        assert (await reply(client, asked, replies))["result"]
        await client.close()
        return waited, published


async def test_a_lint_waits_for_the_prediction_in_flight() -> None:
    waited, published = await lint_during_a_prediction(1.5)
    assert waited > 1.0  # after the 1.5 s prediction, not at 50 ms
    assert published["params"]["diagnostics"]  # then linted as usual


async def test_a_lint_waits_no_longer_than_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diagnostics, "LINT_YIELD_MAX_S", 0.3)
    waited, published = await lint_during_a_prediction(3.0)
    assert waited < 2.0  # before the 3 s prediction answers
    assert published["params"]["diagnostics"]
