"""The daemon's threads by kind (daemon/thread_census.py): a pool's workers are told
apart from the threads of its own, and a pool made twice counts twice."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

from shadowtab.daemon.thread_census import thread_census


def test_pool_workers_and_own_threads_are_counted_apart() -> None:
    before = thread_census()
    stop = threading.Event()
    own = threading.Thread(target=stop.wait, name="census-own", daemon=True)
    own.start()
    pool = ThreadPoolExecutor(3, thread_name_prefix="census-pool")
    started = threading.Barrier(4)
    try:
        for _ in range(3):  # all three busy at once: the pool starts three workers
            pool.submit(started.wait, 5)
        started.wait(5)
        after = thread_census()
        assert after["own"] == before["own"] + 1
        assert after["pool_workers"] == before["pool_workers"] + 3
        assert after["pools"] == before["pools"] + 1
        assert after["total"] == before["total"] + 4
    finally:
        stop.set()
        pool.shutdown()
        own.join(5)


def test_a_pool_made_again_counts_as_one_more_pool() -> None:
    before = thread_census()
    pools = [ThreadPoolExecutor(1, thread_name_prefix="census-again") for _ in range(2)]
    try:
        for pool in pools:
            pool.submit(int).result(5)
        after = thread_census()
        assert after["pools"] == before["pools"] + 2
        assert after["own"] == before["own"]
    finally:
        for pool in pools:
            pool.shutdown()


def test_a_wait_on_a_child_process_is_its_own_kind() -> None:
    async def census_while_a_child_runs() -> dict[str, int]:
        child = await asyncio.create_subprocess_exec("sleep", "1")
        try:
            return thread_census()
        finally:
            child.kill()
            await child.wait()

    before = thread_census()
    during = asyncio.run(census_while_a_child_runs())
    assert during["child_waits"] == before["child_waits"] + 1
    assert during["own"] == before["own"]
