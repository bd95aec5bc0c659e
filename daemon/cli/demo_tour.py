"""The steps of `shadowtab demo`: an LSP client session on a sample file, printed."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from lsprotocol import types

SAMPLE = """import os
import sys


def greet(name):
    print("Hello, " + name)


def farewell(name):
    print("Goodbye, " + nme)


def main(argv):
    for name in argv:
        greet(name)
"""
TYPED = "        farewell("
TYPO, FIX = "nme", "name"
FIXED_LINE = '    print("Goodbye, " + name)'
DIAGNOSTICS_TIMEOUT_S = 20.0
CLOSE_TIMEOUT_S = 5.0  # for the LSP shim to end after shutdown, before it is killed


async def tour(project: Path) -> None:
    from pygls.lsp.client import LanguageClient

    sample = project / "sample.py"
    sample.write_text(SAMPLE)
    uri = sample.as_uri()
    client = LanguageClient("shadowtab-demo", "1")
    diagnostics: asyncio.Queue[types.PublishDiagnosticsParams] = asyncio.Queue()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        diagnostics.put_nowait(params)

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        # The demo shows no buffer; an editor would apply the edit to its buffer here.
        return types.ApplyWorkspaceEditResult(applied=True)

    @client.feature("shadowtab/lockChanged")
    def on_lock_changed(params: Any) -> None:
        print(f"  <- shadowtab/lockChanged: holder {field(params, 'holder')}")

    await client.start_io(sys.executable, "-m", "shadowtab.daemon.cli", "lsp")
    try:
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(
                    workspace=types.WorkspaceClientCapabilities(apply_edit=True)
                ),
                root_uri=project.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=project.as_uri(), name="demo")],
            )
        )
        client.initialized(types.InitializedParams())
        await show_diagnostics(client, uri, diagnostics)
        suggestions = await show_predictions(client, uri)
        await show_save_lock(client, project, sample, suggestions)
    finally:
        await close(client)


async def close(client: Any) -> None:
    """Shutdown and exit, bounded: on any path (an error mid-tour included) the shim
    ends within seconds; pygls' stop() alone waits for the process forever."""
    try:
        await asyncio.wait_for(client.shutdown_async(None), CLOSE_TIMEOUT_S)
        client.exit(None)
    except Exception:  # the shim or the daemon is gone or stuck: it is killed below
        pass
    process = getattr(client, "_server", None)
    try:
        await asyncio.wait_for(client.stop(), CLOSE_TIMEOUT_S)
    except TimeoutError:
        if process is not None and process.returncode is None:
            process.kill()
        await asyncio.wait_for(client.stop(), CLOSE_TIMEOUT_S)


async def show_diagnostics(
    client: Any, uri: str, queue: asyncio.Queue[types.PublishDiagnosticsParams]
) -> None:
    print(f"\n1. open {uri} (unsaved text is linted in the shadow workspace)")
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=SAMPLE
            )
        )
    )
    published = await asyncio.wait_for(queue.get(), DIAGNOSTICS_TIMEOUT_S)
    for item in published.diagnostics:
        line = item.range.start.line + 1
        print(f"  line {line}: {item.source} {item.code}: {item.message}")


async def show_predictions(client: Any, uri: str) -> list[Any]:
    """Step 2: ghost text and next edits, printed; the next edits returned."""
    lines = SAMPLE.splitlines()
    end = types.Position(line=len(lines), character=0)
    print(f"\n2. type {TYPED!r} at the end of main(); ask for ghost text and the next edit")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(start=end, end=end), text=TYPED
                )
            ],
        )
    )
    cursor = types.Position(line=len(lines), character=len(TYPED))
    started = time.perf_counter()
    items = await client.text_document_inline_completion_async(
        types.InlineCompletionParams(
            context=types.InlineCompletionContext(
                trigger_kind=types.InlineCompletionTriggerKind.Invoked
            ),
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=cursor,
        )
    )
    elapsed = time.perf_counter() - started
    shown = [item.insert_text for item in (items.items if hasattr(items, "items") else items or [])]
    print(f"  ghost text ({elapsed * 1000:.0f} ms): {shown}")
    started = time.perf_counter()
    result = await client.protocol.send_request_async(
        "shadowtab/nextEdit",
        {"textDocument": {"uri": uri, "version": 2}, "position": {"line": 9, "character": 24}},
    )
    elapsed = time.perf_counter() - started
    edits = field(result, "edits") or []
    print(f"  next edit ({elapsed * 1000:.0f} ms): {len(edits)} suggestion(s)")
    for edit in edits:
        start, end = field(field(edit, "range"), "start"), field(field(edit, "range"), "end")
        print(f"    replace lines {field(start, 'line') + 1}-{field(end, 'line') + 1} with:")
        print("      " + str(field(edit, "text")).replace("\n", "\n      "))
    return list(edits)


