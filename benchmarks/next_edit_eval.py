"""Next-edit evaluation on real commits: replays edits from the corpus through the real
language server, as an editor would, and scores what it suggests against the commits.

    python -m benchmarks.next_edit_eval [--corpus DIR] [--split heldout|dev|train]
        [--cases N] [--quick] [--min-confidence-sweep] [--model GGUF]
        [--adapter default|none|PATH ...] [--format auto|NAME ...] [--min-confidence X]
        [--modes typing next_hunk line] [--token-threshold X] [--no-gate]
        [--region-lines ABOVE,BELOW] [--project auto|on|off] [--context-tokens N ...]

Modes (training/eval_cases.py): `typing` (the old text of a hunk's changed stretch
deleted, the first part of the new text typed, cut at a pause; predict the rest),
`next_hunk` (the first hunk done; predict the others) and `line` (line completion: a
line the commit wrote, its first part typed into the file that lacks it; ghost text
only). Per case the editor opens the file, says where its cursor rests (at the edit:
shadowtab/cursorMoved, as both clients do), pauses (--open-pause), sends the edit as
didChange events (one per keystroke in typing and line mode), pauses (--type-pause),
then asks textDocument/inlineCompletion and (not in line mode) shadowtab/nextEdit of an
in-process Hub session over real LSP framing, with the daemon's engine defaults
(`engine.weights = "auto"`, the adapter merged into the weights) unless told otherwise.

Line mode is scored on its own terms: correct when the ghost text is a non-empty prefix
of the rest of the line (inserted at the cursor); chars_saved_share is the share of the
lines' remaining characters the correct ones wrote.

Scoring (training/edit_scoring.py), of each source's best suggestion: correct when the
text it produces lies on a shortest insert/delete path from the current text to the
commit's and it changes something; exact when it reaches the whole edit of the mode (the
hunk finished; one more hunk done). chars_saved is the character distance it closes.
precision = correct/shown, recall = correct/cases. prompt_reuse is the share of prompt
tokens served from the KV cache during the requests (warming that overlaps a request is
counted too).

Propagation (inference/next_edit/propagation/propagation.py) is scored in next-hunk mode: from the
server's next edits when they carry `source: "propagation"`, else by calling it directly
on the completed first hunk, with the predictor's learned gate (propagation_gate.py).
`--propagation-only` scores it alone, without server or model, on many cases quickly.

With the project present (`--project`, on where the repositories' mirrors are: see
benchmarks/common/project_trees.py), each case's file is whole and its repository's
Python files, as they were at the commit's parent, are the workspace the server opens
and indexes; the commit's own result is never there. `--context-tokens 0 512 ...` runs
one variant per `[next_edit] context_tokens` budget, side by side on the same cases.

`--region-lines ABOVE,BELOW` sets the shadowtab format's rewrite window for the run
(benchmarks/common/region_lines.py; the shipped adapter was trained on the product's).

Prints one JSON line per variant, mode and source; with --min-confidence-sweep also one
line per source with suggestions that carry a confidence: precision and recall at each
threshold, and the lowest threshold with precision >= 0.8 (choose it on `heldout`).
The held-back split is training/split.py's (training/corpus.py reads it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.common.eval_dump import Dump
from benchmarks.common.eval_report import Observation, mode_lines, sweep_line
from benchmarks.common.eval_run import (
    CaseRunner,
    Pauses,
    Variant,
    propagation_observation,
    start_hub,
    variants,
)
from benchmarks.common.region_lines import add_region_lines_option, region_lines, set_region_lines
from training.corpus import CORPUS_VARIABLE, DEFAULT_CORPUS, SPLITS, records
from training.eval_cases import MODES, Case, Mode, cases
from training.project_cases import DEFAULT_MIRRORS, ProjectCase, project_cases

QUICK_CASES = 2


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--split", choices=SPLITS, default="heldout")
    parser.add_argument("--cases", type=int, default=40, help="cases per mode")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument(
        "--quick", action="store_true", help=f"{QUICK_CASES} cases per mode, short pauses (CI)"
    )
    parser.add_argument("--min-confidence-sweep", action="store_true")
    parser.add_argument(
        "--propagation-only",
        action="store_true",
        help="next-hunk mode, propagation only, no server or model (milliseconds a case)",
    )
    parser.add_argument("--open-pause", type=float, default=2.0, help="seconds after didOpen")
    parser.add_argument("--type-pause", type=float, default=0.3, help="seconds before asking")
    parser.add_argument("--keystroke", type=float, default=0.02, help="seconds between keys")
    parser.add_argument("--model", help="GGUF path (default: the packaged model)")
    parser.add_argument(
        "--adapter",
        action="append",
        help="LoRA adapter: 'default' (the packaged one), 'none' or a GGUF path; repeat to compare",
    )
    parser.add_argument(
        "--format",
        action="append",
        help="next-edit prompt format: 'auto' (the adapter's, else generic) or a name; repeat",
    )
    parser.add_argument(
        "--min-confidence", type=float, default=0.0, help="the predictor's threshold"
    )
    parser.add_argument(
        "--token-threshold",
        type=float,
        help="[next_edit] token_threshold (default: the predictor's; 0: no cut)",
    )
    parser.add_argument(
        "--no-gate", action="store_true", help="[next_edit] gate = false: the token threshold alone"
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--weights", default="auto", help="engine.weights (the daemon's default: auto)"
    )
    parser.add_argument(
        "--attached-adapter",
        action="store_true",
        help="engine.merge_adapter = false (the daemon merges the adapter into the weights)",
    )
    parser.add_argument(
        "--project",
        choices=("auto", "on", "off"),
        default="auto",
        help="the cases' projects present (auto: where the mirrors are)",
    )
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument(
        "--context-tokens",
        type=int,
        nargs="+",
        help="[next_edit] context_tokens budgets, one variant each (default: the daemon's)",
    )
    parser.add_argument("--dump", type=Path, help="append one JSON line per case here")
    parser.add_argument("--data-dir", type=Path, help="cache of the requantized model")
    add_region_lines_option(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.cases, args.open_pause, args.type_pause, args.keystroke = QUICK_CASES, 0.3, 0.1, 0.0
    return args


async def evaluate(
    args: argparse.Namespace, variant: Variant, data_dir: Path
) -> list[dict[str, Any]]:
    corpus_records = records(args.corpus, args.split)
    pauses = Pauses(args.open_pause, args.type_pause, args.keystroke)
    with tempfile.TemporaryDirectory(prefix="st-eval-") as scratch:
        hub, client, described = await start_hub(variant, Path(scratch), data_dir)
        runner = CaseRunner(hub, client, Path(scratch) / "root", pauses)
        dump = Dump(args.dump)
        lines: list[dict[str, Any]] = []
        try:
            for mode in args.modes:
                observed: dict[str, list[Observation]] = {}
                chosen, project = mode_cases(args, corpus_records, mode)
                for case in chosen:
                    found = await runner.run(case)
                    dump.write(case.case if isinstance(case, ProjectCase) else case, found)
                    for source, observation in found.items():
                        observed.setdefault(source, []).append(observation)
                header = {
                    "split": args.split,
                    **described,
                    "region_lines": region_lines(),
                    "project": project,
                }
                lines += mode_lines(mode, observed, header)
                if args.min_confidence_sweep:
                    lines += [
                        line
                        for source, found in observed.items()
                        if (line := sweep_line(mode, source, found, header)) is not None
                    ]
        finally:
            dump.close()
            await runner.close()
            await hub.close()
    return lines


def mode_cases(
    args: argparse.Namespace, corpus_records: list[dict[str, Any]], mode: Mode
) -> tuple[list[Case | ProjectCase], str]:
    """The mode's cases, in their projects when asked (all of them, or none: a mix would
    compare unlike cases), and what the JSON line says of it."""
    found = cases(corpus_records, mode, args.cases)
    plain: list[Case | ProjectCase] = [*found]
    if args.project == "off":
        return plain, "off"
    moved, missing = project_cases(found, corpus_records, args.mirrors)
    if not missing:
        return [*moved], "present"
    if args.project == "on":
        raise SystemExit(
            f"next_edit_eval: {len(missing)} of {len(found)} {mode} cases have no project "
            f"in {args.mirrors} (e.g. {missing[0].repo}@{missing[0].commit[:12]})"
        )
    return plain, f"absent ({len(missing)} of {len(found)} cases without a mirror)"


def evaluate_propagation(args: argparse.Namespace) -> list[dict[str, Any]]:
    found = [
        propagation_observation(case)
        for case in cases(records(args.corpus, args.split), "next_hunk", args.cases)
    ]
    header = {"split": args.split, "model": None, "adapter": None, "format": None}
    lines = mode_lines("next_hunk", {"propagation": found}, header)
    sweep = sweep_line("next_hunk", "propagation", found, header)
    return lines + ([sweep] if sweep is not None and args.min_confidence_sweep else [])


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    set_region_lines(args.region_lines)
    if not args.corpus.is_dir():
        print(
            f"next_edit_eval: no corpus at {args.corpus} (--corpus or ${CORPUS_VARIABLE})",
            file=sys.stderr,
        )
        return 2
    if args.propagation_only:
        for line in evaluate_propagation(args):
            print(json.dumps(line))
        return 0
    try:
        engine = {"merge_adapter": not args.attached_adapter, "weights": args.weights}
        chosen = variants(
            args.model,
            args.adapter,
            args.format,
            args.threads,
            args.min_confidence,
            engine,
            args.token_threshold,
            False if args.no_gate else None,
            args.context_tokens,
        )
    except ValueError as exc:
        print(f"next_edit_eval: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="st-eval-data-") as scratch:
        data_dir = args.data_dir or Path(scratch)
        for variant in chosen:
            for line in asyncio.run(evaluate(args, variant, data_dir)):
                print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
