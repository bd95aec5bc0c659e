"""Latency with a busy neighbour (issue 44, Build 1): `benchmarks.next_edit_latency` run
side by side in one go with the machine otherwise idle, with one core kept busy by a
process that only spins, and with one that streams memory (as a build, an indexer or a
second model does). Users' CPUs are never idle; the target is ghost text p50 and next
edit p50 at most 2x their idle figures. Prints one JSON line.

    python -m benchmarks.busy_neighbour [--cases 8] [--neighbours none spin stream]
        [-- extra next_edit_latency arguments]

Each neighbour is a separate Python process pinned to the last CPU this process may use;
the engine is left to choose its threads as the daemon does (`n_threads`,
`threads_at_end` in each run's line say what it chose). The converted model is cached in
one folder for all runs, so each run loads the same weights.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# 256 MiB copied back and forth: far past the L3 cache, so every copy goes to memory.
NEIGHBOURS = {
    "none": None,
    "spin": "while True:\n    pass\n",
    "stream": (
        "import numpy as np\n"
        "a = np.ones(32 * 2**20)\n"
        "b = np.empty_like(a)\n"
        "while True:\n"
        "    np.copyto(b, a)\n"
    ),
}
SETTLE_S = 2.0  # the neighbour at full speed before the first key
FIGURES = ("ghost_p50_ms", "ghost_p90_ms", "next_edit_p50_ms", "next_edit_p90_ms")


@contextlib.contextmanager
def neighbour(kind: str) -> Iterator[None]:
    """A process of `kind` busy on the last CPU while the block runs."""
    code = NEIGHBOURS[kind]
    if code is None:
        yield
        return
    cpu = max(os.sched_getaffinity(0))
    process = subprocess.Popen(
        ["taskset", "-c", str(cpu), sys.executable, "-c", code],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(SETTLE_S)
        if process.poll() is not None:
            raise RuntimeError(f"the {kind} neighbour exited with {process.returncode}")
        yield
    finally:
        process.kill()
        process.wait()


def latency_run(cases: int, data_dir: Path, extra: list[str]) -> dict[str, Any]:
    """One next_edit_latency run in a process of its own; its JSON line."""
    command = [
        sys.executable,
        "-m",
        "benchmarks.next_edit_latency",
        "--cases",
        str(cases),
        "--data-dir",
        str(data_dir),
        *extra,
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"next_edit_latency failed:\n{done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def ratios(run: dict[str, Any], idle: dict[str, Any]) -> dict[str, float | None]:
    found: dict[str, float | None] = {}
    for name in FIGURES:
        base, value = idle.get(name), run.get(name)
        found[name] = round(value / base, 2) if base and value is not None else None
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=8)
    parser.add_argument("--neighbours", nargs="+", choices=tuple(NEIGHBOURS), default=None)
    parser.add_argument("extra", nargs="*", help="next_edit_latency's own arguments, after --")
    args = parser.parse_args(argv)
    kinds = args.neighbours or list(NEIGHBOURS)
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="st-neighbour-") as scratch:
        for kind in kinds:
            with neighbour(kind):
                runs[kind] = latency_run(args.cases, Path(scratch), args.extra)
    idle = runs.get("none")
    line = {
        "benchmark": "busy_neighbour",
        "cases": args.cases,
        "cpu": next(iter(runs.values()))["cpu"],
        "runs": {
            kind: {
                **{name: run.get(name) for name in FIGURES},
                "n_threads": run.get("n_threads"),
                "threads_at_end": run.get("threads_at_end"),
                "weights": run.get("weights"),
                "load_avg_1m": run.get("load_avg_1m"),
                **({"over_idle": ratios(run, idle)} if idle and kind != "none" else {}),
            }
            for kind, run in runs.items()
        },
        "target_over_idle": 2.0,
    }
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
