"""Smoke: the standalone server answers initialize, syncs text, completes inline."""

from __future__ import annotations

from lsp_helpers import FIXED_SERVER, LspEnv, inline, open_doc


async def test_inline_items_from_predictor(lsp_env: LspEnv) -> None:
    client = await lsp_env.client([*FIXED_SERVER, "--inline", "world", "--no-lint"])
    _, uri = lsp_env.file("a.py", "hello = 1\n")
    open_doc(client, uri, "hello = 1\n")
    items = await inline(client, uri, 0, 5)
    assert [i.insert_text for i in items] == ["world"]
