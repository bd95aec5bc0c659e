"""Incremental text sync of one session straight into the shared shadow workspace: the
shadow's ShadowDocument is the only copy of the text (pygls keeps none), and it holds
each editor's version, the language id and which editors have the document open.

A keystroke is applied once and forwarded, as the change itself, to the other editors
showing the document. Each of them reports it back as its own didChange: that echo is
recognised as the head of the changes pushed to it and only moves its version on."""

from __future__ import annotations

import logging
import time
from collections import defaultdict, deque
from collections.abc import Sequence
from typing import TYPE_CHECKING

from lsprotocol import types
from shadowtab.lsp.convert import to_text_change
from shadowtab.lsp.edits_push import push_changes, push_text
from shadowtab.shadow_workspace import DocumentTooLarge, EditEvent, ShadowDocument, TextChange

if TYPE_CHECKING:
    from shadowtab.lsp.session import Session
    from shadowtab.lsp.workspace_registry import WorkspaceRegistry

logger = logging.getLogger(__name__)

TOO_LARGE = "shadowtab does not follow {uri} (no suggestions, no lock): {reason}"

SAVED_WHILE_MODEL_HOLDS_LOCK = (
    "shadowtab: the model holds the save lock of {root}; your save went to disk, "
    "the model's pending edits stay in the shadow. Take the lock to commit or discard them."
)


class TextSync:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.open_uris: set[str] = set()  # to close them when the session ends
        # uri -> changes pushed to this editor whose didChange has not come back yet
        self._echoes: dict[str, deque[list[TextChange]]] = defaultdict(deque)

    @property
    def _registry(self) -> WorkspaceRegistry:
        return self.session.hub.workspaces

    def document(self, uri: str) -> ShadowDocument | None:
        """The shadow document of `uri` when this session has it open."""
        if uri not in self.open_uris:
            return None
        document = self._registry.for_uri(uri).document(uri)
        if document is None or self.session.id not in document.editors:
            return None
        return document

    def version_of(self, uri: str) -> int | None:
        """The version of this editor's buffer of `uri` (None: not open here)."""
        document = self.document(uri)
        return None if document is None else document.editors[self.session.id]

    def expect_echo(self, uri: str, change: TextChange) -> list[TextChange]:
        echo = [change]
        self._echoes[uri].append(echo)
        return echo

    def drop_echo(self, uri: str, echo: object) -> None:
        """A push that was refused or failed: its echo will not come."""
        queue = self._echoes.get(uri)
        if queue is not None and any(e is echo for e in queue):
            queue.remove(echo)  # type: ignore[arg-type]

    def did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        try:
            workspace = self._registry.for_uri(item.uri)
            document = workspace.open_document(
                item.uri, item.text, item.version, item.language_id, editor=self.session.id
            )
        except DocumentTooLarge as exc:
            self._refuse(item.uri, exc)
            return
        # Recorded only once the shadow took it: a refused file is not open anywhere.
        self.open_uris.add(item.uri)
        if document.text != item.text:
            # The shadow holds edits this editor has not seen (another editor, a model edit
            # kept pending): show the editor what the shadow holds.
            push_text(self.session, item.uri, item.text, document.text)
        self._registry.diagnostics.schedule(item.uri, delay_s=0)

    def did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        started = time.perf_counter()
        uri, version = params.text_document.uri, params.text_document.version
        if self.document(uri) is None:
            logger.debug("session %d: didChange of unopened %s ignored", self.session.id, uri)
            return
        workspace = self._registry.for_uri(uri)
        changes = [to_text_change(c) for c in params.content_changes]
        echoes = self._echoes.get(uri)
        if echoes and echoes[0] == changes:
            # The echo of a change the shadow already holds: the text is the same, so the
            # predictions in flight (the typist's ghost text) are not stale.
            echoes.popleft()
            workspace.note_editor_version(uri, self.session.id, version)
            return
        self.session.hub.predictions.on_document_changed(uri)
        try:
            events = workspace.edit_document(uri, self.session.id, version, changes)
        except DocumentTooLarge as exc:
            self._refuse(uri, exc)
            self._forget(uri)
            return
        self._forward(uri, events)
        self.session.hub.text_sync_ms.append((time.perf_counter() - started) * 1000)
        self._registry.diagnostics.schedule(uri)
        self.session.hub.predictions.schedule_warm(self.session, uri)

    def _forward(self, uri: str, events: Sequence[EditEvent]) -> None:
        """Other editors showing `uri` get this keystroke too: one shadow, one text."""
        changes = [TextChange(event.range, event.new_text) for event in events]
        for other in self._registry.sessions_with(uri):
            if other is not self.session:
                push_changes(other, uri, changes)

    def _refuse(self, uri: str, exc: Exception) -> None:
        """Tell the user why shadowtab does not follow this document."""
        logger.warning("session %d: %s refused: %s", self.session.id, uri, exc)
        message = TOO_LARGE.format(uri=uri, reason=exc)
        params = types.ShowMessageParams(type=types.MessageType.Warning, message=message)
        self.session.notify(types.WINDOW_SHOW_MESSAGE, params)

    def did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        self._forget(params.text_document.uri)

    def did_save(self, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if self.document(uri) is None:
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
        if uri not in self.open_uris:
            return
        self.open_uris.discard(uri)
        self._echoes.pop(uri, None)
        try:
            workspace = self._registry.for_uri(uri)
            workspace.close_document(uri, editor=self.session.id)
            document = workspace.document(uri)
        except Exception as exc:
            logger.warning("closing %s: %s", uri, exc)
            self.session.hub.predictions.on_document_changed(uri)
            return
        if document is None or not document.open:
            # Nobody shows it now: its predictions are for no one. While another editor
            # shows it, that editor's ghost text in flight is not stale.
            self.session.hub.predictions.on_document_changed(uri)
            self._registry.diagnostics.cancel(uri)

    async def close_all(self) -> None:
        for uri in list(self.open_uris):
            self._forget(uri)
