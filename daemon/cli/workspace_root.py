"""The workspace root a CLI command acts on: `--root DIR`, else the root around the cwd,
found as editors' roots are."""

from __future__ import annotations

import argparse
from pathlib import Path


def root_argument(args: argparse.Namespace) -> str:
    """The --root given (it must exist), else the workspace root around the cwd."""
    if args.root:
        root = Path(args.root)
        if not root.is_dir():
            raise ValueError(f"not a directory: {args.root}")
        return str(root.resolve())
    from shadowtab.shadow_workspace.registry import discover_root  # as editors' roots

    return str(discover_root(Path.cwd()))
