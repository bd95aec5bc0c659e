"""Where ghost text loses what the model knows: line completion, stage by stage.

    python -m benchmarks.ghost_losses [--split heldout] [--cases 40] [--weights auto|q8_0]
        [--corpus DIR] [--threads N] [--data-dir DIR] [--no-lsp]
        [--project auto|on|off] [--context-tokens N] [--alternatives N]

On the split's line-completion cases (training/eval_cases.py `line`), with the daemon's
defaults (the packaged model, its adapter merged, `engine.weights`, the `[next_edit]`
table's defaults: the learned gate on, ruff and the syntax check as the lint gate), each
case's ghost text is followed through the stages that can drop or shorten it:

1. `raw`: the engine's greedy continuation of ghost text's prompt, uncut, to the end of
   the line (the completion source's request with no threshold, healing on);
   `oracle`: its longest prefix, at a token boundary, that is right.
2. `cut`: what the completion source shows by default: the learned gate's cut where the
   gate was fitted for the loaded model, else the token threshold's (`gate_state` says
   which); `token_threshold_cut` is the threshold's cut of the same continuation, beside.
3. `no_healing`: the same request without token healing (the prompt not backed up to the
   word's start), to isolate what healing gives. With `--alternatives N`, what several candidates
   could give at best: `oracle_any`, the longest right prefix among N candidates that
   branch at the first token; `oracle_branched`, among the raw continuation and N that
   branch at its first token below the token threshold (where the cut falls).
4. `predictor`: the predictor's ghost text in-process (typed-through, the repetition
   source, then the continuation), and `lint`: what survives the lint gate
   (lsp/prediction_check.py, each candidate linted on a copy of the text).
5. `lsp`: next_edit_eval's line mode through the Hub over real LSP, with its pauses; what
   it loses against `lint` is timing (expired, cancelled) or a different answer. The
   evaluation's client waits for every answer, so a slow one is lost only to the
   server's own limits; `timing` gives its latency beside the in-process call's.

With the project present (`--project`, as next_edit_eval.py's), each case's file is whole
and its repository's Python files at the commit's parent are indexed; the in-process
stages get the snippets the language server would choose (lsp/project_context.py) with
`--context-tokens` (default: the daemon's `[next_edit] context_tokens`), the LSP stage
the server's own.

Scored as the evaluation's line mode (training/edit_scoring.judge_line): right when a
non-empty prefix of the rest of the line; chars_saved_share is the share of the lines'
remaining characters the right ones write. `lost_at` follows the cases whose raw
continuation is right (and, beside, those whose oracle cut is not empty) to the first
stage where they are no longer shown right. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shadowtab.inference import Completion, Engine, EngineOptions, create_engine
from shadowtab.inference.next_edit.candidates import Candidate, Query
from shadowtab.inference.next_edit.formats.base import unescape
from shadowtab.inference.next_edit.ghost_text.completion_source import (
    MAX_TOKENS,
    CompletionSource,
    ghost_candidate,
)
from shadowtab.inference.next_edit.ghost_text.rejoin import rest_of_line
from shadowtab.inference.next_edit.predictor import (
    EnginePredictor,
    engine_predictor,
    query_of,
)
from shadowtab.inference.next_edit.settings import NextEditOptions
from shadowtab.inference.next_edit.token_confidence import trace_of
from shadowtab.lsp.prediction_check import Check, linters_check
from shadowtab.shadow_workspace import DEFAULT_LINTERS

from benchmarks.common.eval_report import quantile
from benchmarks.common.eval_run import CaseRunner, Pauses, start_hub, variants
from benchmarks.common.in_process import request_of
from benchmarks.common.project_trees import ProjectTrees, with_context
from training.corpus import CORPUS_VARIABLE, DEFAULT_CORPUS, SPLITS, records
from training.edit_scoring import judge_line
from training.eval_cases import Case, cases, line_rest
from training.project_cases import DEFAULT_MIRRORS, ProjectCase, project_cases

# The stages in the order a suggestion crosses them (the module docstring says each).
STAGES = ("raw", "oracle", "cut", "predictor", "lint", "lsp")
BESIDE = (
    "token_threshold_cut",
    "no_healing",
    "no_healing_oracle",
    "oracle_any",
    "oracle_branched",
)
# next_edit_eval's defaults: the editor's pauses around the keystrokes
PAUSES = Pauses(after_open_s=2.0, before_ask_s=0.3, keystroke_s=0.02)


@dataclass
class Trace:
    """One case's ghost text at each stage (None: nothing shown there)."""

    case: Case
    project: ProjectCase | None = None
    shown: dict[str, str | None] = field(default_factory=dict)
    lsp_error: str | None = None
    lsp_seconds: float | None = None
    predictor_source: str | None = None
    in_process_seconds: float | None = None  # the predictor's call and the lint gate

    def right(self, stage: str) -> bool:
        text = self.shown.get(stage)
        return text is not None and right(self.case, text)


