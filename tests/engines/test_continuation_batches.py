"""Plain continuations that wait for the engine are served together
(continuation_batches.py): who takes whom, answers and errors reaching their callers,
cancels; then on the real engine, the batched answers against each asked alone."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import pytest
from shadowtab.inference import LlamaCppEngine
from shadowtab.inference.engines.api import CancelEvent, Cancelled, Completion, RequestStats
from shadowtab.inference.engines.local.batched_generation import Lane
from shadowtab.inference.engines.local.continuation_batches import ContinuationBatches
from shadowtab.inference.engines.local.generation import GenerationRequest, RequestPrompt
from shadowtab.inference.engines.local.healing import HealedPrompt
from shadowtab.inference.engines.local.scheduling import RequestGate, Turn
from test_request_gate import held, wait_until


def lane(name: str, cancel: CancelEvent | None = None) -> Lane:
    request = GenerationRequest(name, None, 8, (), 1, None)
    return Lane.of(request, RequestPrompt(HealedPrompt([1, 2, 3]), RequestStats(), 0.0), cancel)


Together = Callable[[Sequence[Lane], Callable[[int], list[Lane]]], None]


def answer(lanes: Sequence[Lane]) -> None:
    for each in lanes:
        if each.cancel is not None and each.cancel.is_set():
            each.error = Cancelled("cancelled")
        else:
            each.completion = Completion([each.request.prompt.upper()], RequestStats())
        if each.on_end is not None:
            each.on_end()


def answering(seen: list[list[str]]) -> Together:
    """A stand-in for the engine's shared passes: each lane answered with its name."""

    def together(lanes: Sequence[Lane], join: Callable[[int], list[Lane]]) -> None:
        seen.append([each.request.prompt for each in lanes])
        answer(lanes)

    return together


def alone_answer(turn: Turn) -> Completion:
    return Completion(["alone"], RequestStats())


def serve_in_threads(
    batches: ContinuationBatches,
    lanes: list[Lane],
    together: Together,
    gate: RequestGate,
) -> tuple[list[threading.Thread], dict[str, object]]:
    results: dict[str, object] = {}

    def call(each: Lane) -> None:
        try:
            results[each.request.prompt] = batches.serve(each, [1], alone_answer, together).texts
        except Exception as exc:  # what the caller would see
            results[each.request.prompt] = exc

    threads = [threading.Thread(target=call, args=(each,)) for each in lanes]
    for count, thread in enumerate(threads, start=1):
        thread.start()
        wait_until(lambda count=count: gate.waiting() == count)  # type: ignore[misc]
    return threads, results


def test_a_call_that_finds_none_waiting_runs_alone() -> None:
    gate = RequestGate()
    batches = ContinuationBatches(gate)
    seen: list[list[str]] = []
    assert batches.serve(lane("a"), [1], alone_answer, answering(seen)).texts == ["alone"]
    assert seen == [] and batches.counts()["batches"] == 0


def test_waiting_calls_are_served_together_up_to_the_limit() -> None:
    gate = RequestGate()
    batches = ContinuationBatches(gate, limit=3)
    seen: list[list[str]] = []
    holder, release = held(gate)
    threads, results = serve_in_threads(
        batches, [lane(name) for name in "abcd"], answering(seen), gate
    )
    release.set()
    for thread in [holder, *threads]:
        thread.join(10)
    # the first in line took the next two; the fourth, left waiting, ran alone after
    assert seen == [["a", "b", "c"]]
    assert results == {"a": ["A"], "b": ["B"], "c": ["C"], "d": ["alone"]}
    assert batches.counts() == {"batches": 1, "batched_requests": 3}


def test_a_cancel_reaches_only_its_own_caller() -> None:
    gate = RequestGate()
    batches = ContinuationBatches(gate)
    seen: list[list[str]] = []
    cancel = CancelEvent()
    holder, release = held(gate)
    threads, results = serve_in_threads(
        batches, [lane("a"), lane("b", cancel), lane("c")], answering(seen), gate
    )
    cancel.set()  # while it waits: it leaves the line at once
    wait_until(lambda: "b" in results)
    release.set()
    for thread in [holder, *threads]:
        thread.join(10)
    assert isinstance(results["b"], Cancelled)
    assert seen == [["a", "c"]] and results["a"] == ["A"] and results["c"] == ["C"]


def test_an_engine_error_reaches_every_caller_of_the_batch() -> None:
    gate = RequestGate()
    batches = ContinuationBatches(gate)

    def failing(lanes: Sequence[Lane], join: Callable[[int], list[Lane]]) -> None:
        raise RuntimeError("the pass failed")

    holder, release = held(gate)
    threads, results = serve_in_threads(batches, [lane("a"), lane("b")], failing, gate)
    release.set()
    for thread in [holder, *threads]:
        thread.join(10)
    assert isinstance(results["a"], RuntimeError)
    assert "stopped before" in str(results["b"])  # its lane was never decided
    assert gate.waiting() == 0 and not gate.busy()


def test_a_call_that_waits_during_a_batch_joins_it_and_is_answered_when_done() -> None:
    gate = RequestGate()
    batches = ContinuationBatches(gate, limit=3)
    seen: list[list[str]] = []
    late_answered = threading.Event()

    def together(lanes: Sequence[Lane], join: Callable[[int], list[Lane]]) -> None:
        seen.append([each.request.prompt for each in lanes])
        answer(lanes[1:])  # the leader's own lane goes on
        # b's caller has its answer (and left the gate's line); c waits in it
        wait_until(lambda: "b" in results and gate.waiting() == 1)
        joined = join(1)
        seen.append([each.request.prompt for each in joined])
        answer(joined)
        assert late_answered.wait(10)  # its caller has its answer before the batch ends
        answer(lanes[:1])
        assert join(0) == []  # the leader's lane is done: no more joins

    holder, release = held(gate)
    threads, results = serve_in_threads(batches, [lane("a"), lane("b")], together, gate)
    release.set()
    wait_until(lambda: seen == [["a", "b"]])
    late = batches.serve(lane("c"), [1], alone_answer, together)  # joins as it waits
    assert late.texts == ["C"]
    late_answered.set()
    for thread in [holder, *threads]:
        thread.join(10)
    assert seen == [["a", "b"], ["c"]] and results == {"a": ["A"], "b": ["B"]}
    assert batches.counts() == {"batches": 1, "batched_requests": 3}


PROMPTS = (
    "def add(a, b):\n    return",
    "import os\n\nfor name in os.listdir('.'):\n    print(",
    "class Point:\n    def __init__(self, x, y):\n        self.x = x\n        self.",
    "numbers = [1, 2, 3]\ntotal = sum(",
)


def first_near_tie(completion: Completion, gap: float = 0.3) -> int:
    """Where the model chose between two tokens within `gap` logits: a pass over several
    sequences rounds differently from one over one (another kernel), which may flip it."""
    margins = completion.token_margins[0]
    return next((i for i, m in enumerate(margins) if m < gap), len(completion.token_ids))


@pytest.mark.parametrize("heal", [False, True])
def test_the_engine_batches_waiting_continuations_and_answers_as_alone(
    engine: LlamaCppEngine, heal: bool
) -> None:
    alone = [engine.complete(prompt, 12, stop=["\n"], heal=heal) for prompt in PROMPTS]
    before = engine.stats()["batches"]
    answers: dict[int, Completion] = {}
    holder, release = held(engine._gate)  # the engine busy: the callers queue up
    callers = [
        threading.Thread(
            target=lambda i=i: answers.__setitem__(
                i, engine.complete(PROMPTS[i], 12, stop=["\n"], heal=heal)
            )
        )
        for i in range(len(PROMPTS))
    ]
    for caller in callers:
        caller.start()
    wait_until(lambda: engine._gate.waiting() == len(PROMPTS))
    release.set()
    for thread in [holder, *callers]:
        thread.join(60)
    after = engine.stats()["batches"]
    assert after["batches"] > before["batches"]
    assert after["batched_requests"] - before["batched_requests"] == len(PROMPTS)
    for i, completion in answers.items():
        sure = first_near_tie(alone[i])
        assert completion.token_ids[:sure] == alone[i].token_ids[:sure], PROMPTS[i]
        assert completion.stats.generated_tokens == len(completion.token_ids)
        assert completion.stats.seconds > 0
    # the batch recorded what its sequences hold: the next keystroke reuses it
    again = engine.complete(PROMPTS[0] + " a", 4, stop=["\n"])
    assert again.stats.reused_prompt_tokens > 0
