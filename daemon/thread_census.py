"""The daemon's threads by kind, for `daemon status` and the leak checks of the torture
runs. A thread is one of three kinds:

- a worker of a thread pool (`concurrent.futures` names them PREFIX_N): a pool starts
  them on demand up to its size and keeps them, so their number grows for a while and
  is bounded by the pools' sizes; a pool made per request instead of once would show as
  one more pool (one more PREFIX_0) each time;
- a wait on a child process (asyncio's child watcher starts one per running linter and
  ends it with the child);
- the daemon's own (the event loop's, the log's size check, the engine's host, the
  project index...): one per service, so their number stays flat while the daemon runs.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

POOL_WORKER = re.compile(r"_\d+$")
CHILD_WAIT = "waitpid-"


def thread_census() -> dict[str, int]:
    """This process's threads: `total` (the kernel's count: threads of native code
    included), `pools`, `pool_workers`, `child_waits` and `own` (the rest)."""
    names = [thread.name for thread in threading.enumerate()]
    return census_of(names, max(_kernel_thread_count() or 0, len(names)))


def census_of(names: list[str], total: int) -> dict[str, int]:
    """The census of threads named `names`, of `total` threads in all."""
    pool_workers = sum(1 for name in names if POOL_WORKER.search(name))
    child_waits = sum(1 for name in names if CHILD_WAIT in name)
    return {
        "total": total,
        "pools": sum(1 for name in names if name.endswith("_0")),
        "pool_workers": pool_workers,
        "child_waits": child_waits,
        "own": total - pool_workers - child_waits,
    }


def _kernel_thread_count() -> int | None:
    """Threads of this process as the kernel counts them; None off Linux."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return None
    found = re.search(r"^Threads:\s+(\d+)$", status, re.MULTILINE)
    return int(found.group(1)) if found else None
