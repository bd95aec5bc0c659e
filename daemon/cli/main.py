"""The `shadowtab` command line: a thin argparse front over a plain table of command
modules. Exit codes (exit_codes.py): 0 ok, 1 failure, 2 usage error or daemon not running.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from shadowtab.daemon.cli import (
    adapter,
    config,
    daemon,
    demo,
    editor,
    lock,
    lsp,
    mcp,
    predict,
)
from shadowtab.daemon.cli.exit_codes import EPILOG, EXIT_FAILURE, EXIT_OK, EXIT_USAGE

# Each adds its subcommands to `shadowtab` and sets `func=` on its parsers;
# `func(args) -> int` returns the exit code. The order is the order of `shadowtab --help`.
COMMAND_REGISTRARS: tuple[Callable[[Any], None], ...] = (
    daemon.register,
    lsp.register,
    mcp.register,
    lock.register,
    predict.register,
    demo.register,
    adapter.register,
    editor.register,
    config.register,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="shadowtab",
        description="Local editor-AI backend: next-edit prediction over LSP with a save lock.",
        epilog=EPILOG,
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for register in COMMAND_REGISTRARS:
        register(subparsers)
    return parser


def version() -> str:
    from importlib.metadata import version as dist_version

    return dist_version("shadowtab")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        print(version())
        return EXIT_OK
    func: Callable[[argparse.Namespace], int] | None = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return func(args)
    except KeyboardInterrupt:
        return EXIT_FAILURE
    except BrokenPipeError:
        # The reader went away (`shadowtab daemon status --json | head`): stop quietly;
        # point stdout at /dev/null so the interpreter's final flush does not fail too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILURE
