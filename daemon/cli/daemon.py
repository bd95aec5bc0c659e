"""`shadowtab daemon start|stop|status|restart`."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from shadowtab.daemon.cli.exit_codes import EPILOG, EXIT_FAILURE, EXIT_OK, EXIT_USAGE

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    daemon = subparsers.add_parser(
        "daemon",
        help="start, stop or inspect the per-user daemon",
        description="Manage the per-user shadowtab daemon (model, shadow workspace, LSP).",
        epilog=EPILOG,
    )
    commands = daemon.add_subparsers(dest="daemon_command", metavar="ACTION", required=True)
    start = commands.add_parser(
        "start",
        help="start the daemon (no-op when it runs)",
        description="Start the daemon detached; reads shadowtab.toml from the user config "
        "dir and the current directory, then SHADOWTAB_* variables.",
        epilog=EPILOG,
    )
    start.add_argument(
        "--foreground", action="store_true", help="run in this process, log to stderr too"
    )
    _add_timeout(start, START_TIMEOUT_S, "how long to wait for the daemon to answer")
    start.set_defaults(func=run_start)
    stop = commands.add_parser(
        "stop", help="stop the daemon gracefully", description="Stop the daemon.", epilog=EPILOG
    )
    _add_timeout(stop, STOP_TIMEOUT_S, "graceful-stop time before the daemon is killed")
    stop.set_defaults(func=run_stop)
    status = commands.add_parser(
        "status",
        help="is it running, sockets, model state, log file",
        description="Show the daemon's state; exit 2 when it is not running.",
        epilog=EPILOG,
    )
    status.add_argument("--json", action="store_true", help="print one JSON object")
    status.set_defaults(func=run_status)
    restart = commands.add_parser(
        "restart", help="stop, then start", description="Stop, then start.", epilog=EPILOG
    )
    _add_timeout(restart, START_TIMEOUT_S, "time allowed for each of stop and start")
    restart.set_defaults(func=run_restart)


def _add_timeout(parser: argparse.ArgumentParser, default: float, what: str) -> None:
    parser.add_argument(
        "--timeout", type=float, default=default, metavar="S", help=f"{what} (default {default:g})"
    )


def _fail(message: str) -> int:
    print(f"shadowtab: {message}", file=sys.stderr)
    return EXIT_FAILURE


def run_start(args: argparse.Namespace) -> int:
    if args.foreground:
        return _run_foreground()
    from shadowtab.daemon.client import DaemonStartError, read_status, start_daemon
    from shadowtab.daemon.config import ConfigError

    already = read_status()
    try:
        status = already or start_daemon(args.timeout)
    except (ConfigError, DaemonStartError) as exc:
        return _fail(str(exc))
    state = "already running" if already else "started"
    print(f"shadowtab daemon {state} (pid {status['pid']}); log: {status['log_file']}")
    return EXIT_OK


def _run_foreground() -> int:
    from shadowtab.daemon.config import ConfigError, load_settings
    from shadowtab.daemon.launcher import run_daemon
    from shadowtab.daemon.runtime_files import DaemonLock, RuntimeFiles

    try:
        settings = load_settings(Path.cwd())
    except ConfigError as exc:
        return _fail(f"bad configuration: {exc}")
    files = RuntimeFiles.current()
    problem = files.socket_path_problem()
    if problem:
        return _fail(problem)
    if not DaemonLock(files.lock_file).try_acquire():
        return _fail("a daemon is already running (see `shadowtab daemon status`)")
    code = run_daemon(settings, files, foreground=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # the hub's leftover threads must not keep a stopped daemon alive


def run_stop(args: argparse.Namespace) -> int:
    from shadowtab.daemon.client import stop_daemon

    if not stop_daemon(args.timeout):
        print("shadowtab daemon is not running", file=sys.stderr)
        return EXIT_USAGE
    print("shadowtab daemon stopped")
    return EXIT_OK


def run_restart(args: argparse.Namespace) -> int:
    from shadowtab.daemon.client import DaemonStartError, restart_daemon
    from shadowtab.daemon.config import ConfigError

    try:
        status = restart_daemon(args.timeout)
    except (ConfigError, DaemonStartError) as exc:
        return _fail(str(exc))
    print(f"shadowtab daemon restarted (pid {status['pid']}); log: {status['log_file']}")
    return EXIT_OK


def run_status(args: argparse.Namespace) -> int:
    from shadowtab.daemon.client import ControlError, DaemonNotRunning, probe, request
    from shadowtab.daemon.runtime_files import RuntimeFiles

    found = probe()
    log_file = str(RuntimeFiles.current().log_file)
    reply: dict[str, Any] | None = None
    if found.status is not None:
        try:
            reply = request("status", timeout=5.0)
        except (DaemonNotRunning, ControlError) as exc:
            found = type(found)(None, f"not running ({exc})")
    if reply is None:
        _print_not_running(found.reason, log_file, args.json)
        return EXIT_USAGE
    reply.pop("ok", None)
    if args.json:
        print(json.dumps({"running": True, **reply}, default=str))
    else:
        _print_status(reply)
    return EXIT_OK


def _print_not_running(reason: str, log_file: str, as_json: bool) -> None:
    if as_json:
        print(json.dumps({"running": False, "reason": reason, "log_file": log_file}))
    else:
        print(f"shadowtab daemon: {reason}\nlog:            {log_file}")


def _threads_line(engine: dict[str, Any]) -> str:
    """The engine's threads now, and why: llama.cpp's threads wait for each other after
    every layer, so while other processes keep cores busy it runs fewer."""
    threads, most = engine["threads"], engine.get("threads_max")
    if engine.get("threads_adaptive") is False:
        return f"{threads} (engine.threads)"
    if most is None:
        return str(threads)
    busy = engine.get("others_busy_cores") or 0.0
    if threads < most:
        return f"{threads} of {most} (other processes keep {busy:.1f} cores busy)"
    return f"{threads} (one per core; other processes keep {busy:.1f} cores busy)"


def _weights_line(engine: dict[str, Any]) -> str:
    """The weight type; with engine.weights = "auto", what the measurement expected."""
    choice = engine.get("weights_choice")
    if not isinstance(choice, dict):
        return str(engine["weights"])
    expected = ", ".join(
        f"{name} {ms:.0f} ms" for name, ms in (choice.get("expected_next_edit_ms") or {}).items()
    )
    if choice.get("deferred"):
        busy = choice.get("others_busy_cores")
        return (
            f"{engine['weights']} (auto: not timed yet, other processes used {busy} cores; "
            "timed at a later start)"
        )
    line = f"{engine['weights']} (auto, measured on this CPU; expected next edit: {expected})"
    if choice.get("provisional"):
        busy = choice.get("others_busy_cores")
        line += f"; provisional: other processes used {busy} cores, measured again next start"
    return line


def _kv_line(engine: dict[str, Any]) -> str:
    """The KV cache's element type and cells, within the model's trained context."""
    line = str(engine["kv_type"])
    if engine.get("context_cells"):
        line += f", {engine['context_cells']} cells"
        line += f" (the model was trained on {engine.get('trained_context')})"
    return line


def _index_line(workspace: dict[str, Any]) -> str:
    """One workspace's project index: its state, what it holds, what it skipped and why."""
    index = workspace["project_index"]
    line = (
        f"{workspace.get('root', '')}: {index['state']}, {index['files']} files, "
        f"{index['windows']} windows, {index['definitions']} definitions"
    )
    if index.get("build_s") is not None:
        line += f", built in {index['build_s']} s"
    if index.get("skipped"):
        line += "; skipped: " + ", ".join(f"{k} {n}" for k, n in index["skipped"].items())
    for note in (index.get("stopped"), index.get("note")):
        if note:
            line += f"; {note}"
    return line


