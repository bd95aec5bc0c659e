"""The product files a keystroke, an inline completion and a next edit run through: the
distinct source files of daemon/, lsp/, shadow_workspace/ and inference/ whose functions
are called, in any thread, from sending one message until the work it starts has
settled: its frame read off the socket, its handler, and for a keystroke the lint and
the warm after the typing pause. Prints one JSON line.

    python -m benchmarks.code_paths

The Hub runs in this process (engine off, no linters, a FixedPredictor answering both
kinds of request), one session over a socket pair with real LSP framing. Each message
is sent once untraced first, so lazy imports and first-time paths are not counted, then
once traced. Before and after each trace nothing may run for the settle time: no work
of a message spills out of its trace, and nothing runs by itself. The harness (this
folder) is outside the four packages, so it is not counted.

Against another commit's product code: link its four packages into a folder's
`shadowtab/` and put that folder first on PYTHONPATH (a namespace package found there
wins over the editable install), e.g. `PYTHONPATH=/tmp/old python -m
benchmarks.code_paths` with /tmp/old/shadowtab/lsp -> a worktree's lsp/, and so on.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
import tempfile
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import FrameType
from typing import Any

from benchmarks.common.eval_lsp import LspClient, connect, initialize_params

PACKAGES = ("daemon", "lsp", "shadow_workspace", "inference")
# Past the debounces (lint 150 ms, warm 100 ms) and the work they start.
SETTLE_S = 1.0
TEXT = "y = 2\nx = 1\n"  # typed at the end of line 1; the next edit rewrites line 0's 2
NEXT_EDIT = (4, 5, "20")  # offsets before the typing: the same in every round


class Recorder:
    """A profile function for every thread: installed before the Hub starts, because on
    Python 3.11 `threading.setprofile` reaches only threads started after it (the
    predictor's and the warm's executor threads start at their first use), and it
    records only while `on`."""

    def __init__(self) -> None:
        self.on = False
        self.files: set[str] = set()

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if self.on and event == "call":  # a Python function called or a coroutine resumed
            self.files.add(frame.f_code.co_filename)

    async def trace(self, action: Callable[[], Awaitable[None]]) -> list[str]:
        """The product files called while `action` runs and SETTLE_S after it."""
        self.files.clear()
        self.on = True
        try:
            await action()
            await asyncio.sleep(SETTLE_S)
        finally:
            self.on = False
        return product_files(self.files)

    async def quiet(self) -> None:
        """No product code runs for SETTLE_S with no message sent: nothing of the last
        message's work ran past its trace, and nothing runs by itself (a timer, a poll)
        that every path would count."""
        if busy := await self.trace(lambda: asyncio.sleep(0)):
            raise RuntimeError(f"product code ran with no message: {busy}")


def product_files(filenames: set[str]) -> list[str]:
    """`filenames` inside the four packages, as "lsp/hub.py" (links resolved: the
    packages may be links into another commit's worktree)."""
    roots = {}
    for name in PACKAGES:
        module = importlib.import_module(f"shadowtab.{name}")
        roots[name] = Path(str(module.__file__)).parent.resolve()
    found = set()
    for filename in filenames:
        path = Path(filename).resolve()
        for name, root in roots.items():
            if path.is_relative_to(root):
                found.add(f"{name}/{path.relative_to(root).as_posix()}")
    return sorted(found)


def next_edit_candidate() -> Any:
    """The FixedPredictor's next edit: a Candidate of one TextEdit. Before the candidate
    types were merged (6ca09af and older) it took an EditCandidate of its own offsets."""
    from shadowtab.inference.next_edit import predictor

    start, end, new_text = NEXT_EDIT
    older = getattr(predictor, "EditCandidate", None)
    if older is not None:
        return older(start, end, new_text)
    from shadowtab.inference.next_edit.candidates import Candidate
    from shadowtab.inference.next_edit.edits import TextEdit

    return Candidate((TextEdit(start, end, new_text),), 1.0, "fixed")


def build_hub(state: Path) -> Any:
    from shadowtab.inference import EngineOptions
    from shadowtab.inference.next_edit.predictor import FixedPredictor
    from shadowtab.lsp.hub import Hub, HubOptions

    predictor = FixedPredictor(inline_texts=["0"], edits=[next_edit_candidate()])
    options = HubOptions(
        state_dir=state, engine=EngineOptions(kind="off"), linters={}, predictor=predictor
    )
    return Hub(options)


class Editor:
    """One open document; each method sends one message (a request: checks that it was
    answered with something, so the path measured is the one that delivers)."""

    def __init__(self, client: LspClient, uri: str) -> None:
        self.client, self.uri = client, uri
        self.version, self.line = 1, TEXT.splitlines()[1]

    def cursor(self) -> dict[str, int]:
        return {"line": 1, "character": len(self.line)}

    async def keystroke(self) -> None:
        self.version += 1
        at = self.cursor()
        change = {"range": {"start": at, "end": at}, "text": "0"}
        document = {"uri": self.uri, "version": self.version}
        self.client.notify(
            "textDocument/didChange", {"textDocument": document, "contentChanges": [change]}
        )
        self.line += "0"

    async def inline_completion(self) -> None:
        params = {
            "textDocument": {"uri": self.uri},
            "position": self.cursor(),
            "context": {"triggerKind": 2},  # Automatic: while typing
        }
        reply = await self.client.call("textDocument/inlineCompletion", params)
        result = reply.get("result")
        if not (result.get("items") if isinstance(result, dict) else result):
            raise RuntimeError(f"no inline completion: {reply}")

    async def next_edit(self) -> None:
        document = {"uri": self.uri, "version": self.version}
        params = {"textDocument": document, "position": self.cursor()}
        reply = await self.client.call("shadowtab/nextEdit", params)
        if not (reply.get("result") or {}).get("edits"):
            raise RuntimeError(f"no next edit: {reply}")


async def measure(recorder: Recorder, scratch: Path) -> dict[str, Any]:
    hub = build_hub(scratch / "state")
    await hub.start()
    try:
        client, _ = await connect(hub)
        root = scratch / "root"
        (root / ".git").mkdir(parents=True)
        await client.call("initialize", initialize_params(root.as_uri()))
        client.notify("initialized", {})
        source = root / "code.py"
        source.write_text(TEXT)
        item = {"uri": source.as_uri(), "languageId": "python", "version": 1, "text": TEXT}
        client.notify("textDocument/didOpen", {"textDocument": item})
        editor = Editor(client, source.as_uri())
        paths = {
            "keystroke": editor.keystroke,
            "inline_completion": editor.inline_completion,
            "next_edit": editor.next_edit,
        }
        for action in paths.values():  # untraced: lazy imports, first-time paths
            await action()
            await asyncio.sleep(SETTLE_S)
        await recorder.quiet()
        figures = {}
        for name, action in paths.items():
            files = await recorder.trace(action)
            await recorder.quiet()
            figures[name] = {"count": len(files), "files": files}
        client.writer.close()
        return figures
    finally:
        await hub.close()


def main() -> None:
    recorder = Recorder()
    sys.setprofile(recorder)
    threading.setprofile(recorder)
    try:
        with tempfile.TemporaryDirectory(prefix="code-paths-") as scratch:
            figures = asyncio.run(measure(recorder, Path(scratch)))
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    print(json.dumps({"benchmark": "code_paths", **figures}))


if __name__ == "__main__":
    main()
