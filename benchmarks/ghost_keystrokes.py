"""Ghost text asked on every keystroke, as an editor asks it while the user types: the
typing workload (common/typing_workload.py: lines typed into the stdlib's textwrap
module, one character a key) through the predictor the daemon's worker runs
(EnginePredictor.inline: type-through, the completion source's healed prompt cut at the
learned gate's floor), on the daemon's engine (the adapter merged). Prints one JSON line:
each keystroke's answer time p50 / p90 / mean, and what the engine did for them (calls,
forward passes, tokens generated, draft tokens from the model's previous answer and how
many it kept: engines/local/continuation.py).

    python -m benchmarks.ghost_keystrokes [--quick] [--weights auto] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from shadowtab.inference import EngineOptions, create_engine
from shadowtab.inference.engines.local.cpu_load import physical_cores
from shadowtab.inference.next_edit.events import Edit
from shadowtab.inference.next_edit.predictor import EnginePredictor, PredictionRequest

from benchmarks.common.cli import print_run
from benchmarks.common.typing_workload import TYPED, keystrokes, source_file

PATH = "/project/textwrap_copy.py"
KEY_SECONDS = 0.15  # the events' clock: one key every 150 ms


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the first typed line only")
    parser.add_argument("--weights", default="auto", help="engine.weights (the daemon's: auto)")
    parser.add_argument("--threads", type=int, default=physical_cores())
    parser.add_argument("--data-dir", type=Path, help="cache of the converted model")
    return parser.parse_args(argv)


def run(args: argparse.Namespace, data_dir: Path) -> dict[str, Any]:
    options = EngineOptions(
        threads=args.threads, weights=args.weights, merge_adapter=True, process="inline"
    )
    options.data_dir = data_dir
    engine = create_engine(options)
    try:
        return measure(engine, TYPED.splitlines(keepends=True)[0] if args.quick else TYPED)
    finally:
        engine.close()


def measure(engine: Any, typed: str) -> dict[str, Any]:
    predictor = EnginePredictor(lambda: engine)
    text, cut = source_file(engine)
    times, shown, events = [], 0, []
    for index, (current, cursor, so_far) in enumerate(keystrokes(text, cut, typed)):
        events.append(Edit(PATH, KEY_SECONDS * index, cursor - 1, "", so_far[-1]))
        request = PredictionRequest(PATH, "python", current, cursor, tuple(events[-16:]))
        started = time.perf_counter()
        found = predictor.inline(request)
        times.append((time.perf_counter() - started) * 1000)
        shown += bool(found)
    stats = engine.stats()
    totals, complete = stats["totals"], stats["time_by_kind"].get("complete", {})
    return {
        "benchmark": "ghost_keystrokes",
        "keystrokes": len(times),
        "p50_ms": round(statistics.median(times), 1),
        "p90_ms": round(statistics.quantiles(times, n=10)[8], 1) if len(times) > 1 else None,
        "mean_ms": round(statistics.mean(times), 1),
        "shown": shown,
        "engine_calls": complete.get("calls", 0),
        "forward_passes": complete.get("forward_passes", 0),
        "generated_tokens": totals.get("generated_tokens", 0),
        "draft_tokens": totals.get("draft_tokens", 0),
        "accepted_draft_tokens": totals.get("accepted_draft_tokens", 0),
        "model": Path(stats["model"]).name,
        "n_threads": stats["n_threads"],
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }


def main(argv: list[str] | None = None) -> int:
    return print_run(run, parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
