"""A GGUF LoRA adapter (by default the packaged next-edit one) written as a peft adapter
directory, for servers that load peft adapters (vLLM: `--enable-lora --lora-modules
NAME=DIR`) and for peft itself:

    shadowtab adapter export-peft DIR [--adapter FILE.gguf] [--base MODEL]

The q/k un-permutation needs the base model's head counts: read from the base GGUF's
metadata (default: the packaged model) or a Hugging Face directory's config.json."""

from __future__ import annotations

import json
from pathlib import Path

from ..adapter_files import SETTING, AdapterError, packaged_adapter
from ..api import ModelLoadError
from ..model_files import default_model_path
from .gguf_lora import read_gguf_lora
from .lora import write_peft_dir


def head_counts(base: Path) -> tuple[int, int]:
    """(query heads, KV heads) of a base model: a GGUF file or a Hugging Face directory."""
    if base.is_dir():
        try:
            config = json.loads((base / "config.json").read_text())
            n_head = int(config["num_attention_heads"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ModelLoadError(f"{base}: no usable config.json ({exc})") from None
        return n_head, int(config.get("num_key_value_heads") or n_head)
    return _gguf_head_counts(base)


def _gguf_head_counts(base: Path) -> tuple[int, int]:
    import gguf

    try:
        fields = gguf.GGUFReader(str(base), "r").fields
        arch = fields["general.architecture"].contents()
        n_head = int(fields[f"{arch}.attention.head_count"].contents())
        kv_field = fields.get(f"{arch}.attention.head_count_kv")
    except (OSError, ValueError, KeyError, IndexError) as exc:
        raise ModelLoadError(f"{base}: not a GGUF model with head counts ({exc})") from None
    return n_head, int(kv_field.contents()) if kv_field is not None else n_head


def export_peft(target: Path, adapter: Path | None = None, base: Path | None = None) -> Path:
    """Write `adapter` (default: the packaged one) for `base` (default: the packaged
    model) as a peft directory at `target`; returns `target`."""
    source = adapter or packaged_adapter()
    if source is None:
        raise AdapterError(f"{SETTING}: this package has no packaged adapter; pass --adapter")
    base_model = base or default_model_path()
    lora = read_gguf_lora(source, *head_counts(base_model))
    return write_peft_dir(lora, target, base_model=str(base_model))
