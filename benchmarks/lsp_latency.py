"""Round trip of didChange + textDocument/inlineCompletion on a 1,000-line file: through
the `shadowtab lsp` pump and a daemon's socket session vs `--standalone` on stdio.

The predictor is a FixedPredictor, so this measures the server's own overhead (framing,
dispatch, shadow sync, the worker-thread hop, the candidate check), not the model.
Prints one JSON line.

    python -m benchmarks.lsp_latency [--iterations 300]

Paths measured, each a separate server process:
  standalone    `--standalone`-style: the Hub serving one session on stdio
  pump_socket   the real pump (shadowtab.daemon.cli.lsp.pump) -> unix socket -> Hub
                session, exactly the daemon's LSP path (Hub.serve_connection)
  daemon        `shadowtab lsp` -> the real daemon (engine off: it has no predictor, so
                the request skips the worker thread; the pump and daemon cost is there)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

FILE_LINES = 1000
TARGET_P50_MS = 5.0
HERE = Path(__file__).resolve()


def build_hub(state: Path) -> Any:
    from shadowtab.inference import EngineOptions
    from shadowtab.inference.next_edit.predictor import FixedPredictor
    from shadowtab.lsp.hub import Hub, HubOptions

    options = HubOptions(
        state_dir=state,
        engine=EngineOptions(kind="off"),
        linters={},
        predictor=FixedPredictor(inline_texts=["value + 1"]),
    )
    return Hub(options)


async def serve_stdio(state: Path) -> None:
    hub = build_hub(state)
    await hub.start()
    try:
        await hub.serve_stdio()
    finally:
        await hub.close()


async def serve_socket(path: str, state: Path) -> None:
    hub = build_hub(state)
    await hub.start()
    server = await asyncio.start_unix_server(hub.serve_connection, path)
    async with server:
        await server.serve_forever()


def run_pump(path: str) -> int:
    from shadowtab.daemon.cli.lsp import pump

    for _ in range(200):
        if os.path.exists(path):
            break
        time.sleep(0.05)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    return pump(conn, sys.stdin.buffer.fileno(), sys.stdout.buffer.fileno())


class Client:
    """A minimal framed JSON-RPC client: the benchmark should time the server, not a
    client library."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = 0
        while line := (await self.process.stdout.readline()).strip():
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        message: dict[str, Any] = json.loads(await self.process.stdout.readexactly(length))
        return message

    async def call(self, method: str, params: Any) -> dict[str, Any]:
        self.next_id += 1
        msg_id = self.next_id
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        while True:
            message = await self.read()
            if "method" in message and "id" in message:
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif message.get("id") == msg_id and "method" not in message:
                return message

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})


async def measure(
    command: list[str], env: dict[str, str], root: Path, iterations: int
) -> dict[str, Any]:
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
        cwd=root,
        limit=2**24,
    )
    client = Client(process)
    try:
        return await _round_trips(client, root, iterations)
    finally:
        client.notify("exit", None)
        try:
            await asyncio.wait_for(process.wait(), 10)
        except TimeoutError:
            process.kill()
            await process.wait()


async def _round_trips(client: Client, root: Path, iterations: int) -> dict[str, Any]:
    init = await client.call(
        "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
    )
    assert "result" in init, init
    client.notify("initialized", {})
    path = root / "big.py"
    text = "".join(
        f"value_{i} = {i}  # line {i} of a thousand-line file\n" for i in range(FILE_LINES)
    )
    path.write_text(text)
    uri = path.as_uri()
    open_params = {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}
    client.notify("textDocument/didOpen", open_params)
    line, samples = FILE_LINES // 2, []
    warmup = max(10, iterations // 10)
    for i in range(iterations + warmup):
        column = 10 + i % 20
        start = time.perf_counter()
        client.notify("textDocument/didChange", _insert(uri, i + 2, line, column))
        reply = await client.call("textDocument/inlineCompletion", _inline(uri, line, column + 1))
        elapsed = time.perf_counter() - start
        assert "result" in reply, reply
        if i >= warmup:
            samples.append(elapsed * 1000)
    await client.call("shutdown", None)
    samples.sort()
    return {
        "p50_ms": round(statistics.median(samples), 3),
        "p99_ms": round(samples[min(len(samples) - 1, int(len(samples) * 0.99))], 3),
        "mean_ms": round(statistics.fmean(samples), 3),
    }


def _insert(uri: str, version: int, line: int, column: int) -> dict[str, Any]:
    position = {"line": line, "character": column}
    return {
        "textDocument": {"uri": uri, "version": version},
        "contentChanges": [{"range": {"start": position, "end": position}, "text": "x"}],
    }


def _inline(uri: str, line: int, column: int) -> dict[str, Any]:
    return {
        "context": {"triggerKind": 2},
        "textDocument": {"uri": uri},
        "position": {"line": line, "character": column},
    }


def fresh_env(base: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHADOWTAB_")}
    for name, sub in (("RUNTIME", "run"), ("STATE", "state"), ("CONFIG", "cfg"), ("DATA", "data")):
        env[f"SHADOWTAB_{name}_DIR"] = str(base / sub)
    env["SHADOWTAB_ENGINE_KIND"] = "off"
    return env


async def run_all(iterations: int) -> dict[str, Any]:
    base = Path(tempfile.mkdtemp(prefix="stbench-", dir="/tmp"))
    root = base / "proj"
    (root / ".git").mkdir(parents=True)
    env = fresh_env(base)
    py = sys.executable
    sock = str(base / "lsp.sock")
    socket_server = subprocess.Popen([py, str(HERE), "--serve-socket", sock], env=env)
    results: dict[str, Any] = {}
    try:
        results["standalone"] = await measure(
            [py, str(HERE), "--serve-stdio"], env, root, iterations
        )
        results["pump_socket"] = await measure(
            [py, str(HERE), "--pump", sock], env, root, iterations
        )
        daemon = [py, "-m", "shadowtab.daemon.cli", "lsp"]
        results["daemon"] = await measure(daemon, env, root, iterations)
    finally:
        socket_server.terminate()
        socket_server.wait()
        stop = [py, "-m", "shadowtab.daemon.cli", "daemon", "stop"]
        subprocess.run(stop, env=env, capture_output=True, timeout=60, check=False)
        shutil.rmtree(base, ignore_errors=True)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--serve-stdio", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--serve-socket", metavar="PATH", help=argparse.SUPPRESS)
    parser.add_argument("--pump", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args()
    state = Path(os.environ.get("SHADOWTAB_STATE_DIR", tempfile.gettempdir()))
    if args.serve_stdio:
        asyncio.run(serve_stdio(state))
        return 0
    if args.serve_socket:
        asyncio.run(serve_socket(args.serve_socket, state))
        return 0
    if args.pump:
        return run_pump(args.pump)
    results = asyncio.run(run_all(args.iterations))
    line = {
        "benchmark": "lsp_latency",
        "round_trip": "didChange + textDocument/inlineCompletion",
        "file_lines": FILE_LINES,
        "iterations": args.iterations,
        "predictor": "FixedPredictor",
        **results,
        "pump_over_standalone_p50": round(
            results["pump_socket"]["p50_ms"] / results["standalone"]["p50_ms"], 2
        ),
        "target_p50_ms": TARGET_P50_MS,
        "meets_target": all(r["p50_ms"] < TARGET_P50_MS for r in results.values()),
    }
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
