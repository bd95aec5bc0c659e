"""The daemon's client, for the CLI and the LSP shim: one blocking request over the
control socket, finding a running daemon, starting one detached (through the launcher,
shadowtab.daemon.launcher), stopping it. The daemon side is shadowtab.daemon.service."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shadowtab.daemon.control_protocol import ConnectionClosed, encode_frame, recv_frame
from shadowtab.daemon.paths import DIR_ENV_VARS
from shadowtab.daemon.runtime_files import (
    RuntimeFiles,
    is_shadowtab_process,
    load_status_file,
    pid_alive,
    remove_file,
    socket_accepts,
)
from shadowtab.inference.msgpack_frames import FrameError

# Exit codes of `python -m shadowtab.daemon.launcher --detach` (the launcher process).
LAUNCH_OK = 0
LAUNCH_FAILED = 1
LAUNCH_ALREADY_RUNNING = 3

POLL_INTERVAL_S = 0.05
RELAUNCH_AFTER_S = 2.0  # a launcher that lost the lock: how long to wait for the winner


class DaemonNotRunning(ConnectionError):
    """No daemon answers on the control socket."""


class ControlError(RuntimeError):
    """The daemon answered with an error, or the exchange broke off."""


class DaemonStartError(RuntimeError):
    """The daemon did not come up; the message says why and where the log is."""


@dataclass(frozen=True)
class Probe:
    """What the runtime dir says: `status` when a daemon answers, else why not."""

    status: dict[str, Any] | None
    reason: str


def probe() -> Probe:
    """A daemon is running when its status file names a live pid whose control socket
    accepts connections; a dead pid or a refusing socket means not running."""
    files = RuntimeFiles.current()
    status = load_status_file(files.status_file)
    if status is None:
        return Probe(None, "not running")
    pid = status["pid"]
    if not pid_alive(pid):
        return Probe(None, f"not running (stale status file: pid {pid} is gone)")
    if not socket_accepts(Path(status["control_socket"])):
        return Probe(None, f"not running (pid {pid} does not accept on its control socket)")
    return Probe(status, "running")


def read_status() -> dict[str, Any] | None:
    """The status file of the running daemon {pid, control_socket, lsp_socket, version,
    started_at, log_file}, or None when no daemon is running."""
    return probe().status


def ensure_running(timeout: float = 15.0, config_root: Path | None = None) -> dict[str, Any]:
    """The running daemon's status, starting one if needed (for the LSP shim)."""
    return read_status() or start_daemon(timeout, config_root)


# -- the control socket ----------------------------------------------------------------


def control_socket_path() -> Path:
    status = read_status()
    if status is None:
        raise DaemonNotRunning("the shadowtab daemon is not running")
    return Path(status["control_socket"])


def request(
    cmd: str, timeout: float = 10.0, socket_path: Path | None = None, **args: Any
) -> dict[str, Any]:
    """Send one command, return the reply map (`ok` is true). Raises DaemonNotRunning
    when nothing listens, ControlError for an error reply, a timeout or a broken reply."""
    path = socket_path or control_socket_path()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect(str(path))
        except (FileNotFoundError, ConnectionRefusedError) as exc:
            raise DaemonNotRunning(f"the shadowtab daemon is not running ({path}: {exc})") from None
        try:
            sock.sendall(encode_frame({**args, "cmd": cmd}))
            reply = recv_frame(sock)
        except TimeoutError:
            raise ControlError(f"no reply to '{cmd}' within {timeout:g} s") from None
        except (ConnectionClosed, FrameError, OSError) as exc:
            raise ControlError(f"'{cmd}' failed: {exc}") from None
    if not reply.get("ok"):
        raise ControlError(str(reply.get("error", f"error reply without a message: {reply}")))
    return reply


# -- start and stop ---------------------------------------------------------------------


