"""Smoke: the test server and the real `shadowtab lsp --standalone` answer."""

from __future__ import annotations

from lsp_helpers import FIXED_SERVER, STANDALONE, LspEnv, eventually, execute, inline, open_doc
from lsprotocol import types


async def test_inline_items_from_predictor(lsp_env: LspEnv) -> None:
    client = await lsp_env.client([*FIXED_SERVER, "--inline", "world", "--no-lint"])
    _, uri = lsp_env.file("a.py", "hello = 1\n")
    open_doc(client, uri, "hello = 1\n")
    items = await inline(client, uri, 0, 5)
    assert [i.insert_text for i in items] == ["world"]


async def test_standalone_cli_serves_stdio(lsp_env: LspEnv) -> None:
    client = await lsp_env.client(STANDALONE)  # engine "off" by env: no predictor
    _, uri = lsp_env.file("bad.py", "def f(:\n")
    open_doc(client, uri, "def f(:\n")
    errors = await eventually(lambda: client.diagnostics.get(uri), timeout=30)
    assert any(d.severity == types.DiagnosticSeverity.Error for d in errors)
    assert await inline(client, uri, 0, 3) == []
    assert (await execute(client, "shadowtab.lock.status"))["holder"] == "user"
    await client.shutdown_session()
    assert client._server is not None and client._server.returncode == 0
