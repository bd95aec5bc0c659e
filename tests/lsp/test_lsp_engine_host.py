"""EngineHost on the real model in both of its modes: in a worker process (the default)
and inline (engine.process = "inline"), with the state, progress and status that
`daemon status` and the work-done progress read."""

from __future__ import annotations

import asyncio
import os

import pytest
from lsp_helpers import eventually
from shadowtab.inference import EngineOptions, LlamaCppEngine
from shadowtab.inference.engines.worker import WorkerEngine
from shadowtab.lsp.engine_host import EngineHost

# Model loads niced under other work on 2 cores have taken minutes; a hang still fails.
pytestmark = pytest.mark.timeout(900)

LOAD_TIMEOUT_S = 120


@pytest.mark.parametrize("process", ["worker", "inline"])
async def test_host_loads_and_reports_where_the_engine_runs(process: str) -> None:
    options = EngineOptions(context_size=512, kv_cache_mb=8, threads=1, process=process)  # type: ignore[arg-type]
    host = EngineHost(options, predictor=None)
    changes: list[str] = []
    host.start(asyncio.get_running_loop(), lambda: changes.append(host.state))
    try:
        await eventually(lambda: host.state in ("ready", "failed"), LOAD_TIMEOUT_S, 0.05)
        status = host.status()
        assert status["state"] == "ready" and status["progress"] == 1.0, status
        assert status["process"] == process
        engine = host.get_engine()
        expected = WorkerEngine if process == "worker" else LlamaCppEngine
        assert isinstance(engine, expected)
        assert engine.complete("def f(x):", max_tokens=4).texts
        await eventually(lambda: "ready" in changes, 10)  # the loop heard of it
        if process == "worker":
            assert status["worker"]["pid"] not in (None, os.getpid())
            assert status["worker"]["restarts"] == 0
            assert host.stats()["engine_stats"]["worker"]["pid"] == status["worker"]["pid"]
        else:
            assert status["worker"] is None
    finally:
        await asyncio.to_thread(host.close)
    if process == "worker":
        with pytest.raises(ProcessLookupError):
            os.kill(status["worker"]["pid"], 0)  # the worker ended with the host


def test_engine_off_starts_no_worker() -> None:
    host = EngineHost(EngineOptions(kind="off"), predictor=None)
    assert host.state == "off" and host.status()["process"] == "none"
    assert host.worker is None
