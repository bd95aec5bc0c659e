"""Helpers of the language server tests: fresh shadowtab dirs, a workspace root, and
pytest-lsp clients started on a server command."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

HERE = Path(__file__).parent
FIXED_SERVER = [sys.executable, str(HERE / "lsp_fixed_server.py")]
STANDALONE = [sys.executable, "-m", "shadowtab.daemon.cli", "lsp", "--standalone"]
PUMP = [sys.executable, "-m", "shadowtab.daemon.cli", "lsp"]

T = TypeVar("T")


@dataclass
class LspEnv:
    base: Path
    root: Path
    env: dict[str, str]
    clients: list[LanguageClient] = field(default_factory=list)
    init_results: list[types.InitializeResult] = field(default_factory=list)

    def file(self, name: str, text: str) -> tuple[Path, str]:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path, path.as_uri()

    async def client(self, command: list[str], **caps: Any) -> LanguageClient:
        config = ClientServerConfig(server_command=command, server_env=self.env)
        client = await config.start()
        assert isinstance(client, LanguageClient)
        self.clients.append(client)
        result = await client.initialize_session(initialize_params(self.root, **caps))
        self.init_results.append(result)
        return client


def client_capabilities(apply_edit: bool = True, progress: bool = True) -> types.ClientCapabilities:
    return types.ClientCapabilities(
        general=types.GeneralClientCapabilities(
            position_encodings=[types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf16]
        ),
        workspace=types.WorkspaceClientCapabilities(apply_edit=apply_edit),
        window=types.WindowClientCapabilities(work_done_progress=progress),
        text_document=types.TextDocumentClientCapabilities(
            synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
            inline_completion=types.InlineCompletionClientCapabilities(),
        ),
    )


def initialize_params(root: Path, **caps: Any) -> types.InitializeParams:
    return types.InitializeParams(
        capabilities=client_capabilities(**caps),
        root_uri=root.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
    )


def open_doc(client: LanguageClient, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=version, text=text
            )
        )
    )


def change_doc(
    client: LanguageClient,
    uri: str,
    version: int,
    text: str,
    start: tuple[int, int],
    end: tuple[int, int] | None = None,
) -> None:
    end = end or start
    rng = types.Range(
        start=types.Position(line=start[0], character=start[1]),
        end=types.Position(line=end[0], character=end[1]),
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangePartial(range=rng, text=text)],
        )
    )


async def eventually(
    probe: Callable[[], T | None], timeout: float = 10.0, interval: float = 0.02
) -> T:
    """Poll `probe` until it returns a truthy value (the server answers asynchronously)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = probe()
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        await asyncio.sleep(interval)


async def execute(client: LanguageClient, command: str, *arguments: Any) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=list(arguments))
    )


async def inline(client: LanguageClient, uri: str, line: int, character: int) -> Any:
    return await client.text_document_inline_completion_async(
        types.InlineCompletionParams(
            context=types.InlineCompletionContext(
                trigger_kind=types.InlineCompletionTriggerKind.Invoked
            ),
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line, character=character),
        )
    )


async def request(client: LanguageClient, method: str, params: Any) -> Any:
    return await client.protocol.send_request_async(method, params)


async def wait_for(awaitable: Awaitable[T], timeout: float = 10.0) -> T:
    return await asyncio.wait_for(awaitable, timeout)


def base_env(base: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHADOWTAB_")}
    for name, sub in (("RUNTIME", "run"), ("STATE", "state"), ("CONFIG", "cfg"), ("DATA", "data")):
        env[f"SHADOWTAB_{name}_DIR"] = str(base / sub)
    env["SHADOWTAB_ENGINE_KIND"] = "off"
    return env


def apply_text_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP TextEdits (all relative to `text`, UTF-16 positions) like an editor."""
    lines = text.split("\n")

    def offset(pos: types.Position) -> int:
        before = sum(len(line) + 1 for line in lines[: pos.line])
        line = lines[pos.line] if pos.line < len(lines) else ""
        units = line.encode("utf-16-le")[: pos.character * 2].decode("utf-16-le")
        return before + len(units)

    ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character))
    for edit in reversed(ordered):
        start, end = offset(edit.range.start), offset(edit.range.end)
        text = text[:start] + edit.new_text + text[end:]
        lines = text.split("\n")
    return text


class EditorBuffers:
    """What an editor does with workspace/applyEdit: apply it to its buffer, answer
    applied, and send the change back as didChange (the echo the server must expect)."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.applied: list[types.ApplyWorkspaceEditParams] = []

        def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            return self._apply_edit(params)

        client.feature(types.WORKSPACE_APPLY_EDIT)(apply_edit)

    def open(self, uri: str, text: str) -> None:
        self.texts[uri], self.versions[uri] = text, 1
        open_doc(self.client, uri, text)

    def type(
        self, uri: str, text: str, start: tuple[int, int], end: tuple[int, int] | None = None
    ) -> None:
        end = end or start
        rng = types.Range(
            start=types.Position(line=start[0], character=start[1]),
            end=types.Position(line=end[0], character=end[1]),
        )
        self._change(uri, [types.TextEdit(range=rng, new_text=text)])

    def _change(self, uri: str, edits: list[types.TextEdit]) -> None:
        self.texts[uri] = apply_text_edits(self.texts[uri], edits)
        self.versions[uri] += 1
        ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character))
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri, version=self.versions[uri]
                ),
                content_changes=[
                    types.TextDocumentContentChangePartial(range=e.range, text=e.new_text)
                    for e in reversed(ordered)
                ],
            )
        )

    def _apply_edit(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        self.applied.append(params)
        for change in params.edit.document_changes or []:
            assert isinstance(change, types.TextDocumentEdit)
            uri = change.text_document.uri
            if uri not in self.texts:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="not open")
            edits = [e for e in change.edits if isinstance(e, types.TextEdit)]
            self._change(uri, edits)
        return types.ApplyWorkspaceEditResult(applied=True)


def text_edit(
    uri: str, start: tuple[int, int], end: tuple[int, int], new_text: str
) -> dict[str, Any]:
    """A WorkspaceEdit (as JSON) with one text edit: what the model sends to the shadow."""
    return {
        "changes": {
            uri: [
                {
                    "range": {
                        "start": {"line": start[0], "character": start[1]},
                        "end": {"line": end[0], "character": end[1]},
                    },
                    "newText": new_text,
                }
            ]
        }
    }
