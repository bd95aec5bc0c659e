"""Ghost text's choices: every source's distinct answer, in the sources' order of
preference, so the first is what one source alone would show and the rest are there to
cycle through; the model runs after a cheaper answer only when the user asked."""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from shadowtab.inference import Completion, RequestStats
from shadowtab.inference.next_edit.candidates import Candidate
from shadowtab.inference.next_edit.edits import TextEdit
from shadowtab.inference.next_edit.predictor import EnginePredictor, PredictionRequest

# The second line repeats the first one's start: the repetition source continues it.
TYPED = "again = compute_total(items, discount=ra"
TEXT = f"total = compute_total(items, discount=rate)\n{TYPED}\n"
AT = TEXT.index(TYPED) + len(TYPED)


@dataclass
class SureEngine:
    """complete(): `answer`, every character a token of probability 0.99."""

    answer: str
    calls: list[int] = field(default_factory=list)

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
        self.calls.append(n)
        return Completion(
            [self.answer],
            RequestStats(),
            finish_reasons=["stop"],
            logprobs=[[math.log(0.99)] * len(self.answer)],
            text_offsets=[list(range(1, len(self.answer) + 1))],
        )


def predictor_over(engine: SureEngine, use_repetition: bool = True) -> EnginePredictor:
    return EnginePredictor(lambda: engine, "shadowtab", use_repetition=use_repetition)  # type: ignore[arg-type, return-value]


def ask(
    predictor: EnginePredictor,
    invoked: bool,
    n: int = 3,
    text: str = TEXT,
    cursor: int = AT,
) -> list[Candidate]:
    request = PredictionRequest("a.py", "python", text, cursor, (), n, invoked=invoked)
    return predictor.inline(request)


def texts(found: Sequence[Candidate]) -> list[tuple[str, str]]:
    return [(c.edit.new_text, c.source) for c in found]


def test_typing_keeps_the_one_fast_answer() -> None:
    """Asked automatically: the repetition answers, as it did alone; the model is not run
    after it (typing keeps its speed)."""
    engine = SureEngine("te)")
    assert texts(ask(predictor_over(engine), invoked=False)) == [("te", "repetition")]
    assert engine.calls == []


def test_asked_for_the_model_continuation_follows_the_first() -> None:
    engine = SureEngine("te)")
    found = ask(predictor_over(engine), invoked=True)
    assert texts(found) == [("te", "repetition"), ("te)", "completion")]
    assert engine.calls == [1]
    assert all(c.kind == "inline" and c.edit.start == c.edit.end == AT for c in found)


def test_a_choice_equal_to_one_before_is_offered_once() -> None:
    engine = SureEngine("te")
    assert texts(ask(predictor_over(engine), invoked=True)) == [("te", "repetition")]


def test_one_candidate_asked_for_runs_nothing_after_the_first() -> None:
    engine = SureEngine("te)")
    assert texts(ask(predictor_over(engine), invoked=True, n=1)) == [("te", "repetition")]
    assert engine.calls == []


def test_the_known_rewrites_ghost_text_follows_the_continuation() -> None:
    """No repetition: the continuation first (as alone), then the ghost text of the
    rewrite already known for this state, then nothing else (n is not reached)."""
    engine = SureEngine("te)")
    predictor = predictor_over(engine, use_repetition=False)
    rewrite = Candidate((TextEdit(AT, AT, "te, tax=rate)"),), 0.7, "model", "shadowtab")
    predictor.pipeline.memory.remember("a.py", TEXT, AT, [rewrite])
    found = ask(predictor, invoked=False)
    assert texts(found) == [("te)", "completion"), ("te, tax=rate)", "model")]


def test_typing_through_a_choice_keeps_it_first() -> None:
    """Both choices shown; the user types what only the second one predicted: its rest
    comes first (the first choice is contradicted), without running the model."""
    engine = SureEngine("te)")
    predictor = predictor_over(engine)
    ask(predictor, invoked=True)
    typed = TEXT[:AT] + "te" + TEXT[AT:]
    found = ask(predictor, invoked=False, text=typed, cursor=AT + 2)
    assert texts(found)[0] == (")", "completion")
    assert engine.calls == [1]


def test_typing_what_both_predicted_keeps_their_order() -> None:
    engine = SureEngine("te)")
    predictor = predictor_over(engine)
    ask(predictor, invoked=True)
    typed = TEXT[:AT] + "t" + TEXT[AT:]
    found = ask(predictor, invoked=False, text=typed, cursor=AT + 1)
    assert texts(found)[:2] == [("e", "repetition"), ("e)", "completion")]
