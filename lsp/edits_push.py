"""Pushes shadow text into an editor's buffer with workspace/applyEdit, so the buffers of
editors that show a document stay equal to the shadow after a model edit."""

from __future__ import annotations

import logging
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from lsprotocol import types

if TYPE_CHECKING:
    from shadowtab.lsp.session import Session

logger = logging.getLogger(__name__)


def utf16_position(text: str, offset: int) -> types.Position:
    """LSP position (UTF-16 character) of str offset `offset` in `text`."""
    line = text.count("\n", 0, offset)
    line_start = text.rfind("\n", 0, offset) + 1
    segment = text[line_start:offset]
    return types.Position(line=line, character=len(segment.encode("utf-16-le")) // 2)


def minimal_text_edit(old: str, new: str) -> types.TextEdit | None:
    """One TextEdit turning `old` into `new`, covering only the differing middle."""
    if old == new:
        return None
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    rng = types.Range(start=utf16_position(old, prefix), end=utf16_position(old, len(old) - suffix))
    return types.TextEdit(range=rng, new_text=new[prefix : len(new) - suffix])


def client_can_apply_edits(session: Session) -> bool:
    workspace = getattr(session.protocol.client_capabilities, "workspace", None)
    return bool(workspace is not None and workspace.apply_edit)


def push_full_text(session: Session, uri: str, old_text: str, new_text: str) -> None:
    """Make the session's buffer of `uri` (now `old_text`) hold `new_text`."""
    edit = minimal_text_edit(old_text, new_text)
    if edit is None or not client_can_apply_edits(session):
        return
    version = session.sync.version_of(uri)
    document_edit = types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
        edits=[edit],
    )
    params = types.ApplyWorkspaceEditParams(
        label="shadowtab: model edit",
        edit=types.WorkspaceEdit(document_changes=[document_edit]),
    )
    future = session.protocol.send_request(types.WORKSPACE_APPLY_EDIT, params)
    future.add_done_callback(lambda f: _log_result(session, uri, f))


def _log_result(session: Session, uri: str, future: Future[Any]) -> None:
    if future.cancelled():
        return
    error = future.exception()
    if error is not None:
        logger.warning("session %d: applyEdit of %s failed: %s", session.id, uri, error)
        return
    result = future.result()
    if result is not None and not getattr(result, "applied", True):
        reason = getattr(result, "failure_reason", None)
        logger.warning("session %d: editor refused edit of %s: %s", session.id, uri, reason)
