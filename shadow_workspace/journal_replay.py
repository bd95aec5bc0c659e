"""Journal snapshots of pending documents, model spans included, and the replay that
brings them back on start: the snapshot, then its edits in order (each edit record names
its author, so replaying it moves or grows the model spans exactly as it did live).
Functions here take the workspace's DocumentStore and run under the workspace's mutex."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from . import disk_sync
from .disk import DiskBase
from .document import ShadowDocument
from .intent import finish_interrupted
from .journal import decode_change, replay
from .model import ShadowError
from .model_spans import ModelSpans, Splice, narrowed
from .store import DocumentStore

log = logging.getLogger(__name__)


def restore_from_journal(store: DocumentStore) -> None:
    """Finish a commit a killed process left, then replay the journal: every pending
    document comes back; one whose file changed on disk meanwhile is a conflict (both
    versions kept), one the finished commit wrote is no longer pending. Then compact."""
    journal = store.journal
    assert journal is not None
    finish_interrupted(journal.path, store.root)  # a killed commit: the new tree
    state = replay(journal.path)
    if state.holder in ("user", "model"):
        store.lock.set_holder(state.holder, "restored")  # type: ignore[arg-type]
    for key, entry in state.entries.items():
        try:
            doc = rebuild(entry.snapshot, entry.edits)
        except (ShadowError, KeyError, ValueError, TypeError) as exc:
            log.error("journal entry for %s unusable: %s", key, exc)
            continue
        store.documents[key] = doc
        disk_sync.remove_torn_temp_files(doc.path)  # a killed commit's leftovers
        event = disk_sync.follow_disk(store, doc)
        if event is not None and event.kind == "conflict":
            log.warning("restored %s: %s", doc.uri, event.detail)
        if not doc.pending:
            store.documents.pop(key, None)
    try:
        journal.rewrite(store.pending_snapshots(), store.lock.holder)
    except OSError as exc:  # a full disk at start: the old file still replays the same
        log.error("journal %s not compacted at start: %s", journal.path, exc)
        journal.error = f"journal not compacted: {exc}"


def rebuild(snapshot: dict[str, Any], edits: list[dict[str, Any]]) -> ShadowDocument:
    doc = ShadowDocument(
        str(snapshot["uri"]),
        Path(snapshot["path"]),
        str(snapshot["text"]),
        int(snapshot["version"]),
        DiskBase.from_dict(snapshot["base"]),
        str(snapshot["base_text"]),
        language_id=str(snapshot.get("language_id", "")),
        bom=bool(snapshot.get("bom", False)),
    )
    doc.model_edits = int(snapshot.get("model_edits", 0))
    doc.model_spans = spans_of(snapshot, doc)
    doc.deleted = bool(snapshot.get("deleted", False))
    renamed_from = snapshot.get("renamed_from")
    doc.renamed_from = None if renamed_from is None else Path(renamed_from)
    for record in edits:
        changes = [decode_change(change) for change in record["changes"]]
        doc.apply(changes, int(record["version"]), record.get("author", "user"))
    return doc


def spans_of(snapshot: dict[str, Any], doc: ShadowDocument) -> ModelSpans:
    """The snapshot's model spans. A snapshot from before spans were journaled knows only
    that the model edited: the whole change against the disk counts as the model's, as
    it did when that journal was written. Spans that cannot be right count as none: a
    discard then leaves the text alone rather than guess and revert the user's typing."""
    if "model_spans" in snapshot:
        try:
            spans = ModelSpans.from_records(list(snapshot["model_spans"]))
            spans.check(len(doc.text))
            spans.taken_over = int(snapshot.get("model_spans_taken", 0))
            return spans
        except (ValueError, TypeError) as exc:
            log.error("journal: model spans of %s unusable (%s): none kept", doc.uri, exc)
            return ModelSpans()
    spans = ModelSpans()
    if doc.model_edits and doc.pending:
        spans.model_edit(narrowed(Splice(0, doc.base_text, doc.text)))
    return spans
