"""Disk faults: a commit that hits ENOSPC or EIO, a read-only root, a file replaced by a
directory, a journal on a full disk. Each gives a clear error, the shadow keeps the
edits, the disk keeps its old bytes whole and no temp file is left.

ENOSPC and EIO are injected at the OS call (os.write / os.fsync on the file concerned):
the disk is outside the code under test. The read-only root is a real read-only bind
mount (or a 0555 folder when not root), the directory a real directory."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from shadow_helpers import disk_snapshot, uri_of
from shadowtab.shadow_workspace import Position, Range, ShadowWorkspace, TextChange
from shadowtab.shadow_workspace.disk import TEMP_SUFFIX

INSERT = [TextChange(Range(Position(0, 0), Position(0, 0)), "model = 1\n")]
OLD = "old = 0\n" * 1000


def fd_path(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


@contextlib.contextmanager
def failing(
    monkeypatch: pytest.MonkeyPatch, name: str, code: int, match: Callable[[str], bool]
) -> Iterator[None]:
    """os.<name>(fd, ...) fails with `code` for the files `match` accepts; the first
    os.write writes half its bytes first (a disk filling up mid-write)."""
    real = getattr(os, name)
    calls = {"n": 0}

    def fake(fd: int, *args: Any) -> Any:
        if not match(fd_path(fd)):
            return real(fd, *args)
        calls["n"] += 1
        if name == "write" and calls["n"] == 1 and len(args[0]) > 1:
            return real(fd, args[0][: len(args[0]) // 2])
        raise OSError(code, os.strerror(code))

    with monkeypatch.context() as patch:
        patch.setattr(os, name, fake)
        yield


def is_temp(path: str) -> bool:
    return path.endswith(TEMP_SUFFIX)


@pytest.fixture
def pending(workspace: ShadowWorkspace, root: Path) -> tuple[ShadowWorkspace, Path]:
    path = root / "a.py"
    path.write_text(OLD)
    workspace.release()
    workspace.apply_model_edit(uri_of(path), INSERT)
    return workspace, path


def assert_untouched(workspace: ShadowWorkspace, path: Path, before: dict[str, Any]) -> None:
    assert path.read_text() == OLD
    assert disk_snapshot(path.parent) == before
    assert not [p for p in path.parent.rglob("*") if p.name.endswith(TEMP_SUFFIX)]
    assert workspace.has_pending()
    document = workspace.document(uri_of(path))
    assert document is not None and document.text == "model = 1\n" + OLD


@pytest.mark.parametrize(
    ("call", "code"),
    [("write", errno.ENOSPC), ("write", errno.EIO), ("fsync", errno.EIO)],
)
def test_a_failing_commit_keeps_both_versions(
    pending: tuple[ShadowWorkspace, Path], monkeypatch: pytest.MonkeyPatch, call: str, code: int
) -> None:
    workspace, path = pending
    before = disk_snapshot(path.parent)
    with failing(monkeypatch, call, code, is_temp):
        result = workspace.take("commit")
    assert not result.written and len(result.conflicts) == 1
    error = result.conflicts[0]["error"]
    assert os.strerror(code) in error and "unchanged" in error and str(path) in error
    assert_untouched(workspace, path, before)
    assert workspace.take("commit").written == [uri_of(path)]  # the disk is back
    assert path.read_text() == "model = 1\n" + OLD


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    mount = ["mount", "--bind", str(folder), str(folder)]
    if subprocess.run(mount, capture_output=True, check=False).returncode != 0:
        pytest.skip("root without mount: no way to make a read-only folder")
    try:
        remount = ["mount", "-o", "remount,bind,ro", str(folder)]
        subprocess.run(remount, capture_output=True, check=True)
        yield
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True, check=False)


def test_a_read_only_root_keeps_both_versions(pending: tuple[ShadowWorkspace, Path]) -> None:
    workspace, path = pending
    before = disk_snapshot(path.parent)
    new_file = path.parent / "pkg" / "new.py"
    workspace.apply_model_edit(uri_of(new_file), INSERT)
    with read_only(path.parent):
        result = workspace.take("commit")  # all files or none: it stops at the first
        assert not result.written and len(result.conflicts) == 1
        assert all("cannot write" in c["error"] for c in result.conflicts), result.conflicts
    assert len(workspace.pending_uris()) == 2
    assert_untouched(workspace, path, before)
    assert not new_file.parent.exists()


def test_a_file_replaced_by_a_directory(pending: tuple[ShadowWorkspace, Path]) -> None:
    workspace, path = pending
    path.unlink()
    path.mkdir()
    (path / "inside").write_text("kept\n")
    result = workspace.take("commit")
    assert not result.written and "directory" in result.conflicts[0]["error"]
    assert path.is_dir() and (path / "inside").read_text() == "kept\n"
    assert workspace.has_pending()
    assert not [p for p in path.parent.rglob("*") if p.name.endswith(TEMP_SUFFIX)]


def test_a_journal_on_a_full_disk(
    root: Path, journal_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = root / "a.py"
    path.write_text("")
    uri = uri_of(path)
    workspace = ShadowWorkspace(root, journal_dir, watch=False)
    workspace.release()
    typed = ""
    for i in range(5):
        workspace.apply_model_edit(uri, [TextChange(Range(Position(0, i), Position(0, i)), "a")])
        typed += "a"
    with failing(monkeypatch, "write", errno.ENOSPC, lambda p: p.startswith(str(journal_dir))):
        for i in range(5, 10):
            change = TextChange(Range(Position(0, i), Position(0, i)), "b")
            workspace.apply_model_edit(uri, [change])
        assert "No space left" in (workspace.lock_status()["journal_error"] or "")
        crashed = ShadowWorkspace(root, journal_dir, watch=False)  # restart while full
        recovered = crashed.document(uri)
        assert recovered is not None and recovered.text == typed  # consistent, not torn
        crashed.close()
    kept = workspace.document(uri)
    assert kept is not None and kept.text == typed + "bbbbb"  # the shadow kept every edit
    monkeypatch.setattr("shadowtab.shadow_workspace.store.JOURNAL_RETRY_S", 0.0)
    workspace.apply_model_edit(uri, [TextChange(Range(Position(0, 10), Position(0, 10)), "c")])
    assert workspace.lock_status()["journal_error"] is None
    workspace.apply_model_edit(uri, [TextChange(Range(Position(0, 11), Position(0, 11)), "d")])
    restarted = ShadowWorkspace(root, journal_dir, watch=False)
    again = restarted.document(uri)
    assert again is not None and again.text == typed + "bbbbbcd"
    assert not list(journal_dir.glob("*.compact"))
    restarted.close()
    workspace.close()
    assert path.read_text() == ""
