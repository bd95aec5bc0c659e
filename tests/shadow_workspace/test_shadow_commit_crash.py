"""Crash test of `lock take --commit` with deletes and renames: a child process commits the
agent's change set (a module created, one renamed, one deleted, imports edited, an
executable moved) and is killed with SIGKILL at every step boundary of the commit (it
kills itself at its N-th file system call) and at random times. After each kill the
workspace is opened again (which finishes an interrupted commit from its intent file):
the disk holds the old tree with the whole change set still pending, or the new tree
with nothing pending, never a mix, and no temp file is left.

`python tests/shadow_workspace/test_shadow_commit_crash.py [ROUNDS]` runs 100 rounds
(the issue's count) and prints what the kills left; the test runs fewer."""

from __future__ import annotations

import collections
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from file_ops_helpers import agent_changes, make_tree, texts
from shadowtab.shadow_workspace import ShadowWorkspace
from shadowtab.shadow_workspace.agent_file_ops import apply_changes

DRIVER = Path(__file__).with_name("commit_crash_driver.py")
STEPS = 36  # file system calls of one commit (35 here): the kill points cycle through them
Tree = dict[str, tuple[str, int]]
TEST_ROUNDS = 72  # every step boundary once, and as many random times: about 35 s


def pending_set(root: Path, journal: Path) -> str:
    """The change set put into the shadow (journaled) by a process that then exits."""
    ws = ShadowWorkspace(root, journal, watch=False, index_project=False)
    try:
        apply_changes(ws, agent_changes(root), take=True)
        return ws.pending_diff()
    finally:
        ws.close()


def new_tree(folder: Path) -> Tree:
    """The tree a commit that is not killed leaves."""
    make_tree(folder / "project")
    pending_set(folder / "project", folder / "state")
    ws = ShadowWorkspace(folder / "project", folder / "state", watch=False, index_project=False)
    try:
        assert ws.take("commit").ok
    finally:
        ws.close()
    return texts(folder / "project")


def kill_commit(root: Path, journal: Path, die_at: int, rng: random.Random) -> bool:
    """Run the committing child until it is killed; False when it finished first."""
    proc = subprocess.Popen(
        [sys.executable, str(DRIVER), str(root), str(journal), str(die_at)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "ready"
        if die_at == 0:
            time.sleep(rng.uniform(0, 0.004))
            os.kill(proc.pid, signal.SIGKILL)
        rest, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode == -signal.SIGKILL and "done" not in rest


def one_round(folder: Path, die_at: int, rng: random.Random, new: Tree) -> str:
    """One kill; "old" or "new": what the disk holds after the restart."""
    root, journal = folder / "project", folder / "state"
    make_tree(root)
    old = texts(root)
    diff = pending_set(root, journal)
    killed = kill_commit(root, journal, die_at, rng)
    ws = ShadowWorkspace(root, journal, watch=False, index_project=False)  # recovers
    try:
        found = texts(root)
        assert found in (old, new), f"a mix on disk after a kill at {die_at}: {found}"
        if found == old:
            assert ws.pending_diff() == diff, "the pending change set was not kept whole"
        else:
            assert not ws.has_pending(), ws.pending_diff()
        leftovers = [p for p in folder.rglob("*") if p.name.endswith((".shadowtab", ".commit"))]
        assert not leftovers, leftovers
    finally:
        ws.close()
    return ("old" if found == old else "new") + ("" if killed else " (not killed)")


def run_rounds(base: Path, rounds: int, seed: str = "commit-crash") -> collections.Counter[str]:
    """Every other round kills at the next step boundary, the others at a random time."""
    rng = random.Random(seed)
    new = new_tree(base / "clean")
    outcomes: collections.Counter[str] = collections.Counter()
    for number in range(rounds):
        die_at = 1 + (number // 2) % STEPS if number % 2 == 0 else 0
        outcomes[one_round(base / f"round{number}", die_at, rng, new)] += 1
    return outcomes


def test_sigkill_during_the_commit_leaves_the_old_tree_or_the_new_one(tmp_path: Path) -> None:
    outcomes = run_rounds(tmp_path, TEST_ROUNDS)
    assert outcomes["old"] and outcomes["new"], outcomes  # kills landed before and after


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch:
        result = run_rounds(Path(scratch), count)
    print(f"{count} rounds in {time.monotonic() - started:.1f} s: {dict(result)}")
