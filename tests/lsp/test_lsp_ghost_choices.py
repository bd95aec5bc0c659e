"""textDocument/inlineCompletion offers ghost text's choices to cycle through: the real
predictor (EnginePredictor, an engine that always answers the same sure continuation)
in the Hub. Typing (triggerKind Automatic) gets the fast answer alone; asking (Invoked,
as VS Code does when the user cycles) gets the model's too, after it; every choice goes
through the lint gate."""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from typing import Any

from hub_socket import HubClient, hub_on_socket
from shadowtab.inference import Completion, RequestStats
from shadowtab.inference.next_edit.predictor import EnginePredictor
from shadowtab.shadow_workspace import DEFAULT_LINTERS

SYNTAX_ONLY = {"python-syntax": DEFAULT_LINTERS["python-syntax"]}
# The cursor before the last line's ")": the first line's text continues it with "te".
TEXT = "total = compute_total(items, discount=rate)\nagain = compute_total(items, discount=ra)\n"
LINE, CHARACTER = 1, len("again = compute_total(items, discount=ra")
INVOKED, AUTOMATIC = 1, 2


class SureEngine:
    """complete(): `answer`, every character a token of probability 0.99."""

    def __init__(self, answer: str) -> None:
        self.answer = answer

    def complete(
        self,
        prompt: str,
        max_tokens: int,
        stop: Sequence[str] = (),
        n: int = 1,
        cancel: threading.Event | None = None,
        min_token_p: float = 0.0,
        heal: bool = False,
    ) -> Completion:
        return Completion(
            [self.answer],
            RequestStats(),
            finish_reasons=["stop"],
            logprobs=[[math.log(0.99)] * len(self.answer)],
            text_offsets=[list(range(1, len(self.answer) + 1))],
        )


async def ghost_texts(client: HubClient, uri: str, trigger_kind: int) -> list[str]:
    params = {
        "textDocument": {"uri": uri},
        "position": {"line": LINE, "character": CHARACTER},
        "context": {"triggerKind": trigger_kind},
    }
    reply: dict[str, Any] = await client.call("textDocument/inlineCompletion", params)
    assert "result" in reply, reply
    position = {"line": LINE, "character": CHARACTER}
    assert all(i["range"] == {"start": position, "end": position} for i in reply["result"])
    return [item["insertText"] for item in reply["result"]]


async def choices(answer: str) -> tuple[list[str], list[str]]:
    """The ghost texts asked automatically, then invoked, with the model answering `answer`."""
    engine = SureEngine(answer)
    predictor = EnginePredictor(lambda: engine, "shadowtab")  # type: ignore[arg-type, return-value]
    async with hub_on_socket(predictor, linters=SYNTAX_ONLY) as setup:
        client = await setup.client()
        path = setup.root / "a.py"
        path.write_text(TEXT)
        client.open(path.as_uri(), TEXT)
        automatic = await ghost_texts(client, path.as_uri(), AUTOMATIC)
        invoked = await ghost_texts(client, path.as_uri(), INVOKED)
        await client.close()
    return automatic, invoked


async def test_asking_adds_the_models_choice_after_the_fast_answer() -> None:
    automatic, invoked = await choices("te, tax=1)")
    assert automatic == ["te"]
    assert invoked == ["te", "te, tax=1"]


async def test_a_choice_that_adds_an_error_is_dropped() -> None:
    _, invoked = await choices("te, =)")
    assert invoked == ["te"]
