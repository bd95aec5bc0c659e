"""Next-edit latency as a user sees it: a typing trace into held-out files through the
real language server with the real model. Prints one JSON line.

    python -m benchmarks.next_edit_latency [--cases 16] [--quick] [--data-dir DIR]
        [--corpus DIR] [--split heldout] [--process worker|inline] [--threads N]
        [--mode typing|line] [--ask both|ghost] [--pause-s S] [--gap-ms LO HI]
        [--region-lines ABOVE,BELOW] [--cursor-lead-ms MS] [--context-tokens N]
        [--new-place] [--max-typed N]

Per case (training/eval_cases.py's cases; typing: the first hunk of a held-out
commit, its old text deleted and the first words of the new typed; line: a line the
commit wrote, its first part typed up to a pause): open the file, read 2 s (the cursor
comes to rest where the edit goes and the editor says so, shadowtab/cursorMoved,
`--cursor-lead-ms` before the first key: both clients send it 150 ms after the move), type
one didChange per character with gaps of 50-150 ms, and at the last keystroke ask
textDocument/inlineCompletion and shadowtab/nextEdit at once (`--ask both`), or pause
`--pause-s` and ask inlineCompletion alone (`--ask ghost`, as VS Code asks while one
types; `--ghost-alone` sets the issue's trace: line cases, 40 ms gaps, a 0.3 s pause).
`--new-place` types at most 5 keys, so the request comes within about 1 s of the
cursor's arrival (issue 43's next edit at a new place).
Figures: p50 and p90 from the ask to each answer, how many answers showed something,
the prompt tokens prefilled after the last keystroke by the calls that answered
(p50/p90 over cases; what warming could not reach), the share of prompt tokens served
from the KV cache by those calls (warming included), and where the time went: per
engine call made for the answers, the prefill (to the first token) and decode seconds
and tokens; what the engine did not account for is the server's own time (Python:
prompts, diffing, the lint gate).
`--region-lines ABOVE,BELOW` sets the shadowtab format's rewrite window for the run
(benchmarks/common/region_lines.py; the shipped adapter was trained on the product's).
Without a corpus (../shared/corpus or $SHADOWTAB_EDIT_CORPUS) the stdlib's textwrap
module is the file and one typed line the edit.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common.eval_lsp import connect, initialize_params
from benchmarks.common.eval_report import quantile
from benchmarks.common.eval_run import Variant, start_hub
from benchmarks.common.latency_trace import MultiplexClient, Timed, Trace, type_and_ask
from benchmarks.common.region_lines import add_region_lines_option, region_lines, set_region_lines
from training.corpus import DEFAULT_CORPUS, SPLITS, records
from training.eval_cases import Case, Step, cases, shortened

QUICK_CASES = 2
# From the editor's shadowtab/cursorMoved to the first key: the keystroke-level model
# (Card, Moran and Newell) gives 0.4 s to move the hand from the mouse to the keys and
# 1.35 s to prepare mentally; the clients send the notification 150 ms after the cursor
# rests. 0.5 s is the short end of that.
CURSOR_LEAD_MS = 500.0
# issue 43's targets, stated for a 2-core AVX-512 EPYC: ghost text asked alone, a next
# edit at the last keystroke, a next edit at a new place (--new-place)
TARGETS_MS = {
    "ghost_alone_p50": 50,
    "ghost_alone_p90": 120,
    "next_edit_p50": 200,
    "next_edit_p90": 400,
    "new_place_next_edit_p50": 400,
}
NEW_PLACE_KEYS = 5  # the request comes within about 1 s of the cursor's arrival
FALLBACK_TYPED = "        if width <= 0:\n            raise ValueError("


@dataclass
class Call:
    """One engine call, its start and end (time.perf_counter(), or relative to the
    case's last keystroke once re-based)."""

    method: str
    start: float
    end: float
    stats: Any


@dataclass
class CallLog:
    calls: list[Call] = field(default_factory=list)

    def wrap(self, engine: Any) -> None:
        """Record every warm/complete/rewrite the server makes (the engine's own stats)."""
        for method in ("warm", "complete", "rewrite"):
            original = getattr(engine, method)
            setattr(engine, method, self._recorder(method, original))

    def _recorder(self, method: str, original: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                result = original(*args, **kwargs)
            except Exception:
                self.calls.append(Call(method + "!", start, time.perf_counter(), None))
                raise
            stats = result if method == "warm" else result.stats
            self.calls.append(Call(method, start, time.perf_counter(), stats))
            return result

        return call


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--split", choices=SPLITS, default="heldout")
    parser.add_argument("--cases", type=int, default=16)
    parser.add_argument("--mode", choices=("typing", "line"), default="typing")
    parser.add_argument(
        "--editors", type=int, choices=(1, 2), default=1, help="2: two editors type at once"
    )
    parser.add_argument("--ask", choices=("both", "ghost"), default="both")
    parser.add_argument("--pause-s", type=float, default=0.0, help="before asking")
    parser.add_argument(
        "--ghost-alone",
        action="store_true",
        help="line cases, 40 ms keystroke gaps, a 0.3 s pause, inlineCompletion alone",
    )
    parser.add_argument(
        "--new-place",
        action="store_true",
        help=f"at most {NEW_PLACE_KEYS} keystrokes after the cursor arrives: the request "
        "comes within about 1 s of its arrival",
    )
    parser.add_argument(
        "--no-gate", action="store_true", help="[next_edit] gate = false: the token threshold alone"
    )
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_CASES} cases (CI)")
    parser.add_argument("--open-pause", type=float, default=2.0, help="seconds after didOpen")
    parser.add_argument(
        "--cursor-lead-ms",
        type=float,
        default=CURSOR_LEAD_MS,
        help="shadowtab/cursorMoved this long before the first key (0: not sent)",
    )
    parser.add_argument("--gap-ms", type=float, nargs=2, default=(50.0, 150.0))
    parser.add_argument("--max-typed", type=int, default=40, help="keystrokes at most a case")
    parser.add_argument("--threads", type=int, default=None, help="default: the engine's")
    parser.add_argument("--process", choices=("worker", "inline"), default="worker")
    parser.add_argument(
        "--weights", default="auto", help="engine.weights (the daemon's default: auto)"
    )
    parser.add_argument(
        "--attached-adapter",
        action="store_true",
        help="engine.merge_adapter = false (the daemon merges the adapter into the weights)",
    )
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument(
        "--context-tokens",
        type=int,
        help="[next_edit] context_tokens (default: the daemon's); the cases' files share "
        "one root, so the snippets come from the other cases' files and this one's far parts",
    )
    parser.add_argument("--data-dir", type=Path, help="cache of the converted model")
    add_region_lines_option(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.cases, args.open_pause = QUICK_CASES, 0.5
    if args.new_place:
        args.max_typed = min(args.max_typed, NEW_PLACE_KEYS)
    if args.ghost_alone:
        args.mode, args.ask, args.pause_s, args.gap_ms = "line", "ghost", 0.3, (40.0, 40.0)
    return args


def trace_cases(args: argparse.Namespace) -> tuple[list[Case], str]:
    if not args.corpus.is_dir():
        return [fallback_case()], "stdlib textwrap (no corpus)"
    chosen = cases(records(args.corpus, args.split), args.mode, args.cases * 3)
    short = [shortened(c, args.max_typed) for c in chosen]
    return short[: args.cases], f"{args.corpus.name}:{args.split}"


def fallback_case() -> Case:
    source = Path(textwrap.__file__).read_text()
    lines = source.splitlines(keepends=True)[:160]
    opened = "".join(lines)
    cut = sum(map(len, lines[:110]))
    steps = tuple(Step(cut + i, cut + i, ch) for i, ch in enumerate(FALLBACK_TYPED))
    current = opened[:cut] + FALLBACK_TYPED + opened[cut:]
    return Case("typing", "-", "stdlib", "textwrap.py", opened, steps, current,
                cut + len(FALLBACK_TYPED), current, (current,))  # fmt: skip


async def measure(args: argparse.Namespace, data_dir: Path) -> dict[str, Any]:
    chosen, source = trace_cases(args)
    options: dict[str, Any] = {
        "kind": "llama.cpp",
        "process": args.process,
        "weights": args.weights,
        "merge_adapter": not args.attached_adapter,
    }
    if args.threads:
        options["threads"] = args.threads
    variant = Variant(
        options,
        "default",
        None,
        ghost_gate=False if args.no_gate else None,
        context_tokens=args.context_tokens,
    )
    trace = Trace(
        args.open_pause,
        tuple(args.gap_ms),
        ask=args.ask,
        pause_s=args.pause_s,
        cursor_lead_s=args.cursor_lead_ms / 1000,
    )
    with tempfile.TemporaryDirectory(prefix="st-latency-") as scratch:
        hub, client, described = await start_hub(
            variant, Path(scratch), data_dir, client_class=MultiplexClient
        )
        engine = hub.engine_host.get_engine()
        log = CallLog()
        log.wrap(engine)
        clients = [client, *[await second_editor(hub, scratch) for _ in range(args.editors - 1)]]
        rows = []
        try:
            for first in range(0, len(chosen), args.editors):
                group = list(enumerate(chosen))[first : first + args.editors]
                log.calls.clear()
                typed = await asyncio.gather(
                    *(
                        type_case(c, Path(scratch), number, case, trace, args.seed)
                        for c, (number, case) in zip(clients, group, strict=False)
                    )
                )
                await asyncio.sleep(0.05)  # the calls' records land after their answers
                for (_, case), (ghost, edit, last_key) in zip(group, typed, strict=True):
                    rows.append(_row(case, ghost, edit, log.calls, last_key))
        finally:
            for each in clients:
                with contextlib.suppress(TimeoutError, ConnectionError):
                    await asyncio.wait_for(each.call("shutdown", None), 30)
            await hub.close()
        return {**described, "source": source, "rows": rows, "stats": engine.stats()}


async def second_editor(hub: Any, scratch: str) -> MultiplexClient:
    """Another editor connected to the same daemon (its own LSP session)."""
    client, _ = await connect(hub, MultiplexClient)
    await client.call("initialize", initialize_params((Path(scratch) / "root").as_uri()))
    client.notify("initialized", {})
    return client


async def type_case(
    client: MultiplexClient, scratch: Path, number: int, case: Case, trace: Trace, seed: int
) -> tuple[Timed, Timed, float]:
    """Case `number` typed by `client` into its own file (keystroke gaps seeded by it)."""
    path = scratch / "root" / f"case{number}" / case.path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(case.opened, encoding="utf-8")
    return await type_and_ask(client, path.as_uri(), case, trace, random.Random(seed + number))


def _row(
    case: Case, ghost: Timed, edit: Timed, calls: list[Call], last_key: float
) -> dict[str, Any]:
    """One case's figures, with the engine calls that ended after the last keystroke."""
    calls = [
        Call(c.method, c.start - last_key, c.end - last_key, c.stats)
        for c in calls
        if c.end > last_key
    ]
    return {
        "case": case.commit[:10],
        "typed": len(case.steps),
        "ghost_s": ghost.seconds,
        "next_edit_s": edit.seconds,
        "ghost_shown": ghost.shown,
        "edit_shown": edit.shown,
        "errors": [e for e in (ghost.error, edit.error) if e],
        "prefilled_after_key": sum(
            c.stats.evaluated_prompt_tokens
            for c in calls
            if c.stats is not None and c.method != "warm" and c.start >= 0
        ),
        "calls": [_call_dict(c) for c in calls],
    }


def _call_dict(call: Call) -> dict[str, Any]:
    stats = call.stats
    figures: dict[str, Any] = {
        "method": call.method,
        "start_s": round(call.start, 3),
        "end_s": round(call.end, 3),
    }
    if stats is not None:
        figures.update(
            prompt=stats.prompt_tokens,
            reused=stats.reused_prompt_tokens,
            evaluated=stats.evaluated_prompt_tokens,
            generated=stats.generated_tokens,
            draft=stats.draft_tokens,
            accepted=stats.accepted_draft_tokens,
            passes=stats.forward_passes,
            seconds=round(stats.seconds, 3),
            prefill_s=round(stats.first_token_seconds, 3),
            preempted=stats.preempted,
            alternatives_skipped=stats.alternatives_skipped,
            copied=getattr(stats, "copied_tokens", 0),  # the rewrite's stop at re-join
        )
    return figures


def summary(measured: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    rows = measured["rows"]
    ghost = sorted(r["ghost_s"] * 1000 for r in rows)
    edit = sorted(r["next_edit_s"] * 1000 for r in rows)
    answering = [c for r in rows for c in r["calls"] if "prompt" in c and c["end_s"] > 0]
    prefilled = sorted(r["prefilled_after_key"] for r in rows)
    prompt = sum(c["prompt"] for c in answering)
    reused = sum(c["reused"] for c in answering)
    line: dict[str, Any] = {
        "benchmark": "next_edit_latency",
        "quick": args.quick,
        "mode": args.mode,
        "editors": args.editors,
        "ask": args.ask,
        "pause_s": args.pause_s,
        "cursor_lead_ms": args.cursor_lead_ms,
        "gap_ms": list(args.gap_ms),
        "max_typed": args.max_typed,
        "cases": len(rows),
        "source": measured["source"],
        "model": measured["model"],
        "adapter": measured["adapter"],
        "format": measured["format"],
        "region_lines": region_lines(),
        "ghost_gate": not args.no_gate,
        "process": args.process,
        "weights": measured["stats"].get("weights"),
        "adapter_merged": measured["stats"].get("adapter_merged"),
        "n_threads": measured["stats"].get("n_threads"),
        "threads_at_end": measured["stats"].get("threads_now"),
        "ghost_p50_ms": quantile(ghost, 0.5),
        "ghost_p90_ms": quantile(ghost, 0.9),
        "next_edit_p50_ms": quantile(edit, 0.5) if args.ask == "both" else None,
        "next_edit_p90_ms": quantile(edit, 0.9) if args.ask == "both" else None,
        "prefilled_after_key_p50": quantile(prefilled, 0.5),
        "prefilled_after_key_p90": quantile(prefilled, 0.9),
        "ghost_shown": sum(r["ghost_shown"] > 0 for r in rows),
        "next_edit_shown": sum(r["edit_shown"] > 0 for r in rows),
        "errors": sum(len(r["errors"]) for r in rows),
        "prompt_reuse": round(reused / prompt, 4) if prompt else None,
        "breakdown": breakdown(rows),
        "targets_ms": TARGETS_MS,
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "cpu": cpu_kind(),
        "kernels": kernels_kind(),
    }
    return line


def cpu_kind() -> str:
    """ "avx512" or "avx2" (or "other"): decoding speed differs ~3x between them."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "other"
    return "avx512" if "avx512f" in flags else "avx2" if "avx2" in flags else "other"


def kernels_kind() -> str:
    """The vector kernels llama.cpp was built with ("avx512", "avx2" or "other"): a build
    without AVX-512 on an AVX-512 CPU runs the AVX2 machine's kernels (not its clock)."""
    try:
        from shadowtab.inference.engines.llama_cpp.weight_choice import built_kernels

        info = built_kernels()
    except Exception:  # no llama.cpp, or one without the call: say so, measure anyway
        return "unknown"
    return "avx512" if "AVX512 = 1" in info else "avx2" if "AVX2 = 1" in info else "other"


def breakdown(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per engine method, medians over cases of what the answering calls cost; and the
    share of the next edit's time the engine did not account for."""
    found: dict[str, dict[str, list[float]]] = {}
    unaccounted = []
    for row in rows:
        per_method: dict[str, dict[str, float]] = {}
        for call in row["calls"]:
            if "prompt" not in call or call["method"] == "warm":
                continue
            sums = per_method.setdefault(call["method"], {})
            for key in ("seconds", "prefill_s", "evaluated", "generated", "passes"):
                sums[key] = sums.get(key, 0) + call[key]
            sums["calls"] = sums.get("calls", 0) + 1
        for method, sums in per_method.items():
            for key, value in sums.items():
                found.setdefault(method, {}).setdefault(key, []).append(value)
        engine_s = sum(s["seconds"] for s in per_method.values())
        answered = max(row["ghost_s"], row["next_edit_s"])
        unaccounted.append(max(0.0, answered - engine_s) / answered if answered else 0.0)
    result: dict[str, Any] = {
        method: {k: round(statistics.median(v), 3) for k, v in sums.items()}
        for method, sums in found.items()
    }
    result["server_share_p50"] = round(statistics.median(unaccounted), 3) if unaccounted else None
    return result


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    set_region_lines(args.region_lines)
    with tempfile.TemporaryDirectory(prefix="st-latency-data-") as scratch:
        measured = asyncio.run(measure(args, args.data_dir or Path(scratch)))
    if os.environ.get("SHADOWTAB_LATENCY_ROWS"):  # the per-case rows, for profiling
        Path(os.environ["SHADOWTAB_LATENCY_ROWS"]).write_text(json.dumps(measured["rows"]))
    print(json.dumps(summary(measured, args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
