"""`shadowtab mcp`: the MCP server coding agents launch (stdio); see mcp_server."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from shadowtab.daemon.cli.exit_codes import EPILOG, EXIT_OK, EXIT_USAGE

DEFAULT_START_TIMEOUT_S = 30.0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "mcp",
        help="serve MCP on stdio: coding agents edit through the shadow workspace",
        description="An MCP server on stdio (for Claude Code, Cursor, Zed, ...): read, write, "
        "patch, delete and rename files in the shadow workspace, see their diagnostics, the "
        "lock and the pending edits, ask the user for a commit. Starts the daemon if needed.",
        epilog=EPILOG,
    )
    parser.add_argument(
        "--root",
        action="append",
        metavar="DIR",
        help="a workspace root the agent may edit (repeatable; default: the project "
        "holding the current directory)",
    )
    parser.add_argument(
        "--take",
        action="store_true",
        help="writes take the save lock by default when the user holds it with nothing "
        "unsaved (never from a user with pending edits)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_START_TIMEOUT_S,
        help="seconds to wait for the daemon to start (default %(default)s)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        roots = _roots(args.root or [])
    except ValueError as exc:
        print(f"shadowtab mcp: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        from shadowtab.daemon.mcp_server import serve
    except ImportError as exc:  # a base dependency: only a broken install lacks it
        print(f"shadowtab mcp: the `mcp` package is missing ({exc})", file=sys.stderr)
        return EXIT_USAGE
    serve(roots, args.timeout, args.take)
    return EXIT_OK


def _roots(given: list[str]) -> list[Path]:
    from shadowtab.shadow_workspace.registry import discover_root

    if not given:
        return [discover_root(Path.cwd()).resolve()]
    roots = []
    for name in given:
        path = Path(name).expanduser()
        if not path.is_dir():
            raise ValueError(f"not a directory: {name}")
        roots.append(path.resolve())
    return list(dict.fromkeys(roots))
