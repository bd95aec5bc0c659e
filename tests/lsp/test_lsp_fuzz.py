"""Hypothesis sends random valid-shaped and invalid messages to one server process: every
request gets exactly one JSON-RPC response, and the server keeps answering."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsp_helpers import FIXED_SERVER, base_env, initialize_params

# the strategies the daemon torture (tests/torture/torture_fuzz.py) sends too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "torture"))
from lsp_fuzzing import LspWire, lsp_messages


class SyncServer(LspWire):
    """A blocking LSP connection to one server process over its stdio."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        super().__init__(self._write, lambda: os.read(fd, 65536), fd)

    def _write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture
def server() -> Iterator[tuple[SyncServer, Path]]:
    base = Path(tempfile.mkdtemp(prefix="stfuzz-", dir="/tmp"))
    root = base / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "a.py").write_text("x = 1\n")
    connection = SyncServer([*FIXED_SERVER, "--inline", "y", "--no-lint"], base_env(base))
    from pygls.protocol import default_converter

    params = default_converter().unstructure(initialize_params(root))
    init_id = connection.request("initialize", params)
    assert "result" in connection.answers({init_id})[init_id]
    connection.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    try:
        yield connection, root
    finally:
        connection.close()
        shutil.rmtree(base, ignore_errors=True)


def test_random_messages_never_kill_the_server(server: tuple[SyncServer, Path]) -> None:
    connection, root = server
    exchanged: list[int] = []

    @settings(
        max_examples=150,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(batch=st.lists(lsp_messages(root), min_size=1, max_size=6))
    def exchange(batch: list[tuple[str, Any]]) -> None:
        expected: set[int] = set()
        for kind, message in batch:
            if kind == "request":
                expected.add(connection.request(message["method"], message["params"]))
            elif kind == "notification":
                connection.send({"jsonrpc": "2.0", **message})
            elif kind == "body":
                connection.send_body(message)
            else:
                connection.send(message)
        ping = connection.request(
            "workspace/executeCommand", {"command": "shadowtab.lock.status", "arguments": []}
        )
        replies = connection.answers(expected | {ping})
        exchanged.append(len(expected))
        assert "result" in replies[ping], replies[ping]
        for msg_id in expected:
            reply = replies[msg_id]
            assert reply["jsonrpc"] == "2.0"
            assert ("result" in reply) != ("error" in reply), reply
            if "error" in reply:
                assert isinstance(reply["error"]["code"], int)
                assert isinstance(reply["error"]["message"], str)

    exchange()
    assert len(exchanged) >= 100 and sum(exchanged) >= 40
    assert connection.process.poll() is None
