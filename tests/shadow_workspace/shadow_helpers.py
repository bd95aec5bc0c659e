"""Helpers of the shadow workspace tests (a unique module name: conftest is ambiguous)."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
from pathlib import Path

from shadowtab.shadow_workspace import path_to_uri


def uri_of(path: Path) -> str:
    return path_to_uri(path.absolute())


def disk_snapshot(folder: Path) -> dict[str, tuple[str, int, int]]:
    """Every file under `folder`: (content hash, mtime_ns, mode)."""
    found = {}
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(dirpath, name)
            st = path.stat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            found[str(path.relative_to(folder))] = (digest, st.st_mtime_ns, st.st_mode)
    return found


def cli(project: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`shadowtab ARGS` in a child process, from `project` (the environment's
    SHADOWTAB_* dirs are the test's: see the daemon_dirs fixture)."""
    return subprocess.run(
        [sys.executable, "-m", "shadowtab.daemon.cli", *args],
        capture_output=True,
        text=True,
        timeout=90,
        cwd=project,
        input=stdin,
    )


def stop_daemon() -> None:
    """Stop the daemon of the test's dirs; SIGKILL it when it does not stop."""
    from shadowtab.daemon.client import read_status, stop_daemon, wait_for_exit
    from shadowtab.daemon.runtime_files import pid_alive

    status = read_status()
    stopped = stop_daemon(timeout=10.0)
    if status is not None and not stopped and pid_alive(status["pid"]):
        os.kill(status["pid"], signal.SIGKILL)  # only the daemon this test started
        wait_for_exit(status["pid"], 5.0)
