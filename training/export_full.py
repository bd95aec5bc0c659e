"""Export a full-weight checkpoint as a whole GGUF model llama.cpp loads
(`[engine] model_path`), with the packaged model's metadata and tokenizer.

    python -m training.export_full --checkpoint DIR/checkpoints/adapter-latest.pt \\
        --out DIR/shadowtab-full.gguf

Tensors are named and laid out as llama.cpp's `convert_hf_to_gguf.py` writes a llama
model: `blk.N.attn_q.weight` etc., q/k rows rope-permuted (transformers un-permutes
them when it reads a GGUF), norms in F32, matrices in Q8_0 (or F16 with `--type f16`).
The token embedding is copied as stored (Q8_0) unless the run trained it. The file
carries `shadowtab.next_edit.format = shadowtab`, the layout the weights were trained on.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from shadowtab.inference.engines.torch.gguf_lora import HF_MODULES, permute_rows

from training.base_model import load_model, packaged_gguf

N_HEAD, N_HEAD_KV = 9, 3  # SmolLM2-135M
SKIPPED_KEYS = ("GGUF.", "general.architecture", "general.file_type", "general.name")
LAYER_NORMS = {"attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm"}


def hf_name(gguf_name: str) -> str:
    """The transformers state-dict name of a llama.cpp tensor of this model."""
    if gguf_name == "token_embd.weight":
        return "model.embed_tokens.weight"
    if gguf_name == "output_norm.weight":
        return "model.norm.weight"
    _, layer, kind, _ = gguf_name.split(".")
    module = LAYER_NORMS.get(kind) or HF_MODULES[kind]
    return f"model.layers.{layer}.{module}.weight"


def gguf_array(name: str, value: Any) -> Any:
    """A trained float tensor as llama.cpp stores it (q/k rows permuted)."""
    array = value.detach().float().cpu().numpy()
    if ".attn_q." in name:
        return permute_rows(array, N_HEAD)
    if ".attn_k." in name:
        return permute_rows(array, N_HEAD_KV)
    return array


def _copy_metadata(writer: Any, reader: Any, gguf: Any, matrix_type: str) -> None:
    for name, field in reader.fields.items():
        if name.startswith(SKIPPED_KEYS):
            continue
        kind = field.types[0]
        sub = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(name, field.contents(), kind, sub)
    file_type = (
        gguf.LlamaFileType.MOSTLY_Q8_0 if matrix_type == "q8_0" else gguf.LlamaFileType.MOSTLY_F16
    )
    writer.add_file_type(file_type)


def write_model(
    path: Path, state: dict[str, Any], name: str, trained: set[str], matrix_type: str = "q8_0"
) -> Path:
    """The packaged GGUF with the tensors of `state` (a transformers state dict) whose
    names are in `trained` replaced; the others are copied as stored."""
    import gguf
    import numpy as np
    from shadowtab.inference.engines.adapter_files import FORMAT_KEY
    from shadowtab.inference.next_edit.formats import ADAPTER_FORMAT

    reader = gguf.GGUFReader(str(packaged_gguf()))
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(path.name + ".tmp")
    writer = gguf.GGUFWriter(str(temp), "llama")
    _copy_metadata(writer, reader, gguf, matrix_type)
    writer.add_name(name)
    writer.add_string(FORMAT_KEY, ADAPTER_FORMAT)
    quant = gguf.GGMLQuantizationType.Q8_0
    for tensor in reader.tensors:
        source = hf_name(tensor.name)
        if source not in trained:
            writer.add_tensor(tensor.name, tensor.data, raw_dtype=tensor.tensor_type)
            continue
        array = gguf_array(tensor.name, state[source])
        if array.ndim == 1:
            writer.add_tensor(tensor.name, array.astype(np.float32))
        elif matrix_type == "f16":
            writer.add_tensor(tensor.name, array.astype(np.float16))
        else:
            writer.add_tensor(tensor.name, gguf.quants.quantize(array, quant), raw_dtype=quant)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    temp.replace(path)
    return path


def export_checkpoint(checkpoint_path: Path, out: Path, matrix_type: str = "q8_0") -> Path:
    """The base model plus a full-mode checkpoint's change, as one GGUF model."""
    import torch

    from training import full

    saved = torch.load(checkpoint_path, map_location="cpu", weights_only=False)
    if saved.get("mode") != "full":
        raise SystemExit(f"{checkpoint_path} is not a full-weight checkpoint (use training.export)")
    model = load_model()
    full.mark_trainable(model, bool(saved["shape"]["train_embeddings"]))
    base = full.base_copy(model)
    full.load_delta(model, base, saved["delta"])
    name = f"shadowtab full-weight SmolLM2-135M step {saved['step']}"
    return write_model(out, model.state_dict(), name, set(saved["delta"]), matrix_type)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--type", choices=("q8_0", "f16"), default="q8_0")
    args = parser.parse_args(argv)
    print(export_checkpoint(args.checkpoint, args.out, args.type))


if __name__ == "__main__":
    main()
