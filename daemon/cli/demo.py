"""`shadowtab demo`: a guided tour on a sample file, as an editor would drive it.

It starts the daemon if needed, connects through `shadowtab lsp` like an editor, opens a
sample Python file in a temporary project, and prints what comes back: diagnostics of the
unsaved text, ghost text, a next-edit suggestion, and the save lock at work (the model's
suggested fix of a typo, or when it suggests none the same fix made by the tour on the
model's behalf, held in the shadow, shown as a diff, then committed atomically).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from shadowtab.daemon.cli.exit_codes import EXIT_FAILURE, EXIT_OK


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="a guided tour: start the daemon, open a sample file over LSP, show the results",
        description=__doc__,
    )
    parser.add_argument(
        "--keep-daemon",
        action="store_true",
        help="leave a daemon that the demo started running afterwards",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from shadowtab.daemon import client
    from shadowtab.daemon.cli.demo_tour import tour
    from shadowtab.daemon.cli.model_wait import ModelUnavailable, wait_for_model
    from shadowtab.daemon.config import ConfigError

    started_here = client.read_status() is None
    try:
        status = client.ensure_running()
    except (ConfigError, client.DaemonStartError) as exc:
        print(f"shadowtab demo: the daemon did not start: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    print(f"daemon: pid {status.get('pid')}, log {status.get('log_file')}")
    try:
        wait_for_model()
        with tempfile.TemporaryDirectory(prefix="shadowtab-demo-") as project:
            asyncio.run(tour(Path(project)))
    except ModelUnavailable as exc:
        print(f"shadowtab demo: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except (TimeoutError, RuntimeError, OSError) as exc:
        print(f"shadowtab demo: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    finally:
        if started_here and not args.keep_daemon:
            client.stop_daemon()
            print("daemon: stopped (it was started for the demo)")
    return EXIT_OK
