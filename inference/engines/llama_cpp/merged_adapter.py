"""A LoRA adapter merged into the model's weights (engine.merge_adapter).

llama.cpp applies an attached adapter as W x + s B(A x): two more small matrix products
and an addition after every adapted linear layer, in every pass: with our rank-8 adapter
on all linear layers a clear cost in prefill and in every decoded token
(benchmarks/adapter_merge.py), from the extra operations, not their precision. Merged
once, W' = W + s B A, the passes cost what the base model's do.

The merged file keeps the base's metadata and its other tensors as they are; each adapted
weight is dequantized, merged and stored in F32, for the requantization to the engine's
weight type that follows (model_files.requantize), which rounds it once more. So the
output can differ from the attached adapter's at near ties, never more. The file is
named by the adapter's content hash and made once per data dir, atomically."""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from pathlib import Path
from typing import Any

from ..adapter_files import FORMAT_KEY, check_format, check_gguf_file
from ..api import ModelLoadError
from ..model_files import made_once
from .requantize import requantize, requantized_path

LORA_A, LORA_B = ".lora_a", ".lora_b"
MERGED_KEY = "shadowtab.merged_adapter"  # the adapter file's name, in the merged model


def adapter_format_of(adapter: Path, formats: Collection[str] | None) -> str | None:
    """The prompt format the adapter's file names (AdapterError when it is not a GGUF
    file or names a format not in `formats`), read without llama.cpp."""
    import gguf

    check_gguf_file(adapter)
    field = gguf.GGUFReader(str(adapter)).fields.get(FORMAT_KEY)
    prompt_format = str(field.contents()) if field is not None else None
    check_format(adapter, prompt_format, formats)
    return prompt_format


def merged_path(base: Path, adapter: Path, cache_dir: Path) -> Path:
    digest = hashlib.sha256(adapter.read_bytes()).hexdigest()[:12]
    return cache_dir / f"{base.stem}.merged-{digest}.gguf"


def merged_and_converted(
    base: Path, adapter: Path, weights: str, cache_dir: Path, n_threads: int
) -> Path:
    """The model with `adapter` merged in, converted to `weights` (cached); the F32
    merged file it is converted from (~4x the converted size) is not kept."""
    source = merged_path(base, adapter, cache_dir)
    target = requantized_path(source, weights, cache_dir)
    if target.exists():
        return target
    try:
        return requantize(merged_model(base, adapter, cache_dir), weights, cache_dir, n_threads)
    finally:
        source.unlink(missing_ok=True)


def merged_model(base: Path, adapter: Path, cache_dir: Path, scale: float = 1.0) -> Path:
    """The model with `adapter` merged in, made on first use; ModelLoadError when the
    adapter does not fit the model (then the caller serves without it)."""
    target = merged_path(base, adapter, cache_dir)
    return made_once(target, lambda out: _write_merged(base, adapter, out, scale))


def lora_factors(adapter: Path, scale: float) -> dict[str, tuple[Any, Any]]:
    """Base tensor name -> (s B, A), s = scale alpha/r: the merge adds their product.
    Kept as factors (rank-sized) so that only one merged weight is in memory at a time."""
    import gguf
    import numpy as np

    reader = gguf.GGUFReader(str(adapter))
    field = reader.fields.get(gguf.Keys.Adapter.LORA_ALPHA)
    alpha = float(field.contents()) if field is not None else 0.0
    tensors = {t.name: np.asarray(t.data, dtype=np.float32) for t in reader.tensors}
    factors = {}
    for name, a in tensors.items():
        if not name.endswith(LORA_A):
            continue
        base_name = name.removesuffix(LORA_A)
        b = tensors.get(base_name + LORA_B)
        if b is None or b.shape[1] != a.shape[0]:
            raise ModelLoadError(f"{adapter}: {base_name} has no matching {LORA_B}")
        rank = a.shape[0]
        factor = scale * (alpha / rank if alpha else 1.0)  # llama.cpp's scaling
        factors[base_name] = (factor * b, a)
    if not factors:
        raise ModelLoadError(f"{adapter}: no LoRA tensors to merge")
    return factors


def _write_merged(base: Path, adapter: Path, out: Path, scale: float) -> None:
    import gguf
    import numpy as np
    from gguf.quants import dequantize

    factors = lora_factors(adapter, scale)
    reader = gguf.GGUFReader(str(base))
    missing = set(factors) - {t.name for t in reader.tensors}
    if missing:
        raise ModelLoadError(f"{adapter}: tensors not in the model: {sorted(missing)[:3]}")
    arch = reader.fields[gguf.Keys.General.ARCHITECTURE].contents()
    writer = gguf.GGUFWriter(str(out), str(arch))
    _copy_metadata(reader, writer)
    writer.add_string(MERGED_KEY, adapter.name)
    f32 = np.dtype(np.float32)
    for tensor in reader.tensors:  # the table first: merged weights are F32 (out, in)
        if tensor.name not in factors:
            data = tensor.data
            writer.add_tensor_info(
                tensor.name, data.shape, data.dtype, data.nbytes, tensor.tensor_type
            )
            continue
        shape = tuple(int(n) for n in reversed(tensor.shape))
        b, a = factors[tensor.name]
        if (b.shape[0], a.shape[1]) != shape:
            raise ModelLoadError(
                f"{adapter}: {tensor.name} is {(b.shape[0], a.shape[1])} in the adapter, "
                f"{shape} in the model"
            )
        nbytes = int(np.prod(shape)) * f32.itemsize
        writer.add_tensor_info(tensor.name, shape, f32, nbytes, gguf.GGMLQuantizationType.F32)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for tensor in reader.tensors:  # one merged weight in memory at a time
        if tensor.name not in factors:
            writer.write_tensor_data(tensor.data)
            continue
        b, a = factors[tensor.name]
        weight = dequantize(tensor.data, tensor.tensor_type).astype(np.float32)
        weight += b @ a
        writer.write_tensor_data(weight)
    writer.close()


def _copy_metadata(reader: Any, writer: Any) -> None:
    """Every key of the base (as gguf's own gguf_new_metadata.py copies them), except
    those the writer sets itself."""
    import gguf

    for field in reader.fields.values():
        if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue
        kind = field.types[0]
        sub = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), kind, sub_type=sub)
