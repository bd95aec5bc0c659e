"""Incremental text sync of one session straight into the shared shadow workspace: the
shadow's ShadowDocument is the only copy of the text (pygls keeps none), and it holds
each editor's version, the language id and which editors have the document open.

Each open document's workspace is looked up once, at didOpen, and held: a keystroke or a
prediction finds its document without resolving paths again.

A keystroke is applied once and forwarded, as the change itself, to the other editors
showing the document. Each of them reports it back as its own didChange: that echo is
recognised as the head of the changes pushed to it and only moves its version on."""

from __future__ import annotations

import logging
import time
from collections import defaultdict, deque
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from lsprotocol import types
from shadowtab.lsp.convert import to_text_change
from shadowtab.lsp.edits_push import push_changes, push_text
from shadowtab.lsp.peer import peers_showing
from shadowtab.shadow_workspace import DocumentTooLarge, EditEvent, ShadowDocument, TextChange

if TYPE_CHECKING:
    from shadowtab.lsp.diagnostics import DiagnosticsPublisher
    from shadowtab.lsp.peer import Peer
    from shadowtab.lsp.predictions import PredictionService
    from shadowtab.lsp.workspace_registry import WorkspaceRegistry
    from shadowtab.shadow_workspace import ShadowWorkspace

logger = logging.getLogger(__name__)

TOO_LARGE = "shadowtab does not follow {uri} (no suggestions, no lock): {reason}"

SAVED_WHILE_MODEL_HOLDS_LOCK = (
    "shadowtab: the model holds the save lock of {root}; your save went to disk, "
    "the model's pending edits stay in the shadow. Take the lock to commit or discard them."
)


class TextSync:
    def __init__(
        self,
        peer: Peer,
        workspaces: WorkspaceRegistry,
        peers: Collection[Peer],
        lints: DiagnosticsPublisher,
        predictions: PredictionService,
        text_sync_ms: deque[float],
    ) -> None:
        self.peer = peer
        self._workspaces = workspaces
        self._peers = peers
        self._lints = lints
        self._predictions = predictions
        self._text_sync_ms = text_sync_ms
        # uri -> the workspace holding it: the documents this editor has open (to close
        # them when the session ends), each looked up once at didOpen
        self._open: dict[str, ShadowWorkspace] = {}
        # uri -> changes pushed to this editor whose didChange has not come back yet
        self._echoes: dict[str, deque[list[TextChange]]] = defaultdict(deque)

    @property
    def open_uris(self) -> list[str]:
        return list(self._open)

    def workspace_of(self, uri: str) -> ShadowWorkspace | None:
        """The workspace holding `uri` when this session has it open."""
        return self._open.get(uri)

    def document(self, uri: str) -> ShadowDocument | None:
        """The shadow document of `uri` when this session has it open."""
        workspace = self._open.get(uri)
        if workspace is None:
            return None
        document = workspace.document(uri)
        if document is None or self.peer.id not in document.editors:
            return None
        return document

    def version_of(self, uri: str) -> int | None:
        """The version of this editor's buffer of `uri` (None: not open here)."""
        document = self.document(uri)
        return None if document is None else document.editors[self.peer.id]

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
            workspace = self._workspaces.for_uri(item.uri)
            document = workspace.open_document(
                item.uri, item.text, item.version, item.language_id, editor=self.peer.id
            )
        except DocumentTooLarge as exc:
            self._refuse(item.uri, exc)
            return
        # Recorded only once the shadow took it: a refused file is not open anywhere.
        self._open[item.uri] = workspace
        if document.text != item.text:
            # The shadow holds edits this editor has not seen (another editor, a model edit
            # kept pending): show the editor what the shadow holds.
            push_text(self.peer, item.uri, item.text, document.text)
        self._lints.schedule(item.uri, delay_s=0)

    def did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        started = time.perf_counter()
        uri, version = params.text_document.uri, params.text_document.version
        document = self.document(uri)
        if document is None:
            logger.debug("session %d: didChange of unopened %s ignored", self.peer.id, uri)
            return
        workspace = self._open[uri]
        changes = [to_text_change(c) for c in params.content_changes]
        echoes = self._echoes.get(uri)
        if echoes and echoes[0] == changes:
            # The echo of a change the shadow already holds: the text is the same, so the
            # predictions in flight (the typist's ghost text) are not stale.
            echoes.popleft()
            workspace.note_editor_version(uri, self.peer.id, version)
            return
        self._predictions.on_document_changed(uri)
        try:
            events = workspace.edit_document(uri, self.peer.id, version, changes)
        except DocumentTooLarge as exc:
            self._refuse(uri, exc)
            self._forget(uri)
            return
        self._forward(uri, document, events)
        self._text_sync_ms.append((time.perf_counter() - started) * 1000)
        self._lints.schedule(uri)
        self._predictions.schedule_warm(self.peer, uri)

    def _forward(self, uri: str, document: ShadowDocument, events: Sequence[EditEvent]) -> None:
        """Other editors showing `uri` get this keystroke too: one shadow, one text."""
        changes = [TextChange(event.range, event.new_text) for event in events]
        for other in peers_showing(self._peers, document):
            if other.id != self.peer.id:
                push_changes(other, uri, changes)

    def _refuse(self, uri: str, exc: Exception) -> None:
        """Tell the user why shadowtab does not follow this document."""
        logger.warning("session %d: %s refused: %s", self.peer.id, uri, exc)
        message = TOO_LARGE.format(uri=uri, reason=exc)
        params = types.ShowMessageParams(type=types.MessageType.Warning, message=message)
        self.peer.notify(types.WINDOW_SHOW_MESSAGE, params)

    def cursor_moved(self, uri: str, line: int, character: int) -> None:
        """shadowtab/cursorMoved: the editor's cursor rests at a new place of `uri`."""
        self._predictions.note_next_edit_client(self.peer)
        if self.document(uri) is None:
            logger.debug("session %d: cursorMoved in unopened %s ignored", self.peer.id, uri)
            return
        self._predictions.note_cursor(self.peer, uri, line, character)

    def did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        self._forget(params.text_document.uri)

    def did_save(self, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if self.document(uri) is None:
            return
        workspace = self._open[uri]
        if workspace.note_saved(uri):
            message = SAVED_WHILE_MODEL_HOLDS_LOCK.format(root=workspace.root)
            self.peer.protocol.notify(
                types.WINDOW_SHOW_MESSAGE,
                types.ShowMessageParams(type=types.MessageType.Warning, message=message),
            )

    def _forget(self, uri: str) -> None:
        workspace = self._open.pop(uri, None)
        if workspace is None:
            return
        self._echoes.pop(uri, None)
        try:
            workspace.close_document(uri, editor=self.peer.id)
            document = workspace.document(uri)
        except Exception as exc:
            logger.warning("closing %s: %s", uri, exc)
            self._predictions.on_document_changed(uri)
            return
        if document is None or not document.open:
            # Nobody shows it now: its predictions are for no one. While another editor
            # shows it, that editor's ghost text in flight is not stale.
            self._predictions.on_document_changed(uri)
            self._predictions.forget(uri)
            self._lints.cancel(uri)

    async def close_all(self) -> None:
        for uri in list(self._open):
            self._forget(uri)
