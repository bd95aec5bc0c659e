"""Incremental text sync of one session into the shared shadow workspace.

Each session also keeps its own view of its documents (pygls' Workspace, UTF-16): it
tells an editor's echo of a model edit we pushed (its buffer now equals the shadow: no
change to apply) from a real keystroke."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lsprotocol import types
from shadowtab.lsp.convert import to_text_change
from shadowtab.lsp.edits_push import push_full_text

if TYPE_CHECKING:
    from shadowtab.lsp.session import Session
    from shadowtab.lsp.workspace_registry import WorkspaceRegistry

logger = logging.getLogger(__name__)

SAVED_WHILE_MODEL_HOLDS_LOCK = (
    "shadowtab: the model holds the save lock of {root}; your save went to disk, "
    "the model's pending edits stay in the shadow. Take the lock to commit or discard them."
)


class TextSync:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.versions: dict[str, int] = {}
        self.language_ids: dict[str, str] = {}

    @property
    def _registry(self) -> WorkspaceRegistry:
        return self.session.hub.workspaces

    def version_of(self, uri: str) -> int | None:
        return self.versions.get(uri)

    def view_text(self, uri: str) -> str | None:
        if uri not in self.versions:
            return None
        return self.session.server.workspace.get_text_document(uri).source

    def did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        workspace = self._registry.for_uri(item.uri)
        existing = workspace.document(item.uri)
        if existing is not None and self._registry.sessions_with(item.uri):
            document = existing  # another editor shows it: the shadow text stands
        else:
            document = workspace.open_document(item.uri, item.text, item.version, item.language_id)
        # Recorded only once the shadow took it: a refused file is not open anywhere.
        self.session.server.workspace.put_text_document(item)
        self.versions[item.uri] = item.version
        self.language_ids[item.uri] = item.language_id
        self._registry.opened(item.uri, self.session)
        if document.text != item.text:
            # The shadow holds edits this editor has not seen (another editor, a model edit
            # kept pending): show the editor what the shadow holds.
            push_full_text(self.session, item.uri, item.text, document.text)
        self._registry.diagnostics.schedule(item.uri, delay_s=0)

    def did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri not in self.versions:
            logger.info("session %d: didChange of unopened %s ignored", self.session.id, uri)
            return
        view = self.session.server.workspace
        for change in params.content_changes:
            view.update_text_document(params.text_document, change)
        self.versions[uri] = params.text_document.version
        self.session.hub.predictions.on_document_changed(uri)
        workspace = self._registry.for_uri(uri)
        document = workspace.document(uri)
        new_view = view.get_text_document(uri).source
        if document is not None and document.text == new_view:
            return  # the echo of an edit the shadow already holds
        if document is None:
            return
        changes = [to_text_change(c) for c in params.content_changes]
        # Shadow versions run on when several editors (own numbering) or the model edit.
        version = params.text_document.version
        workspace.change_document(
            uri, version if version >= document.version else None, changes, author="user"
        )
        self._mirror_to_other_editors(uri, document.text)
        self._registry.diagnostics.schedule(uri)
        self.session.hub.predictions.schedule_warm(self.session, uri)

    def _mirror_to_other_editors(self, uri: str, text: str) -> None:
        """Other editors showing `uri` get this keystroke too: one shadow, one text."""
        for other in self._registry.sessions_with(uri):
            view = other.sync.view_text(uri) if other is not self.session else None
            if view is not None and view != text:
                push_full_text(other, uri, view, text)

    def did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        self._forget(params.text_document.uri)

    def did_save(self, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri not in self.versions:
            return
        workspace = self._registry.for_uri(uri)
        if workspace.note_saved(uri):
            self.session.server.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Warning,
                    message=SAVED_WHILE_MODEL_HOLDS_LOCK.format(root=workspace.root),
                )
            )

    def _forget(self, uri: str) -> None:
        if uri not in self.versions:
            return
        del self.versions[uri]
        self.language_ids.pop(uri, None)
        self.session.server.workspace.remove_text_document(uri)
        self.session.hub.predictions.on_document_changed(uri)
        if self._registry.closed(uri, self.session):
            self._registry.diagnostics.cancel(uri)
            try:
                self._registry.for_uri(uri).close_document(uri)
            except Exception as exc:
                logger.warning("closing %s: %s", uri, exc)

    async def close_all(self) -> None:
        for uri in list(self.versions):
            self._forget(uri)
