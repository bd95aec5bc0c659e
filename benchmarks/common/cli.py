"""The command line shared by the model benchmarks: `--quick` (reduced size, for CI) and
`--data-dir` (where the requantized default model is cached; a temporary folder if not
given), then one JSON line on stdout. `run_weights_benchmark` adds `--weights` (the
engine.weights of the engine measured; q8_0 unless asked, "auto" measures first)."""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _parser(description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="reduced size for CI")
    parser.add_argument(
        "--data-dir", type=Path, help="where the default model's requantized copies are cached"
    )
    return parser


def run_model_benchmark(description: str, run: Callable[[bool, Path], dict[str, Any]]) -> int:
    args = _parser(description).parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        print(json.dumps(run(args.quick, args.data_dir or Path(scratch))))
    return 0


def run_weights_benchmark(
    description: str, run: Callable[[bool, Path, str], dict[str, Any]]
) -> int:
    parser = _parser(description)
    parser.add_argument("--weights", default="q8_0", help="engine.weights: q8_0, bf16, auto...")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        print(json.dumps(run(args.quick, args.data_dir or Path(scratch), args.weights)))
    return 0


def print_run(run: Callable[[argparse.Namespace, Path], dict[str, Any]], args: Any) -> int:
    """`run(args, data_dir)`'s figures as one JSON line; the data dir is args.data_dir or
    a temporary folder (for a benchmark with a parser of its own)."""
    with tempfile.TemporaryDirectory() as scratch:
        print(json.dumps(run(args, args.data_dir or Path(scratch))))
    return 0
