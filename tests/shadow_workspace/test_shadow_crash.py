"""Crash test: a process holding a journaled shadow workspace is killed with SIGKILL at
random points, many times, while journaling and while committing. Afterwards every file
on disk is a whole version (never a torn mix) and every acknowledged edit is recovered."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from shadow_helpers import uri_of
from shadowtab.shadow_workspace import ShadowWorkspace

DRIVER = Path(__file__).with_name("shadow_crash_driver.py")
BODY = "".join(
    f"line_{i} = {i} * 2  # padding to make writes take a while\n" for i in range(40_000)
)
FILES = ["a.py", "b.py"]
EDIT_LINE = re.compile(r"edit (\d+)\n")


def parse_version(text: str) -> list[int]:
    """The edit numbers at the head of a whole version; fails on a torn file."""
    numbers = []
    rest = text
    while match := EDIT_LINE.match(rest):
        numbers.append(int(match.group(1)))
        rest = rest[match.end() :]
    assert rest == BODY, "a torn or mixed file"
    return numbers


def run_and_kill(
    root: Path, journal: Path, mode: str, start: int, rng: random.Random
) -> list[tuple[int, str]]:
    """Start the driver, let it ack some edits, SIGKILL it; returns the acked edits."""
    proc = subprocess.Popen(
        [sys.executable, str(DRIVER), str(root), str(journal), mode, str(start), *FILES],
        stdout=subprocess.PIPE,
        text=True,
    )
    acked: list[tuple[int, str]] = []
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        wanted = rng.randint(1, 12)
        while len(acked) < wanted:
            line = proc.stdout.readline()
            assert line, f"the driver died on its own (exit {proc.poll()})"
            words = line.split()
            if words and words[0] == "ack":
                acked.append((int(words[1]), words[2]))
        time.sleep(rng.uniform(0, 0.03))  # land anywhere: mid-journal, mid-commit
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        rest, _ = proc.communicate()
    for line in rest.splitlines():  # acks printed before the kill landed
        words = line.split()
        if words and words[0] == "ack":
            acked.append((int(words[1]), words[2]))
    return acked


@pytest.mark.parametrize("mode", ["journal", "commit"])
def test_sigkill_loses_no_edit_and_tears_no_file(tmp_path: Path, mode: str) -> None:
    root, journal = tmp_path / "root", tmp_path / "state"
    root.mkdir()
    for name in FILES:
        (root / name).write_text(BODY)
    rng = random.Random(f"crash-{mode}")
    acked: dict[str, list[int]] = {name: [] for name in FILES}
    counter = 0
    for _round in range(20 if mode == "commit" else 12):
        for number, name in run_and_kill(root, journal, mode, counter, rng):
            acked[name].append(number)
        counter += 1000
        ws = ShadowWorkspace(root, journal, watch=False)
        try:
            for name in FILES:
                on_disk = parse_version((root / name).read_text())
                doc = ws.document(uri_of(root / name))
                shadow = on_disk if doc is None else parse_version(doc.text)
                if mode == "journal":
                    assert on_disk == [], "nothing reaches the disk while the model holds"
                assert set(acked[name]) <= set(shadow), f"{name}: an acked edit was lost"
                assert set(on_disk) <= set(shadow), f"{name}: the shadow lost committed edits"
            assert not list(root.glob(".*.shadowtab")), "a torn commit's temp file was left"
        finally:
            ws.close()
    assert sum(map(len, acked.values())) > 24
