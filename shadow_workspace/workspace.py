"""ShadowWorkspace: the shadow documents of one root, their save lock, history, journal,
disk watcher and linters. Its state is one DocumentStore (store.py); disk_sync and
journal_replay work on that store. Thread-safe: the watcher calls in from its own
thread."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import disk_sync, journal_replay
from .commit import commit_document
from .disk import (
    MAX_DOCUMENT_BYTES,
    read_text,
    refuse_symlinks_below,
    resolve_inside,
    uri_to_path,
)
from .disk_follow import DiskFollower
from .disk_sync import DiskListener
from .document import ShadowDocument
from .history import COALESCE_WINDOW_S, EditHistory
from .journal import Journal, journal_path
from .lint_document import lint_document
from .linting import DEFAULT_LINT_MAX_MB, DEFAULT_LINTERS, LinterSpec, LintReport, lint_text
from .model import (
    Author,
    Diagnostic,
    EditEvent,
    ShadowError,
    TextChange,
    UnknownDocument,
    UnsupportedFile,
)
from .model_edit import ModelEditResult, to_eol
from .pending_diff import change_set_diff
from .project_index import ProjectIndex
from .save_lock import Holder, LockEvent, SaveLock, TakeMode, TakeResult, check_mode
from .size_limits import check_growth, check_text_size
from .store import Conflict, DocumentStore
from .tree_commit import commit_all

log = logging.getLogger(__name__)


class ShadowWorkspace:
    def __init__(
        self,
        root: Path | str,
        journal_dir: Path | str | None = None,
        linters: Mapping[str, LinterSpec] | None = None,
        *,
        holder: Holder = "user",
        watch: bool = True,
        index_project: bool = True,
        history_window_s: float = COALESCE_WINDOW_S,
        max_document_bytes: int = MAX_DOCUMENT_BYTES,
        lint_max_mb: float = DEFAULT_LINT_MAX_MB,
    ) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise ShadowError(f"workspace root is not a directory: {root}")
        self.lock = SaveLock(str(self.root), holder)
        self.history = EditHistory(history_window_s)
        self.linters = dict(DEFAULT_LINTERS if linters is None else linters)
        self.lint_max_chars = int(lint_max_mb * 2**20)
        self.lint_skipped: dict[str, str] = {}  # uri -> why its last lint did not run
        journal = None
        if journal_dir is not None:
            journal = Journal(journal_path(Path(journal_dir), self.root))
        self.store = DocumentStore(self.root, self.lock, self.history, journal, max_document_bytes)
        self._mutex = threading.RLock()
        self.disk = DiskFollower(self.root, self.store, self._mutex)
        if journal is not None:
            journal_replay.restore_from_journal(self.store)
            self.lock.add_listener(self._journal_lock)
        self.index = ProjectIndex(self.root)  # its own thread; buffers reach it from _apply
        self.disk.add_path_listener(self.index.on_disk_change)
        for doc in self.store.documents.values():  # restored with their pending edits
            self.index.update(doc.path, doc.snapshot())
        if index_project:
            self.index.start()
        if watch:
            self.disk.start()

    def _hold(self, key: str, doc: ShadowDocument) -> None:
        """Keep `doc` in the shadow, and watch its folder for changes made outside."""
        self.store.documents[key] = doc
        self.disk.watch_folder_of(doc.path)

    def __repr__(self) -> str:
        return f"ShadowWorkspace({str(self.root)!r}, holder={self.lock.holder})"

    @property
    def conflicts(self) -> dict[str, Conflict]:
        return self.store.conflicts

    # -- lookup --------------------------------------------------------------------------
    def key_for(self, uri: str) -> str:
        """The canonical key of a URI; refused when it resolves outside the root."""
        return self.store.key_for(uri)

    def document(self, uri: str) -> ShadowDocument | None:
        with self._mutex:
            return self.store.get(uri)

    def _require(self, uri: str) -> ShadowDocument:
        found = self.document(uri)
        if found is None:
            raise UnknownDocument(uri)
        return found

    # -- editor documents ----------------------------------------------------------------
    def open_document(
        self, uri: str, text: str, version: int, language_id: str = "", editor: int = 0
    ) -> ShadowDocument:
        """Editor `editor` opened `uri` with `text` at `version`. When another editor shows
        it already, or it has pending model edits and the editor shows the disk text, the
        shadow text stands (the caller brings the editor's buffer to it)."""
        with self._mutex:
            key = self.key_for(uri)
            existing = self.store.documents.get(key)
            if existing is not None and existing.editors.keys() - {editor}:
                existing.editors[editor] = version
                return existing
            if existing is not None and existing.pending and text == existing.base_text:
                existing.editors[editor] = existing.version = version
                existing.language_id = language_id or existing.language_id
                return existing
            path = uri_to_path(uri).absolute()
            check_text_size(path, text, self.store.max_document_bytes)
            on_disk = read_text(resolve_inside(self.root, path), self.store.max_document_bytes)
            doc = ShadowDocument(
                uri,
                path,
                text,
                version,
                on_disk.base,
                on_disk.text,
                language_id=language_id,
                bom=on_disk.bom,
            )
            doc.editors[editor] = version
            self._hold(key, doc)
            self.store.journal_state(doc)
            if text != on_disk.text:  # the buffer's text wins over the disk's
                self.index.update(path, doc.snapshot())
            return doc

    def change_document(
        self, uri: str, version: int | None, changes: Sequence[TextChange], author: Author = "user"
    ) -> ShadowDocument:
        with self._mutex:
            doc = self._require(uri)
            self._apply(doc, list(changes), version, author)
            return doc

    def edit_document(
        self, uri: str, editor: int, version: int, changes: Sequence[TextChange]
    ) -> list[EditEvent]:
        """A keystroke in editor `editor`, whose buffer is now at `version`; the events
        say what changed (in order), to forward to the other editors as they are. The
        shadow's version runs on when several editors (own numbering) or the model edit."""
        with self._mutex:
            doc = self._require(uri)
            events = self._apply(doc, list(changes), version if version >= doc.version else None)
            doc.editors[editor] = version
            return events

    def note_editor_version(self, uri: str, editor: int, version: int) -> None:
        """Editor `editor` applied an edit the shadow holds already (its echo)."""
        with self._mutex:
            doc = self.store.get(uri)
            if doc is not None and editor in doc.editors:
                doc.editors[editor] = version

    def close_document(self, uri: str, editor: int = 0) -> None:
        """Editor `editor` closed it. Once no editor shows it, it is kept while model
        edits are pending, else forgotten."""
        with self._mutex:
            doc = self.store.get(uri)
            if doc is None:
                return
            doc.editors.pop(editor, None)
            if not doc.open and not (doc.model_edits and doc.pending):
                self.store.forget(doc)
                self.index.forget_buffer(doc.path)
                self.lint_skipped.pop(uri, None)

    def load_document(self, uri: str) -> ShadowDocument:
        """The shadow document of `uri`, read from disk when not in the shadow yet."""
        with self._mutex:
            key = self.key_for(uri)
            doc = self.store.documents.get(key)
            if doc is None:
                path = uri_to_path(uri).absolute()
                on_disk = read_text(resolve_inside(self.root, path), self.store.max_document_bytes)
                doc = ShadowDocument(
                    uri, path, on_disk.text, 0, on_disk.base, on_disk.text, bom=on_disk.bom
                )
                self._hold(key, doc)
            return doc

    # -- model edits and the lock --------------------------------------------------------
    def apply_model_edit(self, uri: str, changes: Sequence[TextChange]) -> ModelEditResult:
        """Model holds the lock: the edit lands in the shadow only. User holds it: the
        shadow and then the disk (atomically, only over the base version)."""
        with self._mutex:
            self.check_model_target(uri)
            doc = self.load_document(uri)
            eol = doc.eol
            if eol != "\n":  # keep the file's line endings
                changes = [TextChange(c.range, to_eol(c.text, eol)) for c in changes]
            self._apply(doc, list(changes), None, "model")
            written, conflict = False, None
            if not self.lock.model_holds and doc.pending:
                try:
                    commit_document(self.store, self.root, doc)
                    written = True
                except (ShadowError, OSError) as exc:
                    conflict = str(exc)
                    self.store.conflict(doc, conflict)
            result = ModelEditResult(
                doc.uri, doc.version, self.lock.holder, written, doc.pending, conflict
            )
            self.store.unload_if_clean(doc)
            return result

    @property
    def mutex(self) -> threading.RLock:
        """Held while a caller changes several documents as one step (agent writes, a lock
        take): nothing else changes the workspace meanwhile (an editor's change waits), so
        what the caller reads before and after the step is that step's doing alone."""
        return self._mutex

    def unload_if_clean(self, uri: str) -> None:
        with self._mutex:
            doc = self.store.get(uri)
            if doc is not None:
                self.store.unload_if_clean(doc)

    def release_unless_pending(self) -> list[str]:
        """Give the lock to the model unless the user has unsaved edits: those files are
        returned then, and the lock stays (an agent never takes it from them)."""
        with self._mutex:
            pending = self.pending_uris()
            if not pending:
                self.release()
            return pending

    def check_model_target(self, uri: str) -> None:
        """The model writes only regular files inside the root, never through a link."""
        path = uri_to_path(uri)
        resolve_inside(self.root, path)
        refuse_symlinks_below(self.root, path)
        if path.is_dir():
            raise UnsupportedFile(f"{path}: a directory, not a file")

    def note_saved(self, uri: str) -> bool:
        """The editor saved `uri`: the disk is the new base. True when the model holds the
        lock (the language server warns the user that they saved over its lock)."""
        with self._mutex:
            doc = self.document(uri)
            if doc is not None:
                disk_sync.rebase_on_disk(self.store, doc)
            return self.lock.model_holds

    def take(self, mode: str = "keep") -> TakeResult:
        """The user takes the lock: commit, discard or keep the pending change set.

        commit writes the whole shadow text of every pending document: the user's unsaved
        typing in such a file is saved along with the model's edits. discard reverts only
        the model's edits: the user's unsaved typing stays (pending, as in their editor),
        and model edits the user edited inside are theirs now, kept and listed in `kept`.
        keep leaves everything pending (see `pending_diff`)."""
        chosen: TakeMode = check_mode(mode)
        with self._mutex:
            result = TakeResult(str(self.root), chosen)
            if chosen == "commit":  # all files or none (tree_commit)
                commit_all(self.store, self.root, result)
            elif chosen == "discard":
                documents = list(self.store.documents.values())
                for doc in [d for d in documents if disk_sync.has_model_edits(d)]:
                    disk_sync.discard_model_edits(self.store, doc, result)
            result.pending = self.pending_uris()
            result.diff = self.pending_diff() if result.pending else ""
            self.lock.set_holder("user", f"take:{chosen}")
            self._sync_journal()
            return result

    def release(self) -> LockEvent | None:
        """Give the lock to the model."""
        event = self.lock.set_holder("model", "release")
        self._sync_journal()
        return event

    def toggle(self, mode: str = "keep") -> dict[str, Any]:
        if self.lock.model_holds:
            return self.take(mode).to_dict()
        self.release()
        return self.lock_status()

    def lock_status(self) -> dict[str, Any]:
        with self._mutex:
            return {
                "root": str(self.root),
                "holder": self.lock.holder,
                "pending": self.pending_uris(),
                "conflicts": [c.to_dict() for c in self.conflicts.values()],
                "documents": len(self.store.documents),
                "journal_error": None if self.store.journal is None else self.store.journal.error,
            }

    def pending_documents(self) -> list[ShadowDocument]:
        with self._mutex:
            return self.store.pending_documents()

    def pending_uris(self) -> list[str]:
        return [doc.uri for doc in self.pending_documents()]

    def open_documents(self) -> list[ShadowDocument]:
        """The documents some editor shows."""
        with self._mutex:
            return [doc for doc in self.store.documents.values() if doc.open]

    def has_pending(self) -> bool:
        return bool(self.pending_documents())

    def pending_diff(self) -> str:
        with self._mutex:
            return change_set_diff(self.pending_documents(), self.root)

    # -- disk ----------------------------------------------------------------------------
    def add_disk_listener(self, listener: DiskListener) -> Callable[[], None]:
        """Hear of disk events (called in the watcher's thread); returns a remover."""
        return self.disk.add_listener(listener)

    def on_disk_change(self, path: Path) -> None:
        """A file under the root changed on disk (called by the watcher)."""
        self.disk.on_disk_change(path)

    # -- edits and journal ---------------------------------------------------------------

    def _apply(
        self,
        doc: ShadowDocument,
        changes: list[TextChange],
        version: int | None,
        author: Author = "user",
    ) -> list[EditEvent]:
        check_growth(doc, changes, self.store.max_document_bytes)
        events = doc.apply(changes, version, author)
        for event in events:
            self.history.record(event)
        small = doc.length <= self.index.limits.max_file_bytes  # else the index reads the disk
        self.index.update(doc.path, doc.snapshot() if small else None)  # joined in its thread
        self.store.journal_edit(doc, changes, author)
        return events

    def _journal_lock(self, event: LockEvent) -> None:
        with self._mutex:
            if self.store.journal is not None:
                self.store.journal.lock(event.holder)

    def _sync_journal(self) -> None:
        with self._mutex:
            self.store.sync_journal()

    # -- linting (of shadow documents and of scratch texts: predictions) -----------------
    async def lint_report(self, uri: str) -> LintReport:
        """Lint the document as it is now, off the calling event loop (lint_document)."""
        return await lint_document(self, uri)

    async def lint(self, uri: str) -> list[Diagnostic]:
        return (await self.lint_report(uri)).diagnostics

    async def lint_text_report(
        self, path: Path | str, text: str, language_id: str | None = None
    ) -> LintReport:
        return await lint_text(
            self.linters, Path(path), text, language_id, self.root, self.lint_max_chars
        )

    async def lint_text(
        self, path: Path | str, text: str, language_id: str | None = None
    ) -> list[Diagnostic]:
        return (await self.lint_text_report(path, text, language_id)).diagnostics

    def close(self) -> None:
        """Stop the watcher, flush the journal."""
        self.disk.stop()
        self.index.close()
        if self.store.journal is not None:
            self.store.journal.close()
            self.store.journal = None
