"""`lock take --commit` of the whole pending change set as one step: new and changed
files are written (temp file, fsync, rename), then deleted files removed, so a rename is
its new file written before its old one goes. Before the first write the plan is saved
beside the journal (an intent file, fsynced); a process killed midway leaves it, and the
next start finishes the commit from it (intent.finish_interrupted), so after a restart
the disk holds the old tree or the new one, never a mix. A plan that cannot be saved
(its disk full or read-only) refuses the commit before anything is written.

A file that changed on disk since the shadow read it (or became a directory) is a
conflict found before anything is written: it stays pending, and so does the other file
of its rename. A write or removal that fails midway puts back what was done before it.
Runs under the workspace's mutex."""

from __future__ import annotations

import contextlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from .commit import commit_document
from .disk import (
    BOM,
    MISSING,
    DiskBase,
    atomic_write,
    current_base,
    fsync_dir,
    refuse_symlinks_below,
    resolve_inside,
    same_content,
)
from .document import ShadowDocument
from .intent import IntentStep, clear_intent, intent_path, write_intent
from .model import CommitConflict, ShadowError, UnsupportedFile
from .save_lock import TakeResult
from .store import DocumentStore

log = logging.getLogger(__name__)


@dataclass
class Step:
    """One file of the commit: `data` None removes it."""

    doc: ShadowDocument
    real: Path
    data: bytes | None
    mode: int | None = None  # a rename's new file keeps its old file's mode
    before: tuple[DiskBase, str] | None = None  # the base it had, once done
    renamed_from: Path | None = None  # as the document had it, once done


def commit_all(
    store: DocumentStore,
    root: Path,
    result: TakeResult,
    only: list[ShadowDocument] | None = None,
) -> None:
    """Commit every pending document (or those `only` names) that has no conflict, all
    of them or none."""
    steps = plan(store, root, result, store.pending_documents() if only is None else only)
    if not steps:
        return
    intent = None if store.journal is None else intent_path(store.journal.path)
    if intent is not None:
        try:
            write_intent(intent, [_intent_step(step) for step in steps])
        except OSError as exc:  # a full or read-only state dir: no commit without a plan
            reason = (
                f"cannot write {intent}, the commit's plan (it makes a commit cut short "
                f"by a crash finish at the next start): {exc.strerror or exc}; nothing "
                "written, the edits stay in the shadow"
            )
            for step in steps:
                _conflict(store, step.doc, reason, result)
            return
    try:
        _run(store, root, steps, result)
    finally:
        if intent is not None:
            clear_intent(intent)


def plan(
    store: DocumentStore, root: Path, result: TakeResult, docs: list[ShadowDocument]
) -> list[Step]:
    """The steps, writes before removals; conflicts recorded (and left out) first."""
    steps: dict[Path, Step] = {}
    refused: set[Path] = set()
    for doc in docs:
        try:
            steps[doc.path] = _step(root, doc)
        except (ShadowError, OSError) as exc:
            _conflict(store, doc, str(exc), result)
            refused.add(doc.path)
    for doc in docs:  # a rename is one change: both of its files, or neither
        old = steps.get(doc.renamed_from) if doc.renamed_from is not None else None
        if doc.renamed_from in refused and doc.path in steps:
            _conflict(store, steps.pop(doc.path).doc, "its rename's old file conflicts", result)
        elif old is not None and doc.path in refused and old.doc.deleted:
            _conflict(store, steps.pop(old.real).doc, "its rename's new file conflicts", result)
        elif old is not None and doc.path in steps:
            steps[doc.path].mode = _mode(old.real)
    ordered = sorted(steps.values(), key=lambda step: step.data is None)
    return ordered


def _step(root: Path, doc: ShadowDocument) -> Step:
    if doc.stale_buffer:  # e.g. a model edit of the old buffer after a formatter ran
        raise ShadowError(
            f"{doc.path} changed on disk and the editor has not reloaded it yet: "
            "nothing written (the shadow text is the buffer from before the change)"
        )
    real = resolve_inside(root, doc.path)
    refuse_symlinks_below(root, doc.path)
    if real.is_dir():
        raise UnsupportedFile(f"{doc.path} is a directory on disk: nothing written")
    if not same_content(current_base(real), doc.base):
        raise CommitConflict(str(real), "the file changed on disk since the shadow read it")
    if doc.deleted:  # its mode, should a failed commit have to put it back
        return Step(doc, real, None, _mode(real))
    return Step(doc, real, (BOM if doc.bom else b"") + doc.text.encode("utf-8"))


def _mode(path: Path) -> int | None:
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return None


def _intent_step(step: Step) -> IntentStep:
    return IntentStep(str(step.real), step.data, step.doc.base.sha256, step.mode)


def _conflict(store: DocumentStore, doc: ShadowDocument, reason: str, result: TakeResult) -> None:
    store.conflict(doc, reason)
    result.conflicts.append({"uri": doc.uri, "error": reason})


def _run(store: DocumentStore, root: Path, steps: list[Step], result: TakeResult) -> None:
    done: list[Step] = []
    try:
        for step in steps:
            step.before = (step.doc.base, step.doc.base_text)
            step.renamed_from = step.doc.renamed_from
            if step.data is None:
                _remove(step)
            else:
                commit_document(store, root, step.doc, step.mode)
            done.append(step)
    except (ShadowError, OSError) as exc:
        _conflict(store, step.doc, str(exc), result)
        for undone in reversed(done):
            _undo(store, undone)
        return
    for step in steps:
        (result.written if step.data is not None else result.removed).append(step.doc.uri)
        if step.data is None and not step.doc.open:
            store.forget(step.doc)
        else:
            store.resolved(step.doc)
            store.unload_if_clean(step.doc)


def _remove(step: Step) -> None:
    """Remove the deleted file, only while it is still the version the shadow read."""
    doc = step.doc
    if not same_content(current_base(step.real), doc.base):
        raise CommitConflict(str(step.real), "the file changed on disk since the shadow read it")
    step.real.unlink()
    with contextlib.suppress(OSError):  # removed already: the folder's sync is best effort
        fsync_dir(step.real.parent)
    doc.rebase(MISSING, "")


def _undo(store: DocumentStore, step: Step) -> None:
    """Put back the disk version a step replaced or removed, and the base it had."""
    assert step.before is not None
    base, base_text = step.before
    doc = step.doc
    try:
        if base.exists:
            data = (BOM if doc.bom else b"") + base_text.encode("utf-8")
            base = atomic_write(step.real, data, doc.base, step.mode)
        else:
            step.real.unlink(missing_ok=True)
    except (ShadowError, OSError) as exc:
        log.error("%s: not put back after a failed commit: %s", step.real, exc)
        return
    doc.rebase(base, base_text)
    doc.renamed_from = step.renamed_from
    store.resolved(doc)
