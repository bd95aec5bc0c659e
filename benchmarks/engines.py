"""The engines side by side on the same model in one run: one JSON line per engine with
greedy tokens/s, prefill tokens/s, the speculative speedup at copy fraction 0.9 over the
engine's own greedy, warm vs cold time to the first token, and the share of prompt
tokens served from a cache across a typing trace (for a server: what the server reports).

The OpenAI-compatible engine talks to --base-url when given (a vLLM deployment, say),
else to llama-cpp-python's own server on the packaged model, started here on loopback.
`--adapters default,none`: a line per engine and adapter setting ("default": the
packaged next-edit adapter on every engine, the started server loading it with
--lora_path; "none": the base model; a path: that adapter).

    python -m benchmarks.engines [--quick] [--engines llama.cpp,torch,openai] [--base-url URL]
        [--adapters default,none]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shadowtab.inference import Engine, default_model_path

from benchmarks.common.serving import LLAMA_CPP_SERVER, free_port, serving
from benchmarks.common.speculative import make_draft

SOURCE = (Path(__file__).resolve().parents[1] / "daemon" / "cli" / "main.py").read_text()
PROMPT = 'def insertion_sort(items: list[int]) -> list[int]:\n    """Sort items in place."""\n'


@dataclass(frozen=True)
class Sizes:
    cold_chars: int
    greedy_tokens: int
    keystrokes: int


FULL = Sizes(cold_chars=1500, greedy_tokens=48, keystrokes=16)
QUICK = Sizes(cold_chars=500, greedy_tokens=12, keystrokes=4)


def unique(text: str) -> str:
    return f"# run {time.time_ns()}\n{text}"


def prompt_tokens(engine: Engine, prompt: str, reported: int) -> int:
    return reported or len(engine.tokenize(prompt))


def greedy_and_prefill(engine: Engine, sizes: Sizes) -> tuple[float, float]:
    prompt = unique((SOURCE * 4)[: sizes.cold_chars])
    result = engine.rewrite(prompt, "x", sizes.greedy_tokens, speculative=False)
    stats = result.stats
    prefill = prompt_tokens(engine, prompt, stats.evaluated_prompt_tokens)
    decode_s = max(stats.seconds - stats.first_token_seconds, 1e-9)
    return (stats.generated_tokens - 1) / decode_s, prefill / stats.first_token_seconds


def speculative_speedup(engine: Engine, sizes: Sizes) -> tuple[float, bool]:
    """Plain greedy vs rewrite() with a 90%-copy draft, the prompt cached for both."""
    engine.warm(PROMPT)
    plain = engine.rewrite(PROMPT, "x", sizes.greedy_tokens * 2, speculative=False)
    draft = make_draft(plain.texts[0], 0.9, random.Random(7))
    fast = engine.rewrite(PROMPT, draft, sizes.greedy_tokens * 2)
    return plain.stats.seconds / fast.stats.seconds, fast.texts == plain.texts


def first_tokens(engine: Engine, sizes: Sizes) -> tuple[float, float]:
    """Cold: a prompt nobody has seen. Warm: warmed first, then requested with a tail."""
    cold = engine.complete(unique((SOURCE * 4)[: sizes.cold_chars]), 1)
    warm_prompt = unique((SOURCE * 4)[: sizes.cold_chars])
    engine.warm(warm_prompt)
    warm = engine.complete(warm_prompt + "\nx = ", 1)
    return cold.stats.first_token_seconds, warm.stats.first_token_seconds


def typing_share(engine: Engine, sizes: Sizes) -> tuple[float | None, str | None]:
    """Each keystroke extends the document; the share of prompt tokens served cached."""
    document = unique((SOURCE * 4)[: sizes.cold_chars])
    cached = total = reports = 0
    for key in range(sizes.keystrokes + 1):
        stats = engine.complete(document + "value = compute"[: key + 1], 1).stats
        if key == 0:
            continue  # the first request fills the cache
        cached += stats.reused_prompt_tokens
        total += stats.prompt_tokens
        reports += stats.prompt_tokens > 0
    if not reports or not total:
        return None, None
    return cached / total, "server" if engine.stats().get("engine") == "openai" else "engine"


def measure(kind: str, engine: Engine, sizes: Sizes) -> dict[str, Any]:
    greedy, prefill = greedy_and_prefill(engine, sizes)
    speedup, equal = speculative_speedup(engine, sizes)
    cold, warm = first_tokens(engine, sizes)
    share, reporter = typing_share(engine, sizes)
    stats = engine.stats()
    return {
        "engine": kind,
        "device": stats.get("device"),
        "model": Path(str(stats.get("model"))).name,
        "adapter": Path(str(stats["adapter"])).name if stats.get("adapter") else None,
        "adapter_format": stats.get("adapter_format"),
        "greedy_tok_s": round(greedy, 1),
        "prefill_tok_s": round(prefill, 1),
        "speculative_speedup_p09": round(speedup, 2),
        "speculative_equals_greedy": equal,
        "cold_first_token_s": round(cold, 3),
        "warm_first_token_s": round(warm, 3),
        "warm_over_cold": round(warm / cold, 3),
        "typing_cached_share": None if share is None else round(share, 3),
        "cached_share_reported_by": reporter,
    }


@contextmanager
def llama_cpp_server(adapter: Path | None) -> Iterator[str]:
    """llama-cpp-python's server on the packaged model (with `adapter` as its LoRA), on
    loopback, stopped after; its output goes to a log shown when it does not start."""
    port = free_port()
    command = [
        *LLAMA_CPP_SERVER, "--model", str(default_model_path()),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096",
        *(["--lora_path", str(adapter)] if adapter else []),
    ]  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"
    with (
        tempfile.TemporaryDirectory() as scratch,
        serving(command, f"{url}/models", Path(scratch) / "server.log"),
    ):
        yield url


def build(kind: str, data_dir: Path, base_url: str | None, adapter: str) -> Callable[[], Engine]:
    if kind == "llama.cpp":
        from shadowtab.inference import LlamaCppEngine

        return lambda: LlamaCppEngine(
            n_ctx=4096, kv_cache_mb=128, data_dir=data_dir, adapter=adapter
        )
    if kind == "torch":
        from shadowtab.inference.engines.torch.engine import TorchEngine

        return lambda: TorchEngine(n_ctx=4096, kv_cache_mb=128, data_dir=data_dir, adapter=adapter)
    from shadowtab.inference.engines.openai.client import ServerOptions
    from shadowtab.inference.engines.openai.engine import OpenAIEngine

    # the server applies the adapter; its format is declared as a team would declare it
    served_format = None if adapter == "none" else "shadowtab"
    return lambda: OpenAIEngine(
        ServerOptions(base_url=str(base_url), timeout_s=300), adapter_format=served_format
    )


def server_adapter(adapter: str) -> Path | None:
    from shadowtab.inference.engines.adapter_files import resolve

    return resolve(adapter, custom_model=False).path


def run_one(
    kind: str, sizes: Sizes, data_dir: Path, base_url: str | None, adapter: str
) -> dict[str, Any]:
    if kind == "torch" and importlib.util.find_spec("torch") is None:
        return {"engine": kind, "skipped": "the torch extra is not installed"}
    if kind == "openai" and base_url is None:
        with llama_cpp_server(server_adapter(adapter)) as url:
            return run_one(kind, sizes, data_dir, url, adapter)
    engine = build(kind, data_dir, base_url, adapter)()
    try:
        line = measure(kind, engine, sizes)
    finally:
        engine.close()
    if kind == "openai":
        line["server"] = base_url
    return line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="reduced size for CI")
    parser.add_argument("--engines", default="llama.cpp,torch,openai")
    parser.add_argument("--base-url", help="an OpenAI-compatible server (default: start one)")
    parser.add_argument("--data-dir", type=Path, help="where converted models are cached")
    parser.add_argument(
        "--adapters", default="default", help='engine.adapter values, e.g. "default,none"'
    )
    args = parser.parse_args()
    sizes = QUICK if args.quick else FULL
    with tempfile.TemporaryDirectory() as scratch:
        data_dir = args.data_dir or Path(scratch)
        for adapter in args.adapters.split(","):
            for kind in args.engines.split(","):
                line = run_one(kind.strip(), sizes, data_dir, args.base_url, adapter.strip())
                print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
