"""How early in a next-edit rewrite is its ghost text known? A white-box probe for the
scheduling of ghost text, which today waits for the whole rewrite (and its fallback).

    python -m benchmarks.ghost_partial_rewrite [--cases 16] [--weights bf16]
        [--data-dir DIR] [--split heldout] [--corpus DIR]

Per typing case of the latency trace (benchmarks/next_edit_latency.py: the first words of
a held-out hunk typed, at most 40 keystrokes), in the engine directly with the packaged
adapter merged and the prompt warmed first (prefill excluded from both):
- the rewrite as the predictor runs it (ModelSource.candidates: n = 3, parsed, filtered)
  and the ghost text it yields (its best candidate when that is an insertion at the
  cursor);
- the same prompt with n = 1, its output read as it grows (the engine's internal `emit`;
  the Engine interface has no streaming): when it has written the cursor's line whole,
  and the insertion at the cursor read from that partial output.
Prints one JSON line: medians of both times, their ratio, and how often the early read
equals the final ghost text (both none counts as equal).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shadowtab.inference import Cancelled, LlamaCppEngine
from shadowtab.inference.next_edit.candidates import kind_of, rank
from shadowtab.inference.next_edit.events import Edit
from shadowtab.inference.next_edit.formats import stop_strings
from shadowtab.inference.next_edit.predictor import PredictionRequest, query_of
from shadowtab.inference.next_edit.rewrite.model_source import EXTRA_TOKENS, MAX_TOKENS, ModelSource
from shadowtab.inference.next_edit.situation import RenderedPrompt

from training.corpus import DEFAULT_CORPUS, SPLITS, records
from training.edit_scoring import apply_edit
from training.eval_cases import Case, cases, shortened

MAX_TYPED = 40


@dataclass(frozen=True)
class Timed:
    seconds: float
    ghost: str | None


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--split", choices=SPLITS, default="heldout")
    parser.add_argument("--cases", type=int, default=16)
    parser.add_argument("--weights", default="q8_0", help="the packaged model converted to")
    parser.add_argument("--data-dir", type=Path, help="cache of the converted model")
    return parser.parse_args(argv)


def events_of(case: Case) -> tuple[Edit, ...]:
    """The case's keystrokes as the shadow workspace records them."""
    text, found = case.opened, []
    for i, step in enumerate(case.steps):
        old = text[step.start : step.end]
        found.append(Edit(case.path, 1.0 + i * 0.1, step.start, old, step.new_text))
        text = apply_edit(text, step.start, step.end, step.new_text)
    return tuple(found)


def full_rewrite(model: ModelSource, request: PredictionRequest) -> Timed:
    query = query_of(request)
    started = time.perf_counter()
    found = model.candidates(query)
    seconds = time.perf_counter() - started
    best = rank(found, request.text, 1, 0.0)  # as the pipeline ranks them
    inline = bool(best) and kind_of(best[0], query.situation) == "inline"
    return Timed(seconds, best[0].edits[0].new_text if inline else None)


def cursor_line_written(
    engine: LlamaCppEngine, model: ModelSource, rendered: RenderedPrompt, case: Case
) -> Timed:
    """When the rewrite has written the cursor's line, and the insertion at the cursor
    that line makes (None: the line as it is, or not an insertion)."""
    stop = list(stop_strings(model.format, rendered))
    limit = min(MAX_TOKENS, len(engine.tokenize(rendered.draft, special=True)) + EXTRA_TOKENS)
    lines = case.current.count("\n", rendered.region_start, case.cursor) + 1
    written: list[str] = []
    enough = threading.Event()  # the cursor's line is written: the rest is not needed

    def emit(piece: str) -> None:
        written.append(piece)
        if "".join(written).count("\n") >= lines:
            enough.set()

    draft = (rendered.draft, "speculative")
    started = time.perf_counter()
    with contextlib.suppress(Cancelled):  # white-box: the engine's own generation loop
        engine._generate(rendered.prompt, draft, limit, tuple(stop), 1, enough, emit)
    seconds = time.perf_counter() - started
    return Timed(seconds, insertion(case, "".join(written).split("\n")[lines - 1 : lines]))


def insertion(case: Case, new_line: list[str]) -> str | None:
    start = case.current.rfind("\n", 0, case.cursor) + 1
    end = case.current.find("\n", case.cursor)
    before = case.current[start : case.cursor]
    after = case.current[case.cursor : end if end >= 0 else len(case.current)]
    if not new_line or not new_line[0].startswith(before) or not new_line[0].endswith(after):
        return None
    inserted = new_line[0][len(before) : len(new_line[0]) - len(after)]
    return inserted if len(before) + len(after) <= len(new_line[0]) and inserted else None


def measure(args: argparse.Namespace, data_dir: Path) -> list[dict[str, Any]]:
    engine = LlamaCppEngine(data_dir=data_dir, requantize_to=args.weights, merge_adapter=True)
    model = ModelSource(lambda: engine, "shadowtab")
    chosen = cases(records(args.corpus, args.split), "typing", args.cases * 3)
    rows = []
    try:
        for case in [shortened(c, MAX_TYPED) for c in chosen][: args.cases]:
            request = PredictionRequest(
                case.path, "python", case.current, case.cursor, events_of(case), 3
            )
            rendered = model.prompt(query_of(request))
            if rendered is None:
                continue
            engine.warm(rendered.prompt)
            full = full_rewrite(model, request)
            early = cursor_line_written(engine, model, rendered, case)
            rows.append({"full": full, "early": early})
    finally:
        engine.close()
    return rows


def summary(rows: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, Any]:
    full = [r["full"].seconds for r in rows]
    early = [r["early"].seconds for r in rows]
    pairs = [(r["early"].ghost, r["full"].ghost) for r in rows]
    return {
        "benchmark": "ghost_partial_rewrite",
        "cases": len(rows),
        "weights": args.weights,
        "rewrite_p50_ms": round(statistics.median(full) * 1000, 1) if rows else None,
        "cursor_line_p50_ms": round(statistics.median(early) * 1000, 1) if rows else None,
        "ratio_p50": (
            round(statistics.median(e / f for e, f in zip(early, full, strict=True)), 3)
            if rows
            else None
        ),
        "final_ghost_texts": sum(f is not None for _, f in pairs),
        "early_equals_final": sum(e == f for e, f in pairs),
        "early_only": sum(e is not None and f is None for e, f in pairs),
        "final_only": sum(e is None and f is not None for e, f in pairs),
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.corpus.is_dir():
        print(f"ghost_partial_rewrite: no corpus at {args.corpus}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="st-ghost-") as scratch:
        rows = measure(args, args.data_dir or Path(scratch))
    print(json.dumps(summary(rows, args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
