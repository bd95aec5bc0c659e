"""Our engine against llama.cpp's own server (llama-server) on the same GGUF file and thread
count, side by side in one run. Prints one JSON line.

- Keystroke answers: typing real code (kv_reuse.py's trace, common/typing_workload.py: the
  stdlib's textwrap module, ~1,500 tokens) one character at a time, after each keystroke a
  short greedy completion at the cursor on the ghost-text prompt; the server with
  `cache_prompt`, ours with its prefix cache. p50 time per answer (the request's wall
  time; the server's over loopback HTTP) and ours over the server's (target <= 0.5).
- Rewrites: "repeat this code with a small change" prompts (functions of textwrap), the
  prompt cached on both sides first; the server plain (greedy, no draft) and with
  n-gram speculation from its context (`--spec-type ngram-simple`), ours speculative with
  the original code as the draft. Generated tokens per second of wall time, and ours over
  the server's best mode (target >= 1.3). Ours twice: as the daemon runs it (a rewrite
  stops once it has re-joined the original and takes the rest from it: those tokens
  count as written) and decoding to the end as the server does (`ours_to_the_end`).

Both sides decode greedily, so the outputs should be equal: mismatches are counted (a
near-tie can flip under different batch shapes). The engine runs without the next-edit
adapter (the server gets the same base model). The binary: --server-bin or the variable
SHADOWTAB_LLAMA_SERVER (build one with scripts/build_llama_server.sh); without one the
line says why it skipped and the exit status is 0.

    python -m benchmarks.vs_llama_server [--quick] [--server-bin PATH] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
from shadowtab.inference import Completion, LlamaCppEngine
from shadowtab.inference.engines.local.cpu_load import physical_cores
from shadowtab.inference.next_edit.ghost_text.prompts import completion_prompt

from benchmarks.common.serving import exit_on_sigterm, free_port, serving
from benchmarks.common.typing_workload import TYPED, keystrokes, source_file

BENCHMARK = "vs_llama_server"
SERVER_VARIABLE = "SHADOWTAB_LLAMA_SERVER"
SPEC_TYPE = "ngram-simple"
KEYSTROKE_TOKENS = 8
N_CTX = 4096
REWRITE_SLACK = 8  # tokens past the original's length (the model goes on with prose)
TARGETS = {"keystroke_ours_over_server": 0.5, "rewrite_ours_over_server_best": 1.3}
# (function of textwrap, the change asked for)
REWRITES = [
    ("fill", "rename `text` to `source`"),
    ("indent", "rename `prefix` to `margin`"),
    ("shorten", "rename `placeholder` to `ellipsis`"),
    ("_munge_whitespace", "rename `text` to `chunk`"),
    ("_fix_sentence_endings", "rename `chunks` to `parts`"),
    ("_split", "rename `chunks` to `pieces`"),
]
REWRITE_PROMPT = (
    "Repeat this code with a small change: {change}.\n\n```python\n{code}\n```\n\n```python\n"
)


@dataclass(frozen=True)
class Answer:
    text: str
    tokens: int
    seconds: float  # the request's wall time
    own_seconds: float  # as the side reports it (the server: prompt + generation, no HTTP)


Side = Callable[[str, int], Answer]


@dataclass(frozen=True)
class Sizes:
    typed: str
    rewrites: int
    rewrite_max_tokens: int  # at most; else the original's length and a few tokens
    rounds: int  # of every rewrite case, who goes first rotating


FULL = Sizes(typed=TYPED, rewrites=len(REWRITES), rewrite_max_tokens=256, rounds=2)
QUICK = Sizes(typed=TYPED[:10], rewrites=2, rewrite_max_tokens=32, rounds=1)


class LlamaServer:
    """One llama-server: greedy /completion requests that reuse its cached prompt."""

    def __init__(self, url: str) -> None:
        self.client = httpx.Client(base_url=url, timeout=600)

    def complete(self, prompt: str, max_tokens: int) -> Answer:
        body = {
            "prompt": prompt,
            "n_predict": max_tokens,
            "temperature": 0.0,
            "top_k": 1,
            "cache_prompt": True,
        }
        started = time.perf_counter()
        reply = self.client.post("/completion", json=body)
        seconds = time.perf_counter() - started
        reply.raise_for_status()
        answer = reply.json()
        own_ms = answer["timings"]["prompt_ms"] + answer["timings"]["predicted_ms"]
        return Answer(answer["content"], int(answer["tokens_predicted"]), seconds, own_ms / 1000)

    def warm(self, prompt: str) -> None:
        self.complete(prompt, 0)  # n_predict 0: the prompt is evaluated into the cache


def timed(call: Callable[[], Completion]) -> Answer:
    started = time.perf_counter()
    result = call()
    seconds = time.perf_counter() - started
    return Answer(result.texts[0], result.stats.generated_tokens, seconds, result.stats.seconds)


def ours_complete(engine: LlamaCppEngine) -> Side:
    return lambda prompt, max_tokens: timed(lambda: engine.complete(prompt, max_tokens))


def ours_rewrite(engine: LlamaCppEngine, draft: str) -> Side:
    return lambda prompt, max_tokens: timed(lambda: engine.rewrite(prompt, draft, max_tokens))


def ours_rewrite_to_the_end(engine: LlamaCppEngine, draft: str) -> Side:
    """Decoding every token as the server does: the rewrite does not stop once it has
    re-joined the original (the engine's default takes the rest from the original, and
    its tokens count as written ones), so this row compares the decoding alone."""
    policy = engine._policy

    def call(prompt: str, max_tokens: int) -> Answer:
        engine._policy = replace(policy, stop_after_rejoined_lines=0)
        try:
            return timed(lambda: engine.rewrite(prompt, draft, max_tokens))
        finally:
            engine._policy = policy

    return call


def server_binary(given: Path | None) -> Path | None:
    """The llama-server to run: --server-bin, else $SHADOWTAB_LLAMA_SERVER, else none."""
    if given is not None:
        return given
    variable = os.environ.get(SERVER_VARIABLE, "").strip()
    return Path(variable) if variable else None


def speculation_type(binary: Path) -> str | None:
    """ngram-simple if this llama-server has it, else another draftless n-gram type it
    lists under --spec-type, else None."""
    listed = subprocess.run(
        [str(binary), "--help"], capture_output=True, text=True, timeout=60
    ).stdout
    line = next((row for row in listed.splitlines() if "--spec-type" in row), "")
    if SPEC_TYPE in line:
        return SPEC_TYPE
    found = [name for name in re.split(r"[\s,|\[\]]+", line) if name.startswith("ngram")]
    return found[0] if found else None


def server_command(
    binary: Path, model: Path, port: int, threads: int, kv_type: str, spec: str | None
) -> list[str]:
    return [
        str(binary), "--model", str(model), "--host", "127.0.0.1", "--port", str(port),
        "--ctx-size", str(N_CTX), "--parallel", "1",
        "--no-repack",  # weights as our engine loads them (llama_cpp/extra_buffers.py)
        "--threads", str(threads), "--threads-batch", str(threads),
        "--cache-type-k", kv_type, "--cache-type-v", kv_type,
        *(["--spec-type", spec] if spec else []),
    ]  # fmt: skip


def kv_type(engine: LlamaCppEngine) -> str:
    """The engine's KV cache element type, for the server's too (f16 where the engine
    does not say: llama.cpp's default)."""
    return str(engine.stats().get("kv_type", "f16"))


@contextmanager
def llama_server(
    binary: Path, engine: LlamaCppEngine, spec: str | None, logs: Path
) -> Iterator[LlamaServer]:
    port = free_port()
    command = server_command(
        binary, engine.loaded_model_path, port, engine.n_threads, kv_type(engine), spec
    )
    log = logs / f"llama-server-{spec or 'plain'}.log"
    with serving(command, f"http://127.0.0.1:{port}/health", log):
        server = LlamaServer(f"http://127.0.0.1:{port}")
        try:
            yield server
        finally:
            server.client.close()


def p50_ms(seconds: list[float]) -> float:
    return round(statistics.median(seconds) * 1000, 1)


def keystroke_answers(engine: LlamaCppEngine, server: LlamaServer, typed: str) -> dict[str, Any]:
    """Type `typed` into the file; after each keystroke both sides answer (alternating
    which goes first, so neither always runs after the other's work)."""
    text, cut = source_file(engine)
    sides: dict[str, Side] = {"ours": ours_complete(engine), "server": server.complete}
    times: dict[str, list[float]] = {"ours": [], "server": [], "server_own": []}
    mismatches = 0
    for index, (current, cursor, _) in enumerate(keystrokes(text, cut, typed)):
        prompt = completion_prompt("typing.py", current, cursor)
        order = ("ours", "server") if index % 2 else ("server", "ours")
        answers = {name: sides[name](prompt, KEYSTROKE_TOKENS) for name in order}
        if index == 0:
            continue  # the first keystroke fills both caches
        for name, answer in answers.items():
            times[name].append(answer.seconds)
        times["server_own"].append(answers["server"].own_seconds)
        mismatches += answers["ours"].text != answers["server"].text
    ours, theirs = p50_ms(times["ours"]), p50_ms(times["server"])
    return {
        "keystrokes": len(times["ours"]),
        "prompt_tokens": len(engine.tokenize(completion_prompt("typing.py", text, cut))),
        "ours_p50_ms": ours,
        "server_p50_ms": theirs,
        "ours_over_server": round(ours / theirs, 3),
        "server_own_p50_ms": p50_ms(times["server_own"]),  # its timings: no HTTP
        "mismatches": mismatches,
    }


def rewrite_cases(count: int) -> list[tuple[str, str]]:
    """(prompt, original code) per function of textwrap."""
    source = Path(textwrap.__file__).read_text()
    functions = {
        node.name: ast.get_source_segment(source, node, padded=True)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef)
    }
    cases = []
    for name, change in REWRITES[:count]:
        code = textwrap.dedent(functions[name] or "")
        cases.append((REWRITE_PROMPT.format(change=change, code=code.rstrip("\n")), code))
    return cases


