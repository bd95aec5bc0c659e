"""The daemon process: `python -m shadowtab.daemon.launcher [--detach]`.

With --detach it is the launcher that `daemon start` spawns: it checks the settings,
takes the daemon lock, forks the daemon, waits until the daemon says its sockets are up
(a byte on a pipe; EOF means it died) and exits with a code the CLI reads. The second
fork leaves the daemon with no parent waiting on it, and no terminal.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import logging
import os
import select
import sys
from collections.abc import Sequence
from pathlib import Path

from shadowtab.daemon.client import LAUNCH_ALREADY_RUNNING, LAUNCH_FAILED, LAUNCH_OK
from shadowtab.daemon.config import ConfigError, Settings, load_settings
from shadowtab.daemon.daemon_logging import setup_logging
from shadowtab.daemon.runtime_files import DaemonLock, RuntimeFiles, remove_file

logger = logging.getLogger("shadowtab.daemon")

READY_BYTE = b"R"
READY_TIMEOUT_S = 20.0  # the sockets come up in well under a second; the model loads later


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m shadowtab.daemon.launcher")
    parser.add_argument("--detach", action="store_true", help="fork into the background")
    parser.add_argument("--config-root", type=Path, default=None, help="workspace config dir")
    args = parser.parse_args(argv)
    try:
        settings = load_settings(args.config_root)
    except ConfigError as exc:
        print(f"shadowtab: bad configuration: {exc}", file=sys.stderr)
        return LAUNCH_FAILED
    files = RuntimeFiles.current()
    lock = DaemonLock(files.lock_file)
    if not lock.try_acquire():
        print(f"shadowtab: a daemon already holds {files.lock_file}", file=sys.stderr)
        return LAUNCH_ALREADY_RUNNING
    problem = files.socket_path_problem()
    if problem:
        print(f"shadowtab: {problem}", file=sys.stderr)
        return LAUNCH_FAILED
    if not args.detach:
        return run_daemon(settings, files, foreground=True)
    ready_read, ready_write = os.pipe()
    if os.fork() != 0:
        os.close(ready_write)  # the launcher; the child keeps the lock (same open file)
        os._exit(_wait_for_ready(ready_read, files))
    os.close(ready_read)
    return run_daemon(settings, files, foreground=False, ready_fd=ready_write)


def _wait_for_ready(ready_read: int, files: RuntimeFiles) -> int:
    readable, _, _ = select.select([ready_read], [], [], READY_TIMEOUT_S)
    if readable and os.read(ready_read, 1) == READY_BYTE:
        return LAUNCH_OK
    why = "did not come up in time" if not readable else "exited during start-up"
    print(f"shadowtab: the daemon {why}; see {files.log_file}", file=sys.stderr)
    return LAUNCH_FAILED


def _signal_ready(ready_fd: int) -> None:
    os.write(ready_fd, READY_BYTE)
    os.close(ready_fd)


def run_daemon(
    settings: Settings, files: RuntimeFiles, foreground: bool, ready_fd: int | None = None
) -> int:
    """Serve until stopped; the caller holds the daemon lock."""
    from shadowtab.daemon.service import DaemonService

    os.umask(0o077)
    setup_logging(files.log_file, foreground)

    async def serve() -> None:
        on_ready = None if ready_fd is None else functools.partial(_signal_ready, ready_fd)
        await DaemonService(settings, files, on_ready).serve()

    try:
        # We hold the lock, so whatever is left here belongs to a daemon that died.
        for leftover in (files.status_file, files.control_socket, files.lsp_socket):
            remove_file(leftover)
        asyncio.run(serve())
    except Exception:
        logger.exception("the daemon failed")
        remove_file(files.status_file)
        return LAUNCH_FAILED
    finally:
        logging.shutdown()
    return LAUNCH_OK


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Threads the hub may leave behind (watchers, the model loader) must not keep a
    # stopped daemon alive.
    os._exit(code)
