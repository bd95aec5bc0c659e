"""The journal (restart restores pending edits; a file changed meanwhile is a conflict;
a torn tail is ignored) and the disk watcher (outside changes followed or reported)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from shadow_helpers import uri_of
from shadowtab.shadow_workspace import DiskEvent, Range, ShadowWorkspace, TextChange
from shadowtab.shadow_workspace.journal import journal_path


def wait_for(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def test_restart_restores_pending_edits(root: Path, journal_dir: Path) -> None:
    path = root / "a.py"
    path.write_text("x = 1\n")
    ws = ShadowWorkspace(root, journal_dir, watch=False)
    ws.open_document(uri_of(path), "x = 1\n", 1, "python")
    ws.change_document(uri_of(path), 2, [TextChange(Range.of(0, 5, 0, 5), "  # typed")])
    ws.release()
    ws.apply_model_edit(uri_of(path), [TextChange(Range.of(1, 0, 1, 0), "y = 2\n")])
    expected = ws.document(uri_of(path)).text  # type: ignore[union-attr]
    ws.close()
    again = ShadowWorkspace(root, journal_dir, watch=False)
    try:
        doc = again.document(uri_of(path))
        assert doc is not None and doc.text == expected and doc.model_edits == 1
        assert path.read_text() == "x = 1\n" and again.has_pending()
        assert not again.conflicts
    finally:
        again.close()


def test_restart_with_changed_disk_reports_conflict(root: Path, journal_dir: Path) -> None:
    path = root / "a.py"
    path.write_text("x = 1\n")
    ws = ShadowWorkspace(root, journal_dir, watch=False)
    ws.release()
    ws.apply_model_edit(uri_of(path), [TextChange(None, "x = 2\n")])
    ws.close()
    path.write_text("x = 3\n")  # git checkout while the daemon was down
    again = ShadowWorkspace(root, journal_dir, watch=False)
    try:
        doc = again.document(uri_of(path))
        assert doc is not None and doc.text == "x = 2\n"
        assert path.read_text() == "x = 3\n"
        assert uri_of(path) in {c.uri for c in again.conflicts.values()}
        assert not again.take("commit").ok
        assert path.read_text() == "x = 3\n"
    finally:
        again.close()


def test_committed_then_killed_before_the_journal_drop(root: Path, journal_dir: Path) -> None:
    """The disk already holds the shadow text: restored as clean, not as a conflict."""
    path = root / "a.py"
    path.write_text("x = 1\n")
    ws = ShadowWorkspace(root, journal_dir, watch=False)
    ws.release()
    ws.apply_model_edit(uri_of(path), [TextChange(None, "x = 2\n")])
    ws.close()
    path.write_text("x = 2\n")
    again = ShadowWorkspace(root, journal_dir, watch=False)
    try:
        assert not again.has_pending() and not again.conflicts
    finally:
        again.close()


def test_torn_journal_tail_is_ignored(root: Path, journal_dir: Path) -> None:
    path = root / "a.py"
    path.write_text("x = 1\n")
    ws = ShadowWorkspace(root, journal_dir, watch=False)
    ws.release()
    ws.apply_model_edit(uri_of(path), [TextChange(None, "x = 2\n")])
    ws.close()
    with open(journal_path(journal_dir, root.resolve()), "ab") as handle:
        handle.write(b"\x85\xa1t\xa4edit\xa3key")  # a record cut short by a crash
    again = ShadowWorkspace(root, journal_dir, watch=False)
    try:
        assert again.document(uri_of(path)).text == "x = 2\n"  # type: ignore[union-attr]
    finally:
        again.close()


@pytest.fixture
def watched(root: Path, journal_dir: Path) -> Iterator[ShadowWorkspace]:
    ws = ShadowWorkspace(root, journal_dir, watch=True)
    yield ws
    ws.close()


def test_watcher_follows_disk_for_clean_document(watched: ShadowWorkspace, root: Path) -> None:
    path = root / "a.py"
    path.write_text("x = 1\n")
    doc = watched.load_document(uri_of(path))
    events: list[DiskEvent] = []
    watched.add_disk_listener(events.append)
    path.write_text("x = 42\n")
    assert wait_for(lambda: doc.text == "x = 42\n")
    assert not watched.has_pending()
    assert any(e.kind == "followed" for e in events)


def test_watcher_reports_conflict_and_overwrites_nothing(
    watched: ShadowWorkspace, root: Path
) -> None:
    path = root / "a.py"
    path.write_text("x = 1\n")
    watched.release()
    watched.apply_model_edit(uri_of(path), [TextChange(None, "x = 2\n")])
    events: list[DiskEvent] = []
    watched.add_disk_listener(events.append)
    path.write_text("x = 3\n")
    assert wait_for(lambda: any(e.kind == "conflict" for e in events))
    assert watched.document(uri_of(path)).text == "x = 2\n"  # type: ignore[union-attr]
    assert path.read_text() == "x = 3\n"
    discarded = watched.take("discard")
    assert discarded.discarded and not watched.has_pending() and path.read_text() == "x = 3\n"


def test_own_commit_is_not_a_conflict(watched: ShadowWorkspace, root: Path) -> None:
    path = root / "a.py"
    path.write_text("x = 1\n")
    events: list[DiskEvent] = []
    watched.add_disk_listener(events.append)
    watched.apply_model_edit(uri_of(path), [TextChange(None, "x = 2\n")])  # user holds: written
    time.sleep(0.3)
    assert not [e for e in events if e.kind == "conflict"] and not watched.conflicts


def test_deleted_root_gives_clear_errors(tmp_path: Path, journal_dir: Path) -> None:
    root = tmp_path / "gone"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    ws = ShadowWorkspace(root, journal_dir, watch=True)
    try:
        ws.release()
        ws.apply_model_edit(uri_of(root / "a.py"), [TextChange(None, "x = 2\n")])
        (root / "a.py").unlink()
        root.rmdir()
        result = ws.take("commit")
        assert not result.ok and ws.document(uri_of(root / "a.py")) is not None
        assert not root.exists()
    finally:
        ws.close()


def test_lock_holder_survives_a_restart(root: Path, journal_dir: Path) -> None:
    ws = ShadowWorkspace(root, journal_dir, watch=False)
    ws.release()
    ws.close()
    again = ShadowWorkspace(root, journal_dir, watch=False)
    try:
        assert again.lock.holder == "model"
        again.take("keep")
    finally:
        again.close()
    assert ShadowWorkspace(root, journal_dir, watch=False).lock.holder == "user"


def test_failing_journal_degrades_without_losing_the_edit(root: Path, journal_dir: Path) -> None:
    import os

    path = root / "a.py"
    path.write_text("x = 1\n")
    ws = ShadowWorkspace(root, journal_dir, watch=False)
    try:
        ws.release()
        assert ws.store.journal is not None
        os.close(ws.store.journal._fd)  # the journal's disk goes away under it
        result = ws.apply_model_edit(uri_of(path), [TextChange(None, "x = 2\n")])
        assert result.pending and ws.document(uri_of(path)).text == "x = 2\n"  # type: ignore[union-attr]
        assert "journal not written" in ws.lock_status()["journal_error"]
    finally:
        ws.store.journal._fd = os.open(os.devnull, os.O_WRONLY)  # type: ignore[union-attr]
        ws.close()


def test_open_clean_document_follows_a_truncated_then_written_file(
    workspace: ShadowWorkspace, root: Path
) -> None:
    """The watcher's reads, driven by hand: it read the empty file of an in-place rewrite
    (write_text truncates, then writes) and then the full one, both before the editor's
    didChange. The first read must not leave the buffer looking edited: the second was
    taken for a conflict, the empty file stayed the base, and the document stayed
    pending after the editor's didChange to the disk text (CI, under load)."""
    path = root / "open.py"
    path.write_text("a = 1\n")
    events: list[DiskEvent] = []
    workspace.add_disk_listener(events.append)
    doc = workspace.open_document(uri_of(path), "a = 1\n", 1, "python")
    path.write_bytes(b"")
    workspace.on_disk_change(path.resolve())
    path.write_text("a = 2\n")
    workspace.on_disk_change(path.resolve())
    assert [e.kind for e in events] == ["changed", "changed"] and not workspace.conflicts
    assert doc.text == "a = 1\n" and doc.base_text == "a = 2\n"
    workspace.change_document(uri_of(path), 2, [TextChange(None, "a = 2\n")])
    assert not workspace.has_pending()

    # typing after the change is an edit: a further change on disk is a conflict
    path.write_text("a = 3\n")
    workspace.on_disk_change(path.resolve())
    workspace.change_document(uri_of(path), 3, [TextChange(Range.of(0, 5, 0, 5), "  # x")])
    path.write_text("a = 4\n")
    workspace.on_disk_change(path.resolve())
    assert events[-1].kind == "conflict" and doc.text == "a = 2  # x\n"


