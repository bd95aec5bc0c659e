"""Does requantizing the packaged Q4_1 model (to Q8_0, BF16 or Q4_0, cached in a data dir) help?

Per quantization, interleaved round by round so that noise from other processes hits all
alike: prefill and decode speed, r = prefill / decode, the time of a 17-token verification
pass relative to one decode step, and how often speculative output differs from greedy.
Prints one JSON line.

    python -m benchmarks.requantize [--quick] [--data-dir DIR]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np
from shadowtab.inference import LlamaCppEngine, default_model_path
from shadowtab.inference.engines.llama_cpp.requantize import requantize
from shadowtab.inference.engines.local.cpu_load import physical_cores

from benchmarks.common.cli import run_model_benchmark

PROMPTS = [
    'def fibonacci(n: int) -> int:\n    """Return the n-th Fibonacci number."""\n',
    "class Stack:\n    def __init__(self):\n        self.items = []\n\n    def push(self, item):\n",
    "function debounce(fn, ms) {\n  let timer;\n  return function (...args) {\n",
    "#include <stdio.h>\n\nint main(int argc, char **argv) {\n",
]


def speeds(engine: LlamaCppEngine, text: str, round_no: int) -> dict[str, float]:
    runtime, cache = engine._ready()  # white box: time single forward passes
    cache.clear()
    tokens = runtime.tokenize(f"# round {round_no}\n{text}", add_bos=True)[:257]
    started = time.perf_counter()
    for begin in range(0, 256, 128):
        runtime.decode(tokens[begin : begin + 128], 0, begin, [127])
    prefill = 256 / (time.perf_counter() - started)
    token = tokens[256]
    started = time.perf_counter()
    for pos in range(256, 272):
        token = int(np.argmax(runtime.decode([token], 0, pos, [0])[0]))
    step = (time.perf_counter() - started) / 16
    started = time.perf_counter()
    runtime.decode(tokens[100:117], 0, 272, list(range(17)))
    verify = time.perf_counter() - started
    runtime.seq_remove(0, 0, -1)
    return {"prefill": prefill, "decode": 1 / step, "verify17_over_step": verify / step}


def flips(engine: LlamaCppEngine, max_tokens: int) -> float:
    differ = 0
    for prompt in PROMPTS:
        plain = engine.rewrite(prompt, "x", max_tokens, speculative=False)
        fast = engine.rewrite(prompt, plain.texts[0], max_tokens)
        differ += fast.token_ids != plain.token_ids
    return differ / len(PROMPTS)


def run(quick: bool, data_dir: Path) -> dict[str, object]:
    source = default_model_path()
    models = {"q4_1": source}
    for quant in ("q8_0", "bf16", "q4_0"):
        models[quant] = requantize(source, quant, data_dir, physical_cores())
    engines = {
        name: LlamaCppEngine(path, n_ctx=1024, kv_cache_mb=32, n_threads=physical_cores())
        for name, path in models.items()
    }
    text = (Path(__file__).resolve().parents[1] / "daemon" / "cli" / "main.py").read_text() * 2
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in engines}
    for round_no in range(2 if quick else 5):
        for name, engine in engines.items():
            samples[name].append(speeds(engine, text, round_no))
    result: dict[str, object] = {"benchmark": "requantize", "quick": quick}
    for name, engine in engines.items():
        medians = {k: statistics.median(s[k] for s in samples[name]) for k in samples[name][0]}
        result[name] = {
            "file_mb": round(models[name].stat().st_size / 2**20, 1),
            "prefill_tok_s": round(medians["prefill"], 1),
            "decode_tok_s": round(medians["decode"], 1),
            "r": round(medians["prefill"] / medians["decode"], 2),
            "verify17_over_step": round(medians["verify17_over_step"], 2),
            "flip_rate": flips(engine, 32 if quick else 64),
        }
        engine.close()
    return result


def main() -> int:
    return run_model_benchmark(__doc__.splitlines()[0], run)


if __name__ == "__main__":
    sys.exit(main())
