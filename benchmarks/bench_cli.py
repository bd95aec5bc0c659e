"""The command line shared by the model benchmarks: `--quick` (reduced size, for CI) and
`--data-dir` (where the requantized default model is cached; a temporary folder if not
given), then one JSON line on stdout."""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any


def run_model_benchmark(description: str, run: Callable[[bool, Path], dict[str, Any]]) -> int:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="reduced size for CI")
    parser.add_argument(
        "--data-dir", type=Path, help="where the default model's requantized copies are cached"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        print(json.dumps(run(args.quick, args.data_dir or Path(scratch))))
    return 0
