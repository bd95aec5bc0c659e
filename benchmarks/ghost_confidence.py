"""Ghost text's token threshold: the curve it is chosen from, and which source to prefer
where the plain continuation and the rewrite disagree.

    python -m benchmarks.ghost_confidence [--split dev] [--cases 60] [--typing-cases 30]
        [--corpus DIR] [--threads N]

In-process, the predictor's own sources on the shipped weights (the packaged model, its
adapter merged, as the daemon loads them):

- line cases (training/eval_cases.py `line`): the continuation ghost text asks for,
  decoded once without a cut; then, for each threshold, cut at its first token below it
  exactly as inference/next_edit/ghost_text/completion_source.py cuts it. Scored as the
  evaluation's line mode (a non-empty prefix of the rest of the line): shown, correct,
  precision, recall, share of the remaining characters saved.
- typing cases (a half-typed hunk): the continuation cut at the chosen threshold against
  the rewrite's ghost text (the model source's insertion at the cursor, with and without
  the token check), by the evaluation's criterion, and where both offer one and they
  differ, which was right.

The threshold chosen is the lowest one whose precision reaches TARGET_PRECISION. Choose
it on `dev`, never on `heldout`. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from shadowtab.inference import Completion, EngineOptions, create_engine
from shadowtab.inference.next_edit.candidates import Candidate, kind_of
from shadowtab.inference.next_edit.ghost_text import repetition
from shadowtab.inference.next_edit.ghost_text.completion_source import (
    CompletionSource,
    ghost_candidate,
)
from shadowtab.inference.next_edit.ghost_text.rejoin import rest_of_line
from shadowtab.inference.next_edit.predictor import query_of
from shadowtab.inference.next_edit.rewrite.model_source import ModelSource
from shadowtab.inference.next_edit.token_confidence import DEFAULT_TOKEN_THRESHOLD

from benchmarks.common.in_process import request_of
from training.corpus import DEFAULT_CORPUS, SPLITS, records
from training.edit_scoring import apply_edit, judge, judge_line
from training.eval_cases import Case, cases, line_rest

THRESHOLDS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
TARGET_PRECISION = 0.85


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--split", choices=SPLITS, default="dev")
    parser.add_argument("--cases", type=int, default=60, help="line cases (0: none)")
    parser.add_argument("--typing-cases", type=int, default=30, help="0: no source comparison")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data-dir", type=Path, help="cache of the converted model")
    return parser.parse_args(argv)


def continuation(source: CompletionSource, engine: Any, case: Case) -> Completion:
    return source.complete(engine, query_of(request_of(case)), None, 0.0)


def cut(completion: Completion, case: Case, threshold: float) -> str | None:
    """The ghost text the completion source offers at `threshold` (None: nothing)."""
    rest = rest_of_line(case.current, case.cursor)
    found = ghost_candidate(completion, 0, rest, case.cursor, threshold)
    return found.edits[0].new_text if found is not None else None


def line_curve(answers: list[tuple[Case, Completion]]) -> list[dict[str, Any]]:
    remaining = sum(len(line_rest(case)) for case, _ in answers)
    curve = []
    for threshold in THRESHOLDS:
        shown = correct = saved = 0
        for case, completion in answers:
            text = cut(completion, case, threshold)
            if text is None:
                continue
            verdict = judge_line(line_rest(case), case.cursor, case.cursor, case.cursor, text)
            shown += 1
            correct += verdict.correct
            saved += verdict.chars_saved
        curve.append(
            {
                "threshold": threshold,
                "shown": shown,
                "correct": correct,
                "precision": round(correct / shown, 3) if shown else None,
                "recall": round(correct / len(answers), 3) if answers else None,
                "chars_saved_share": round(saved / remaining, 3) if remaining else None,
            }
        )
    return curve


def line_sources(answers: list[tuple[Case, Completion]], threshold: float) -> dict[str, Any]:
    """At `threshold`, on the line cases: the repetition source alone (no model), and
    the predictor's order (the cut continuation, else the repetition)."""
    remaining = sum(len(line_rest(case)) for case, _ in answers)
    rows: dict[str, dict[str, Any]] = {
        name: {"shown": 0, "correct": 0, "chars_saved": 0}
        for name in ("repetition", "continuation_then_repetition")
    }
    for case, completion in answers:
        found = repetition.candidate(query_of(request_of(case)))
        rep = found.edits[0].new_text if found is not None else None
        offered = {
            "repetition": rep,
            "continuation_then_repetition": cut(completion, case, threshold) or rep,
        }
        for name, text in offered.items():
            if text is None:
                continue
            verdict = judge_line(line_rest(case), case.cursor, case.cursor, case.cursor, text)
            rows[name]["shown"] += 1
            rows[name]["correct"] += verdict.correct
            rows[name]["chars_saved"] += verdict.chars_saved
    for row in rows.values():
        row["precision"] = round(row["correct"] / row["shown"], 3) if row["shown"] else None
        saved = row.pop("chars_saved")
        row["chars_saved_share"] = round(saved / remaining, 3) if remaining else None
    return rows