def first_difference(text: str, reference: str) -> str:
    """Where `text` first differs from `reference`: "character/length" of the reference."""
    same = next(
        (i for i, (a, b) in enumerate(zip(text, reference, strict=False)) if a != b),
        min(len(text), len(reference)),
    )
    return f"{same}/{len(reference)}"


def answer_case(
    engine: LlamaCppEngine,
    servers: dict[str, LlamaServer],
    case: tuple[str, str],
    sizes: Sizes,
    turn: int,
) -> dict[str, Answer]:
    """One rewrite on every side, its prompt cached on each first; who goes first rotates
    with `turn`."""
    prompt, code = case
    sides: dict[str, Side] = {
        "ours": ours_rewrite(engine, code),
        "ours_to_the_end": ours_rewrite_to_the_end(engine, code),
    }
    sides |= {name: server.complete for name, server in servers.items()}
    engine.warm(prompt)
    for server in servers.values():
        server.warm(prompt)
    names = list(sides)
    order = names[turn % len(names) :] + names[: turn % len(names)]
    budget = min(sizes.rewrite_max_tokens, len(engine.tokenize(code)) + REWRITE_SLACK)
    return {name: sides[name](prompt, budget) for name in order}


def rewrites(
    engine: LlamaCppEngine, servers: dict[str, LlamaServer], sizes: Sizes
) -> dict[str, Any]:
    """Tokens per second of wall time over all cases (tok_s_own: of the time each side
    reports, the server's without HTTP), and where outputs differ from the plain server's."""
    names = ["ours", "ours_to_the_end", *servers]
    seconds, own_seconds = dict.fromkeys(names, 0.0), dict.fromkeys(names, 0.0)
    tokens = dict.fromkeys(names, 0)
    differ_at: dict[str, list[str]] = {name: [] for name in names if name != "server_plain"}
    cases = rewrite_cases(sizes.rewrites)
    turns = [
        (case, index + rounds) for rounds in range(sizes.rounds) for index, case in enumerate(cases)
    ]
    for case, turn in turns:  # each round shifts who goes first
        answers = answer_case(engine, servers, case, sizes, turn)
        reference = answers["server_plain"].text
        for name, answer in answers.items():
            seconds[name] += answer.seconds
            own_seconds[name] += answer.own_seconds
            tokens[name] += answer.tokens
            if name in differ_at and answer.text != reference:
                differ_at[name].append(first_difference(answer.text, reference))
    speeds = {name: round(tokens[name] / seconds[name], 1) for name in names}
    best = max(servers, key=lambda name: speeds[name])
    return {
        "cases": sizes.rewrites,
        "rounds": sizes.rounds,
        "tokens": tokens,
        "tok_s": speeds,
        "tok_s_own": {name: round(tokens[name] / own_seconds[name], 1) for name in names},
        "server_best": best,
        "ours_over_server_best": round(speeds["ours"] / speeds[best], 3),
        "ours_to_the_end_over_server_best": round(speeds["ours_to_the_end"] / speeds[best], 3),
        "mismatches_vs_server_plain": {name: len(at) for name, at in differ_at.items()},
        "mismatch_at": differ_at,  # character of the output where it first differs / its length
    }


