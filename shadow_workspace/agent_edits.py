"""Edits from coding agents (the CLI, an MCP client): whole new texts put into the shadow
as model edits, all files or none (deletes and renames: agent_file_ops; unified diffs:
agent_patch).

The agent writes only while the model holds the save lock: it may take the lock when
asked to (`take`) and the user has nothing unsaved, never from a user with pending
edits. Every target is checked (inside the root, no symlink, text not binary, size,
the text it was based on) before the first edit lands, so a refused call changes
nothing, the lock included."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from .disk import path_to_uri, read_text, resolve_inside, uri_to_path
from .model import DocumentTooLarge, ShadowError, UnsupportedFile
from .model_edit import ModelEditResult
from .model_spans import minimal_change
from .workspace import ShadowWorkspace

# One call writes at most this much text in all: an agent's edit is source code a person
# reviews, and the control socket's frames stop at 16 MiB.
MAX_AGENT_WRITE_BYTES = 8 * 1024 * 1024


class LockRefused(ShadowError):
    """The user holds the save lock and the agent may not take it."""


class StaleText(ShadowError):
    """The shadow text is no longer the one the new text was based on."""


@dataclass(frozen=True, slots=True)
class ShadowText:
    """A file as the shadow sees it: pending edits included, else the disk text."""

    uri: str
    path: Path
    text: str
    exists: bool  # on disk or in the shadow
    pending: bool

    @property
    def sha256(self) -> str:
        return text_sha256(self.text)


@dataclass(frozen=True, slots=True)
class AgentWrite:
    """The whole new text of one file; `expected_sha256` (optional): the sha256 of the
    text the agent based it on (from a read), refused when the shadow moved on since."""

    uri: str
    text: str
    expected_sha256: str | None = None


@dataclass(frozen=True, slots=True)
class WrittenFile:
    uri: str
    path: Path
    before: str
    after: str
    shown: bool  # an editor shows it: its buffer held `before` and must get the edit
    language_id: str
    result: ModelEditResult
    operation: str = "write"  # or "delete", "rename" (agent_file_ops)
    source: Path | None = None  # a rename's old file


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def target_uri(workspace: ShadowWorkspace, path: str) -> str:
    """The URI of `path`: absolute, or relative to the workspace root. The workspace's
    URI rules refuse `..`, links and anything outside the root later."""
    if not isinstance(path, str) or not path.strip():
        raise ShadowError("a path is required (relative to the workspace root, or absolute)")
    if "\x00" in path:
        raise ShadowError("a NUL byte in the path")
    given = Path(path)
    uri = path_to_uri(given if given.is_absolute() else workspace.root / given)
    workspace.key_for(uri)  # PathOutsideRoot now, before anything else is looked at
    return uri


def read_shadow_text(workspace: ShadowWorkspace, uri: str) -> ShadowText:
    """The text of `uri` with pending edits; read from disk (and not held) otherwise."""
    doc = workspace.document(uri)
    if doc is not None and doc.deleted:  # deleted in the shadow: no such file
        return ShadowText(doc.uri, doc.path, "", False, doc.pending)
    if doc is not None:
        return ShadowText(doc.uri, doc.path, doc.text, True, doc.pending)
    path = uri_to_path(uri)
    on_disk = read_text(resolve_inside(workspace.root, path), workspace.store.max_document_bytes)
    return ShadowText(uri, path, on_disk.text, on_disk.base.exists, False)


def check_text(path: Path, text: str) -> None:
    if not isinstance(text, str):
        raise ShadowError(f"{path}: the new text must be a string")
    if "\x00" in text:
        raise UnsupportedFile(f"{path}: binary content (NUL bytes) refused: text files only")


def check_total(writes: list[AgentWrite]) -> None:
    total = sum(len(w.text.encode("utf-8", "surrogatepass")) for w in writes)
    if total > MAX_AGENT_WRITE_BYTES:
        raise DocumentTooLarge(
            f"{total} bytes in one agent write, over the {MAX_AGENT_WRITE_BYTES}-byte limit: "
            "nothing written"
        )


def claim_lock(workspace: ShadowWorkspace, take: bool) -> None:
    """The model holds the lock after this, or LockRefused (the lock unchanged)."""
    if workspace.lock.model_holds:
        return
    root = workspace.root
    if not take:
        raise LockRefused(
            f"the user holds the save lock of {root}: agent edits go to the shadow only while "
            f"the model holds it. Run `shadowtab lock release --root {root}`, or pass --take "
            "(take_lock) to take it while the user has no unsaved edits"
        )
    held_back = workspace.release_unless_pending()
    if held_back:
        names = ", ".join(str(uri_to_path(uri).relative_to(root)) for uri in held_back[:5])
        raise LockRefused(
            f"the user holds the save lock of {root} with unsaved edits in {len(held_back)} "
            f"file(s) ({names}): an agent cannot take it. The user saves them or gives the "
            f"lock to the model with `shadowtab lock release --root {root}`"
        )


def write_texts(
    workspace: ShadowWorkspace, writes: list[AgentWrite], take: bool = False
) -> list[WrittenFile]:
    """Put every write into the shadow as a model edit, or none (ShadowError says why)."""
    if not writes:
        raise ShadowError("nothing to write")
    uris = [workspace.key_for(w.uri) for w in writes]
    if len(set(uris)) != len(uris):
        raise ShadowError("a file is written twice in one call: give each file once")
    check_total(writes)
    with workspace.mutex:
        for write in writes:
            check_write(workspace, write)
        claim_lock(workspace, take)
        return _apply_all(workspace, writes)


def check_write(workspace: ShadowWorkspace, write: AgentWrite) -> None:
    workspace.check_model_target(write.uri)
    current = read_shadow_text(workspace, write.uri)  # binary or oversized: refused here
    check_text(current.path, write.text)
    expected = write.expected_sha256
    if expected is not None and expected != current.sha256:
        raise StaleText(
            f"{current.path} changed since it was read (sha256 {current.sha256[:12]}..., "
            f"expected {str(expected)[:12]}...): read it again, nothing written"
        )


def _apply_all(workspace: ShadowWorkspace, writes: list[AgentWrite]) -> list[WrittenFile]:
    done: list[WrittenFile] = []
    try:
        for write in writes:
            done.append(apply_one(workspace, write))
    except BaseException:
        for written in reversed(done):  # all or nothing, even for a failure not foreseen
            put_back(workspace, written)
        raise
    return done


def apply_one(workspace: ShadowWorkspace, write: AgentWrite) -> WrittenFile:
    doc = workspace.load_document(write.uri)
    if doc.deleted:  # written again after a delete: a file again, whatever its text
        doc.deleted = False
        workspace.store.journal_state(doc)
    before, shown = doc.text, doc.open
    language_id, path = doc.language_id, doc.path
    new_text = write.text
    if doc.eol != "\n":  # the file's own line endings, so only real changes differ
        new_text = new_text.replace("\r\n", "\n").replace("\n", doc.eol)
    change = minimal_change(before, new_text)
    changes = [] if change is None else [change]
    if not changes:
        result = ModelEditResult(doc.uri, doc.version, workspace.lock.holder, False, doc.pending)
        workspace.unload_if_clean(write.uri)
        return WrittenFile(doc.uri, path, before, before, shown, language_id, result)
    result = workspace.apply_model_edit(write.uri, changes)
    after = workspace.document(write.uri)
    text = new_text if after is None else after.text
    return WrittenFile(doc.uri, path, before, text, shown, language_id, result)


def put_back(workspace: ShadowWorkspace, written: WrittenFile) -> None:
    change = minimal_change(written.after, written.before)
    if change is not None:
        workspace.apply_model_edit(written.uri, [change])