def chosen_threshold(curve: list[dict[str, Any]]) -> float | None:
    for point in curve:
        if point["precision"] is not None and point["precision"] >= TARGET_PRECISION:
            return float(point["threshold"])
    return None


def rewrite_ghost(predictor_model: Any, case: Case) -> tuple[str | None, str | None]:
    """The rewrite's ghost text (its best insertion at the cursor), without and with
    the token check at the model source's threshold."""
    query = query_of(request_of(case))
    threshold = predictor_model.token_threshold
    predictor_model.token_threshold = 0.0
    try:
        found: list[Candidate] = predictor_model.candidates(query)
    finally:
        predictor_model.token_threshold = threshold
    inline = [c for c in found if kind_of(c, query.situation) == "inline"]
    if not inline:
        return None, None
    best = max(inline, key=lambda c: c.confidence)
    probs = best.token_probs
    sure = probs is None or all(p >= threshold for p in probs)
    return best.edits[0].new_text, best.edits[0].new_text if sure else None


def typing_comparison(engine: Any, found: list[Case], threshold: float) -> dict[str, Any]:
    model = ModelSource(lambda: engine, None, threshold)
    source = CompletionSource(lambda: engine, lambda q: model.format.continuation(q.situation))
    tally: dict[str, dict[str, Any]] = {
        name: {"shown": 0, "correct": 0, "chars_saved": 0}
        for name in ("continuation_cut", "rewrite", "rewrite_checked")
    }
    disagree = {"cases": 0, "continuation_correct": 0, "rewrite_correct": 0}
    for case in found:
        completion = continuation(source, engine, case)
        offered = {"continuation_cut": cut(completion, case, threshold)}
        offered["rewrite"], offered["rewrite_checked"] = rewrite_ghost(model, case)
        verdicts = {}
        for name, text in offered.items():
            if not text:
                continue
            applied = apply_edit(case.current, case.cursor, case.cursor, text)
            verdict = judge(case.current, applied, case.target, case.exact_texts)
            verdicts[name] = verdict.correct
            tally[name]["shown"] += 1
            tally[name]["correct"] += verdict.correct
            tally[name]["chars_saved"] += verdict.chars_saved
        both = offered["continuation_cut"] and offered["rewrite_checked"]
        if both and offered["continuation_cut"] != offered["rewrite_checked"]:
            disagree["cases"] += 1
            disagree["continuation_correct"] += verdicts.get("continuation_cut", False)
            disagree["rewrite_correct"] += verdicts.get("rewrite_checked", False)
    for row in tally.values():
        row["precision"] = round(row["correct"] / row["shown"], 3) if row["shown"] else None
    return {"typing_cases": len(found), **tally, "disagreements": disagree}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.corpus.is_dir():
        print(f"ghost_confidence: no corpus at {args.corpus} (--corpus)", file=sys.stderr)
        return 2
    split_records = records(args.corpus, args.split)
    options = EngineOptions(
        threads=args.threads, weights="auto", merge_adapter=True, process="inline"
    )
    if args.data_dir is not None:
        options.data_dir = args.data_dir
    engine = create_engine(options)
    try:
        model = ModelSource(lambda: engine)
        source = CompletionSource(lambda: engine, lambda q: model.format.continuation(q.situation))
        line_cases = cases(split_records, "line", args.cases)
        answers = [(case, continuation(source, engine, case)) for case in line_cases]
        curve = line_curve(answers)
        chosen = chosen_threshold(curve)
        # where no threshold reaches the target, the sources are compared at the default
        compared_at = chosen if chosen is not None else DEFAULT_TOKEN_THRESHOLD
        line: dict[str, Any] = {
            "benchmark": "ghost_confidence",
            "split": args.split,
            "line_cases": len(answers),
            "target_precision": TARGET_PRECISION,
            "chosen_threshold": chosen,
            "compared_at": compared_at,
            "curve": curve,
            "line_sources": line_sources(answers, compared_at),
        }
        if args.typing_cases:
            typing = cases(split_records, "typing", args.typing_cases)
            line["typing"] = typing_comparison(engine, typing, compared_at)
    finally:
        engine.close()
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
