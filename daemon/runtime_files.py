"""Files of one daemon in the per-user runtime dir (status file, lock, sockets) and the
log in the state dir, plus the checks that tell a live daemon from a stale one."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shadowtab.daemon import paths

MAX_SOCKET_PATH_BYTES = 107  # sizeof(sockaddr_un.sun_path) - 1 on Linux
STATUS_KEYS = ("pid", "control_socket", "lsp_socket", "version", "started_at", "log_file")


@dataclass(frozen=True)
class RuntimeFiles:
    status_file: Path
    lock_file: Path
    control_socket: Path
    lsp_socket: Path
    log_file: Path

    @classmethod
    def current(cls) -> RuntimeFiles:
        """The files for the current environment (the dir variables may point elsewhere)."""
        run = paths.runtime_dir()
        return cls(
            status_file=run / "daemon.json",
            lock_file=run / "daemon.lock",
            control_socket=run / "control.sock",
            lsp_socket=run / "lsp.sock",
            log_file=paths.state_dir() / "daemon.log",
        )

    def socket_path_problem(self) -> str | None:
        """Why the sockets cannot be bound here, or None (a unix socket path is limited
        to 107 bytes; a deep SHADOWTAB_RUNTIME_DIR can exceed it)."""
        for path in (self.control_socket, self.lsp_socket):
            if len(os.fsencode(path)) > MAX_SOCKET_PATH_BYTES:
                return (
                    f"socket path too long ({len(os.fsencode(path))} bytes, the limit is "
                    f"{MAX_SOCKET_PATH_BYTES}): {path}; set SHADOWTAB_RUNTIME_DIR to a shorter dir"
                )
        return None


def write_status(path: Path, status: dict[str, Any]) -> None:
    """Atomically (temp file + rename), mode 0600: readers never see half a file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".daemon-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as file:
            json.dump(status, file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def load_status_file(path: Path) -> dict[str, Any] | None:
    """The status file's content, or None if absent or unreadable (a torn or foreign file
    counts as absent: the daemon rewrites it)."""
    try:
        status = json.loads(path.read_text())
    except (FileNotFoundError, NotADirectoryError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(status, dict) or any(key not in status for key in STATUS_KEYS):
        return None
    if not isinstance(status["pid"], int):
        return None
    return status


def remove_file(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def pid_alive(pid: int) -> bool:
    """True for a running process (a zombie is dead: it only waits to be reaped)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return _proc_state(pid) != "Z"


def _proc_state(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None  # no procfs (macOS) or gone
    return stat.rsplit(")", 1)[-1].split()[0]


def is_shadowtab_process(pid: int) -> bool:
    """Guard before a signal: a recycled pid must not get our SIGKILL."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return not Path("/proc/self").exists()  # no procfs: trust the pid
    except OSError:
        return False
    return b"shadowtab" in cmdline


def socket_accepts(path: Path, timeout: float = 1.0) -> bool:
    """Whether something accepts connections on the unix socket `path`."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect(str(path))
        except OSError:
            return False
    return True


class DaemonLock:
    """An exclusive flock held for the daemon's whole life: the kernel drops it when the
    process dies, so a crash never leaves a stale lock. Two racing starts: one wins."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
