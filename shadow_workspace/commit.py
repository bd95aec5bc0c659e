"""Committing a shadow document: its text written over the file, atomically and only
over the disk version it is based on, inside the root and never through a link. Runs
under the workspace's mutex (`lock take --commit` of the whole set: tree_commit)."""

from __future__ import annotations

from pathlib import Path

from .disk import atomic_write, refuse_symlinks_below, resolve_inside
from .document import ShadowDocument
from .model import DiskWriteError, ShadowError
from .store import DocumentStore


def commit_document(
    store: DocumentStore, root: Path, doc: ShadowDocument, mode: int | None = None
) -> None:
    """Write `doc`'s text to its file (a new file: `mode`, else the umask's); the written
    version becomes its base."""
    if not root.is_dir():
        raise ShadowError(f"the workspace root {root} no longer exists: nothing written")
    if doc.stale_buffer:  # e.g. a model edit of the old buffer after a formatter ran
        raise ShadowError(
            f"{doc.path} changed on disk and the editor has not reloaded it yet: "
            "nothing written (the shadow text is the buffer from before the change)"
        )
    real = resolve_inside(root, doc.path)
    refuse_symlinks_below(root, doc.path)
    if not doc.base.exists:  # a new file: its folders may be new too (inside the root)
        try:
            real.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DiskWriteError(str(real), exc) from exc
    data = (b"\xef\xbb\xbf" if doc.bom else b"") + doc.text.encode("utf-8")
    new_base = atomic_write(real, data, doc.base, mode)
    doc.rebase(new_base, doc.text)
    store.resolved(doc)
