"""`shadowtab lock status|take|release|toggle`, `shadowtab shadow
diff|pending|commit|discard` (the agents' `shadow write|apply|rm|mv|read|lint` live in
agent.py) and
`shadowtab run -- CMD...`: the save lock and the shadow workspace from the shell, through
the daemon's control socket."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
from typing import Any

from shadowtab.daemon.cli.agent import register_actions as register_agent_actions
from shadowtab.daemon.cli.exit_codes import EPILOG, EXIT_FAILURE, EXIT_OK, EXIT_USAGE
from shadowtab.daemon.cli.workspace_root import root_argument

REQUEST_TIMEOUT_S = 60.0  # a commit of many large files takes a while
Subparsers = argparse._SubParsersAction


def register(subparsers: Subparsers) -> None:
    _register_lock(subparsers)
    _register_shadow(subparsers)
    _register_run(subparsers)


def _add_root(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        metavar="DIR",
        help="workspace root (default: the project holding the current directory)",
    )
    parser.add_argument("--json", action="store_true", help="print the reply as one JSON object")


def _add_modes(parser: argparse.ArgumentParser) -> None:
    modes = parser.add_mutually_exclusive_group()
    for mode, text in (
        ("commit", "write the pending shadow edits to disk"),
        ("discard", "drop the pending shadow edits"),
        ("keep", "keep them pending as a reviewable change set (default)"),
    ):
        modes.add_argument(f"--{mode}", dest="mode", action="store_const", const=mode, help=text)
    parser.set_defaults(mode="keep")


def _register_lock(subparsers: Subparsers) -> None:
    lock = subparsers.add_parser(
        "lock",
        help="who may save: the user or the model",
        description="The save lock of a workspace. While the model holds it, model edits "
        "stay in the shadow workspace and never reach the disk.",
        epilog=EPILOG,
    )
    actions = lock.add_subparsers(dest="lock_command", metavar="ACTION", required=True)
    for name, text in (
        ("status", "who holds the lock, is anything pending"),
        ("take", "the user takes the lock (--commit, --discard or --keep)"),
        ("release", "give the lock to the model"),
        ("toggle", "release when the user holds it, take when the model does"),
    ):
        action = actions.add_parser(name, help=text, description=text, epilog=EPILOG)
        _add_root(action)
        if name in ("take", "toggle"):
            _add_modes(action)
        action.set_defaults(func=run_lock, lock_command=name)


def _register_shadow(subparsers: Subparsers) -> None:
    shadow = subparsers.add_parser(
        "shadow",
        help="the pending shadow edits",
        description="Inspect the shadow workspace; coding agents write through it.",
        epilog=EPILOG,
    )
    actions = shadow.add_subparsers(dest="shadow_command", metavar="ACTION", required=True)
    for name, text in (
        ("diff", "the pending change set as a unified diff (disk -> shadow)"),
        ("pending", "the files with pending shadow edits"),
    ):
        action = actions.add_parser(name, help=text, description=text, epilog=EPILOG)
        _add_root(action)
        action.set_defaults(func=run_shadow, shadow_command=name)
    for name, text in (
        ("commit", "write some pending files to disk (a rename's two files together)"),
        ("discard", "drop the model's edits, deletes and renames of some pending files"),
    ):
        action = actions.add_parser(name, help=text, description=text, epilog=EPILOG)
        action.add_argument("files", nargs="+", metavar="FILE")
        _add_root(action)
        action.set_defaults(func=run_shadow, shadow_command=name)
    register_agent_actions(actions)  # write, apply, rm, mv, read, lint


def _register_run(subparsers: Subparsers) -> None:
    run = subparsers.add_parser(
        "run",
        help="run a command, warning when it would miss pending shadow edits",
        description="Run CMD with its arguments. When the model holds the save lock with "
        "unsaved shadow edits, warn on stderr first: the command sees the disk, not the "
        "shadow. Exits with the command's exit code.",
        epilog=EPILOG,
    )
    run.add_argument("--root", metavar="DIR", help="workspace root (default: from the cwd)")
    run.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- CMD ...")
    run.set_defaults(func=run_command)


# -- helpers -------------------------------------------------------------------------------
def _request(cmd: str, **fields: Any) -> dict[str, Any]:
    from shadowtab.daemon.client import request

    reply = request(cmd, timeout=REQUEST_TIMEOUT_S, **fields)
    reply.pop("ok", None)
    return reply


def _call(cmd: str, args: argparse.Namespace, **fields: Any) -> tuple[int, dict[str, Any] | None]:
    """(exit code, reply); errors printed, the daemon never started by these commands."""
    from shadowtab.daemon.client import ControlError, DaemonNotRunning

    try:
        return EXIT_OK, _request(cmd, root=root_argument(args), **fields)
    except DaemonNotRunning as exc:
        print(f"shadowtab: {exc} (start it with `shadowtab daemon start`)", file=sys.stderr)
        return EXIT_USAGE, None
    except (ControlError, ValueError) as exc:
        print(f"shadowtab: {exc}", file=sys.stderr)
        return EXIT_FAILURE, None


# -- lock ------------------------------------------------------------------------------------
def run_lock(args: argparse.Namespace) -> int:
    name = args.lock_command
    fields = {"mode": args.mode} if name in ("take", "toggle") else {}
    code, reply = _call(f"lock.{name}", args, **fields)
    if reply is None:
        return code
    if args.json:
        print(json.dumps(reply, default=str))
    else:
        _print_lock(reply)
    return EXIT_FAILURE if reply.get("conflicts") else EXIT_OK


def _print_lock(reply: dict[str, Any]) -> None:
    pending = reply.get("pending")
    state = "pending shadow edits" if pending else "no pending shadow edits"
    print(f"lock: {reply.get('holder')} holds {reply.get('root')} ({state})")
    for uri in reply.get("written", []):
        print(f"written:   {uri}")
    for uri in reply.get("removed", []):
        print(f"removed:   {uri}")
    for uri in reply.get("discarded", []):
        print(f"discarded: {uri}")
    for uri in reply.get("kept", []):
        print(f"kept:      {uri} (you edited inside the model's edits: they are yours now)")
    for conflict in reply.get("conflicts", []):
        print(f"conflict:  {conflict.get('uri')}: {conflict.get('error')}", file=sys.stderr)
    if reply.get("mode") == "keep" and reply.get("diff"):
        print(reply["diff"], end="")


# -- shadow ----------------------------------------------------------------------------------
def run_shadow(args: argparse.Namespace) -> int:
    name = args.shadow_command
    fields = {}
    if name in ("commit", "discard"):  # as the shell user means them: from the cwd
        fields["files"] = [os.path.abspath(path) for path in args.files]
    code, reply = _call(f"shadow.{name}", args, **fields)
    if reply is None:
        return code
    if args.json:
        print(json.dumps(reply, default=str))
    elif name in ("commit", "discard"):
        _print_lock(reply)
        return EXIT_FAILURE if reply.get("conflicts") else EXIT_OK
    elif name == "diff":
        print(reply.get("diff", ""), end="")
    else:
        for uri in reply.get("files", []):
            print(uri)
    return EXIT_OK


# -- run ------------------------------------------------------------------------------------
def run_command(args: argparse.Namespace) -> int:
    argv = list(args.argv)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        print(
            "shadowtab run: give a command after --, e.g. shadowtab run -- pytest", file=sys.stderr
        )
        return EXIT_USAGE
    _warn_if_shadow_pending(args)
    try:
        completed = subprocess.run(argv, check=False)
    except FileNotFoundError:
        print(f"shadowtab run: command not found: {argv[0]}", file=sys.stderr)
        return 127
    except PermissionError:
        print(f"shadowtab run: not executable: {argv[0]}", file=sys.stderr)
        return 126
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    code = completed.returncode
    return 128 - code if code < 0 else code  # killed by a signal: as a shell reports it


def _warn_if_shadow_pending(args: argparse.Namespace) -> None:
    """Warn when the model holds the lock with unsaved shadow edits; silent when the
    daemon does not run (nothing can be pending in memory then)."""
    from shadowtab.daemon.client import ControlError, DaemonNotRunning

    try:
        reply = _request("shadow.pending", root=root_argument(args))
    except DaemonNotRunning:
        return
    except (ControlError, ValueError) as exc:
        print(f"shadowtab run: could not ask the daemon ({exc})", file=sys.stderr)
        return
    files = reply.get("files") or []
    if reply.get("holder") == "model" and files:
        print(
            f"shadowtab: warning: the model holds the save lock of {reply.get('root')} with "
            f"{len(files)} file(s) of unsaved shadow edits; this command sees the disk, not "
            "the shadow (`shadowtab shadow diff` shows them, `shadowtab lock take --commit` "
            "writes them):",
            file=sys.stderr,
        )
        for uri in files:
            print(f"  {uri}", file=sys.stderr)
        sys.stderr.flush()
