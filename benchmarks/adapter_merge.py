"""The next-edit adapter attached (llama.cpp's LoRA in every pass) against merged into
the converted weights (engine.merge_adapter), with the base model beside them: prefill
and decode speed side by side in one run (rounds in turns, the best of each), and
whether the merged model answers as the attached one. Prints one JSON line.

    python -m benchmarks.adapter_merge [--quick] [--data-dir DIR] [--weights q8_0|bf16|auto]
"""

from __future__ import annotations

import sys
from pathlib import Path

from shadowtab.inference import LlamaCppEngine
from shadowtab.inference.engines.local.cpu_load import physical_cores

from benchmarks.common.cli import run_weights_benchmark

SAMPLE = Path(__file__).resolve().parents[1] / "inference/engines/local/decoding.py"
VARIANTS = {"base": ("none", False), "attached": ("default", False), "merged": ("default", True)}


def run(quick: bool, data_dir: Path, weights: str) -> dict[str, object]:
    prompt = SAMPLE.read_text()[: 1200 if quick else 3000]
    max_tokens, rounds = (16, 1) if quick else (48, 3)
    engines = {
        name: LlamaCppEngine(
            n_ctx=4096,
            kv_cache_mb=128,
            data_dir=data_dir,
            requantize_to=weights,
            adapter=adapter,
            merge_adapter=merge,
            n_threads=physical_cores(),  # fixed: the sides must not differ by the load
        )
        for name, (adapter, merge) in VARIANTS.items()
    }
    best: dict[str, dict[str, float]] = {name: {} for name in engines}
    texts: dict[str, str] = {}
    try:
        for _ in range(rounds):
            for name, engine in engines.items():
                engine.clear_cache()
                answer = engine.complete(prompt, max_tokens)
                stats = answer.stats
                decode = (stats.seconds - stats.first_token_seconds) / max(
                    1, stats.generated_tokens - 1
                )
                prefill = stats.prompt_tokens / stats.first_token_seconds
                row = best[name]
                row["prefill_tok_s"] = max(row.get("prefill_tok_s", 0.0), prefill)
                row["decode_ms"] = min(row.get("decode_ms", 1e9), 1000 * decode)
                texts[name] = answer.texts[0]
        described = {name: engine.stats() for name, engine in engines.items()}
    finally:
        for engine in engines.values():
            engine.close()
    return _line(quick, best, texts, described)


def _line(
    quick: bool,
    best: dict[str, dict[str, float]],
    texts: dict[str, str],
    described: dict[str, dict[str, object]],
) -> dict[str, object]:
    attached, merged = best["attached"], best["merged"]
    return {
        "benchmark": "adapter_merge",
        "quick": quick,
        "model": Path(str(described["base"]["model"])).name,
        "weights": described["merged"].get("weights"),
        "adapter_merged": described["merged"].get("adapter_merged"),
        **{name: {k: round(v, 2) for k, v in row.items()} for name, row in best.items()},
        "merged_prefill_over_attached": round(
            merged["prefill_tok_s"] / attached["prefill_tok_s"], 3
        ),
        "attached_decode_over_merged": round(attached["decode_ms"] / merged["decode_ms"], 3),
        "merged_equals_attached": texts["merged"] == texts["attached"],
    }


if __name__ == "__main__":
    sys.exit(run_weights_benchmark(__doc__.splitlines()[0], run))
