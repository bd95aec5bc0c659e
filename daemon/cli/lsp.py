"""`shadowtab lsp`: what editors launch.

By default a byte pump between stdio and the daemon's LSP socket (the daemon is started
when it is not running). `--standalone` serves LSP on stdio in this process instead.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import socket
import sys
import threading
from pathlib import Path
from typing import Any

from shadowtab.daemon.cli.exit_codes import EXIT_FAILURE, EXIT_OK

CHUNK = 64 * 1024
DEFAULT_START_TIMEOUT_S = 30.0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "lsp",
        help="serve LSP on stdio (what editors launch)",
        description="Connect stdio to the daemon's LSP socket, starting the daemon if needed.",
    )
    parser.add_argument(
        "--standalone",
        action="store_true",
        help="serve LSP in this process, without a daemon",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_START_TIMEOUT_S,
        help="seconds to wait for the daemon to start (default %(default)s)",
    )
    parser.add_argument(
        "--stdio",
        action="store_true",
        help="accepted and ignored: stdio is the transport (LSP clients often pass it)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.standalone:
        return run_standalone()
    return run_pump(args.timeout)


def run_standalone() -> int:
    import asyncio

    from shadowtab.daemon.config import ConfigError, load_settings
    from shadowtab.lsp.hub import Hub

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        options = load_settings(Path.cwd()).hub_options()
    except ConfigError as exc:
        print(f"shadowtab lsp: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    return asyncio.run(serve_hub_on_stdio(Hub(options)))


async def serve_hub_on_stdio(hub: Any) -> int:
    """Serve one session on stdio; exit code 0 after shutdown+exit or EOF, 1 after an
    `exit` without `shutdown` (as the LSP spec asks)."""
    await hub.start()
    try:
        clean = await hub.serve_stdio()
    finally:
        await hub.close()
    return EXIT_OK if clean else EXIT_FAILURE


def run_pump(timeout: float) -> int:
    from shadowtab.daemon.client import DaemonStartError, ensure_running

    try:
        status = ensure_running(timeout, config_root=Path.cwd())
    except DaemonStartError as exc:
        print(f"shadowtab lsp: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except Exception as exc:  # bad config and the like: say it, editors show stderr
        print(f"shadowtab lsp: cannot start the daemon: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(status["lsp_socket"])
    except OSError as exc:
        print(f"shadowtab lsp: cannot connect to {status['lsp_socket']}: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    return pump(conn, sys.stdin.buffer.fileno(), sys.stdout.buffer.fileno())


def pump(conn: socket.socket, stdin_fd: int, stdout_fd: int) -> int:
    """Copy bytes both ways until the daemon closes the connection."""
    stdin_done = threading.Event()
    upstream = threading.Thread(
        target=_copy_stdin, args=(stdin_fd, conn, stdin_done), daemon=True, name="stdin->daemon"
    )
    upstream.start()
    broken = _copy_socket(conn, stdout_fd)
    conn.close()
    if broken:
        return EXIT_FAILURE
    if stdin_done.is_set() or _daemon_alive():
        return EXIT_OK  # the editor closed stdin or sent `exit`: the session ended
    print("shadowtab lsp: the daemon went away; restart the server", file=sys.stderr)
    return EXIT_FAILURE


def _copy_stdin(stdin_fd: int, conn: socket.socket, done: threading.Event) -> None:
    try:
        while data := os.read(stdin_fd, CHUNK):
            conn.sendall(data)
    except OSError:
        pass  # the daemon side closed: the socket reader reports it
    finally:
        done.set()
        with contextlib.suppress(OSError):
            conn.shutdown(socket.SHUT_WR)  # the session sees EOF and ends


def _copy_socket(conn: socket.socket, stdout_fd: int) -> bool:
    """Daemon -> stdout until EOF. True when stdout broke (the editor is gone)."""
    try:
        while data := conn.recv(CHUNK):
            _write_all(stdout_fd, data)
    except BrokenPipeError:
        return True
    except OSError as exc:
        print(f"shadowtab lsp: connection to the daemon failed: {exc}", file=sys.stderr)
    return False


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _daemon_alive() -> bool:
    from shadowtab.daemon.client import read_status

    try:
        return read_status() is not None
    except Exception:
        return False
