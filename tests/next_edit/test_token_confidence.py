"""Token-level confidence in the predictor: ghost text cut at the first unsure token, a
next edit through an unsure token dropped, candidates that carry each token's
probability (or say they have none), and ghost text that never runs a rewrite."""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from shadowtab.inference import Completion, RequestStats
from shadowtab.inference.next_edit.candidates import Query
from shadowtab.inference.next_edit.ghost_text.completion_source import (
    CompletionSource,
    ghost_candidate,
)
from shadowtab.inference.next_edit.predictor import EnginePredictor, PredictionRequest
from shadowtab.inference.next_edit.rewrite.model_source import ModelSource
from shadowtab.inference.next_edit.situation import EditInProgress, Situation
from shadowtab.inference.next_edit.token_confidence import (
    TokenTrace,
    probability_margin,
    trace_of,
    unsure_change,
)

# "x = compute(a, b)" written as tokens, sure up to "(a" and unsure at ", b)"
PIECES = ["compute", "(", "a", ", b", ")"]
PROBS = [0.97, 0.95, 0.9, 0.4, 0.99]
TEXT = "".join(f"x{i} = compute({i})\n" for i in range(30))
AT = TEXT.index("x15 = ") + len("x15 = ")
NOW = TEXT[:AT] + TEXT[AT + len("compute(15)") :]
SITUATION = Situation("a.py", NOW, AT, EditInProgress(AT, "compute(15)", ""))


def completion_of(pieces: Sequence[str], probs: Sequence[float] | None, reason: str) -> Completion:
    offsets = [len("".join(pieces[: i + 1])) for i in range(len(pieces))]
    return Completion(
        ["".join(pieces)],
        RequestStats(),
        finish_reasons=[reason],
        logprobs=[[math.log(p) for p in probs]] if probs is not None else [[]],
        text_offsets=[offsets] if probs is not None else [[]],
        token_margins=[[2.0] * len(pieces)] if probs is not None else [],
    )


def test_the_trace_knows_where_the_model_stops_being_sure() -> None:
    trace = trace_of(completion_of(PIECES, PROBS, "stop"), 0)
    assert trace is not None
    assert trace.sure_length(0.8) == len("compute(a")
    assert trace.sure_length(0.3) == len("compute(a, b)")
    assert trace.sure_length(0.98) == 0
    assert trace.upto(len("compute(")).probs == (0.97, 0.95)
    assert trace.margins is not None and trace.margins[0] == pytest.approx(0.97 * (1 - math.e**-2))


def test_no_logprobs_means_no_trace() -> None:
    assert trace_of(completion_of(PIECES, None, "stop"), 0) is None


def test_the_margin_is_top1_minus_top2_probability() -> None:
    assert probability_margin(0.6, math.log(2.0)) == pytest.approx(0.3)  # runner-up 0.3
    assert probability_margin(0.3, -math.log(2.0)) == pytest.approx(-0.3)  # a forced token
    assert probability_margin(0.5, 0.0) == 0.0  # a tie


def test_ghost_text_is_cut_at_the_first_unsure_token() -> None:
    found = ghost_candidate(completion_of(PIECES, PROBS, "stop"), 0, "", AT, 0.8)
    assert found is not None and found.edits[0].new_text == "compute(a"
    assert found.token_probs == (0.97, 0.95, 0.9)
    assert found.token_margins is not None and len(found.token_margins) == 3
    uncut = ghost_candidate(completion_of(PIECES, PROBS, "stop"), 0, "", AT, 0.0)
    assert uncut is not None and uncut.edits[0].new_text == "compute(a, b)"


def test_cut_ghost_text_is_an_insertion_before_closers() -> None:
    """`f(|)`: the sure part goes before the closing parenthesis already there."""
    found = ghost_candidate(completion_of(PIECES, PROBS, "unsure"), 0, ")", AT, 0.8)
    assert found is not None and found.edits[0].new_text == "compute(a"


def test_nothing_sure_means_no_ghost_text() -> None:
    assert ghost_candidate(completion_of(PIECES, PROBS, "stop"), 0, "", AT, 0.99) is None


def test_without_probabilities_ghost_text_is_not_cut_and_says_so() -> None:
    found = ghost_candidate(completion_of(PIECES, None, "stop"), 0, "", AT, 0.8)
    assert found is not None and found.edits[0].new_text == "compute(a, b)"
    assert found.token_probs is None and found.token_margins is None


