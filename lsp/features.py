"""Registers a session's LSP handlers on its pygls server object (text sync itself is in
SessionProtocol: it replaces pygls' built-ins)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from shadowtab.lsp import prediction_handlers
from shadowtab.lsp.commands import COMMAND_PREFIX
from shadowtab.lsp.shadow_edit import apply_workspace_edit
from shadowtab.shadow_workspace import ShadowError

if TYPE_CHECKING:
    from shadowtab.lsp.session import Session

NEXT_EDIT = "shadowtab/nextEdit"
COPILOT_INLINE_EDIT = "textDocument/copilotInlineEdit"
# Acceptance telemetry that Copilot-style clients send: counted, nothing else.
TELEMETRY_NOTIFICATIONS = (
    "textDocument/didShowInlineEdit",
    "textDocument/didShowCompletion",
    "textDocument/didPartiallyAcceptCompletion",
)

telemetry: Counter[str] = Counter()


def register_features(session: Session) -> None:
    _register_lifecycle(session)
    _register_predictions(session)
    _register_commands(session)


def _register_lifecycle(session: Session) -> None:
    server = session.server

    @server.feature(types.INITIALIZED)
    def initialized(params: types.InitializedParams) -> None:
        session.open_root_workspace()
        session.progress.on_initialized()

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        session.sync.did_save(params)

    for method in TELEMETRY_NOTIFICATIONS:
        server.feature(method)(_counter(method))


def _counter(method: str) -> Any:
    def count(params: Any) -> None:
        telemetry[method] += 1

    return count


def _register_predictions(session: Session) -> None:
    server = session.server

    @server.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
    async def inline_completion(
        params: types.InlineCompletionParams,
    ) -> list[types.InlineCompletionItem]:
        return await prediction_handlers.inline_completion(session, params)

    async def next_edit(params: Any) -> dict[str, Any]:
        return await prediction_handlers.next_edit(session, params)

    server.feature(NEXT_EDIT)(next_edit)
    server.feature(COPILOT_INLINE_EDIT)(_alias(next_edit))


def _alias(handler: Any) -> Any:
    """A distinct function object: pygls stores registration attributes on the function."""

    async def alias(params: Any) -> dict[str, Any]:
        return await handler(params)

    return alias


def _register_commands(session: Session) -> None:
    server = session.server
    runner = session.hub.commands
    for name in runner.control_names():
        server.command(COMMAND_PREFIX + name)(_command(session, name))

    @server.command(COMMAND_PREFIX + "shadow.applyEdit")
    async def apply_edit(*args: Any) -> dict[str, Any]:
        if len(args) != 1:
            raise JsonRpcInvalidParams("shadowtab.shadow.applyEdit takes one WorkspaceEdit")
        return await apply_workspace_edit(session, args[0])

    @server.command(prediction_handlers.NEXT_EDIT_ACCEPTED)
    def next_edit_accepted(*args: Any) -> None:
        telemetry[prediction_handlers.NEXT_EDIT_ACCEPTED] += 1


def _command(session: Session, name: str) -> Any:
    async def run(*args: Any) -> dict[str, Any]:
        if len(args) > 1 or (args and not isinstance(args[0], dict)):
            raise JsonRpcInvalidParams(f"{COMMAND_PREFIX}{name} takes one object argument")
        options = dict(args[0]) if args else {}
        if "root" not in options and session.root is not None:
            options["root"] = session.root
        try:
            return await session.hub.commands.for_editor(name, options)
        except (ValueError, KeyError, ShadowError) as exc:
            raise JsonRpcInvalidParams(str(exc)) from exc

    return run
