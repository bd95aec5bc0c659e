"""The engine in its worker process, on the real packaged model: the same answers as
the engine in this process (greedy decoding is deterministic), streaming, errors that
come back as the same classes, and cancellation that crosses the process boundary."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator

import pytest
from inference_samples import CLASS, FIB, SORT
from shadowtab.inference import (
    Cancelled,
    EngineError,
    EngineNotReady,
    LlamaCppEngine,
    ModelLoadError,
)
from shadowtab.inference.engines.worker import WorkerEngine, WorkerPolicy
from worker_support import OPTIONS, in_thread, ready_worker, wait_state

# Model loads niced under other work on 2 cores have taken minutes; a hang still fails.
pytestmark = pytest.mark.timeout(900)

CANCEL_LATENCY_S = 30.0  # one forward pass is ~0.1 s; niced under other work, seconds


@pytest.fixture(scope="module")
def worker() -> Iterator[WorkerEngine]:
    engine = ready_worker(WorkerPolicy())
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def inline() -> Iterator[LlamaCppEngine]:
    engine = LlamaCppEngine(
        n_ctx=OPTIONS.context_size, kv_cache_mb=OPTIONS.kv_cache_mb, n_threads=OPTIONS.threads
    )
    yield engine
    engine.close()


@pytest.mark.parametrize("prompt", [FIB, SORT, CLASS])
def test_complete_equals_the_inline_engine(
    worker: WorkerEngine, inline: LlamaCppEngine, prompt: str
) -> None:
    remote = worker.complete(prompt, max_tokens=24, stop=["\n\n\n"], n=2)
    local = inline.complete(prompt, max_tokens=24, stop=["\n\n\n"], n=2)
    assert remote.texts == local.texts
    assert remote.token_ids == local.token_ids
    assert remote.finish_reasons == local.finish_reasons
    assert remote.stats.generated_tokens == local.stats.generated_tokens


def test_the_token_cut_crosses_the_process_boundary(
    worker: WorkerEngine, inline: LlamaCppEngine
) -> None:
    remote = worker.complete(FIB, max_tokens=24, min_token_p=0.6)
    local = inline.complete(FIB, max_tokens=24, min_token_p=0.6)
    assert remote.texts == local.texts and remote.finish_reasons == local.finish_reasons
    assert remote.logprobs == local.logprobs and remote.token_margins == local.token_margins


def test_healing_crosses_the_process_boundary(worker: WorkerEngine, inline: LlamaCppEngine) -> None:
    prompt = CLASS + "        self.it"
    remote = worker.complete(prompt, max_tokens=8, stop=["\n"], heal=True)
    local = inline.complete(prompt, max_tokens=8, stop=["\n"], heal=True)
    assert remote.texts == local.texts and remote.logprobs == local.logprobs
    assert remote.stats.healed_tokens == local.stats.healed_tokens == 1


def test_rewrite_equals_the_inline_engine(worker: WorkerEngine, inline: LlamaCppEngine) -> None:
    prompt = "Rewrite the code with better names.\n" + SORT
    for speculative in (True, False):
        remote = worker.rewrite(prompt, SORT, max_tokens=40, speculative=speculative)
        local = inline.rewrite(prompt, SORT, max_tokens=40, speculative=speculative)
        assert remote.texts == local.texts
        assert remote.stats.draft_tokens == local.stats.draft_tokens


def test_warm_tokenize_cache_info_and_stats(worker: WorkerEngine, inline: LlamaCppEngine) -> None:
    assert worker.tokenize("def f(x):\n") == inline.tokenize("def f(x):\n")
    stats = worker.warm(CLASS + "    def pop(self):\n")
    assert stats.prompt_tokens > 0
    info = worker.cache_info()
    assert info.used_tokens > 0 and info.resident_prefixes
    described = worker.stats()
    assert described["engine"] == "llama.cpp" and described["state"] == "ready"
    assert described["totals"]["requests"] >= 1  # the worker's figures, as of its last reply
    assert described["worker"]["pid"] == worker.pid and described["worker"]["restarts"] == 0


def test_errors_come_back_as_the_same_classes(worker: WorkerEngine) -> None:
    with pytest.raises(EngineError, match="max_tokens must be a positive integer"):
        worker.complete(FIB, max_tokens=0)
    with pytest.raises(EngineError, match="empty draft"):
        worker.rewrite(FIB, "", max_tokens=8)
    with pytest.raises(EngineError, match="n must be between"):
        worker.complete(FIB, max_tokens=8, n=99)
    assert worker.complete(FIB, max_tokens=4).texts  # the worker is still fine


def test_cancel_crosses_the_process_boundary(worker: WorkerEngine) -> None:
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        worker.complete(FIB, max_tokens=8, cancel=cancel)
    cancel = threading.Event()
    outcome = in_thread(lambda: worker.complete(FIB, max_tokens=900, cancel=cancel))
    time.sleep(0.5)
    cancelled_at = time.monotonic()
    cancel.set()
    assert outcome.done.wait(CANCEL_LATENCY_S), "the cancelled call did not end"
    assert isinstance(outcome.error, Cancelled), outcome
    assert outcome.ended_at - cancelled_at < CANCEL_LATENCY_S
    assert worker.complete(FIB, max_tokens=4).texts


def test_a_model_that_cannot_load_fails_once_and_says_why() -> None:
    options = dataclasses.replace(OPTIONS, model_path="/nonexistent/m.gguf")
    engine = WorkerEngine(options)
    try:
        assert wait_state(engine, {"failed", "ready"}) == "failed"
        assert engine.error is not None and "m.gguf" in engine.error
        assert engine.supervisor.restarts == 0  # a clean load error is not retried
        with pytest.raises(EngineNotReady, match=r"m\.gguf"):
            engine.complete(FIB, max_tokens=4)
    finally:
        engine.close()


def test_requests_before_the_model_is_ready_get_not_ready() -> None:
    engine = WorkerEngine(OPTIONS)
    try:
        if engine.state == "loading":  # almost always: the child has not even started
            with pytest.raises(EngineNotReady, match="loading"):
                engine.complete(FIB, max_tokens=4)
        assert wait_state(engine, {"ready"}) == "ready"
    finally:
        engine.close()
    assert engine.state == "closed"
    with pytest.raises(EngineNotReady, match="closed"):
        engine.tokenize("x")


def test_model_load_error_class_survives_the_wire() -> None:
    from shadowtab.inference.engines.worker.wire import error_from_wire, error_to_wire

    assert isinstance(error_from_wire(*error_to_wire(ModelLoadError("bad"))), ModelLoadError)
    kind, message = error_to_wire(ValueError("oops"))
    assert kind == "EngineError" and "ValueError" in message and "oops" in message


def test_options_survive_the_wire() -> None:
    from pathlib import Path

    from shadowtab.inference import EngineOptions
    from shadowtab.inference.engines.worker.frames import MAX_FRAME_BYTES
    from shadowtab.inference.engines.worker.wire import options_from_wire, options_to_wire
    from shadowtab.inference.msgpack_frames import decode, encode

    options = dataclasses.replace(OPTIONS, data_dir=Path("/tmp/d"), adapter_formats=("generic",))
    frame = encode({"options": options_to_wire(options)}, MAX_FRAME_BYTES)
    assert options_from_wire(decode(frame[4:])["options"]) == options
    with pytest.raises(EngineError, match="unknown engine options: bogus"):
        options_from_wire({"bogus": 1})
    assert isinstance(options, EngineOptions)
