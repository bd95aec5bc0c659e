"""A rewrite's first draft tokens verified in the prefill's last pass (draft.py
`verify_in_prefill`, speculative.Head) on a scripted model: the same output as with a
pass of their own, one pass fewer where the answer begins as the draft does, and the KV
holding exactly the prompt and the output where it does not; with the setting off, only
in rows a pass padded to the attention tile computes anyway."""

from __future__ import annotations

from collections.abc import Callable

from shadowtab.inference.engines.api import RequestStats
from shadowtab.inference.engines.local.decoding import SequenceWriter, TokenSink, prefill_with_head
from shadowtab.inference.engines.local.draft import DraftPolicy
from shadowtab.inference.engines.local.speculative import Head, first_pass_inputs, speculative
from shadowtab.inference.engines.text_output import TextAssembler
from test_inference_units import LinedRuntime

PROMPT = [1, 2, 3, 4, 5]
DRAFT = list(range(10, 60))  # 10 lines of 5 tokens
CHUNK = 16


def answering(answer: list[int]) -> Callable[[list[int]], int]:
    """A model that writes `answer` after PROMPT, then its end token (0)."""

    def next_token(tokens: list[int]) -> int:
        out = len(tokens) - len(PROMPT)
        return answer[out] if 0 <= out < len(answer) else 0

    return next_token


def rewrite(answer: list[int], in_prefill: bool) -> tuple[list[int], int, list[int], list[int]]:
    """(output tokens, forward passes, the KV's tokens, the writer's tokens)."""
    runtime = LinedRuntime(answering(answer))
    writer = SequenceWriter(runtime, 0, [], lambda: None)  # type: ignore[arg-type]
    policy = DraftPolicy(verify_in_prefill=in_prefill, stop_after_rejoined_lines=0)
    inputs = first_pass_inputs(DRAFT, policy, 400)
    rows = prefill_with_head(writer, PROMPT, inputs, CHUNK, only_free=not in_prefill)
    head = Head(inputs, rows[1:]) if inputs and len(rows) > 1 else None
    sink = TokenSink(runtime, 400, TextAssembler([]), lambda: 0.0)  # type: ignore[arg-type]
    speculative(writer, rows[0], DRAFT, sink, RequestStats(), policy, head=head)
    return sink.result.tokens, writer.passes, runtime.kv[0], writer.tokens


def test_an_answer_that_copies_the_draft_costs_one_pass_fewer() -> None:
    own = rewrite(DRAFT, in_prefill=False)
    ridden = rewrite(DRAFT, in_prefill=True)
    assert ridden[0] == own[0] == DRAFT
    assert ridden[1] == own[1] - 1
    assert ridden[2] == ridden[3]  # the KV is what the writer says it holds


def test_an_answer_that_begins_elsewhere_drops_the_head() -> None:
    answer = [99, *DRAFT[1:]]  # the first token changed
    own = rewrite(answer, in_prefill=False)
    ridden = rewrite(answer, in_prefill=True)
    assert ridden[0] == own[0] == answer
    assert ridden[1] == own[1]  # the head's rows were not used: no pass saved
    assert ridden[2] == ridden[3] and ridden[3][: len(PROMPT)] == PROMPT


def test_an_answer_that_leaves_the_draft_inside_the_head() -> None:
    answer = [*DRAFT[:3], 98, *DRAFT[4:]]  # the head's fourth token is not the answer's
    own = rewrite(answer, in_prefill=False)
    ridden = rewrite(answer, in_prefill=True)
    assert ridden[0] == own[0] == answer
    assert ridden[1] == own[1] - 1
    assert ridden[2] == ridden[3]


def test_a_head_that_does_not_fit_in_the_last_pass_is_left_out() -> None:
    runtime = LinedRuntime(answering(DRAFT))
    writer = SequenceWriter(runtime, 0, [], lambda: None)  # type: ignore[arg-type]
    prompt = list(range(1, CHUNK))  # the last pass holds CHUNK - 1 prompt tokens
    rows = prefill_with_head(writer, prompt, DRAFT[:4], CHUNK)
    assert len(rows) == 1 and writer.tokens == prompt
    writer = SequenceWriter(LinedRuntime(answering(DRAFT)), 0, [], lambda: None)  # type: ignore[arg-type]
    rows = prefill_with_head(writer, prompt[:-3], DRAFT[:4], CHUNK)
    assert len(rows) == 5 and writer.tokens == [*prompt[:-3], *DRAFT[:4]]


def test_off_the_head_rides_only_in_rows_a_pass_padded_to_the_tile_computes_anyway() -> None:
    """A pass of 8-15 rows is padded to a tile of 16 (pass_plan.py): a 5-token head fits
    in the padding after 10 prompt rows, not after 14, and a 5-row pass is not padded."""
    head = first_pass_inputs(DRAFT, DraftPolicy(), max_tokens=5)
    assert len(head) == 5
    for length, rides in ((10, True), (14, False), (5, False)):
        runtime = LinedRuntime(answering(DRAFT))
        runtime.pass_tile = 16
        writer = SequenceWriter(runtime, 0, [], lambda: None)  # type: ignore[arg-type]
        prompt = list(range(1, length + 1))
        rows = prefill_with_head(writer, prompt, head, CHUNK, only_free=True)
        assert (len(rows) == 1 + len(head)) == rides, length
        assert runtime.kv[0] == writer.tokens
