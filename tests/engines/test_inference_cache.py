"""Prefix reuse, warming (and its preemption), the prompts kept resident."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from inference_samples import FIB, SORT, long_code
from shadowtab.inference import Completion, EngineOptions, LlamaCppEngine
from shadowtab.inference.engines.api import CancelEvent, Cancelled, RequestStats
from shadowtab.inference.engines.llama_cpp.engine import kv_sequences
from shadowtab.inference.engines.local.engine import MB
from shadowtab.inference.engines.local.runtime import Interrupted
from test_inference_speculative import assert_equal_up_to_near_ties


def test_kv_bytes_per_token_matches_model_shape_and_native_state(engine: LlamaCppEngine) -> None:
    info = engine.cache_info()
    assert info.bytes_per_token == 30 * 3 * 64 * 2 * 2  # SmolLM2-135M: GQA, 3 KV heads, f16
    stats = engine.stats()  # a stream of context_cells per sequence, as many as fit (>= 4)
    assert info.capacity_tokens == stats["kv_sequences"] * stats["context_cells"]
    prompt = long_code(1200)
    engine.complete(prompt, 1)
    runtime, cache = engine._ready()  # white box: what llama.cpp itself reports
    seq = next(s for s in cache._slots.values() if s.tokens and s.prompt_length > 200)
    native = runtime.seq_state_bytes(seq.seq) / len(seq.tokens)
    assert abs(native - info.bytes_per_token) / info.bytes_per_token < 0.02


def test_second_request_sharing_a_prefix_evaluates_only_new_tokens(
    engine: LlamaCppEngine,
) -> None:
    engine.clear_cache()  # the session's engine holds other tests' prompts: start cold
    base = "# unique marker 1\n" + long_code(900)
    first = engine.complete(base, 2)
    second = engine.complete(base + "def main():\n    ", 2)
    shared = len(engine.tokenize(base)) - 1  # the boundary token may merge with what follows
    assert first.stats.evaluated_prompt_tokens == first.stats.prompt_tokens
    assert second.stats.reused_prompt_tokens >= shared - 1
    assert (
        second.stats.evaluated_prompt_tokens
        == second.stats.prompt_tokens - second.stats.reused_prompt_tokens
    )
    assert second.stats.evaluated_prompt_tokens <= 8


def test_reused_cache_gives_the_same_output_as_a_cold_run(engine: LlamaCppEngine) -> None:
    prompt = FIB + "    if n"
    warm_result = engine.complete(prompt, 16)  # FIB is likely cached by other tests
    cold_engine = LlamaCppEngine(n_ctx=512, kv_cache_mb=8)
    try:
        cold = cold_engine.complete(prompt, 16)
    finally:
        cold_engine.close()
    assert cold.stats.reused_prompt_tokens == 0
    assert warm_result.token_ids == cold.token_ids


def test_eight_editors_in_two_files_each_keep_their_prompts_resident(
    engine: LlamaCppEngine,
) -> None:
    """Sixteen prompts in turn, each asked again after the others (eight editors typing in
    their own file and a shared one): each is still resident, none prefilled cold. The
    daemon's budget (engine.kv_cache_mb) holds sixteen streams of engine.context_size."""
    daemon = EngineOptions()
    per_token = engine.cache_info().bytes_per_token
    assert kv_sequences(daemon.kv_cache_mb, daemon.context_size, per_token) == 16
    roomy = LlamaCppEngine(n_ctx=256, kv_cache_mb=16 * 256 * per_token / MB)
    try:
        prompts = [f"# editor {n // 2}, file {n % 2}\n{SORT}x{n} = " for n in range(16)]
        for prompt in prompts:
            roomy.complete(prompt, 1)
        for n, prompt in enumerate(prompts):
            again = roomy.complete(prompt + f"{n}", 1)
            assert again.stats.evaluated_prompt_tokens <= 4, n
    finally:
        roomy.close()


