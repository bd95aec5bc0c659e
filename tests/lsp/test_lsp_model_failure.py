"""A model that cannot load is shown to the editor once, as an error message with the
reason and what to do, not on every keystroke; the session keeps serving text sync."""

from __future__ import annotations

import asyncio

from lsp_helpers import STANDALONE, LspEnv, change_doc, eventually, inline, open_doc


async def test_a_failed_model_load_is_shown_once_with_its_reason(lsp_env: LspEnv) -> None:
    junk = lsp_env.base / "not-a-model.gguf"
    junk.write_bytes(b"this is not a GGUF file")
    lsp_env.env["SHADOWTAB_ENGINE_MODEL_PATH"] = str(junk)
    lsp_env.env["SHADOWTAB_ENGINE_KIND"] = "llama.cpp"
    client = await lsp_env.client(STANDALONE)
    failures = await eventually(
        lambda: [m for m in client.messages if "model failed" in m.message] or None, timeout=20
    )
    assert str(junk) in failures[0].message and "engine.model_path" in failures[0].message

    _, uri = lsp_env.file("a.py", "x = 1\n")
    open_doc(client, uri, "x = 1\n")
    for version in range(2, 5):
        change_doc(client, uri, version, str(version), (0, 5))
        assert await inline(client, uri, 0, 6) in ([], None)
    await asyncio.sleep(1.0)
    assert len([m for m in client.messages if "model failed" in m.message]) == 1
