"""Disk faults: a commit that meets a full disk, an I/O error, a read-only root or a file
replaced by a directory, and a journal on a full disk. Each gives an error naming the
file and the reason, the shadow keeps every edit (in memory and in its journal: a
restarted workspace has them pending), the disk keeps its old bytes whole and no temp
file is left.

The full disk is real: a small tmpfs mounted by the test and filled by it (small_disk;
skipped, saying why, where mounting is not permitted). EIO cannot be made real without
a failing device, so it is injected at the OS call (os.write / os.fsync on the temp
file). The read-only root is a real read-only bind mount (or a 0555 folder when not
root), the directory a real directory. Each prints its figures (benchmark_line)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from shadow_helpers import disk_snapshot, uri_of
from shadowtab.shadow_workspace import Position, Range, ShadowWorkspace, TextChange
from shadowtab.shadow_workspace.disk import TEMP_SUFFIX
from small_disk import fill, small_tmpfs

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
    [("write", errno.EIO), ("fsync", errno.EIO)],
)
def test_an_io_error_keeps_both_versions(
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


# -- a real full disk ----------------------------------------------------------------------

SMALL_DISK = 512 * 1024
BEFORE = {"a.py": "a = 0\n", "b.py": OLD}
BIG = "".join(f"row_{i} = {i}\n" for i in range(6000))  # ~100 KB: more than is left
INSERTED = {"a.py": "model = 1\n", "b.py": BIG, "c.py": "new = 1\n"}  # c.py: a new file
SHADOW = {name: text + BEFORE.get(name, "") for name, text in INSERTED.items()}
LEFTOVERS = (TEMP_SUFFIX, ".commit-temp", ".compact")


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    with small_tmpfs(tmp_path / "disk", SMALL_DISK) as folder:
        yield folder


def texts_on_disk(root: Path) -> dict[str, str]:
    return {name: (root / name).read_text() for name in SHADOW if (root / name).exists()}


def torn_files(root: Path) -> list[str]:
    """Files that hold neither their old text nor their new one."""
    return [
        name
        for name, text in texts_on_disk(root).items()
        if text not in (BEFORE.get(name), SHADOW[name])
    ]


def edits_lost(workspace: ShadowWorkspace, root: Path) -> list[str]:
    """The files whose shadow text is not what the model wrote, or no longer pending."""
    pending = set(workspace.pending_uris())
    lost = []
    for name, text in SHADOW.items():
        document = workspace.document(uri_of(root / name))
        if document is None or document.text != text or uri_of(root / name) not in pending:
            lost.append(name)
    return lost


def leftovers(disk: Path) -> list[Path]:
    return [p for p in disk.rglob("*") if p.name.endswith(LEFTOVERS)]


def figures(case: str, lost: int, torn: int, message: str) -> str:
    return json.dumps(
        {"disk_fault": case, "edits_lost": lost, "torn_files": torn, "message": message}
    )


@pytest.mark.parametrize(
    ("journal_on_it", "free_kib"),
    [(False, 16), (True, 16), (True, 140)],
    ids=["journal-elsewhere", "same-disk-no-room-for-the-plan", "same-disk-room-for-the-plan"],
)
def test_a_commit_on_a_full_disk_loses_nothing(
    disk: Path, tmp_path: Path, journal_on_it: bool, free_kib: int, record_property: Any
) -> None:
    """Three files committed (two changed, one new, one of them 100 KB) on a disk with
    `free_kib` left: nothing is written (with 140 KiB, the plan and a.py are, then b.py
    fails and a.py is put back), the error says which file and why, the edits stay
    pending through a restart on the full disk, and commit once space is freed."""
    root = disk / "project"
    root.mkdir()
    journal_dir = (disk if journal_on_it else tmp_path) / "state" / "journal"
    for name, text in BEFORE.items():
        (root / name).write_text(text)
    workspace = ShadowWorkspace(root, journal_dir, watch=False)
    workspace.release()
    for name, text in INSERTED.items():
        at_start = [TextChange(Range(Position(0, 0), Position(0, 0)), text)]
        workspace.apply_model_edit(uri_of(root / name), at_start)
    filler = fill(disk, leave=free_kib * 1024)

    result = workspace.take("commit")
    assert not result.written and not result.removed
    errors = [conflict["error"] for conflict in result.conflicts]
    message = next(e for e in errors if os.strerror(errno.ENOSPC) in e)
    assert str(root) in message or str(journal_dir) in message  # it names the file
    assert "nothing written" in message or "unchanged" in message, message
    lost, torn = edits_lost(workspace, root), torn_files(root)
    assert texts_on_disk(root) == BEFORE and not torn and not leftovers(disk)
    assert not lost, lost
    workspace.close()

    restarted = ShadowWorkspace(root, journal_dir, watch=False)  # a restart, still full
    try:
        lost_at_restart = edits_lost(restarted, root)
        assert not lost_at_restart, lost_at_restart  # the journal kept them
        filler.unlink()
        assert sorted(restarted.take("commit").written) == sorted(
            uri_of(root / name) for name in SHADOW
        )
        assert texts_on_disk(root) == SHADOW and not restarted.has_pending()
    finally:
        restarted.close()
    assert not leftovers(disk)
    case = f"full disk (tmpfs, {free_kib} KiB free), journal " + (
        "on it" if journal_on_it else "elsewhere"
    )
    line = figures(case, len(lost) + len(lost_at_restart), len(torn), message)
    print(line)
    record_property("benchmark_line", line)  # printed at the end of the run


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


def pending_after_restart(workspace: ShadowWorkspace, journal_dir: Path) -> list[str]:
    """What a workspace restarted from the journal has pending."""
    restarted = ShadowWorkspace(workspace.root, journal_dir, watch=False)
    try:
        return restarted.pending_uris()
    finally:
        restarted.close()


def test_a_read_only_root_keeps_both_versions(
    pending: tuple[ShadowWorkspace, Path], journal_dir: Path, record_property: Any
) -> None:
    workspace, path = pending
    before = disk_snapshot(path.parent)
    new_file = path.parent / "pkg" / "new.py"
    workspace.apply_model_edit(uri_of(new_file), INSERT)
    with read_only(path.parent):
        result = workspace.take("commit")  # all files or none: it stops at the first
        assert not result.written and len(result.conflicts) == 1
    message = result.conflicts[0]["error"]
    reasons = (os.strerror(errno.EROFS), os.strerror(errno.EACCES))  # EACCES: not root
    assert "cannot write" in message and any(reason in message for reason in reasons)
    assert str(path) in message or str(new_file.parent) in message, message
    assert len(workspace.pending_uris()) == 2
    assert_untouched(workspace, path, before)
    assert not new_file.parent.exists()
    assert sorted(pending_after_restart(workspace, journal_dir)) == sorted(workspace.pending_uris())
    line = figures("read-only root (bind mount)", 0, 0, message)
    print(line)
    record_property("benchmark_line", line)


def test_a_file_replaced_by_a_directory(
    pending: tuple[ShadowWorkspace, Path], journal_dir: Path, record_property: Any
) -> None:
    workspace, path = pending
    path.unlink()
    path.mkdir()
    (path / "inside").write_text("kept\n")
    result = workspace.take("commit")
    message = result.conflicts[0]["error"]
    assert not result.written and "directory" in message and str(path) in message
    assert path.is_dir() and (path / "inside").read_text() == "kept\n"
    assert workspace.has_pending()
    assert pending_after_restart(workspace, journal_dir) == [uri_of(path)]
    assert not [p for p in path.parent.rglob("*") if p.name.endswith(TEMP_SUFFIX)]
    line = figures("a file replaced by a directory", 0, 0, message)
    print(line)
    record_property("benchmark_line", line)


def type_at_end(workspace: ShadowWorkspace, uri: str, text: str) -> None:
    for char in text:
        document = workspace.document(uri)
        end = len(document.text) if document is not None else 0
        at_end = Position(0, end)
        workspace.apply_model_edit(uri, [TextChange(Range(at_end, at_end), char)])


def test_a_journal_on_a_full_disk(
    root: Path, disk: Path, monkeypatch: pytest.MonkeyPatch, record_property: Any
) -> None:
    """The journal's disk fills while the model types (a short write, then ENOSPC): the
    shadow keeps every edit, a restart on the full disk replays a consistent prefix of
    them (the torn record cut off), and once space is freed the journal is rewritten
    whole from the shadow."""
    journal_dir = disk / "state" / "journal"
    path = root / "a.py"
    path.write_text("")
    uri = uri_of(path)
    workspace = ShadowWorkspace(root, journal_dir, watch=False)
    workspace.release()
    type_at_end(workspace, uri, "a" * 5)
    filler = fill(disk)
    type_at_end(workspace, uri, "b" * 300)  # past what the journal's last page holds
    error = workspace.lock_status()["journal_error"] or ""
    assert os.strerror(errno.ENOSPC) in error, error
    crashed = ShadowWorkspace(root, journal_dir, watch=False)  # restart while full
    recovered = crashed.document(uri)
    assert recovered is not None
    assert recovered.text.rstrip("b") == "a" * 5 and len(recovered.text) <= 305  # no tear
    crashed.close()
    kept = workspace.document(uri)
    assert kept is not None and kept.text == "a" * 5 + "b" * 300  # the shadow kept all
    filler.unlink()
    monkeypatch.setattr("shadowtab.shadow_workspace.store.JOURNAL_RETRY_S", 0.0)
    type_at_end(workspace, uri, "c")
    assert workspace.lock_status()["journal_error"] is None
    type_at_end(workspace, uri, "d")
    restarted = ShadowWorkspace(root, journal_dir, watch=False)
    again = restarted.document(uri)
    lost = 0 if again is not None and again.text == "a" * 5 + "b" * 300 + "cd" else 1
    restarted.close()
    workspace.close()
    assert not lost and not leftovers(disk)
    assert path.read_text() == ""
    line = figures("journal on a full disk (tmpfs)", lost, 0, error)
    print(line)
    record_property("benchmark_line", line)
