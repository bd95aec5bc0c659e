"""Two editors with one file open (one shadow document): the echo of a keystroke
forwarded to the other editor changes nothing, and the other editor closing the file
or vanishing changes nothing either, so both leave the typist's ghost text in flight
alone; a real keystroke of the other editor still makes it stale. Found by
tests/torture/torture_clients.py and torture_soak.py: with files shared in pairs, every
echo cancelled the typist's own request (8,000 keystrokes showed no ghost text at all),
and so did every editor that opened the file and went away."""

from __future__ import annotations

import asyncio
from typing import Any

from hub_socket import HubClient, hub_on_socket
from shadowtab.inference.next_edit.predictor import FixedPredictor

CONTENT_MODIFIED = -32801
TEXT = "x = 1\n"


def change(line: int, character: int, text: str) -> dict[str, Any]:
    at = {"line": line, "character": character}
    return {"range": {"start": at, "end": at}, "text": text}


def did_change(client: HubClient, uri: str, version: int, content: dict[str, Any]) -> None:
    document = {"uri": uri, "version": version}
    client.notify("textDocument/didChange", {"textDocument": document, "contentChanges": [content]})


def ask_ghost_text(client: HubClient, uri: str, character: int) -> int:
    position = {"line": 0, "character": character}
    params = {"textDocument": {"uri": uri}, "position": position, "context": {"triggerKind": 2}}
    return client.request("textDocument/inlineCompletion", params)


async def echo_the_push(other: HubClient, uri: str, version: int) -> None:
    """What an editor does with a forwarded keystroke: apply it, report it back as its
    own didChange, answer applied."""
    while "method" not in (message := await other.read()) or "id" not in message:
        pass
    assert message["method"] == "workspace/applyEdit", message
    (edit,) = message["params"]["edit"]["documentChanges"][0]["edits"]
    did_change(other, uri, version, {"range": edit["range"], "text": edit["newText"]})
    other.send({"id": message["id"], "result": {"applied": True}})


async def test_the_echo_of_a_forwarded_keystroke_keeps_the_typists_ghost_text() -> None:
    async with hub_on_socket(FixedPredictor(inline_texts=["z"], delay_s=1.5)) as setup:
        (setup.root / "a.py").write_text(TEXT)
        uri = (setup.root / "a.py").as_uri()
        typist, other = await setup.client(), await setup.client()
        for client in (typist, other):
            client.open(uri, TEXT)
            await client.command("shadowtab.lock.status")  # the open is handled

        did_change(typist, uri, 2, change(0, 5, "2"))
        pending = ask_ghost_text(typist, uri, 6)
        await asyncio.sleep(0.3)  # the prediction is in flight
        await echo_the_push(other, uri, 2)
        reply = await typist.response(pending)
        assert [item["insertText"] for item in reply.get("result", [])] == ["z"], reply
        diff = (await typist.command("shadowtab.shadow.diff"))["result"]["diff"]
        assert "+x = 12\n" in diff  # the echo was not applied a second time

        pending = ask_ghost_text(typist, uri, 6)
        await asyncio.sleep(0.3)
        did_change(other, uri, 3, change(0, 0, "# "))  # a real keystroke of the other
        reply = await typist.response(pending)
        assert reply.get("error", {}).get("code") == CONTENT_MODIFIED, reply


async def test_another_editor_closing_the_file_keeps_the_typists_ghost_text() -> None:
    async with hub_on_socket(FixedPredictor(inline_texts=["z"], delay_s=1.5)) as setup:
        (setup.root / "a.py").write_text(TEXT)
        uri = (setup.root / "a.py").as_uri()
        typist = await setup.client()
        typist.open(uri, TEXT)
        for leaves in ("didClose", "vanishes"):
            other = await setup.client()
            other.open(uri, TEXT)
            await other.command("shadowtab.lock.status")  # the open is handled
            pending = ask_ghost_text(typist, uri, 5)
            await asyncio.sleep(0.3)  # the prediction is in flight
            if leaves == "didClose":
                other.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
                await other.command("shadowtab.lock.status")  # the close is handled
            await other.close()  # gone without shutdown, as a killed editor
            reply = await typist.response(pending)
            assert [item["insertText"] for item in reply.get("result", [])] == ["z"], leaves
