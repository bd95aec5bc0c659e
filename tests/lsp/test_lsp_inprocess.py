"""The Hub in this process, sessions over a real unix socket (the daemon's LSP path):
checks that need the hub's insides: KV-cache warming after keystrokes, documents closed
when a connection dies, the session count."""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from lsp_helpers import eventually, initialize_params
from pygls.protocol import default_converter
from shadowtab.inference import EngineOptions
from shadowtab.inference.next_edit.predictor import FixedPredictor
from shadowtab.lsp.hub import Hub, HubOptions
from shadowtab.lsp.settings import DebounceOptions


class SocketClient:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer, self.next_id = reader, writer, 0

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def call(self, method: str, params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            length = 0
            while line := (await asyncio.wait_for(self.reader.readline(), 10)).strip():
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            message: dict[str, Any] = json.loads(await self.reader.readexactly(length))
            if message.get("id") == self.next_id and "method" not in message:
                return message


@asynccontextmanager
async def hub_serving(
    predictor: FixedPredictor, warm_debounce_ms: int = 200
) -> AsyncIterator[tuple[Hub, FixedPredictor, Path, str]]:
    base = Path(tempfile.mkdtemp(prefix="stinp-", dir="/tmp"))
    root = base / "proj"
    (root / ".git").mkdir(parents=True)
    options = HubOptions(
        state_dir=base / "state",
        engine=EngineOptions(kind="off"),
        debounce=DebounceOptions(warm_ms=warm_debounce_ms),
        predictor=predictor,
    )
    hub = Hub(options)
    await hub.start()
    path = str(base / "lsp.sock")
    server = await asyncio.start_unix_server(hub.serve_connection, path)
    try:
        yield hub, predictor, root, path
    finally:
        server.close()
        await hub.close()
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
async def setup() -> AsyncIterator[tuple[Hub, FixedPredictor, Path, str]]:
    async with hub_serving(FixedPredictor(inline_texts=["z"])) as serving:
        yield serving


async def connect(path: str, root: Path) -> SocketClient:
    client = SocketClient(*await asyncio.open_unix_connection(path))
    params = default_converter().unstructure(initialize_params(root))
    assert "result" in await client.call("initialize", params)
    client.send({"method": "initialized", "params": {}})
    return client


def did_open(uri: str, text: str) -> dict[str, Any]:
    item = {"uri": uri, "languageId": "python", "version": 1, "text": text}
    return {"method": "textDocument/didOpen", "params": {"textDocument": item}}


def did_change(uri: str, version: int, character: int) -> dict[str, Any]:
    position = {"line": 0, "character": character}
    change = {"range": {"start": position, "end": position}, "text": "x"}
    params = {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}
    return {"method": "textDocument/didChange", "params": params}


async def open_file(path: str, root: Path, name: str) -> tuple[SocketClient, str]:
    """A new editor with `name` ("a = 1") open: the client and the file's uri."""
    client = await connect(path, root)
    uri = (root / name).as_uri()
    (root / name).write_text("a = 1\n")
    client.send(did_open(uri, "a = 1\n"))
    return client, uri


def next_edit(uri: str, line: int, character: int) -> dict[str, Any]:
    position = {"line": line, "character": character}
    return {"textDocument": {"uri": uri}, "position": position}


async def test_typing_warms_the_predictor_once_it_pauses(
    setup: tuple[Hub, FixedPredictor, Path, str],
) -> None:
    _, predictor, root, path = setup
    client, uri = await open_file(path, root, "w.py")
    assert "result" in await client.call("shadowtab/nextEdit", next_edit(uri, 0, 5))
    for version in range(2, 12):  # a burst of keystrokes: one warm after it, not ten
        client.send(did_change(uri, version, 5))
    await eventually(lambda: "warm" in predictor.calls)
    await asyncio.sleep(0.5)
    assert predictor.calls.count("warm") == 1
    assert 1 <= predictor.calls.count("follow") <= 10  # the cursor's prompt, kept warm


async def test_an_editor_that_asks_only_ghost_text_is_not_warmed_for_next_edits(
    setup: tuple[Hub, FixedPredictor, Path, str],
) -> None:
    _, predictor, root, path = setup
    client, uri = await open_file(path, root, "g.py")
    for version in range(2, 6):
        client.send(did_change(uri, version, 5))
    await eventually(lambda: "follow" in predictor.calls or None)
    await asyncio.sleep(0.6)  # three debounces: the pause's warm is ghost text's prompt
    assert "warm" not in predictor.calls
    assert 2 <= predictor.calls.count("follow") <= 5
    # once it asks a next edit, the next pause warms the next-edit prompt too
    assert "result" in await client.call("shadowtab/nextEdit", next_edit(uri, 0, 9))
    client.send(did_change(uri, 6, 9))
    await eventually(lambda: "warm" in predictor.calls)


class HoldingWarmPredictor(FixedPredictor):
    """Its warm runs until its cancel event is set (a long prefill) and records it."""

    def __init__(self) -> None:
        super().__init__(inline_texts=["z"])
        self.warm_cancels: list[threading.Event] = []

    def warm(self, request: Any, cancel: threading.Event | None = None) -> None:
        assert cancel is not None
        self.warm_cancels.append(cancel)
        cancel.wait(30)


async def test_a_keystroke_warms_the_cursor_at_once_and_the_rest_after_the_pause() -> None:
    predictor = HoldingWarmPredictor()
    async with hub_serving(predictor, warm_debounce_ms=1000) as (_, _, root, path):
        await keystrokes_behind_a_full_warm(predictor, root, path)


async def keystrokes_behind_a_full_warm(
    predictor: HoldingWarmPredictor, root: Path, path: str
) -> None:
    client, uri = await open_file(path, root, "k.py")
    assert "result" in await client.call("shadowtab/nextEdit", next_edit(uri, 0, 5))
    client.send(did_change(uri, 2, 5))
    await eventually(lambda: "follow" in predictor.calls or None)  # not waiting for a pause
    first = (await eventually(lambda: predictor.warm_cancels))[0]  # after the debounce
    client.send(did_change(uri, 3, 6))
    # the keystroke's follow waits behind the full warm (the prompt's stable part, which
    # the next request needs too) instead of stopping it
    await asyncio.sleep(0.3)
    assert not first.is_set()
    assert predictor.calls.count("follow") == 1
    # the next pause's full warm takes over: the held one stops after its batch (what it
    # prefilled stays cached), and the follow queued behind it is dropped
    await eventually(lambda: first.is_set() or None)
    await eventually(lambda: len(predictor.warm_cancels) > 1 or None)
    assert not predictor.warm_cancels[1].is_set()
    assert predictor.calls.count("follow") == 1


async def test_a_dead_connection_closes_its_documents(
    setup: tuple[Hub, FixedPredictor, Path, str],
) -> None:
    hub, _, root, path = setup
    first = await connect(path, root)
    second = await connect(path, root)
    assert hub.status()["sessions"] == 2
    uri = (root / "d.py").as_uri()
    (root / "d.py").write_text("a = 1\n")
    first.send(did_open(uri, "a = 1\n"))
    second.send(did_open(uri, "a = 1\n"))
    status = {"command": "shadowtab.lock.status", "arguments": []}
    await first.call("workspace/executeCommand", status)
    await second.call("workspace/executeCommand", status)
    workspace = hub.workspaces.for_uri(uri)
    assert workspace.document(uri) is not None
    first.writer.close()  # the editor died
    await eventually(lambda: hub.status()["sessions"] == 1)
    assert workspace.document(uri) is not None  # the second editor still shows it
    second.writer.close()
    await eventually(lambda: hub.status()["sessions"] == 0)
    assert workspace.document(uri) is None


class CursorRecordingPredictor(FixedPredictor):
    """Records the cursor of every full warm."""

    def __init__(self) -> None:
        super().__init__(inline_texts=["z"])
        self.warmed_at: list[int] = []

    def warm(self, request: Any, cancel: threading.Event | None = None) -> None:
        self.warmed_at.append(request.cursor)


def cursor_moved(uri: str, line: Any, character: Any) -> dict[str, Any]:
    position = {"line": line, "character": character}
    return {
        "method": "shadowtab/cursorMoved",
        "params": {"textDocument": {"uri": uri}, "position": position},
    }


async def test_a_cursor_that_rests_somewhere_new_warms_the_prompt_there() -> None:
    predictor = CursorRecordingPredictor()
    text = "a = 1\nb = 2\nc = 3\ndef f():\n    return a\n"
    async with hub_serving(predictor, warm_debounce_ms=100) as (_, _, root, path):
        client = await connect(path, root)
        uri = (root / "c.py").as_uri()
        (root / "c.py").write_text(text)
        client.send(cursor_moved((root / "other.py").as_uri(), 1, 0))  # not open: ignored
        client.send(did_open(uri, text))
        client.send(did_change(uri, 2, 5))  # a keystroke at line 0: "a = 1x"
        await eventually(lambda: predictor.warmed_at or None)
        assert predictor.warmed_at == [6]  # after the keystroke
        client.send(cursor_moved(uri, "three", 0))  # malformed: logged, dropped
        client.send(cursor_moved(uri, 4, 4))  # the user clicks into f's body
        await eventually(lambda: len(predictor.warmed_at) == 2 or None)
        assert predictor.warmed_at[1] == len("a = 1x\nb = 2\nc = 3\ndef f():\n    ")
        client.send(did_change(uri, 3, 6))  # typing again at line 0: the edit is newer
        await eventually(lambda: len(predictor.warmed_at) == 3 or None)
        assert predictor.warmed_at[2] == 7
        status = {"command": "shadowtab.lock.status", "arguments": []}
        assert "result" in await client.call("workspace/executeCommand", status)