def _name_check_line(counts: dict[str, Any]) -> str:
    """What the name check did to suggestions, and how often it ran out of time."""
    line = ", ".join(f"{k.replace('_', ' ')} {n}" for k, n in counts.items() if k != "p50_ms")
    return line + (f", p50 {counts['p50_ms']} ms" if counts.get("p50_ms") is not None else "")


def _engine_line(engine: dict[str, Any]) -> str:
    line = f"{engine.get('kind', '?')} on {engine.get('device') or '-'}"
    return line + (f", adapter {engine['adapter']}" if engine.get("adapter") else "")


def _adapter_line(engine: dict[str, Any]) -> str:
    line = str(engine.get("adapter") or "none (base model only)")
    if engine.get("adapter_format"):
        line += f", prompt format {engine['adapter_format']}"
    if engine.get("adapter_merged"):
        line += ", merged into the weights"
    if engine.get("adapter_error"):
        line += f" ({engine['adapter_error']})"
    return line


def _worker_line(engine: dict[str, Any]) -> str:
    """Where the model runs: the worker's pid, its restarts and its last crash."""
    worker = engine.get("worker")
    if not isinstance(worker, dict):
        return str(engine.get("process") or "inline")
    line = f"pid {worker.get('pid') or '-'}, {worker.get('restarts', 0)} restarts"
    if worker.get("last_crash"):
        line += f", last crash: it {worker['last_crash']}"
    return line


