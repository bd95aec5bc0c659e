"""Discarding the model's pending edits of a document while keeping the user's: the
user's unsaved typing in the same file is theirs and survives a discard. Runs under the
workspace's mutex."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import disk_sync
from .document import ShadowDocument
from .save_lock import TakeResult

if TYPE_CHECKING:
    from .workspace import ShadowWorkspace


def has_model_edits(doc: ShadowDocument) -> bool:
    """The document holds model edits to discard, or ones the user took over."""
    return bool(doc.model_spans) or doc.model_spans.taken_over > 0


def discard_model_edits(ws: ShadowWorkspace, doc: ShadowDocument, result: TakeResult) -> None:
    """Revert the model spans of `doc`. With no user edits left the document is the disk
    text again and follows the disk as before (the current disk text after a conflict);
    with user edits left it stays pending with them, journaled anew so that a restart
    does not bring the model's edits back."""
    if doc.model_spans.taken_over:
        result.kept.append(doc.uri)
    reverted = doc.revert_model_edits() > 0
    doc.model_spans.clear()
    if reverted:
        result.discarded.append(doc.uri)
    if not doc.pending:
        disk_sync.discard(ws, doc)
    elif reverted:
        ws._journal_state(ws.key_for(doc.uri), doc)