def field(value: Any, name: str) -> Any:
    """A member of a JSON result, which pygls gives as a dict or as an object."""
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None)


async def execute(client: Any, name: str, *arguments: Any) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=name, arguments=list(arguments))
    )


def typed_text() -> str:
    """The sample's text after step 2 typed TYPED on a new last line."""
    return SAMPLE + TYPED


def apply_to(text: str, edit: Any) -> str:
    """`text` with one next edit ({range, text}, LSP positions) applied. The sample is
    ASCII, so LSP's UTF-16 columns are character offsets."""
    lines = text.split("\n")

    def offset(position: Any) -> int:
        line, character = field(position, "line"), field(position, "character")
        return sum(len(lines[i]) + 1 for i in range(line)) + character

    rng = field(edit, "range")
    start, end = offset(field(rng, "start")), offset(field(rng, "end"))
    return text[:start] + str(field(edit, "text")) + text[end:]


def model_fix(suggestions: list[Any]) -> Any | None:
    """The first of the model's next edits that fixes the typo, if any did."""
    for edit in suggestions:
        fixed = apply_to(typed_text(), edit)
        if TYPO not in fixed and FIXED_LINE in fixed.split("\n"):
            return edit
    return None


def scripted_fix() -> dict[str, Any]:
    """The fix of the typo as a next edit would say it ({range, text})."""
    start = SAMPLE.index(TYPO)
    line = SAMPLE.count("\n", 0, start)
    character = start - SAMPLE.rfind("\n", 0, start) - 1
    return {
        "range": {
            "start": {"line": line, "character": character},
            "end": {"line": line, "character": character + len(TYPO)},
        },
        "text": FIX,
    }


async def show_save_lock(client: Any, project: Path, sample: Path, suggestions: list[Any]) -> None:
    root = {"root": str(project)}
    edit = model_fix(suggestions)
    if edit is not None:
        print(
            "\n3. the model takes the save lock; its next edit from step 2, which fixes the "
            "typo,\n   goes into the shadow (not to disk)"
        )
    else:
        # The small default model does not always suggest this fix; the tour still shows
        # the lock at work, and says whose edit it is.
        edit = scripted_fix()
        print(
            "\n3. the model takes the save lock; its suggestions did not fix the typo, so\n"
            f"   the tour makes the edit on the model's behalf ({TYPO!r} -> {FIX!r}); it goes "
            "into the shadow (not to disk)"
        )
    await execute(client, "shadowtab.lock.release", root)
    rng = field(edit, "range")
    workspace_edit = {
        "changes": {
            sample.as_uri(): [
                {
                    "range": {
                        "start": {
                            "line": field(field(rng, "start"), "line"),
                            "character": field(field(rng, "start"), "character"),
                        },
                        "end": {
                            "line": field(field(rng, "end"), "line"),
                            "character": field(field(rng, "end"), "character"),
                        },
                    },
                    "newText": str(field(edit, "text")),
                }
            ]
        }
    }
    await execute(client, "shadowtab.shadow.applyEdit", workspace_edit)
    diff = await execute(client, "shadowtab.shadow.diff", root)
    print("  shadow diff:\n    " + str(field(diff, "diff") or "").rstrip().replace("\n", "\n    "))
    print(f"  on disk still: {TYPO in sample.read_text()!s:>5} ({TYPO!r} is there)")
    print("\n4. the user takes the lock back and commits: one atomic write")
    await execute(client, "shadowtab.lock.take", {**root, "mode": "commit"})
    print(f"  on disk now fixed: {TYPO not in sample.read_text()}")