def test_two_documents_stay_resident(engine: LlamaCppEngine) -> None:
    doc_a = "# file a\n" + long_code(600)
    doc_b = "# file b\n" + SORT * 8
    engine.complete(doc_a, 1)
    engine.complete(doc_b, 1)
    again_a = engine.complete(doc_a + "x = 1\n", 1)
    again_b = engine.complete(doc_b + "y = 2\n", 1)
    assert again_a.stats.reused_prompt_tokens >= again_a.stats.prompt_tokens - 8
    assert again_b.stats.reused_prompt_tokens >= again_b.stats.prompt_tokens - 8


def test_warm_prefills_so_the_request_only_evaluates_the_tail(engine: LlamaCppEngine) -> None:
    prefix = "# warm test\n" + long_code(700)
    warmed = engine.warm(prefix)
    assert not warmed.preempted
    assert warmed.evaluated_prompt_tokens + warmed.reused_prompt_tokens == warmed.prompt_tokens
    result = engine.complete(prefix + "\nprint(", 4)
    assert result.stats.evaluated_prompt_tokens <= 6


def warming_in_background(
    engine: LlamaCppEngine, prefix: str
) -> tuple[threading.Thread, list[RequestStats]]:
    """engine.warm(prefix) in a thread, returned once the warm holds the engine; its
    stats land in the list when it ends."""
    results: list[RequestStats] = []
    warmer = threading.Thread(target=lambda: results.append(engine.warm(prefix)))
    warmer.start()
    deadline = time.monotonic() + 10
    while not engine._gate.busy() and time.monotonic() < deadline:
        time.sleep(0.01)
    return warmer, results


def test_a_real_request_interrupts_the_warming_pass_in_flight(engine: LlamaCppEngine) -> None:
    """Warming stops part-way through its pass for a real request that does not need
    its tokens (the runtime's interrupt), keeps what earlier passes computed, and the
    cache answers as a cold run would."""
    passes = engine.warm("# warming passes\n" + long_code(400))  # ~130 tokens
    one_pass = passes.seconds / passes.forward_passes
    prefix = "# preempted warm\n" + long_code(6000)  # ~1,500 tokens: seconds of prefill
    warmer, results = warming_in_background(engine, prefix)
    time.sleep(2.2 * one_pass)  # two passes done, the third in flight
    started = time.perf_counter()
    real = engine.complete(FIB, 1)
    waited = time.perf_counter() - started - real.stats.seconds
    warmer.join()
    warm_stats = results[0]
    assert warm_stats.preempted
    assert 0 < warm_stats.evaluated_prompt_tokens < warm_stats.prompt_tokens
    print(f"real request waited {waited:.3f}s behind warming (a pass: {one_pass:.3f}s)")
    assert waited < one_pass / 2
    # what warming computed before it yielded stays cached, and answers as a cold run
    resident = engine.cache_info().resident_prefixes
    assert any(length >= warm_stats.evaluated_prompt_tokens for length in resident)
    reused = engine.complete(prefix + "\ndef", 4)
    assert reused.stats.reused_prompt_tokens >= warm_stats.evaluated_prompt_tokens - 1
    engine.clear_cache()
    assert engine.complete(prefix + "\ndef", 4).token_ids == reused.token_ids


