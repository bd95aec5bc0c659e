"""Torture: SIGKILL a process that journals model edits and commits them, at random
points, many times. After each kill a fresh ShadowWorkspace replays the journal: every
acknowledged edit must be recovered, every file on disk must be a whole old or new
version byte for byte, and no temp file may be left.

The figures:

    {"trials": 1000, "lost_edits": 0, "torn_files": 0, "temp_files_left": 0, ...}

Run as a script, this file is the child: a journaled workspace that takes model edits
in a loop (and in "commit" mode commits them), printing "ack N FILE" after each call.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from shadowtab.shadow_workspace import Range, ShadowWorkspace, TextChange, path_to_uri

FILES = ("a.py", "b.py")
EDIT_LINE = re.compile(r"edit (\d+)\n")
TEMP_SUFFIX = ".shadowtab"


def body(lines: int) -> str:
    return "".join(
        f"line_{i} = {i} * 2  # padding so that writes take a while\n" for i in range(lines)
    )


def child(root: Path, journal_dir: Path, mode: str, start: int) -> None:
    ws = ShadowWorkspace(root, journal_dir, watch=False)  # replays the journal
    print("ready", flush=True)
    ws.release()
    counter = start
    while True:
        for name in FILES:
            uri = path_to_uri((root / name).absolute())
            ws.apply_model_edit(uri, [TextChange(Range.of(0, 0, 0, 0), f"edit {counter}\n")])
            print(f"ack {counter} {name}", flush=True)
            counter += 1
        if mode == "commit":
            ws.take("commit")
            ws.release()


def edit_numbers(text: str, original: str) -> list[int] | None:
    """The edit numbers at the head of a whole version; None for a torn or mixed file."""
    numbers, rest = [], text
    while match := EDIT_LINE.match(rest):
        numbers.append(int(match.group(1)))
        rest = rest[match.end() :]
    return numbers if rest == original else None


def kill_one(root: Path, journal: Path, mode: str, start: int, rng: random.Random) -> set[int]:
    """Start the child, let it ack a few edits, SIGKILL it at a random moment."""
    command = [sys.executable, __file__, str(root), str(journal), mode, str(start)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    acked: set[int] = set()
    assert proc.stdout is not None
    try:
        if proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the child did not start (exit {proc.wait()})")
        wanted = rng.randint(1, 12)
        while len(acked) < wanted:
            words = proc.stdout.readline().split()
            if not words:
                raise RuntimeError(f"the child died on its own (exit {proc.poll()})")
            if words[0] == "ack":
                acked.add(int(words[1]))
        time.sleep(rng.uniform(0, 0.03))  # land anywhere: mid-journal, mid-commit
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        rest, _ = proc.communicate()
    for line in rest.splitlines():  # acks printed before the kill landed
        words = line.split()
        if words and words[0] == "ack":
            acked.add(int(words[1]))
    return acked


def check(root: Path, journal: Path, acked: set[int], original: str) -> dict[str, Any]:
    """Replay and compare: the acked edits not recovered, torn files, temp files left."""
    counts: dict[str, Any] = {"lost": set(), "torn_files": 0, "temp_files_left": 0}
    ws = ShadowWorkspace(root, journal, watch=False)
    try:
        recovered: set[int] = set()
        for name in FILES:
            on_disk = edit_numbers((root / name).read_text(), original)
            doc = ws.document(path_to_uri((root / name).absolute()))
            shadow = on_disk if doc is None else edit_numbers(doc.text, original)
            if on_disk is None or shadow is None:
                counts["torn_files"] += 1
                continue
            recovered |= set(shadow)
        counts["lost"] = acked - recovered
        counts["temp_files_left"] = len([p for p in root.iterdir() if p.name.endswith(TEMP_SUFFIX)])
    finally:
        ws.close()
    return counts


def run(args: argparse.Namespace) -> dict[str, Any]:
    trials, lines, seed = args.trials, args.lines, args.seed
    base = Path(tempfile.mkdtemp(prefix="sttk-"))
    original = body(lines)
    totals = {"torn_files": 0, "temp_files_left": 0}
    lost: set[int] = set()
    acked_by_mode: dict[str, set[int]] = {"journal": set(), "commit": set()}
    rng = random.Random(seed)
    started = time.perf_counter()
    try:
        for trial in range(trials):
            mode = "commit" if trial % 2 else "journal"
            root, journal = base / mode / "root", base / mode / "state"
            if not root.exists():
                root.mkdir(parents=True)
                for name in FILES:
                    (root / name).write_text(original)
            acked = acked_by_mode[mode]
            acked |= kill_one(root, journal, mode, trial * 1000, rng)
            # Acked edits of earlier trials stay in the shadow or on disk: check all of them.
            counts = check(root, journal, acked, original)
            lost |= counts.pop("lost")
            for key, value in counts.items():
                totals[key] += value
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return {
        "trials": trials,
        "lost_edits": len(lost),
        **totals,
        "acked_edits": sum(map(len, acked_by_mode.values())),
        "file_bytes": len(original.encode()),
        "seconds": round(time.perf_counter() - started, 1),
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--lines", type=int, default=20_000, help="lines per file")
    parser.add_argument("--seed", type=int, default=14)


def failures(figures: dict[str, Any]) -> list[str]:
    """The must-be-0 figures that are not 0."""
    return [key for key in ("lost_edits", "torn_files", "temp_files_left") if figures[key]]


if __name__ == "__main__":
    root, journal, mode, start = sys.argv[1:5]
    child(Path(root), Path(journal), mode, int(start))
