"""Ghost text does not wait for the rewrite: a plain continuation answers it unless the
rewrite's answer for this state is already known, and the rewrite is asked only when
the continuation offers nothing. A scripted engine counts the calls."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from shadowtab.inference import Completion, RequestStats
from shadowtab.inference.next_edit.events import Edit
from shadowtab.inference.next_edit.predictor import EnginePredictor, PredictionRequest

OPENED = "".join(f"x{i} = compute({i})\n" for i in range(30))
AT = OPENED.index("x15 = ") + len("x15 = ")
TYPED = "comp"
NOW = OPENED[:AT] + TYPED + OPENED[AT + len("compute(15)") :]
CURSOR = AT + len(TYPED)
EVENTS = (
    Edit("a.py", 1.0, AT, "compute(15)", ""),
    *(Edit("a.py", 1.1 + i / 10, AT + i, "", c) for i, c in enumerate(TYPED)),
)
REQUEST = PredictionRequest("a.py", "python", NOW, CURSOR, EVENTS, max_candidates=3)


@dataclass
class ScriptedEngine:
    """Continues with `continuation`; rewrites the window's "x15 = comp" line into
    "x15 = compute(15, cache=True)"."""

    continuation: str
    calls: list[str] = field(default_factory=list)

    def tokenize(self, text: str, special: bool = False) -> list[int]:
        return list(range(len(text) // 4 + 1))

    def warm(self, prompt: str, cancel: threading.Event | None = None) -> RequestStats:
        self.calls.append("warm " + prompt.split("\n", 1)[0])
        return RequestStats()

    def complete(
        self,
        prompt: str,
        max_tokens: int,
        stop: Sequence[str] = (),
        n: int = 1,
        cancel: threading.Event | None = None,
    ) -> Completion:
        self.calls.append("complete")
        return _answer(self.continuation)

    def rewrite(
        self,
        prompt: str,
        draft: str,
        max_tokens: int,
        stop: Sequence[str] = (),
        speculative: bool = True,
        cancel: threading.Event | None = None,
        n: int = 1,
    ) -> Completion:
        self.calls.append("rewrite")
        return _answer(draft.replace("x15 = comp\n", "x15 = compute(15, cache=True)\n"))


def _answer(text: str) -> Completion:
    return Completion(
        [text],
        RequestStats(),
        finish_reasons=["eos"],
        logprobs=[[-0.1]],
        text_offsets=[[len(text)]],
    )


def predictor_with(continuation: str) -> tuple[EnginePredictor, ScriptedEngine]:
    engine = ScriptedEngine(continuation)
    return EnginePredictor(lambda: engine, "shadowtab"), engine  # type: ignore[arg-type, return-value]


def test_ghost_text_is_the_continuation_without_a_rewrite() -> None:
    predictor, engine = predictor_with("ute(16)")
    (item,) = predictor.inline(REQUEST)
    assert item.text == "ute(16)" and item.source == "completion"
    assert engine.calls == ["complete"]


def test_ghost_text_takes_the_rewrite_computed_for_this_state() -> None:
    predictor, engine = predictor_with("ute(16)")
    predictor.next_edit(REQUEST)
    (item,) = predictor.inline(REQUEST)
    assert item.text == "ute(15, cache=True)" and item.source == "model"
    assert engine.calls == ["rewrite"]


def test_the_rewrite_answers_when_the_continuation_offers_nothing() -> None:
    predictor, engine = predictor_with("   ")
    (item,) = predictor.inline(REQUEST)
    assert item.text == "ute(15, cache=True)"
    assert engine.calls == ["complete", "rewrite"]
    predictor.next_edit(REQUEST)
    assert engine.calls == ["complete", "rewrite"]  # the next edit reuses that rewrite


def test_warming_prefills_the_continuation_first_then_the_next_edit_prompt() -> None:
    predictor, engine = predictor_with("ute(16)")
    predictor.warm(REQUEST)
    assert engine.calls[0] == "warm # File: a.py"  # the continuation's prompt
    assert len(engine.calls) == 2 and engine.calls[1] != engine.calls[0]
