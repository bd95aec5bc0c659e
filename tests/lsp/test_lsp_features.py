"""End-to-end tests of the server's features over stdio (pytest-lsp client, the real Hub,
sessions, shadow workspace and linters; a FixedPredictor stands in for the model)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsp_helpers import (
    FIXED_SERVER,
    EditorBuffers,
    LspEnv,
    change_doc,
    eventually,
    execute,
    inline,
    open_doc,
    request,
    text_edit,
)
from lsprotocol import types
from pygls.exceptions import JsonRpcException


async def test_capabilities_advertise_features_and_utf16(lsp_env: LspEnv) -> None:
    await lsp_env.client([*FIXED_SERVER, "--no-lint"])
    caps = lsp_env.init_results[0].capabilities
    assert caps.position_encoding == types.PositionEncodingKind.Utf16  # client preferred utf-8
    assert caps.inline_completion_provider is not None
    sync = caps.text_document_sync
    assert isinstance(sync, types.TextDocumentSyncOptions)
    assert sync.change == types.TextDocumentSyncKind.Incremental
    assert sync.open_close and sync.save
    assert caps.execute_command_provider is not None
    commands = set(caps.execute_command_provider.commands)
    assert {
        "shadowtab.lock.status",
        "shadowtab.lock.take",
        "shadowtab.lock.release",
        "shadowtab.lock.toggle",
        "shadowtab.shadow.applyEdit",
        "shadowtab.shadow.diff",
    } <= commands


async def test_incremental_sync_counts_utf16(lsp_env: LspEnv) -> None:
    client = await lsp_env.client([*FIXED_SERVER, "--no-lint"])
    _, uri = lsp_env.file("emoji.py", "s = '😀x'\n")
    open_doc(client, uri, "s = '😀x'\n")
    # '😀' is two UTF-16 units: character 7 is just before 'x'
    change_doc(client, uri, 2, "y", (0, 7), (0, 8))
    diff = await execute(client, "shadowtab.shadow.diff")
    assert "+s = '😀y'" in diff["diff"]
    assert "-s = '😀x'" in diff["diff"]


async def test_diagnostics_follow_the_unsaved_text(lsp_env: LspEnv) -> None:
    client = await lsp_env.client(FIXED_SERVER)
    _, uri = lsp_env.file("bad.py", "x = (\n")
    open_doc(client, uri, "x = (\n")
    errors = await eventually(lambda: client.diagnostics.get(uri))
    assert any(d.severity == types.DiagnosticSeverity.Error for d in errors)
    change_doc(client, uri, 2, "1)", (0, 5))
    await eventually(lambda: len(client.diagnostics[uri]) == 0)


async def test_inline_completion_gives_several_items_at_the_cursor(lsp_env: LspEnv) -> None:
    client = await lsp_env.client([*FIXED_SERVER, "--inline", "one", "--inline", "two"])
    _, uri = lsp_env.file("a.py", "name = 'x'\nvalue = \n")
    open_doc(client, uri, "name = 'x'\nvalue = \n")
    items = await inline(client, uri, 1, 8)
    assert isinstance(items, list)
    assert [i.insert_text for i in items] == ["one", "two"]
    position = types.Position(line=1, character=8)
    assert all(i.range == types.Range(start=position, end=position) for i in items)


async def test_inline_candidates_that_add_errors_are_dropped(lsp_env: LspEnv) -> None:
    client = await lsp_env.client([*FIXED_SERVER, "--inline", "(", "--inline", " + 1"])
    _, uri = lsp_env.file("a.py", "x = 1\n")
    open_doc(client, uri, "x = 1\n")
    items = await inline(client, uri, 0, 5)
    assert [i.insert_text for i in items] == [" + 1"]


async def test_next_edit_has_copilot_shape_under_both_names(lsp_env: LspEnv) -> None:
    text = "def f(a):\n    return a\n"
    # offsets 14..22 = "return a" on line 1; the candidate rewrites it
    edit = "14:22:return a * 2"
    client = await lsp_env.client([*FIXED_SERVER, "--edit", edit])
    _, uri = lsp_env.file("f.py", text)
    open_doc(client, uri, text, version=3)
    params = {"textDocument": {"uri": uri, "version": 3}, "position": {"line": 1, "character": 4}}
    for method in ("shadowtab/nextEdit", "textDocument/copilotInlineEdit"):
        result = await request(client, method, params)
        edits = result.edits
        assert len(edits) == 1
        assert edits[0].text == "return a * 2"
        assert edits[0].range.start.line == 1 and edits[0].range.start.character == 4
        assert edits[0].range.end.line == 1 and edits[0].range.end.character == 12
        assert edits[0].textDocument.uri == uri and edits[0].textDocument.version == 3
        assert edits[0].command.command == "shadowtab.nextEdit.accepted"
        assert edits[0].kind == "edit" and edits[0].confidence == 1.0  # shadowtab's extras


async def test_next_edit_candidates_that_add_errors_are_dropped(lsp_env: LspEnv) -> None:
    text = "def f(a):\n    return a\n"
    client = await lsp_env.client([*FIXED_SERVER, "--edit", "14:22:return (a"])
    _, uri = lsp_env.file("f.py", text)
    open_doc(client, uri, text)
    params = {"textDocument": {"uri": uri, "version": 1}, "position": {"line": 1, "character": 4}}
    result = await request(client, "shadowtab/nextEdit", params)
    assert result.edits == []


async def test_next_edit_rejects_bad_params(lsp_env: LspEnv) -> None:
    client = await lsp_env.client([*FIXED_SERVER, "--no-lint"])
    _, uri = lsp_env.file("f.py", "x = 1\n")
    open_doc(client, uri, "x = 1\n")
    bad = [
        None,
        {"textDocument": {"uri": uri}},
        {"textDocument": {"uri": 5}, "position": {"line": 0, "character": 0}},
        {"textDocument": {"uri": uri}, "position": {"line": -1, "character": 0}},
        {"textDocument": {"uri": uri}, "position": {"line": "0", "character": 0}},
        {"textDocument": {"uri": uri + "x"}, "position": {"line": 0, "character": 0}},
    ]
    for params in bad:
        with pytest.raises(JsonRpcException) as caught:
            await request(client, "shadowtab/nextEdit", params)
        assert caught.value.code == types.ErrorCodes.InvalidParams


async def test_keystroke_cancels_the_stale_prediction(lsp_env: LspEnv) -> None:
    client = await lsp_env.client([*FIXED_SERVER, "--inline", "late", "--delay", "20"])
    _, uri = lsp_env.file("a.py", "x = 1\n")
    open_doc(client, uri, "x = 1\n")
    pending = asyncio.ensure_future(inline(client, uri, 0, 5))
    await asyncio.sleep(0.3)
    change_doc(client, uri, 2, "2", (0, 5))
    with pytest.raises(JsonRpcException) as caught:
        await asyncio.wait_for(pending, 5)
    assert caught.value.code == types.LSPErrorCodes.ContentModified


async def test_cancel_request_is_honoured(lsp_env: LspEnv) -> None:
    client = await lsp_env.client([*FIXED_SERVER, "--inline", "late", "--delay", "20"])
    _, uri = lsp_env.file("a.py", "x = 1\n")
    open_doc(client, uri, "x = 1\n")
    params = types.InlineCompletionParams(
        context=types.InlineCompletionContext(
            trigger_kind=types.InlineCompletionTriggerKind.Automatic
        ),
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=0, character=5),
    )
    future = client.protocol.send_request(types.TEXT_DOCUMENT_INLINE_COMPLETION, params)
    await asyncio.sleep(0.3)
    msg_id = next(k for k, f in client.protocol._request_futures.items() if f is future)
    client.cancel_request(types.CancelParams(id=msg_id))
    with pytest.raises(JsonRpcException) as caught:
        await asyncio.wait_for(asyncio.wrap_future(future), 5)
    assert caught.value.code == types.LSPErrorCodes.RequestCancelled
    # the session still works afterwards
    assert await execute(client, "shadowtab.lock.status")


async def test_lock_commands_and_lock_changed_notification(lsp_env: LspEnv) -> None:
    client = await lsp_env.client([*FIXED_SERVER, "--no-lint"])
    status = await execute(client, "shadowtab.lock.status")
    assert status["holder"] == "user"
    assert status["root"] == str(lsp_env.root)
    changed = asyncio.ensure_future(client.wait_for_notification("shadowtab/lockChanged"))
    await asyncio.sleep(0)  # registers the waiter
    released = await execute(client, "shadowtab.lock.release")
    assert released["holder"] == "model"
    note = await asyncio.wait_for(changed, 5)
    assert note.holder == "model" and note.root == str(lsp_env.root)
    toggled = await execute(client, "shadowtab.lock.toggle")
    assert toggled["holder"] == "user"
    taken = await execute(client, "shadowtab.lock.take", {"mode": "keep"})
    assert taken["holder"] == "user"
    with pytest.raises(JsonRpcException) as caught:
        await execute(client, "shadowtab.lock.take", {"mode": "sideways"})
    assert caught.value.code == types.ErrorCodes.InvalidParams
    with pytest.raises(JsonRpcException):
        await execute(client, "shadowtab.lock.status", "not a map")


async def test_model_edit_stays_in_shadow_and_reaches_the_editor(lsp_env: LspEnv) -> None:
    client = await lsp_env.client([*FIXED_SERVER, "--no-lint"])
    editor = EditorBuffers(client)
    path, uri = lsp_env.file("m.py", "a = 1\nb = 2\n")
    editor.open(uri, "a = 1\nb = 2\n")
    await execute(client, "shadowtab.lock.release")
    edit = text_edit(uri, (1, 4), (1, 5), "3")
    result = await execute(client, "shadowtab.shadow.applyEdit", edit)
    assert result["applied"] is True
    assert result["results"][uri]["written"] is False
    assert path.read_text() == "a = 1\nb = 2\n"  # the model holds the lock: disk untouched
    await eventually(lambda: editor.texts[uri] == "a = 1\nb = 3\n")
    diff = await execute(client, "shadowtab.shadow.diff")
    assert "+b = 3" in diff["diff"]
    # the editor's echo of the pushed edit must not apply twice; a real keystroke applies
    editor.type(uri, "# ok\n", (0, 0))
    diff = await execute(client, "shadowtab.shadow.diff")
    assert "+# ok" in diff["diff"]
    assert diff["diff"].count("b = 3") == 1
    taken = await execute(client, "shadowtab.lock.take", {"mode": "commit"})
    assert taken["holder"] == "user"
    assert path.read_text() == "# ok\na = 1\nb = 3\n"


async def test_discard_pushes_the_disk_text_back(lsp_env: LspEnv) -> None:
    client = await lsp_env.client([*FIXED_SERVER, "--no-lint"])
    editor = EditorBuffers(client)
    path, uri = lsp_env.file("d.py", "a = 1\n")
    editor.open(uri, "a = 1\n")
    await execute(client, "shadowtab.lock.release")
    edit = text_edit(uri, (0, 0), (0, 0), "import os\n")
    await execute(client, "shadowtab.shadow.applyEdit", edit)
    await eventually(lambda: editor.texts[uri].startswith("import os"))
    await execute(client, "shadowtab.lock.take", {"mode": "discard"})
    await eventually(lambda: editor.texts[uri] == "a = 1\n")
    assert path.read_text() == "a = 1\n"
    diff = await execute(client, "shadowtab.shadow.diff")
    assert diff["diff"] == ""


async def test_discard_keeps_the_users_unsaved_typing(lsp_env: LspEnv) -> None:
    client = await lsp_env.client([*FIXED_SERVER, "--no-lint"])
    editor = EditorBuffers(client)
    path, uri = lsp_env.file("u.py", "a = 1\nb = 2\n")
    editor.open(uri, "a = 1\nb = 2\n")
    editor.type(uri, "# mine\n", (2, 0))  # unsaved typing by the user
    await execute(client, "shadowtab.lock.release")
    edit = text_edit(uri, (0, 4), (0, 5), "10")
    await execute(client, "shadowtab.shadow.applyEdit", edit)
    await eventually(lambda: editor.texts[uri] == "a = 10\nb = 2\n# mine\n")
    await execute(client, "shadowtab.lock.take", {"mode": "discard"})
    await eventually(lambda: editor.texts[uri] == "a = 1\nb = 2\n# mine\n")
    assert path.read_text() == "a = 1\nb = 2\n"


async def test_apply_edit_rejects_bad_workspace_edits(lsp_env: LspEnv) -> None:
    client = await lsp_env.client([*FIXED_SERVER, "--no-lint"])
    bad_arguments: list[list[Any]] = [[], [{"changes": 5}], [{}], [{"changes": {}}, 2]]
    for bad in bad_arguments:
        with pytest.raises(JsonRpcException) as caught:
            await execute(client, "shadowtab.shadow.applyEdit", *bad)
        assert caught.value.code == types.ErrorCodes.InvalidParams


async def test_save_while_model_holds_the_lock_warns(lsp_env: LspEnv) -> None:
    client = await lsp_env.client([*FIXED_SERVER, "--no-lint"])
    _, uri = lsp_env.file("s.py", "a = 1\n")
    open_doc(client, uri, "a = 1\n")
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    await execute(client, "shadowtab.lock.status")  # a round trip: the save was handled
    assert client.messages == []
    await execute(client, "shadowtab.lock.release")
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    message = await eventually(lambda: client.messages)
    assert "model holds the save lock" in message[0].message
    assert message[0].type == types.MessageType.Warning


async def test_shutdown_then_requests_fail_and_exit_ends_the_process(lsp_env: LspEnv) -> None:
    client = await lsp_env.client([*FIXED_SERVER, "--no-lint"])
    await client.shutdown_async(None)
    with pytest.raises(JsonRpcException) as caught:
        await execute(client, "shadowtab.lock.status")
    assert caught.value.code == types.ErrorCodes.InvalidRequest
    client.exit(None)
    server = client._server
    assert server is not None
    assert await asyncio.wait_for(server.wait(), 10) == 0


async def test_model_edits_of_unopened_files_get_diagnostics_while_pending(
    lsp_env: LspEnv,
) -> None:
    client = await lsp_env.client(FIXED_SERVER)
    path, uri = lsp_env.file("other.py", "a = 1\n")
    await execute(client, "shadowtab.lock.release")
    broken = text_edit(uri, (0, 5), (0, 5), " +")
    await execute(client, "shadowtab.shadow.applyEdit", broken)
    errors = await eventually(lambda: client.diagnostics.get(uri))
    assert any(d.severity == types.DiagnosticSeverity.Error for d in errors)
    assert path.read_text() == "a = 1\n"
    await execute(client, "shadowtab.lock.take", {"mode": "discard"})
    await eventually(lambda: len(client.diagnostics[uri]) == 0)


async def test_disk_change_under_pending_model_edits_warns(lsp_env: LspEnv) -> None:
    client = await lsp_env.client([*FIXED_SERVER, "--no-lint"])
    path, uri = lsp_env.file("c.py", "a = 1\n")
    await execute(client, "shadowtab.lock.release")
    edit = text_edit(uri, (0, 0), (0, 0), "# model\n")
    await execute(client, "shadowtab.shadow.applyEdit", edit)
    path.write_text("a = 2\n")  # someone else writes the file meanwhile
    messages = await eventually(lambda: client.messages)
    assert "changed on disk" in messages[0].message
    diff = await execute(client, "shadowtab.shadow.diff")
    assert "+# model" in diff["diff"]  # the shadow kept the model's edit
