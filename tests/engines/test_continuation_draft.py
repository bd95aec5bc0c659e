"""A plain continuation drafts from the model's previous answer (continuation.py): the
prefix cache finds what the model wrote after a prompt the request extends, the prefill's
last pass verifies it, and the answer is greedy's."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from inference_samples import FIB
from shadowtab.inference import LlamaCppEngine
from shadowtab.inference.engines.api import RequestStats
from shadowtab.inference.engines.local.continuation import drafted_greedy
from shadowtab.inference.engines.local.decoding import (
    SequenceWriter,
    TokenSink,
    greedy,
    prefill_with_head,
)
from shadowtab.inference.engines.local.kv_cache import PrefixCache
from shadowtab.inference.engines.text_output import TextAssembler
from test_inference_speculative import assert_equal_up_to_near_ties
from test_inference_units import RecordingOps

VOCAB = 32


class CountingRuntime:
    """A model that always writes the token after the last one (t -> t + 1), with the KV
    it would hold per sequence, and its passes."""

    pass_tile = 0

    def __init__(self) -> None:
        self.kv: dict[int, list[int]] = {}
        self.passes: list[int] = []

    def decode(self, tokens: Sequence[int], seq: int, pos: int, outputs: Sequence[int]) -> object:
        held = self.kv.setdefault(seq, [])
        assert len(held) == pos, "a pass must begin where the sequence's KV ends"
        held.extend(tokens)
        self.passes.append(len(tokens))
        rows = np.zeros((len(outputs), VOCAB), dtype=np.float32)
        for row, index in zip(rows, outputs, strict=True):
            row[(tokens[index] + 1) % VOCAB] = 10.0
        return rows

    def seq_remove(self, seq: int, start: int, end: int = -1) -> None:
        del self.kv.setdefault(seq, [])[start:]

    def is_end_of_generation(self, token: int) -> bool:
        return False

    def piece(self, token: int) -> bytes:
        return f"<{token}>".encode()


def _decode(draft: Sequence[int]) -> tuple[list[int], CountingRuntime, RequestStats]:
    runtime = CountingRuntime()
    writer = SequenceWriter(runtime, 0, [], lambda: None)  # type: ignore[arg-type]
    rows = prefill_with_head(writer, [1, 2, 3], draft, chunk=64)
    sink = TokenSink(runtime, 6, TextAssembler(()), lambda: 0.0)  # type: ignore[arg-type]
    stats = RequestStats()
    drafted_greedy(writer, rows[0], draft, rows[1:] if len(rows) > 1 else None, sink, stats)
    assert runtime.kv[0] == writer.tokens, "the writer knows what the KV holds"
    return sink.result.tokens, runtime, stats


def test_a_draft_the_model_agrees_with_is_its_answer_in_the_prefills_pass() -> None:
    tokens, runtime, stats = _decode([4, 5, 6, 7])
    assert tokens == [4, 5, 6, 7, 8, 9]
    assert runtime.passes == [3 + 4, 1]  # the prompt and the draft, then one step
    assert (stats.draft_tokens, stats.accepted_draft_tokens) == (4, 4)


def test_where_the_model_leaves_the_draft_greedy_goes_on_and_the_kv_drops_the_rest() -> None:
    tokens, runtime, stats = _decode([4, 5, 9, 10])
    assert tokens == [4, 5, 6, 7, 8, 9]  # greedy's answer, not the draft's
    assert runtime.kv[0] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert (stats.draft_tokens, stats.accepted_draft_tokens) == (4, 2)


def test_without_a_draft_it_is_plain_greedy() -> None:
    tokens, runtime, _ = _decode([])
    plain = CountingRuntime()
    writer = SequenceWriter(plain, 0, [], lambda: None)  # type: ignore[arg-type]
    first = prefill_with_head(writer, [1, 2, 3], [], chunk=64)[0]
    sink = TokenSink(plain, 6, TextAssembler(()), lambda: 0.0)  # type: ignore[arg-type]
    greedy(writer, first, sink)
    assert tokens == sink.result.tokens and runtime.passes == plain.passes


def test_the_cache_drafts_only_what_was_generated_after_a_prompt_the_request_extends() -> None:
    cache = PrefixCache(RecordingOps(), n_slots=4, capacity_tokens=1000, n_cells=1000)
    prompt = list(range(100, 140))
    placed = cache.place(prompt, 80)
    cache.record(placed.seq, [*prompt, 7, 8, 9, 10])  # the answer after it
    assert cache.continuation(prompt, 24) == [7, 8, 9, 10]
    assert cache.continuation([*prompt, 7], 24) == [8, 9, 10]  # typed its first token
    assert cache.continuation([*prompt, 7], 2) == [8, 9]
    assert cache.continuation([*prompt, 5], 24) == []  # typed something else
    assert cache.continuation(prompt[:-1], 24) == []  # what follows is prompt, not answer
    assert cache.continuation([*prompt, 7, 8, 9, 10], 24) == []
    assert cache.holds([*prompt, 7]) and not cache.holds([*prompt, 5])


def test_typing_the_models_first_token_verifies_the_rest_of_its_answer_in_one_pass(
    engine: LlamaCppEngine,
) -> None:
    prompt = FIB + "\n\ndef fibonacci_list(count):\n    "
    first = engine.complete(prompt, 12)
    typed = first.texts[0][: first.text_offsets[0][0]]  # the answer's first token, typed
    warmed = engine.warm(prompt + typed)  # a pause: held already, the answer kept after it
    assert warmed.evaluated_prompt_tokens == 0
    assert warmed.reused_prompt_tokens == warmed.prompt_tokens
    again = engine.complete(prompt + typed, 11)
    assert again.stats.accepted_draft_tokens >= 8
    assert again.stats.forward_passes <= 3
    cold_engine = LlamaCppEngine(n_ctx=512, kv_cache_mb=8)
    try:
        cold = cold_engine.complete(prompt + typed, 11)
    finally:
        cold_engine.close()
    assert cold.stats.draft_tokens == 0
    assert_equal_up_to_near_ties(cold, again, "typed the first token")