def start_daemon(timeout: float = 15.0, config_root: Path | None = None) -> dict[str, Any]:
    """Start a detached daemon and wait until it answers; return its status. If one is
    already running (or another start wins the race) return that one's status.
    Raises ConfigError for bad settings, DaemonStartError when it does not come up."""
    from shadowtab.daemon.config import load_settings

    status = read_status()
    if status is not None:
        return status
    root = (config_root or Path.cwd()).absolute()
    load_settings(root)  # report bad settings here, on the user's terminal
    files = RuntimeFiles.current()
    files.log_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # logs, journals
    deadline = time.monotonic() + timeout
    while True:
        code = _launch(files.log_file, root, timeout)
        if code == LAUNCH_FAILED:
            raise DaemonStartError(
                f"the daemon failed to start; see {files.log_file}:\n{_tail(files)}"
            )
        # OK: it is up. ALREADY_RUNNING: another start won the race (its status file is
        # moments away), or a stopping daemon still holds the lock: launch again then.
        status = _wait_until_answering(min(deadline, time.monotonic() + RELAUNCH_AFTER_S))
        if status is not None:
            return status
        if time.monotonic() >= deadline:
            raise DaemonStartError(
                f"the daemon did not answer in time; see {files.log_file}:\n{_tail(files)}"
            )


def launcher_command(config_root: Path) -> list[str]:
    """The launcher's command line (a test may run it with other log limits)."""
    module = "shadowtab.daemon.launcher"
    return [sys.executable, "-m", module, "--detach", "--config-root", str(config_root)]


def _launch(log_file: Path, config_root: Path, timeout: float) -> int:
    """Run the launcher, which validates, takes the lock, forks the daemon and exits.
    Its output goes to the log, opened O_APPEND ("ab"): the daemon rotates the log by
    truncating it in place (daemon_logging), and an appending writer follows that."""
    with log_file.open("ab") as log:
        launcher = subprocess.Popen(
            launcher_command(config_root),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            env=_absolute_dir_env(),
        )
    try:
        return launcher.wait(timeout)
    except subprocess.TimeoutExpired:
        launcher.kill()
        launcher.wait()
        raise DaemonStartError(f"the daemon launcher hung; see {log_file}") from None


def _absolute_dir_env() -> dict[str, str]:
    """The environment for the daemon, with relative dir overrides made absolute (the
    daemon must not depend on the directory it was started from)."""
    env = dict(os.environ)
    for name in DIR_ENV_VARS:
        if env.get(name):
            env[name] = str(Path(env[name]).expanduser().absolute())
    return env


def _wait_until_answering(deadline: float) -> dict[str, Any] | None:
    while True:
        status = read_status()
        if status is not None or time.monotonic() >= deadline:
            return status
        time.sleep(POLL_INTERVAL_S)


def _tail(files: RuntimeFiles, lines: int = 15) -> str:
    try:
        text = files.log_file.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def stop_daemon(timeout: float = 10.0) -> bool:
    """Stop the daemon: ask it (sessions closed, journals flushed), then SIGTERM if it
    does not answer, SIGKILL if it is still alive after `timeout`. False: none ran."""
    files = RuntimeFiles.current()
    status = load_status_file(files.status_file)
    if status is None:
        return False
    pid = status["pid"]
    if not pid_alive(pid):
        remove_file(files.status_file)  # stale: the daemon died without cleaning up
        return False
    try:
        request("stop", timeout=min(timeout, 5.0), socket_path=Path(status["control_socket"]))
    except (DaemonNotRunning, ControlError):
        _signal(pid, signal.SIGTERM)
    if not wait_for_exit(pid, timeout):
        _signal(pid, signal.SIGKILL)
        wait_for_exit(pid, 5.0)
    if load_status_file(files.status_file) == status:
        remove_file(files.status_file)  # it was killed before it could clean up
    return True


def _signal(pid: int, signum: int) -> None:
    if is_shadowtab_process(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)


def wait_for_exit(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while pid_alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_INTERVAL_S)
    return True


def restart_daemon(timeout: float = 15.0, config_root: Path | None = None) -> dict[str, Any]:
    stop_daemon(timeout)
    return start_daemon(timeout, config_root)
