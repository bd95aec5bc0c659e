"""Committing or discarding some of the pending files, the lock left with its holder: the
user reviews the change set and keeps part of it. A rename is one change: naming either
of its files takes both. A commit of several files is one step, as `lock take --commit`
is (tree_commit); a discard reverts the model's edits, deletes and renames of those
files and keeps the user's unsaved typing, as `lock take --discard` does. The editors'
pickers list the pending files with what changed in each (pending_changes)."""

from __future__ import annotations

from . import disk_sync
from .disk import path_to_uri
from .document import ShadowDocument
from .model import ShadowError
from .save_lock import TakeMode, TakeResult
from .tree_commit import commit_all
from .workspace import ShadowWorkspace


def take_some(workspace: ShadowWorkspace, mode: TakeMode, uris: list[str]) -> TakeResult:
    """Commit or discard the pending files `uris` (ShadowError when one is not pending)."""
    if mode not in ("commit", "discard"):
        raise ShadowError(f"commit or discard some files, not {mode!r}")
    if not uris:
        raise ShadowError("no file given: name the pending files to commit or discard")
    with workspace.mutex:
        chosen = selected(workspace, uris)
        result = TakeResult(str(workspace.root), mode, workspace.lock.holder)
        if mode == "commit":
            commit_all(workspace.store, workspace.root, result, chosen)
        else:
            for doc in chosen:
                if disk_sync.has_model_edits(doc):
                    disk_sync.discard_model_edits(workspace.store, doc, result)
        result.pending = workspace.pending_uris()
        result.diff = workspace.pending_diff() if result.pending else ""
        workspace.store.sync_journal()
        return result


def selected(workspace: ShadowWorkspace, uris: list[str]) -> list[ShadowDocument]:
    """The pending documents named, with the other file of each rename among them."""
    pending = {workspace.key_for(doc.uri): doc for doc in workspace.pending_documents()}
    keys = {workspace.key_for(uri) for uri in uris}
    missing = sorted(keys - pending.keys())
    if missing:
        raise ShadowError(f"not pending in the shadow: {', '.join(missing[:5])}: nothing done")
    by_path = {doc.path: doc for doc in pending.values()}
    chosen = {key: pending[key] for key in keys}
    for doc in pending.values():
        old = by_path.get(doc.renamed_from) if doc.renamed_from is not None else None
        if old is None or not old.deleted:
            continue
        pair = {workspace.key_for(doc.uri): doc, workspace.key_for(old.uri): old}
        if pair.keys() & chosen.keys():
            chosen.update(pair)
    return list(chosen.values())


def pending_changes(workspace: ShadowWorkspace) -> list[dict[str, str]]:
    """Each pending file (`uri`) and its `change`: edited, created, deleted, or renamed
    (`from`: the old file's URI); a rename's old file is deleted, with `renamed_to`."""
    with workspace.mutex:
        pending = workspace.pending_documents()
        new_names = {
            doc.renamed_from: doc.uri
            for doc in pending
            if doc.renamed_from is not None and not doc.deleted
        }
        changes = []
        for doc in pending:
            change = {"uri": doc.uri, "change": _change_of(doc)}
            if doc.renamed_from is not None and not doc.deleted:
                change["from"] = path_to_uri(doc.renamed_from)
            elif doc.deleted and doc.path in new_names:
                change["renamed_to"] = new_names[doc.path]
            changes.append(change)
        return changes


def _change_of(doc: ShadowDocument) -> str:
    if doc.deleted:
        return "deleted"
    if doc.renamed_from is not None:
        return "renamed"
    return "edited" if doc.base.exists else "created"
