"""KV cache reuse while typing: replay typing real code into a ~1,500-token file, one
keystroke per character, with prompts built as the predictor builds them (ghost text:
shadowtab.inference.next_edit.ghost_text.prompts; next edit: every format of
shadowtab.inference.next_edit.formats, with the typing as its edit events). Prints one
JSON line:

- median share of prompt tokens served from the cache per keystroke (a request on every
  keystroke), for the inline-completion prompt and each next-edit format;
- p50 first-token latency of those requests (warm) against the same prompts on an empty
  cache (cold);
- requests only at word ends, with warming on every keystroke (as the daemon does on
  didOpen/didChange) against warming off.

    python -m benchmarks.kv_reuse [--quick]
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from pathlib import Path

from shadowtab.inference import LlamaCppEngine, RequestStats
from shadowtab.inference.engines.local.cpu_load import physical_cores
from shadowtab.inference.next_edit.events import Edit, edit_context
from shadowtab.inference.next_edit.formats import FORMATS, get_format
from shadowtab.inference.next_edit.ghost_text.prompts import completion_prompt
from shadowtab.inference.next_edit.situation import Situation

from benchmarks.common.cli import run_model_benchmark
from benchmarks.common.typing_workload import TYPED, keystrokes, source_file

MAX_TOKENS = 1  # first-token latency and reuse are measured; decoding adds nothing
SESSION_MAX_TOKENS = 8
KEYSTROKE_S = 0.15  # the typing pace of the next-edit prompts' edit events

PromptFor = Callable[[str, str, int], str]


def inline_prompt(path: str, text: str, cursor: int) -> str:
    return completion_prompt(path, text, cursor)


def next_edit(format_name: str, path: str, text: str, cursor: int, typed: str) -> str:
    """The format's prompt after `typed` was typed at `cursor - len(typed)`, one edit
    event per character, as the shadow workspace records them."""
    start = cursor - len(typed)
    edits = [Edit(path, KEYSTROKE_S * (i + 1), start + i, "", char) for i, char in enumerate(typed)]
    context = edit_context(edits, path, text, cursor)
    rendered = get_format(format_name).render(
        Situation(path, text, cursor, context.in_progress, context.past)
    )
    if rendered is None:
        raise RuntimeError(f"format {format_name} rendered no prompt for the typing trace")
    return rendered.prompt


def per_keystroke(engine: LlamaCppEngine, path: str, text: str, cut: int, typed: str, layout: str):
    shares: list[float] = []
    firsts: list[float] = []
    for current, cursor, so_far in keystrokes(text, cut, typed):
        if layout == "inline":
            prompt = inline_prompt(path, current, cursor)
        else:
            prompt = next_edit(layout, path, current, cursor, so_far)
        stats = engine.complete(prompt, MAX_TOKENS).stats
        shares.append(stats.reused_prompt_tokens / stats.prompt_tokens)
        firsts.append(stats.first_token_seconds)
    return shares[1:], firsts[1:]  # the first keystroke fills the cache


def cold_first_tokens(engine: LlamaCppEngine, text: str, cut: int, typed: str, samples: int):
    firsts: list[float] = []
    for i in range(samples):
        count = (i + 1) * len(typed) // (samples + 1)
        current = text[:cut] + typed[:count] + text[cut:]
        engine.clear_cache()
        stats = engine.complete(inline_prompt("cold.py", current, cut + count), MAX_TOKENS).stats
        assert stats.reused_prompt_tokens == 0
        firsts.append(stats.first_token_seconds)
    return firsts


def typing_session(
    engine: LlamaCppEngine, path: str, text: str, cut: int, typed: str, warming: bool
) -> list[RequestStats]:
    """The user opens the file and types; a request when a word ends."""
    engine.clear_cache()
    if warming:
        engine.warm(inline_prompt(path, text, cut))  # didOpen
    requests: list[RequestStats] = []
    for current, cursor, so_far in keystrokes(text, cut, typed):
        prompt = inline_prompt(path, current, cursor)
        if warming:
            engine.warm(prompt)  # didChange
        if so_far[-1] in " \n(.,":
            requests.append(engine.complete(prompt, SESSION_MAX_TOKENS).stats)
    return requests


def p50(values: list[float]) -> float:
    return round(statistics.median(values), 4)


def run(quick: bool, data_dir: Path) -> dict[str, object]:
    typed = TYPED.splitlines(keepends=True)[0] if quick else TYPED
    # a fixed thread count: the sides compared must not differ by the CPU's load
    engine = LlamaCppEngine(
        n_ctx=4096, kv_cache_mb=256, data_dir=data_dir, n_threads=physical_cores()
    )
    text, cut = source_file(engine)
    inline_shares, warm_firsts = per_keystroke(engine, "a.py", text, cut, typed, "inline")
    edit_shares = {
        name: statistics.median(
            per_keystroke(engine, f"{name}.py", text, cut, typed[: 8 if quick else 32], name)[0]
        )
        for name in sorted(FORMATS)
    }
    cold = cold_first_tokens(engine, text, cut, typed, 2 if quick else 5)
    on = typing_session(engine, "c.py", text, cut, typed, warming=True)
    off = typing_session(engine, "d.py", text, cut, typed, warming=False)
    prompt_tokens = len(engine.tokenize(inline_prompt("a.py", text, cut)))
    file_tokens = len(engine.tokenize(text))
    engine.close()
    return {
        "model": engine.loaded_model_path.name,
        "benchmark": "kv_reuse",
        "quick": quick,
        "file_tokens": file_tokens,
        "prompt_tokens": prompt_tokens,
        "keystrokes": len(typed),
        "median_reused_share_inline": round(statistics.median(inline_shares), 4),
        "median_reused_share_next_edit": {k: round(v, 4) for k, v in edit_shares.items()},
        "p50_first_token_warm_s": p50(warm_firsts),
        "p50_first_token_cold_s": p50(cold),
        "warm_over_cold": round(p50(warm_firsts) / p50(cold), 4),
        "warming_on": summary(on),
        "warming_off": summary(off),
    }


def summary(requests: list[RequestStats]) -> dict[str, float]:
    firsts = [r.first_token_seconds for r in requests]
    return {
        "requests": len(requests),
        "p50_first_token_s": p50(firsts),
        "mean_first_token_s": round(statistics.mean(firsts), 4),
        "first_request_first_token_s": round(firsts[0], 4),
        "mean_evaluated_prompt_tokens": round(
            statistics.mean(r.evaluated_prompt_tokens for r in requests), 1
        ),
    }


def main() -> int:
    return run_model_benchmark(__doc__.splitlines()[0], run)


if __name__ == "__main__":
    sys.exit(main())
