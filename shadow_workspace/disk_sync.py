"""Keeping shadow documents and the disk apart but consistent: following outside
changes, rebasing after saves, discarding, and restoring pending edits from the journal.
Functions here run under the workspace's mutex."""

from __future__ import annotations

import contextlib
import glob
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .conflicts import Conflict, DiskEvent
from .disk import TEMP_SUFFIX, read_text, resolve_inside, same_content
from .document import ShadowDocument
from .errors import ShadowError

if TYPE_CHECKING:
    from .workspace import ShadowWorkspace

log = logging.getLogger(__name__)


def snapshot_of(doc: ShadowDocument) -> dict[str, Any]:
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
    }


def follow_disk(ws: ShadowWorkspace, doc: ShadowDocument) -> DiskEvent | None:
    """The file of `doc` changed on disk: follow it, rebase, or report a conflict."""
    try:
        on_disk = read_text(resolve_inside(ws.root, doc.path))
    except ShadowError as exc:
        return _conflict(ws, doc, str(exc)) if doc.pending else _drop(ws, doc, str(exc))
    if same_content(on_disk.base, doc.base):
        return None  # our own write, or only the mtime changed
    key = ws.key_for(doc.uri)
    if on_disk.text == doc.text:
        doc.rebase(on_disk.base, on_disk.text)
        ws.conflicts.pop(key, None)
        ws._journal_state(key, doc)
        return DiskEvent(doc.uri, "rebased")
    if doc.pending:
        return _conflict(ws, doc, "changed on disk while shadow edits are pending")
    if not on_disk.base.exists and not doc.open:
        return _drop(ws, doc, "deleted on disk")
    if doc.open:  # the editor owns the buffer; it reloads and sends the change
        doc.rebase(on_disk.base, on_disk.text)
        return DiskEvent(doc.uri, "changed")
    doc.replace_text(on_disk.text)
    doc.rebase(on_disk.base, on_disk.text)
    return DiskEvent(doc.uri, "followed")


def _conflict(ws: ShadowWorkspace, doc: ShadowDocument, reason: str) -> DiskEvent:
    ws.conflicts[ws.key_for(doc.uri)] = Conflict(doc.uri, str(doc.path), reason)
    return DiskEvent(doc.uri, "conflict", reason)


def _drop(ws: ShadowWorkspace, doc: ShadowDocument, reason: str) -> DiskEvent:
    ws._forget(ws.key_for(doc.uri))
    return DiskEvent(doc.uri, "dropped", reason)


def rebase_on_disk(ws: ShadowWorkspace, doc: ShadowDocument) -> None:
    """The user saved: whatever the disk holds now is the base."""
    on_disk = read_text(resolve_inside(ws.root, doc.path))
    doc.rebase(on_disk.base, on_disk.text)
    key = ws.key_for(doc.uri)
    ws.conflicts.pop(key, None)
    ws._journal_state(key, doc)


def discard(ws: ShadowWorkspace, doc: ShadowDocument) -> None:
    """Drop the pending edits: the shadow takes the disk text (current disk on conflict)."""
    key = ws.key_for(doc.uri)
    try:
        on_disk = read_text(resolve_inside(ws.root, doc.path))
        text, base = on_disk.text, on_disk.base
    except ShadowError:
        text, base = doc.base_text, doc.base
    doc.replace_text(text)
    doc.rebase(base, text)
    doc.model_edits = 0
    ws.conflicts.pop(key, None)
    if doc.open:
        ws._journal_state(key, doc)
    else:
        ws._forget(key)


def remove_torn_temp_files(path: Path) -> None:
    """A commit killed before its rename leaves its temp file (".NAME.*.shadowtab")."""
    for temp in path.parent.glob(f".{glob.escape(path.name)}.*{TEMP_SUFFIX}"):
        with contextlib.suppress(OSError):
            temp.unlink()
            log.info("removed the temp file of an interrupted commit: %s", temp)
