"""DocumentStore: the state of one root's shadow, in one object: its documents (by
canonical key), their edit history, the conflicts found on them, the lock and the
journal bookkeeping. The workspace,
disk_sync and journal_replay all change it through these methods, under the
workspace's mutex."""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .disk import MAX_DOCUMENT_BYTES, path_to_uri, resolve_inside, uri_to_path
from .document import ShadowDocument
from .history import EditHistory
from .journal import COMPACT_BYTES, Journal
from .model import Author, TextChange
from .save_lock import SaveLock

log = logging.getLogger(__name__)
COMPACT_CHECK_EVERY = 2000  # journaled edits between checks of the journal's size
JOURNAL_RETRY_S = 1.0  # a journal that failed to write is retried this often, on edits


@dataclass(frozen=True, slots=True)
class Conflict:
    """The disk changed under a document with pending shadow edits: both versions are
    kept, nothing is merged."""

    uri: str
    path: str
    reason: str
    time: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def snapshot_of(doc: ShadowDocument) -> dict[str, Any]:
    """What the journal keeps of a pending document, model spans included."""
    spans = doc.model_spans
    return {
        "uri": doc.uri,
        "path": str(doc.path),
        "version": doc.version,
        "language_id": doc.language_id,
        "base": doc.base.to_dict(),
        "base_text": doc.base_text,
        "text": doc.text,
        "bom": doc.bom,
        "model_edits": doc.model_edits,
        "model_spans": spans.to_records(),
        "model_spans_taken": spans.taken_over,
        "deleted": doc.deleted,
        "renamed_from": None if doc.renamed_from is None else str(doc.renamed_from),
    }


class DocumentStore:
    def __init__(
        self,
        root: Path,
        lock: SaveLock,
        history: EditHistory,
        journal: Journal | None = None,
        max_document_bytes: int = MAX_DOCUMENT_BYTES,
    ) -> None:
        self.root = root
        self.max_document_bytes = max_document_bytes  # larger documents are refused
        self.lock = lock
        self.history = history
        self.documents: dict[str, ShadowDocument] = {}
        self.conflicts: dict[str, Conflict] = {}
        self.journal = journal
        self._keys: dict[str, str] = {}  # uri -> canonical key, checked inside the root once
        self._edits_since_check = 0
        self._journal_retry_at = -JOURNAL_RETRY_S

    # -- lookup ----------------------------------------------------------------------
    def key_for(self, uri: str) -> str:
        """The canonical key of a URI; refused when it resolves outside the root."""
        key = self._keys.get(uri)
        if key is None:
            path = uri_to_path(uri)
            resolve_inside(self.root, path)
            key = path_to_uri(path.absolute())
            self._keys[uri] = key
        return key

    def get(self, uri: str) -> ShadowDocument | None:
        return self.documents.get(self.key_for(uri))

    def pending_documents(self) -> list[ShadowDocument]:
        return [doc for doc in self.documents.values() if doc.pending]

    # -- documents and conflicts -----------------------------------------------------
    def conflict(self, doc: ShadowDocument, reason: str) -> Conflict:
        found = Conflict(doc.uri, str(doc.path), reason)
        self.conflicts[self.key_for(doc.uri)] = found
        return found

    def resolved(self, doc: ShadowDocument) -> None:
        """`doc` agrees with the disk again (rebased, committed, discarded): journal it."""
        key = self.key_for(doc.uri)
        self.conflicts.pop(key, None)
        self.journal_state(doc)

    def unload(self, doc: ShadowDocument) -> None:
        """Drop `doc` from memory (nothing pending; its edit history stays)."""
        key = self.key_for(doc.uri)
        self.documents.pop(key, None)
        self.conflicts.pop(key, None)

    def unload_if_clean(self, doc: ShadowDocument) -> None:
        """A document no editor shows, now equal to the disk, need not stay in memory
        (its edit history stays for the predictor)."""
        if not doc.open and not doc.pending:
            self.unload(doc)

    def forget(self, doc: ShadowDocument) -> None:
        """Drop `doc`, its edit history and its journal entry."""
        self.unload(doc)
        self.history.forget(doc.uri)
        if self.journal is not None:
            self.journal.drop(self.key_for(doc.uri))

    # -- journal ---------------------------------------------------------------------
    def journal_state(self, doc: ShadowDocument) -> None:
        """Journal a snapshot when `doc` is pending, a drop when it no longer is."""
        if self.journal is None:
            return
        key = self.key_for(doc.uri)
        if doc.pending:
            self.journal.snapshot(key, snapshot_of(doc))
        else:
            self.journal.drop(key)

    def journal_edit(self, doc: ShadowDocument, changes: list[TextChange], author: Author) -> None:
        """Append the edit when `doc` is journaled already, else journal its state."""
        key = self.key_for(doc.uri)
        if self.journal is not None and self.journal.stale:
            self._retry_journal()
            return
        if self.journal is None or key not in self.journal.journaled:
            self.journal_state(doc)
            return
        self.journal.edit(key, doc.version, author, changes)
        self._edits_since_check += 1
        if self._edits_since_check >= COMPACT_CHECK_EVERY:
            self._edits_since_check = 0
            self.sync_journal()  # compacts a journal grown past its limit

    def pending_snapshots(self) -> dict[str, dict[str, Any]]:
        """A snapshot of every pending document by key: what a compacted journal holds."""
        return {self.key_for(doc.uri): snapshot_of(doc) for doc in self.pending_documents()}

    def sync_journal(self) -> None:
        if self.journal is None:
            return
        if self.journal.stale or self.journal.size() > COMPACT_BYTES:
            self.compact_journal()
        self.journal.sync()

    def _retry_journal(self) -> None:
        """After a failed journal write: rewrite it whole from the shadow, at most once
        per JOURNAL_RETRY_S (each try on a full disk costs a snapshot of every document)."""
        now = time.monotonic()
        if now - self._journal_retry_at < JOURNAL_RETRY_S:
            return
        self._journal_retry_at = now
        self.compact_journal()

    def compact_journal(self) -> None:
        assert self.journal is not None
        try:
            self.journal.rewrite(self.pending_snapshots(), self.lock.holder)
        except OSError as exc:  # keep appending to the old file
            log.error("journal compaction failed: %s", exc)
