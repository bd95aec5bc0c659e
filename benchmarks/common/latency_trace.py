"""A user typing into the real server, timed: open a file, read, put the cursor where the
edit goes (the editor says so: shadowtab/cursorMoved), type the first words of an edit
with human keystroke gaps, and at the last keystroke ask for ghost text and a
next edit at once, as an editor does; both answers are timed from that keystroke. Or
(`ask="ghost"`) pause, then ask for ghost text alone, as VS Code asks while one types.

The client multiplexes: requests in flight at the same time, each answered by id."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from typing import Any

from benchmarks.common.eval_lsp import (
    CURSOR_MOVED,
    LspClient,
    change_params,
    cursor_moved_params,
    position,
)
from training.edit_scoring import apply_edit
from training.eval_cases import Case


@dataclass(frozen=True)
class Trace:
    after_open_s: float  # reading the file before typing
    gap_ms: tuple[float, float]  # keystroke gaps, uniform in this range
    answer_timeout_s: float = 600.0
    ask: str = "both"  # "both": ghost text and next edit at the last keystroke; "ghost"
    pause_s: float = 0.0  # before asking (ghost text alone: VS Code's debounce)
    # The editor tells the server where the cursor came to rest (shadowtab/cursorMoved,
    # after its own debounce) this long before the first keystroke; 0: it does not.
    cursor_lead_s: float = 0.0


@dataclass(frozen=True)
class Timed:
    seconds: float  # from the last keystroke to the answer
    shown: int  # items (ghost text) or edits (next edit) in the answer
    error: str | None


NOT_ASKED = Timed(0.0, 0, None)


class MultiplexClient(LspClient):
    """The evaluation's client with several requests in flight, each answered by id; the
    server's own requests are answered null."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        super().__init__(reader, writer)
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.task = asyncio.ensure_future(self._read_loop())

    def request(self, method: str, params: Any) -> asyncio.Future[dict[str, Any]]:
        self.next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return future

    async def call(self, method: str, params: Any) -> dict[str, Any]:
        return await self.request(method, params)

    async def _read_loop(self) -> None:
        try:
            while True:
                message = await self._read()
                if "method" in message and "id" in message:
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                elif "method" not in message and message.get("id") in self.pending:
                    self.pending.pop(message["id"]).set_result(message)
        except Exception as exc:  # every waiter hears of it: none may hang
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(ConnectionError(f"the client stopped reading: {exc}"))


async def type_and_ask(
    client: MultiplexClient, uri: str, case: Case, trace: Trace, rng: random.Random
) -> tuple[Timed, Timed, float]:
    """The case's trace; (ghost text, next edit) timed from when they were asked (the
    last keystroke, or the pause after it), and that keystroke's time.perf_counter()."""
    document = {"uri": uri, "languageId": "python", "version": 1, "text": case.opened}
    client.notify("textDocument/didOpen", {"textDocument": document})
    lead = min(trace.cursor_lead_s, trace.after_open_s)
    await asyncio.sleep(trace.after_open_s - lead)
    if lead > 0 and case.steps:
        start = case.steps[0].start  # where the user will type
        client.notify(CURSOR_MOVED, cursor_moved_params(uri, case.opened, start))
        await asyncio.sleep(lead)
    text, version = case.opened, 1
    for index, step in enumerate(case.steps):
        if index:
            await asyncio.sleep(rng.uniform(*trace.gap_ms) / 1000)
        version += 1
        client.notify("textDocument/didChange", change_params(uri, version, text, step))
        text = apply_edit(text, step.start, step.end, step.new_text)
    last_key = time.perf_counter()
    where = position(case.current, case.cursor)
    await asyncio.sleep(trace.pause_s)
    asked = time.perf_counter()
    ghost = client.request(
        "textDocument/inlineCompletion",
        {"context": {"triggerKind": 2}, "textDocument": {"uri": uri}, "position": where},
    )
    timed_ghost = _timed(ghost, asked, "items", trace.answer_timeout_s)
    if trace.ask == "ghost":
        ghost_answer, edit_answer = await timed_ghost, NOT_ASKED
    else:
        edit = client.request(
            "shadowtab/nextEdit",
            {"textDocument": {"uri": uri, "version": version}, "position": where},
        )
        ghost_answer, edit_answer = await asyncio.gather(
            timed_ghost, _timed(edit, last_key, "edits", trace.answer_timeout_s)
        )
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    return ghost_answer, edit_answer, last_key


async def _timed(
    future: asyncio.Future[dict[str, Any]], since: float, key: str, timeout_s: float
) -> Timed:
    try:
        reply = await asyncio.wait_for(future, timeout_s)
    except TimeoutError:
        return Timed(time.perf_counter() - since, 0, f"no answer within {timeout_s} s")
    seconds = time.perf_counter() - since
    result = reply.get("result")
    items = result.get(key) if isinstance(result, dict) else result
    shown = len(items or [])
    error = reply.get("error")
    message = str(error.get("message", error)) if isinstance(error, dict) else None
    return Timed(seconds, shown, message)
