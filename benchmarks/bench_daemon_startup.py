"""How fast the daemon comes up and goes down, in fresh temp dirs.

Measures, over several rounds, the time from spawning `shadowtab daemon start` to the
first `status` reply (the issue asks for under a second), the time until the engine
reports its final state (engine "off" by default; --model loads the embedded GGUF), and
the time `shadowtab daemon stop` takes. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CLI = [sys.executable, "-m", "shadowtab.daemon.cli"]


def _fresh_env(base: Path, engine_kind: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHADOWTAB_")}
    for name, sub in (("RUNTIME", "run"), ("STATE", "state"), ("CONFIG", "cfg"), ("DATA", "data")):
        env[f"SHADOWTAB_{name}_DIR"] = str(base / sub)
    env["SHADOWTAB_ENGINE_KIND"] = engine_kind
    # a fresh data dir: "auto" would measure the weight types first (once per machine)
    env["SHADOWTAB_ENGINE_WEIGHTS"] = "q8_0"
    env["SHADOWTAB_ENGINE_MERGE_ADAPTER"] = "0"  # the start of a converted model, as before
    return env


def _poll_status(control_socket: Path) -> dict[str, Any] | None:
    # In-process (no interpreter start per poll): the socket answer is what we time.
    from shadowtab.daemon.client import ControlError, DaemonNotRunning, request

    try:
        return request("status", timeout=5, socket_path=control_socket)
    except (DaemonNotRunning, ControlError):
        return None


def one_round(engine_kind: str) -> dict[str, float]:
    base = Path(tempfile.mkdtemp(prefix="stbench-", dir="/tmp"))
    env = _fresh_env(base, engine_kind)
    control_socket = base / "run" / "control.sock"
    try:
        started = time.perf_counter()
        starter = subprocess.Popen([*CLI, "daemon", "start"], env=env, stdout=subprocess.DEVNULL)
        while (status := _poll_status(control_socket)) is None:
            time.sleep(0.005)
        first_status = time.perf_counter() - started
        starter.wait(30)
        start_cli = time.perf_counter() - started
        while status["engine"]["state"] in {"starting", "loading"}:
            time.sleep(0.02)
            status = _poll_status(control_socket) or status
        engine_final = time.perf_counter() - started
        assert status["engine"]["state"] in {"off", "ready"}, status["engine"]
        stop_started = time.perf_counter()
        subprocess.run([*CLI, "daemon", "stop"], env=env, check=True, stdout=subprocess.DEVNULL)
        stop = time.perf_counter() - stop_started
        return {
            "first_status_s": first_status,
            "start_cli_s": start_cli,
            "engine_final_s": engine_final,
            "stop_s": stop,
        }
    finally:
        subprocess.run([*CLI, "daemon", "stop"], env=env, capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--model", action="store_true", help="load the embedded model")
    args = parser.parse_args()
    engine_kind = "llama.cpp" if args.model else "off"
    rounds = [one_round(engine_kind) for _ in range(args.rounds)]
    result: dict[str, Any] = {"benchmark": "daemon_startup", "engine": engine_kind}
    result["rounds"] = args.rounds
    for key in rounds[0]:
        values = [r[key] for r in rounds]
        result[f"{key}_median"] = round(statistics.median(values), 3)
        result[f"{key}_max"] = round(max(values), 3)
    result["first_status_under_1s"] = result["first_status_s_max"] < 1.0
    print(json.dumps(result))


if __name__ == "__main__":
    main()
