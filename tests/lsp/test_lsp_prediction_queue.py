"""Predictions queued behind others for the model: answered, never left waiting without
bound (issue 14's torture_clients left 8 editors' last requests queued for minutes)."""

from __future__ import annotations

import asyncio
import time

from hub_socket import hub_on_socket
from shadowtab.inference.next_edit.predictor import FixedPredictor

CONTENT_MODIFIED = -32801
EDITORS = 5
CALL_S = 1.0  # each prediction takes this long; two run at once


async def test_predictions_that_wait_too_long_for_the_model_are_dropped_not_queued() -> None:
    predictor = FixedPredictor(inline_texts=["z"], delay_s=CALL_S)
    async with hub_on_socket(predictor, prediction_wait_s=0.5) as setup:
        editors, pending = [], []
        for number in range(EDITORS):
            (setup.root / f"f{number}.py").write_text("x = 1\n")
            uri = (setup.root / f"f{number}.py").as_uri()
            editor = await setup.client()
            editor.open(uri, "x = 1\n")
            await editor.command("shadowtab.lock.status")  # the open is handled
            editors.append((editor, uri))
        started = time.monotonic()
        for editor, uri in editors:
            params = {
                "textDocument": {"uri": uri},
                "position": {"line": 0, "character": 5},
                "context": {"triggerKind": 2},
            }
            pending.append(editor.request("textDocument/inlineCompletion", params))
        replies = await asyncio.gather(
            *(editor.response(msg_id) for (editor, _), msg_id in zip(editors, pending, strict=True))
        )
        elapsed = time.monotonic() - started

        shown = [r for r in replies if r.get("result")]
        dropped = [r for r in replies if r.get("error", {}).get("code") == CONTENT_MODIFIED]
        assert len(shown) == 2, replies  # the two worker threads' predictions
        assert len(dropped) == EDITORS - 2, replies
        assert all("waited" in r["error"]["message"] for r in dropped), dropped
        assert elapsed < 2 * CALL_S + 1.0  # not EDITORS * CALL_S / 2 as a queue would take
        assert setup.hub.stats()["predictions_expired"] == EDITORS - 2
        assert predictor.calls.count("inline") == 2  # the dropped ones never ran
        for editor, _ in editors:
            await editor.close()