def test_a_cancelled_continuation_stops_in_its_pass_and_the_cache_answers_as_cold(
    engine: LlamaCppEngine,
) -> None:
    """A keystroke's request cancelled while it prefills (a CancelEvent, as the worker
    gives) stops in the pass in flight, not after it; the passes before it stay cached
    and the next request answers as a cold run would."""
    # ~250 tokens: two passes as long as the long prompt's (~120 tokens, pass_plan.py)
    passes = engine.complete("# one pass\n" + long_code(800), 1)
    one_pass = passes.stats.seconds / passes.stats.forward_passes
    prompt = "# cancelled prefill\n" + long_code(6000)  # ~1,500 tokens: seconds of prefill
    cancel = CancelEvent()
    timer = threading.Timer(2.5 * one_pass, cancel.set)  # two passes done, the third in flight
    timer.start()
    started = time.perf_counter()
    before = engine.stats()["time_by_kind"]["complete"]
    with pytest.raises(Cancelled) as stopped:
        engine.complete(prompt, 4, cancel=cancel)
    late = time.perf_counter() - started - 2.5 * one_pass
    # what it prefilled before the cancel counts, as work a cancel threw away
    after = engine.stats()["time_by_kind"]["complete"]

    def thrown(key: str) -> float:
        return after[key] - before.get(key, 0)

    assert thrown("stopped_evaluated_prompt_tokens") >= 100
    assert thrown("stopped_forward_passes") >= 1
    print(f"stopped {late:.3f}s after the cancel (a pass: {one_pass:.3f}s)")
    assert isinstance(stopped.value.__cause__, Interrupted)
    resident = engine.cache_info().resident_prefixes
    assert any(length >= 100 for length in resident)  # the passes before it stayed
    again = engine.complete(prompt, 4)
    assert again.stats.reused_prompt_tokens >= 100
    engine.clear_cache()
    # up to a near tie: a cold prefill's cells lie elsewhere in the cache, and llama.cpp's
    # tiled attention sums them in another order
    assert_equal_up_to_near_ties(engine.complete(prompt, 4), again, "cold against resumed")


def test_a_request_that_needs_the_warming_pass_lets_it_end(
    engine: LlamaCppEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request whose prompt starts with what warming is prefilling does not stop the
    pass in flight (it would prefill the same tokens itself): warming yields after that
    pass, and the request reuses all of it and answers as a cold run would."""
    runtime, _ = engine._ready()
    interrupts: list[None] = []
    interrupt = runtime.interrupt
    monkeypatch.setattr(runtime, "interrupt", lambda: interrupts.append(interrupt()))
    prefix = "# needed warm\n" + long_code(6000)  # ~1,500 tokens: seconds of prefill
    warmer, results = warming_in_background(engine, prefix)
    time.sleep(0.3)  # a few passes in
    real = engine.complete(prefix + "\ndef", 4)
    warmer.join()
    warm_stats = results[0]
    assert warm_stats.preempted and interrupts == []
    assert 0 < warm_stats.evaluated_prompt_tokens < warm_stats.prompt_tokens
    assert real.stats.reused_prompt_tokens >= warm_stats.evaluated_prompt_tokens
    engine.clear_cache()
    assert engine.complete(prefix + "\ndef", 4).token_ids == real.token_ids


def test_a_rewrite_lends_the_engine_to_a_continuation_and_answers_the_same(
    engine: LlamaCppEngine,
) -> None:
    """A plain continuation that arrives during a rewrite runs between two of its passes
    (not after it), and the rewrite's answer is the one it gives alone: its sequence is
    kept while the continuation runs in another."""
    code = long_code(900)
    prompt, draft = f"# Repeat this code.\n{code}\n# Again:\n", code
    engine.warm(prompt)
    alone = engine.rewrite(prompt, draft, 64, speculative=False)  # a pass per token
    results: list[Completion] = []
    rewriter = threading.Thread(
        target=lambda: results.append(engine.rewrite(prompt, draft, 64, speculative=False))
    )
    rewriter.start()
    deadline = time.monotonic() + 10
    while not engine._gate.busy() and time.monotonic() < deadline:
        time.sleep(0.005)
    continuation = engine.complete(FIB, 4)
    rewrite_running = rewriter.is_alive()
    rewriter.join()
    again = results[0]
    assert rewrite_running and again.stats.lent_to_urgent >= 1
    assert again.texts == alone.texts
    assert continuation.texts == engine.complete(FIB, 4).texts


@pytest.fixture(scope="module")
def tiny_engine() -> Iterator[LlamaCppEngine]:
    # a budget below one stream: the floor of MIN_SEQUENCES streams of 512 cells
    instance = LlamaCppEngine(n_ctx=512, kv_cache_mb=1)
    yield instance
    instance.close()


def test_clear_cache_makes_the_next_request_cold(tiny_engine: LlamaCppEngine) -> None:
    tiny_engine.complete(FIB, 1)
    tiny_engine.clear_cache()
    assert tiny_engine.cache_info().resident_prefixes == []
    assert tiny_engine.complete(FIB, 1).stats.reused_prompt_tokens == 0
