"""The project index over a generated tree of Python files: how long the background build
takes, how much memory it adds, how fast a query answers, and how long the event loop of
the same process waits for the GIL while the index builds (the daemon's loop shares it).

Generates `--files` modules (default 5,000, the issue's target: built in <= 60 s and <=
200 MB more memory) of about 150 lines each, in folders of 50, then builds the index in
its thread while an asyncio loop in the main thread measures how late a 5 ms sleep wakes.
Prints one JSON line."""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from shadowtab.shadow_workspace.project_index import ProjectIndex

# fmt: off
WORDS = [
    "user", "account", "order", "invoice", "payment", "item", "cart", "price", "total",
    "amount", "customer", "session", "token", "request", "response", "cache", "client",
    "server", "record", "entry", "value", "count", "index", "buffer", "config", "option",
    "setting", "path", "name", "text", "line", "window", "score", "limit", "result", "status",
    "error",
]
# fmt: on


def module_text(rng: random.Random, number: int) -> str:
    """A plausible module: imports, a class with methods, functions, constants."""
    pick = rng.sample
    lines = ["import os", "import json", f"from package_{number % 7} import {pick(WORDS, 1)[0]}"]
    lines += ["", f"LIMIT_{number} = {number}", ""]
    lines += [f"class {pick(WORDS, 1)[0].title()}Store{number}:"]
    lines += ['    """Keeps things."""', ""]
    while len(lines) < 150:
        a, b, c = pick(WORDS, 3)
        lines += [
            f"    def load_{a}_{b}(self, {c}_id: int) -> dict:",
            f"        {a} = self.{b}_cache.get({c}_id)",
            f"        if {a} is None:",
            f"            {a} = json.loads(os.environ.get('{b.upper()}', '{{}}'))",
            f"        return {{'{c}': {a}, 'limit': LIMIT_{number}}}",
            "",
        ]
    return "\n".join(lines) + "\n"


def generate_tree(root: Path, files: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    for number in range(files):
        folder = root / f"pkg_{number // 50}"
        folder.mkdir(exist_ok=True)
        (folder / f"module_{number}.py").write_text(module_text(rng, number))


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def build_while_loop_runs(index: ProjectIndex) -> tuple[float, float, float]:
    """Build seconds, and the loop's p50 and max lateness (ms) during the build."""
    started = time.perf_counter()
    index.start()
    late: list[float] = []
    while not index.wait_ready(0):
        before = time.perf_counter()
        await asyncio.sleep(0.005)
        late.append((time.perf_counter() - before - 0.005) * 1000)
    build_s = time.perf_counter() - started
    return build_s, statistics.median(late or [0.0]), max(late or [0.0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        generate_tree(root, args.files)
        rss_before = rss_mb()
        index = ProjectIndex(root)
        build_s, late_p50, late_max = asyncio.run(build_while_loop_runs(index))
        rss_growth = rss_mb() - rss_before
        rng = random.Random(1)
        paths = sorted(root.rglob("*.py"))
        timings = []
        for _ in range(args.queries):
            path = rng.choice(paths)
            lines = path.read_text().split("\n")
            start = rng.randrange(0, max(len(lines) - 20, 1))
            query = "\n".join(lines[start : start + 20])
            began = time.perf_counter()
            index.similar_windows(query, 3, exclude=(path, (start, start + 20)))
            timings.append((time.perf_counter() - began) * 1000)
        began = time.perf_counter()
        index.definitions(["LIMIT_1", "load_user_account", "missing"])
        definitions_ms = (time.perf_counter() - began) * 1000
        described = index.describe()
        index.close()
    print(
        json.dumps(
            {
                "files": args.files,
                "files_indexed": described["files"],
                "windows": described["windows"],
                "definitions": described["definitions"],
                "build_s": round(build_s, 2),
                "rss_growth_mb": round(rss_growth, 1),
                "query_p50_ms": round(statistics.median(timings), 2),
                "query_max_ms": round(max(timings), 2),
                "definitions_ms": round(definitions_ms, 3),
                "loop_late_p50_ms": round(late_p50, 2),
                "loop_late_max_ms": round(late_max, 2),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
