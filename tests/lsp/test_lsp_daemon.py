"""Through the daemon: `shadowtab lsp` pumps start it, sessions share one hub, one editor
leaving does not disturb the other, and a pump exits when the daemon dies."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

from lsp_helpers import PUMP, EditorBuffers, LspEnv, eventually, execute, inline, open_doc
from lsp_raw_client import RawLspClient
from lsprotocol import types


def daemon_status(env: LspEnv) -> dict[str, object]:
    command = [sys.executable, "-m", "shadowtab.daemon.cli", "daemon", "status", "--json"]
    done = subprocess.run(command, env=env.env, capture_output=True, timeout=30, check=False)
    status: dict[str, object] = json.loads(done.stdout)
    return status


def hub_sessions(env: LspEnv) -> int:
    hub = daemon_status(env).get("hub")
    assert isinstance(hub, dict)
    sessions = hub.get("sessions", -1)
    assert isinstance(sessions, int)
    return sessions


async def test_features_through_the_pump(lsp_env: LspEnv) -> None:
    client = await lsp_env.client(PUMP)
    caps = lsp_env.init_results[0].capabilities
    assert caps.inline_completion_provider is not None
    _, uri = lsp_env.file("bad.py", "x = (\n")
    open_doc(client, uri, "x = (\n")
    errors = await eventually(lambda: client.diagnostics.get(uri), timeout=30)
    assert any(d.severity == types.DiagnosticSeverity.Error for d in errors)
    assert await inline(client, uri, 0, 5) == []  # engine "off": no predictor, no items
    status = await execute(client, "shadowtab.lock.status")
    assert status["holder"] == "user"


async def test_two_editors_share_one_daemon(lsp_env: LspEnv) -> None:
    first = await lsp_env.client(PUMP)
    second = await lsp_env.client(PUMP)
    assert await eventually(lambda: hub_sessions(lsp_env) == 2)
    _, uri = lsp_env.file("shared.py", "a = 1\n")
    open_doc(first, uri, "a = 1\n")
    open_doc(second, uri, "a = 1\n")
    heard = asyncio.ensure_future(second.wait_for_notification("shadowtab/lockChanged"))
    await asyncio.sleep(0)
    await execute(first, "shadowtab.lock.release")
    note = await asyncio.wait_for(heard, 10)
    assert note.holder == "model"
    status = await execute(second, "shadowtab.lock.status")
    assert status["holder"] == "model"
    # the first editor is killed: its session goes, the second keeps working
    server = first._server
    assert server is not None
    server.kill()
    await server.wait()
    assert await eventually(lambda: hub_sessions(lsp_env) == 1, timeout=15)
    taken = await execute(second, "shadowtab.lock.take", {"mode": "keep"})
    assert taken["holder"] == "user"
    assert isinstance(await inline(second, uri, 0, 5), list)


async def test_shutdown_of_one_session_leaves_the_daemon(lsp_env: LspEnv) -> None:
    first = await lsp_env.client(PUMP)
    second = await lsp_env.client(PUMP)
    await first.shutdown_session()  # shutdown + exit: the pump ends with code 0
    assert first._server is not None and first._server.returncode == 0
    status = await execute(second, "shadowtab.lock.status")
    assert status["holder"] == "user"
    assert await eventually(lambda: hub_sessions(lsp_env) == 1, timeout=15)


async def test_pump_exits_with_a_message_when_the_daemon_dies(lsp_env: LspEnv) -> None:
    raw = await RawLspClient.start(PUMP, lsp_env.env, capture_stderr=True)
    try:
        await raw.initialize(lsp_env.root)
        stop = [sys.executable, "-m", "shadowtab.daemon.cli", "daemon", "stop"]
        subprocess.run(stop, env=lsp_env.env, capture_output=True, timeout=30, check=True)
        code = await asyncio.wait_for(raw.process.wait(), 15)
        assert raw.process.stderr is not None
        stderr = (await raw.process.stderr.read()).decode()
        assert code == 1
        assert "daemon went away" in stderr
    finally:
        await raw.close()


async def test_keystrokes_reach_the_other_editor_of_the_same_file(lsp_env: LspEnv) -> None:
    first = await lsp_env.client(PUMP)
    second = await lsp_env.client(PUMP)
    one, two = EditorBuffers(first), EditorBuffers(second)
    _, uri = lsp_env.file("both.py", "a = 1\n")
    one.open(uri, "a = 1\n")
    two.open(uri, "a = 1\n")
    await execute(first, "shadowtab.lock.status")  # both opens are handled
    await execute(second, "shadowtab.lock.status")
    one.type(uri, "b = 2\n", (1, 0))
    await eventually(lambda: two.texts[uri] == "a = 1\nb = 2\n")
    two.type(uri, "# two\n", (0, 0))
    await eventually(lambda: one.texts[uri] == "# two\na = 1\nb = 2\n")
    diff = await execute(first, "shadowtab.shadow.diff")
    assert diff["diff"].count("+b = 2") == 1 and diff["diff"].count("+# two") == 1


async def test_broken_framing_ends_that_connection_only(lsp_env: LspEnv) -> None:
    survivor = await lsp_env.client(PUMP)
    raw = await RawLspClient.start(PUMP, lsp_env.env)
    try:
        await raw.initialize(lsp_env.root)
        assert raw.process.stdin is not None
        raw.process.stdin.write(b"Content-Length: 999999999999\r\n\r\n")
        assert await asyncio.wait_for(raw.process.wait(), 15) == 0  # the session ended
    finally:
        await raw.close()
    assert (await execute(survivor, "shadowtab.lock.status"))["holder"] == "user"
    assert await eventually(lambda: hub_sessions(lsp_env) == 1, timeout=15)
