"""Shadow workspace benchmark: keystroke edits per second through ShadowWorkspace
(journal on) on a 10 MB file and on a 1k-line file, side by side with naive full-string
editing of the 10 MB text, and lint latency p50 (ruff + syntax check over stdin) for a
1k-line file. Prints one JSON line."""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from shadowtab.shadow_workspace import Range, ShadowWorkspace, TextChange, path_to_uri

LINE = "    value_{i} = compute(value_{j}, 'text é')  # comment\n"


def python_source(lines: int) -> str:
    body = [
        f"def function_{i}(value_{i}: int) -> int:\n" + LINE.format(i=i, j=i)
        for i in range(lines // 3)
    ]
    body = [chunk + f"    return value_{i}\n" for i, chunk in enumerate(body)]
    return "import os\n\n\n" + "".join(body)


def keystrokes_per_second(ws: ShadowWorkspace, path: Path, text: str, count: int) -> float:
    """Type `count` characters: bursts of 20 at one spot, then a jump elsewhere."""
    path.write_text(text)
    uri = path_to_uri(path)
    doc = ws.open_document(uri, text, 1, "python")
    rng = random.Random(7)
    line = column = 0
    started = time.perf_counter()
    for index in range(count):
        if index % 20 == 0:
            line, column = rng.randrange(doc.line_count), 4
        position = Range.of(line, column, line, column)
        ws.change_document(uri, doc.version + 1, [TextChange(position, "x")])
        column += 1
    elapsed = time.perf_counter() - started
    ws.close_document(uri)
    return count / elapsed


def naive_edits_per_second(text: str, count: int) -> float:
    """The baseline: a str per edit plus a full re-split to find lines."""
    started = time.perf_counter()
    for index in range(count):
        offset = (index * 7919) % len(text)
        text = text[:offset] + "x" + text[offset:]
        text.split("\n")
    return count / (time.perf_counter() - started)


async def lint_p50_ms(ws: ShadowWorkspace, path: Path, text: str, runs: int) -> tuple[float, int]:
    await ws.lint_text(path, text, "python")  # warm the file cache of the ruff binary
    times = []
    found = 0
    for run in range(runs):
        variant = text + f"unused_{run} = undefined_{run}\n"
        started = time.perf_counter()
        report = await ws.lint_text_report(path, variant, "python")
        times.append((time.perf_counter() - started) * 1000)
        if report.degraded:
            raise RuntimeError(f"a linter failed: {report.failures}")
        found = len(report.diagnostics)
    return statistics.median(times), found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--edits", type=int, default=5000)
    parser.add_argument("--lint-runs", type=int, default=21)
    args = parser.parse_args()
    big = python_source(180_000)
    while len(big.encode()) < 10 * 1024 * 1024:
        big += big[: 10 * 1024 * 1024 - len(big.encode()) + 1]
    small = python_source(1000)
    with tempfile.TemporaryDirectory() as folder:
        root, state = Path(folder, "root"), Path(folder, "state")
        root.mkdir()
        ws = ShadowWorkspace(root, state, watch=False)
        try:
            big_rate = keystrokes_per_second(ws, root / "big.py", big, args.edits)
            small_rate = keystrokes_per_second(ws, root / "small.py", small, args.edits)
            naive_rate = naive_edits_per_second(big, max(20, args.edits // 100))
            lint_ms, diagnostics = asyncio.run(
                lint_p50_ms(ws, root / "small.py", small, args.lint_runs)
            )
        finally:
            ws.close()
    print(
        json.dumps(
            {
                "benchmark": "shadow_edits",
                "big_file_mb": round(len(big.encode()) / 2**20, 2),
                "big_file_lines": big.count("\n"),
                "keystrokes_per_s_10mb": round(big_rate),
                "keystrokes_per_s_1k_lines": round(small_rate),
                "naive_str_edits_per_s_10mb": round(naive_rate, 1),
                "speedup_10mb_vs_naive": round(big_rate / naive_rate, 1),
                "journal": True,
                "lint_p50_ms_1k_lines": round(lint_ms, 1),
                "lint_runs": args.lint_runs,
                "lint_diagnostics": diagnostics,
                "small_file_lines": small.count("\n"),
            }
        )
    )


if __name__ == "__main__":
    main()
