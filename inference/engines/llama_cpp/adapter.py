"""The LoRA adapter setting (`engine.adapter`): which file it names, and loading it onto
the model with llama.cpp (`llama_adapter_lora_init` + `llama_set_adapters_lora`; the
graph computes W x + s B(A x) on the quantized base, which stays as it is).

An adapter that cannot be used never stops the engine: the error names the setting and
the engine serves with the base model (see LlamaCppEngine)."""

from __future__ import annotations

import ctypes
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import llama_cpp

from ..api import EngineError

SETTING = "engine.adapter"
DEFAULT = "default"
NONE = "none"
# Shipped in the package, trained by training/ for the packaged base model.
PACKAGED_DIR = Path(__file__).resolve().parent.parent.parent / "adapters"
PACKAGED_FILE = "shadowtab-next-edit.lora.gguf"
# The GGUF key naming the next-edit prompt format an adapter was trained on (written by
# training/export.py): the predictor renders its prompts in that format.
FORMAT_KEY = "shadowtab.next_edit.format"
META_VALUE_BYTES = 256


class AdapterError(EngineError):
    """The configured adapter cannot be used; the message names the setting."""


@dataclass(frozen=True)
class AdapterChoice:
    path: Path | None  # None: serve the base model alone
    setting: str  # the value as configured, for messages and status


def packaged_adapter() -> Path | None:
    path = PACKAGED_DIR / PACKAGED_FILE
    return path if path.is_file() else None


def resolve(setting: str | None, custom_model: bool) -> AdapterChoice:
    """ "default": the packaged adapter, for the packaged model only (it was trained for
    that base) and only if the package has one; "none": no adapter; else a path."""
    value = setting or DEFAULT
    if value == NONE:
        return AdapterChoice(None, value)
    if value == DEFAULT:
        return AdapterChoice(None if custom_model else packaged_adapter(), value)
    return AdapterChoice(Path(value).expanduser(), value)


def _check_file(path: Path) -> None:
    if not path.is_file():
        raise AdapterError(f"{SETTING} = {str(path)!r}: file not found")
    with path.open("rb") as handle:
        if handle.read(4) != b"GGUF":
            raise AdapterError(f"{SETTING} = {str(path)!r}: not a GGUF LoRA adapter file")


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
    _check_file(path)
    adapter = llama_cpp.llama_adapter_lora_init(model, str(path).encode())
    if not adapter:
        raise AdapterError(
            f"{SETTING} = {str(path)!r}: llama.cpp could not load it (corrupt or truncated, "
            "or made for another base model: its tensor shapes must match the model's)"
        )
    prompt_format = _meta_string(adapter, FORMAT_KEY)
    if formats is not None and prompt_format is not None and prompt_format not in formats:
        llama_cpp.llama_adapter_lora_free(adapter)
        known = ", ".join(sorted(formats))
        raise AdapterError(
            f"{SETTING} = {str(path)!r}: trained on the prompt format {prompt_format!r}, "
            f"which this version cannot render (known: {known})"
        )
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
