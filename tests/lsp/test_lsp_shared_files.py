"""Two editors with one file open (one shadow document): the echo of a keystroke
forwarded to the other editor changes nothing, and the other editor closing the file
or vanishing changes nothing either, so both leave the typist's ghost text in flight
alone; a real keystroke of the other editor still makes it stale. Found by
tests/torture/torture_clients.py and torture_soak.py: with files shared in pairs, every
echo cancelled the typist's own request (8,000 keystrokes showed no ghost text at all),
and so did every editor that opened the file and went away."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from hub_socket import HubClient, hub_on_socket
from shadowtab.inference.next_edit.predictor import FixedPredictor, PredictionRequest

CONTENT_MODIFIED = -32801
TEXT = "x = 1\n"


def change(line: int, character: int, text: str) -> dict[str, Any]:
    at = {"line": line, "character": character}
    return {"range": {"start": at, "end": at}, "text": text}


def did_change(client: HubClient, uri: str, version: int, content: dict[str, Any]) -> None:
    document = {"uri": uri, "version": version}
    client.notify("textDocument/didChange", {"textDocument": document, "contentChanges": [content]})


def ask_ghost_text(client: HubClient, uri: str, character: int, line: int = 0) -> int:
    position = {"line": line, "character": character}
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


@dataclass
class Recording(FixedPredictor):
    """A FixedPredictor that keeps the ghost text requests it was asked."""

    requests: list[PredictionRequest] = field(default_factory=list)

    def inline(self, request: PredictionRequest, cancel: Any = None) -> list[Any]:
        self.requests.append(request)
        return super().inline(request, cancel)


async def test_the_other_editors_typing_above_the_cursor_waits_in_the_typists_prompt() -> None:
    """The typist's requests hold the lines above its cursor as it first saw them (the
    other's keystroke there does not change its prompt's head, lsp/held_lines.py); its
    own edits there show at once; the text is the shadow's, the other's edit included."""
    text = "".join(f"x{i} = {i}\n" for i in range(40))
    predictor = Recording(inline_texts=["z"])
    async with hub_on_socket(predictor) as setup:
        (setup.root / "a.py").write_text(text)
        uri = (setup.root / "a.py").as_uri()
        typist, other = await setup.client(), await setup.client()
        for client in (typist, other):
            client.open(uri, text)
            await client.command("shadowtab.lock.status")  # the open is handled
        await typist.response(ask_ghost_text(typist, uri, 7, line=30))
        did_change(other, uri, 2, change(5, 6, "5"))  # x5 = 55, above the typist's cursor
        await echo_the_push(typist, uri, 2)
        await typist.response(ask_ghost_text(typist, uri, 7, line=30))
        did_change(typist, uri, 3, change(20, 7, "0"))  # x20 = 200, the typist's own
        await other.command("shadowtab.lock.status")
        await typist.response(ask_ghost_text(typist, uri, 7, line=30))
    first, after_other, after_own = predictor.requests
    assert first.held_above is not None and "x5 = 5\n" in first.held_above.lines
    assert "x5 = 55\n" in after_other.text  # the shadow holds the other's keystroke
    assert after_other.held_above == first.held_above  # the typist's prompt head does not
    assert after_own.held_above is not None and "x20 = 200\n" in after_own.held_above.lines
    assert "x5 = 5\n" in after_own.held_above.lines
