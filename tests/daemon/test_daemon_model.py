"""The one daemon test with the real model: the status answers while the embedded
SmolLM2 GGUF loads in the background, then shows the engine ready."""

from __future__ import annotations

import time
from typing import Any

import pytest
from daemon_helpers import DaemonEnv
from shadowtab.daemon.client import request, start_daemon

LOAD_TIMEOUT_S = 180


def test_real_model_loads_in_the_background(
    daemon_env: DaemonEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHADOWTAB_ENGINE_KIND", "llama.cpp")
    monkeypatch.setenv("SHADOWTAB_THREADS", "2")
    status = start_daemon(timeout=30)
    daemon_env.seen_pids.add(status["pid"])
    states: list[str] = []
    deadline = time.monotonic() + LOAD_TIMEOUT_S
    engine: dict[str, Any] = {}
    while time.monotonic() < deadline:
        engine = request("status", timeout=10)["engine"]
        states.append(engine["state"])
        if engine["state"] in {"ready", "failed"}:
            break
        assert 0.0 <= engine["progress"] <= 1.0
        time.sleep(0.2)
    assert engine["state"] == "ready", engine
    assert states[0] in {"starting", "loading"}  # status answered before the model was in
    assert engine["progress"] == 1.0
    assert engine["model"]
    done = daemon_env.cli("daemon", "status")
    assert "model:          ready" in done.stdout
