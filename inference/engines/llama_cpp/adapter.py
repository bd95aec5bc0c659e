"""Loading the LoRA adapter `engine.adapter` names (see adapter_files.py) onto the model
with llama.cpp (`llama_adapter_lora_init` + `llama_set_adapters_lora`; the
graph computes W x + s B(A x) on the quantized base, which stays as it is).

An adapter that cannot be used never stops the engine: the error names the setting and
the engine serves with the base model (see LlamaCppEngine)."""

from __future__ import annotations

import ctypes
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import llama_cpp

from ..adapter_files import FORMAT_KEY, SETTING, AdapterError, check_format, check_gguf_file

META_VALUE_BYTES = 256


@dataclass(frozen=True)
class Attached:
    handle: object  # llama.cpp's adapter, freed with the model
    prompt_format: str | None  # FORMAT_KEY of the file; None when it names none


def attach(
    model: ctypes.c_void_p,
    context: ctypes.c_void_p,
    path: Path,
    scale: float,
    formats: Collection[str] | None = None,
) -> Attached:
    """Load the adapter for `model` and set it on `context`. llama.cpp refuses a corrupt
    or truncated file, an adapter of another architecture and one whose tensor shapes do
    not match the model; an adapter trained on a prompt format not in `formats` (the
    ones the predictor can render) is refused here."""
    check_gguf_file(path)
    adapter = llama_cpp.llama_adapter_lora_init(model, str(path).encode())
    if not adapter:
        raise AdapterError(
            f"{SETTING} = {str(path)!r}: llama.cpp could not load it (corrupt or truncated, "
            "or made for another base model: its tensor shapes must match the model's)"
        )
    prompt_format = _meta_string(adapter, FORMAT_KEY)
    try:
        check_format(path, prompt_format, formats)
    except AdapterError:
        llama_cpp.llama_adapter_lora_free(adapter)
        raise
    adapters = (llama_cpp.llama_adapter_lora_p_ctypes * 1)(adapter)
    scales = (ctypes.c_float * 1)(scale)
    if llama_cpp.llama_set_adapters_lora(context, adapters, 1, scales) != 0:
        llama_cpp.llama_adapter_lora_free(adapter)
        raise AdapterError(f"{SETTING} = {str(path)!r}: llama.cpp could not apply it")
    return Attached(adapter, prompt_format)


def _meta_string(adapter: object, key: str) -> str | None:
    buffer = ctypes.create_string_buffer(META_VALUE_BYTES)
    length = llama_cpp.llama_adapter_meta_val_str(adapter, key.encode(), buffer, META_VALUE_BYTES)
    if length < 0:
        return None
    return buffer.value.decode("utf-8", errors="replace")
