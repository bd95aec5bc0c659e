"""The element types of the KV cache (the `engine.kv_type` setting) and what a token's K
and V rows cost in each: llama.cpp stores q8_0 in blocks of 32 elements of 34 bytes (32
int8 and an f16 scale), so the same MB budget holds 1.88x the tokens of f16."""

from __future__ import annotations

from dataclasses import dataclass

from .api import EngineError


@dataclass(frozen=True)
class KvType:
    name: str
    block_elements: int  # elements per quantization block (1: not quantized)
    block_bytes: int
    needs_flash_attention: bool  # llama.cpp quantizes V only inside flash attention

    def row_bytes(self, elements: int) -> int:
        """Bytes of one row of `elements`, as ggml_row_size (whole blocks)."""
        return -(-elements // self.block_elements) * self.block_bytes


KV_TYPES: dict[str, KvType] = {
    "f16": KvType("f16", block_elements=1, block_bytes=2, needs_flash_attention=False),
    "q8_0": KvType("q8_0", block_elements=32, block_bytes=34, needs_flash_attention=True),
}
# f16: a q8_0 cache changes greedy outputs beyond near ties and is not faster
# (benchmarks/kv_quant.py compares them). It is there for memory: 1.88x the resident
# tokens per MB.
DEFAULT_KV_TYPE = "f16"


def kv_type_named(name: str) -> KvType:
    """The KvType of an `engine.kv_type` value; an unknown one: EngineError naming it."""
    found = KV_TYPES.get(name)
    if found is None:
        known = ", ".join(map(repr, KV_TYPES))
        raise EngineError(f"engine.kv_type must be one of {known}, got {name!r}")
    return found
