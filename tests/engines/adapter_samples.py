"""A random GGUF LoRA adapter for the engines' adapter tests (llama.cpp and torch)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from shadowtab.inference.engines.adapter_files import FORMAT_KEY

HIDDEN, KV, FFN, LAYERS = 576, 192, 1536, 30
SHAPES = {  # llama.cpp tensor -> (in, out)
    "attn_q": (HIDDEN, HIDDEN),
    "attn_k": (HIDDEN, KV),
    "attn_v": (HIDDEN, KV),
    "attn_output": (HIDDEN, HIDDEN),
    "ffn_gate": (HIDDEN, FFN),
    "ffn_up": (HIDDEN, FFN),
    "ffn_down": (FFN, HIDDEN),
}


def write_adapter(
    path: Path, hidden: int = HIDDEN, scale: float = 0.05, prompt_format: str | None = None
) -> Path:
    """A random rank-4 LoRA adapter for every linear layer (hidden != HIDDEN: wrong shapes),
    naming `prompt_format` as the format it was trained on."""
    gguf = pytest.importorskip("gguf", reason="writing a test adapter needs the gguf package")
    rng = np.random.default_rng(0)
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_type(gguf.GGUFType.ADAPTER)
    writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
    writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, 8.0)
    if prompt_format is not None:
        writer.add_string(FORMAT_KEY, prompt_format)
    for layer in range(LAYERS):
        for name, (fan_in, fan_out) in SHAPES.items():
            fan_in = hidden if fan_in == HIDDEN else fan_in
            base = f"blk.{layer}.{name}.weight"
            a = (rng.standard_normal((4, fan_in)) * scale).astype(np.float32)
            b = (rng.standard_normal((fan_out, 4)) * scale).astype(np.float32)
            writer.add_tensor(f"{base}.lora_a", a)
            writer.add_tensor(f"{base}.lora_b", b)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


DAMAGES = ["missing", "not_gguf", "truncated", "wrong_shape"]


def damaged_adapter(folder: Path, damage: str) -> Path:
    """An adapter file that cannot be used, in one of the DAMAGES ways."""
    path = folder / "bad.lora.gguf"
    if damage == "not_gguf":
        path.write_bytes(b"PK\x03\x04 not an adapter")
    elif damage == "truncated":
        whole = write_adapter(folder / "whole.lora.gguf").read_bytes()
        path.write_bytes(whole[: len(whole) // 3])
    elif damage == "wrong_shape":
        write_adapter(path, hidden=HIDDEN * 2)
    return path
