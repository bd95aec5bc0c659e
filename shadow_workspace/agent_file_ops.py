"""Deletes and renames from coding agents, held in the shadow like text edits: a deleted
file is a document marked deleted (its text kept, so a discard brings it back), a rename
is its new file created with the text (changed or not) plus its old file deleted, the
new file remembering the old one (so the diff shows `rename from/to` and a commit writes
the new file before removing the old). Journaled as the documents' snapshots.

`apply_changes` takes writes, deletes and renames together (a patch's files): every
target checked first (inside the root, no link, not a directory, existing where it must
and not where it must not, the text it was based on), then all applied or none."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .agent_edits import (
    AgentWrite,
    StaleText,
    WrittenFile,
    apply_one,
    check_text,
    check_total,
    check_write,
    claim_lock,
    put_back,
    read_shadow_text,
)
from .disk import path_to_uri
from .model import ShadowError
from .model_edit import ModelEditResult
from .workspace import ShadowWorkspace


class FileOpConflict(ShadowError):
    """The target of a delete or rename is missing, exists already, or is a folder."""


@dataclass(frozen=True, slots=True)
class AgentDelete:
    uri: str
    expected_sha256: str | None = None  # the text the agent read (refused if it moved on)


@dataclass(frozen=True, slots=True)
class AgentRename:
    uri: str  # the old file
    new_uri: str
    text: str | None = None  # the new file's text; None: the old file's, unchanged
    expected_sha256: str | None = None  # of the old file's text


AgentChange = AgentWrite | AgentDelete | AgentRename


def apply_changes(
    workspace: ShadowWorkspace, changes: list[AgentChange], take: bool = False
) -> list[WrittenFile]:
    """Put every change into the shadow, or none (ShadowError says why)."""
    if not changes:
        raise ShadowError("nothing to change")
    keys = [workspace.key_for(uri) for change in changes for uri in _uris(change)]
    if len(set(keys)) != len(keys):
        raise ShadowError("a file is named twice in one call: give each file once")
    check_total([c for c in changes if isinstance(c, AgentWrite)])
    with workspace.mutex:
        for change in changes:
            _check(workspace, change)
        claim_lock(workspace, take)
        return _apply_all(workspace, changes)


def _uris(change: AgentChange) -> tuple[str, ...]:
    return (change.uri, change.new_uri) if isinstance(change, AgentRename) else (change.uri,)


def _check(workspace: ShadowWorkspace, change: AgentChange) -> None:
    if isinstance(change, AgentWrite):
        check_write(workspace, change)
        return
    _check_existing(workspace, change.uri, change.expected_sha256)
    if isinstance(change, AgentRename):
        workspace.check_model_target(change.new_uri)  # a folder, a link: refused
        target = read_shadow_text(workspace, change.new_uri)
        if target.exists:
            raise FileOpConflict(f"{target.path} exists: a rename never replaces a file")
        if change.text is not None:
            check_text(target.path, change.text)


def _check_existing(workspace: ShadowWorkspace, uri: str, expected: str | None) -> None:
    workspace.check_model_target(uri)
    current = read_shadow_text(workspace, uri)
    if not current.exists:
        raise FileOpConflict(f"no such file: {current.path} (neither in the shadow nor on disk)")
    doc = workspace.document(uri)
    if doc is not None and doc.open and doc.pending and not doc.model_edits:
        raise FileOpConflict(  # a commit would remove the user's typing with the file
            f"{current.path} has unsaved edits in the user's editor: nothing changed "
            "(ask the user to save or discard them first)"
        )
    if expected is not None and expected != current.sha256:
        raise StaleText(
            f"{current.path} changed since it was read (sha256 {current.sha256[:12]}..., "
            f"expected {str(expected)[:12]}...): read it again, nothing changed"
        )


def _apply_all(workspace: ShadowWorkspace, changes: list[AgentChange]) -> list[WrittenFile]:
    done: list[WrittenFile] = []
    try:
        for change in changes:
            done.extend(_apply_one(workspace, change))
    except BaseException:
        for written in reversed(done):  # all or nothing, even for a failure not foreseen
            _undo(workspace, written)
        raise
    return done


def _apply_one(workspace: ShadowWorkspace, change: AgentChange) -> list[WrittenFile]:
    if isinstance(change, AgentWrite):
        return [apply_one(workspace, change)]
    if isinstance(change, AgentDelete):
        return [mark_deleted(workspace, change.uri)]
    old = read_shadow_text(workspace, change.uri)
    text = old.text if change.text is None else change.text
    created = apply_one(workspace, AgentWrite(change.new_uri, text))
    doc = workspace.load_document(change.new_uri)  # held even when its text is ""
    if not doc.base.exists:  # a rename onto a file deleted in the shadow: an edit of it
        doc.renamed_from = old.path
        workspace.store.journal_state(doc)
    renamed = _as_rename(created, old.path)
    try:
        deleted = mark_deleted(workspace, change.uri)
    except BaseException:
        _undo(workspace, renamed)
        raise
    return [renamed, deleted]


def _as_rename(written: WrittenFile, source: Path) -> WrittenFile:
    return WrittenFile(
        written.uri,
        written.path,
        written.before,
        written.after,
        written.shown,
        written.language_id,
        written.result,
        "rename",
        source,
    )


def mark_deleted(workspace: ShadowWorkspace, uri: str) -> WrittenFile:
    """Delete the file in the shadow; the disk keeps it until the user commits."""
    with workspace.mutex:
        doc = workspace.load_document(uri)
        before = doc.text
        doc.deleted = True
        doc.model_edits += 1
        workspace.store.journal_state(doc)
        result = ModelEditResult(doc.uri, doc.version, workspace.lock.holder, False, doc.pending)
        workspace.unload_if_clean(uri)  # a file created in the shadow: gone, nothing pending
        return WrittenFile(
            doc.uri, doc.path, before, "", doc.open, doc.language_id, result, "delete"
        )


def _undo(workspace: ShadowWorkspace, written: WrittenFile) -> None:
    doc = workspace.document(written.uri)
    if written.operation == "delete" and doc is not None:
        doc.deleted = False
        doc.model_edits = max(0, doc.model_edits - 1)
        workspace.store.journal_state(doc)
        workspace.unload_if_clean(written.uri)
        return
    if written.operation == "rename" and doc is not None:
        doc.renamed_from = None
    put_back(workspace, written)
    workspace.unload_if_clean(written.uri)


def shadow_file_exists(workspace: ShadowWorkspace, path: Path) -> bool:
    """`path` is a file as the shadow sees it: pending creations, deletes and renames
    included (import_check's view of the workspace)."""
    doc = workspace.document(path_to_uri(path))
    if doc is not None:
        return not doc.deleted and (doc.base.exists or doc.pending)
    return path.is_file()
