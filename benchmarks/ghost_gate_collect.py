"""Ghost text's raw material for the learned gate: per evaluation case, the plain
continuation the completion source asks for, decoded without a cut, with every token's
probability, top-1/top-2 margin and end offset. The gate is fitted on these
(`python -m training.ghost_gate`), its labels judged by the evaluation's criterion.

    python -m benchmarks.ghost_gate_collect --split train --modes line typing \
        --cases 1200 --out training/ghost_gate/train.jsonl

One JSON line per case: the split, mode and index that rebuild the case
(training/eval_cases.py `cases`), and the continuation. Appends, and skips the
cases a previous run of the same file already has (a stopped run resumes).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from shadowtab.inference import Completion
from shadowtab.inference.next_edit.ghost_text.completion_source import CompletionSource
from shadowtab.inference.next_edit.predictor import query_of
from shadowtab.inference.next_edit.rewrite.model_source import ModelSource

from benchmarks.common.in_process import daemon_engine, request_of
from training.corpus import DEFAULT_CORPUS, SPLITS, records
from training.eval_cases import MODES, cases


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--split", choices=SPLITS, default="train")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=["line", "typing"])
    parser.add_argument("--cases", type=int, default=200, help="cases per mode")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data-dir", type=Path, help="cache of the converted model")
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
    try:
        model = ModelSource(lambda: engine)
        source = CompletionSource(lambda: engine, lambda q: model.format.continuation(q.situation))
        with args.out.open("a") as out:
            for mode in args.modes:
                for index, case in enumerate(cases(split_records, mode, args.cases)):
                    if (args.split, mode, index) in seen:
                        continue
                    started = time.monotonic()
                    completion = source.complete(engine, query_of(request_of(case)), None, 0.0)
                    took = time.monotonic() - started
                    out.write(json.dumps(row(args.split, mode, index, completion, took)) + "\n")
                    out.flush()
    finally:
        engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
