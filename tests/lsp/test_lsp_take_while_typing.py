"""The user takes the lock (a commit: disk writes, in a thread) while an editor types:
the typing that arrives during the take is already in that editor's buffer, and the
editor must not get it pushed back (issue 44's soak saw a keystroke twice in a buffer)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from shadowtab.inference.next_edit.predictor import FixedPredictor
from shadowtab.shadow_workspace import TakeResult
from test_lsp_inprocess import SocketClient, connect, did_change, did_open, hub_serving

TAKE_S = 0.5  # the take holds the workspace this long: the keystroke arrives meanwhile


async def messages_for(client: SocketClient, seconds: float) -> list[dict[str, Any]]:
    """Every message the server sends in the next `seconds`."""
    found: list[dict[str, Any]] = []
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = await asyncio.wait_for(client.reader.readline(), left)
        except TimeoutError:
            break
        length = 0
        while line.strip():
            name, _, value = line.strip().partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
            line = await client.reader.readline()
        found.append(json.loads(await client.reader.readexactly(length)))
    return found


async def test_a_keystroke_during_a_commit_is_not_pushed_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with hub_serving(FixedPredictor()) as (hub, _, root, path):
        (root / "a.py").write_text("a = 1\n")
        uri = (root / "a.py").as_uri()
        client = await connect(path, root)
        client.send(did_open(uri, "a = 1\n"))
        status = {"command": "shadowtab.lock.status", "arguments": []}
        await client.call("workspace/executeCommand", status)  # the didOpen was handled
        workspace = hub.workspaces.for_uri(uri)
        take = workspace.take

        def slow_take(mode: str = "keep") -> TakeResult:
            with workspace.mutex:  # a commit's fsyncs, made long
                time.sleep(TAKE_S)
                return take(mode)

        monkeypatch.setattr(workspace, "take", slow_take)
        taking = asyncio.ensure_future(
            hub.control("lock.take", {"root": str(root), "mode": "commit"})
        )
        await asyncio.sleep(TAKE_S / 5)  # the take is in its thread, holding the workspace
        client.send(did_change(uri, 2, 0))  # the user types "x" at the line's start
        assert (await taking)["mode"] == "commit"
        received = await messages_for(client, 1.0)
        pushed = [m for m in received if m.get("method") == "workspace/applyEdit"]
        assert pushed == [], pushed
        document = workspace.document(uri)
        assert document is not None and document.text == "xa = 1\n"
        assert (root / "a.py").read_text() == "a = 1\n"  # typed after the commit: unsaved
