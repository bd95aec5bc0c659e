"""A real small disk for the disk fault tests: a tmpfs of a few hundred KiB mounted by the
test (root, or CAP_SYS_ADMIN), filled by a file the test writes until the kernel says
ENOSPC. Where mounting is not permitted the test is skipped, saying why: a full disk
faked by patching os.write would not show what the kernel really does (short writes,
a page at a time, the journal and the project on the same disk)."""

from __future__ import annotations

import contextlib
import errno
import os
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

PAGE = 4096


@contextlib.contextmanager
def small_tmpfs(folder: Path, size: int) -> Iterator[Path]:
    """A tmpfs of `size` bytes mounted on `folder` (made here), unmounted after."""
    folder.mkdir(parents=True)
    why = _mount(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(folder)])
    if why:
        pytest.skip(f"no small disk to fill: {why}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)


def _mount(command: list[str]) -> str | None:
    """None when `command` worked, else why not."""
    if shutil.which(command[0]) is None:
        return f"no {command[0]} command"
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode == 0:
        return None
    said = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[0]
    return f"`{shlex.join(command)}` failed ({said}); it needs root or CAP_SYS_ADMIN"


def fill(disk: Path, leave: int = 0) -> Path:
    """Write a file on `disk` until it is full, then cut `leave` bytes (rounded to pages)
    off it again: the disk has about `leave` bytes free. Returns the file."""
    filler = disk / "filler"
    chunk = b"\xff" * (64 * 1024)
    with open(filler, "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(chunk)  # a short write near the end, then ENOSPC
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise
    pages = -(-leave // PAGE)
    os.truncate(filler, max(0, filler.stat().st_size - pages * PAGE))
    return filler


def free_bytes(disk: Path) -> int:
    st = os.statvfs(disk)
    return st.f_bavail * st.f_frsize
