"""The handler table: every LSP method the server answers, listed once, marked as

- mutating: runs on the event loop, in arrival order, against the shadow store (text
  sync, saves, commands that edit the shadow or move the lock);
- background: runs off the loop on the text as it was when the request came (the
  predictor in a worker thread), and is dropped with ContentModified when a keystroke
  made that text stale (PredictionService).

Text sync (didOpen/didChange/didClose) is registered here like the rest; SessionProtocol
replaces pygls' built-ins for them, which would keep a second copy of every document.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from shadowtab.lsp import prediction_handlers
from shadowtab.lsp.commands import COMMAND_PREFIX
from shadowtab.lsp.shadow_edit import apply_workspace_edit
from shadowtab.shadow_workspace import ShadowError

if TYPE_CHECKING:
    from shadowtab.lsp.session import Session

logger = logging.getLogger(__name__)

NEXT_EDIT = "shadowtab/nextEdit"
CURSOR_MOVED = "shadowtab/cursorMoved"
COPILOT_INLINE_EDIT = "textDocument/copilotInlineEdit"
APPLY_EDIT_COMMAND = COMMAND_PREFIX + "shadow.applyEdit"

Kind = Literal["mutating", "background"]
Handler = Callable[["Session", Any], Any]


@dataclass(frozen=True)
class Method:
    name: str
    kind: Kind
    handler: Handler
    options: Any = None


def _count(session: Session, method: str) -> None:
    session.client_events[method] += 1


def _initialized(session: Session, params: types.InitializedParams) -> None:
    session.open_root_workspace()
    session.progress.on_initialized()


def _did_open(session: Session, params: types.DidOpenTextDocumentParams) -> None:
    session.sync.did_open(params)
    uri, language_id = params.text_document.uri, params.text_document.language_id
    workspace = session.sync.workspace_of(uri)
    document = workspace.document(uri) if workspace is not None else None
    if session.name_check is not None and workspace is not None and document is not None:
        session.name_check.prepare(str(document.path), workspace.root, document.text, language_id)


def _did_change(session: Session, params: types.DidChangeTextDocumentParams) -> None:
    session.sync.did_change(params)


def _did_close(session: Session, params: types.DidCloseTextDocumentParams) -> None:
    session.sync.did_close(params)


def _did_save(session: Session, params: types.DidSaveTextDocumentParams) -> None:
    session.sync.did_save(params)


def _counter(name: str) -> Handler:
    def count(session: Session, params: Any) -> None:
        _count(session, name)

    return count


def _cursor_moved(session: Session, raw: Any) -> None:
    """A notification: malformed params are logged and dropped (nothing to answer)."""
    try:
        uri, _, line, character = prediction_handlers.parse_next_edit_params(raw)
    except JsonRpcInvalidParams as exc:
        logger.info("session %d: %s ignored: %s", session.id, CURSOR_MOVED, exc)
        return
    session.sync.cursor_moved(uri, line, character)


async def _next_edit(session: Session, params: Any) -> dict[str, Any]:
    return await prediction_handlers.next_edit(session, params)


# Acceptance telemetry that Copilot-style clients send: counted, nothing else.
# (copilot-lsp sends didFocus on every BufEnter.)
TELEMETRY_NOTIFICATIONS = (
    "textDocument/didShowInlineEdit",
    "textDocument/didFocus",
    "textDocument/didShowCompletion",
    "textDocument/didPartiallyAcceptCompletion",
)

METHODS: tuple[Method, ...] = (
    Method(types.INITIALIZED, "mutating", _initialized),
    Method(types.TEXT_DOCUMENT_DID_OPEN, "mutating", _did_open),
    Method(types.TEXT_DOCUMENT_DID_CHANGE, "mutating", _did_change),
    Method(types.TEXT_DOCUMENT_DID_CLOSE, "mutating", _did_close),
    Method(
        types.TEXT_DOCUMENT_DID_SAVE, "mutating", _did_save, types.SaveOptions(include_text=False)
    ),
    Method(
        types.TEXT_DOCUMENT_INLINE_COMPLETION,
        "background",
        prediction_handlers.inline_completion,
        types.InlineCompletionOptions(),
    ),
    Method(NEXT_EDIT, "background", _next_edit),
    Method(COPILOT_INLINE_EDIT, "background", _next_edit),
    Method(CURSOR_MOVED, "mutating", _cursor_moved),
    Method(prediction_handlers.REJECTED, "mutating", prediction_handlers.rejected),
    *(Method(name, "mutating", _counter(name)) for name in TELEMETRY_NOTIFICATIONS),
)


def register_features(session: Session) -> None:
    """Register the table's methods and the workspace/executeCommand commands."""
    server = session.server
    for method in METHODS:
        server.feature(method.name, method.options)(_bound(session, method))
    _register_commands(session)


def _bound(session: Session, method: Method) -> Any:
    """A distinct function per registration (pygls stores attributes on the function);
    async for background methods, so pygls awaits them off the dispatch path."""
    if method.kind == "background":

        async def background(params: Any) -> Any:
            return await method.handler(session, params)

        return background

    def mutating(params: Any) -> Any:
        return method.handler(session, params)

    return mutating


def _register_commands(session: Session) -> None:
    server = session.server
    for name in session.commands.editor_names():
        server.command(COMMAND_PREFIX + name)(_command(session, name))

    @server.command(APPLY_EDIT_COMMAND)
    async def apply_edit(*args: Any) -> dict[str, Any]:
        if len(args) != 1:
            raise JsonRpcInvalidParams("shadowtab.shadow.applyEdit takes one WorkspaceEdit")
        return await apply_workspace_edit(session, args[0])

    @server.command(prediction_handlers.NEXT_EDIT_ACCEPTED)
    def next_edit_accepted(*args: Any) -> None:
        _count(session, prediction_handlers.NEXT_EDIT_ACCEPTED)
        prediction_handlers.feedback(session, "accepted", args[0] if args else None)


def _command(session: Session, name: str) -> Any:
    async def run(*args: Any) -> dict[str, Any]:
        if len(args) > 1 or (args and not isinstance(args[0], dict)):
            raise JsonRpcInvalidParams(f"{COMMAND_PREFIX}{name} takes one object argument")
        options = dict(args[0]) if args else {}
        if "root" not in options and session.root is not None:
            options["root"] = session.root
        try:
            return await session.commands.for_editor(name, options)
        except (ValueError, KeyError, ShadowError) as exc:
            raise JsonRpcInvalidParams(str(exc)) from exc

    return run
