"""The daemon's LSP socket reaches the hub: a real initialize/shutdown exchange over it,
including a connection made before the hub is built (it waits, then is served)."""

from __future__ import annotations

import json
import socket
from typing import Any

from shadowtab.daemon.client import start_daemon


def _send(sock: socket.socket, message: dict[str, Any]) -> None:
    body = json.dumps(message).encode()
    sock.sendall(f"Content-Length: {len(body)}\r\n\r\n".encode() + body)


def _receive(sock: socket.socket, buffer: bytearray) -> dict[str, Any]:
    while b"\r\n\r\n" not in buffer:
        buffer.extend(_recv_some(sock))
    header, _, rest = bytes(buffer).partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in header.split(b"\r\n")
        if line.lower().startswith(b"content-length")
    )
    while len(rest) < length:
        rest += _recv_some(sock)
    buffer[:] = rest[length:]
    message: dict[str, Any] = json.loads(rest[:length])
    return message


def _recv_some(sock: socket.socket) -> bytes:
    chunk = sock.recv(65536)
    assert chunk, "the daemon closed the LSP connection"
    return chunk


def _response(sock: socket.socket, buffer: bytearray, request_id: int) -> dict[str, Any]:
    while True:  # skip notifications and server requests (progress, logs)
        message = _receive(sock, buffer)
        if message.get("id") == request_id and "method" not in message:
            return message


def test_lsp_session_over_the_daemon_socket(daemon_env: Any) -> None:
    status = start_daemon(timeout=30)  # connect at once: the hub may still be building
    daemon_env.seen_pids.add(status["pid"])
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(60)
        sock.connect(status["lsp_socket"])
        buffer = bytearray()
        root = daemon_env.workdir.as_uri()
        _send(
            sock,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"processId": None, "rootUri": root, "capabilities": {}},
            },
        )
        reply = _response(sock, buffer, 1)
        assert "capabilities" in reply["result"], reply
        _send(sock, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
        _send(sock, {"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        assert _response(sock, buffer, 2)["result"] is None
        _send(sock, {"jsonrpc": "2.0", "method": "exit"})
    from shadowtab.daemon.client import request

    assert request("status")["pid"] == status["pid"]  # the session ended, not the daemon
