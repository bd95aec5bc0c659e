"""The daemon's threads by kind (daemon/thread_census.py): a pool's workers are told
apart from the threads of its own, a pool made twice counts twice, and a wait on a
child is a kind of its own. Real threads, counted over the ones each test made (other
tests' threads may come and go meanwhile); one check of the whole process."""

from __future__ import annotations

import asyncio
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from shadowtab.daemon.thread_census import census_of, thread_census


def _census(prefix: str) -> dict[str, int]:
    names = [t.name for t in threading.enumerate() if t.name.startswith(prefix)]
    return census_of(names, len(names))


def test_pool_workers_and_own_threads_are_counted_apart() -> None:
    stop = threading.Event()
    own = threading.Thread(target=stop.wait, name="census-a-own", daemon=True)
    own.start()
    pool = ThreadPoolExecutor(3, thread_name_prefix="census-a-pool")
    started = threading.Barrier(4)
    try:
        for _ in range(3):  # all three busy at once: the pool starts three workers
            pool.submit(started.wait, 5)
        started.wait(5)
        census = _census("census-a-")
        assert census == {"total": 4, "pools": 1, "pool_workers": 3, "child_waits": 0, "own": 1}
    finally:
        stop.set()
        pool.shutdown()
        own.join(5)


def test_a_pool_made_again_counts_as_one_more_pool() -> None:
    pools = [ThreadPoolExecutor(1, thread_name_prefix="census-b") for _ in range(2)]
    try:
        for pool in pools:
            pool.submit(int).result(5)
        census = _census("census-b")
        assert census["pools"] == 2 and census["pool_workers"] == 2 and census["own"] == 0
    finally:
        for pool in pools:
            pool.shutdown()


@pytest.mark.skipif(
    sys.version_info >= (3, 12), reason="asyncio waits for children with pidfds, no thread"
)
def test_a_wait_on_a_child_process_is_its_own_kind() -> None:
    async def census_while_a_child_runs() -> dict[str, int]:
        child = await asyncio.create_subprocess_exec("sleep", "1")
        try:
            return _census("asyncio-waitpid-")  # asyncio's child watcher names them so
        finally:
            child.kill()
            await child.wait()

    census = asyncio.run(census_while_a_child_runs())
    assert census["child_waits"] >= 1 and census["own"] == 0


def test_the_whole_process_adds_up() -> None:
    census = thread_census()
    assert census["own"] >= 1  # this thread
    assert census["total"] == census["own"] + census["pool_workers"] + census["child_waits"]
