"""A child process for the commit crash test: it opens a journaled ShadowWorkspace
(finishing any commit a kill interrupted, replaying the pending change set), prints
"ready", then commits (`lock take --commit`). With a positive DIE_AT it SIGKILLs itself
at that many file system calls into the commit (os.write, fsync, replace, unlink,
rename), so the kills land on every step boundary; with 0 the test kills it at a random
time instead."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shadowtab.shadow_workspace import ShadowWorkspace

CALLS = ("write", "fsync", "replace", "unlink", "rename")


def die_at(count: int) -> None:
    """Wrap the os calls a commit makes: the `count`-th one is never made."""
    seen = [0]

    def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            seen[0] += 1
            if seen[0] >= count:
                os.kill(os.getpid(), signal.SIGKILL)
            return original(*args, **kwargs)

        return call

    for name in CALLS:
        setattr(os, name, wrap(getattr(os, name)))


def main(root: Path, journal_dir: Path, count: int) -> None:
    ws = ShadowWorkspace(root, journal_dir, watch=False, index_project=False)
    print("ready", flush=True)
    if count > 0:
        die_at(count)
    result = ws.take("commit")
    print(f"done {len(result.written)} {len(result.conflicts)}", flush=True)
    os._exit(0)  # no close: as abrupt as a kill after the commit


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]))
