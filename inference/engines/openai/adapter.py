"""What the OpenAI engine says about adapters: the server applies any LoRA adapter (vLLM
`--lora-modules NAME=DIR` with `engine.model = NAME`, llama-cpp-python's server
`--lora_path`), so the daemon loads none. `engine.adapter_format` declares the prompt
format the served adapter was trained on (the predictor's format "auto" renders it, as
it renders a local adapter's); vLLM's model list says when the model is a LoRA on a
base (`parent`). A local adapter path in `engine.adapter` cannot be used here: stats()
say so, the server's model serves."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from ..adapter_files import DEFAULT, NONE, SETTING

FORMAT_SETTING = "engine.adapter_format"


@dataclass(frozen=True)
class ServerAdapter:
    adapter: str | None  # what the server applies, as far as the daemon knows
    adapter_format: str | None
    adapter_error: str | None


def model_card(models_body: Any, model: str) -> dict[str, Any]:
    data = models_body.get("data") if isinstance(models_body, dict) else None
    for item in data if isinstance(data, list) else []:
        if isinstance(item, dict) and str(item.get("id")) == model:
            return item
    return {}


def describe(
    setting: str,
    adapter_format: str | None,
    model: str,
    card: dict[str, Any],
    formats: Collection[str] | None = None,
) -> ServerAdapter:
    error = None
    if setting not in (DEFAULT, NONE, ""):
        error = (
            f'{SETTING} = {setting!r} names a local adapter, but with engine.kind = "openai" '
            f"the server applies adapters (vLLM: --lora-modules NAME=DIR and engine.model = "
            f"NAME; `shadowtab adapter export-peft DIR` writes the packaged one); set "
            f"{FORMAT_SETTING} to its prompt format. Serving the server's {model!r} as it is"
        )
    if adapter_format is not None and formats is not None and adapter_format not in formats:
        known = ", ".join(sorted(formats))
        return ServerAdapter(
            _served(model, card, adapter_format),
            None,
            f"{FORMAT_SETTING} = {adapter_format!r}: not a prompt format this version "
            f"renders (known: {known})",
        )
    return ServerAdapter(_served(model, card, adapter_format), adapter_format, error)


def _served(model: str, card: dict[str, Any], adapter_format: str | None) -> str | None:
    parent = card.get("parent")
    if isinstance(parent, str) and parent and parent != model:
        return f"{model} (a LoRA adapter on {parent}, applied by the server)"
    if adapter_format is not None:
        return f"{model} (declared by {FORMAT_SETTING}: applied by the server)"
    return None
