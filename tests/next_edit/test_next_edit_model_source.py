"""The model source: fail-closed on garbage, empty, cut-off and marker-laden answers
(a scripted engine), and what the real engine reports per candidate (finish reason,
log-probabilities, offsets) for the confidence."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from shadowtab.inference import Completion, LlamaCppEngine, RequestStats
from shadowtab.inference.next_edit.candidates import Query
from shadowtab.inference.next_edit.confidence import changed_tokens, confidence
from shadowtab.inference.next_edit.formats import get_format
from shadowtab.inference.next_edit.rewrite.model_source import ModelSource
from shadowtab.inference.next_edit.situation import EditInProgress, Situation

TEXT = "".join(f"x{i} = compute({i})\n" for i in range(30))
AT = TEXT.index("x15 = ") + len("x15 = ")
TYPED = "comp"
NOW = TEXT[:AT] + TYPED + TEXT[AT + len("compute(15)") :]
SITUATION = Situation("a.py", NOW, AT + len(TYPED), EditInProgress(AT, "compute(15)", TYPED))


@dataclass
class ScriptedEngine:
    """Answers every rewrite with the given texts and finish reasons."""

    texts: list[str]
    reasons: list[str]
    calls: list[dict[str, Any]] = field(default_factory=list)

    def tokenize(self, text: str, special: bool = False) -> list[int]:
        return list(range(len(text) // 4 + 1))

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
        self.calls.append(
            {"max_tokens": max_tokens, "n": n, "stop": list(stop), "min_token_p": min_token_p}
        )
        offsets = [[len(t)] for t in self.texts]
        return Completion(
            list(self.texts),
            RequestStats(),
            finish_reasons=list(self.reasons),
            logprobs=[[-0.1] for _ in self.texts],
            text_offsets=offsets,
        )


def source_with(texts: list[str], reasons: list[str], fmt: str = "shadowtab") -> ModelSource:
    engine = ScriptedEngine(texts, reasons)
    return ModelSource(lambda: engine, fmt)  # type: ignore[arg-type, return-value]


def region_of(fmt: str = "shadowtab") -> tuple[str, int]:
    """The part of the window the model rewrites (the lines above the edit are given)."""
    rendered = source_with([], [], fmt).prompt(Query(SITUATION))
    assert rendered is not None
    return NOW[rendered.region_start : rendered.region_end], rendered.region_start


def test_a_clean_answer_becomes_minimal_edits() -> None:
    region, _ = region_of()
    answer = region.replace("x15 = comp\n", "x15 = compute(15, cache=True)\n")
    (found,) = source_with([answer], ["eos"]).candidates(Query(SITUATION))
    cursor = SITUATION.cursor
    assert [(e.start, e.end, e.new_text) for e in found.edits] == [
        (cursor, cursor, "ute(15, cache=True)")
    ]
    window = get_format("shadowtab").render(SITUATION)
    assert window is not None and found.source == "model"
    assert found.region == (window.region_start, window.region_end)  # the whole window


@pytest.mark.parametrize(
    "answer_of,reason",
    [
        (lambda r: r.replace("x15 = comp\n", "x15 = compute(15)\n"), "length"),  # cut off
        (lambda r: r.replace("x15 = comp\n", "x15 = compute(15)\n"), "abandoned"),
        (lambda r: r.replace("x15", "<jupyter_code>x15"), "eos"),  # a stray marker
        (lambda r: "", "eos"),  # empty: would delete the region
        (lambda r: "The user asked me to write a poem about the sea.\n", "eos"),  # garbage
        (lambda r: r, "eos"),  # no change
        (lambda r: r.replace("    ", "\t"), "eos"),  # whitespace only
    ],
)
def test_answers_that_are_not_clean_edits_give_nothing(answer_of: Any, reason: str) -> None:
    region, _ = region_of()
    assert source_with([answer_of(region)], [reason]).candidates(Query(SITUATION)) == []


def test_a_rewrite_that_only_deletes_while_the_user_types_is_dropped() -> None:
    region, _ = region_of()
    loses_a_line = region.replace("x16 = compute(16)\n", "")
    assert source_with([loses_a_line], ["eos"]).candidates(Query(SITUATION)) == []
    deletes_and_adds = loses_a_line.replace("x15 = comp\n", "x15 = compute(15)\n")
    assert source_with([deletes_and_adds], ["eos"]).candidates(Query(SITUATION))
    idle = Situation("a.py", TEXT, AT)  # no edit in progress: a deletion may be the edit
    rendered = get_format("shadowtab").render(idle)
    assert rendered is not None
    idle_region = TEXT[rendered.region_start : rendered.region_end]
    answer = idle_region.replace("x16 = compute(16)\n", "")
    assert source_with([answer], ["eos"]).candidates(Query(idle))


def test_the_request_is_bounded_and_asks_for_n() -> None:
    engine = ScriptedEngine([""], ["eos"])
    ModelSource(lambda: engine, "generic").candidates(Query(SITUATION, n=9))  # type: ignore[arg-type, return-value]
    (call,) = engine.calls
    assert call["n"] == 6 and call["max_tokens"] <= 512 and call["stop"][0].startswith("```")


def test_no_engine_or_an_unrenderable_text_gives_nothing() -> None:
    assert ModelSource(lambda: None, "generic").candidates(Query(SITUATION)) == []
    huge = Situation("a.py", "x" * 10_000_000, 5)
    assert source_with(["x"], ["eos"]).candidates(Query(huge)) == []


def test_confidence_counts_only_the_changed_tokens() -> None:
    draft = "a = 1\nb = 2\n"
    answer = "a = 1\nb = 3\n"
    offsets = [2, 4, 6, 8, 10, 11, 12]  # token ends in the answer
    assert changed_tokens([(10, 11)], offsets) == [5]
    logprobs = [-5.0, -5.0, -5.0, -5.0, -5.0, -0.5, -5.0]
    assert confidence(draft, answer, logprobs, offsets) == pytest.approx(0.6065, abs=1e-3)
    assert confidence(draft, answer, [], []) == 0.0  # unknown is not confident


def test_the_real_engine_reports_why_and_how_sure(engine: LlamaCppEngine) -> None:
    cut = engine.rewrite("x = 1\ny = 2\n", "x = 1\ny = 2\n", 3, n=1)
    assert cut.finish_reasons == ["length"]
    assert len(cut.logprobs[0]) == len(cut.text_offsets[0]) == 3
    assert all(lp <= 0 for lp in cut.logprobs[0])
    assert cut.text_offsets[0][-1] == len(cut.texts[0])
    stopped = engine.complete("# a list\nitems = [1, 2, 3]\n", 24, stop=["\n"], n=3)
    assert set(stopped.finish_reasons) <= {"stop", "eos", "length"}
    assert len(stopped.finish_reasons) == len(stopped.texts) == len(stopped.logprobs)
    assert len(set(stopped.texts)) == len(stopped.texts)


def test_the_real_engine_gives_distinct_rewrite_alternatives(engine: LlamaCppEngine) -> None:
    prompt = "Fix the typo.\nBefore:\nprint('helo world')\nAfter:\n"
    found = engine.rewrite(prompt, "print('helo world')\n", 16, stop=["\n"], n=3)
    assert 1 <= len(found.texts) <= 3
    assert len(set(found.texts)) == len(found.texts)
    assert len(found.finish_reasons) == len(found.texts)
