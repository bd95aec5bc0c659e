"""The one daemon test with the real model: the status answers while the embedded
SmolLM2 GGUF loads in the background, then shows the engine ready."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from daemon_helpers import DaemonEnv
from shadowtab.daemon.client import request, start_daemon
from shadowtab.daemon.config import Settings

LOAD_TIMEOUT_S = 180


def test_real_model_loads_in_the_background(
    daemon_env: DaemonEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHADOWTAB_ENGINE_KIND", "llama.cpp")
    monkeypatch.setenv("SHADOWTAB_ENGINE_WEIGHTS", "q8_0")  # not measured: not tested here
    monkeypatch.setenv("SHADOWTAB_ENGINE_THREADS", "2")
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
    assert engine["kind"] == "llama.cpp" and engine["device"] == "cpu"
    done = daemon_env.cli("daemon", "status")
    assert "model:          ready" in done.stdout
    assert "engine:         llama.cpp on cpu" in done.stdout
    worker = engine["worker"]  # the model runs in the engine worker, not in the daemon
    assert engine["process"] == "worker" and worker["pid"] not in (None, status["pid"])
    assert f"engine worker:  pid {worker['pid']}, 0 restarts" in done.stdout
    assert "daemon threads: " in done.stdout and " own, " in done.stdout
    # the packaged Q4_1 converted to the default weight type; threads as chosen now
    assert engine["weights"] == "q8_0" and "weights:        q8_0" in done.stdout
    if engine["adapter"]:  # engine.merge_adapter: in the converted weights, not attached
        assert engine["adapter_merged"] and "merged into the weights" in done.stdout
        # the packaged model and adapter: ghost text's learned gate, fitted for them, is used
        assert engine["ghost_gate"].startswith("on") and "ghost gate:     on" in done.stdout
    assert engine["threads"] >= 1 and f"threads:        {engine['threads']}" in done.stdout
    # set by SHADOWTAB_ENGINE_THREADS above: fixed, and the status line says so
    assert engine["threads_adaptive"] is False
    assert "threads:        2 (engine.threads)" in done.stdout
    # propagation's learned gate needs no model: it is on with any engine
    assert engine["propagation_gate"] == "gate on (threshold 0.80)"
    assert "propagation:    gate on (threshold 0.80)" in done.stdout
    kv_type = Settings().engine.kv_type  # the KV cache's element type (engine.kv_type)
    assert engine["kv_type"] == kv_type and f"kv cache:       {kv_type}" in done.stdout


def test_openai_engine_status_names_server_and_model_never_the_key(
    daemon_env: DaemonEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-daemon-secret-42"
    with models_server(secret) as url:
        monkeypatch.setenv("SHADOWTAB_ENGINE_KIND", "openai")
        monkeypatch.setenv("SHADOWTAB_ENGINE_BASE_URL", url)
        monkeypatch.setenv("SHADOWTAB_ENGINE_API_KEY", secret)
        status = start_daemon(timeout=30)
        daemon_env.seen_pids.add(status["pid"])
        deadline = time.monotonic() + 30
        while (engine := request("status", timeout=10))["engine"]["state"] != "ready":
            assert engine["engine"]["state"] != "failed", engine
            assert time.monotonic() < deadline
            time.sleep(0.2)
        described = request("status", timeout=10)
        assert described["engine"]["kind"] == "openai"
        assert described["engine"]["model"] == "served-model"
        assert described["engine"]["device"] == "server"
        done = daemon_env.cli("daemon", "status", "--json")
        assert secret not in json.dumps(described) and secret not in done.stdout
        assert secret not in Path(described["log_file"]).read_text()


@contextmanager
def models_server(key: str) -> Iterator[str]:
    """Just enough of an OpenAI server for the engine to start: GET /v1/models."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return None

        def do_GET(self) -> None:
            ok = self.headers.get("Authorization") == f"Bearer {key}"
            body = json.dumps({"object": "list", "data": [{"id": "served-model"}]}).encode()
            self.send_response(200 if ok else 401)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
