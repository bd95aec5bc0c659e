"""Fixtures of the language server tests: fresh SHADOWTAB_* dirs and a workspace root
per test; every server process and any daemon a test started are stopped afterwards."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from lsp_helpers import LspEnv, base_env
from pytest_lsp import LanguageClient


@pytest.fixture
async def lsp_env() -> AsyncIterator[LspEnv]:
    # Short paths: a unix socket path must fit in 107 bytes.
    base = Path(tempfile.mkdtemp(prefix="stlsp-", dir="/tmp"))
    root = base / "proj"
    (root / ".git").mkdir(parents=True)
    env = LspEnv(base=base, root=root, env=base_env(base))
    try:
        yield env
    finally:
        for client in env.clients:
            await stop_client(client)
        stop_daemon(env)
        shutil.rmtree(base, ignore_errors=True)


async def stop_client(client: LanguageClient) -> None:
    server = client._server
    if server is not None and server.returncode is None and client.error is None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.shutdown_session(), 5)
    if server is not None and server.returncode is None:
        server.kill()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(client.stop(), 5)


def stop_daemon(env: LspEnv) -> None:
    if not (env.base / "run").exists():
        return
    command = [sys.executable, "-m", "shadowtab.daemon.cli", "daemon", "stop"]
    subprocess.run(command, env=env.env, capture_output=True, timeout=30, check=False)
