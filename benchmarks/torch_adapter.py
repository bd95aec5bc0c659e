"""The packaged LoRA adapter on torch: kept as a peft model (each targeted linear layer
adds B(A x)) or merged into the weights (torch/lora.py's choice), against the base
model, side by side in one run: decode tokens/s (one token a forward pass, with the KV
cache, as the engine decodes) and prefill tokens/s, interleaved rounds, medians. Also
whether the three give the same greedy tokens (merged vs peft: the same up to float
rounding).

    python -m benchmarks.torch_adapter [--quick] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import inspect
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CACHE_ARG = "past_key_values"  # set from the model's signature: newer transformers say cache
SOURCE = (Path(__file__).resolve().parents[1] / "daemon" / "cli" / "main.py").read_text()


def load_variants(data_dir: Path) -> tuple[dict[str, Any], Any]:
    import torch
    from shadowtab.inference.engines.adapter_files import packaged_adapter
    from shadowtab.inference.engines.model_files import default_model_path
    from shadowtab.inference.engines.torch.gguf_lora import read_gguf_lora
    from shadowtab.inference.engines.torch.lora import head_counts, with_gguf_lora
    from shadowtab.inference.engines.torch.model import _hf_directory, _load_pretrained
    from transformers import AutoTokenizer

    source = _hf_directory(default_model_path(), data_dir)
    adapter = packaged_adapter()
    assert adapter is not None, "no packaged adapter"
    base = _load_pretrained(source)
    lora = read_gguf_lora(adapter, *head_counts(base))
    peft_model = with_gguf_lora(_load_pretrained(source), lora)
    merged = with_gguf_lora(_load_pretrained(source), lora).merge_and_unload()
    torch.set_num_threads(1)  # as the torch engine chooses on this loaded 2-core machine
    models = {"base": base, "peft": peft_model, "merged": merged}
    for model in models.values():
        model.eval()
    global CACHE_ARG
    if "cache" in inspect.signature(base.forward).parameters:
        CACHE_ARG = "cache"
    return models, AutoTokenizer.from_pretrained(str(source))


def decode(model: Any, ids: list[int], steps: int) -> tuple[list[int], float, float]:
    """Greedy: prefill `ids`, then `steps` single-token passes. (tokens, prefill s, decode s)"""
    import torch
    from transformers import DynamicCache

    cache = DynamicCache(config=model.config)
    kv = {CACHE_ARG: cache}
    with torch.inference_mode():
        started = time.perf_counter()
        out = model(input_ids=torch.tensor([ids]), **kv, use_cache=True)
        prefill = time.perf_counter() - started
        token = int(out.logits[0, -1].argmax())
        tokens = [token]
        started = time.perf_counter()
        for _ in range(steps - 1):
            out = model(input_ids=torch.tensor([[token]]), **kv, use_cache=True)
            token = int(out.logits[0, -1].argmax())
            tokens.append(token)
        return tokens, prefill, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="reduced size for CI")
    parser.add_argument("--data-dir", type=Path, help="where the converted model is cached")
    args = parser.parse_args()
    rounds, steps, chars = (2, 8, 400) if args.quick else (5, 32, 1500)
    with tempfile.TemporaryDirectory() as scratch:
        models, tokenizer = load_variants(args.data_dir or Path(scratch))
        ids = tokenizer(SOURCE[:chars]).input_ids
        times: dict[str, dict[str, list[float]]] = {
            n: {"prefill": [], "decode": []} for n in models
        }
        outputs: dict[str, list[int]] = {}
        for round_index in range(rounds + 1):
            for name, model in models.items():  # interleaved: the machine's load hits all
                tokens, prefill, decoding = decode(model, ids, steps)
                if round_index == 0:
                    continue  # warm-up: first calls allocate and pick kernels
                times[name]["prefill"].append(len(ids) / prefill)
                times[name]["decode"].append((steps - 1) / decoding)
                outputs[name] = tokens
    line: dict[str, Any] = {
        "benchmark": "torch_adapter",
        "quick": args.quick,
        "prompt_tokens": len(ids),
        "decode_steps": steps,
        "rounds": rounds,
    }
    for name, figures in times.items():
        line[f"{name}_decode_tok_s"] = round(statistics.median(figures["decode"]), 1)
        line[f"{name}_prefill_tok_s"] = round(statistics.median(figures["prefill"]), 1)
    line["merged_over_peft_decode"] = round(
        line["merged_decode_tok_s"] / line["peft_decode_tok_s"], 3
    )
    line["merged_over_peft_prefill"] = round(
        line["merged_prefill_tok_s"] / line["peft_prefill_tok_s"], 3
    )
    line["merged_equals_peft_greedy"] = outputs["merged"] == outputs["peft"]
    line["adapter_changes_greedy"] = outputs["merged"] != outputs["base"]
    print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