def _census_line(census: dict[str, int]) -> str:
    """The daemon's threads (thread_census): its own, the pools' and the children's."""
    line = f"{census['total']}: {census['own']} own, {census['pool_workers']} in"
    line += f" {census['pools']} pools"
    return line + (f", {census['child_waits']} waiting on linters" if census["child_waits"] else "")


def _print_status(reply: dict[str, Any]) -> None:
    engine = reply.get("engine", {})
    model_state = engine.get("state", "?")
    if model_state == "loading":
        model_state += f" {100 * float(engine.get('progress') or 0):.0f}%"
    if engine.get("error"):
        model_state += f" ({engine['error']})"
    lines = [
        f"shadowtab daemon: running (pid {reply['pid']}, version {reply['version']})",
        f"uptime:         {reply['uptime_s']:.0f} s (since {reply['started_at']})",
        f"model:          {model_state} {engine.get('model') or ''}".rstrip(),
        f"engine:         {_engine_line(engine)}",
        f"adapter:        {_adapter_line(engine)}",
        *([f"weights:        {_weights_line(engine)}"] if engine.get("weights") else []),
        *([f"threads:        {_threads_line(engine)}"] if engine.get("threads") else []),
        *([f"kv cache:       {_kv_line(engine)}"] if engine.get("kv_type") else []),
        f"engine worker:  {_worker_line(engine)}",
        *([f"ghost gate:     {engine['ghost_gate']}"] if engine.get("ghost_gate") else []),
        *(
            [f"propagation:    {engine['propagation_gate']}"]
            if engine.get("propagation_gate")
            else []
        ),
        *([f"daemon threads: {_census_line(reply['threads'])}"] if reply.get("threads") else []),
        f"sessions:       {reply.get('hub', {}).get('sessions', 0)}",
        f"control socket: {reply['control_socket']}",
        f"lsp socket:     {reply['lsp_socket']}",
        f"log:            {reply['log_file']}",
    ]
    for key, counts in (reply.get("hub", {}).get("next_edit") or {}).items():
        shown = ", ".join(f"{name.replace('_', '-')} {n}" for name, n in counts.items())
        lines.append(f"next edit:      {key}: {shown}")
    if names := reply.get("hub", {}).get("name_check"):
        lines.append(f"name check:     {_name_check_line(names)}")
    for workspace in reply.get("hub", {}).get("workspaces") or []:
        for uri, reason in (workspace.get("lint_skipped") or {}).items():
            lines.append(f"lint skipped:   {uri}: {reason}")
        if workspace.get("project_index"):
            lines.append(f"project index:  {_index_line(workspace)}")
    print("\n".join(lines))
