"""A LoRA adapter on the torch engine's model, through peft: a GGUF LoRA file (the packaged
next-edit adapter, read by gguf_lora.py) or a peft adapter directory; and the GGUF LoRA
written as a peft directory (for vLLM's --lora-modules and for peft itself).

The adapter is merged into the weights: the same greedy output as the peft model (the
tests compare them), and no per-token adapter cost: benchmarks/torch_adapter.py measures
the two side by side. An adapter that does not fit raises
AdapterError before the model is touched where it can be checked first (shapes, names);
AdapterApplyError says the model may be half-changed (the engine reloads the base)."""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..adapter_files import FORMAT_KEY, SETTING, AdapterError, check_format, is_gguf
from .gguf_lora import GgufLora, fail, read_gguf_lora

PEFT_CONFIG = "adapter_config.json"
PEFT_WEIGHTS = "adapter_model.safetensors"
# Written beside a peft directory made from a GGUF LoRA: the prompt format it was
# trained on (peft's and vLLM's own files have no place for it).
FORMAT_FILE = "shadowtab-adapter.json"
PEFT_PREFIX = "base_model.model."


class AdapterApplyError(AdapterError):
    """peft failed after it began changing the model: reload the base before serving."""


@dataclass(frozen=True)
class AttachedAdapter:
    model: Any  # the model with the adapter merged in
    path: Path
    prompt_format: str | None


def head_counts(model: Any) -> tuple[int, int]:
    config = model.config
    n_head = int(config.num_attention_heads)
    return n_head, int(getattr(config, "num_key_value_heads", None) or n_head)


def attach(model: Any, path: Path, formats: Collection[str] | None = None) -> AttachedAdapter:
    """`model` with the adapter at `path` (a GGUF LoRA file or a peft directory) merged."""
    try:
        import peft  # noqa: F401
    except ImportError:
        raise AdapterError(f"{SETTING}: the torch engine needs peft for adapters") from None
    if path.is_dir():
        return _attach_peft_dir(model, path, formats)
    if path.is_file() and is_gguf(path):
        lora = read_gguf_lora(path, *head_counts(model))
        check_format(path, lora.prompt_format, formats)
        check_fits(model, lora)
        merged = with_gguf_lora(model, lora).merge_and_unload()
        return AttachedAdapter(merged, path, lora.prompt_format)
    if not path.exists():
        raise fail(path, "not found")
    raise fail(path, "neither a GGUF LoRA file nor a peft adapter directory")


def lora_config(lora: GgufLora, base_model: str | None = None) -> Any:
    from peft import LoraConfig

    alpha = int(lora.alpha) if float(lora.alpha).is_integer() else lora.alpha
    return LoraConfig(
        r=lora.rank,
        # peft types it int but scales by lora_alpha / r: a fractional alpha keeps its value
        lora_alpha=alpha,  # type: ignore[arg-type]
        target_modules=lora.target_modules,
        lora_dropout=0.0,
        bias="none",
        task_type="CAUSAL_LM",
        base_model_name_or_path=base_model,
    )


def with_gguf_lora(model: Any, lora: GgufLora) -> Any:
    """A peft model (unmerged) over `model` carrying the adapter's exact A and B."""
    import torch
    from peft import get_peft_model

    peft_model = get_peft_model(model, lora_config(lora))
    inner = peft_model.base_model.model
    with torch.no_grad():
        for module, pair in lora.pairs.items():
            layer = inner.get_submodule(module)
            layer.lora_A["default"].weight.copy_(torch.from_numpy(pair.a))
            layer.lora_B["default"].weight.copy_(torch.from_numpy(pair.b))
    return peft_model


def check_fits(model: Any, lora: GgufLora) -> None:
    """Every target exists in the model as a linear layer of the adapter's shape."""
    for module, pair in lora.pairs.items():
        _check_linear(model, lora.path, module, pair.a.shape[1], pair.b.shape[0])


def _check_linear(
    model: Any, path: Path, module: str, fan_in: int | None, fan_out: int | None
) -> None:
    try:
        layer = model.get_submodule(module)
    except AttributeError:
        raise fail(path, f"made for another base model: this one has no {module}") from None
    here = (getattr(layer, "in_features", None), getattr(layer, "out_features", None))
    if None in here:
        raise fail(path, f"{module} is not a linear layer of this model")
    wanted = (here[0] if fan_in is None else fan_in, here[1] if fan_out is None else fan_out)
    if here != wanted:
        raise fail(
            path,
            f"made for another base model: {module} is {here[0]} -> {here[1]} here, "
            f"the adapter's is {wanted[0]} -> {wanted[1]}",
        )


def write_peft_dir(lora: GgufLora, target: Path, base_model: str | None = None) -> Path:
    """The adapter as a peft directory: adapter_config.json, adapter_model.safetensors
    (peft's names, float32) and FORMAT_FILE with the prompt format."""
    from safetensors.numpy import save_file

    target.mkdir(parents=True, exist_ok=True)
    lora_config(lora, base_model).save_pretrained(str(target))
    save_file(lora.peft_state(), str(target / PEFT_WEIGHTS))
    about = {FORMAT_KEY: lora.prompt_format, "name": lora.name, "converted_from": str(lora.path)}
    (target / FORMAT_FILE).write_text(json.dumps(about, indent=2) + "\n")
    return target


def peft_dir_format(path: Path) -> str | None:
    try:
        about = json.loads((path / FORMAT_FILE).read_text())
    except (OSError, ValueError):
        return None
    value = about.get(FORMAT_KEY) if isinstance(about, dict) else None
    return value if isinstance(value, str) else None


def _attach_peft_dir(model: Any, path: Path, formats: Collection[str] | None) -> AttachedAdapter:
    from peft import PeftModel

    if not (path / PEFT_CONFIG).exists():
        raise fail(
            path,
            f"not a peft adapter directory (no {PEFT_CONFIG}): the torch engine takes one, "
            "or a GGUF LoRA file",
        )
    prompt_format = peft_dir_format(path)
    check_format(path, prompt_format, formats)
    _check_peft_shapes(model, path)
    try:
        merged = PeftModel.from_pretrained(model, str(path)).merge_and_unload()
    except (ValueError, KeyError, RuntimeError, OSError, TypeError) as exc:
        raise AdapterApplyError(
            f"{SETTING} = {str(path)!r} does not fit the model: {exc}"
        ) from None
    return AttachedAdapter(merged, path, prompt_format)


def _check_peft_shapes(model: Any, path: Path) -> None:
    """The safetensors header's shapes against the model, before peft changes it."""
    weights = path / PEFT_WEIGHTS
    if not weights.exists():
        return  # an older peft's adapter_model.bin: peft checks it while loading
    from safetensors import safe_open

    try:
        with safe_open(str(weights), framework="np") as handle:
            shapes = {name: handle.get_slice(name).get_shape() for name in handle.keys()}  # noqa: SIM118
    except (OSError, ValueError, RuntimeError) as exc:  # safetensors' own error is one too
        raise fail(path, f"{PEFT_WEIGHTS} cannot be read (corrupt or truncated: {exc})") from None
    for name, shape in shapes.items():
        module, _, which = name.removeprefix(PEFT_PREFIX).partition(".lora_")
        if which.startswith("A."):  # rank x in
            _check_linear(model, path, module, int(shape[-1]), None)
        elif which.startswith("B."):  # out x rank
            _check_linear(model, path, module, None, int(shape[0]))
