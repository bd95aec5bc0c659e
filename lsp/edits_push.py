"""Pushes changes into an editor's buffer with workspace/applyEdit, so the buffers of
all editors showing a document stay equal to the shadow: another editor's keystroke is
forwarded as the change itself; a new text (model edit, discard, a stale copy opened)
as the one change the shadow's narrowing finds. Each push is remembered as the echo to
expect: the editor applies it and reports it back as its own didChange."""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from shadowtab.lsp.convert import to_lsp_range
from shadowtab.shadow_workspace import TextChange, minimal_change

if TYPE_CHECKING:
    from shadowtab.lsp.peer import Peer

logger = logging.getLogger(__name__)


def client_can_apply_edits(session: Peer) -> bool:
    workspace = getattr(session.protocol.client_capabilities, "workspace", None)
    return bool(workspace is not None and workspace.apply_edit)


def push_text(session: Peer, uri: str, old_text: str, new_text: str) -> None:
    """Make the session's buffer of `uri` (now `old_text`) hold `new_text`."""
    change = minimal_change(old_text, new_text)
    if change is not None:
        push_changes(session, uri, [change])


def push_changes(session: Peer, uri: str, changes: Sequence[TextChange]) -> None:
    """Apply `changes` (in order, each against the text the previous one left; ranges,
    never full texts) to the session's buffer of `uri`: one applyEdit per change, each
    answered by the editor's didChange that the session then knows as an echo."""
    version = session.sync.version_of(uri)
    if version is None or not client_can_apply_edits(session):
        return
    for change in changes:
        assert change.range is not None, "push ranges, not full texts"
        echo = session.sync.expect_echo(uri, change)
        document_edit = types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
            edits=[types.TextEdit(range=to_lsp_range(change.range), new_text=change.text)],
        )
        params = types.ApplyWorkspaceEditParams(
            label="shadowtab: shadow edit",
            edit=types.WorkspaceEdit(document_changes=[document_edit]),
        )
        future = session.protocol.send_request(types.WORKSPACE_APPLY_EDIT, params)
        future.add_done_callback(functools.partial(_on_result, session, uri, echo))
        version = None  # the editor numbers the versions after the first edit itself


def _on_result(session: Peer, uri: str, echo: object, future: Future[Any]) -> None:
    if future.cancelled():
        session.sync.drop_echo(uri, echo)
        return
    error = future.exception()
    if error is not None:
        logger.warning("session %d: applyEdit of %s failed: %s", session.id, uri, error)
        session.sync.drop_echo(uri, echo)
        return
    result = future.result()
    if result is not None and not getattr(result, "applied", True):
        reason = getattr(result, "failure_reason", None)
        logger.warning("session %d: editor refused edit of %s: %s", session.id, uri, reason)
        session.sync.drop_echo(uri, echo)
