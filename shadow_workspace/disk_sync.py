"""Keeping shadow documents and the disk apart but consistent: following outside
changes, rebasing after saves, discarding (all pending edits, or only the model's while
the user's unsaved typing survives). Functions here take the workspace's DocumentStore
and run under the workspace's mutex."""

from __future__ import annotations

import contextlib
import glob
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from .disk import MISSING, TEMP_SUFFIX, read_text, resolve_inside, same_content
from .document import ShadowDocument
from .model import ShadowError
from .save_lock import TakeResult
from .store import DocumentStore

log = logging.getLogger(__name__)

DiskEventKind = Literal["followed", "rebased", "changed", "conflict", "dropped"]


@dataclass(frozen=True, slots=True)
class DiskEvent:
    """followed: a document without pending edits took the disk text; rebased: the disk
    now holds the shadow text; changed: an open, clean document's file changed (the
    editor reloads it); conflict: pending edits and a different disk, both kept;
    dropped: a clean, closed document's file went away."""

    uri: str
    kind: DiskEventKind
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


DiskListener = Callable[[DiskEvent], None]


def follow_disk(store: DocumentStore, doc: ShadowDocument) -> DiskEvent | None:
    """The file of `doc` changed on disk: follow it, rebase, or report a conflict.

    A document awaiting the editor's reload after an earlier change holds no edits: its
    text is the disk text before that change. It follows the disk again ("changed"):
    Path.write_text truncates, then writes, and a watcher that read the empty file first
    must not take the full one for a conflict, nor keep the empty one as the base."""
    edited = doc.pending and not doc.awaiting_reload
    if doc.deleted and not doc.path.exists():  # the disk agrees with the shadow now
        doc.rebase(MISSING, "")
        if not doc.open:
            return _drop(store, doc, "deleted on disk, as in the shadow")
        store.resolved(doc)
        return DiskEvent(doc.uri, "rebased")
    try:
        on_disk = read_text(resolve_inside(store.root, doc.path), store.max_document_bytes)
    except ShadowError as exc:
        return _conflict(store, doc, str(exc)) if edited else _drop(store, doc, str(exc))
    if same_content(on_disk.base, doc.base):
        return None  # our own write, or only the mtime changed
    if on_disk.text == doc.text:
        doc.rebase(on_disk.base, on_disk.text)
        store.resolved(doc)
        return DiskEvent(doc.uri, "rebased")
    if edited:
        return _conflict(store, doc, "changed on disk while shadow edits are pending")
    if not on_disk.base.exists and not doc.open:
        return _drop(store, doc, "deleted on disk")
    if doc.open:  # the editor owns the buffer; it reloads and sends the change
        doc.rebase_under_editor(on_disk.base, on_disk.text)
        return DiskEvent(doc.uri, "changed")
    doc.replace_text(on_disk.text)
    doc.rebase(on_disk.base, on_disk.text)
    return DiskEvent(doc.uri, "followed")


def _conflict(store: DocumentStore, doc: ShadowDocument, reason: str) -> DiskEvent:
    store.conflict(doc, reason)
    return DiskEvent(doc.uri, "conflict", reason)


def _drop(store: DocumentStore, doc: ShadowDocument, reason: str) -> DiskEvent:
    store.forget(doc)
    return DiskEvent(doc.uri, "dropped", reason)


def rebase_on_disk(store: DocumentStore, doc: ShadowDocument) -> None:
    """The user saved: whatever the disk holds now is the base."""
    on_disk = read_text(resolve_inside(store.root, doc.path), store.max_document_bytes)
    doc.rebase(on_disk.base, on_disk.text)
    store.resolved(doc)


def discard(store: DocumentStore, doc: ShadowDocument) -> None:
    """Drop the pending edits: the shadow takes the disk text (current disk on conflict)."""
    try:
        on_disk = read_text(resolve_inside(store.root, doc.path), store.max_document_bytes)
        text, base = on_disk.text, on_disk.base
    except ShadowError:
        text, base = doc.base_text, doc.base
    doc.replace_text(text)
    doc.rebase(base, text)
    doc.model_edits = 0
    if doc.open:
        store.resolved(doc)
    else:
        store.forget(doc)


def has_model_edits(doc: ShadowDocument) -> bool:
    """The document holds model edits to discard, or ones the user took over, or is a
    file the model deleted or created by a rename."""
    if doc.deleted or doc.renamed_from is not None:
        return True
    return bool(doc.model_spans) or doc.model_spans.taken_over > 0


def discard_model_edits(store: DocumentStore, doc: ShadowDocument, result: TakeResult) -> None:
    """Revert the model spans of `doc`, keeping the user's unsaved typing. With no user
    edits left the document is the disk text again and follows the disk as before (the
    current disk text after a conflict); with user edits left it stays pending with
    them, journaled anew so that a restart does not bring the model's edits back."""
    if doc.model_spans.taken_over:
        result.kept.append(doc.uri)
    file_op = doc.deleted or doc.renamed_from is not None
    doc.deleted, doc.renamed_from = False, None
    reverted = doc.revert_model_edits() > 0 or file_op
    doc.model_spans.clear()
    if reverted:
        result.discarded.append(doc.uri)
    if not doc.pending:
        discard(store, doc)
    elif reverted:
        store.journal_state(doc)


def remove_torn_temp_files(path: Path) -> None:
    """A commit killed before its rename leaves its temp file (".NAME.*.shadowtab")."""
    for temp in path.parent.glob(f".{glob.escape(path.name)}.*{TEMP_SUFFIX}"):
        with contextlib.suppress(OSError):
            temp.unlink()
            log.info("removed the temp file of an interrupted commit: %s", temp)