def test_a_rewrite_through_an_unsure_token_is_unsure() -> None:
    draft = "a = 1\nb = 2\n"
    answer = "a = 1\nb = 3\n"
    offsets = (2, 4, 6, 8, 10, 11, 12)
    sure = TokenTrace((0.1, 0.1, 0.1, 0.1, 0.1, 0.9, 0.1), offsets)
    assert not unsure_change(draft, answer, sure, 0.8)  # copied tokens do not count
    unsure = TokenTrace((1.0, 1.0, 1.0, 1.0, 1.0, 0.7, 1.0), offsets)
    assert unsure_change(draft, answer, unsure, 0.8)
    assert not unsure_change(draft, answer, unsure, 0.0)


@dataclass
class ScriptedEngine:
    """complete(): the continuation; rewrite(): the window with `compute(15)` again,
    each answer one token of probability `rewrite_p`."""

    rewrite_p: float = 0.9
    calls: list[dict[str, Any]] = field(default_factory=list)

    def tokenize(self, text: str, special: bool = False) -> list[int]:
        return list(range(len(text) // 4 + 1))

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
        self.calls.append({"method": "complete", "n": n, "min_token_p": min_token_p, "heal": heal})
        return completion_of(PIECES, PROBS, "stop")

    def rewrite(
        self,
        prompt: str,
        draft: str,
        max_tokens: int,
        stop: Sequence[str] = (),
        speculative: bool = True,
        cancel: threading.Event | None = None,
        n: int = 1,
        min_token_p: float = 0.0,
    ) -> Completion:
        self.calls.append({"method": "rewrite", "n": n, "min_token_p": min_token_p})
        answer = draft.replace("x15 = \n", "x15 = compute(15)\n")
        return Completion(
            [answer],
            RequestStats(),
            finish_reasons=["eos"],
            logprobs=[[math.log(self.rewrite_p)]],
            text_offsets=[[len(answer)]],
        )

    def stats(self) -> dict[str, Any]:
        return {}


def test_a_next_edit_through_an_unsure_token_is_dropped() -> None:
    for threshold, shown in ((0.8, True), (0.95, False), (0.0, True)):
        engine = ScriptedEngine(rewrite_p=0.9)
        source = ModelSource(lambda e=engine: e, "shadowtab", threshold)  # type: ignore[misc]
        found = source.candidates(Query(SITUATION))
        assert bool(found) == shown, threshold
        if found:
            assert found[0].token_probs == pytest.approx((0.9,))


def test_the_continuation_asks_the_engine_to_stop_at_the_threshold_and_to_heal() -> None:
    engine = ScriptedEngine()
    source = CompletionSource(lambda: engine, token_threshold=0.8)  # type: ignore[arg-type, return-value]
    (found,) = source.candidates(Query(SITUATION, n=3))
    assert found.edits[0].new_text == "compute(a"
    assert engine.calls == [{"method": "complete", "n": 1, "min_token_p": 0.8, "heal": True}]


def test_ghost_text_never_runs_a_rewrite() -> None:
    """The fast path: the continuation answers; a rewrite runs only for next edits, and
    its ghost text is offered once it is known for this state and the continuation has
    nothing sure."""
    engine = ScriptedEngine()
    predictor = EnginePredictor(lambda: engine, "shadowtab", token_threshold=0.8)  # type: ignore[arg-type, return-value]
    request = PredictionRequest("a.py", "python", NOW, AT, (), 1)
    (ghost,) = predictor.inline(request)
    assert ghost.edit.new_text == "compute(a" and ghost.source == "completion"
    assert [c["method"] for c in engine.calls] == ["complete"]
    picky = ScriptedEngine()
    predictor = EnginePredictor(lambda: picky, "shadowtab", token_threshold=0.99)  # type: ignore[arg-type, return-value]
    assert predictor.inline(request) == []  # nothing sure, no rewrite known
    assert [c["method"] for c in picky.calls] == ["complete"]


def test_the_rewrite_asks_the_engine_to_stop_at_an_unsure_change() -> None:
    """A rewrite that writes an unsure change is dropped, so the engine stops decoding
    it there; and no alternatives are asked for (none is above a threshold >= 0.5)."""
    engine = ScriptedEngine(rewrite_p=0.9)
    ModelSource(lambda: engine, "shadowtab", 0.8).candidates(Query(SITUATION, n=3))  # type: ignore[arg-type, return-value]
    assert engine.calls == [{"method": "rewrite", "n": 1, "min_token_p": 0.8}]
    engine = ScriptedEngine(rewrite_p=0.9)
    ModelSource(lambda: engine, "shadowtab", 0.0).candidates(Query(SITUATION, n=3))  # type: ignore[arg-type, return-value]
    assert engine.calls == [{"method": "rewrite", "n": 3, "min_token_p": 0.0}]
