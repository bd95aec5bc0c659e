"""Export a training checkpoint's adapter as a llama.cpp GGUF LoRA adapter.

    python -m training.export --checkpoint training/checkpoints/adapter-latest.pt \
        --out DIR/shadowtab-next-edit.lora.gguf

Layout as llama.cpp's `convert_lora_to_gguf.py` writes it: `general.type = adapter`,
`adapter.type = lora`, `adapter.lora.alpha`; per target `<base tensor>.lora_a` (rank x
in, peft's A) and `.lora_b` (out x rank, peft's B), float32. transformers un-permutes
the q/k projections when it reads a llama GGUF (llama.cpp stores them rope-permuted),
so B of attn_q/attn_k is permuted back the way the converter permutes those weights.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from shadowtab.inference.engines.torch.gguf_lora import HF_MODULES, permute_rows

N_HEAD = 9  # SmolLM2-135M: 9 query heads share 3 KV heads
N_HEAD_KV = 3
# the Hugging Face module under a layer -> llama.cpp's tensor name
BASE_NAMES = {module: kind for kind, module in HF_MODULES.items()}
PEFT_NAME = re.compile(r"layers\.(\d+)\.(\w+\.\w+)\.lora_([AB])\.(?:\w+\.)?weight$")


def gguf_tensors(adapter: dict[str, Any]) -> dict[str, Any]:
    """llama.cpp tensor name -> float32 numpy array, from peft's adapter state."""
    out: dict[str, Any] = {}
    for name, tensor in adapter.items():
        match = PEFT_NAME.search(name)
        if match is None:
            raise ValueError(f"not a LoRA tensor of a known layer: {name}")
        layer, module, which = match.groups()
        base = f"blk.{layer}.{BASE_NAMES[module]}.weight"
        value = tensor.float().contiguous().numpy()
        if which == "B" and module == "self_attn.q_proj":
            value = permute_rows(value, N_HEAD)
        elif which == "B" and module == "self_attn.k_proj":
            value = permute_rows(value, N_HEAD_KV)
        out[f"{base}.lora_{which.lower()}"] = value
    return out


def write_adapter(path: Path, adapter: dict[str, Any], alpha: float, name: str) -> Path:
    import gguf
    from shadowtab.inference.engines.adapter_files import FORMAT_KEY
    from shadowtab.inference.next_edit.formats import ADAPTER_FORMAT

    path.parent.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name(name)
    writer.add_type(gguf.GGUFType.ADAPTER)
    writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
    writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, float(alpha))
    writer.add_string(FORMAT_KEY, ADAPTER_FORMAT)  # the predictor renders this format
    for tensor_name, array in sorted(gguf_tensors(adapter).items()):
        writer.add_tensor(tensor_name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def export_checkpoint(checkpoint_path: Path, out: Path) -> Path:
    import torch

    saved = torch.load(checkpoint_path, map_location="cpu", weights_only=False)
    alpha = saved["shape"]["alpha"]
    name = f"shadowtab next-edit LoRA r{saved['shape']['rank']} step {saved['step']}"
    return write_adapter(out, saved["adapter"], alpha, name)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--checkpoint", type=Path, default=Path("training/checkpoints/adapter-latest.pt")
    )
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    print(export_checkpoint(args.checkpoint, args.out))


if __name__ == "__main__":
    main()
