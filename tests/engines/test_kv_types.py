"""engine.kv_type: the KV cache's bytes per token in each element type, the MB budget in
tokens, the setting's validation, and a q8_0 cache on the real model."""

from __future__ import annotations

import pytest
from inference_samples import FIB
from shadowtab.inference import EngineError, EngineOptions, LlamaCppEngine, create_engine
from shadowtab.inference.engines.kv_types import KV_TYPES, kv_type_named
from shadowtab.inference.engines.llama_cpp.engine import check_kv_type
from shadowtab.inference.engines.llama_cpp.runtime import ContextConfig, ModelShape

# SmolLM2-135M: 30 layers, 3 KV heads (GQA) of 64 dimensions
SMOLLM2 = ModelShape(
    n_layer=30, n_head=9, n_head_kv=3, head_dim_k=64, head_dim_v=64, n_vocab=49152, n_ctx_train=8192
)
F16_BYTES = 30 * 3 * 64 * 2 * 2  # K and V, 2 bytes an element
Q8_0_BYTES = 30 * 2 * (3 * 64 // 32) * 34  # K and V rows of 32-element blocks of 34 bytes
MB = 1024 * 1024


def test_bytes_per_token_follow_the_element_type() -> None:
    assert SMOLLM2.kv_bytes_per_token() == F16_BYTES == 23040
    assert SMOLLM2.kv_bytes_per_token(KV_TYPES["q8_0"]) == Q8_0_BYTES == 12240
    assert Q8_0_BYTES / F16_BYTES == 34 / 64  # 1.88x the tokens in the same MB


def test_a_q8_0_row_is_whole_blocks() -> None:
    q8_0 = KV_TYPES["q8_0"]
    assert q8_0.row_bytes(32) == 34 and q8_0.row_bytes(192) == 6 * 34
    assert q8_0.row_bytes(33) == 2 * 34  # as ggml rounds up to a whole block
    assert KV_TYPES["f16"].row_bytes(192) == 384


def test_an_unknown_kv_type_names_the_setting() -> None:
    with pytest.raises(EngineError, match=r"engine\.kv_type.*'f16', 'q8_0'.*'q4_0'"):
        kv_type_named("q4_0")
    with pytest.raises(EngineError, match=r"engine\.kv_type"):
        LlamaCppEngine(kv_type="int8", load=False)


def test_q8_0_needs_head_sizes_in_whole_blocks() -> None:
    check_kv_type(SMOLLM2, KV_TYPES["q8_0"])
    odd = ModelShape(2, 2, 2, head_dim_k=80, head_dim_v=80, n_vocab=10, n_ctx_train=64)
    check_kv_type(odd, KV_TYPES["f16"])
    with pytest.raises(EngineError, match=r"engine\.kv_type = 'q8_0'.*multiples of 32.*\[80\]"):
        check_kv_type(odd, KV_TYPES["q8_0"])


def test_a_quantized_v_turns_flash_attention_on() -> None:
    import llama_cpp

    def flash(kv: str, setting: bool | None) -> int:
        return ContextConfig(1, 1, 1, 1, KV_TYPES[kv], setting).flash_attn_type()

    assert flash("f16", None) == flash("f16", False) == llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
    assert flash("f16", True) == llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED
    assert flash("q8_0", None) == flash("q8_0", True) == llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED
    with pytest.raises(EngineError, match="q8_0 KV cache needs flash attention"):
        flash("q8_0", False)


def test_a_q8_0_cache_loads_generates_and_holds_more_tokens() -> None:
    engine = create_engine(EngineOptions(context_size=512, kv_cache_mb=40, kv_type="q8_0"))
    try:
        assert isinstance(engine, LlamaCppEngine)
        assert engine.stats()["kv_type"] == "q8_0"
        result = engine.complete(FIB, 8)
        assert result.texts[0] and result.stats.generated_tokens > 0
        info = engine.cache_info()
        assert info.bytes_per_token == Q8_0_BYTES
        # a stream of 512 cells per sequence: 1.88x f16's sequences in the same MB
        assert engine.stats()["kv_sequences"] == 40 * MB // (512 * Q8_0_BYTES) == 6
        runtime, cache = engine._ready()  # white box: what llama.cpp itself holds
        seq = next(s for s in cache._slots.values() if s.tokens)
        native = runtime.seq_state_bytes(seq.seq) / len(seq.tokens)
        assert abs(native - Q8_0_BYTES) / Q8_0_BYTES < 0.05
    finally:
        engine.close()
