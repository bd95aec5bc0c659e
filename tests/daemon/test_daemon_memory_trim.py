"""The daemon hands freed heap pages back to the OS (glibc keeps them otherwise)."""

from __future__ import annotations

import asyncio
import sys

import pytest
from shadowtab.daemon import memory_trim


def _rss_kb() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_trimming_returns_freed_blocks_to_the_os() -> None:
    # Blocks above pymalloc's 512 bytes (so glibc's), freed, with a survivor at the top of
    # the heap: glibc cannot shrink the heap past it, so the pages stay resident (114 MB
    # here) until malloc_trim (22 MB).
    blocks = [bytearray(2000) for _ in range(50_000)]
    survivor = bytearray(2000)
    del blocks
    before = _rss_kb()
    assert memory_trim.trim_once()
    assert _rss_kb() < before - 20_000, "malloc_trim released less than 20 MB"
    del survivor


async def test_the_periodic_trim_runs_until_cancelled(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def counted() -> bool:
        calls.append(1)
        return True

    monkeypatch.setattr(memory_trim, "trim_once", counted)
    task = asyncio.create_task(memory_trim.trim_periodically(0.01))
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(calls) >= 3
