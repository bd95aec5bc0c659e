"""Mid-line ghost text with and without re-joining the rest of the line, side by side.

    python -m benchmarks.ghost_rejoin [--cases N] [--split heldout] [--corpus DIR]

On the evaluation's typing cases (training/eval_cases.py), the plain
continuation at the cursor (the ghost-text fallback of
inference/next_edit/ghost_text/completion_source.py, one greedy candidate, the packaged model
without adapter) is scored as written ("raw") and as inference/next_edit/ghost_text/rejoin.py keeps
it ("rejoined"), by the evaluation's criterion (training/edit_scoring.py), apart
for a cursor at the end of its line ("eol") and in the middle of one ("midline"). Prints
one JSON line: shown, correct, precision per variant and position.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from shadowtab.inference import LlamaCppEngine
from shadowtab.inference.next_edit.ghost_text.completion_source import MAX_TOKENS
from shadowtab.inference.next_edit.ghost_text.prompts import completion_prompt
from shadowtab.inference.next_edit.ghost_text.rejoin import rejoined, rest_of_line

from training.corpus import DEFAULT_CORPUS, SPLITS, records
from training.edit_scoring import apply_edit, judge
from training.eval_cases import Case, cases


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--split", choices=SPLITS, default="heldout")
    parser.add_argument("--cases", type=int, default=80)
    return parser.parse_args(argv)


def offered(engine: LlamaCppEngine, case: Case) -> dict[str, str | None]:
    """The continuation as written and as re-joined (None: not offered)."""
    rest = rest_of_line(case.current, case.cursor)
    prompt = completion_prompt(case.path, case.current, case.cursor)
    completion = engine.complete(prompt, MAX_TOKENS, stop=["\n"], n=1)
    raw = completion.texts[0] if completion.texts else ""
    finished = completion.finish_reasons[:1] in (["eos"], ["stop"])
    return {"raw": raw, "rejoined": rejoined(raw, rest, finished)}


def tally(engine: LlamaCppEngine, found: list[Case]) -> dict[str, Any]:
    counts: dict[str, dict[str, Any]] = {
        f"{variant}_{position}": {"shown": 0, "correct": 0}
        for variant in ("raw", "rejoined")
        for position in ("eol", "midline")
    }
    for case in found:
        position = "midline" if rest_of_line(case.current, case.cursor).strip() else "eol"
        for variant, text in offered(engine, case).items():
            row = counts[f"{variant}_{position}"]
            if text is None or not text.strip():
                continue
            applied = apply_edit(case.current, case.cursor, case.cursor, text)
            row["shown"] += 1
            row["correct"] += judge(case.current, applied, case.target, case.exact_texts).correct
    for row in counts.values():
        row["precision"] = round(row["correct"] / row["shown"], 3) if row["shown"] else None
    return counts


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.corpus.is_dir():
        print(f"ghost_rejoin: no corpus at {args.corpus} (--corpus)", file=sys.stderr)
        return 2
    found = list(cases(records(args.corpus, args.split), "typing", args.cases))
    engine = LlamaCppEngine(n_ctx=4096, kv_cache_mb=64)
    try:
        counts = tally(engine, found)
    finally:
        engine.close()
    line = {"benchmark": "ghost_rejoin", "split": args.split, "cases": len(found), **counts}
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
