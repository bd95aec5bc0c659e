"""`shadowtab lock`, `shadowtab shadow` and `shadowtab run` against a real daemon (model
engine off): a model edit sent over the daemon's LSP socket stays in the shadow while the
model holds the lock, the CLI shows and commits it, `run` warns and passes exit codes."""

from __future__ import annotations

import json
import socket
import sys
import time
from pathlib import Path
from typing import Any

from shadow_helpers import cli


class LspSocketClient:
    """A minimal JSON-RPC client on the daemon's LSP socket."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(60)
        self.sock.connect(path)
        self.buffer = b""
        self.next_id = 0

    def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            message = self.receive()
            if message.get("id") == self.next_id and "method" not in message:
                assert "error" not in message, message
                return message["result"]

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        self.sock.sendall(f"Content-Length: {len(body)}\r\n\r\n".encode() + body)

    def receive(self) -> dict[str, Any]:
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self._recv()
        header, _, rest = self.buffer.partition(b"\r\n\r\n")
        length = int(header.lower().split(b"content-length:")[1].split(b"\r\n")[0])
        while len(rest) < length:
            rest += self._recv()
        self.buffer = rest[length:]
        message: dict[str, Any] = json.loads(rest[:length])
        return message

    def _recv(self) -> bytes:
        chunk = self.sock.recv(65536)
        assert chunk, "the daemon closed the connection"
        return chunk


def test_lock_shadow_and_run_commands(daemon_dirs: Path) -> None:
    project = daemon_dirs
    source = project / "app.py"
    source.write_text("x = 1\n")
    assert cli(project, "lock", "status").returncode == 2  # no daemon yet
    ran = cli(project, "run", "--", sys.executable, "-c", "raise SystemExit(3)")
    assert ran.returncode == 3 and "warning" not in ran.stderr

    started = cli(project, "daemon", "start")
    assert started.returncode == 0, started.stderr
    released = cli(project, "lock", "release", "--json")
    assert released.returncode == 0, released.stderr
    assert json.loads(released.stdout)["holder"] == "model"

    from shadowtab.daemon.client import read_status

    status = read_status()
    assert status is not None
    client = LspSocketClient(status["lsp_socket"])
    client.request(
        "initialize", {"processId": None, "rootUri": project.as_uri(), "capabilities": {}}
    )
    client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    edit = {
        "changes": {
            source.as_uri(): [
                {
                    "range": {
                        "start": {"line": 1, "character": 0},
                        "end": {"line": 1, "character": 0},
                    },
                    "newText": "y = 2\n",
                }
            ]
        }
    }
    client.request(
        "workspace/executeCommand", {"command": "shadowtab.shadow.applyEdit", "arguments": [edit]}
    )
    assert source.read_text() == "x = 1\n"  # the model holds the lock: shadow only

    lock = cli(project, "lock", "status")
    assert lock.returncode == 0 and "model holds" in lock.stdout and "pending" in lock.stdout
    diff = cli(project, "shadow", "diff")
    assert "+y = 2" in diff.stdout and "a/app.py" in diff.stdout
    pending = cli(project, "shadow", "pending")
    assert source.as_uri() in pending.stdout

    ran = cli(project, "run", "--", sys.executable, "-c", "import sys; print('hi'); sys.exit(7)")
    assert ran.returncode == 7 and ran.stdout == "hi\n"
    assert "warning" in ran.stderr and "app.py" in ran.stderr

    taken = cli(project, "lock", "take", "--commit")
    assert taken.returncode == 0, taken.stderr
    assert "written" in taken.stdout and source.read_text() == "x = 1\ny = 2\n"
    ran = cli(project, "run", "--", sys.executable, "-c", "pass")
    assert ran.returncode == 0 and "warning" not in ran.stderr
    assert "user holds" in cli(project, "lock", "status").stdout

    bad = cli(project, "lock", "take", "--root", str(project / "missing"))
    assert bad.returncode == 1 and "not a directory" in bad.stderr
    assert cli(project, "run").returncode == 2
    assert cli(project, "run", "--", "no-such-program-xyz").returncode == 127
    client.sock.close()
    time.sleep(0.1)
