"""Ghost text's raw material for the learned gate: per evaluation case, the plain
continuation the completion source asks for, decoded without a cut, with every token's
probability, top-1/top-2 margin and end offset. The gate is fitted on these
(`python -m training.ghost_gate`), its labels judged by the evaluation's criterion.

    python -m benchmarks.ghost_gate_collect --split train --modes line typing \
        --cases 1200 --out training/ghost_gate/train.jsonl

One JSON line per case: the split, mode and index that rebuild the case
(training/eval_cases.py `cases`), and the continuation. With `--project on` each case
is in its project at the commit's parent, and the prompt holds the snippets the
language server would choose with `--context-tokens` (benchmarks/common/project_trees.py),
as the daemon's prompts do; the rows say so (`project`) and hold the snippets' texts
(`context`: the gate's features look up names and repetition there). Appends, and skips the
cases a previous run of the same file already has (a stopped run resumes).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from shadowtab.inference import Completion
from shadowtab.inference.next_edit.ghost_text.completion_source import CompletionSource
from shadowtab.inference.next_edit.predictor import PredictionRequest, query_of
from shadowtab.inference.next_edit.rewrite.model_source import ModelSource
from shadowtab.inference.next_edit.settings import NextEditOptions

from benchmarks.common.in_process import daemon_engine, request_of
from benchmarks.common.project_trees import ProjectTrees, checkout_order, with_context
from training.corpus import DEFAULT_CORPUS, SPLITS, records
from training.eval_cases import MODES, Mode, cases
from training.project_cases import DEFAULT_MIRRORS, ProjectCase, project_cases


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--split", choices=SPLITS, default="train")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=["line", "typing"])
    parser.add_argument("--cases", type=int, default=200, help="cases per mode")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data-dir", type=Path, help="cache of the converted model")
    parser.add_argument("--project", choices=("on", "off"), default="off")
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument(
        "--context-tokens",
        type=int,
        default=NextEditOptions().context_tokens,
        help="with --project on: [next_edit] context_tokens (default: the daemon's)",
    )
    return parser.parse_args(argv)


def row(
    split: str, mode: str, index: int, completion: Completion, seconds: float
) -> dict[str, Any]:
    margins = completion.token_margins[0] if completion.token_margins else []
    return {
        "split": split,
        "mode": mode,
        "index": index,
        "text": completion.texts[0],
        "finish": completion.finish_reasons[0] if completion.finish_reasons else "unknown",
        "probs": [round(math.exp(lp), 5) for lp in completion.logprobs[0]],
        "offsets": list(completion.text_offsets[0]),
        "margins": [round(m, 5) for m in margins],
        "seconds": round(seconds, 3),
    }


def requests(
    args: argparse.Namespace, split_records: list[dict[str, Any]], mode: Mode, trees: ProjectTrees
) -> Iterator[tuple[int, Callable[[], PredictionRequest]]]:
    """Each case's index and its request, made when called (in its project, in the order
    that moves the project trees least, with --project on)."""
    plain = cases(split_records, mode, args.cases)
    if args.project == "off":
        for index, case in enumerate(plain):
            yield index, partial(request_of, case)
        return
    moved, missing = project_cases(plain, split_records, args.mirrors)
    if missing:
        raise SystemExit(f"ghost_gate_collect: {len(missing)} {mode} cases have no project")
    for position in checkout_order(moved):
        project = moved[position]
        yield position, partial(in_project, project, trees, args.context_tokens)


def in_project(project: ProjectCase, trees: ProjectTrees, budget: int) -> PredictionRequest:
    return with_context(request_of(project.case), project, trees, budget)


def done_already(path: Path) -> set[tuple[str, str, int]]:
    if not path.exists():
        return set()
    found = set()
    for line in path.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            found.add((r["split"], r["mode"], r["index"]))
    return found


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.corpus.is_dir():
        print(f"ghost_gate_collect: no corpus at {args.corpus}", file=sys.stderr)
        return 2
    split_records = records(args.corpus, args.split)
    seen = done_already(args.out)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    engine = daemon_engine(args.threads, args.data_dir)
    trees = ProjectTrees(Path(tempfile.mkdtemp(prefix="st-gate-collect-")))
    try:
        model = ModelSource(lambda: engine)
        source = CompletionSource(lambda: engine, lambda q: model.format.continuation(q.situation))
        with args.out.open("a") as out:
            for mode in args.modes:
                for index, request in requests(args, split_records, mode, trees):
                    if (args.split, mode, index) in seen:
                        continue
                    made = request()
                    started = time.monotonic()
                    completion = source.complete(engine, query_of(made), None, 0.0)
                    took = time.monotonic() - started
                    found = row(args.split, mode, index, completion, took)
                    if args.project == "on":  # the fitter splices the case into its file
                        found |= {"project": True, "context": [s.text for s in made.context]}
                    out.write(json.dumps(found) + "\n")
                    out.flush()
    finally:
        engine.close()
        trees.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
