"""`shadowtab shadow write|apply|rm|mv|read|lint`: coding agents and scripts edit through
the shadow workspace. Writes, deletes and renames land in the shadow as model edits
(the disk changes only when the user commits), editors showing the files see them, and
each write prints the diagnostics it added and removed. These commands start the
daemon when it is not running (as `shadowtab lsp` does): an agent's script needs no
setup step."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from shadowtab.daemon.cli.exit_codes import EPILOG, EXIT_FAILURE, EXIT_OK, EXIT_USAGE
from shadowtab.daemon.cli.workspace_root import root_argument

REQUEST_TIMEOUT_S = 60.0  # linting a large file twice, on a loaded machine
START_TIMEOUT_S = 30.0
SEVERITY_NAMES = {1: "error", 2: "warning", 3: "info", 4: "hint"}
# As the daemon's limit (shadow_workspace.agent_edits), checked here before sending: a
# clear error rather than a control frame over its size limit.
MAX_INPUT_BYTES = 8 * 1024 * 1024
Actions = argparse._SubParsersAction


def register_actions(actions: Actions) -> None:
    """Add the agent actions to the `shadowtab shadow` parser's subcommands."""
    write = _action(actions, "write", "put a file's new text into the shadow (not the disk)")
    write.add_argument("path", metavar="PATH", help="the file (relative to the cwd)")
    write.add_argument(
        "--from",
        dest="source",
        metavar="FILE",
        help="read the new text from FILE (default: standard input)",
    )
    _add_if_match(write)
    _add_take(write)
    apply = _action(
        actions,
        "apply",
        "apply a unified diff (git diff's deletes and renames too) to the shadow: every file "
        "or none",
    )
    apply.add_argument("patch", metavar="PATCH", help="the patch file, or - for standard input")
    _add_take(apply)
    remove = _action(actions, "rm", "delete a file in the shadow (the disk keeps it until commit)")
    remove.add_argument("path", metavar="PATH")
    _add_if_match(remove)
    _add_take(remove)
    move = _action(actions, "mv", "rename a file in the shadow (never over an existing file)")
    move.add_argument("path", metavar="OLD")
    move.add_argument("new_path", metavar="NEW")
    move.add_argument(
        "--from", dest="source", metavar="FILE", help="the new file's text (default: OLD's)"
    )
    _add_if_match(move)
    _add_take(move)
    read = _action(actions, "read", "print a file's text as the shadow holds it")
    read.add_argument("path", metavar="PATH")
    lint = _action(
        actions, "lint", "the diagnostics of the unsaved shadow text (exit 1 when there are any)"
    )
    lint.add_argument("path", metavar="PATH")


