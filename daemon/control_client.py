"""Blocking client of the control socket, for the CLI and the LSP shim."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from shadowtab.daemon.control_protocol import (
    ConnectionClosed,
    ProtocolError,
    encode_frame,
    recv_frame,
)


class DaemonNotRunning(ConnectionError):
    """No daemon answers on the control socket."""


class ControlError(RuntimeError):
    """The daemon answered with an error, or the exchange broke off."""


def control_socket_path() -> Path:
    from shadowtab.daemon.lifecycle import read_status

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
        except (ConnectionClosed, ProtocolError, OSError) as exc:
            raise ControlError(f"'{cmd}' failed: {exc}") from None
    if not reply.get("ok"):
        raise ControlError(str(reply.get("error", f"error reply without a message: {reply}")))
    return reply
