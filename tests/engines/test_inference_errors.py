"""Cancellation, bad input and engine lifecycle: clear errors, and the engine stays usable."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest
from inference_samples import FIB, long_code
from shadowtab.inference import (
    Cancelled,
    EngineError,
    EngineNotReady,
    EngineOptions,
    LlamaCppEngine,
    ModelLoadError,
    create_engine,
    default_model_path,
)


def test_cancel_from_another_thread_stops_within_a_forward_pass(engine: LlamaCppEngine) -> None:
    cancel = threading.Event()
    set_at: list[float] = []

    def press_key() -> None:
        set_at.append(time.perf_counter())
        cancel.set()

    timer = threading.Timer(0.3, press_key)
    timer.start()
    # Counting goes on without an end token, whatever state earlier tests left in the
    # cache (FIB's continuation can reach one early where a near tie flips).
    counting = ", ".join(str(i) for i in range(1, 40)) + ", "
    with pytest.raises(Cancelled):
        engine.complete(counting, 400, cancel=cancel)  # seconds of decoding if not cancelled
    stopped = time.perf_counter()
    timer.join()
    # one decode step takes ~20 ms here; allow for a machine shared with other test runs
    assert stopped - set_at[0] < 3.0
    after = engine.rewrite(counting, "x", 12, speculative=False)
    # the engine is usable and its cache consistent: the tokens of a cold engine, up to
    # near-ties that llama.cpp's arithmetic may flip with a different cache layout
    assert after.stats.reused_prompt_tokens > 0
    cold_engine = LlamaCppEngine(n_ctx=256, kv_cache_mb=4)
    try:
        cold = cold_engine.rewrite(counting, "x", 12, speculative=False)
    finally:
        cold_engine.close()
    pairs = zip(cold.token_ids, after.token_ids, strict=False)
    differ = [i for i, (a, b) in enumerate(pairs) if a != b]
    assert not differ or cold.margins[differ[0]] < 0.15


def test_cancel_during_prefill_keeps_the_engine_usable(engine: LlamaCppEngine) -> None:
    prompt = "# cancel in prefill\n" + long_code(2500)
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    with pytest.raises(Cancelled):
        engine.complete(prompt, 4, cancel=cancel)
    result = engine.complete(prompt, 2)
    assert 0 < result.stats.reused_prompt_tokens < result.stats.prompt_tokens


def test_a_cancelled_event_stops_before_any_work(engine: LlamaCppEngine) -> None:
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        engine.rewrite(FIB, "draft", 8, cancel=cancel)
    with pytest.raises(Cancelled):
        engine.warm("# never warmed\n" + FIB, cancel=cancel)


def test_bad_requests_get_clear_errors(engine: LlamaCppEngine) -> None:
    with pytest.raises(EngineError, match="empty draft"):
        engine.rewrite(FIB, "", 8)
    with pytest.raises(EngineError, match="n must be between 1 and 8"):
        engine.complete(FIB, 8, n=9)
    with pytest.raises(EngineError, match="max_tokens"):
        engine.complete(FIB, 0)
    with pytest.raises(EngineError, match="max_tokens"):
        engine.complete(FIB, 10_000)
    with pytest.raises(EngineError, match="empty prompt"):
        engine.complete("", 4)
    assert engine.complete(FIB, 2).texts


def test_prompt_longer_than_the_context_is_truncated_from_the_start() -> None:
    small = LlamaCppEngine(n_ctx=256, kv_cache_mb=8)
    try:
        prompt = long_code(3000) + "\ndef tail_marker():\n    return"
        result = small.complete(prompt, 8)
        assert result.stats.truncated_prompt_tokens > 0
        assert result.stats.prompt_tokens + 8 <= 256
        assert result.texts[0]
    finally:
        small.close()


def test_missing_model_file() -> None:
    with pytest.raises(ModelLoadError, match="not found"):
        LlamaCppEngine(model_path="/nonexistent/model.gguf")


def test_model_that_is_not_gguf(tmp_path: Path) -> None:
    fake = tmp_path / "model.bin"
    fake.write_bytes(b"PK\x03\x04 this is a zip, not a model" * 10)
    with pytest.raises(ModelLoadError, match="not a GGUF"):
        LlamaCppEngine(model_path=fake)


def test_corrupt_gguf_file(tmp_path: Path) -> None:
    truncated = tmp_path / "truncated.gguf"
    with default_model_path().open("rb") as source:
        truncated.write_bytes(source.read(2_000_000))
    with pytest.raises(ModelLoadError, match="could not load"):
        LlamaCppEngine(model_path=truncated)
    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(b"GGUF" + bytes(range(256)) * 64)
    with pytest.raises(ModelLoadError):
        LlamaCppEngine(model_path=garbage)


def test_request_during_load_and_progress(tmp_path: Path) -> None:
    model = tmp_path / "model.gguf"
    shutil.copy(default_model_path(), model)
    lazy = LlamaCppEngine(model_path=model, n_ctx=256, kv_cache_mb=4, load=False)
    with pytest.raises(EngineNotReady, match="not ready"):
        lazy.complete(FIB, 4)
    progress: list[float] = []
    loader = threading.Thread(target=lambda: lazy.load(progress.append))
    loader.start()
    loader.join()
    assert progress and progress[-1] == 1.0 and progress == sorted(progress)
    assert lazy.complete(FIB, 2).texts
    lazy.close()
    with pytest.raises(EngineNotReady):
        lazy.complete(FIB, 2)


def test_create_engine_kinds() -> None:
    off = create_engine(EngineOptions(kind="off"))
    with pytest.raises(EngineError, match="engine is off"):
        off.complete(FIB, 4)
    with pytest.raises(EngineError, match="unknown engine kind"):
        create_engine(EngineOptions(kind="bogus"))  # type: ignore[arg-type]
    progress: list[float] = []
    real = create_engine(
        EngineOptions(context_size=256, kv_cache_mb=4), on_progress=progress.append
    )
    try:
        assert progress[-1] == 1.0
        # 4 MB holds no 256-cell stream of 23,040 bytes a token: the floor of 4 sequences
        assert real.cache_info().capacity_tokens == 4 * 256
    finally:
        real.close()


def test_stats_do_not_wait_for_a_running_request(engine: LlamaCppEngine) -> None:
    cancel = threading.Event()
    worker = threading.Thread(target=lambda: _swallow(engine, cancel))
    worker.start()
    time.sleep(0.3)
    started = time.perf_counter()
    stats = engine.stats()
    elapsed = time.perf_counter() - started
    cancel.set()
    worker.join()
    assert elapsed < 0.05
    assert stats["state"] == "ready" and stats["cache"]["bytes_per_token"] == 23040


def _swallow(engine: LlamaCppEngine, cancel: threading.Event) -> None:
    with pytest.raises(Cancelled):
        engine.complete(FIB, 500, cancel=cancel)


def test_packaged_model_is_requantized_once_in_the_data_dir(tmp_path: Path) -> None:
    # pinned: the default ("auto", merged) measures the candidates first (test_weight_choice)
    options = EngineOptions(
        context_size=512, kv_cache_mb=8, data_dir=tmp_path, weights="q8_0", merge_adapter=False
    )
    first = create_engine(options)
    try:
        assert isinstance(first, LlamaCppEngine)
        model = first.loaded_model_path
        assert model.parent == tmp_path / "models" and "q8_0" in model.name
        assert model.read_bytes()[:4] == b"GGUF"
        plain = first.rewrite(FIB, "x", 24, speculative=False)
        fast = first.rewrite(FIB, plain.texts[0], 24)
        pairs = zip(plain.token_ids, fast.token_ids, strict=False)
        differ = [i for i, (a, b) in enumerate(pairs) if a != b]
        assert not differ or plain.margins[differ[0]] < 0.15
    finally:
        first.close()
    made = model.stat().st_mtime_ns
    second = LlamaCppEngine(
        n_ctx=256, kv_cache_mb=4, data_dir=tmp_path, requantize_to="q8_0", merge_adapter=False
    )
    try:
        assert second.loaded_model_path == model and model.stat().st_mtime_ns == made
        assert list((tmp_path / "models").iterdir()) == [model]  # no partial files left
    finally:
        second.close()


@pytest.mark.parametrize("weights", ["bf16", "as-is"])
def test_the_weight_type_can_be_pinned(tmp_path: Path, weights: str) -> None:
    options = EngineOptions(
        context_size=256, kv_cache_mb=4, data_dir=tmp_path, weights=weights, merge_adapter=False
    )
    engine = create_engine(options)
    try:
        assert isinstance(engine, LlamaCppEngine)
        assert engine.stats()["weights"] == weights
        if weights == "as-is":
            assert engine.loaded_model_path == engine.model_path  # the packaged Q4_1
        else:
            assert engine.loaded_model_path.name.endswith(f".requant-{weights}.gguf")
        assert engine.complete(FIB, 4).texts[0]
    finally:
        engine.close()
