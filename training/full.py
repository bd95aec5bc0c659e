"""Full-weight training: which weights train, and their checkpoint state.

All transformer layers and norms train; the token embedding (tied to the output head,
28 M of the 135 M weights) trains only with `train_embeddings` (the vocabulary our
data uses is a small part of it, and its Adam state alone would be 2 x 113 MB).

A checkpoint holds the *change* from the base weights, int8 with one float scale per
row: 106 M trained weights -> ~107 MB, where bf16 of the weights would be 212 MB. The
rounding (at most half a step of a row's largest change / 127) applies only when a run
resumes; the running model keeps its exact weights. No Adam state (2 x 212 MB in bf16):
a run resumed without it warms its learning rate up again (train.learning_rate).
"""

from __future__ import annotations

from typing import Any

EMBEDDINGS = "embed_tokens"
INT8_MAX = 127.0


def mark_trainable(model: Any, train_embeddings: bool) -> list[Any]:
    """Set requires_grad on every weight but the embedding (unless asked); the trained
    parameters."""
    trained = []
    for name, param in model.named_parameters():
        param.requires_grad_(train_embeddings or EMBEDDINGS not in name)
        if param.requires_grad:
            trained.append(param)
    return trained


def base_copy(model: Any) -> dict[str, Any]:
    """The trainable weights as they start (on the CPU): what deltas are taken from."""
    return {
        name: param.detach().to("cpu", copy=True)
        for name, param in model.named_parameters()
        if param.requires_grad
    }


def shapes(base: dict[str, Any]) -> dict[str, list[int]]:
    return {name: list(tensor.shape) for name, tensor in base.items()}


def delta_state(model: Any, base: dict[str, Any]) -> dict[str, Any]:
    """name -> (int8 change, float32 scale per row), or the float32 change of a vector."""
    import torch

    out: dict[str, Any] = {}
    for name, param in model.named_parameters():
        if name not in base:
            continue
        change = param.detach().float().cpu() - base[name].float()
        if change.dim() < 2:
            out[name] = change
            continue
        scale = change.abs().amax(dim=1, keepdim=True).clamp_min(1e-12) / INT8_MAX
        out[name] = ((change / scale).round().to(torch.int8), scale)
    return out


def load_delta(model: Any, base: dict[str, Any], state: dict[str, Any]) -> None:
    """Base weights plus the saved change; a tensor the model lacks or of another shape
    is refused (ValueError) before any weight is touched."""
    params = dict(model.named_parameters())
    for name, saved in state.items():
        change_shape = tuple((saved[0] if isinstance(saved, tuple) else saved).shape)
        if name not in params or name not in base:
            raise ValueError(f"checkpoint trains {name}, which this model does not train")
        model_shape = tuple(params[name].shape)
        if model_shape != change_shape:
            raise ValueError(f"{name}: checkpoint {change_shape}, model {model_shape}")
    for name, saved in state.items():
        change = saved[0].float() * saved[1] if isinstance(saved, tuple) else saved.float()
        params[name].data.copy_((base[name].float() + change).to(params[name].dtype))
