"""The torture tests (tests/torture/) at full size, or any size: runs one and prints its
figures as one JSON line; exit status 1 when a figure that must be 0 is not (the checks
the suite makes at reduced size). Full-size results: docs/MEASUREMENTS.md.

    python tests/torture/run_torture.py kill|confinement|fuzz|worker|clients|soak|workday [options]
    python tests/torture/run_torture.py NAME --help      # that torture's options and what it does
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys

# Run by its path: this folder is then on sys.path, so the tortures import as their
# tests import them.
TORTURES = {
    "kill": "SIGKILL a workspace that journals and commits model edits",
    "confinement": "generated URIs and paths: nothing written outside the workspace",
    "fuzz": "fuzzed LSP messages and control frames against a live daemon",
    "worker": "SIGKILL and SIGSEGV the engine worker of a live daemon",
    "clients": "8 editors typing at once into own and shared files, next to one alone",
    "soak": "one editor typing for 30 minutes: RSS, open files, threads",
    "workday": "2 editors, an agent and the lock moved, 30 minutes: a table a minute",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    names = parser.add_subparsers(dest="name", required=True)
    for name, summary in TORTURES.items():
        torture = importlib.import_module(f"torture_{name}")
        described = names.add_parser(
            name,
            help=summary,
            description=torture.__doc__,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        torture.add_arguments(described)
    args = parser.parse_args()
    torture = importlib.import_module(f"torture_{args.name}")
    figures = torture.run(args)
    print(json.dumps(figures))
    failed = torture.failures(figures)
    if failed:
        print(f"torture {args.name} failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
