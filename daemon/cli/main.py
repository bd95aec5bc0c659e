"""The `shadowtab` command line: a thin argparse front; each area registers its own
subcommands from a `cli_*` module.

Exit codes: 0 ok, 1 failure, 2 usage error or daemon not running.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from importlib import import_module

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2  # also: the daemon is not running

# Modules that add subcommands: each defines `register(subparsers) -> None` and sets
# `func=` on its parsers; `func(args) -> int` returns the exit code.
SUBCOMMAND_MODULES = (
    "shadowtab.daemon.cli_daemon",
    "shadowtab.daemon.cli_lsp",
    "shadowtab.daemon.cli_mcp",
    "shadowtab.daemon.cli_lock",
    "shadowtab.daemon.cli_predict",
    "shadowtab.daemon.cli_demo",
    "shadowtab.daemon.cli_adapter",
    "shadowtab.daemon.cli_editor",
    "shadowtab.daemon.cli_config",
)

EPILOG = "exit codes: 0 ok, 1 failure, 2 usage error or daemon not running"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="shadowtab",
        description="Local editor-AI backend: next-edit prediction over LSP with a save lock.",
        epilog=EPILOG,
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        import_module(name).register(subparsers)
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


if __name__ == "__main__":
    sys.exit(main())