def test_a_model_edit_of_a_buffer_the_editor_has_not_reloaded_is_not_written(
    workspace: ShadowWorkspace, root: Path
) -> None:
    """A formatter rewrote the file under the open buffer; before the editor reloads, the
    model edits the old buffer. Written, it would put the old text back over the
    formatter's: with the user holding the lock (written at once) and at a commit."""
    path = root / "fmt.py"
    path.write_text("a=1\n")
    doc = workspace.open_document(uri_of(path), "a=1\n", 1, "python")
    path.write_text("a = 1\n")  # the formatter
    workspace.on_disk_change(path.resolve())
    result = workspace.apply_model_edit(uri_of(path), [TextChange(Range.of(1, 0, 1, 0), "b=2\n")])
    assert not result.written and "has not reloaded" in (result.conflict or "")
    assert path.read_text() == "a = 1\n"

    workspace.release()
    workspace.apply_model_edit(uri_of(path), [TextChange(Range.of(0, 0, 0, 0), "# m\n")])
    taken = workspace.take("commit")
    assert [c["uri"] for c in taken.conflicts] == [doc.uri] and not taken.written
    assert path.read_text() == "a = 1\n"

    # the editor reloads the disk text: its buffer is current, edits are written again
    workspace.change_document(uri_of(path), 5, [TextChange(None, "a = 1\n")])
    written = workspace.apply_model_edit(
        uri_of(path), [TextChange(Range.of(1, 0, 1, 0), "b = 2\n")]
    )
    assert written.written and path.read_text() == "a = 1\nb = 2\n"


def test_watcher_open_clean_document_and_replaced_file(
    watched: ShadowWorkspace, root: Path
) -> None:
    import os

    opened, replaced = root / "open.py", root / "replaced.py"
    opened.write_text("a = 1\n")
    replaced.write_text("b = 1\n")
    events: list[DiskEvent] = []
    watched.add_disk_listener(events.append)
    doc = watched.open_document(uri_of(opened), "a = 1\n", 1, "python")
    opened.write_text("a = 2\n")  # a formatter rewrote the open, clean file
    assert wait_for(lambda: any(e.kind == "changed" for e in events))
    assert doc.text == "a = 1\n"  # the editor owns the buffer: it reloads and sends didChange
    watched.change_document(uri_of(opened), 2, [TextChange(None, "a = 2\n")])
    # write_text truncates, then writes: the watcher may read the empty file first and
    # the full one a moment later (seen in CI under load), so the buffer and the disk agree
    # once it has caught up
    assert wait_for(lambda: not watched.has_pending())

    watched.release()
    watched.apply_model_edit(uri_of(replaced), [TextChange(None, "b = 2\n")])
    temp = root / "checkout.tmp"
    temp.write_text("b = 3\n")
    os.replace(temp, replaced)  # as git checkout does: a rename over the file
    assert wait_for(lambda: uri_of(replaced) in {e.uri for e in events if e.kind == "conflict"})
    assert replaced.read_text() == "b = 3\n"