def _action(actions: Actions, name: str, text: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = actions.add_parser(
        name, help=text, description=text, epilog=EPILOG
    )
    parser.add_argument(
        "--root",
        metavar="DIR",
        help="workspace root (default: the project holding the current directory)",
    )
    parser.add_argument("--json", action="store_true", help="print the reply as one JSON object")
    parser.set_defaults(func=run_agent_command, shadow_command=name)
    return parser


def _add_if_match(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--if-match",
        metavar="SHA256",
        help="refuse unless the shadow text is still the one with this sha256 (from `read --json`)",
    )


def _add_take(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--take",
        action="store_true",
        help="give the lock to the model first when the user holds it with nothing unsaved "
        "(never taken from a user with pending edits)",
    )


# -- running -------------------------------------------------------------------------------
def run_agent_command(args: argparse.Namespace) -> int:
    from shadowtab.daemon.client import ControlError, DaemonStartError

    try:
        request = _build_request(args)
        reply = _send(*request)
    except (ValueError, OSError) as exc:
        print(f"shadowtab shadow {args.shadow_command}: {exc}", file=sys.stderr)
        return EXIT_USAGE if isinstance(exc, ValueError) else EXIT_FAILURE
    except (ControlError, DaemonStartError) as exc:
        print(f"shadowtab shadow {args.shadow_command}: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    if args.json:
        print(json.dumps(reply, default=str))
    else:
        PRINTERS[args.shadow_command](reply)
    if args.shadow_command == "lint" and reply.get("diagnostics"):
        return EXIT_FAILURE
    return EXIT_OK


def _build_request(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    root = root_argument(args)
    name = args.shadow_command
    if name in ("read", "lint"):
        return f"shadow.{name}", {"root": root, "path": _absolute(args.path)}
    if name == "apply":
        return "shadow.apply", {"root": root, "patch": _input(args.patch), "take": args.take}
    if name in ("rm", "mv"):
        return _file_op(args, root)
    text = _input(args.source or "-")
    item: dict[str, Any] = {"path": _absolute(args.path), "text": text}
    if args.if_match:
        item["expected_sha256"] = args.if_match
    return "shadow.write", {"root": root, "files": [item], "take": args.take}


def _file_op(args: argparse.Namespace, root: str) -> tuple[str, dict[str, Any]]:
    fields: dict[str, Any] = {"root": root, "path": _absolute(args.path), "take": args.take}
    if args.if_match:
        fields["expected_sha256"] = args.if_match
    if args.shadow_command == "rm":
        return "shadow.rm", fields
    fields["new_path"] = _absolute(args.new_path)
    if args.source:
        fields["text"] = _input(args.source)
    return "shadow.mv", fields


def _absolute(path: str) -> str:
    """Relative to the cwd, as a shell user means it; `..` folded away lexically (the
    daemon still refuses anything that resolves outside the root)."""
    return os.path.abspath(path)


def _input(source: str) -> str:
    """The text of FILE or of standard input, as UTF-8; refused over the size limit."""
    if source == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise ValueError("no input: pipe the text in, or give --from FILE / a patch file")
        data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    else:
        with open(source, "rb") as handle:
            data = handle.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise ValueError(f"input over the {MAX_INPUT_BYTES}-byte limit of one agent write")
    if b"\x00" in data:
        raise ValueError("binary input (NUL bytes): the shadow holds text files only")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"input is not UTF-8 ({exc.reason} at byte {exc.start})") from None


def _send(cmd: str, fields: dict[str, Any]) -> dict[str, Any]:
    from shadowtab.daemon.client import DaemonNotRunning, ensure_running, request

    config_root = Path(fields["root"])
    ensure_running(START_TIMEOUT_S, config_root=config_root)
    try:
        reply = request(cmd, timeout=REQUEST_TIMEOUT_S, **fields)
    except DaemonNotRunning:  # it stopped between the two: once more, then give up
        ensure_running(START_TIMEOUT_S, config_root=config_root)
        reply = request(cmd, timeout=REQUEST_TIMEOUT_S, **fields)
    reply.pop("ok", None)
    return reply


# -- printing ------------------------------------------------------------------------------
def describe(diagnostic: dict[str, Any], path: str) -> str:
    start = diagnostic["range"]["start"]
    severity = SEVERITY_NAMES.get(diagnostic.get("severity", 1), "error")
    code = f" [{diagnostic['code']}]" if diagnostic.get("code") else ""
    source = f" ({diagnostic['source']})" if diagnostic.get("source") else ""
    where = f"{path}:{start['line'] + 1}:{start['character'] + 1}"
    return f"{where}: {severity}: {diagnostic['message']}{code}{source}"


def _print_write(reply: dict[str, Any]) -> None:
    files = reply.get("files", [])
    for item in files:
        path = item["path"]
        state = "pending in the shadow" if item.get("pending") else "same as the disk"
        verb = "wrote" if item.get("changed") else "unchanged"
        if item.get("operation") == "delete":
            verb = "deleted"
        elif item.get("operation") == "rename":
            verb, path = "renamed", f"{item.get('source')} -> {path}"
        print(f"{verb}: {path} ({state})")
        for diagnostic in item.get("added", []):
            print(f"  + {describe(diagnostic, path)}")
        for diagnostic in item.get("removed", []):
            print(f"  - {describe(diagnostic, path)}")
        for linter, why in (item.get("failures") or {}).items():
            print(f"  ! {linter} did not run: {why}", file=sys.stderr)
    pending = reply.get("pending") or []
    print(
        f"lock: {reply.get('holder')} holds {reply.get('root')}; {len(pending)} file(s) pending, "
        "the disk is unchanged (`shadowtab shadow diff` to review, "
        "`shadowtab lock take --commit` to write them)"
    )


def _print_read(reply: dict[str, Any]) -> None:
    sys.stdout.write(reply.get("text", ""))


def _print_lint(reply: dict[str, Any]) -> None:
    for diagnostic in reply.get("diagnostics", []):
        print(describe(diagnostic, reply["path"]))
    for linter, why in (reply.get("failures") or {}).items():
        print(f"! {linter} did not run: {why}", file=sys.stderr)


PRINTERS = {
    "write": _print_write,
    "apply": _print_write,
    "rm": _print_write,
    "mv": _print_write,
    "read": _print_read,
    "lint": _print_lint,
}
