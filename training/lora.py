"""The LoRA adapter on the base model: which layers, and its weights as a state dict.

transformers refuses `save_pretrained` on a GGUF-loaded model, so the adapter is kept
as a plain state dict of its LoRA matrices (names as peft gives them).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

ATTENTION = ("q_proj", "k_proj", "v_proj", "o_proj")
ALL_LINEAR = (*ATTENTION, "gate_proj", "up_proj", "down_proj")
TARGETS = {"attn": ATTENTION, "all": ALL_LINEAR}


@dataclass(frozen=True)
class AdapterShape:
    rank: int = 16
    alpha: float = 32.0
    targets: str = "all"  # a key of TARGETS

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def attach(model: Any, shape: AdapterShape) -> Any:
    """The model with a fresh LoRA adapter; only the adapter is trainable."""
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(
        r=shape.rank,
        lora_alpha=int(shape.alpha),  # peft types it int; ours are whole numbers
        target_modules=list(TARGETS[shape.targets]),
        lora_dropout=0.0,
        bias="none",
        task_type="CAUSAL_LM",
    )
    return get_peft_model(model, config)


def adapter_state(model: Any) -> dict[str, Any]:
    """The LoRA matrices, detached copies (safe to save while training goes on)."""
    return {
        name: param.detach().clone() for name, param in model.named_parameters() if "lora_" in name
    }


def load_adapter_state(model: Any, state: dict[str, Any]) -> None:
    params = dict(model.named_parameters())
    missing = [name for name in state if name not in params]
    if missing:
        raise ValueError(f"checkpoint names {len(missing)} unknown adapter tensors: {missing[:3]}")
    for name, tensor in state.items():
        params[name].data.copy_(tensor)
