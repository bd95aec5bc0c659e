"""Diagnostics keep up with a document whose typing never pauses (several people in one
shared file): past LINT_MAX_LAG_S behind the text a lint runs without waiting for a
pause, and keystrokes let it finish. Before, each keystroke restarted the debounce and
stopped the lint of the older text: eight editors saw diagnostics lag up to 118 s."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from typing import Any

from hub_socket import HubClient, hub_on_socket
from shadowtab.lsp.diagnostics import LINT_MAX_LAG_S
from shadowtab.shadow_workspace import DEFAULT_LINTERS

SYNTAX_ONLY = {"python-syntax": DEFAULT_LINTERS["python-syntax"]}
PUBLISH = "textDocument/publishDiagnostics"
KEY_EVERY_S = 0.02  # faster than the hub's 50 ms lint debounce: typing never pauses
TYPING_S = 2 * LINT_MAX_LAG_S + 1.5  # room for the bound to hold twice


async def type_without_pause(client: HubClient, uri: str, stop: asyncio.Event) -> None:
    """A key every KEY_EVERY_S at the end of line 0 until `stop`."""
    version, column = 1, len("x = (")
    while not stop.is_set():
        version += 1
        at = {"line": 0, "character": column}
        change = {"range": {"start": at, "end": at}, "text": "1"}
        params = {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}
        client.notify("textDocument/didChange", params)
        column += 1
        await asyncio.sleep(KEY_EVERY_S)


async def publishes_while_typing(client: HubClient, uri: str) -> list[tuple[float, int]]:
    """(seconds since the first key, version) of each publishDiagnostics for `uri` that
    came while the keys went on."""
    stop = asyncio.Event()
    typing = asyncio.create_task(type_without_pause(client, uri, stop))
    started = time.monotonic()
    seen: list[tuple[float, int]] = []
    while (elapsed := time.monotonic() - started) < TYPING_S:
        with contextlib.suppress(TimeoutError):
            message: dict[str, Any] = await client.read(TYPING_S - elapsed)
            if message.get("method") == PUBLISH and message["params"]["uri"] == uri:
                seen.append((time.monotonic() - started, message["params"]["version"]))
    stop.set()
    await typing
    return seen


async def test_diagnostics_come_while_typing_never_pauses() -> None:
    async with hub_on_socket(linters=SYNTAX_ONLY) as setup:
        client = await setup.client()
        uri = (setup.root / "a.py").as_uri()
        client.open(uri, "x = (\n")
        while (await client.read())["method"] != PUBLISH:
            pass  # the first lint, of the opened text
        seen = await publishes_while_typing(client, uri)
        await client.close()
    times = [0.0] + [at for at, _ in seen] + [TYPING_S]
    longest = max(later - earlier for earlier, later in itertools.pairwise(times))
    # the lag's bound and a lint's time; before, a publish came only where the keys'
    # timing happened to leave a gap longer than the debounce
    assert longest < LINT_MAX_LAG_S + 1.5, seen
    assert all(version > 1 for _, version in seen)  # of texts typed meanwhile