def right(case: Case, text: str) -> bool:
    return judge_line(line_rest(case), case.cursor, case.cursor, case.cursor, text).correct


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--split", choices=SPLITS, default="heldout")
    parser.add_argument("--cases", type=int, default=40, help="line cases")
    parser.add_argument(
        "--weights", default="auto", help="engine.weights (the daemon's default: auto; q8_0)"
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data-dir", type=Path, help="cache of the converted model")
    parser.add_argument("--no-lsp", action="store_true", help="skip stage 5 (the real LSP path)")
    parser.add_argument("--project", choices=("auto", "on", "off"), default="auto")
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument(
        "--context-tokens",
        type=int,
        default=NextEditOptions().context_tokens,
        help="[next_edit] context_tokens (default: the daemon's)",
    )
    parser.add_argument(
        "--alternatives",
        type=int,
        default=1,
        help="> 1: oracle_any and oracle_branched, the longest right prefix among N candidates",
    )
    return parser.parse_args(argv)


def engine_options(args: argparse.Namespace, data_dir: Path) -> dict[str, Any]:
    """EngineOptions fields the daemon would use, but for the threads and the weights."""
    return {
        "threads": args.threads,
        "weights": args.weights,
        "merge_adapter": True,
        "data_dir": data_dir,
    }


def oracle_cut(case: Case, completion: Completion) -> str | None:
    """The longest prefix of the continuation, at a token boundary, that is right."""
    if not completion.texts:
        return None
    generated = completion.texts[0]
    trace = trace_of(completion, 0)
    ends = trace.offsets if trace is not None else (len(generated),)
    best = None
    for end in ends:
        text = unescape(generated[:end])
        if text.strip() and right(case, text):
            best = text
    return best


def best_oracle(case: Case, completion: Completion) -> str | None:
    """The longest right prefix among the candidates (each at its token boundaries)."""
    found = []
    for index in range(len(completion.texts)):
        one = Completion(
            [completion.texts[index]],
            completion.stats,
            logprobs=[completion.logprobs[index]],
            text_offsets=[completion.text_offsets[index]],
        )
        text = oracle_cut(case, one)
        if text is not None:
            found.append(text)
    return max(found, key=len) if found else None


def branched_at_unsure(
    engine: Engine, source: CompletionSource, query: Query, raw: Completion, n: int
) -> Completion | None:
    """The continuation with `n` candidates branching at its first token below the
    token threshold (the greedy one's text before it, then the n most likely tokens
    there, each continued greedily); None where no token is unsure."""
    trace = trace_of(raw, 0)
    if trace is None or not raw.texts:
        return None
    sure = trace.sure_length(source.token_threshold)
    if sure >= len(raw.texts[0]):
        return None
    prefix = raw.texts[0][:sure]
    more = engine.complete(
        source.prompt(query) + prefix, MAX_TOKENS, stop=["\n"], n=n, min_token_p=0.0, heal=True
    )
    return Completion(
        [prefix + text for text in more.texts],
        more.stats,
        logprobs=more.logprobs,
        text_offsets=[[sure + o for o in offsets] for offsets in more.text_offsets],
    )


def shown_text(completion: Completion, case: Case, threshold: float) -> str | None:
    """What ghost_candidate makes of the continuation cut at `threshold` (0: uncut)."""
    if not completion.texts:
        return None
    rest = rest_of_line(case.current, case.cursor)
    found = ghost_candidate(completion, 0, rest, case.cursor, threshold)
    return found.edit.new_text if found is not None else None


def in_process(
    engine: Engine,
    predictor: EnginePredictor,
    source: CompletionSource,
    trace: Trace,
    scratch: Path,
    trees: ProjectTrees,
    budget: int,
    alternatives: int = 1,
) -> Trace:
    """Stages 1 to 4 of one case; `alternatives` > 1: `oracle_any` and `oracle_branched`
    beside."""
    case = trace.case
    request = with_context(request_of(case), trace.project, trees, budget)
    query = query_of(request)
    raw = source.complete(engine, query, None, 0.0, n=1)
    trace.shown["raw"] = shown_text(raw, case, 0.0)
    trace.shown["oracle"] = oracle_cut(case, raw)
    trace.shown["token_threshold_cut"] = shown_text(raw, case, source.token_threshold)
    if alternatives > 1:
        several = source.complete(engine, query, None, 0.0, n=alternatives)
        trace.shown["oracle_any"] = best_oracle(case, several)
        branched = branched_at_unsure(engine, source, query, raw, alternatives)
        branched_oracle = best_oracle(case, branched) if branched else None
        trace.shown["oracle_branched"] = max(
            (t for t in (trace.shown["oracle"], branched_oracle) if t), key=len, default=None
        )
    cut = source.candidates(query)
    trace.shown["cut"] = cut[0].edit.new_text if cut else None
    unhealed = engine.complete(
        source.prompt(query), MAX_TOKENS, stop=["\n"], n=1, min_token_p=0.0, heal=False
    )
    trace.shown["no_healing"] = shown_text(unhealed, case, 0.0)
    trace.shown["no_healing_oracle"] = oracle_cut(case, unhealed)
    started = time.perf_counter()
    found = predictor.inline(request)
    trace.shown["predictor"] = found[0].edit.new_text if found else None
    trace.predictor_source = found[0].source if found else None
    # the lint gate as `shadowtab predict` runs it (the daemon's linters, no workspace)
    check = linters_check(DEFAULT_LINTERS, Path(request.path), "python", scratch)
    verdicts = asyncio.run(lint_verdicts(check, request.text, found)) if found else []
    clean = [c for c, ok in zip(found, verdicts, strict=True) if ok]
    trace.shown["lint"] = clean[0].edit.new_text if clean else None
    trace.in_process_seconds = time.perf_counter() - started
    return trace


async def lint_verdicts(check: Check, text: str, found: Sequence[Candidate]) -> list[bool]:
    return await check(text, found)


async def over_lsp(
    args: argparse.Namespace, traces: Sequence[Trace], scratch: Path, data_dir: Path
) -> dict[str, Any]:
    """Stage 5: each case through the Hub as next_edit_eval's line mode runs it."""
    options = engine_options(args, data_dir)
    options.pop("data_dir")
    variant = variants(
        None, None, None, args.threads, engine=options, context_tokens=[args.context_tokens]
    )[0]
    hub, client, described = await start_hub(variant, scratch, data_dir)
    runner = CaseRunner(hub, client, scratch / "root", PAUSES)
    try:
        for trace in traces:
            observed = (await runner.run(trace.project or trace.case))["ghost_text"]
            first = observed.suggestions[0].edit[2] if observed.suggestions else None
            trace.shown["lsp"] = first
            trace.lsp_error = observed.error
            trace.lsp_seconds = observed.seconds
    finally:
        await runner.close()
        await hub.close()
    return described


def stage_line(traces: Sequence[Trace], stage: str) -> dict[str, Any]:
    remaining = sum(len(line_rest(t.case)) for t in traces)
    shown = [t for t in traces if t.shown.get(stage)]
    correct = [t for t in shown if t.right(stage)]
    saved = sum(len(t.shown[stage] or "") for t in correct)
    return {
        "cases": len(traces),
        "shown": len(shown),
        "right": len(correct),
        "precision": round(len(correct) / len(shown), 3) if shown else None,
        "chars_saved_share": round(saved / remaining, 3) if remaining else None,
    }


def lost_at(traces: Sequence[Trace], base: str, stages: Sequence[str]) -> dict[str, Any]:
    """Of the cases right at `base`, where each first stops being shown right (a stage's
    name), or `kept`; the characters of `base` each stage loses (dropped or shortened)."""
    followed = [t for t in traces if t.right(base)]
    where: Counter[str] = Counter()
    chars_lost: Counter[str] = Counter()
    for trace in followed:
        before = len(trace.shown[base] or "")
        for stage in stages:
            if stage not in trace.shown:
                continue
            now = len(trace.shown[stage] or "") if trace.right(stage) else 0
            chars_lost[stage] += max(before - now, 0)
            if now == 0:
                where[stage] += 1
                break
            before = now
        else:
            where["kept"] += 1
    return {
        "right_at_" + base: len(followed),
        "base_chars": sum(len(t.shown[base] or "") for t in followed),
        "dropped_at": dict(where),
        "chars_lost_at": dict(chars_lost),
    }


def cut_detail(traces: Sequence[Trace]) -> dict[str, int]:
    """The default cut against the raw continuation, where the raw one is right."""
    detail = {"shown_whole": 0, "shortened": 0, "chars_lost": 0, "cut_to_nothing": 0}
    for trace in traces:
        raw = trace.shown.get("raw")
        if raw is None or not trace.right("raw"):
            continue
        cut = trace.shown.get("cut")
        if not cut or not trace.right("cut"):
            detail["cut_to_nothing"] += 1
        elif len(cut) >= len(raw):
            detail["shown_whole"] += 1
        else:
            detail["shortened"] += 1
            detail["chars_lost"] += len(raw) - len(cut)
    return detail


def timing_detail(traces: Sequence[Trace]) -> dict[str, Any]:
    """Where lint shows right ghost text and the LSP path does not: why."""
    why: Counter[str] = Counter()
    for trace in traces:
        if not trace.right("lint") or "lsp" not in trace.shown or trace.right("lsp"):
            continue
        error = (trace.lsp_error or "").lower()
        if "waited" in error:
            why["expired"] += 1
        elif "cancel" in error or "changed" in error:
            why["cancelled"] += 1
        elif error:
            why["error"] += 1
        elif trace.shown["lsp"] is None:
            why["nothing_shown"] += 1
        else:
            why["another_answer"] += 1
    return {
        "lost_against_lint": dict(why),
        # the same predictor and lint gate in-process (its KV cache cold to each case)
        # against the LSP path's answer (after the editor's pauses, with warming)
        "in_process_p50_ms": ms_quantile([t.in_process_seconds for t in traces], 0.5),
        "lsp_p50_ms": ms_quantile([t.lsp_seconds for t in traces], 0.5),
        "lsp_p90_ms": ms_quantile([t.lsp_seconds for t in traces], 0.9),
    }


def ms_quantile(seconds: Sequence[float | None], q: float) -> float | None:
    """The q-quantile in milliseconds of the known times (the evaluation's quantile)."""
    return quantile([s * 1000 for s in seconds if s is not None], q)


def summary(traces: Sequence[Trace], header: dict[str, Any]) -> dict[str, Any]:
    present = [s for s in (*STAGES, *BESIDE) if any(s in t.shown for t in traces)]
    pipeline = [s for s in ("cut", "predictor", "lint", "lsp") if s in present]
    sources = Counter(t.predictor_source or "none" for t in traces)
    return {
        "benchmark": "ghost_losses",
        **header,
        "stages": {stage: stage_line(traces, stage) for stage in present},
        "cut_of_right_raw": cut_detail(traces),
        "lost_at": lost_at(traces, "raw", pipeline),
        "lost_at_oracle": lost_at(traces, "oracle", pipeline),
        "predictor_sources": dict(sources),
        "timing": timing_detail(traces),
    }


def line_traces(args: argparse.Namespace) -> tuple[list[Trace], str]:
    """The line cases, in their projects when asked (all or none), and what the JSON
    line says of it."""
    corpus_records = records(args.corpus, args.split)
    plain = cases(corpus_records, "line", args.cases)
    if args.project == "off":
        return [Trace(c) for c in plain], "off"
    moved, missing = project_cases(plain, corpus_records, args.mirrors)
    if not missing:
        return [Trace(p.case, p) for p in moved], "present"
    if args.project == "on":
        raise SystemExit(f"ghost_losses: {len(missing)} cases have no project in {args.mirrors}")
    return [Trace(c) for c in plain], f"absent ({len(missing)} of {len(plain)} without a mirror)"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.corpus.is_dir():
        print(
            f"ghost_losses: no corpus at {args.corpus} (--corpus or ${CORPUS_VARIABLE})",
            file=sys.stderr,
        )
        return 2
    started = time.monotonic()
    load_before = os.getloadavg()
    chosen, project = line_traces(args)
    with tempfile.TemporaryDirectory(prefix="st-ghost-losses-") as scratch_name:
        scratch = Path(scratch_name)
        data_dir = args.data_dir or scratch / "data"
        engine = create_engine(EngineOptions(**engine_options(args, data_dir), process="inline"))
        trees = ProjectTrees(scratch / "trees")
        try:
            # the predictor the daemon builds, its `[next_edit]` defaults (the gate on)
            predictor = engine_predictor(lambda: engine, NextEditOptions())
            source = predictor._completion  # its ghost-text source, asked directly
            gate_state = source.gate_state
            traces = [
                in_process(
                    engine,
                    predictor,
                    source,
                    t,
                    scratch,
                    trees,
                    args.context_tokens,
                    args.alternatives,
                )
                for t in chosen
            ]
        finally:
            engine.close()
            trees.close()
        described: dict[str, Any] = {}
        if not args.no_lsp:  # the in-process engine is closed first: one model in memory
            described = asyncio.run(over_lsp(args, traces, scratch / "lsp", data_dir))
    header = {
        "split": args.split,
        "weights": args.weights,
        "project": project,
        "context_tokens": args.context_tokens,
        "gate_state": gate_state,
        "token_threshold": source.token_threshold,
        "lsp": described or None,
        "seconds": round(time.monotonic() - started),
        # 1, 5 and 15 minute load averages when it started and when it ended (2 cores)
        "load_average": {
            "start": [round(x, 2) for x in load_before],
            "end": [round(x, 2) for x in os.getloadavg()],
        },
    }
    print(json.dumps(summary(traces, header)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
