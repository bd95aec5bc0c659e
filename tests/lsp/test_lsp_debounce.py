"""The one debouncer of the server: only the last of a burst of triggers runs, once the
burst pauses; a cancelled key never runs."""

from __future__ import annotations

import asyncio

from shadowtab.lsp.debounce import Debouncer


async def test_a_burst_of_triggers_runs_once_with_the_last_arguments() -> None:
    runs: list[tuple[str, int]] = []
    debouncer = Debouncer(0.02, lambda key, n: runs.append((key, n)))
    for n in range(5):
        debouncer.trigger("a", n)
        await asyncio.sleep(0.005)
    debouncer.trigger("b", 9, delay_s=0)
    await asyncio.sleep(0.06)
    assert sorted(runs) == [("a", 4), ("b", 9)]
    assert debouncer.pending() == []


async def test_cancel_and_close_drop_what_waits() -> None:
    runs: list[str] = []
    debouncer = Debouncer(0.01, runs.append)
    debouncer.trigger("a")
    debouncer.trigger("b")
    debouncer.cancel("a")
    debouncer.close()
    await asyncio.sleep(0.03)
    assert runs == []
