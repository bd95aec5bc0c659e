"""A lint cancelled by a newer text kills its linters without taking their exit from
asyncio's child watcher, and waits for that exit without hanging. Popen.kill() polls
first and reaped a child that had just exited: asyncio then logged "Unknown child process
pid ..., will report returncode 255" (issue 44's long runs; about twice in 300 cancelled
lints). And a linter's output left unread past the stream's limit paused its pipe, whose
end Process.wait() then waited for forever (one to three of 300 with the kill fixed)."""

from __future__ import annotations

import asyncio
import logging
import random
from pathlib import Path

import pytest
from shadowtab.shadow_workspace.linting import DEFAULT_LINTERS, lint_text

ROUNDS = 300
TEXT = "import os\n" * 200


async def test_cancelled_lints_leave_no_child_to_the_wrong_reaper(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="asyncio")
    rng = random.Random(44)
    lints = []
    for _ in range(ROUNDS):
        lint = asyncio.ensure_future(lint_text(DEFAULT_LINTERS, tmp_path / "a.py", TEXT, "python"))
        await asyncio.sleep(rng.uniform(0.0, 0.03))  # cancelled at every stage of its run
        lint.cancel()
        lints.append(lint)
    # a lint that waits for its killed linter forever fails here, not at pytest's timeout
    results = await asyncio.wait_for(asyncio.gather(*lints, return_exceptions=True), 120)
    assert any(isinstance(r, asyncio.CancelledError) for r in results)
    await asyncio.sleep(0.5)  # the watcher's threads report the last exits
    unknown = [r.getMessage() for r in caplog.records if "Unknown child" in r.getMessage()]
    assert unknown == []
