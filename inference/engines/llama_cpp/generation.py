"""One complete()/rewrite() request on the runtime: place the prompt in the prefix cache,
prefill what is not cached, decode (greedy or speculative), extra candidates for n > 1."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..api import Completion, RequestStats
from .decoding import Guard, Logits, SequenceWriter, TokenSink, greedy, prefill, speculative
from .draft import DraftPolicy
from .kv_cache import PrefixCache
from .runtime import LlamaRuntime
from .text_output import Emit, TextAssembler

PromptTokenizer = Callable[[LlamaRuntime, str, int, RequestStats], list[int]]
DRAFT_POLICY = DraftPolicy()


@dataclass(frozen=True)
class GenerationRequest:
    prompt: str
    draft: tuple[str, str] | None  # (original text, "speculative" | "greedy"); None: complete
    max_tokens: int
    stop: tuple[str, ...]
    n: int
    emit: Emit | None
    prefill_chunk: int = 128
    first_spare_seq: int = 8  # sequences from here on are free for extra candidates


def run_generation(
    runtime: LlamaRuntime,
    cache: PrefixCache,
    request: GenerationRequest,
    prompt_tokens: PromptTokenizer,
    guard: Guard,
) -> Completion:
    started = time.perf_counter()
    stats = RequestStats()
    reserve = request.max_tokens + DRAFT_POLICY.k_max + 1
    tokens = prompt_tokens(runtime, request.prompt, reserve, stats)
    placement = cache.place(tokens, len(tokens) + reserve * request.n)
    writer = SequenceWriter(runtime, placement.seq, tokens[: placement.reused], guard)
    stats.reused_prompt_tokens = placement.reused
    clock = lambda: time.perf_counter() - started  # noqa: E731
    try:
        first = prefill(writer, tokens, request.prefill_chunk)
        stats.evaluated_prompt_tokens = len(tokens) - placement.reused
        sink = TokenSink(
            runtime, request.max_tokens, TextAssembler(request.stop, request.emit), clock
        )
        _decode_best(runtime, writer, first, request, sink, stats)
        texts = [sink.text.finish()]
        if request.n > 1:
            texts += _alternatives(runtime, writer.seq, tokens, first, request, guard)
            texts = list(dict.fromkeys(texts))  # identical candidates are shown once
    finally:
        cache.record(writer.seq, writer.tokens)
        stats.forward_passes += writer.passes
        stats.seconds = time.perf_counter() - started
    stats.generated_tokens = len(sink.result.tokens)
    stats.first_token_seconds = sink.result.first_token_at or stats.seconds
    return Completion(texts, stats, sink.result.tokens, sink.result.margins)


def _decode_best(
    runtime: LlamaRuntime,
    writer: SequenceWriter,
    first: Logits,
    request: GenerationRequest,
    sink: TokenSink,
    stats: RequestStats,
) -> None:
    if request.draft is not None and request.draft[1] == "speculative":
        draft_tokens = runtime.tokenize(request.draft[0], add_bos=False)
        speculative(writer, first, draft_tokens, sink, stats, DRAFT_POLICY)
    else:
        greedy(writer, first, sink)


def _alternatives(
    runtime: LlamaRuntime,
    seq: int,
    prompt: list[int],
    first: Logits,
    request: GenerationRequest,
    guard: Guard,
) -> list[str]:
    """Candidates 2..n: the next most likely first tokens, each continued greedily in a
    temporary sequence that shares the prompt's KV cells. Duplicates are dropped."""
    ranked = np.argsort(-first)[1 : request.n]
    texts: list[str] = []
    for offset, token in enumerate(ranked):
        spare = request.first_spare_seq + offset
        runtime.seq_copy(seq, spare, len(prompt))
        writer = SequenceWriter(runtime, spare, prompt, guard)
        try:
            sink = TokenSink(runtime, request.max_tokens, TextAssembler(request.stop), lambda: 0.0)
            if not sink.push(int(token)):
                greedy(writer, writer.eval([int(token)], [0])[0], sink)
            texts.append(sink.text.finish())
        finally:
            runtime.seq_remove(spare, 0, -1)
    return texts