def run(quick: bool, data_dir: Path, binary: Path, logs: Path) -> dict[str, Any]:
    sizes = QUICK if quick else FULL
    spec = speculation_type(binary)
    # a fixed thread count on both sides: neither may differ by the CPU's load
    engine = LlamaCppEngine(
        n_ctx=N_CTX, kv_cache_mb=128, data_dir=data_dir, n_threads=physical_cores(), adapter="none"
    )
    try:
        with ExitStack() as stack:
            servers = {
                "server_plain": stack.enter_context(llama_server(binary, engine, None, logs))
            }
            if spec is not None:
                servers["server_spec"] = stack.enter_context(
                    llama_server(binary, engine, spec, logs)
                )
            keys = keystroke_answers(engine, servers["server_plain"], sizes.typed)
            edits = rewrites(engine, servers, sizes)
    finally:
        engine.close()
    return {
        "benchmark": BENCHMARK,
        "quick": quick,
        "model": engine.loaded_model_path.name,
        "threads": engine.n_threads,
        "kv_type": kv_type(engine),
        "server_spec_type": spec,
        "keystroke": keys,
        "rewrite": edits,
        "targets": TARGETS,
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="reduced size for CI")
    parser.add_argument("--server-bin", type=Path, help=f"llama-server (or ${SERVER_VARIABLE})")
    parser.add_argument("--data-dir", type=Path, help="where converted models are cached")
    args = parser.parse_args()
    binary = server_binary(args.server_bin)
    if binary is None:
        reason = (
            f"no llama-server binary given (--server-bin PATH or {SERVER_VARIABLE}); "
            "build one with scripts/build_llama_server.sh"
        )
        print(json.dumps({"benchmark": BENCHMARK, "skipped": reason}))
        return 0
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        parser.error(f"not an executable file: {binary}")
    exit_on_sigterm()  # a terminated run stops its servers too
    with tempfile.TemporaryDirectory() as scratch:
        line = run(args.quick, args.data_dir or Path(scratch), binary, Path(scratch))
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
