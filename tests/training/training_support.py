"""Shared pieces of the training tests: skip reasons, a small random adapter."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

MISSING = [
    name
    for name in ("torch", "transformers", "peft", "gguf")
    if importlib.util.find_spec(name) is None
]
needs_train_extra = pytest.mark.skipif(
    bool(MISSING),
    reason=f"the `train` extra is not installed (missing {', '.join(MISSING)}): "
    "pip install -e '.[dev,train]'",
)

HIDDEN, INTERMEDIATE, KV = 576, 1536, 192
SHAPES = {  # module -> (in, out)
    "self_attn.q_proj": (HIDDEN, HIDDEN),
    "self_attn.k_proj": (HIDDEN, KV),
    "self_attn.v_proj": (HIDDEN, KV),
    "self_attn.o_proj": (HIDDEN, HIDDEN),
    "mlp.gate_proj": (HIDDEN, INTERMEDIATE),
    "mlp.up_proj": (HIDDEN, INTERMEDIATE),
    "mlp.down_proj": (INTERMEDIATE, HIDDEN),
}


def random_adapter(rank: int, layers: range, scale: float, seed: int = 0) -> dict[str, Any]:
    """A peft-named LoRA state dict large enough to move the model's logits."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    state: dict[str, Any] = {}
    for layer in layers:
        for module, (fan_in, fan_out) in SHAPES.items():
            prefix = f"base_model.model.model.layers.{layer}.{module}"
            state[f"{prefix}.lora_A.default.weight"] = (
                torch.randn(rank, fan_in, generator=generator) * scale
            )
            state[f"{prefix}.lora_B.default.weight"] = (
                torch.randn(fan_out, rank, generator=generator) * scale
            )
    return state
